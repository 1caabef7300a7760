"""The core conformance cases: loop programs written with TensorRT's builder calls, each
registered in `CASES` with its rule IDs, inputs and hand-computed outputs."""
from __future__ import annotations

import numpy as np

from .builders import X32, add, const, count_loop, counter, last, mark, stacked
from .registry import Expected, U, case

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
