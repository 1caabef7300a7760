"""A loop that contains a loop, on the fast path: the enclosing loop runs on its schedule, and
each of its elements that needs the inner loop's output runs the inner loop on a schedule of
its own (rules: structure/nesting, laziness/dead, stream/memo)."""
import numpy as np
import pytest
from hypothesis import given, settings

import lazyloop as ll
from lazyloop.core.engine import EngineMachine
from lazyloop.core.evaluate import check_feeds
from lazyloop.core.plan import compile_network
from lazyloop.core.undefined import split
from lazyloop.strategies import networks
from nets import SUM, const, counter, last
from test_laws import run_fast


def nested_programs():
    return networks().filter(lambda p: any(
        loop.parent for loop in compile_network(p.net).loops.values()))


def scheduled_nests(machine):
    """The loops the schedule ran that contain a loop."""
    return [loop for loop, d in machine.scheduled_loops.items() if d.inner]


@given(nested_programs())
def test_nested_programs_equal_the_reference(program):
    # rule: structure/nesting, laziness/dead -- values, and the forced elements with the
    # outer indices of their run, are the reference evaluator's
    plan = compile_network(program.net)
    reference = ll.run(plan, program.feeds)
    values, record, ran = run_fast(plan, program.feeds)
    for name, value in reference.outputs.items():
        np.testing.assert_array_equal(values[name], value, err_msg=name)
    assert len(record) == len(set(record))
    for loop in ran:
        forced = {r if len(r) == 3 else r + ((),) for r in record
                  if plan.nodes[r[0]].scope == loop}
        assert forced == {(e.stream, e.index, e.activation) for e in reference.trace
                          if e.loop == loop}


def test_generated_nests_are_scheduled_whole():
    # rule: structure/nesting -- the law above meets enclosing loops on the schedule
    found = []

    @settings(max_examples=120, database=None, derandomize=True, deadline=None)
    @given(nested_programs())
    def collect(program):
        plan = compile_network(program.net)
        machine = EngineMachine(plan, check_feeds(plan, program.feeds))
        for _, nid in plan.outputs:
            machine.demand(nid)
        found.extend(scheduled_nests(machine))

    collect()
    assert len(found) >= 5


def carried_through(outer_trips, inner_trips, poison_at=None):
    """y = 0; outer: y = inner(y) where inner adds 1 per trip: y = outer * inner. With
    `poison_at`, the inner loop's per-trip step divides 1 by (i - poison_at) on int32:
    numpy refuses nothing there, so the poison is an out-of-range iterator instead."""
    net = ll.Network()
    xs = net.add_input("xs", ll.float32, (inner_trips,))
    outer = net.add_loop()
    outer.add_trip_limit(const(net, outer_trips, np.int32), ll.TripLimit.COUNT)
    oi, _ = counter(net, outer)
    y = outer.add_recurrence(const(net, 0.0, np.float32))
    inner = net.add_loop()
    count = inner_trips if poison_at is None else inner_trips + 1
    inner.add_trip_limit(const(net, count, np.int32), ll.TripLimit.COUNT)
    z = inner.add_recurrence(y.get_output(0))
    step = inner.add_iterator(xs).get_output(0)
    z.set_input(1, net.add_elementwise(z.get_output(0), step, SUM).get_output(0))
    y.set_input(1, last(inner, z.get_output(0)))
    out = last(outer, y.get_output(0))
    out.name = "y"
    net.mark_output(out)
    return net, outer.name, inner.name


def test_a_carried_value_through_an_inner_loop():
    # rule: structure/nesting, recurrence/def -- 300 x 70 ones: y = 21000; the enclosing loop
    # ran on its schedule (compiled once hot), and no activation of it was made
    net, outer, inner = carried_through(300, 70)
    plan = compile_network(net)
    machine = EngineMachine(plan, check_feeds(plan, {"xs": np.ones(70, np.float32)}))
    (nid,) = [nid for _, nid in plan.outputs]
    assert float(split(machine.demand(nid))[0]) == 21000.0
    assert scheduled_nests(machine) == [outer]
    assert not machine.root.children  # the reference evaluator never ran the outer loop
    assert len(machine.trips[inner]) == 300 and all(n == 70 for _, n in machine.trips[inner])
    assert sorted(path for path, _ in machine.trips[inner]) == [(k,) for k in range(300)]


def test_an_inner_error_is_the_references_and_forced_once():
    # rule: iterator/bounds -- the inner loop runs one trip past its iterated extent, in
    # every outer element: the first run refuses; same error on both paths
    net, _, _ = carried_through(100, 5, poison_at=5)
    feeds = {"xs": np.ones(5, np.float32)}
    with pytest.raises(ll.LazyLoopError) as ref:
        ll.run(net, feeds)
    plan = compile_network(net)
    machine = EngineMachine(plan, check_feeds(plan, feeds))
    machine.record = []
    with pytest.raises(ll.LazyLoopError) as fast:
        for _, nid in plan.outputs:
            machine.demand(nid)
    assert type(fast.value) is type(ref.value) and fast.value.rule == ref.value.rule
    assert len(machine.record) == len(set(machine.record))


def test_an_inner_loop_reading_the_outer_loop_only_in_some_runs_forces_it_on_demand():
    # rule: laziness/dead -- the inner COUNT is the outer counter (0 on the first element),
    # and its body reads an outer stream w: that run reads it, the first does not; so w is
    # made on demand, when a run reads it (w_0 is never forced, as in the reference).
    # sum over i < 4 of i * (i + 10) = 74
    net, outer, w = reads_outer_in_some_runs()
    plan = compile_network(net)
    machine = EngineMachine(plan, check_feeds(plan, {}), record=[])
    (nid,) = [nid for _, nid in plan.outputs]
    assert int(split(machine.demand(nid))[0]) == 74
    assert scheduled_nests(machine) == [outer]
    reference = ll.run(net, {})
    assert int(list(reference.outputs.values())[0]) == 74
    forced = {r[:2] for r in machine.record if plan.nodes[r[0]].scope == outer}
    assert forced == {(e.stream, e.index) for e in reference.trace if e.loop == outer}
    assert sorted(k for s, k in forced if s == w) == [1, 2, 3]


def test_runs_of_an_inner_loop_leave_nothing_behind(monkeypatch):
    # stream/memo -- a run's schedule is kept for the next run of its loop (50 inner runs
    # make one schedule), holding no element once the run ended; one not kept is freed
    # without waiting for Python's cycle collector (its steps would otherwise keep it in a
    # reference cycle); `ll.evaluate` keeps no per-run trip counts: memory stays flat
    import gc
    import weakref
    from lazyloop.core.engine import schedule as sched
    made = []
    real = sched.Schedule.__init__

    def spy(self, *args, **kwargs):
        real(self, *args, **kwargs)
        made.append(weakref.ref(self))
    monkeypatch.setattr(sched.Schedule, "__init__", spy)
    net, outer, inner = carried_through(50, 3)
    gc.disable()
    try:
        (y,) = ll.evaluate(net, {"xs": np.ones(3, np.float32)}).values()
        alive = [r() for r in made if r() is not None]
        monkeypatch.setattr(sched, "KEEP", 0)  # none kept: each is freed when its run ends
        ll.evaluate(carried_through(50, 3)[0], {"xs": np.ones(3, np.float32)})
        freed = [r for r in made[2:] if r() is not None]
    finally:
        gc.enable()
    assert float(y) == 150.0 and len(made) == 2 + 51  # one per loop, then one per run
    assert len(alive) == 2 and all(not m for s in alive for m in s.memo.values())
    assert not freed


def test_three_levels_run_on_schedules_reading_the_outermost_loop():
    # rule: structure/nesting -- outer k = 0..3 carries s; a middle loop of 3 trips carries
    # it as t; an innermost loop of 2 trips adds w = k + 1 (a stream of the outermost loop)
    # to u each trip: s grows by 6 (k + 1) per outer trip, so s = 6 (1 + 2 + 3 + 4) = 60
    net = ll.Network()
    outer = net.add_loop()
    outer.add_trip_limit(const(net, 4, np.int32), ll.TripLimit.COUNT)
    k, k_next = counter(net, outer, dtype=np.float32)
    s = outer.add_recurrence(const(net, 0.0, np.float32))
    middle = net.add_loop()
    middle.add_trip_limit(const(net, 3, np.int32), ll.TripLimit.COUNT)
    t = middle.add_recurrence(s.get_output(0))
    inner = net.add_loop()
    inner.add_trip_limit(const(net, 2, np.int32), ll.TripLimit.COUNT)
    u = inner.add_recurrence(t.get_output(0))
    u.set_input(1, net.add_elementwise(u.get_output(0), k_next, SUM).get_output(0))
    t.set_input(1, last(inner, u.get_output(0)))
    s.set_input(1, last(middle, t.get_output(0)))
    out = last(outer, s.get_output(0))
    net.mark_output(out)
    plan = compile_network(net)
    reference = ll.run(plan, {})
    values, record, ran = run_fast(plan, {})
    assert float(values[out.name]) == float(reference.outputs[out.name]) == 60.0
    assert {outer.name, middle.name, inner.name} <= set(ran)
    machine = EngineMachine(plan, check_feeds(plan, {}))
    machine.demand(plan.outputs[0][1])
    assert set(scheduled_nests(machine)) == {outer.name, middle.name}
    assert not machine.root.children  # no loop ran on the reference evaluator
    for loop in ran:
        forced = {r if len(r) == 3 else r + ((),) for r in record
                  if plan.nodes[r[0]].scope == loop}
        assert forced == {(e.stream, e.index, e.activation) for e in reference.trace
                          if e.loop == loop}


def reads_outer_in_some_runs(rows=None):
    """outer i < 4 carries total; an inner loop of COUNT i adds w = v + 10 (a stream of the
    outer loop: v = i, or with `rows`, v = x[i], x an iterated input of that many rows) each
    trip: w is made on demand, when a run of i >= 1 trips reads it (w_0 never).
    total = sum over i < 4 of i * (v_i + 10). Returns (net, outer loop, w)."""
    net = ll.Network()
    outer = net.add_loop()
    outer.add_trip_limit(const(net, 4, np.int32), ll.TripLimit.COUNT)
    i, _ = counter(net, outer)
    v = i if rows is None else outer.add_iterator(
        net.add_input("x", ll.int32, (rows,))).get_output(0)
    w = net.add_elementwise(v, const(net, 10, np.int32), SUM).get_output(0)
    inner = net.add_loop()
    inner.add_trip_limit(i, ll.TripLimit.COUNT)
    acc = inner.add_recurrence(const(net, 0, np.int32))
    acc.set_input(1, net.add_elementwise(acc.get_output(0), w, SUM).get_output(0))
    total = outer.add_recurrence(const(net, 0, np.int32))
    total.set_input(1, net.add_elementwise(total.get_output(0), last(inner, acc.get_output(0)),
                                           SUM).get_output(0))
    net.mark_output(last(outer, total.get_output(0)))
    return net, outer.name, w.name


def test_streams_made_on_demand_are_compiled_with_the_trips():
    # rule: laziness/dead, stream/memo -- in mode "compiled" the enclosing loop's stream w,
    # made on demand for the inner runs, is made by a compiled step (on_demand.py): the
    # total is the hand-computed one, in every mode; x = [5, 6, 7, 8]:
    # 0 * 15 + 1 * 16 + 2 * 17 + 3 * 18 = 104
    net, _, w = reads_outer_in_some_runs(4)
    plan = compile_network(net)
    feeds = {"x": np.array([5, 6, 7, 8], np.int32)}
    for mode in ("reference", "fast", "schedule", "compiled"):
        assert int(list(ll.evaluate(plan, feeds, mode=mode).values())[0]) == 104
    kept = [s for key, pool in plan.derived.items() if key[0] == "schedules" for s in pool
            if w in s.steps]
    assert kept and all(s.steps[w].__name__.startswith("c") for s in kept)  # compiled
    assert all(s.plain_steps[w] is not s.steps[w] for s in kept)  # the step kept as built


def test_a_compiled_step_made_on_demand_fails_as_its_step():
    # rule: iterator/bounds, stream/memo -- x has 3 rows: the run of the last outer
    # element (3 trips) reads w_3 = x[3] + 10, out of bounds; the compiled step hands it
    # to the step, which names the error: the reference's, in every mode
    net = reads_outer_in_some_runs(3)[0]
    plan = compile_network(net)
    feeds = {"x": np.array([5, 6, 7], np.int32)}
    with pytest.raises(ll.IteratorOutOfBounds) as reference:
        ll.evaluate(plan, feeds, mode="reference")
    for mode in ("compiled", "fast", "compiled"):  # compiled twice: its steps kept
        with pytest.raises(ll.IteratorOutOfBounds) as fast:
            ll.evaluate(plan, feeds, mode=mode)
        assert str(fast.value) == str(reference.value)
