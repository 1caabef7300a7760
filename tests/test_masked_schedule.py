"""Undefined values on the fast path (lazyloop/core/masked_steps.py, batch.py): a loop that meets
an undefined value runs on its schedule with masks, and still returns the reference
evaluator's values and `defined` masks, forces exactly its elements and raises its errors
(rules: stream/map, iterator/forward, recurrence/def, trip/while, trip/count, output/concat,
output/last, laziness/dead). Expected values and masks are computed with plain numpy."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import lazyloop as ll
from lazyloop.core.engine import EngineMachine
from lazyloop.core.evaluate import check_feeds
from lazyloop.core.plan import compile_network
from lazyloop.core.engine.batch import FEWEST_WHOLE
from nets import LESS, SUM, concat, const, counter, last, on_engine, sums_of_rows

PROD = ll.ElementWiseOperation.PROD


def masked_batches(machine):
    """Per run of a schedule that batched: whether some batch carried a mask."""
    return [bool(run.masked_batches) for run in machine.log if run.batched]


def fast_and_reference(net, feeds, readings=None, mode="fast"):
    """Check the law for one program and return (values, defined masks, the machine of the
    engine): `ll.evaluate` and `ll.run(trace=False)` in `mode` equal `ll.run(trace=True)`
    (the reference evaluator) in values, masks and forced elements."""
    plan = compile_network(net, readings)
    reference = ll.run(plan, feeds, readings=readings)
    untraced = ll.run(plan, feeds, readings=readings, trace=False, mode=mode)
    values = ll.evaluate(plan, feeds, readings=readings, mode=mode)
    for name, want in reference.outputs.items():
        for got in (values[name], untraced.outputs[name]):
            assert got.dtype == want.dtype and got.shape == want.shape
            assert np.array_equal(got, want, equal_nan=True), name
        np.testing.assert_array_equal(untraced.defined[name], reference.defined[name])
    _, machine = on_engine(plan, feeds, readings, mode)
    assert len(machine.record) == len(set(machine.record))  # stream/memo
    for loop, demand in machine.scheduled_loops.items():
        forced = {r if len(r) == 3 else r + ((),) for r in machine.record
                  if r[0] in demand.members}
        assert forced == {(e.stream, e.index, e.activation) for e in reference.trace
                          if e.loop == loop}  # laziness/dead
    return reference.outputs, reference.defined, machine


def padded_rows(values, trips, length):
    """CONCATENATE of the first `trips` rows of `values`, padded to `length` (fill NaN)."""
    out = np.full((length,) + values.shape[1:], np.nan, np.float32)
    out[:trips] = values[:trips]
    mask = np.zeros(out.shape, bool)
    mask[:trips] = True
    return out, mask


# -- CONCATENATE padding read by a second loop, as iterated tensor and as invariant ---------

X = np.arange(9, dtype=np.float32).reshape(3, 3)
V = np.array([5, 6, 7], np.float32)


def padding_reader(trips2, carry):
    """Loop 0 stacks 2 rows of x padded to 4 (p) and 2 items of v padded to 3 (q); loop 1
    runs trips2 trips over the rows of p: y = row + 1, z = y + q, and (carry) acc += row."""
    net = ll.Network()
    x = net.add_input("x", ll.float32, (3, 3))
    v = net.add_input("v", ll.float32, (3,))
    first = net.add_loop()
    first.add_trip_limit(const(net, 2, np.int32), ll.TripLimit.COUNT)
    p = concat(net, first, first.add_iterator(x).get_output(0), 4)
    q = concat(net, first, first.add_iterator(v).get_output(0), 3)
    second = net.add_loop()
    second.add_trip_limit(const(net, trips2, np.int32), ll.TripLimit.COUNT)
    row = second.add_iterator(p).get_output(0)
    y = net.add_elementwise(row, const(net, np.ones(3, np.float32)), SUM).get_output(0)
    z = net.add_elementwise(y, q, SUM).get_output(0)
    ys, zs = concat(net, second, y, 5), concat(net, second, z, 4)
    ys.name, zs.name = "ys", "zs"
    net.mark_output(ys)
    net.mark_output(zs)
    if carry:
        acc = second.add_recurrence(const(net, np.zeros(3, np.float32)))
        acc.set_input(1, net.add_elementwise(acc.get_output(0), row, SUM).get_output(0))
        total = last(second, acc.get_output(0))
        total.name = "acc"
        net.mark_output(total)
    return net


@pytest.mark.parametrize("carry", [False, True])
@pytest.mark.parametrize("trips2", [0, 1, 2, 3, 4])
def test_padding_read_by_a_later_loop(trips2, carry):
    # rule: iterator/forward, stream/map, output/concat -- the rows of p past 2 are padding:
    # y = row + 1 is undefined there; z = y + q also where q (item 2) is padding
    net = padding_reader(trips2, carry)
    values, defined, machine = fast_and_reference(net, {"x": X, "v": V})
    p, pm = padded_rows(X, 2, 4)
    q, qm = padded_rows(V, 2, 3)
    ys, ysm = padded_rows(p + 1, trips2, 5)
    ysm[:trips2] &= pm[:trips2]
    zs, zsm = padded_rows(p + 1 + q, trips2, 4)
    zsm[:trips2] &= pm[:trips2] & qm
    assert np.array_equal(values["ys"], ys, equal_nan=True)
    np.testing.assert_array_equal(defined["ys"], ysm)
    assert np.array_equal(values["zs"], zs, equal_nan=True)
    np.testing.assert_array_equal(defined["zs"], zsm)
    if carry:  # acc = the sum of the rows read: undefined once a padded row is added
        acc = p[:trips2].sum(axis=0) if trips2 else np.zeros(3, np.float32)
        assert np.array_equal(values["acc"], acc, equal_nan=True)
        np.testing.assert_array_equal(defined["acc"], np.full(3, trips2 <= 2))
    # the second loop ran on its schedule (masked once it read p), not on the reference
    assert machine.static_demand("loop1") is not None
    assert ("loop1" in machine.masked_loops) == (trips2 > 0)
    if trips2:
        assert any(machine.plan.nodes[r[0]].scope == "loop1" for r in machine.record)
        # runs shorter than batch.FEWEST_WHOLE go trip by trip (masked batches: below)
        assert not any(run.batched for run in machine.log)


def plain_beside_padding(rows):
    """Loop 0 stacks 2 rows of x padded to `rows` (p) and 2 items of v padded to 3 (q); loop
    1 runs `rows` trips over the rows of p and of w (wholly defined): a = w_t * 2,
    b = p_t + a, c = a + q, all stacked."""
    net = ll.Network()
    x = net.add_input("x", ll.float32, (3, 3))
    v = net.add_input("v", ll.float32, (3,))
    w = net.add_input("w", ll.float32, (rows, 3))
    first = net.add_loop()
    first.add_trip_limit(const(net, 2, np.int32), ll.TripLimit.COUNT)
    p = concat(net, first, first.add_iterator(x).get_output(0), rows)
    q = concat(net, first, first.add_iterator(v).get_output(0), 3)
    second = net.add_loop()
    second.add_trip_limit(const(net, rows, np.int32), ll.TripLimit.COUNT)
    row = second.add_iterator(p).get_output(0)
    a = net.add_elementwise(second.add_iterator(w).get_output(0), const(net, np.full(3, 2, np.float32)),
                            PROD).get_output(0)
    b = net.add_elementwise(row, a, SUM).get_output(0)
    c = net.add_elementwise(a, q, SUM).get_output(0)
    for name, t in (("a", a), ("b", b), ("c", c)):
        out = concat(net, second, t, rows)
        out.name = name
        net.mark_output(out)
    return net


def test_plain_and_masked_batches_side_by_side():
    # rule: stream/map, iterator/forward, output/concat -- in one run a stream of wholly
    # defined elements batches as a plain array (a = w * 2, defined everywhere) and those
    # that read padding batch with their masks (b = p + a: rows 2.. undefined; c = a + q:
    # item 2 undefined in every row), all by hand
    rows = 20
    w = np.arange(rows * 3, dtype=np.float32).reshape(rows, 3)
    values, defined, machine = fast_and_reference(plain_beside_padding(rows),
                                                  {"x": X, "v": V, "w": w})
    p, pm = padded_rows(X, 2, rows)
    q, qm = padded_rows(V, 2, 3)
    np.testing.assert_array_equal(values["a"], w * 2)
    assert defined["a"].all()
    assert np.array_equal(values["b"], p + w * 2, equal_nan=True)
    np.testing.assert_array_equal(defined["b"], pm)
    assert np.array_equal(values["c"], w * 2 + q, equal_nan=True)
    np.testing.assert_array_equal(defined["c"], np.broadcast_to(qm, (rows, 3)))
    runs = [run for run in machine.log if run.loop == "loop1" and run.batched]
    assert runs and all(run.masked_batches for run in runs)
    assert all(run.batched - run.masked_batches for run in runs)  # a plain batch beside them


def test_an_inner_loop_meets_padding_of_its_outer_element():
    # rule: recurrence/def, stream/map, output/last -- the outer loop runs 4 trips over p
    # (2 rows of x padded to 4); per row r the inner loop (its own schedule) sums r 3 times:
    # 3 * r, undefined for the padded rows; the outer loop stacks those sums
    net = ll.Network()
    x = net.add_input("x", ll.float32, (3, 3))
    first = net.add_loop()
    first.add_trip_limit(const(net, 2, np.int32), ll.TripLimit.COUNT)
    p = concat(net, first, first.add_iterator(x).get_output(0), 4)
    inner, sums = sums_of_rows(net, p, 4)
    sums.name = "sums"
    net.mark_output(sums)
    values, defined, machine = fast_and_reference(net, {"x": X})
    want, mask = padded_rows(3 * X, 2, 4)
    assert np.array_equal(values["sums"], want, equal_nan=True)
    np.testing.assert_array_equal(defined["sums"], mask)
    assert machine.static_demand(inner.name) is not None and inner.name in machine.masked_loops
    assert {r[2] for r in machine.record if len(r) == 3} == {(0,), (1,), (2,), (3,)}


# -- an A3 "undefined" last value after zero trips, read by a later loop --------------------

def zero_trip_last_value(trips1, relaxed_profile="openvino"):
    """Loop 0 (relaxed profile) runs trips1 trips: u = LAST_VALUE(2 * row) of a stream that is
    not a recurrence (A3: undefined after zero trips). Loop 1 runs 2 trips over the rows of
    x: w = row + u (position-wise), s = sum(row * u) (a reduce: not position-wise)."""
    net = ll.Network(relaxed_profile)
    x = net.add_input("x", ll.float32, (3, 3))
    first = net.add_loop()
    first.add_trip_limit(const(net, trips1, np.int32), ll.TripLimit.COUNT)
    doubled = net.add_elementwise(first.add_iterator(x).get_output(0),
                                  const(net, np.full(3, 2, np.float32)), PROD).get_output(0)
    u = last(first, doubled)
    u.name = "u"
    net.mark_output(u)
    second = net.add_loop()
    second.add_trip_limit(const(net, 2, np.int32), ll.TripLimit.COUNT)
    row = second.add_iterator(x).get_output(0)
    w = net.add_elementwise(row, u, SUM).get_output(0)
    s = net.add_reduce(net.add_elementwise(row, u, PROD).get_output(0),
                       ll.ReduceOperation.SUM, 0b1, False).get_output(0)
    ws, ss = concat(net, second, w, 3), concat(net, second, s, 2)
    ws.name, ss.name = "ws", "ss"
    net.mark_output(ws)
    net.mark_output(ss)
    return net


@pytest.mark.parametrize("trips1", [0, 2])
def test_a_zero_trip_last_value_read_by_a_later_loop(trips1):
    # rule: output/last, recurrence/def, stream/map -- LAST_VALUE of a non-recurrence is a
    # recurrence with an undefined start (now on the schedule too); after zero trips it is
    # wholly undefined, and so is everything computed from it
    net = zero_trip_last_value(trips1)
    values, defined, machine = fast_and_reference(net, {"x": X})
    u = 2 * X[trips1 - 1] if trips1 else np.full(3, np.nan, np.float32)
    assert np.array_equal(values["u"], u, equal_nan=True)
    np.testing.assert_array_equal(defined["u"], np.full(3, trips1 > 0))
    ws, wsm = padded_rows(X + u, 2, 3)
    assert np.array_equal(values["ws"], ws, equal_nan=True)
    np.testing.assert_array_equal(defined["ws"], wsm if trips1 else np.zeros((3, 3), bool))
    ss = (X[:2] * u).sum(axis=1)  # each row's sum, in float32 as the kernel does
    assert np.array_equal(values["ss"], ss, equal_nan=True)
    np.testing.assert_array_equal(defined["ss"], np.full(2, trips1 > 0))
    # both loops ran on the schedule: the first carries the undefined start
    assert {"loop0", "loop1"} <= set(machine.scheduled_loops)
    assert ("loop1" in machine.masked_loops) == (trips1 == 0)
    assert ("loop0" in machine.masked_loops) == (trips1 == 0)


def test_a_zero_trip_last_value_under_a3_error_is_refused_on_both_paths():
    # rule: output/last -- reading A3=error: the read of the undefined start is an error
    net = zero_trip_last_value(0)
    readings = {"A3": "error"}
    with pytest.raises(ll.EvaluationError) as ref:
        ll.run(net, {"x": X}, readings=readings)
    with pytest.raises(ll.EvaluationError) as fast:
        ll.evaluate(net, {"x": X}, readings=readings)
    assert ref.value.rule == fast.value.rule == "openvino/loop5"
    # after two trips the undefined start is never read: no error, u = 2 * x[1]
    values, _, machine = fast_and_reference(zero_trip_last_value(2), {"x": X}, readings)
    np.testing.assert_array_equal(values["u"], 2 * X[1])
    assert machine.static_demand("loop0") is not None


ECHO = """
<ir_version: 8, opset_import: ["" : 17]>
g (int64 M, float a0) => (float a, float[N] sums) {
  one = Constant <value = float {1}> ()
  a, sums = Loop <body = b (int64 i, bool c_in, float a_in) => (bool c_out, float a_out, float s) {
      c_out = Identity (c_in)
      a_out = Add (a_in, one)
      f = Cast <to = 1> (c_in)
      s = Add (f, a_in)
  }> (M, "", a0)
}"""


@pytest.mark.parametrize("a9", ["true", "undefined"])
def test_an_onnx_condition_input_that_starts_undefined(a9):
    # rule: onnx/loop, stream/map -- cond omitted, reading A9=undefined: the body's condition
    # input is undefined on every trip, so s = float(c_in) + a_in is (per trip; a frontend
    # kernel masks wholly), while the carried a stays defined: a = 0.5 + 3 after 3 trips
    pytest.importorskip("onnx")
    from onnx import parser

    import lazyloop.onnx as lo
    low = lo.lower(parser.parse_model(ECHO), {"A9": a9})
    feeds = low.core_feeds({"M": np.array(3, np.int64), "a0": np.array(0.5, np.float32)})
    values, defined, machine = fast_and_reference(low.network, feeds)
    a, sums = low.user_outputs(values), low.user_outputs(defined)
    assert a["a"] == np.float32(3.5) and sums["a"]
    if a9 == "true":  # c_in = 1.0 on every trip: 1 + 0.5, 1 + 1.5, 1 + 2.5
        np.testing.assert_array_equal(a["sums"], np.array([1.5, 2.5, 3.5], np.float32))
    np.testing.assert_array_equal(sums["sums"], np.full(3, a9 == "true"))
    assert ("Loop(a)" in machine.masked_loops) == (a9 == "undefined")
    assert machine.static_demand("Loop(a)") is not None


# -- a loop is not decided on an undefined value ---------------------------------------------

def undefined_limit(kind):
    """Loop 0 (zero trips) leaves u = LAST_VALUE(item) undefined; loop 1 is limited by it:
    COUNT(u), or WHILE(i < u) with a counter i."""
    net = ll.Network("openvino")
    n = net.add_input("n", ll.int32, (3,))
    first = net.add_loop()
    first.add_trip_limit(const(net, 0, np.int32), ll.TripLimit.COUNT)
    u = last(first, first.add_iterator(n).get_output(0))
    second = net.add_loop()
    i, _ = counter(net, second)
    if kind == "count":
        second.add_trip_limit(u, ll.TripLimit.COUNT)
    else:
        second.add_trip_limit(net.add_elementwise(i, u, LESS).get_output(0), ll.TripLimit.WHILE)
    net.mark_output(last(second, i))
    return net


@pytest.mark.parametrize("kind, rule", [("count", "trip/count"), ("while", "trip/while")])
def test_an_undefined_limit_is_refused_on_both_paths(kind, rule):
    # rule: trip/while, trip/count -- the schedule decides as the reference does: an error
    net = undefined_limit(kind)
    feeds = {"n": np.array([3, 4, 5], np.int32)}
    with pytest.raises(ll.EvaluationError) as ref:
        ll.run(net, feeds)
    with pytest.raises(ll.EvaluationError) as fast:
        ll.evaluate(net, feeds)
    assert ref.value.rule == fast.value.rule == rule


# -- generated programs with undefined values -------------------------------------------------

BINARY = [SUM, ll.ElementWiseOperation.SUB, PROD, ll.ElementWiseOperation.MAX]


@st.composite
def padded_programs(draw):
    """A loop stacks t0 rows of x padded to L >= t0 (p); a second (t1 trips, a short run at
    most one past L: iterator/bounds, or a run of `FEWEST_WHOLE` or more, long enough to
    batch; a COUNT or a WHILE limit) iterates over p, mixes its rows with invariants (p's
    row 0; v's first items padded to the width by a third loop) through a chain of
    elementwise and unary layers and reduces, and stacks some streams (padded again) or
    sums one in a recurrence read as LAST_VALUE."""
    width = draw(st.integers(1, 3))
    short = draw(st.booleans())  # or a second loop long enough to batch (FEWEST_WHOLE)
    extent = draw(st.integers(1, 4)) if short else FEWEST_WHOLE + 1
    t0 = draw(st.integers(0 if short else FEWEST_WHOLE - 1, extent))
    length = t0 + draw(st.integers(1, 2))  # some padding, read when t1 > t0
    # simplest: all of p, padding included
    t1 = length - draw(st.integers(-1, length) if short else
                       st.integers(0, length - FEWEST_WHOLE))
    net = ll.Network()
    x = net.add_input("x", ll.float32, (extent, width))
    feeds = {"x": draw(hnp.arrays(np.float32, (extent, width),
                                  elements=st.floats(-3, 3, width=32)))}
    first = net.add_loop()
    first.add_trip_limit(const(net, t0, np.int32), ll.TripLimit.COUNT)
    p = concat(net, first, first.add_iterator(x).get_output(0), length)
    if draw(st.booleans()):
        net.mark_output(p)  # then loop 0 runs on the schedule too
    second = net.add_loop()
    if draw(st.booleans()):
        second.add_trip_limit(const(net, t1, np.int32), ll.TripLimit.COUNT)
    else:  # the same trips under a WHILE limit: not batched, trip by trip
        i, _ = counter(net, second)
        second.add_trip_limit(net.add_elementwise(i, const(net, t1, np.int32), LESS)
                              .get_output(0), ll.TripLimit.WHILE)
    streams = [second.add_iterator(p, reverse=draw(st.booleans())).get_output(0)]
    invariants = []
    if length and draw(st.booleans()):  # row 0 of p (a gather: wholly undefined if t0 = 0)
        invariants.append(net.add_gather(p, const(net, 0, np.int32), 0).get_output(0))
    if draw(st.booleans()):  # the first tq items of v padded to the width: in part undefined
        v = net.add_input("v", ll.float32, (width,))
        feeds["v"] = draw(hnp.arrays(np.float32, (width,), elements=st.floats(-3, 3, width=32)))
        third = net.add_loop()
        third.add_trip_limit(const(net, draw(st.integers(0, width)), np.int32),
                             ll.TripLimit.COUNT)
        invariants.append(concat(net, third, third.add_iterator(v).get_output(0), width))
    for _ in range(draw(st.integers(1, 4))):
        a = draw(st.sampled_from(streams))
        choice = draw(st.sampled_from(["binary", "unary", "reduce"]))
        if choice == "binary":
            b = draw(st.sampled_from(streams + invariants))
            t = net.add_elementwise(a, b, draw(st.sampled_from(BINARY))).get_output(0)
        elif choice == "unary":
            t = net.add_unary(a, draw(st.sampled_from([ll.UnaryOperation.ABS,
                                                       ll.UnaryOperation.NEG]))).get_output(0)
        else:
            t = net.add_reduce(a, ll.ReduceOperation.SUM, 0b1, True).get_output(0)
        streams.append(t)
    for t in draw(st.lists(st.sampled_from(streams), min_size=1, max_size=2, unique=True)):
        net.mark_output(concat(net, second, t, t1 + draw(st.integers(0, 1)),
                               kind=draw(st.sampled_from(list(ll.LoopOutput)[1:]))))
    if draw(st.booleans()):
        acc = second.add_recurrence(const(net, np.zeros(width, np.float32)))
        acc.set_input(1, net.add_elementwise(acc.get_output(0), streams[-1], SUM).get_output(0))
        net.mark_output(last(second, acc.get_output(0)))
    return net, feeds


@given(padded_programs())
def test_generated_programs_with_undefined_values_agree(program):
    # rule: stream/map, iterator/forward, iterator/bounds, output/concat, laziness/dead --
    # values, defined masks, forced elements and errors of the reference evaluator
    net, feeds = program
    with np.errstate(all="ignore"):  # the fills (NaN) meet the kernels as on either path
        try:
            ll.run(net, feeds)
        except ll.LazyLoopError as error:
            with pytest.raises(type(error)):
                ll.evaluate(net, feeds)
            return
        fast_and_reference(net, feeds)


def test_generated_programs_with_undefined_values_do_run_masked():
    # rule: stream/map -- the law above is not vacuous: masked schedules and masked batches.
    # Few programs install a masked batch and which ones are drawn depends on the hypothesis
    # release and on the modules loaded before (its pool of local constants): over 20 seeds
    # 80 programs gave 0-21 installs, 300 programs 15-45 (masked loops 136-216).
    masked, installs = [], []

    @settings(max_examples=300, database=None, derandomize=True, deadline=None)
    @given(padded_programs())
    def run(program):
        net, feeds = program
        plan = compile_network(net)
        machine = EngineMachine(plan, check_feeds(plan, feeds), log=[])
        try:
            for _, nid in plan.outputs:
                machine.demand(nid)
        except ll.LazyLoopError:
            return
        finally:
            installs.extend(masked_batches(machine))
        masked.extend(machine.masked_loops)

    run()
    assert len(masked) >= 60
    assert sum(installs) >= 5
