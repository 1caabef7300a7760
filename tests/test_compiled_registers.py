"""Steady compiled trips on registers (lazyloop/core/engine/registers.py): at every return of
the trip function -- the trips done, the WHILE input false, a trip handed back half made
because a kernel raised -- the memos hold what the memo-form trips leave in them (once the
WHILE input ended the loop, those a reader may still ask for; the others are left empty)
(rules:
stream/memo, iterator/bounds, trip/while, laziness/modes). The memo form is what a recorded
run compiles (a recording keeps it), so the same program is run both ways and the memos are
compared at each return, and against values worked out by hand."""
import numpy as np
import pytest
from hypothesis import given

import lazyloop as ll
import lazyloop.onnx as lo
from lazyloop.core.engine import OPTIONS, EngineMachine, compiled
from lazyloop.core.engine import one_run
from lazyloop.core.evaluate import check_feeds, plan_of
from lazyloop.core.plan import compile_network
from lazyloop.core.undefined import split
from lazyloop.strategies import networks

from corpus_data import differences, load
from nets import LESS, SUM, concat, const, counter, last


def while_loop(trips, rows):
    """i = 0..; WHILE i < trips: y = y + 2; z_i = y_i + 2 + x[i] (x: `rows` rows, an
    iterator); outputs CONCATENATE(z) (length trips) and LAST_VALUE(y)."""
    net = ll.Network()
    x = net.add_input("x", ll.int32, (rows,))
    loop = net.add_loop()
    i, _ = counter(net, loop)
    loop.add_trip_limit(net.add_elementwise(i, const(net, trips, np.int32), LESS).get_output(0),
                        ll.TripLimit.WHILE)
    y = loop.add_recurrence(const(net, 0, np.int32))
    y2 = net.add_elementwise(y.get_output(0), const(net, 2, np.int32), SUM).get_output(0)
    y.set_input(1, y2)
    row = loop.add_iterator(x, 0).get_output(0)
    z = net.add_elementwise(y2, row, SUM).get_output(0)
    net.mark_output(concat(net, loop, z, trips))
    net.mark_output(last(loop, y.get_output(0)))
    return net


def run_watched(net, feeds, recorded, monkeypatch, readings=None):
    """Evaluate in mode "compiled" (compiled from trip 0); after every call of the trip
    function: (the trip it returned, {stream: its memo}). `recorded`: a recording run,
    whose trips keep the memo form. Returns (returns, the error raised or None, the
    generated sources)."""
    returns, sources = [], []
    original = compiled.trip_function

    def watched(schedule, trip, hot=compiled.HOT_TRIPS):
        bound = original(schedule, trip, hot)
        if bound is None:
            return None
        sources.append(compiled.source(schedule, schedule.batched, schedule.record is not None))

        def trips(i, until, last=False):
            stopped = i = bound(i, until, last)
            returns.append((stopped, {k: dict(m) for k, m in schedule.memo.items()}))
            return i
        return trips
    monkeypatch.setattr(one_run, "trip_function", watched)
    plan = plan_of(net, readings)
    machine = EngineMachine(plan, check_feeds(plan, feeds), readings=readings,
                            options=OPTIONS["compiled"], record=[] if recorded else None)
    try:
        values = [machine.demand(nid) for _, nid in plan.outputs]
    except ll.LazyLoopError as error:
        return returns, error, sources, None
    return returns, None, sources, values


def both_forms(net, feeds, monkeypatch, readings=None, steady_needed=True):
    """Run `net` on registers and in memo form; check the memos agree at the returns of the
    trip function and the errors are the same. Returns (the steady run's returns, error)."""
    steady, error, sources, values = run_watched(net, feeds, False, monkeypatch, readings)
    plain, plain_error, plain_sources, plain_values = run_watched(net, feeds, True, monkeypatch,
                                                                  readings)
    assert any("break  # steady" in s for s in sources) or not steady_needed  # registers ran
    assert not any("break  # steady" in s for s in plain_sources)
    # the steady form may hand a trip back where the memo form did not (a read it could not
    # make): the memos agree wherever both returned, and at the last return
    assert bool(steady) == bool(plain)
    assert not plain or steady[-1][0] == plain[-1][0]
    at = dict(plain)
    whiles = {loop.while_ for loop in plan_of(net, readings).loops.values()}
    for i, a in dict(steady).items():
        if i not in at:
            continue
        b = at[i]
        assert a.keys() == b.keys()
        ended = any(w in b and i in b[w] and not b[w][i] for w in whiles)
        for k in a:
            if ended and not a[k]:  # the WHILE input ended the loop: a memo nobody reads
                continue  # after it is left empty (registers.read_after_the_loop)
            dropped = b[k].keys() - a[k].keys()  # below the trip, asked for by no reader
            assert a[k].keys() <= b[k].keys() and all(j < i for j in dropped), k
            for j in a[k]:
                for x, y in zip(split(a[k][j]), split(b[k][j])):  # value, mask
                    np.testing.assert_array_equal(x, y, err_msg=f"{k}[{j}]")
    assert str(error) == str(plain_error)
    for x, y in zip(values or (), plain_values or ()):
        for p, q in zip(split(x), split(y)):
            np.testing.assert_array_equal(p, q)
    return steady, error


def test_registers_hand_back_when_the_while_input_is_false(monkeypatch):
    # rule: trip/while, stream/memo -- 300 trips; the trip function returns trip 300,
    # where i_300 < 300 is false: the counter's memo holds i 299, 300 (the window of one
    # and the element phase A made), y the elements 299 and 300 (2 * 299, 2 * 300)
    net = while_loop(300, 300)
    x = np.arange(300, dtype=np.int32)
    returns, error = both_forms(net, {"x": x}, monkeypatch)
    assert error is None
    assert returns[-1][0] == 300
    memos = returns[-1][1]
    counters = [m for k, m in memos.items() if len(m) == 2 and set(m) == {299, 300}
                and {int(v) for v in m.values()} == {299, 300}]
    assert counters  # the counter i, by hand
    ys = [m for m in memos.values() if {j: int(v) for j, v in m.items()} == {299: 598, 300: 600}]
    assert ys  # y_299 = 598 and y_300 = 600, by hand


def test_registers_hand_back_a_trip_a_kernel_failed_in(monkeypatch):
    # rule: iterator/bounds, stream/memo -- x has 200 rows, the loop would run 300 trips:
    # forcing x[200] fails on trip 200, in the middle of it; the trip function hands trip
    # 200 back with what that trip made memoised (i_200, its test, y_201 = y_200 + 2 = 402
    # beside y_199 and y_200; y + 2 at 200), and the run fails with the reference's error
    net = while_loop(300, 200)
    x = np.arange(200, dtype=np.int32)
    returns, error = both_forms(net, {"x": x}, monkeypatch)
    with pytest.raises(ll.LazyLoopError) as reference:
        ll.evaluate(net, {"x": x}, mode="reference")
    assert type(error) is type(reference.value) and "iterator/bounds" in str(error)
    stopped, memos = returns[-1]
    assert stopped == 200
    held = [{j: int(v) for j, v in m.items()} for m in memos.values()]
    assert {199: 398, 200: 400, 201: 402} in held  # y
    assert {200: 402} in held  # y + 2, made before x[200] was asked for (its element 199
    # is read by no one any more: y_200 is made; not kept on registers)


def test_registers_write_back_at_every_return_of_a_long_run(monkeypatch):
    # rule: stream/memo, laziness/modes -- 5000 trips: the trip function returns at each
    # fuel-clock trip and once the WHILE input is false; the memos agree each time, and
    # the values are the hand-computed ones
    net = while_loop(5000, 5000)
    x = np.arange(5000, dtype=np.int32)
    returns, error = both_forms(net, {"x": x}, monkeypatch)
    assert error is None and len(returns) >= 3
    values = ll.evaluate(net, {"x": x}, mode="compiled")
    got = [np.asarray(v) for v in values.values()]
    k = np.arange(5000)
    np.testing.assert_array_equal(got[0], 2 * k + 2 + k)  # z_k = y_k + 2 + x[k]
    assert int(got[1]) == 10000  # y_5000


# jax2onnx's scan and fori_loop on registers; jax2onnx's while loop and paddle's two carried
# values read, in the WHILE input's cone, a stream a trip back before its phase makes it
# (made early, once); torch's nested while loops, an inner loop of each outer trip; an If in
# the body (jax's cond, torch's cond), its branches made on demand in memo form; Scans whose
# map streams come from batches (torch's scan; skl2onnx's distances, whose data is an
# invariant (onnx/scan9), are wholly batched: no trip runs on registers); onnxscript's
# for loop and torch's scan with a cond make trip 0 on registers, a carried value's element 0
# made by its reader (else trip 0 hands itself back: "trip 1 would not find them made")
@pytest.mark.parametrize("case", ["jax2onnx/scan_long", "jax2onnx/fori_buffer_long",
                                  "jax2onnx/while_counter", "paddle2onnx/two_carried",
                                  "torch_dynamo/while_nested", "jax2onnx/while_collatz",
                                  "jax2onnx/cond_in_scan", "torch_dynamo/scan_cond",
                                  "torch_dynamo/scan_long", "skl2onnx/knn_regressor",
                                  "onnxscript/for_sum"])
def test_exporter_loops_on_registers(case, monkeypatch):
    # rule: onnx/loop, stream/memo, laziness/modes -- compiled from trip 0, each model gives
    # the exporting framework's answer, and its memos agree with the memo form's at every
    # return of the trip function
    path, feeds, want, meta = load(case)
    readings = meta["readings"] or None
    got = lo.evaluate(path, feeds, readings=readings, mode="compiled")
    assert differences(want, got) == []
    lowered = lo.lower(path, readings)
    both_forms(lowered.network, lowered.core_feeds(feeds), monkeypatch, readings,
               steady_needed=not case.startswith("skl2onnx/"))


@given(networks())
def test_registers_leave_the_memo_forms_memos(program):
    # rule: stream/memo, laziness/modes -- generated programs, compiled from trip 0: at
    # every return of the trip function the memos are the memo form's, and so is the error
    with pytest.MonkeyPatch.context() as patch:
        both_forms(compile_network(program.net), program.feeds, patch, steady_needed=False)


@pytest.mark.parametrize("trips", [1, 2, 3, 4, 6])
def test_short_loops_leave_the_memo_form_early(trips, monkeypatch):
    # rule: stream/memo, trip/while, laziness/modes -- a loop of a few trips (the exporter
    # corpus runs 5-10) enters its steady trips as soon as every register's element exists
    # (trip 1 here: a window of one, y made a trip ahead): the memos agree with the memo
    # form's at every return, and the outputs are the hand-computed ones
    net = while_loop(trips, trips)
    x = np.arange(trips, dtype=np.int32) * 10
    returns, error = both_forms(net, {"x": x}, monkeypatch)
    assert error is None and returns[-1][0] == trips
    got = [np.asarray(v) for v in ll.evaluate(net, {"x": x}, mode="compiled").values()]
    k = np.arange(trips)
    np.testing.assert_array_equal(got[0], 2 * k + 2 + 10 * k)  # z_k = y_k + 2 + x[k]
    assert int(got[1]) == 2 * trips  # y_trips


def test_registers_start_at_the_first_trip_every_register_exists(monkeypatch):
    # rule: stream/memo -- the steady trips of while_loop start at trip 1 (the window is
    # one: element i - 1 of each stream exists from trip 1), not later
    net = while_loop(5, 5)
    plan = plan_of(net, None)
    machine = EngineMachine(plan, check_feeds(plan, {"x": np.zeros(5, np.int32)}),
                            options=OPTIONS["compiled"])
    sources = []
    original = compiled.source
    monkeypatch.setattr(compiled, "source", lambda *a, **k: sources.append(
        original(*a, **k)) or sources[-1])
    for _, nid in plan.outputs:
        machine.demand(nid)
    assert any("if i >= 1 and unsteady" in s for s in sources)


@pytest.mark.parametrize("trips, rows", [(0, 1), (3, 0), (1, 1), (2, 2), (7, 7)])
def test_a_fresh_run_makes_trip_0_on_registers(trips, rows, monkeypatch):
    # rule: stream/memo, trip/while, iterator/bounds -- a run that starts with its memos
    # empty makes trip 0 on registers too; it ends there (the WHILE input false at trip 0),
    # is handed back there (x has no row 0), or goes on steady: the memos agree with the
    # memo form's at every return, the error is the reference's, the values by hand
    net = while_loop(trips, rows)
    x = np.arange(rows, dtype=np.int32) * 10
    returns, error, sources, _ = run_watched(net, {"x": x}, False, monkeypatch)
    assert any("trip 0, once" in s for s in sources)
    both_forms(net, {"x": x}, monkeypatch, steady_needed=False)
    if rows < trips:
        with pytest.raises(ll.LazyLoopError) as reference:
            ll.evaluate(net, {"x": x}, mode="reference")
        assert type(error) is type(reference.value) and "iterator/bounds" in str(error)
        assert returns[0][0] == 0  # trip 0 handed back, with y_1 = 2 memoised
        assert {int(v) for m in returns[0][1].values() for v in m.values()} >= {0, 2}
        return
    assert error is None
    got = [np.asarray(v) for v in ll.evaluate(net, {"x": x}, mode="compiled").values()]
    k = np.arange(trips)
    np.testing.assert_array_equal(got[0].reshape(-1), 2 * k + 2 + 10 * k)
    assert int(got[1]) == 2 * trips  # y_trips



def while_a_trip_behind(limit, rows, chain=1):
    """k = 0, 1, ...: k_next = k + 1; c = True, then k_next < limit: WHILE c, and at most
    100 trips (COUNT). Only the WHILE input reads k, and only at a trip the count allows:
    it reads k_next a trip back (made on demand), which reads k's element a trip before
    that: the window is 2 (as a jax2onnx while loop's or paddle's while with a break).
    k_next is k + 1 then `chain` - 1 additions of 0, each a stream made on demand.
    y = 0, 2, 4, ...; outputs CONCATENATE(y + 2 + x[i]) (x: `rows` rows, an iterator) and
    LAST_VALUE(y)."""
    net = ll.Network()
    x = net.add_input("x", ll.int32, (rows,))
    loop = net.add_loop()
    k = loop.add_recurrence(const(net, 0, np.int32))
    k_next = net.add_elementwise(k.get_output(0), const(net, 1, np.int32), SUM).get_output(0)
    for _ in range(chain - 1):
        k_next = net.add_elementwise(k_next, const(net, 0, np.int32), SUM).get_output(0)
    k.set_input(1, k_next)
    c = loop.add_recurrence(const(net, True, np.bool_))
    c.set_input(1, net.add_elementwise(k_next, const(net, limit, np.int32), LESS).get_output(0))
    loop.add_trip_limit(c.get_output(0), ll.TripLimit.WHILE)
    loop.add_trip_limit(const(net, 100, np.int32), ll.TripLimit.COUNT)
    y = loop.add_recurrence(const(net, 0, np.int32))
    y2 = net.add_elementwise(y.get_output(0), const(net, 2, np.int32), SUM).get_output(0)
    y.set_input(1, y2)
    row = loop.add_iterator(x, 0).get_output(0)
    z = net.add_elementwise(y2, row, SUM).get_output(0)
    net.mark_output(concat(net, loop, z, max(limit, 1)))
    net.mark_output(last(loop, y.get_output(0)))
    return net


def watched_with_hand_backs(net, feeds, monkeypatch):
    """`run_watched` (not recorded), and how many times the trip function's register trips
    handed themselves back (its `unsteady` count)."""
    bound = []
    original = compiled.trip_function
    monkeypatch.setattr(compiled, "trip_function", lambda *a, **k: bound.append(
        original(*a, **k)) or bound[-1])
    returns, error, sources, _ = run_watched(net, feeds, False, monkeypatch)
    trips = next(b for b in bound if b is not None)
    cells = dict(zip(trips.__code__.co_freevars, trips.__closure__))
    return returns, error, sources, cells["unsteady"].cell_contents


def check_a_trip_behind(net, x, limit, returns, error, monkeypatch):
    """The memos agree with the memo form's at every return; a run handed back in an early
    trip (x too short) fails as the reference does; else the values are the ones by hand."""
    both_forms(net, {"x": x}, monkeypatch, steady_needed=False)
    if len(x) < limit:
        with pytest.raises(ll.LazyLoopError) as reference:
            ll.evaluate(net, {"x": x}, mode="reference")
        assert type(error) is type(reference.value) and "iterator/bounds" in str(error)
        assert returns[0][0] == len(x)  # the trip without a row handed back
        return
    assert error is None and returns[0][0] == limit  # the WHILE input ended it, not a hand-back
    got = [np.asarray(v) for v in ll.evaluate(net, {"x": x}, mode="compiled").values()]
    k = np.arange(limit)
    np.testing.assert_array_equal(got[0].reshape(-1), 2 * k + 2 + 10 * k)  # z_k = y_k + 2 + x[k]
    assert int(got[1]) == 2 * limit  # y after `limit` trips


@pytest.mark.parametrize("limit, rows", [(1, 1), (2, 2), (3, 3), (6, 6), (4, 1), (3, 0)])
def test_a_window_of_two_runs_trips_0_and_1_on_registers(limit, rows, monkeypatch):
    # rule: stream/memo, trip/while, iterator/bounds, laziness/modes -- a window of 2:
    # trips 0 and 1 are written on registers (then steady from trip 2); a fresh run makes
    # them there without handing a trip back; it ends in them (one trip), is handed back
    # in them (x too short), or goes on steady. The memos agree with the memo form's at
    # every return, the error is the reference's, the values are worked out by hand.
    net = while_a_trip_behind(limit, rows)
    x = np.arange(rows, dtype=np.int32) * 10
    returns, error, sources, unsteady = watched_with_hand_backs(net, {"x": x}, monkeypatch)
    assert any("while True:  # trips 0 .. 1, once each" in s for s in sources)
    assert unsteady == 0
    check_a_trip_behind(net, x, limit, returns, error, monkeypatch)


@pytest.mark.parametrize("limit, rows", [(2, 2), (7, 7), (5, 2)])
def test_reads_deeper_than_the_in_line_depth_stay_on_registers(limit, rows, monkeypatch):
    # rule: stream/memo, trip/while, iterator/bounds, laziness/modes -- the WHILE input reads
    # a chain of 12 streams made on demand, deeper than INLINE_DEPTH: the register trips
    # read the deep ones through deep reads (deep_reads.py) and never hand themselves back;
    # the memos agree with the memo form's at every return, the values are worked out by hand
    assert compiled.INLINE_DEPTH < 12
    net = while_a_trip_behind(limit, rows, chain=12)
    x = np.arange(rows, dtype=np.int32) * 10
    returns, error, sources, unsteady = watched_with_hand_backs(net, {"x": x}, monkeypatch)
    assert any("    def h" in s for s in sources)  # a deep read is written
    assert unsteady == 0
    check_a_trip_behind(net, x, limit, returns, error, monkeypatch)


def test_while_collatz_runs_on_registers(monkeypatch):
    # rule: onnx/loop, stream/memo, laziness/modes -- jax2onnx's while_collatz reads its
    # body (a cond in it) a trip back, about twenty streams deep: its register trips never
    # hand themselves back, and it gives jax's answer (and the memo form's memos)
    path, feeds, want, meta = load("jax2onnx/while_collatz")
    readings = meta["readings"] or None
    assert differences(want, lo.evaluate(path, feeds, readings=readings, mode="compiled")) == []
    lowered = lo.lower(path, readings)
    _, error, _, unsteady = watched_with_hand_backs(lowered.network, lowered.core_feeds(feeds),
                                                    monkeypatch)
    assert error is None and unsteady == 0


def test_a_run_starting_on_early_trips_keeps_no_more_states_than_the_memo_form():
    # rule: stream/memo -- s = s + 1 over a 1 MiB state, 200 trips (too big to accumulate
    # whole): once the loop is compiled, a fresh run starts on its early trips; the steady
    # trips then hold s_(i-1), s_i and the new s_(i+1) as the memo form does, nothing more
    # (an early trip once left s_1 in a register no steady trip slides: one state more)
    import tracemalloc
    elements = 2**18
    net = ll.Network()
    loop = net.add_loop()
    loop.add_trip_limit(const(net, 200, np.int32), ll.TripLimit.COUNT)
    s = loop.add_recurrence(const(net, np.zeros(elements, np.float32)))
    ones = const(net, np.ones(elements, np.float32))
    s.set_input(1, net.add_elementwise(s.get_output(0), ones, SUM).get_output(0))
    net.mark_output(last(loop, s.get_output(0)))
    ll.evaluate(net, {})  # a run of 200 trips is hot: the next ones start compiled
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        out = list(ll.run(net, {}, trace=False).outputs.values())[0]
        growth = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    assert np.all(out == 200)  # 200 times +1
    assert growth < 3.5 * elements * 4, growth / (elements * 4)
