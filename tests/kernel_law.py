"""The kernel law's parts (rule: onnx/node): a catalogue call's binding and its reference
kernel bound alone, the values fed to them, their outcomes compared bit for bit, and the
laws over one call, over calls in turn and over stacked elements. The laws themselves, and
what they cover, are tests/test_kernel_law.py."""
from __future__ import annotations

import functools
import warnings

import attrs
import numpy as np

from lazyloop.core.errors import LazyLoopError
from lazyloop.core.kernel import NotBatchable
from lazyloop.core.result_types import contains
from lazyloop.core.types import TensorType
from lazyloop.onnx import kernels
from lazyloop.strategies.onnx_op_search import catalogue, signatures
from lazyloop.strategies.onnx_ops import typed_values


OPSET = 21
#: lazyloop's own kernels and readings (spec/30, spec/50: Softsign, the QLinear ops,
#: NonMaxSuppression's scalar limits, OneHot's float indices): they differ from the
#: reference kernel on purpose and are tested against their operators' text elsewhere
OWN_READINGS = frozenset(("Softsign", "QLinearConv", "QLinearMatMul", "NonMaxSuppression",
                          "OneHot"))
#: ops whose data inputs size their output (Range's limits): no extreme values for them
SIZED_BY_VALUES = frozenset(("Range",))


# ------------------------------------------------------------------------------------------
# The two sides: the binding and the reference kernel bound alone
# ------------------------------------------------------------------------------------------

def node_of(call):
    return call.node([f"x{k}" if p.role != "none" else "" for k, p in enumerate(call.inputs)],
                     [f"y{j}" for j in range(len(call.outputs))])


def reference_of(call):
    """The call's reference kernel bound alone: `_bound_reference`, as `kernels.bind` binds
    every op it has no direct binding for."""
    node = node_of(call)
    params = {"log": lambda *a, **k: None, "opsets": {"": call.opset}, "verbose": 0,
              "new_ops": None, "existing_functions": {}, "evaluator_cls": None}
    cls = kernels.kernel_class("", call.op, call.opset)
    return kernels._bound_reference(cls(node, params), f"node {call.op}")


def binding_of(call):
    return kernels.bind(node_of(call), {"": call.opset}, f"node {call.op}")


def is_direct(call) -> bool:
    """Whether `kernels.bind` binds the call to anything but the reference's bound call:
    found by watching what `_bound_reference` made while binding."""
    made = []
    original = kernels._bound_reference

    def watched(kernel, where):
        made.append(original(kernel, where))
        return made[-1]

    kernels._bound_reference = watched
    try:
        bound = binding_of(call)
    finally:
        kernels._bound_reference = original
    return bool(made) and bound is not made[-1] and bound.function is not made[-1]


def binds(call) -> bool:
    """Whether the call's node binds at all at its opset (a kernel may refuse its
    attributes when it is built: the model is refused then, before any call)."""
    if kernels.kernel_class("", call.op, call.opset) is None:
        return False
    try:
        return binding_of(call) is not None
    except Exception:  # noqa: BLE001 -- refused when built: no binding to check
        return False


@functools.lru_cache(maxsize=None)
def direct_calls(opset: int = OPSET):
    """{op: its catalogue calls bound directly}, lazyloop's own readings aside. At another
    opset than the catalogue's, its calls made at that opset (where the node binds): some
    are not valid there (an attribute the op's opset does not define yet), which the
    reference kernel refuses -- and the binding must too."""
    table = {}
    for op in catalogue(OPSET):
        if op in OWN_READINGS:
            continue
        calls = [attrs.evolve(c, opset=opset) for c in signatures(op, OPSET)]
        calls = [c for c in calls if binds(c) and is_direct(c)]
        if calls:
            table[op] = tuple(calls)
    return table


# ------------------------------------------------------------------------------------------
# The values fed: ordinary, edge values, empty
# ------------------------------------------------------------------------------------------

def edges_of(dtype) -> list:
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return [True, False]
    if dt.kind == "f":
        info = np.finfo(dt)
        return [np.nan, np.inf, -np.inf, -0.0, 0.0, info.max, -info.max, info.tiny,
                info.smallest_subnormal, -1.5, 0.5, -np.nan]
    info = np.iinfo(dt)
    return [info.min, info.max, 0, 1, info.max - 1] + ([-1, info.min + 1]
                                                       if dt.kind == "i" else [2])


def with_edges(x: np.ndarray, offset: int) -> np.ndarray:
    """`x` with its elements replaced, in turn, by its dtype's edge values (from `offset`)."""
    edges = edges_of(x.dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        flat = np.array([edges[(k + offset) % len(edges)] for k in range(x.size)], x.dtype)
    return flat.reshape(x.shape)


#: the kinds of values fed to a call's data inputs: the signature's own shapes; the first
#: axis empty; the first axis 300 times longer (past the sizes where some bindings change
#: their way, Sigmoid's 256 values); every data input 0-D; the first data input in another
#: dtype (which most kernels refuse -- the binding must refuse too, or answer as the
#: reference answers); the constant integer inputs (indices, axes, starts, sizes, k) moved
#: by a few, to negative and out-of-range values, where the bindings hand over
VARIANTS = ("ordinary", "edges", "empty", "long", "scalar", "retyped", "moved")
#: how far a "moved" constant moves, by seed
MOVES = (-1, 1, -2, 2, -3, -4)
#: the dtype a "retyped" input takes instead of its own
OTHER_DTYPE = {"float32": "float64", "float64": "float32", "float16": "float32",
               "int64": "int32", "int32": "int64", "int8": "uint8", "uint8": "int8",
               "int16": "int64", "uint16": "uint32", "uint32": "uint64", "uint64": "int64",
               "bool": "int64"}


def shape_for(variant: str, shape: tuple, first: tuple) -> tuple:
    """A data input's shape in `variant` (`first`: the first data input's shape)."""
    if variant == "scalar":
        return ()
    if not shape or variant not in ("empty", "long") or (variant == "long" and shape != first):
        return shape
    return (0 if variant == "empty" else 300 * shape[0],) + tuple(shape[1:])


def arguments(call, variant: str, seed: int) -> list:
    """The call's arguments: its constants as they are, left-out inputs None, data inputs
    of `variant` for `seed` (copies: every call gets fresh arrays)."""
    args, first = [], next((p.shape for _, p in call.data), ())
    for k, p in enumerate(call.inputs):
        if p.role == "none":
            args.append(None)
        elif p.role == "const":
            value = np.array(p.value, p.dtype)
            if variant == "moved" and value.dtype.kind == "i":
                value = value + np.array(MOVES[(seed + k) % len(MOVES)], value.dtype)
            args.append(value)
        else:
            retyped = variant == "retyped" and k == call.data[0][0]
            x = typed_values(OTHER_DTYPE[p.dtype] if retyped else p.dtype,
                             shape_for(variant, p.shape, first), p.domain, seed + 5 * k)
            if variant in ("edges", "long") and call.op not in SIZED_BY_VALUES:
                x = with_edges(x, seed + 3 * k)
            args.append(x)
    return args


# ------------------------------------------------------------------------------------------
# The comparison
# ------------------------------------------------------------------------------------------

def outcome(fn, args):
    """("value", outputs as arrays) or ("refused", the exception), numpy's warnings quiet
    (numpy's error state left as it is: the bindings read it)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return "value", tuple(kernels.as_value(r) for r in fn(*args))
        except Exception as exc:  # noqa: BLE001 -- a refusal is an answer here
            return "refused", exc


def bits(x) -> bytes:
    return np.ascontiguousarray(x).tobytes()


def refusal_difference(got, want) -> str | None:
    """Where either outcome is a refusal, what differs (both must refuse, the binding with a
    LazyLoopError), or None; "" where both answer (their values are to compare)."""
    if want[0] == "refused":
        if got[0] == "value":
            return f"the binding answers {got[1]!r} where the reference refuses ({want[1]!r})"
        if not isinstance(got[1], LazyLoopError):
            return f"the binding refuses with a raw {type(got[1]).__name__}: {got[1]}"
        return None
    if got[0] == "refused":
        return f"the binding refuses ({got[1]}) where the reference answers {want[1]!r}"
    if len(got[1]) != len(want[1]):
        return f"{len(got[1])} outputs, the reference {len(want[1])}"
    return ""


def difference(got, want) -> str | None:
    """What differs between the binding's outcome and the reference's, or None."""
    problem = refusal_difference(got, want)
    if problem != "":
        return problem
    for j, (g, w) in enumerate(zip(got[1], want[1])):
        if not isinstance(g, np.ndarray) or not isinstance(w, np.ndarray):
            if type(g) is not type(w):
                return f"output {j}: a {type(g).__name__}, the reference a {type(w).__name__}"
            continue
        if g.dtype != w.dtype or g.shape != w.shape:
            return f"output {j}: {g.dtype}{g.shape}, the reference {w.dtype}{w.shape}"
        if g.dtype.kind in "biufc" and bits(g) != bits(w):
            return f"output {j}: {g!r}, the reference {w!r}"
        if g.dtype.kind not in "biufc" and not np.array_equal(g, w):
            return f"output {j}: {g!r}, the reference {w!r}"
    return None


def snapshot(args) -> list:
    return [None if a is None else (a.dtype, a.shape, bits(a)) for a in args]


def copies(args) -> list:
    return [None if a is None else a.copy() for a in args]


def first_only(outcome_):
    return outcome_ if outcome_[0] == "refused" else ("value", outcome_[1][:1])


def law_holds(call, args, bound=None, reference=None) -> None:
    """The binding's outcome on `args` is the reference kernel's, and leaves `args` as they
    were (each side gets its own copies); so is its one-value form's (`Kernel.single`, what
    a one-output layer calls), and its value has the type its record says its arguments'
    types give (`Kernel.gives`: the engine leaves out the check of it)."""
    bound = bound or binding_of(call)
    reference = reference or reference_of(call)
    mine = copies(args)
    before = snapshot(mine)
    want = outcome(reference, copies(args))
    got = outcome(bound.function, mine)
    problem = difference(got, want)
    assert problem is None, f"{call!r} on {args!r}: {problem}"
    assert snapshot(mine) == before, f"{call!r} wrote its arguments"
    if bound.single is not None:
        alone = outcome(lambda *a: (bound.single(*a),), copies(args))
        problem = difference(alone, first_only(want))
        assert problem is None, f"{call!r} on {args!r}, its one-value form: {problem}"
    if bound.gives is not None and got[0] == "value" and all(a is not None for a in args):
        said = bound.gives([TensorType(a.dtype, a.shape) for a in args])
        value = got[1][0]
        assert said is None or contains(said, TensorType(value.dtype, value.shape)), \
            f"{call!r} on {args!r}: a {value.dtype}{value.shape}, its record says {said}"


# ------------------------------------------------------------------------------------------
# Calls in turn: what a binding keeps never leaks into another call's answer
# ------------------------------------------------------------------------------------------

def servings(op) -> list:
    """The op's calls one binding serves, in groups: the same attributes, and the same inputs
    left out (the node is the same; its arguments' shapes, dtypes and constants differ)."""
    groups = {}
    for call in direct_calls()[op]:
        key = (call.attributes, tuple(p.role == "none" for p in call.inputs))
        groups.setdefault(key, []).append(call)
    return [calls for calls in groups.values() if len(calls) > 1]


def read_only(args) -> list:
    """The arguments as the engine hands stream elements over: read-only arrays."""
    for a in args:
        if a is not None:
            a.setflags(write=False)
    return args


def scribble(value) -> None:
    """Write into a returned array, as a careless caller might, where numpy lets it."""
    if isinstance(value, np.ndarray) and value.flags.writeable and value.size:
        if value.dtype == np.bool_:
            np.logical_not(value, out=value)
        else:
            value.fill(7)


def in_turn(calls, rounds: int = 3):
    """(call, variant, seed) for each call of `calls` in turn, forwards then backwards,
    `rounds` times, the variant and seed moving on with each step."""
    order = (list(calls) + list(reversed(calls))) * rounds
    return [(c, VARIANTS[i % len(VARIANTS)], i // len(VARIANTS)) for i, c in enumerate(order)]


def law_holds_in_turn(steps, bound, reference) -> None:
    """One binding of a node, called on each (call, variant, seed) of `steps` in turn with
    read-only arguments, gives each the reference's outcome; every value it returned
    writable is then written into, and every read-only one must keep the bits it had when
    it was returned."""
    kept = []
    for call, variant, seed in steps:
        args = arguments(call, variant, seed)
        want = outcome(reference, copies(args))
        got = outcome(bound.function, read_only(copies(args)))
        problem = difference(got, want)
        assert problem is None, f"{call!r} ({variant}, seed {seed}) after {len(kept)} " \
                                f"calls: {problem}"
        for value in got[1] if got[0] == "value" else ():
            scribble(value)
            if isinstance(value, np.ndarray) and not value.flags.writeable:
                kept.append((call, value, bits(value)))
    for call, value, was in kept:
        assert bits(value) == was, f"a value returned for {call!r} changed afterwards"


#: the ops whose bindings keep what they derived per shape (their last value, an index, a
# ------------------------------------------------------------------------------------------
# The batched forms: each stacked element is the binding's own value for it
# ------------------------------------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def batched_calls():
    """The catalogue's calls (any op, lazyloop's own readings aside) whose binding has a
    batched form, and data inputs to stack."""
    return tuple(c for op in catalogue(OPSET) if op not in OWN_READINGS
                 for c in signatures(op, OPSET)
                 if c.data and binds(c) and binding_of(c).batched is not None)


def batch_law_holds(call, variant: str, seed: int, only_first: bool) -> None:
    """Three elements of the call's data inputs (seeds `seed`..`seed` + 2; the first data
    input alone stacked where `only_first`), stacked: the batched form gives each element
    the binding's value for it, or raises NotBatchable (the engine then maps them one by
    one; anything else it raises would escape)."""
    bound = binding_of(call)
    stacked = [k in dict(call.data) and (not only_first or k == call.data[0][0])
               for k in range(len(call.inputs))]
    elements = [arguments(call, variant, seed + i) for i in range(3)]
    elements = [[e[k] if stacked[k] else elements[0][k] for k in range(len(e))]
                for e in elements]
    ones = [outcome(bound.function, copies(e)) for e in elements]
    if any(o[0] == "refused" for o in ones):
        return  # an element refused: the engine reports it before any batch is made
    args = [np.stack([e[k] for e in elements]) if stacked[k] else elements[0][k]
            for k in range(len(stacked))]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            batch = np.asarray(bound.batched(args, tuple(stacked)))
    except NotBatchable:
        return
    for i, one in enumerate(ones):
        problem = difference(("value", (np.asarray(batch[i]),)), ("value", one[1][:1]))
        assert problem is None, f"{call!r} ({variant}, seed {seed}), element {i}: {problem}"
