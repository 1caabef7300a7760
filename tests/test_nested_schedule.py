"""Nested loops on the fast path: an inner loop with one output gets a schedule per element
of the enclosing loop; values and forced elements (with their activation) are the reference
evaluator's (rules: laziness/dead, structure/nesting, stream/memo)."""
import numpy as np
import pytest

import lazyloop as ll
from lazyloop.core.engine import EngineMachine
from lazyloop.core.evaluate import check_feeds
from lazyloop.core.plan import compile_network
from lazyloop.core.undefined import split
from nets import LESS, SUM, const, counter, last


def triangle(outputs=1):
    """for i in 0..3: s_i = sum_{j < i+1} j  (inner COUNT = i + 1); outer LAST_VALUE of the
    running total of s_i. With outputs=2 the inner loop also outputs its counter."""
    net = ll.Network()
    outer = net.add_loop()
    outer.add_trip_limit(const(net, 4, np.int32), ll.TripLimit.COUNT)
    i, i_next = counter(net, outer)
    inner = net.add_loop()
    inner.add_trip_limit(i_next, ll.TripLimit.COUNT)
    j, _ = counter(net, inner)
    acc = inner.add_recurrence(const(net, 0, np.int32))
    acc.set_input(1, net.add_elementwise(acc.get_output(0), j, SUM).get_output(0))
    s = last(inner, acc.get_output(0))
    if outputs == 2:
        s = net.add_elementwise(s, last(inner, j), SUM).get_output(0)
    total = outer.add_recurrence(const(net, 0, np.int32))
    total.set_input(1, net.add_elementwise(total.get_output(0), s, SUM).get_output(0))
    net.mark_output(last(outer, total.get_output(0)))
    return net, inner.name


def fast(net):
    plan = compile_network(net)
    machine = EngineMachine(plan, check_feeds(plan, {}))
    machine.record = []
    values = [split(machine.demand(nid))[0] for _, nid in plan.outputs]
    return plan, machine, values


def test_an_inner_loop_runs_on_its_own_schedule_per_outer_trip():
    # rule: laziness/dead, structure/nesting -- by hand: s_i = 0, 1, 3, 6; total = 10
    net, inner = triangle()
    plan, machine, values = fast(net)
    assert int(values[0]) == 10
    assert machine.paths[inner] == "engine"  # the inner loop had a schedule
    reference = ll.run(plan, {})
    forced = {r for r in machine.record if len(r) == 3}
    assert len(forced) == len([r for r in machine.record if len(r) == 3])  # stream/memo
    assert forced == {(e.stream, e.index, e.activation) for e in reference.trace
                      if e.loop == inner}
    assert {outer for _, _, outer in forced} == {(0,), (1,), (2,), (3,)}


def test_an_inner_loop_with_two_outputs_computes_both_in_one_run():
    # rule: laziness/dead, stream/memo -- every outer element needs both outputs, so one run
    # of the inner loop per outer element makes both (the reference memoises what they
    # share); by hand: s_i + (i + 1) = 1, 3, 6, 10; total = 20
    net, inner = triangle(outputs=2)
    plan, machine, values = fast(net)
    assert int(values[0]) == 20 == int(list(ll.run(plan, {}).outputs.values())[0])
    assert machine.paths == {"loop0": "engine", inner: "engine"}
    assert [p for p, _ in machine.trips[inner]] == [(0,), (1,), (2,), (3,)]  # one run each
    reference = ll.run(plan, {})
    forced = [r for r in machine.record if len(r) == 3]
    assert len(forced) == len(set(forced))
    assert set(forced) == {(e.stream, e.index, e.activation) for e in reference.trace
                           if e.loop == inner}


def test_nested_onnx_loops_match_the_reference_evaluator():
    # rule: onnx/loop, structure/nesting -- 4 x 5 trips of y + 1 from 0: 20
    pytest.importorskip("onnx")
    from onnx.reference import ReferenceEvaluator

    import lazyloop.onnx as lo
    from lazyloop.bench.versus_models import nested
    model, feeds = nested(4, 5)
    got = lo.evaluate(model, feeds)["y"]
    assert float(got) == 20.0 == float(ReferenceEvaluator(model).run(None, feeds)[0])


def test_a_long_chain_of_inner_runs_does_not_recurse():
    # rule: stream/order -- each inner run reads the last one's output (through the outer
    # carried value): 3000 outer trips of an inner loop of 2 trips, y + 1 each: 6000, with
    # no Python recursion per outer trip
    pytest.importorskip("onnx")
    import lazyloop.onnx as lo
    from lazyloop.bench.versus_models import nested
    model, feeds = nested(3000, 2)
    assert float(lo.evaluate(model, feeds)["y"]) == 6000.0
