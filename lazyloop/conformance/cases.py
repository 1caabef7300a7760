"""The conformance cases, as data.

Each case is a small loop program tied to rule IDs, with its inputs and its expected outputs
worked out by hand and written here literally (never computed by lazyloop). `U` marks an
undefined position (CONCATENATE padding, a last value after zero trips): any value is right
there. Cases whose answer depends on a reading of the ambiguity register list its IDs.

Core cases are builders written with TensorRT's network-definition calls only, so
``case.build(trt_network, api=tensorrt)`` builds the same network on TensorRT; they are
exported to ONNX or OpenVINO for other backends (`lazyloop.onnx.export`, `lazyloop.openvino.export`). Dialect cases are
written directly as ONNX or OpenVINO models (recipes of `lazyloop.strategies.dialects`) with
the inputs given here.
"""
from __future__ import annotations

from typing import Callable, Dict, Optional, Tuple

import attrs
import numpy as np


class _Undefined:
    def __repr__(self):
        return "U"


U = _Undefined()


@attrs.frozen
class Expected:
    """An expected output: its values (with U where undefined) and dtype."""
    values: object
    dtype: str = "float32"
    shape: Optional[Tuple[int, ...]] = None  # needed when the array is empty

    def array_and_mask(self):
        from ..core.undefined import fill_value
        dtype = np.dtype(self.dtype)
        flat = list(_flatten(self.values))
        mask = np.array([v is not U for v in flat], dtype=bool)
        data = np.array([fill_value(dtype) if v is U else v for v in flat], dtype=dtype)
        shape = self.shape if self.shape is not None else np.shape(
            np.empty(_shape_of(self.values), dtype=np.int8))
        return data.reshape(shape), mask.reshape(shape)


def _flatten(v):
    if isinstance(v, (list, tuple)):
        for x in v:
            yield from _flatten(x)
    else:
        yield v


def _shape_of(v):
    shape = []
    while isinstance(v, (list, tuple)):
        shape.append(len(v))
        if not v:
            break
        v = v[0]
    return tuple(shape)


@attrs.frozen
class Case:
    """name, rules, inputs and expected outputs (by hand); `build(net, api)` writes a core
    program on `net` (format "core"), or `model()` returns a dialect model ("onnx" or
    "openvino"); `ambiguities` lists register IDs the answer depends on."""
    name: str
    rules: Tuple[str, ...]
    inputs: Dict[str, np.ndarray]
    expected: Dict[str, Expected]
    build: Optional[Callable] = None
    model: Optional[Callable] = None
    format: str = "core"
    ambiguities: Tuple[str, ...] = ()
    note: str = ""

    def network(self, api=None):
        """The case as a `lazyloop.Network` (core cases)."""
        import lazyloop
        api = api or lazyloop
        net = lazyloop.Network("tensorrt")
        self.build(net, api)
        return net

    def expected_arrays(self):
        """{name: (values with lazyloop's fill where undefined, defined mask)}."""
        return {k: e.array_and_mask() for k, e in self.expected.items()}


CASES: Dict[str, Case] = {}


def case(name, rules, inputs, expected, ambiguities=(), note=""):
    """Register a core case whose builder is the decorated function."""
    def wrap(fn):
        CASES[name] = Case(name, tuple(rules), {k: np.asarray(v) for k, v in inputs.items()},
                           expected, build=fn, ambiguities=tuple(ambiguities),
                           note=note or (fn.__doc__ or "").strip())
        return fn
    return wrap


def dialect_case(name, rules, fmt, recipe, inputs, expected, ambiguities=(), note=""):
    def model():
        return recipe.build()[0]
    CASES[name] = Case(name, tuple(rules), {k: np.asarray(v) for k, v in inputs.items()},
                       expected, model=model, format=fmt, ambiguities=tuple(ambiguities),
                       note=note)


# -- helpers written with TensorRT's calls ---------------------------------------------------

def const(net, value, dtype=np.float32):
    value = np.asarray(value, dtype=dtype)
    return net.add_constant(value.shape, value).get_output(0)


def count_loop(net, api, n):
    loop = net.add_loop()
    loop.add_trip_limit(const(net, n, np.int32), api.TripLimit.COUNT)
    return loop


def counter(net, api, loop, start=0):
    """c = start, start+1, ... (int32)."""
    rec = loop.add_recurrence(const(net, start, np.int32))
    nxt = net.add_elementwise(rec.get_output(0), const(net, 1, np.int32),
                              api.ElementWiseOperation.SUM).get_output(0)
    rec.set_input(1, nxt)
    return rec.get_output(0)


def stacked(net, api, loop, t, length, axis=0, kind="CONCATENATE"):
    out = loop.add_loop_output(t, getattr(api.LoopOutput, kind), axis)
    out.set_input(1, const(net, length, np.int32))
    return out.get_output(0)


def last(api, loop, t):
    return loop.add_loop_output(t, api.LoopOutput.LAST_VALUE).get_output(0)


def mark(net, t, name):
    t.name = name
    net.mark_output(t)


def add(net, api, a, b):
    return net.add_elementwise(a, b, api.ElementWiseOperation.SUM).get_output(0)


X32 = [[1, 2], [3, 4], [5, 6]]


# -- the cases -------------------------------------------------------------------------------

@case("count_sum_rows", ["trip/count", "iterator/forward", "recurrence/def", "output/last",
                         "output/concat", "stream/map"],
      {"x": np.array(X32, np.float32)},
      {"total": Expected([9, 12]), "running": Expected([[1, 2], [4, 6], [9, 12]])})
def _(net, api):
    """acc = 0; for each row r of x (3 trips): acc = acc + r."""
    x = net.add_input("x", api.float32, (3, 2))
    loop = count_loop(net, api, 3)
    row = loop.add_iterator(x, 0, False).get_output(0)
    acc = loop.add_recurrence(const(net, [0, 0]))
    nxt = add(net, api, acc.get_output(0), row)
    acc.set_input(1, nxt)
    mark(net, last(api, loop, acc.get_output(0)), "total")
    mark(net, stacked(net, api, loop, nxt, 3), "running")


@case("iterator_reverse", ["iterator/reverse", "output/concat", "trip/count"],
      {"x": np.array(X32, np.float32)},
      {"rows": Expected([[5, 6], [3, 4], [1, 2]])}, ambiguities=("A2",))
def _(net, api):
    """A reverse iterator yields the last row first (A2 default: X[L-1-i])."""
    x = net.add_input("x", api.float32, (3, 2))
    loop = count_loop(net, api, 3)
    row = loop.add_iterator(x, 0, True).get_output(0)
    mark(net, stacked(net, api, loop, row, 3), "rows")


@case("iterator_reverse_short_count", ["iterator/reverse", "output/concat", "trip/count"],
      {"x": np.array(X32, np.float32)},
      {"rows": Expected([[5, 6], [3, 4]])}, ambiguities=("A2",),
      note="2 trips over 3 rows: the guide's reading starts at the last row (A2); the API "
           "reference's gather(t, M-1-i) would start at row 1")
def _(net, api):
    x = net.add_input("x", api.float32, (3, 2))
    loop = count_loop(net, api, 2)
    row = loop.add_iterator(x, 0, True).get_output(0)
    mark(net, stacked(net, api, loop, row, 2), "rows")


@case("iterator_axis1", ["iterator/forward", "output/concat"],
      {"x": np.array([[1, 2, 3], [4, 5, 6]], np.float32)},
      {"columns": Expected([[1, 4], [2, 5], [3, 6]])})
def _(net, api):
    """Iterating axis 1 yields the columns."""
    x = net.add_input("x", api.float32, (2, 3))
    loop = count_loop(net, api, 3)
    col = loop.add_iterator(x, 1, False).get_output(0)
    mark(net, stacked(net, api, loop, col, 3), "columns")


@case("iterator_axis1_reverse_concat_axis1", ["iterator/reverse", "output/concat"],
      {"x": np.array([[1, 2, 3], [4, 5, 6]], np.float32)},
      {"y": Expected([[3, 2, 1], [6, 5, 4]])})
def _(net, api):
    """Columns last first, stacked back on axis 1: the columns in reverse order."""
    x = net.add_input("x", api.float32, (2, 3))
    loop = count_loop(net, api, 3)
    col = loop.add_iterator(x, 1, True).get_output(0)
    mark(net, stacked(net, api, loop, col, 3, axis=1), "y")


@case("zero_trips_last_value", ["output/last", "recurrence/def", "trip/count"],
      {"init": np.array([7, -1], np.float32)},
      {"y": Expected([7, -1])})
def _(net, api):
    """After zero trips LAST_VALUE of a recurrence is its initial value."""
    init = net.add_input("init", api.float32, (2,))
    loop = count_loop(net, api, 0)
    r = loop.add_recurrence(init)
    r.set_input(1, net.add_unary(r.get_output(0), api.UnaryOperation.NEG).get_output(0))
    mark(net, last(api, loop, r.get_output(0)), "y")


@case("zero_trips_concat_padded", ["output/concat", "structure/length", "trip/count"],
      {"x": np.array([[1, 2]], np.float32)},
      {"y": Expected([[U, U], [U, U]])})
def _(net, api):
    """Zero trips and a length of 2: every position is padding."""
    x = net.add_input("x", api.float32, (1, 2))
    loop = count_loop(net, api, 0)
    row = loop.add_iterator(x, 0, False).get_output(0)
    mark(net, stacked(net, api, loop, row, 2), "y")


@case("zero_trips_scalar_concat", ["output/concat", "trip/count", "stream/shape"],
      {}, {"y": Expected([], shape=(0,))})
def _(net, api):
    """Zero trips, length 0, scalar elements: an empty vector of shape [0]."""
    loop = count_loop(net, api, 0)
    r = loop.add_recurrence(const(net, 1.5))
    r.set_input(1, add(net, api, r.get_output(0), const(net, 1.0)))
    mark(net, stacked(net, api, loop, r.get_output(0), 0), "y")


@case("zero_trips_matrix_concat_axis1", ["output/concat", "trip/count", "stream/shape"],
      {}, {"y": Expected([], shape=(2, 0, 3))})
def _(net, api):
    """Zero trips of [2, 3] elements stacked on axis 1: shape [2, 0, 3] (`stream/shape`)."""
    loop = count_loop(net, api, 0)
    r = loop.add_recurrence(const(net, np.zeros((2, 3))))
    r.set_input(1, add(net, api, r.get_output(0), const(net, np.ones((2, 3)))))
    mark(net, stacked(net, api, loop, r.get_output(0), 0, axis=1), "y")


@case("concat_padding", ["output/concat", "structure/length"],
      {"x": np.array([[1, 2], [3, 4]], np.float32)},
      {"y": Expected([[1, 2], [3, 4], [U, U], [U, U]])})
def _(net, api):
    """2 trips, length 4: two rows of padding after the values."""
    x = net.add_input("x", api.float32, (2, 2))
    loop = count_loop(net, api, 2)
    row = loop.add_iterator(x, 0, False).get_output(0)
    mark(net, stacked(net, api, loop, row, 4), "y")


@case("reverse_padding", ["output/reverse", "structure/length"],
      {"x": np.array([[1, 2], [3, 4]], np.float32)},
      {"y": Expected([[3, 4], [1, 2], [U, U], [U, U]])}, ambiguities=("A1",))
def _(net, api):
    """REVERSE with padding: reversed values first, then the padding (A1 default)."""
    x = net.add_input("x", api.float32, (2, 2))
    loop = count_loop(net, api, 2)
    row = loop.add_iterator(x, 0, False).get_output(0)
    mark(net, stacked(net, api, loop, row, 4, kind="REVERSE"), "y")


@case("reverse_no_padding", ["output/reverse"],
      {"x": np.array([[1], [2], [3]], np.float32)},
      {"y": Expected([[3], [2], [1]])})
def _(net, api):
    x = net.add_input("x", api.float32, (3, 1))
    loop = count_loop(net, api, 3)
    row = loop.add_iterator(x, 0, False).get_output(0)
    mark(net, stacked(net, api, loop, row, 3, kind="REVERSE"), "y")


@case("concat_axis_last", ["output/concat"],
      {"x": np.array(X32, np.float32)},
      {"y": Expected([[1, 3, 5], [2, 4, 6]])})
def _(net, api):
    """Rows of shape [2] stacked on the new axis 1: shape [2, 3]."""
    x = net.add_input("x", api.float32, (3, 2))
    loop = count_loop(net, api, 3)
    row = loop.add_iterator(x, 0, False).get_output(0)
    mark(net, stacked(net, api, loop, row, 3, axis=1), "y")


@case("while_counter", ["trip/while", "structure/while-input", "output/last",
                        "output/concat"],
      {}, {"final": Expected(3, "int32"), "seen": Expected([0, 1, 2], "int32")})
def _(net, api):
    """c = 0; while c < 3: c += 1. LAST_VALUE is 3; the stacked c are 0, 1, 2."""
    loop = net.add_loop()
    c = counter(net, api, loop)
    cond = net.add_elementwise(c, const(net, 3, np.int32),
                               api.ElementWiseOperation.LESS).get_output(0)
    loop.add_trip_limit(cond, api.TripLimit.WHILE)
    mark(net, last(api, loop, c), "final")
    mark(net, stacked(net, api, loop, c, 3), "seen")


@case("while_false_first", ["trip/while", "output/last", "output/concat"],
      {}, {"final": Expected(5, "int32"), "seen": Expected([U], "int32")})
def _(net, api):
    """c starts at 5, the condition c < 3 is false at once: zero trips."""
    loop = net.add_loop()
    c = counter(net, api, loop, start=5)
    cond = net.add_elementwise(c, const(net, 3, np.int32),
                               api.ElementWiseOperation.LESS).get_output(0)
    loop.add_trip_limit(cond, api.TripLimit.WHILE)
    mark(net, last(api, loop, c), "final")
    mark(net, stacked(net, api, loop, c, 1), "seen")


@case("while_float_accumulator", ["trip/while", "recurrence/def", "output/concat"],
      {}, {"final": Expected(1.0), "seen": Expected([0, 0.25, 0.5, 0.75, U])})
def _(net, api):
    """a = 0; while a < 1: a += 0.25 -- four trips."""
    loop = net.add_loop()
    a = loop.add_recurrence(const(net, 0.0))
    a.set_input(1, add(net, api, a.get_output(0), const(net, 0.25)))
    cond = net.add_elementwise(a.get_output(0), const(net, 1.0),
                               api.ElementWiseOperation.LESS).get_output(0)
    loop.add_trip_limit(cond, api.TripLimit.WHILE)
    mark(net, last(api, loop, a.get_output(0)), "final")
    mark(net, stacked(net, api, loop, a.get_output(0), 5), "seen")


@case("both_count_stops_first", ["trip/both", "trip/count", "trip/while"],
      {}, {"final": Expected(2, "int32")})
def _(net, api):
    """COUNT 2 and WHILE c < 5: the count stops it after 2 trips."""
    loop = count_loop(net, api, 2)
    c = counter(net, api, loop)
    cond = net.add_elementwise(c, const(net, 5, np.int32),
                               api.ElementWiseOperation.LESS).get_output(0)
    loop.add_trip_limit(cond, api.TripLimit.WHILE)
    mark(net, last(api, loop, c), "final")


@case("both_while_stops_first", ["trip/both", "trip/count", "trip/while"],
      {}, {"final": Expected(2, "int32"), "acc": Expected(3.0)})
def _(net, api):
    """COUNT 5 and WHILE c < 2: the condition stops it after 2 trips."""
    loop = count_loop(net, api, 5)
    c = counter(net, api, loop)
    cond = net.add_elementwise(c, const(net, 2, np.int32),
                               api.ElementWiseOperation.LESS).get_output(0)
    loop.add_trip_limit(cond, api.TripLimit.WHILE)
    a = loop.add_recurrence(const(net, 0.0))
    a.set_input(1, add(net, api, a.get_output(0), const(net, 1.5)))
    mark(net, last(api, loop, c), "final")
    mark(net, last(api, loop, a.get_output(0)), "acc")


@case("recurrence_delay", ["recurrence/def", "stream/order", "output/last"],
      {}, {"r1": Expected(3.0), "r2": Expected(2.0)})
def _(net, api):
    """r1 counts 0, 1, 2, 3; r2 takes r1's previous value: after 3 trips r2 = 2."""
    loop = count_loop(net, api, 3)
    r1 = loop.add_recurrence(const(net, 0.0))
    r2 = loop.add_recurrence(const(net, 0.0))
    r1.set_input(1, add(net, api, r1.get_output(0), const(net, 1.0)))
    r2.set_input(1, r1.get_output(0))
    mark(net, last(api, loop, r1.get_output(0)), "r1")
    mark(net, last(api, loop, r2.get_output(0)), "r2")


@case("fibonacci", ["recurrence/def", "stream/order", "output/last", "output/concat"],
      {}, {"a": Expected(5.0), "b": Expected(8.0), "seq": Expected([0, 1, 1, 2, 3])})
def _(net, api):
    """a, b = b, a + b five times from (0, 1)."""
    loop = count_loop(net, api, 5)
    a = loop.add_recurrence(const(net, 0.0))
    b = loop.add_recurrence(const(net, 1.0))
    a.set_input(1, b.get_output(0))
    b.set_input(1, add(net, api, a.get_output(0), b.get_output(0)))
    mark(net, last(api, loop, a.get_output(0)), "a")
    mark(net, last(api, loop, b.get_output(0)), "b")
    mark(net, stacked(net, api, loop, a.get_output(0), 5), "seq")


@case("invariant_scaling", ["stream/invariant", "stream/map", "output/concat"],
      {"x": np.array([[1, 1], [2, 2]], np.float32), "w": np.array([2, 3], np.float32)},
      {"y": Expected([[2, 3], [4, 6]])})
def _(net, api):
    """w from outside the loop is the same on every trip."""
    x = net.add_input("x", api.float32, (2, 2))
    w = net.add_input("w", api.float32, (2,))
    loop = count_loop(net, api, 2)
    row = loop.add_iterator(x, 0, False).get_output(0)
    y = net.add_elementwise(row, w, api.ElementWiseOperation.PROD).get_output(0)
    mark(net, stacked(net, api, loop, y, 2), "y")


@case("map_activation", ["stream/map", "output/concat"],
      {"x": np.array([[-1, 2], [3, -4]], np.float32)},
      {"y": Expected([[0, 2], [3, 0]])})
def _(net, api):
    x = net.add_input("x", api.float32, (2, 2))
    loop = count_loop(net, api, 2)
    row = loop.add_iterator(x, 0, False).get_output(0)
    y = net.add_activation(row, api.ActivationType.RELU).get_output(0)
    mark(net, stacked(net, api, loop, y, 2), "y")


@case("dead_iterator_out_of_bounds", ["laziness/dead", "iterator/bounds", "trip/count"],
      {"short": np.array([[1, 2]], np.float32)},
      {"n": Expected(3, "int32")}, ambiguities=("A10",))
def _(net, api):
    """An iterator over a 1-row tensor in a 3-trip loop that nobody reads: no error."""
    short = net.add_input("short", api.float32, (1, 2))
    loop = count_loop(net, api, 3)
    loop.add_iterator(short, 0, False)
    c = counter(net, api, loop)
    mark(net, last(api, loop, c), "n")


@case("dead_loop", ["laziness/dead"],
      {"short": np.array([[1, 2]], np.float32), "x": np.array([1, 2], np.float32)},
      {"y": Expected([2, 4])}, ambiguities=("A10",))
def _(net, api):
    """A loop whose output nobody marks does no work, even one that would fail."""
    short = net.add_input("short", api.float32, (1, 2))
    x = net.add_input("x", api.float32, (2,))
    loop = count_loop(net, api, 2)
    row = loop.add_iterator(short, 0, False).get_output(0)
    stacked(net, api, loop, row, 2)
    mark(net, add(net, api, x, x), "y")


@case("nested_row_sums", ["structure/nesting", "iterator/forward", "output/last",
                          "output/concat"],
      {"x": np.array([[1, 2, 3], [4, 5, 6]], np.float32)},
      {"sums": Expected([6, 15])})
def _(net, api):
    """The inner loop sums the outer loop's row."""
    x = net.add_input("x", api.float32, (2, 3))
    outer = count_loop(net, api, 2)
    row = outer.add_iterator(x, 0, False).get_output(0)
    inner = count_loop(net, api, 3)
    v = inner.add_iterator(row, 0, False).get_output(0)
    acc = inner.add_recurrence(const(net, 0.0))
    acc.set_input(1, add(net, api, acc.get_output(0), v))
    mark(net, stacked(net, api, outer, last(api, inner, acc.get_output(0)), 2), "sums")


@case("nested_varying_trips", ["structure/nesting", "trip/count", "output/concat",
                               "structure/length"],
      {}, {"y": Expected([[U, U], [1, U], [1, 2]])})
def _(net, api):
    """The inner loop runs c trips, c = 0, 1, 2 the outer counter; each run's stacked values
    are padded to 2."""
    outer = count_loop(net, api, 3)
    c = counter(net, api, outer)
    inner = net.add_loop()
    inner.add_trip_limit(c, api.TripLimit.COUNT)
    a = inner.add_recurrence(const(net, 0.0))
    nxt = add(net, api, a.get_output(0), const(net, 1.0))
    a.set_input(1, nxt)
    mark(net, stacked(net, api, outer, stacked(net, api, inner, nxt, 2), 3), "y")


@case("conditional_in_loop", ["stream/map", "laziness/dead", "output/concat"],
      {"x": np.array([[1], [2], [3]], np.float32)},
      {"y": Expected([[1], [-2], [-3]])})
def _(net, api):
    """Per trip: the row when the counter is below 1, else its negation."""
    x = net.add_input("x", api.float32, (3, 1))
    loop = count_loop(net, api, 3)
    c = counter(net, api, loop)
    row = loop.add_iterator(x, 0, False).get_output(0)
    cond = net.add_elementwise(c, const(net, 1, np.int32),
                               api.ElementWiseOperation.LESS).get_output(0)
    ifc = net.add_if_conditional()
    ifc.set_condition(cond)
    a = ifc.add_input(row).get_output(0)
    b = ifc.add_input(row).get_output(0)
    neg = net.add_unary(b, api.UnaryOperation.NEG).get_output(0)
    out = ifc.add_output(a, neg).get_output(0)
    mark(net, stacked(net, api, loop, out, 3), "y")


@case("matmul_recurrence", ["recurrence/def", "stream/map", "output/last"],
      {"h0": np.array([1, 2], np.float32)},
      {"h": Expected([2, 1])})
def _(net, api):
    """h = h @ [[0, 1], [1, 0]] three times: the entries swap each trip."""
    h0 = net.add_input("h0", api.float32, (2,))
    loop = count_loop(net, api, 3)
    h = loop.add_recurrence(h0)
    w = const(net, [[0, 1], [1, 0]])
    nxt = net.add_matrix_multiply(h.get_output(0), api.MatrixOperation.VECTOR, w,
                                  api.MatrixOperation.NONE).get_output(0)
    h.set_input(1, nxt)
    mark(net, last(api, loop, h.get_output(0)), "h")


@case("reduce_rows", ["stream/map", "output/concat"],
      {"x": np.array(X32, np.float32)},
      {"y": Expected([3, 7, 11])})
def _(net, api):
    """Each trip sums its row to a scalar; the scalars stack to a vector."""
    x = net.add_input("x", api.float32, (3, 2))
    loop = count_loop(net, api, 3)
    row = loop.add_iterator(x, 0, False).get_output(0)
    s = net.add_reduce(row, api.ReduceOperation.SUM, 1, False).get_output(0)
    mark(net, stacked(net, api, loop, s, 3), "y")


@case("scalar_scan_output", ["output/concat", "recurrence/def"],
      {}, {"y": Expected([1, 2, 4])})
def _(net, api):
    """a = 0.5; three trips of a = 2a; the next values stack to [1, 2, 4]."""
    loop = count_loop(net, api, 3)
    a = loop.add_recurrence(const(net, 0.5))
    nxt = net.add_elementwise(a.get_output(0), const(net, 2.0),
                              api.ElementWiseOperation.PROD).get_output(0)
    a.set_input(1, nxt)
    mark(net, stacked(net, api, loop, nxt, 3), "y")


@case("sequential_loops", ["iterator/forward", "output/concat", "output/last"],
      {"x": np.array([1, 2, 3], np.float32)},
      {"doubled": Expected([2, 4, 6]), "total": Expected(12.0)})
def _(net, api):
    """The second loop iterates over the first loop's stacked output."""
    x = net.add_input("x", api.float32, (3,))
    first = count_loop(net, api, 3)
    v = first.add_iterator(x, 0, False).get_output(0)
    d = stacked(net, api, first, add(net, api, v, v), 3)
    second = count_loop(net, api, 3)
    e = second.add_iterator(d, 0, False).get_output(0)
    acc = second.add_recurrence(const(net, 0.0))
    acc.set_input(1, add(net, api, acc.get_output(0), e))
    mark(net, d, "doubled")
    mark(net, last(api, second, acc.get_output(0)), "total")


# -- dialect cases ---------------------------------------------------------------------------

def _dialect_cases():
    from ..strategies.dialects import (OnnxLoopRecipe, OnnxScan8Recipe, OnnxScanRecipe,
                                     OvLoopRecipe)
    dialect_case(
        "onnx_loop_omitted_cond", ["onnx/loop"], "onnx",
        OnnxLoopRecipe(mode="M,", count=3, body_cond="pass", scans=(("cond", 0),)),
        {"w": np.float32(0)}, {"s0_stacked": Expected([1, 1, 1])}, ambiguities=("A9",),
        note="M = 3, cond omitted; the body stacks its condition input as a float: true "
             "on every trip (A9)")
    dialect_case(
        "onnx_loop_zero_trips_scan_output", ["onnx/loop", "output/concat"], "onnx",
        OnnxLoopRecipe(mode="M,cond", count=0, scans=(("vector", 0),)),
        {"w": np.float32(0)}, {"s0_stacked": Expected([], shape=(0, 2))},
        note="M = 0: the scan output of [2] elements is empty, shape [0, 2]")
    dialect_case(
        "onnx_loop_negative_m", ["onnx/loop", "trip/count"], "onnx",
        OnnxLoopRecipe(mode="M,cond", count=-1, carried=(((2,), "half"),)),
        {"w": np.float32(0), "v0": np.array([4, 8], np.float32)},
        {"v0_final": Expected([4, 8])}, ambiguities=("A4",),
        note="M = -1 runs zero trips in the ONNX profile (A4)")
    dialect_case(
        "onnx_scan_reverse_axis1", ["onnx/scan9", "iterator/reverse"], "onnx",
        OnnxScanRecipe(length=3, element=(2,), inputs=((1, 1),), outputs=(("input", 0, 0),)),
        {"x0": np.array([[1, 2, 3], [4, 5, 6]], np.float32)},
        {"o0_stacked": Expected([[6, 12], [4, 10], [2, 8]])},
        note="scan axis 1, backwards: the columns last first, doubled")
    dialect_case(
        "onnx_scan_output_axis1_prepend", ["onnx/scan9", "output/reverse"], "onnx",
        OnnxScanRecipe(length=3, element=(2,), inputs=((0, 0),),
                       outputs=(("input", 1, 1),)),
        {"x0": np.array(X32, np.float32)},
        {"o0_stacked": Expected([[10, 6, 2], [12, 8, 4]])},
        note="rows doubled, prepended along output axis 1")
    dialect_case(
        "onnx_scan_zero_length", ["onnx/scan9", "output/concat"], "onnx",
        OnnxScanRecipe(length=0, element=(2,), inputs=((0, 0),), states=1,
                       outputs=(("input", 0, 0),)),
        {"s0": np.array([1, 2], np.float32), "x0": np.zeros((0, 2), np.float32)},
        {"s0_final": Expected([1, 2]), "o0_stacked": Expected([], shape=(0, 2))},
        note="a zero-length scan input: zero trips, the state unchanged, an empty output")
    dialect_case(
        "onnx_scan_zero_length_axis1", ["onnx/scan9", "output/concat"], "onnx",
        OnnxScanRecipe(length=0, element=(2,), inputs=((1, 0),), states=1,
                       outputs=(("input", 0, 0),)),
        {"s0": np.array([1, 2], np.float32), "x0": np.zeros((2, 0), np.float32)},
        {"s0_final": Expected([1, 2]), "o0_stacked": Expected([], shape=(0, 2))},
        note="a zero-length scan input on axis 1")
    dialect_case(
        "onnx_scan8_padding", ["onnx/scan8", "output/concat"], "onnx",
        OnnxScan8Recipe(batch=2, length=2, element=(), lens=(2, 1), directions=(0,),
                        states=0, outputs=("input",)),
        {"sequence_lens": np.array([2, 1], np.int64),
         "x0": np.array([[1, 2], [3, 4]], np.float32)},
        {"o0_stacked": Expected([[2, 4], [6, U]])},
        note="the second sequence is 1 long: its second output step is padding")
    dialect_case(
        "onnx_scan8_empty_sequence", ["onnx/scan8", "output/concat", "output/last"], "onnx",
        OnnxScan8Recipe(batch=2, length=2, element=(), lens=(0, 2), directions=(0,),
                        states=1, outputs=("input",)),
        {"sequence_lens": np.array([0, 2], np.int64),
         "s0": np.array([0.5, 0], np.float32),
         "x0": np.array([[1, 2], [0, 0]], np.float32)},
        {"s0_final": Expected([0.5, 0]), "o0_stacked": Expected([[U, U], [0, 0]])},
        ambiguities=("A14",),
        note="a sequence of length 0: its state is the initial one, its outputs padding "
             "(A14 'zero-trips'; onnxruntime refuses such lengths)")
    dialect_case(
        "openvino_zero_trips", ["openvino/loop5", "output/last"], "openvino",
        OvLoopRecipe(trip=0, trip_source="param", merged=(((2,), "half"),),
                     outputs=(("last", "merged:0", 0),)),
        {"trip": np.array(0, np.int64), "m0_init": np.array([4, 8], np.float32)},
        {"out0": Expected([4, 8])}, ambiguities=("A5",),
        note="trip count 0: the back-edged value is its initial value (A5 'execute')")
    dialect_case(
        "openvino_reverse_slices", ["openvino/loop5", "iterator/reverse", "output/concat"],
        "openvino",
        OvLoopRecipe(trip=2, sliced=((0, 1, True),), chunks=2,
                     outputs=(("concat", "sliced:0", 0),)),
        {"x0": np.array([[0, 0], [1, 1]], np.float32)},
        {"out0": Expected([[0.7615942, 0.7615942], [0, 0]])},
        note="chunks of a [2, 2] input, last first, through tanh (tanh 1 = 0.7615942)")


_dialect_cases()

__all__ = ["CASES", "Case", "Expected", "U"]
