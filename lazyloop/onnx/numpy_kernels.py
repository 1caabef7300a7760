"""ONNX kernels bound straight to numpy, where the reference kernel adds nothing but checks.

Rule `onnx/node` says a node is ONNX's reference kernel. For the ops below that kernel is one
numpy call wrapped in checks (the inputs' dtypes agree, the output has the input's dtype)
and in a few layers of dispatch (`run`, `_run`, `_check_and_fix_outputs`). Here the same
numpy call is made directly, the checks are made inline, and anything else -- a dtype the
checks refuse, an input that is not an array, numpy raising -- is handed to the reference
kernel's own bound call, so that the value or the error is exactly the reference's
(DESIGN §7: bind kernels once, re-validate nothing per trip).

Identity, and Cast or CastLike to the dtype its input already has, return the input itself
instead of the reference's copy: stream elements are never written to (`stream/memo`), so
sharing one is safe (their records say `passes_input`, and which arrays: `returns_plain`).

Each binding is a `Kernel` record (`lazyloop.core.kernel`): its function returns the usual
1-tuple, its `single` the value alone, which the plan calls for one-output layers (one frame
fewer), and its `batched` form applies to stacked elements. Every op bound here is `pure`
(its value depends on its inputs alone); `Shape` reads only its input's shape.
"""
from __future__ import annotations

import functools
from typing import Callable, Optional

import numpy as np

from ..core.kernel import (ELLIPSIS_OUT, Kernel, NotBatchable, elementwise, same_dtype,
                           same_values)
from ..core.result_types import (axes_added, cast_to, cast_to_like, chosen_elementwise,
                                 elementwise_in, expanded, joined_along, matrix_product,
                                 rank_from, reshaped, same_as_argument, shape_vector, sliced,
                                 summed, taken_along)
from .arithmetic_kernels import RESULT_TYPES
from .array_kernels import array_kernel
from .gemm_kernels import matmul
from .sort_kernels import top_k
from .split_kernels import split

_ndarray = np.ndarray
BOOL = np.dtype(bool)


def _sigmoid():
    from onnx.reference.ops.op_sigmoid import sigmoid
    exp, sign, maximum, minimum, add, divide = (np.exp, np.sign, np.maximum, np.minimum,
                                                np.add, np.divide)
    negative, greater, uint8 = np.negative, np.greater, np.uint8
    constants = {np.dtype(t): (np.array(0, t), np.array(1, t))
                 for t in (np.float16, np.float32, np.float64)}

    def one_exp(x):
        """The reference kernel's stable sigmoid -- `1 / (1 + exp(-x))` where x > 0,
        `exp(x) / (1 + exp(x))` elsewhere -- with one exponential, `e = exp(min(x, -x))`,
        which is `exp(-x)` on the first side and `exp(x)` on the other, bit for bit (min(x,
        -x) is -|x|; where x is +0.0 or -0.0, exp gives 1.0 for either). For a NaN x the
        exponent is x itself, as on the reference's side for it (x > 0 fails): numpy's
        minimum returns its first argument where both are NaN, so e is the NaN `exp(x)`
        makes, its sign bit included (numpy's exp keeps it in float16 and float64, clears it
        in float32: either way the reference's). The numerator, 1 or e, is `max(e, x > 0)`:
        where x > 0, e <= 1 and the maximum is 1; elsewhere e >= 0 and it is e (a NaN e is
        returned as it is, numpy's maximum returning the NaN first argument). A maximum has
        no branch to mispredict, where a `where` choosing by the signs of fresh values costs
        several times more. The same values in the same dtype, NaNs' bits included, where
        the reference computes both exponentials everywhere. The constants 0 and 1 are 0-D
        arrays of x's own dtype (`constants`): the dtype numpy gives a Python number beside
        x, without converting one on every call."""
        known = constants.get(x.dtype)
        if known is None:  # not an IEEE float numpy computes natively: the reference's own
            return sigmoid(x)
        zero, one = known
        e = exp(minimum(x, negative(x)))  # -|x|; a NaN x itself
        if x.size <= FEW_VALUES:  # the same values in seven numpy calls rather than eight
            return divide(maximum(e, sign(x)), add(e, one))
        return divide(maximum(e, greater(x, zero).view(uint8)), add(e, one))
    return one_exp


#: a Sigmoid of at most this many values takes its numerator as max(e, sign(x)) -- 1 where
#: x > 0 (e <= 1), e where x < 0 (e >= 0 > -1) and where x is 0 (e = 1 > 0), a NaN e
#: returned as it is (numpy's maximum gives its first argument where both are NaN) -- one
#: call fewer than max(e, x > 0), which is what a small array's cost is; numpy's sign
#: branches on each value, which costs more than the call it saves on larger arrays
#: (measured with -|x| as one copysign, float32: 256 values 1.9 against 2.3 us, 1000
#: values 3.4 against 3.3 us, 10000 14.5 against 9.8)
FEW_VALUES = 256


def sigmoid(slow):
    """Sigmoid's one-value form: `_sigmoid`'s one exponential on an array of a float dtype,
    whose value already has x's dtype, called without `unary`'s layer of checks; anything
    else, and numpy raising (under an error state that raises on underflow), the
    reference kernel."""
    one_exp = _sigmoid()

    def single(x):
        if type(x) is _ndarray and x.dtype.kind == "f":
            try:
                return one_exp(x)
            except Exception:  # noqa: BLE001 -- the reference kernel reports it
                pass
        return slow(x)[0]
    return single


# op type -> numpy function whose output must keep the input's dtype (OpRunUnaryNum)
SAME_DTYPE_UNARY = {"Abs": np.absolute, "Neg": np.negative, "Tanh": np.tanh,
                    "Floor": np.floor, "Ceil": np.ceil, "Sin": np.sin, "Cos": np.cos,
                    "Sign": np.sign}
# op type -> numpy function whose output the reference casts back to the input's dtype
CAST_BACK_UNARY = {"Exp": np.exp, "Relu": lambda x: np.maximum(x, 0)}
# op type -> binary numpy function, inputs of one dtype, output of that dtype (OpRunBinaryNum)
SAME_DTYPE_BINARY = {"Max": np.maximum, "Min": np.minimum}
# op type -> binary numpy ufunc, inputs of one dtype (OpRunBinary, comparisons): the
# reference's bound `_run` is the ufunc alone, so the record says so (`Kernel.ufunc`)
BOOL_BINARY = {"Equal": np.equal, "Less": np.less, "Greater": np.greater,
               "LessOrEqual": np.less_equal, "GreaterOrEqual": np.greater_equal,
               "And": np.logical_and, "Or": np.logical_or, "Xor": np.logical_xor}


def with_single(single: Callable, where: str, reads_only=False, passes_input=False,
                batched=None, ufunc=None, shape_only=False, gives=None,
                returns_plain=None) -> Kernel:
    """The kernel record of a one-output node: its function as a function layer calls it (a
    1-tuple), its one-value form `single`, its batched form, whether it never writes its
    arguments (`reads_only`) or may return one of them itself (`passes_input`, and which
    plain arrays: `returns_plain`), and the type its value has from its arguments' (`gives`,
    `lazyloop.core.result_types`)."""
    def call(*args):
        return (single(*args),)
    for f in (call, single):
        f.__qualname__ = f"kernel[{where}]"
    return Kernel(call, single, batched, reads_only, passes_input, ufunc, pure=True,
                  shape_only=shape_only, gives=gives, returns_plain=returns_plain)


def cast_back(result, first):
    return result.astype(first.dtype)


def one_dtype(batched):
    """A binary kernel's batched form, for arguments of one dtype (the reference checks)."""
    def call(args, flags):
        if any(a.dtype != args[0].dtype for a in args):
            raise NotBatchable("arguments of different dtypes")
        return batched(args, flags)
    return call


def matmul_batched(matmul):
    """MatMul of stacked vectors or matrices by one matrix, as a stack of products, each
    made as the kernel makes it per element (numpy's matmul runs one BLAS product per
    stacked item; one product of the stacked rows would sum in another order); nothing else
    batches."""
    def batched(args, flags):
        a, b = args
        if flags != (True, False) or a.ndim not in (2, 3) or b.ndim != 2 or a.dtype != b.dtype:
            raise NotBatchable("MatMul batches only stacked vectors or matrices by a matrix")
        result = np.matmul(a[:, None, :], b)[:, 0, :] if a.ndim == 2 else np.matmul(a, b)
        return result if result.dtype == a.dtype else result.astype(a.dtype)
    return batched


def as_arrays(fct) -> bool:
    """Whether `fct` is a numpy ufunc with one output called with `out=...`, where numpy
    takes it (`ELLIPSIS_OUT`): its value an array even for 0-D arguments, with no
    `np.asarray` after it."""
    return ELLIPSIS_OUT and isinstance(fct, np.ufunc) and fct.nout == 1


def unary(fct, slow, cast_back: bool):
    asarray = np.asarray
    arrays = as_arrays(fct)

    def single(x):
        if type(x) is _ndarray:
            try:
                r = fct(x, out=...) if arrays else fct(x)
            except Exception:  # noqa: BLE001 -- the reference kernel reports it
                return slow(x)[0]
            if type(r) is not _ndarray:
                r = asarray(r)
            if r.dtype == x.dtype:  # astype to the same dtype would only copy r
                return r
            if cast_back:
                return r.astype(x.dtype)
        return slow(x)[0]
    return single


def binary(fct, slow, same_dtype_out: bool):
    asarray = np.asarray
    arrays = as_arrays(fct)

    def single(a, b):
        if type(a) is _ndarray and type(b) is _ndarray and a.dtype == b.dtype:
            try:
                r = fct(a, b, out=...) if arrays else fct(a, b)
            except Exception:  # noqa: BLE001
                return slow(a, b)[0]
            if type(r) is not _ndarray:
                r = asarray(r)
            if not same_dtype_out or r.dtype == a.dtype:
                return r
        return slow(a, b)[0]
    return single


@functools.lru_cache(maxsize=None)
def floating_point_quiet():
    """(numpy's error-state variable, its default value, its value that ignores every
    floating-point error), or None where this numpy keeps its error state elsewhere.

    While the state is numpy's default (warn on overflow, invalid and divide; ignore
    underflow), a call made under `warnings.catch_warnings()` with every warning ignored --
    how the reference kernel of Pow silences numpy -- gives the same value and no signal as
    the same call made with numpy's error state set to ignore; setting that state is one
    context-variable write, not the copy of the warning filters catch_warnings makes."""
    import contextvars
    from numpy._core import _ufunc_config
    state = getattr(_ufunc_config, "_extobj_contextvar", None)
    if not isinstance(state, contextvars.ContextVar):
        return None
    default = contextvars.Context().run(state.get)  # its value where nobody set it
    with np.errstate(all="ignore"):
        ignoring = state.get()
    return state, default, ignoring


def quietly(op_type: str, fct, slow):
    """Pow (opset 7 on) and Sqrt: the reference's `fct(*args).astype(args[0].dtype)` with
    numpy's warnings silenced, for arrays, while numpy's error state is its default (then
    silencing the warnings is ignoring the errors: `floating_point_quiet`); the astype
    skipped where it would only copy; a numpy scalar result made a 0-D array, as the bound
    reference kernel makes it. Every other input, and numpy raising (an integer to a
    negative integer power), goes to the reference kernel."""
    quiet = floating_point_quiet()
    if quiet is None:
        return None
    state, default, ignoring = quiet

    def single(*args):  # one or two arguments: the first and the last are all of them
        first = args[0]
        if type(first) is _ndarray and type(args[-1]) is _ndarray and state.get() is default:
            token = state.set(ignoring)
            try:
                r = fct(*args)
                if r.dtype != first.dtype:
                    r = r.astype(first.dtype)
            except Exception:  # noqa: BLE001 -- the reference kernel reports it
                r = None
            finally:
                state.reset(token)
            if r is not None:
                return r if type(r) is _ndarray else np.array(r)
        return slow(*args)[0]
    single.__doc__ = f"{op_type}: `{fct.__name__}` in the first input's dtype, numpy's " \
                     "errors ignored for the call."
    return single


def divide(truncating, slow):
    """Div: `np.divide` for floats; for integers the reference kernel's own function (which
    truncates toward zero), called without the reference's layers of checks -- and for a
    0-D pair a >= 0, b > 0, where truncation and the floor agree, Python's `//` of the
    values they hold (the reference's function makes four numpy calls for it)."""
    floats = binary(np.divide, slow, True)
    integers = floats if truncating is None else binary(truncating, slow, True)

    def single(a, b):
        if type(a) is _ndarray and a.dtype.kind in "iu":
            if type(b) is _ndarray and b.dtype == a.dtype and not (a.ndim or b.ndim):
                x, y = a.item(), b.item()
                if x >= 0 and y > 0:
                    return np.array(x // y, a.dtype)
            return integers(a, b)
        return floats(a, b)
    return single


def identity(slow):
    def single(a):
        """Identity: an array element itself (elements are read-only: no copy needed); a
        numpy scalar (a Loop's iteration number is one) as the 0-D array the reference
        kernel's copy of it is once made an array."""
        if type(a) is _ndarray:
            return a
        if isinstance(a, np.generic) and a.dtype.kind in "biufc":
            return np.array(a)
        return slow(a)[0]
    return single


def cast_dtype(kernel) -> Optional[np.dtype]:
    """The numpy dtype a Cast node converts to, when the reference kernel converts to it
    with a plain `astype` (booleans, integers and IEEE floats; not strings, float 8 or
    bfloat16, which it converts its own way)."""
    from onnx import helper
    try:
        dtype = np.dtype(helper.tensor_dtype_to_np_dtype(getattr(kernel, "to", None)))
    except Exception:  # noqa: BLE001 -- no plain numpy dtype: the reference kernel casts
        return None
    return dtype if dtype.kind in "biuf" else None


def cast(dtype, slow):
    def single(x):
        """Cast: what the reference kernel does for a plain dtype, `x.astype(dtype)` (a
        numpy scalar's result made a 0-D array, as the bound reference kernel makes it); an
        array of that dtype already is itself, not a copy (as Identity's: `stream/memo`)."""
        if type(x) is _ndarray:  # an array's astype is an array
            if x.dtype == dtype:  # astype would copy it: elements are never written
                return x
            if x.dtype.kind in "biuf":
                return x.astype(dtype)
        elif isinstance(x, np.generic) and x.dtype.kind in "biuf":
            return np.array(x.astype(dtype))
        return slow(x)[0]
    return single


def cast_like(slow):
    def single(x, like):
        """CastLike: Cast to the dtype of `like` -- for plain dtypes `x.astype(like.dtype)`
        (a numpy scalar's result made a 0-D array), an array of that dtype already itself,
        as Cast's; others by the reference kernel."""
        if (isinstance(x, (_ndarray, np.generic)) and type(like) is _ndarray
                and x.dtype.kind in "biuf" and like.dtype.kind in "biuf"):
            if type(x) is _ndarray and x.dtype == like.dtype:
                return x
            r = x.astype(like.dtype)
            return r if type(r) is _ndarray else np.array(r)
        return slow(x, like)[0]
    return single


def gemm_type(attributes) -> Callable:
    """Gemm's value from its arguments' types: A's dtype, A' rows by B' columns, where A and
    B have rank 2 (Gemm's own product, C added in place; the reference casts to A's)."""
    product = matrix_product(bool(attributes.get("transA")), bool(attributes.get("transB")))

    def gives(types):
        if any(t.shape is None or len(t.shape) != 2 for t in types[:2]):
            return None
        return product(types)
    return gives


def array_type(op_type: str, arity: int, attributes: dict) -> Optional[Callable]:
    """The type an array kernel's value has from its arguments' types (`result_types`),
    for the shape and indexing ops exporters write in loop bodies; None for the others."""
    if op_type in RESULT_TYPES:
        return RESULT_TYPES[op_type](attributes)
    axis = attributes.get("axis")
    ranked = {"Reshape": reshaped, "Expand": expanded, "Unsqueeze": axes_added,
              "Slice": sliced}
    if op_type in ranked:
        return rank_from(ranked[op_type])
    if op_type == "ReduceSum" and "axes" not in attributes:
        return summed(attributes.get("keepdims", 1) == 1,
                      attributes.get("noop_with_empty_axes", 0) == 1)
    if op_type == "Where":
        return chosen_elementwise()
    if op_type == "Concat" and isinstance(axis, int):
        return joined_along(axis)
    if op_type == "Gather":
        return taken_along(axis or 0)
    if op_type == "Shape" and attributes.get("start", 0) in (0, None) and \
            attributes.get("end") is None:  # with a start or an end: a part of the shape
        return shape_vector()
    return None


def attributes_of(kernel) -> dict:
    """The node's attributes as the reference kernel resolved them (defaults filled in)."""
    return {name: getattr(kernel, name) for name in getattr(kernel, "attributes_names_", ())}


#: the direct kernels that may return an input itself (`Kernel.passes_input`)
PASSING = frozenset(("Identity", "Cast", "CastLike", "Where", "Clip"))


def direct(op_type: str, arity: int, slow: Callable, where: str,
           kernel=None, batched_form=None) -> Optional[Kernel]:
    """The direct binding of a default-domain node (or of an ai.onnx.ml one that
    `kernels.ML_DIRECT` lists) with `arity` inputs, or None; with its
    batched form where one gives the same values (`slow`: the reference kernel's call; the
    ops of `array_kernels` keep `batched_form`, the reference kernel's batched form), and
    the type its value has where its arguments' types say it (`result_types`: a cast's, an
    elementwise op's whose fast path and reference both keep or refuse the dtype)."""
    single = batched = gives = plain = ufunc = None
    if op_type == "Split" and arity in (1, 2):  # several outputs: a record of its own
        return split(attributes_of(kernel), getattr(kernel, "n_outputs", 0), slow, where)
    if op_type == "TopK" and arity == 2:  # values and indices: a record of its own too
        return top_k(attributes_of(kernel), slow, where)
    if op_type == "Cast" and arity == 1 and cast_dtype(kernel) is not None:
        dtype = cast_dtype(kernel)
        single, batched = cast(dtype, slow), elementwise(lambda x: x.astype(dtype))
        gives, plain = cast_to(dtype), dtype
    elif op_type == "CastLike" and arity == 2:
        single, gives, plain = cast_like(slow), cast_to_like(), "like"
    elif op_type == "Identity" and arity == 1:
        single, batched = identity(slow), elementwise(same_values)
        gives, plain = same_as_argument(), "any"
    elif arity == 1 and op_type in SAME_DTYPE_UNARY:
        fct = SAME_DTYPE_UNARY[op_type]
        single, batched = unary(fct, slow, False), elementwise(fct, same_dtype)
        gives = same_as_argument("f")  # numpy's own dtype on integers: not described
    elif arity == 1 and op_type in CAST_BACK_UNARY:
        fct = CAST_BACK_UNARY[op_type]
        single, batched = unary(fct, slow, True), elementwise(fct, cast_back)
        gives = same_as_argument("f")
    elif arity == 1 and op_type == "Sigmoid":
        single, batched = sigmoid(slow), elementwise(_sigmoid(), cast_back)
        gives = same_as_argument("f")
    elif arity == 2 and op_type in SAME_DTYPE_BINARY:
        fct = SAME_DTYPE_BINARY[op_type]
        single, batched = binary(fct, slow, True), one_dtype(elementwise(fct, same_dtype))
        gives = elementwise_in(lambda dtype: dtype)
    elif arity == 2 and op_type == "MatMul":
        single, batched = binary(matmul, slow, True), matmul_batched(matmul)
        gives = matrix_product()
    elif arity == 2 and op_type in BOOL_BINARY:
        fct = BOOL_BINARY[op_type]
        single, batched = binary(fct, slow, False), one_dtype(elementwise(fct))
        gives, ufunc = elementwise_in(lambda dtype: BOOL), fct  # the reference's _run: fct
    elif arity == 2 and op_type == "Div":  # floats; integers as the reference truncates
        single = divide(getattr(kernel, "numpy_fct", None), slow)
        batched = one_dtype(elementwise(np.divide, same_dtype))
        gives = elementwise_in(lambda dtype: dtype if dtype.kind == "f" else None)
    elif arity == 2 and op_type == "Pow" and not hasattr(kernel, "broadcast"):  # opset 7 on
        single = quietly(op_type, np.power, slow)  # elementwise: so is its batched form
        batched = None if single is None else elementwise(single)
    elif arity == 1 and op_type == "Sqrt":
        single, batched = quietly(op_type, np.sqrt, slow), batched_form
        gives = same_as_argument("f")
    elif arity == 1 and op_type == "Not":
        single, batched = unary(np.logical_not, slow, False), elementwise(np.logical_not,
                                                                            same_dtype)
        gives = same_as_argument("b")
    else:
        single, batched = array_kernel(op_type, arity, attributes_of(kernel), slow), batched_form
        if op_type == "Gemm" and single is not None:  # 2-D only: its A and B have rank 2
            gives = gemm_type(attributes_of(kernel))
        elif single is not None:
            gives = array_type(op_type, arity, attributes_of(kernel))
    if single is None:
        return None
    return with_single(single, where, reads_only=True, passes_input=op_type in PASSING,
                       batched=batched, ufunc=ufunc, shape_only=op_type == "Shape",
                       gives=gives, returns_plain=plain)
