"""`laziness/fixed-point`: a loop whose carried values stop changing ends early on the fast
path -- with a COUNT its LAST_VALUE outputs are answered without the remaining trips, with no
COUNT and a true WHILE input it is reported at once as never ending. Checked against the
reference evaluator (which runs every trip) and against plain numpy loops."""
import numpy as np
import pytest
from hypothesis import event, given, strategies as st

import lazyloop as ll
from lazyloop.core.errors import NeverEnds
from lazyloop.core.engine import EngineMachine
from lazyloop.core.evaluate import check_feeds
from lazyloop.core.plan import compile_network
from lazyloop.core.undefined import split
from nets import LESS, SUM, concat, const, counter, last

MIN, MAX, FLOOR_DIV = (ll.ElementWiseOperation.MIN, ll.ElementWiseOperation.MAX,
                       ll.ElementWiseOperation.FLOOR_DIV)

# x' = step(x) for each body kind, in numpy: what the loop computes trip by trip
BODIES = {
    "min-add": lambda x, a, b: np.minimum(x + a, b),   # climbs by a, stops at b
    "max-sub": lambda x, a, b: np.maximum(x - a, -b),  # falls by a, stops at -b
    "halve": lambda x, a, b: x // 2,                   # 0 for x >= 0, -1 for x < 0
}


def body(net, kind, x, a, b):
    if kind == "min-add":
        return net.add_elementwise(net.add_elementwise(x, a, SUM).get_output(0), b,
                                   MIN).get_output(0)
    if kind == "max-sub":
        minus_a = net.add_elementwise(x, a, ll.ElementWiseOperation.SUB).get_output(0)
        neg_b = net.add_unary(b, ll.UnaryOperation.NEG).get_output(0)
        return net.add_elementwise(minus_a, neg_b, MAX).get_output(0)
    two = const(net, np.full(np.shape(a), 2, np.int32))
    return net.add_elementwise(x, two, FLOOR_DIV).get_output(0)


def build(kind, x0, a, b, count, bound, stacked):
    """x = x0; per trip x = step(x); limits: COUNT(count) and/or WHILE(x[0] < bound)."""
    net = ll.Network()
    loop = net.add_loop()
    rec = loop.add_recurrence(const(net, x0))
    x = rec.get_output(0)
    rec.set_input(1, body(net, kind, x, const(net, a), const(net, b)))
    if count is not None:
        loop.add_trip_limit(const(net, count, np.int32), ll.TripLimit.COUNT)
    if bound is not None:
        first = net.add_slice(x, (0,), (1,), (1,)).get_output(0)
        flat = net.add_shuffle(first)
        flat.reshape_dims = ()
        cond = net.add_elementwise(flat.get_output(0), const(net, np.int32(bound)), LESS)
        loop.add_trip_limit(cond.get_output(0), ll.TripLimit.WHILE)
    net.mark_output(last(loop, x))
    if stacked:
        net.mark_output(concat(net, loop, x, count))
    return net


def by_hand(kind, x0, a, b, count, bound, fuel):
    """The loop as a plain numpy while loop: (final x, the trips), or None past `fuel`."""
    x, n = np.asarray(x0), 0
    while (count is None or n < count) and (bound is None or x[0] < bound):
        if n >= fuel:
            return None
        x, n = BODIES[kind](x, np.asarray(a), np.asarray(b)), n + 1
    return x, n


vectors = st.lists(st.integers(-20, 20), min_size=1, max_size=3)


@given(kind=st.sampled_from(sorted(BODIES)), x0=vectors, a=st.integers(0, 3),
       b=st.integers(0, 15), count=st.one_of(st.none(), st.integers(0, 300)),
       bound=st.one_of(st.none(), st.integers(-25, 25)), stacked=st.booleans())
def test_fixed_points_agree_with_the_plain_evaluator(kind, x0, a, b, count, bound, stacked):
    # rule: laziness/fixed-point -- outputs equal the reference evaluator's (which runs
    # every trip) and a numpy loop's; a loop that never ends is reported as such at once
    if count is None and bound is None:
        bound = 100  # at least one limit (structure/limits)
    if stacked and count is None:
        stacked = False
    x0 = np.array(x0, np.int32)
    a, b = np.full(x0.shape, a, np.int32), np.full(x0.shape, b, np.int32)
    net = build(kind, x0, a, b, count, bound, stacked)
    fuel = 400
    expected = by_hand(kind, x0, a, b, count, bound, fuel)
    event("never ends" if expected is None else "ends")
    if expected is None:
        # the numpy loop is still running after 400 trips: with these bodies only because
        # x is a fixed point with x[0] < bound, so the fast path says so at once ...
        with pytest.raises(NeverEnds) as info:
            ll.evaluate(net, {})  # the default fuel, 10^7 trips, is never reached
        assert info.value.rule == "laziness/fixed-point"
        assert "fixed point" in str(info.value)
        # ... and the reference evaluator runs into its fuel
        with pytest.raises(ll.FuelExhausted) as ref:
            ll.run(net, {}, max_trips=fuel)
        assert not isinstance(ref.value, NeverEnds)
        return
    x, n = expected
    fast = ll.evaluate(net, {})
    reference = ll.run(net, {})
    names = list(reference.outputs)
    np.testing.assert_array_equal(fast[names[0]], x)
    np.testing.assert_array_equal(reference.outputs[names[0]], x)
    for name in names[1:]:
        np.testing.assert_array_equal(fast[name], reference.outputs[name])
    assert [t for _, t in reference.trips[next(iter(reference.trips))]] == [n]


def record(net):
    plan = compile_network(net)
    machine = EngineMachine(plan, check_feeds(plan, {}))
    machine.record = []
    values = {name: split(machine.demand(nid))[0] for name, nid in plan.outputs}
    return values, machine


def test_a_count_of_two_to_the_63_is_answered_at_once():
    # rule: laziness/fixed-point -- x = min(x + 1, 10) from 0 is 10 from trip 10 on; with
    # COUNT = 2^63 - 1 the LAST_VALUE is 10, and only a handful of trips run
    count = 2 ** 63 - 1
    net = ll.Network()
    loop = net.add_loop()
    loop.add_trip_limit(const(net, count, np.int64), ll.TripLimit.COUNT)
    rec = loop.add_recurrence(const(net, 0, np.int32))
    rec.set_input(1, body(net, "min-add", rec.get_output(0), const(net, 1, np.int32),
                          const(net, 10, np.int32)))
    net.mark_output(last(loop, rec.get_output(0)))
    values, machine = record(net)
    assert int(list(values.values())[0]) == 10
    assert machine.trips[loop.name] == [((), count)]  # n is the count
    assert len(machine.record) < 200  # the trips past the fixed point were not run


def test_the_skipped_trips_force_nothing_the_reference_does_not():
    # rule: laziness/fixed-point, laziness/dead -- with COUNT = 1000 and a fixed point at
    # trip 3, the schedule forces a prefix of what the reference forces, and far less
    net = ll.Network()
    loop = net.add_loop()
    loop.add_trip_limit(const(net, 1000, np.int32), ll.TripLimit.COUNT)
    rec = loop.add_recurrence(const(net, np.array([0, 1], np.int32)))
    rec.set_input(1, body(net, "min-add", rec.get_output(0), const(net, np.array([1, 1], np.int32)),
                          const(net, np.array([3, 3], np.int32))))
    net.mark_output(last(loop, rec.get_output(0)))
    values, machine = record(net)
    reference = ll.run(net, {})
    np.testing.assert_array_equal(list(values.values())[0], [3, 3])  # by hand: 0,1,2,3,3,...
    forced = set(machine.record)
    assert forced < {(e.stream, e.index) for e in reference.trace if e.loop is not None}
    assert len(forced) < 200 < len(reference.trace)


def test_a_loop_reading_an_iterator_is_not_cut_short():
    # rule: laziness/fixed-point -- an iterator's elements differ from trip to trip, so a
    # loop that reads one is not a fixed point even when its carried value stops changing:
    # WHILE(true) over 3 rows runs into the fuel, as the reference does
    net = ll.Network()
    x = net.add_input("x", ll.float32, (3,))
    loop = net.add_loop()
    loop.add_trip_limit(const(net, True, np.bool_), ll.TripLimit.WHILE)
    net.mark_output(concat(net, loop, loop.add_iterator(x).get_output(0), 100))
    with pytest.raises(ll.FuelExhausted) as info:
        ll.evaluate(net, {"x": np.zeros(3, np.float32)}, max_trips=10)
    assert not isinstance(info.value, NeverEnds)


def test_a_loop_reading_its_trip_counter_never_settles():
    # rule: laziness/fixed-point -- a counter is carried and changes every trip: the endless
    # WHILE loop below is ended by the fuel, not by the fixed-point rule
    net = ll.Network()
    loop = net.add_loop()
    c, _ = counter(net, loop)
    loop.add_trip_limit(const(net, True, np.bool_), ll.TripLimit.WHILE)
    net.mark_output(last(loop, c))
    with pytest.raises(ll.FuelExhausted) as info:
        ll.evaluate(net, {}, max_trips=300)
    assert not isinstance(info.value, NeverEnds) and "max_trips=300" in str(info.value)


def test_an_endless_onnx_loop_at_a_fixed_point_is_reported_at_once():
    # rule: laziness/fixed-point -- ONNX Loop with no M and cond = (y < 100), y = min(y+1, 10):
    # y stays 10 < 100 for ever
    pytest.importorskip("onnx")
    from onnx import helper

    import lazyloop.onnx as lo
    from lazyloop.bench.versus_models import BOOL, FLOAT, _info, _model, _scalar

    body_graph = helper.make_graph(
        [helper.make_node("Add", ["y_in", "one"], ["t"]),
         helper.make_node("Min", ["t", "ten"], ["y_out"]),
         helper.make_node("Less", ["y_out", "hundred"], ["cond_out"])], "body",
        [_info("i", 7, []), _info("cond_in", BOOL, []), _info("y_in", FLOAT, [])],
        [_info("cond_out", BOOL, []), _info("y_out", FLOAT, [])])
    model = _model([helper.make_node("Loop", ["", "cond", "y0"], ["y"], body=body_graph)],
                   [_info("y0", FLOAT, [])], [_info("y", FLOAT, [])],
                   [_scalar("cond", BOOL, True), _scalar("one", FLOAT, 1.0),
                    _scalar("ten", FLOAT, 10.0), _scalar("hundred", FLOAT, 100.0)])
    with pytest.raises(NeverEnds) as info:
        lo.evaluate(model, {"y0": np.array(0.0, np.float32)})
    assert info.value.rule == "laziness/fixed-point"
