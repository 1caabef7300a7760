"""The kernel of a map (`stream/map`): the function a layer applies to one element of each
input, and what it says of itself, as one immutable record.

A dialect (an ONNX or OpenVINO node, a core layer) builds one `Kernel` per node, when the node
is lowered or the plan compiled; the plan's `Map` node carries it. The reference machine calls
`function` and reads nothing else; the engine reads the other facts:

* `batched(args, flags)` -- the same function over stacked elements (`flags` say which
  arguments are stacked along a new first axis), or None. It must give, for each stacked
  element, the value `function` gives for that element alone, and raises `NotBatchable`
  where it cannot promise that; the engine also checks the first and last elements, but
  for an `Elementwise` form that is `exact` (its values are the function's whatever the
  layout);
* `reads_only` -- the function never writes to its arguments (the engine then need not mark
  what it reads read-only, `stream/memo`);
* `passes_input` -- the function may return one of its arguments itself, not a copy (what
  it returns is then marked as its argument would be);
* `returns_plain` -- given a plain numpy array as its first argument, of the dtype named
  here, the function returns that array itself (and `passes_input` holds): `"any"`, an array
  of any dtype (ONNX Identity); `"like"`, of the second argument's dtype, itself a plain
  array, both of a numeric or boolean kind (CastLike); a dtype (a Cast to it). The engine's
  compiled trips then make no call where nothing is computed;
* `ufunc` -- the function is this binary numpy ufunc applied to its arguments, nothing
  more: the ufunc itself, or a function that makes its value an array where the ufunc gives
  a numpy scalar (what `ufunc(a, b, out=...)` gives, `ELLIPSIS_OUT`). The engine then may
  run a recurrence through it as the ufunc's accumulation, and its compiled trips call the
  ufunc without the function's layer;
* `pure` -- the function's value depends on its arguments' values alone (not a random
  op): called again on the same arguments it gives the same value;
* `shape_only` -- the function reads only its one argument's shape (ONNX `Shape`);
* `gives(types)` -- the `TensorType` every value it gives agrees with, for arguments that
  agree with `types` (its one value, for a function that returns a 1-tuple), or None where
  it cannot say (`lazyloop.core.result_types`): the engine's compiled trips then leave out
  a `structure/shapes` check that cannot fail.

`single` is the one-value form of a function that returns a tuple (a kernel of an op with
several outputs, used by a layer that has one): calling it skips building the tuple.
"""
from __future__ import annotations

from typing import Callable, Optional

import attrs
import numpy as np

from .result_types import of_ufunc


def ellipsis_out() -> bool:
    """Whether this numpy's ufuncs take `out=...` (numpy 2.3 on), giving their value as an
    array even where the arguments are 0-D (where they give a numpy scalar otherwise)."""
    try:
        return type(np.add(np.zeros(()), np.zeros(()), out=...)) is np.ndarray
    except TypeError:
        return False


ELLIPSIS_OUT = ellipsis_out()


class NotBatchable(Exception):
    """This kernel, on these arguments, has no batched form that equals its elements."""


@attrs.frozen(repr=False)
class Kernel:
    function: Callable = attrs.field(eq=False)
    single: Optional[Callable] = attrs.field(default=None, eq=False)
    batched: Optional[Callable] = attrs.field(default=None, eq=False)
    reads_only: bool = False
    passes_input: bool = False
    ufunc: Optional[np.ufunc] = attrs.field(default=None, eq=False)
    pure: bool = False
    shape_only: bool = False
    gives: Optional[Callable] = attrs.field(default=None, eq=False)
    returns_plain: object = None

    def __call__(self, *args):
        return self.function(*args)

    def __repr__(self):
        facts = [name for name in ("batched", "single") if getattr(self, name) is not None]
        facts += [name for name in ("reads_only", "passes_input", "pure", "shape_only")
                  if getattr(self, name)]
        name = getattr(self.function, "__qualname__", type(self.function).__name__)
        return f"Kernel({name}{', ' if facts else ''}{', '.join(facts)})"

    def first_value(self, arity: int) -> "Kernel":
        """The kernel of a one-output layer whose function returns a 1-tuple: its value
        alone -- `single` where the kernel has one (one frame fewer per element)."""
        if self.single is not None:
            return attrs.evolve(self, function=self.single, single=None)
        fn = self.function
        if arity == 1:
            first = lambda a: fn(a)[0]  # noqa: E731
        elif arity == 2:
            first = lambda a, b: fn(a, b)[0]  # noqa: E731
        else:
            first = lambda *args: fn(*args)[0]  # noqa: E731
        batched = self.batched  # a ufunc's own form gives its whole value, not the first
        if isinstance(batched, Elementwise) and batched.fct is fn:  # item of it: none
            batched = None
        # what the facts below say of the function's whole value is not said of its first
        # item: the compiled trips must call `first`, not the ufunc, and check its value
        return attrs.evolve(self, function=first, batched=batched, ufunc=None, gives=None,
                            returns_plain=None)


def kernel_of(fn) -> Kernel:
    """A `Kernel` as it is; a numpy ufunc with one output, which never writes to its
    arguments and is its own batched form (each output element is computed alone); any
    other callable, with no facts stated."""
    if isinstance(fn, Kernel):
        return fn
    if isinstance(fn, np.ufunc):
        return Kernel(fn, batched=elementwise(fn) if fn.nout == 1 else None, reads_only=True,
                      ufunc=fn if fn.nin == 2 and fn.nout == 1 else None, pure=True,
                      gives=of_ufunc(fn) if fn.nout == 1 else None)
    return Kernel(fn)


def same_values(x):
    """The value itself: the batched form of a kernel that passes its argument on."""
    return x


def same_dtype(result, first):
    """A batched form's finish that refuses a result whose dtype is not its first
    argument's (where the reference kernel refuses a change of dtype); the values are the
    function's as they are."""
    if result.dtype != first.dtype:
        raise NotBatchable("the reference kernel refuses a change of dtype")
    return result


#: functions whose every output element is its inputs' elements at that position, rounded
#: once by IEEE arithmetic (+, -, *, /, sqrt), compared, combined bit by bit or passed on:
#: whichever numpy loop computes an element -- one element alone or a stack, SIMD or not,
#: aligned or not -- it gets the same bits
EXACT = frozenset((
    np.add, np.subtract, np.multiply, np.divide, np.negative, np.absolute, np.sqrt,
    np.floor, np.ceil, np.equal, np.not_equal, np.less, np.less_equal, np.greater,
    np.greater_equal, np.logical_and, np.logical_or, np.logical_xor, np.logical_not,
    np.bitwise_and, np.bitwise_or, np.bitwise_xor, np.invert, same_values))


@attrs.frozen(repr=False)
class Elementwise:
    """The batched form of an elementwise kernel `fct`: stacked arguments get singleton
    axes after the batch axis (`aligned`), so that their elements broadcast against the
    invariants as they do one by one; `finish(result, first_arg)` adjusts the result as the
    kernel does."""

    fct: Callable
    finish: Optional[Callable] = None

    def __call__(self, args, flags):
        result = np.asarray(self.fct(*aligned(args, flags)))
        return result if self.finish is None else self.finish(result, args[0])

    @property
    def exact(self) -> bool:
        """Whether each element of the batch is, bit for bit, `fct` of that element's
        arguments, for arguments of one dtype (`EXACT`, nothing done after but `same_dtype`'s
        refusal): the engine then checks no element of the batch against the kernel
        (`stream/map`). One dtype, since numpy before 2 types a 0-D argument by its value,
        a stacked one by its dtype."""
        try:
            return self.finish in (None, same_dtype) and self.fct in EXACT
        except TypeError:  # an unhashable callable: not one of them
            return False

    def __repr__(self):
        names = [getattr(f, "__name__", type(f).__name__) for f in (self.fct, self.finish)
                 if f is not None]
        return f"elementwise({', '.join(names)})"


def elementwise(fct, finish=None) -> Elementwise:
    """The batched form of an elementwise kernel (`Elementwise`)."""
    return Elementwise(fct, finish)


def aligned(args, flags):
    """Stacked arguments (flags) with singleton axes after the batch axis, up to the rank of
    the highest-ranked element: they then broadcast as their elements do one by one. An
    argument already of that rank is passed as it is."""
    ranks = [a.ndim - 1 if f else a.ndim for a, f in zip(args, flags)]
    top = max(ranks)
    return [a.reshape((a.shape[0],) + (1,) * (top - r) + a.shape[1:]) if f and r < top else a
            for a, f, r in zip(args, flags, ranks)]
