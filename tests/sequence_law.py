"""The kernel law's parts for the kernels the op catalogue does not reach (rules: onnx/node,
onnx/sequences): the sequence and optional ops and ai.onnx.ml's ArrayFeatureExtractor.

A call here is a node (op, attributes, how many inputs given, opset); its cases are the
arguments fed to it, made from the op's schema (`onnx.defs`): every tensor element type its
type constraints allow, strings and booleans included, sequences of 0 to 4 elements of one
shape and of several, empty and 0-D tensors, the empty optional (None), positions and axes
in range, negative and past either end. The binding (`kernels.bind`) is compared with the
reference kernel bound alone -- or, for SequenceInsert and Optional, with lazyloop's own
kernel (`kernels.OWN_KERNELS`: spec/30 says why) -- value by value: lists element by
element, each value made where the other side's was made (the argument itself, an element
of an argument list, or new), arrays bit for bit. The laws themselves are
tests/test_sequence_kernel_law.py."""
from __future__ import annotations

import functools
import warnings

import attrs
import numpy as np
import onnx.defs
from kernel_law import bits, edges_of, outcome, refusal_difference

from lazyloop.onnx import kernels

#: the opsets each call is made at (where the op is defined there)
OPSETS = (11, 15, 18, 21)
ML_OPSET = 3
SEQUENCE_OPS = ("SequenceEmpty", "SequenceConstruct", "SequenceLength", "SequenceAt",
                "SequenceInsert", "ConcatFromSequence", "SplitToSequence", "Optional",
                "OptionalHasElement", "OptionalGetElement")
ML_OPS = ("ArrayFeatureExtractor",)
#: the element shapes of the tensors fed: 0-D, empty, a vector, matrices, rank 3
SHAPES = ((), (0,), (3,), (2, 3), (2, 0), (1, 2, 2))
POSITIONS = (-6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5)
STRINGS = ("", "a", "é", "\x00z", "long string", "b")
ONNX_NAMES = {"float": "float32", "double": "float64", "string": "object"}


@attrs.frozen
class Call:
    """One node: `Call('SplitToSequence', (('axis', 1),), 2)` is SplitToSequence(x, split)
    with axis = 1, at `opset` of its domain."""
    op: str
    attributes: tuple = ()
    arity: int = 1
    opset: int = 21

    @property
    def domain(self) -> str:
        return "ai.onnx.ml" if self.op in ML_OPS else ""

    def node(self):
        return onnx.helper.make_node(self.op, [f"x{k}" for k in range(self.arity)], ["y"],
                                     domain=self.domain, **dict(self.attributes))

    def __repr__(self):
        said = "".join(f", {k}={v}" for k, v in self.attributes)
        return f"{self.op}({self.arity} inputs{said}; opset {self.opset})"


# ------------------------------------------------------------------------------------------
# The two sides
# ------------------------------------------------------------------------------------------

def where_of(call) -> str:
    return f"node {call.op}"


def binding_of(call):
    opsets = {call.domain: call.opset, "": OPSETS[-1]}
    return kernels.bind(call.node(), opsets, where_of(call))


def reference_of(call):
    """The reference kernel bound alone, or lazyloop's own kernel where it has one."""
    own = kernels.OWN_KERNELS.get((call.domain, call.op))
    if own is not None:
        return kernels._bound_call(own, {}, where_of(call))
    params = {"log": lambda *a, **k: None, "opsets": {call.domain: call.opset}, "verbose": 0,
              "new_ops": None, "existing_functions": {}, "evaluator_cls": None}
    cls = kernels.kernel_class(call.domain, call.op, call.opset)
    return kernels._bound_reference(cls(call.node(), params), where_of(call))


def defined(op: str, opset: int) -> bool:
    """Whether ONNX defines `op` at `opset` of its domain (its schema, not the reference
    kernel's classes, which answer for any opset)."""
    domain = "ai.onnx.ml" if op in ML_OPS else ""
    try:
        onnx.defs.get_schema(op, opset, domain)
    except onnx.defs.SchemaError:
        return False
    return True


# ------------------------------------------------------------------------------------------
# The values: each element type the schema allows
# ------------------------------------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def element_types(op: str, parameter: str) -> tuple:
    """The numpy dtypes of the tensors a type parameter of `op` allows, innermost
    `tensor(...)` of each allowed type (`seq(tensor(float))` gives float32)."""
    domain = "ai.onnx.ml" if op in ML_OPS else ""
    schema = onnx.defs.get_schema(op, ML_OPSET if domain else OPSETS[-1], domain)
    found = []
    for constraint in schema.type_constraints:
        if constraint.type_param_str != parameter:
            continue
        for text in constraint.allowed_type_strs:
            name = text[text.rindex("tensor(") + 7:].split(")")[0]
            dtype = np.dtype(ONNX_NAMES.get(name, name))
            if dtype not in found:
                found.append(dtype)
    return tuple(found)


def tensor(dtype, shape: tuple, seed: int) -> np.ndarray:
    """An array of `shape`: strings for object, each dtype's edge values otherwise (complex:
    float64 edges for both parts), from `seed` on."""
    dtype, size = np.dtype(dtype), int(np.prod(shape, dtype=np.int64))
    if dtype == object:
        flat = np.array([STRINGS[(seed + k) % len(STRINGS)] for k in range(size)], object)
        return flat.reshape(shape)
    part = np.float64 if dtype.kind == "c" else dtype
    edges = edges_of(part)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        flat = np.array([edges[(seed + k) % len(edges)] for k in range(size)], part)
        if dtype.kind == "c":
            flat = flat + 1j * flat[::-1]
        return flat.astype(dtype).reshape(shape)


def sequences(dtype, seed: int) -> list:
    """Lists of 0..4 tensors of `dtype`: of one shape (each of SHAPES), of several, and one
    with an element of another dtype."""
    found = [[]]
    for count in (1, 2, 4):
        for shape in SHAPES[seed % 2::2]:
            found.append([tensor(dtype, shape, seed + i) for i in range(count)])
    found.append([tensor(dtype, s, seed + i) for i, s in enumerate(((2, 3), (2, 1), (2, 0)))])
    found.append([tensor(dtype, s, seed + i) for i, s in enumerate(((3,), (1, 3), ()))])
    other = np.dtype(np.int64 if dtype != np.int64 else np.float32)
    found.append([tensor(dtype, (2,), seed), tensor(other, (2,), seed + 1)])
    return found


def positions(seed: int) -> list:
    """Positions as the schemas' integer types give them: 0-D and `[1]`-shaped, int32 and
    int64, numpy integer scalars (a Loop's iteration number is one), a float and a bool
    outside the schema."""
    found = []
    for k, at in enumerate(POSITIONS):
        dtype = (np.int64, np.int32)[(k + seed) % 2]
        found.append(np.array(at, dtype))
        if k % 3 == seed % 3:
            found.append(np.array([at], dtype))
    return found + [np.int64(seed % 5 - 2), np.int32(-1), np.array(1.0, np.float32),
                    np.array(True)]


def dtypes_for(op: str, parameter: str, seed: int, many: int = 6) -> tuple:
    """`many` of the op's element types, moving on with the seed (all of them across
    seeds), bool and string always among them where allowed."""
    allowed = element_types(op, parameter)
    always = [d for d in allowed if d in (np.dtype(bool), np.dtype(object))]
    rest = [d for d in allowed if d not in always]
    start = (seed * many) % max(len(rest), 1)
    return tuple(always + (rest[start:] + rest[:start])[:many])


# ------------------------------------------------------------------------------------------
# The comparison: values, where each was made, and the arguments left as they were
# ------------------------------------------------------------------------------------------

def origin(value, args):
    """Where `value` was made: ("argument", k) if it is the k-th argument itself,
    ("element", k, i) if the i-th element of the k-th (a list), else None (new)."""
    for k, a in enumerate(args):
        if value is a and value is not None:
            return ("argument", k)
        if a.__class__ is list:
            for i, e in enumerate(a):
                if value is e:
                    return ("element", k, i)
    return None


def value_difference(got, want, got_args, want_args, where="the value") -> str | None:
    """What differs between a value of the binding and the reference's: its kind, where it
    was made, a list's length and elements, an array's dtype, shape and bits."""
    if origin(got, got_args) != origin(want, want_args):
        return f"{where} made at {origin(got, got_args)}, the reference's at " \
               f"{origin(want, want_args)}"
    if want is None or got is None:
        return None if got is want else f"{where}: {got!r}, the reference {want!r}"
    if type(got) is not type(want):
        return f"{where}: a {type(got).__name__}, the reference a {type(want).__name__}"
    if isinstance(want, list):
        if len(got) != len(want):
            return f"{where}: {len(got)} elements, the reference {len(want)}"
        for i, (g, w) in enumerate(zip(got, want)):
            problem = value_difference(g, w, got_args, want_args, f"{where}[{i}]")
            if problem:
                return problem
        return None
    if not isinstance(want, (np.ndarray, np.generic)):
        return None if got == want else f"{where}: {got!r}, the reference {want!r}"
    if got.dtype != want.dtype or got.shape != want.shape:
        return f"{where}: {got.dtype}{got.shape}, the reference {want.dtype}{want.shape}"
    same = bits(got) == bits(want) if want.dtype.kind in "biufc" else \
        np.asarray(got).tolist() == np.asarray(want).tolist()
    return None if same else f"{where}: {got!r}, the reference {want!r}"


def difference(got, want, got_args, want_args) -> str | None:
    """The outcomes (`kernel_law.outcome`) compared: the same values, or both refused (the
    binding with a LazyLoopError)."""
    problem = refusal_difference(got, want)
    if problem != "":
        return problem
    for j, (g, w) in enumerate(zip(got[1], want[1])):
        problem = value_difference(g, w, got_args, want_args, f"output {j}")
        if problem:
            return problem
    return None


def copies(value):
    """A deep copy: new lists of new arrays (None and other values as they are)."""
    if value.__class__ is list:
        return [copies(v) for v in value]
    return value.copy() if isinstance(value, np.ndarray) else value


def snapshot(value):
    """What a value is, to the last bit and list member: a list's identity, length and
    each member's identity and snapshot; an array's dtype, shape, bits (strings: values)."""
    if value.__class__ is list:
        return ("list", id(value), tuple((id(v), snapshot(v)) for v in value))
    if isinstance(value, np.ndarray):
        content = bits(value) if value.dtype.kind in "biufc" else repr(value.tolist())
        return (value.dtype, value.shape, content)
    return ("other", repr(value))


def read_only(value):
    """The value as the engine hands stream elements over: its arrays read-only."""
    if value.__class__ is list:
        for v in value:
            read_only(v)
    elif isinstance(value, np.ndarray):
        value.setflags(write=False)
    return value


def text_refuses(call, args) -> bool:
    """Whether SplitToSequence's operator text refuses the call's integer split where ONNX's
    reference kernel slices anyway (spec/30, `onnx/sequences`: a 0-D split not positive, a
    1-D one with a negative length or not summing to the axis): lazyloop refuses it."""
    from lazyloop.onnx.sequence_kernels import integral, split_refused
    if call.op != "SplitToSequence" or len(args) < 2 or not isinstance(args[0], np.ndarray):
        return False
    x, split = args[0], args[1]
    axis = dict(call.attributes).get("axis", 0)
    if not (integral(split) and isinstance(axis, int) and -x.ndim <= axis < x.ndim):
        return False
    return bool(split_refused(split, x.shape[axis % x.ndim]))


def one_call(call, fn, reference, args, mine):
    """`fn` (the binding's call) on `mine`, a copy of `args`, gives the reference's outcome
    on another copy, and leaves `mine` -- lists and their members -- as it was; its
    outcome."""
    theirs, before = copies(args), snapshot(mine)
    want = outcome(reference, theirs)
    got = outcome(fn, mine)
    if text_refuses(call, args):  # lazyloop's reading: the operator text, not the reference
        assert got[0] == "refused" and getattr(got[1], "rule", None) == "onnx/sequences", \
            f"{call!r} on {args!r}: the text refuses this split, the binding gave {got!r}"
        return got
    problem = difference(got, want, mine, theirs)
    assert problem is None, f"{call!r} on {args!r}: {problem}"
    assert snapshot(mine) == before, f"{call!r} changed its arguments"
    return got


def law_holds(call, args, bound=None, reference=None) -> None:
    """The binding's outcome on `args` is the reference's, its one-value form's too, and
    the arguments are left as they were."""
    bound = bound or binding_of(call)
    reference = reference or reference_of(call)
    assert bound.single is not None, f"{call!r} is not bound directly"
    one_call(call, bound.function, reference, args, copies(args))
    one_call(call, lambda *a: (bound.single(*a),), reference, args, copies(args))


def scribble(value, args) -> None:
    """Write into a value the binding made, as a careless caller might: a new list gets a
    member more and is reversed, a writable array it made is filled."""
    if origin(value, args) is not None:
        return
    if value.__class__ is list:
        for v in value:
            scribble(v, args)
        value.append(np.array(7))
        value.reverse()
    elif isinstance(value, np.ndarray) and value.flags.writeable and value.size:
        value.fill(True if value.dtype == bool else ("x" if value.dtype == object else 7))


def read_only_arrays(value) -> list:
    if value.__class__ is list:
        return [a for v in value for a in read_only_arrays(v)]
    return [value] if isinstance(value, np.ndarray) and not value.flags.writeable else []


def law_holds_in_turn(call, cases, bound=None, reference=None) -> None:
    """One binding of the node called on each of `cases` in turn, its arguments read-only:
    each outcome is the reference's, each argument is left as it was, writing into what it
    returned changes no later answer, and no read-only array it returned changes."""
    bound = bound or binding_of(call)
    reference = reference or reference_of(call)
    kept = []
    for args in cases:
        mine = read_only(copies(args))
        got = one_call(call, bound.function, reference, args, mine)
        for value in got[1] if got[0] == "value" else ():
            kept += [(a, bits(a)) for a in read_only_arrays(value) if a.dtype != object]
            scribble(value, mine)
    for array, was in kept:
        assert bits(array) == was, f"a value {call!r} returned changed afterwards"
