"""Carried values whose shape changes from trip to trip, in the relaxed ("onnx") profile.

rule: structure/shapes -- a stream's type is a constraint there (dtype, rank and dims where
known) and a recurrence may hold elements of different shapes; the fast path (the per-trip
schedule) must give what the reference evaluator gives and force exactly what it forces.
Expected values come from a plain Python loop over numpy arrays written here.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import lazyloop as ll
from lazyloop.core.engine import EngineMachine
from lazyloop.core.evaluate import check_feeds
from lazyloop.core.plan import compile_network
from lazyloop.core.undefined import split

F32 = np.float32
GROWING = ll.TensorType(np.float32, (None,))
SCALAR = ll.TensorType(np.float32, ())


def const(net, value, dtype=None):
    value = np.asarray(value, dtype=dtype)
    return net.add_constant(value.shape, value).get_output(0)


def function(net, fn, inputs, ty):
    return net.add_function(lambda *a: (fn(*a),), inputs, [ty]).get_output(0)


@st.composite
def growing_programs(draw):
    """(network, feeds, expected outputs) of a loop whose carried value grows or shrinks."""
    trips = draw(st.integers(0, 5))
    kind = draw(st.sampled_from(["count", "while", "both"]))
    start = draw(st.lists(st.integers(-3, 3), max_size=3))
    rows = draw(st.lists(st.lists(st.integers(-3, 3), min_size=2, max_size=2),
                         min_size=trips, max_size=trips))
    step = draw(st.sampled_from(["append-row", "double", "drop-first", "append-sum"]))
    outputs = draw(st.sets(st.sampled_from(["last", "sums", "lengths"]), min_size=1))

    net = ll.Network(profile="onnx")
    x0 = net.add_input("x0", ll.float32, (None,))
    xs = net.add_input("xs", ll.float32, (trips, 2))
    loop = net.add_loop()
    if kind in ("count", "both"):
        loop.add_trip_limit(const(net, trips, np.int64), ll.TripLimit.COUNT)
    if kind in ("while", "both"):
        c = loop.add_recurrence(const(net, 0, np.int64))
        c.set_input(1, net.add_elementwise(c.get_output(0), const(net, 1, np.int64),
                                           ll.ElementWiseOperation.SUM).get_output(0))
        bound = const(net, trips + (kind == "both"), np.int64)
        loop.add_trip_limit(net.add_elementwise(c.get_output(0), bound,
                                                ll.ElementWiseOperation.LESS).get_output(0),
                            ll.TripLimit.WHILE)
    row = loop.add_iterator(xs, 0).get_output(0)
    rec = loop.add_recurrence(x0)
    v = rec.get_output(0)
    grow = {"append-row": lambda a, r: np.concatenate([a, r]),
            "double": lambda a, r: np.concatenate([a, a]),
            "drop-first": lambda a, r: a[1:].copy(),
            "append-sum": lambda a, r: np.concatenate([a, np.array([a.sum()], F32)])}[step]
    rec.set_input(1, function(net, grow, [v, row], GROWING))
    out = {}
    if "last" in outputs:
        out["last"] = loop.add_loop_output(v, ll.LoopOutput.LAST_VALUE).get_output(0)
    if "sums" in outputs:
        total = function(net, lambda a: np.array(a.sum(), F32), [v], SCALAR)
        out["sums"] = loop.add_loop_output(total, ll.LoopOutput.CONCATENATE, 0).get_output(0)
    if "lengths" in outputs:
        size = function(net, lambda a: np.array(a.shape[0], np.int64), [v],
                        ll.TensorType(np.int64, ()))
        out["lengths"] = loop.add_loop_output(size, ll.LoopOutput.CONCATENATE, 0).get_output(0)
    for name, t in out.items():
        t.name = name
        net.mark_output(t)

    # expected: the loop run by hand
    value = np.array(start, F32)
    sums, lengths = [], []
    for i in range(trips):
        sums.append(value.sum())
        lengths.append(value.shape[0])
        value = grow(value, np.array(rows[i], F32))
    expected = {"last": value, "sums": np.array(sums, F32), "lengths": np.array(lengths, np.int64)}
    feeds = {"x0": np.array(start, F32), "xs": np.array(rows, F32).reshape(trips, 2)}
    return net, feeds, {k: expected[k] for k in out}


def fast(plan, feeds):
    machine = EngineMachine(plan, check_feeds(plan, feeds))
    machine.record = []
    values = {name: split(machine.demand(nid))[0] for name, nid in plan.outputs}
    ran = list(machine.scheduled_loops)
    return values, machine.record, ran


@settings(deadline=None)
@given(growing_programs())
def test_fast_path_equals_the_reference_on_growing_carried_values(program):
    # rule: structure/shapes -- a recurrence's elements may differ in shape (relaxed profile)
    net, feeds, expected = program
    plan = compile_network(net)
    reference = ll.run(plan, feeds)
    values, record, ran = fast(plan, feeds)
    for name, want in expected.items():
        np.testing.assert_array_equal(reference.outputs[name], want, err_msg=name)
        np.testing.assert_array_equal(values[name], want, err_msg=name)
        assert reference.outputs[name].shape == want.shape
    for loop in ran:  # rule: laziness/dead -- the schedule forces what the reference forces
        forced = [(s, k) for s, k in record if plan.nodes[s].scope == loop]
        assert len(forced) == len(set(forced))
        assert set(forced) == {(e.stream, e.index) for e in reference.trace if e.loop == loop}


def test_the_schedule_runs_on_growing_values():
    # rule: structure/shapes -- not vacuous: the fast path does run such loops
    ran = []

    @settings(max_examples=30, database=None, derandomize=True, deadline=None)
    @given(growing_programs())
    def collect(program):
        net, feeds, _ = program
        ran.extend(fast(compile_network(net), feeds)[2])

    collect()
    assert ran


def test_zero_trips_return_the_initial_value_as_given():
    # rule: output/last -- an initial value of shape [0] comes back as [0]
    net = ll.Network(profile="onnx")
    x0 = net.add_input("x0", ll.float32, (None,))
    loop = net.add_loop()
    loop.add_trip_limit(const(net, 0, np.int64), ll.TripLimit.COUNT)
    rec = loop.add_recurrence(x0)
    rec.set_input(1, function(net, lambda a: np.concatenate([a, a]), [rec.get_output(0)], GROWING))
    out = loop.add_loop_output(rec.get_output(0), ll.LoopOutput.LAST_VALUE).get_output(0)
    net.mark_output(out)
    result = ll.evaluate(net, {"x0": np.zeros(0, F32)})[out.name]
    assert result.shape == (0,) and result.dtype == F32


def test_a_known_dimension_is_still_checked_per_element():
    # rule: structure/shapes -- the stream is declared float32[?, 2]; an element [1, 3] breaks it
    net = ll.Network(profile="onnx")
    x0 = net.add_input("x0", ll.float32, (None, 2))
    loop = net.add_loop()
    loop.add_trip_limit(const(net, 2, np.int64), ll.TripLimit.COUNT)
    rec = loop.add_recurrence(x0)
    rec.set_input(1, function(net, lambda a: np.zeros((1, 3), F32), [rec.get_output(0)],
                              ll.TensorType(np.float32, (None, None))))
    out = loop.add_loop_output(rec.get_output(0), ll.LoopOutput.LAST_VALUE).get_output(0)
    net.mark_output(out)
    with pytest.raises(ll.StreamShapeChanged, match=r"structure/shapes"):
        ll.evaluate(net, {"x0": np.zeros((1, 2), F32)})


def test_an_input_of_unknown_rank_takes_its_rank_from_the_value():
    # rule: iterator/forward -- a stream of unknown rank: axis checked when the value arrives
    net = ll.Network(profile="onnx")
    x = function(net, lambda v: v, [net.add_input("x", ll.float32, (None,))],
                 ll.TensorType(np.float32, None))
    assert x.type.rank is None and repr(x.type) == "float32[*]"
    loop = net.add_loop()
    loop.add_trip_limit(const(net, 2, np.int64), ll.TripLimit.COUNT)
    row = loop.add_iterator(x, 0).get_output(0)
    out = loop.add_loop_output(row, ll.LoopOutput.CONCATENATE, 0).get_output(0)
    net.mark_output(out)
    np.testing.assert_array_equal(ll.evaluate(net, {"x": np.array([4, 5], F32)})[out.name], [4, 5])
    bad = ll.Network(profile="onnx")
    y = function(bad, lambda v: v, [bad.add_input("x", ll.float32, (None,))],
                 ll.TensorType(np.float32, None))
    loop = bad.add_loop()
    loop.add_trip_limit(const(bad, 1, np.int64), ll.TripLimit.COUNT)
    row = loop.add_iterator(y, 1).get_output(0)   # the value has one axis only
    out = loop.add_loop_output(row, ll.LoopOutput.CONCATENATE, 0).get_output(0)
    bad.mark_output(out)
    with pytest.raises(ll.EvaluationError, match=r"iterator/forward"):
        ll.evaluate(bad, {"x": np.array([4, 5], F32)})
