"""Nested loops are inferred from data flow; conditionals force only the taken branch."""
import numpy as np
import pytest

import lazyloop as ll
from nets import SUM, concat, const, forced, last

X = np.array([[1, 2, 3], [4, 5, 6]], np.float32)


def row_sums():
    """Outer loop over rows; the inner loop sums the row's elements."""
    net = ll.Network()
    x = net.add_input("x", ll.float32, (2, 3))
    outer = net.add_loop()
    outer.add_trip_limit(const(net, 2, np.int32), ll.TripLimit.COUNT)
    row = outer.add_iterator(x).get_output(0)
    inner = net.add_loop()
    inner.add_trip_limit(const(net, 3, np.int32), ll.TripLimit.COUNT)
    v = inner.add_iterator(row).get_output(0)
    acc = inner.add_recurrence(const(net, 0.0, np.float32))
    acc.set_input(1, net.add_elementwise(acc.get_output(0), v, SUM).get_output(0))
    total = last(inner, acc.get_output(0))
    net.mark_output(concat(net, outer, total, 2))
    return net, v.name


def test_inner_loop_runs_once_per_outer_trip():
    # rule: structure/nesting -- the inner loop uses the outer iterator, so it is nested
    net, v = row_sums()
    result = ll.run(net, {"x": X})
    np.testing.assert_array_equal(list(result.outputs.values())[0], [6, 15])
    assert result.plan.loops["loop1"].parent == "loop0"
    assert result.trips["loop1"] == [((0,), 3), ((1,), 3)]
    assert sorted({e.activation for e in result.trace if e.stream == v}) == [(0,), (1,)]
    np.testing.assert_array_equal(list(ll.evaluate(net, {"x": X}).values())[0], [6, 15])


def test_inner_loop_reads_an_outer_recurrence():
    # rule: stream/invariant -- outer streams are invariants of the inner loop
    net = ll.Network()
    outer = net.add_loop()
    outer.add_trip_limit(const(net, 3, np.int32), ll.TripLimit.COUNT)
    k = outer.add_recurrence(const(net, 1, np.int32))
    k.set_input(1, net.add_elementwise(k.get_output(0), const(net, 1, np.int32), SUM).get_output(0))
    inner = net.add_loop()
    inner.add_trip_limit(const(net, 2, np.int32), ll.TripLimit.COUNT)
    acc = inner.add_recurrence(const(net, 0, np.int32))
    acc.set_input(1, net.add_elementwise(acc.get_output(0), k.get_output(0), SUM).get_output(0))
    net.mark_output(concat(net, outer, last(inner, acc.get_output(0)), 3))
    # k = 1, 2, 3; the inner loop adds k twice
    np.testing.assert_array_equal(list(ll.evaluate(net, {}).values())[0], [2, 4, 6])


def conditional_loop():
    """y_i = x_i > 0 ? 2 * x_i : short[i] -- `short` has 1 element, so the false branch fails
    on any trip after the first where it is taken."""
    net = ll.Network()
    x = net.add_input("x", ll.float32, (4,))
    short = net.add_input("short", ll.float32, (1,))
    loop = net.add_loop()
    loop.add_trip_limit(const(net, 4, np.int32), ll.TripLimit.COUNT)
    e = loop.add_iterator(x).get_output(0)
    s = loop.add_iterator(short).get_output(0)
    cond = net.add_if_conditional()
    cond.set_condition(net.add_elementwise(e, const(net, 0.0, np.float32),
                                           ll.ElementWiseOperation.GREATER).get_output(0))
    then = net.add_elementwise(e, e, SUM).get_output(0)
    y = cond.add_output(then, s).get_output(0)
    net.mark_output(concat(net, loop, y, 4))
    return net, then.name, s.name


def test_only_the_taken_branch_is_forced():
    # rule: stream/map, laziness/dead -- per trip, only the taken branch's elements are forced
    net, then, s = conditional_loop()
    feeds = {"x": np.array([-1, 2, 3, 4], np.float32), "short": np.array([9], np.float32)}
    result = ll.run(net, feeds)
    np.testing.assert_array_equal(list(result.outputs.values())[0], [9, 4, 6, 8])
    assert forced(result, then) == [1, 2, 3]
    assert forced(result, s) == [0]
    np.testing.assert_array_equal(list(ll.evaluate(net, feeds).values())[0], [9, 4, 6, 8])


def test_taken_branch_errors_surface():
    # rule: iterator/bounds -- taking the false branch at trip 1 reads short[1]
    net, _, _ = conditional_loop()
    feeds = {"x": np.array([1, -2, 3, 4], np.float32), "short": np.array([9], np.float32)}
    with pytest.raises(ll.IteratorOutOfBounds):
        ll.evaluate(net, feeds)


def test_conditional_with_invariant_branches_is_inside_the_loop():
    # rule: structure/nesting -- the condition counts: y = x_i > 0 ? 1 : 0 is a stream
    net = ll.Network()
    x = net.add_input("x", ll.float32, (4,))
    loop = net.add_loop()
    loop.add_trip_limit(const(net, 4, np.int32), ll.TripLimit.COUNT)
    e = loop.add_iterator(x).get_output(0)
    cond = net.add_if_conditional()
    cond.set_condition(net.add_elementwise(e, const(net, 0.0, np.float32),
                                           ll.ElementWiseOperation.GREATER).get_output(0))
    y = cond.add_output(const(net, 1.0, np.float32), const(net, 0.0, np.float32)).get_output(0)
    net.mark_output(concat(net, loop, y, 4))
    feeds = {"x": np.array([1, -1, 2, -2], np.float32)}
    np.testing.assert_array_equal(list(ll.evaluate(net, feeds).values())[0], [1, 0, 1, 0])


def test_undefined_condition_takes_neither_branch():
    # rule: laziness/dead -- a condition read from padding is undefined: no branch is forced
    net = ll.Network()
    x = net.add_input("x", ll.float32, (2,))
    first = net.add_loop()
    first.add_trip_limit(const(net, 2, np.int32), ll.TripLimit.COUNT)
    padded = concat(net, first, first.add_iterator(x).get_output(0), 3)  # [x0, x1, ?]
    second = net.add_loop()
    second.add_trip_limit(const(net, 3, np.int32), ll.TripLimit.COUNT)
    v = second.add_iterator(padded).get_output(0)
    cond = net.add_if_conditional()
    cond.set_condition(net.add_elementwise(v, const(net, 0.0, np.float32),
                                           ll.ElementWiseOperation.GREATER).get_output(0))
    then = net.add_elementwise(v, v, SUM).get_output(0)
    orelse = net.add_elementwise(v, const(net, 1.0, np.float32), SUM).get_output(0)
    y = cond.add_output(then, orelse).get_output(0)
    out = concat(net, second, y, 3)
    out.name = "y"
    net.mark_output(out)
    result = ll.run(net, {"x": np.array([1, -1], np.float32)})
    np.testing.assert_array_equal(result.outputs["y"][:2], [2, 0])
    np.testing.assert_array_equal(result.defined["y"], [True, True, False])
    assert np.isnan(result.outputs["y"][2])
    assert forced(result, then.name) == [0] and forced(result, orelse.name) == [1]
