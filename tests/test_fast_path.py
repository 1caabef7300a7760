"""The per-trip schedule forces exactly what the reference evaluator forces, and returns the
same values, while keeping a constant window of elements."""
import numpy as np
import pytest

import lazyloop as ll
from lazyloop.core.engine import EngineMachine
from lazyloop.core.evaluate import check_feeds
from lazyloop.core.plan import compile_network
from nets import LESS, SUM, concat, const, counter, last


def compare(net, feeds):
    """Outputs of both evaluators, and the (stream, index) sets each forced inside loops."""
    plan = compile_network(net)
    reference = ll.run(plan, feeds)
    machine = EngineMachine(plan, check_feeds(plan, feeds))
    machine.record = []
    from lazyloop.core.undefined import split
    fast = {name: split(machine.demand(nid))[0] for name, nid in plan.outputs}
    for name in reference.outputs:
        np.testing.assert_array_equal(np.asarray(fast[name]), reference.outputs[name])
    loop_events = {(e.stream, e.index) for e in reference.trace if e.loop is not None}
    assert machine.record, "the schedule did not run"
    assert set(machine.record) == loop_events  # rule: laziness/dead
    assert len(machine.record) == len(set(machine.record))  # rule: stream/memo
    return machine


def test_while_with_concat_and_last_value():
    net = ll.Network()
    x = net.add_input("x", ll.float32, (6,))
    loop = net.add_loop()
    c, _ = counter(net, loop)
    loop.add_trip_limit(net.add_elementwise(c, const(net, 4, np.int32), LESS).get_output(0),
                        ll.TripLimit.WHILE)
    e = loop.add_iterator(x).get_output(0)
    acc = loop.add_recurrence(const(net, 0.0, np.float32))
    acc.set_input(1, net.add_elementwise(acc.get_output(0), e, SUM).get_output(0))
    net.mark_output(concat(net, loop, e, 6))
    net.mark_output(last(loop, acc.get_output(0)))
    compare(net, {"x": np.arange(6, dtype=np.float32)})


def test_point_demand_without_cycle():
    # rule: output/last -- rec = <0, f(x_0), f(x_1), ...>: only f(x_{n-1}) is needed
    net = ll.Network()
    x = net.add_input("x", ll.float32, (5,))
    loop = net.add_loop()
    loop.add_trip_limit(const(net, 5, np.int32), ll.TripLimit.COUNT)
    e = loop.add_iterator(x).get_output(0)
    rec = loop.add_recurrence(const(net, 0.0, np.float32))
    rec.set_input(1, net.add_elementwise(e, e, SUM).get_output(0))
    net.mark_output(last(loop, rec.get_output(0)))
    machine = compare(net, {"x": np.arange(5, dtype=np.float32)})
    assert len(machine.record) == 3  # rec[5], e+e at 4, e at 4


def test_two_recurrences_swapping():
    # a <- b, b <- a: LAST_VALUE(a) reads every other element of each; the schedule either
    # models that exactly or leaves the loop to the reference evaluator
    net = ll.Network()
    loop = net.add_loop()
    loop.add_trip_limit(const(net, 7, np.int32), ll.TripLimit.COUNT)
    a = loop.add_recurrence(const(net, 1, np.int32))
    b = loop.add_recurrence(const(net, 2, np.int32))
    a.set_input(1, b.get_output(0))
    b.set_input(1, a.get_output(0))
    net.mark_output(last(loop, a.get_output(0)))
    assert list(ll.evaluate(net, {}).values())[0] == 2  # 7 swaps: a ends as b's start
    ref = ll.run(net, {})
    assert sorted(e.index for e in ref.trace if e.stream == a.get_output(0).name) == [1, 3, 5, 7]


def test_memory_window_is_constant():
    # rule: stream/memo -- the schedule keeps a window of elements, not the whole stream
    net = ll.Network()
    loop = net.add_loop()
    loop.add_trip_limit(const(net, 1000, np.int32), ll.TripLimit.COUNT)
    state = loop.add_recurrence(const(net, np.zeros(16, np.float32)))
    state.set_input(1, net.add_elementwise(state.get_output(0), const(net, np.ones(16, np.float32)),
                                           SUM).get_output(0))
    net.mark_output(last(loop, state.get_output(0)))
    plan = compile_network(net)
    from lazyloop.core.engine.schedule import Demand, Schedule
    machine = EngineMachine(plan, {})
    schedule = Schedule(Demand(plan, "loop0"), machine, machine.root, 0)
    n = schedule.run()
    assert n == 1000
    # swept every max(4 windows, 64 trips): a bounded number of elements, whatever n is
    assert max(len(m) for m in schedule.memo.values()) <= 64 + schedule.d.window + 1
    np.testing.assert_array_equal(schedule.outputs(n)[plan.loops["loop0"].outputs[0]], np.full(16, 1000))


def test_endless_loop_reports_fuel_before_element_errors():
    # rule: trip/while, iterator/bounds -- the iterator fails from trip 3 on, but the loop
    # never stops: both evaluators report the fuel, as n is needed before any output element
    net = ll.Network()
    x = net.add_input("x", ll.float32, (3,))
    loop = net.add_loop()
    loop.add_trip_limit(const(net, True, np.bool_), ll.TripLimit.WHILE)
    net.mark_output(concat(net, loop, loop.add_iterator(x).get_output(0), 100))
    for evaluate in (ll.evaluate, ll.run):
        with pytest.raises(ll.FuelExhausted):
            evaluate(net, {"x": np.zeros(3, np.float32)}, max_trips=10)
    net2 = ll.Network()
    x2 = net2.add_input("x", ll.float32, (3,))
    loop2 = net2.add_loop()
    loop2.add_trip_limit(const(net2, 5, np.int32), ll.TripLimit.COUNT)
    net2.mark_output(concat(net2, loop2, loop2.add_iterator(x2).get_output(0), 5))
    for evaluate in (ll.evaluate, ll.run):
        with pytest.raises(ll.IteratorOutOfBounds):
            evaluate(net2, {"x": np.zeros(3, np.float32)})


def test_long_recurrence_cycle_keeps_the_analysis_small():
    # rule: stream/order -- a 2000-layer body on a recurrence cycle: 3 trips of 2000 negations
    # give (-1)^6000 = 1; the demand analysis grows with recurrences, not with layers
    net = ll.Network()
    x = net.add_input("x", ll.float32, (2,))
    loop = net.add_loop()
    loop.add_trip_limit(const(net, 3, np.int32), ll.TripLimit.COUNT)
    rec = loop.add_recurrence(x)
    t = rec.get_output(0)
    for _ in range(2000):
        t = net.add_unary(t, ll.UnaryOperation.NEG).get_output(0)
    rec.set_input(1, t)
    net.mark_output(last(loop, rec.get_output(0)))
    from lazyloop.core.engine.schedule import Demand
    demand = Demand(compile_network(net), "loop0")
    assert demand.window <= 3 * 2 + 4  # points never went deeper than the bound for 1 recurrence
    (out,) = ll.evaluate(net, {"x": np.array([1, -2], np.float32)}).values()
    np.testing.assert_array_equal(out, [1, -2])


def doubling_while(limit):
    """y = 1, 2, 4, ...; a carried test t (t_0 = True, t_{k+1} = 2 * y_k < limit) is the
    WHILE input, as jax and torch export a while loop: its cone reads the body a trip back.
    No COUNT. Outputs LAST_VALUE(y) and CONCATENATE(y)."""
    net = ll.Network()
    loop = net.add_loop()
    y = loop.add_recurrence(const(net, 1, np.int32))
    doubled = net.add_elementwise(y.get_output(0), const(net, 2, np.int32),
                                  ll.ElementWiseOperation.PROD).get_output(0)
    y.set_input(1, doubled)
    t = loop.add_recurrence(const(net, True, np.bool_))
    t.set_input(1, net.add_elementwise(doubled, const(net, limit, np.int32), LESS).get_output(0))
    loop.add_trip_limit(t.get_output(0), ll.TripLimit.WHILE)
    net.mark_output(last(loop, y.get_output(0)))
    net.mark_output(concat(net, loop, y.get_output(0), 16))
    return net, loop


@pytest.mark.parametrize("limit, trips", [(2, 1), (3, 2), (100, 7), (1000, 10)])
def test_a_while_loop_without_count_makes_its_test_with_the_outputs(limit, trips):
    # rule: trip/while, laziness/dead -- with no COUNT only the WHILE input stops the loop:
    # its element n is tested whatever happens, so its cone (t's next value, 2 * y) is made
    # on every trip with what the outputs need (certain), not a trip later on demand; the
    # schedule forces what the reference forces; y_n = 2^n, n the first k with 2^k >= limit
    net, loop = doubling_while(limit)
    machine = compare(net, {})
    demand = next(iter(machine.scheduled_loops.values()))
    assert all(demand.certain[k] is not None for k in demand.members)
    got = list(ll.evaluate(net, {}).values())
    assert int(got[0]) == 2 ** trips
    np.testing.assert_array_equal(got[1][:trips], 2 ** np.arange(trips))  # then padding
