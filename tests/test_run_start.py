"""A run whose compiled trips are bound already starts on them at once (engine/one_run.py's
`run`), and an evaluation's run of a loop takes a kept plain schedule without the recording
machinery (`EngineMachine.plain_values`): the values, the stops (`trip/count`, `trip/while`),
the fuel and the undefined values met on that path are the reference's. Expected values are
computed by hand or with numpy."""
import numpy as np
import pytest
from hypothesis import given

import lazyloop as ll
import lazyloop.onnx as lo
from lazyloop.core.engine import one_run
from lazyloop.core.engine.batch import FEWEST_WHOLE
from lazyloop.core.engine.schedule import Schedule
from lazyloop.core.evaluate import plan_of
from corpus_data import FOR_SUM, for_sum
from lazyloop.strategies import networks
from nets import (LESS, SUM, const, counted, counter, counting, last, padded_input_rows,
                  sums_of_rows)
from test_modes import check_law, core_alone, outcome, same_values, settled


def while_below():
    """y = 0; while i < n: i += 1; y = 2 * i -- a WHILE input and no COUNT; the LAST_VALUE
    of i and y."""
    net = ll.Network()
    n = net.add_input("n", ll.int32, ())
    loop = net.add_loop()
    i, nxt = counter(net, loop)
    loop.add_trip_limit(net.add_elementwise(i, n, LESS).get_output(0), ll.TripLimit.WHILE)
    y = loop.add_recurrence(const(net, 0, np.int32))
    y.set_input(1, net.add_elementwise(nxt, nxt, SUM).get_output(0))
    for name, t in (("i", i), ("y", y.get_output(0))):
        out = last(loop, t)
        out.name = name
        net.mark_output(out)
    return net


def hot(net, feeds, runs=3):
    """The plan of `net`, evaluated `runs` times in mode "compiled" (compiled from trip 0):
    its loops' kept schedules hold bound compiled trips from then on."""
    plan = plan_of(net, None)
    for _ in range(runs):
        ll.evaluate(plan, feeds, mode="compiled")
    return plan


@pytest.mark.parametrize("n", [0, 1, 4, 63, 64, 65, 150])
def test_a_hot_counted_loop_gives_numpys_sum(n):
    # rule: trip/count, recurrence/def -- made hot by a run of 300 trips, then one of 2 (which
    # compiles); every later run starts on the compiled trips; a short one ends there,
    # without the step-by-step trip loop
    lowered = lo.lower(FOR_SUM)
    for warm in (300, 2):
        lo.evaluate(lowered, for_sum(warm)[0])
    feeds, want = for_sum(n)
    stepped = []
    real = one_run.trips
    one_run.trips = lambda *args: stepped.append(args[1:3]) or real(*args)
    try:
        got = next(iter(lo.evaluate(lowered, feeds).values()))
    finally:
        one_run.trips = real
    np.testing.assert_allclose(got, want, rtol=1e-6)
    if 0 < n <= 4:  # before the fixed-point watch or the clock is due
        assert stepped == []


@pytest.mark.parametrize("n", [-3, 0, 1, 5, 15, 16, 40, 100])
def test_a_hot_while_loop_stops_where_its_while_input_is_false(monkeypatch, n):
    # rule: trip/while -- i counts 0, 1, ... while i < n: the loop stops with i = max(n, 0)
    # and y = 2 * i (by hand); where the compiled trips stopped it, the step-by-step trip
    # loop is not entered
    plan = hot(while_below(), {"n": np.array(7, np.int32)})
    stepped = counting(monkeypatch, one_run, "trips")
    for mode in ("fast", "compiled"):
        got = ll.evaluate(plan, {"n": np.array(n, np.int32)}, mode=mode)
        assert int(got["i"]) == max(n, 0) and int(got["y"]) == 2 * max(n, 0)
    if 0 < n < 8:  # before the fixed-point watch or the clock is due
        assert stepped == []


def test_a_hot_while_loop_that_never_stops_runs_out_of_fuel_as_the_reference():
    # rule: trip/while -- n beyond max_trips: the run on the compiled trips stops at the fuel,
    # with the reference's error (FuelExhausted naming the loop and trip/while)
    plan = hot(while_below(), {"n": np.array(7, np.int32)})
    feeds = {"n": np.array(10 ** 6, np.int32)}
    errors = []
    for mode in ("reference", "fast", "compiled"):
        with pytest.raises(ll.FuelExhausted) as caught:
            ll.evaluate(plan, feeds, max_trips=50, mode=mode)
        errors.append(str(caught.value))
    assert "trip/while" in errors[0] and len(set(errors)) == 1


def test_a_hot_counted_loop_above_the_fuel_is_refused():
    # rule: trip/count -- a COUNT of 40 under max_trips=10 is refused, on the compiled
    # trips' path as on the reference
    plan = hot(counted(40), {})
    errors = []
    for mode in ("reference", "fast", "compiled"):
        with pytest.raises(ll.FuelExhausted) as caught:
            ll.evaluate(plan, {}, max_trips=10, mode=mode)
        errors.append(str(caught.value))
    # the reference refuses the COUNT before any trip; the engine, which looks for a fixed
    # point (laziness/fixed-point: the counter has none), runs out of fuel at trip 10
    assert all(e.startswith("loop0: ") and "max_trips=10" in e and "[trip/count]" in e
               for e in errors)
    assert int(next(iter(ll.evaluate(plan, {}, mode="compiled").values()))) == 40


def padded_sums():
    """Loop 0 stacks the first k rows of x [4, 3] padded to 4 (p); the outer loop runs 4
    trips over the rows r of p; per row an inner loop sums r 3 times: 3 * r, undefined for
    the padded rows; the outer loop stacks those sums."""
    net = ll.Network()
    p = padded_input_rows(net)
    _, sums = sums_of_rows(net, p, 4)
    sums.name = "sums"
    net.mark_output(sums)
    return net


def test_a_hot_inner_loop_that_meets_padding_goes_masked():
    # rule: structure/nesting, recurrence/def, output/concat -- hot on 4 defined rows, then
    # fed k = 2: the inner loop's kept plain schedule meets an undefined row, and its runs
    # carry masks from then on: rows 0, 1 are 3 * x (by hand), rows 2, 3 undefined (fill NaN)
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    plan = hot(padded_sums(), {"x": x, "k": np.array(4, np.int32)})
    np.testing.assert_array_equal(
        ll.evaluate(plan, {"x": x, "k": np.array(4, np.int32)})["sums"], 3 * x)
    feeds = {"x": x, "k": np.array(2, np.int32)}
    want = np.full((4, 3), np.nan, np.float32)
    want[:2] = 3 * x[:2]
    defined = np.zeros((4, 3), bool)
    defined[:2] = True
    for mode in ("fast", "compiled"):
        got = ll.evaluate(plan, feeds, mode=mode)["sums"]
        assert np.array_equal(got, want, equal_nan=True)
        run = ll.run(plan, feeds, trace=False, mode=mode)
        np.testing.assert_array_equal(run.defined["sums"], defined)
    reference = ll.run(plan, feeds)
    np.testing.assert_array_equal(reference.defined["sums"], defined)



@given(networks())
def test_generated_programs_evaluated_again_in_compiled_mode_answer_as_the_reference(program):
    # rule: laziness/modes, structure/nesting -- in mode "compiled" the first evaluation
    # compiles; the later ones start on the kept schedules' bound trips (which, stopping at
    # the COUNT, write back only what is read after the loop) and run inner loops on the
    # path decided once per enclosing schedule: each of three evaluations answers as the
    # reference does (outputs; an error of the same class and rule), within the mode law
    plan = ll.compile_network(program.net)
    reference = outcome(lambda: ll.run(plan, program.feeds, mode="reference", trace=False))
    for _ in range(3):
        try:
            with np.errstate(all="ignore"):
                got = ("answer", ll.evaluate(plan, program.feeds, mode="compiled"))
        except ll.LazyLoopError as error:
            got = ("error", type(error), error.rule, error)
        if got[0] == "answer" and reference[0] == "answer":
            assert same_values(got[1], reference[1])
        else:  # the mode law's cases (test_modes.py), the defined masks aside
            answer = got if got[0] == "error" else ("answer", got[1], reference[2])
            check_law(reference, answer, core_alone(plan, program.feeds),
                      settled(plan, program.feeds, "compiled"))


def squares_summed(trips):
    """i = 0; acc = 0; COUNT trips of: acc += i * i; i += 1 -- LAST_VALUE of acc and of i."""
    net = ll.Network()
    loop = net.add_loop()
    loop.add_trip_limit(const(net, trips, np.int32), ll.TripLimit.COUNT)
    i, _ = counter(net, loop)
    square = net.add_elementwise(i, i, ll.ElementWiseOperation.PROD).get_output(0)
    acc = loop.add_recurrence(const(net, 0, np.int32))
    acc.set_input(1, net.add_elementwise(acc.get_output(0), square, SUM).get_output(0))
    for name, t in (("acc", acc.get_output(0)), ("i", i)):
        out = last(loop, t)
        out.name = name
        net.mark_output(out)
    return net


@pytest.mark.parametrize("trips", [1, 2, 5, FEWEST_WHOLE - 1])
def test_a_hot_run_stopped_at_its_count_leaves_what_is_read_after_it(monkeypatch, trips):
    # rule: stream/memo, trip/count -- a run on the bound compiled trips that reaches its
    # COUNT (too short to batch, whose steps read the batch) writes back only what is read
    # once the loop ended: the last values read after it are found made, no step makes one
    # again; by hand: acc = sum of i * i for i < trips
    plan = hot(squares_summed(trips), {})
    misses = []
    real = Schedule.get

    def get(self, ref, k):
        memo = self.memo.get(ref)
        if memo is not None and k not in memo:
            misses.append((ref, k))
        return real(self, ref, k)
    monkeypatch.setattr(Schedule, "get", get)
    got = ll.evaluate(plan, {}, mode="compiled")
    assert int(got["acc"]) == sum(j * j for j in range(trips)) and int(got["i"]) == trips
    assert misses == []
