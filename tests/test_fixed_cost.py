"""What an evaluation of a lowered model no longer does again (issue 25, the fixed cost):
its constants and checked inputs start in the root memo, a loop outside loops runs its
schedule without the reference driver, a run that is not hot asks once for compiled trips,
and a Loop's iteration number (a numpy scalar) passes the element check without the full
one. Spies count the calls and call through; the values are computed here by hand.
(rule: laziness/modes -- the answers are the same each time)"""
import numpy as np
import pytest

pytest.importorskip("onnx")

import lazyloop.onnx as lo  # noqa: E402
from lazyloop.core.engine import machine as engine_machine, one_run, root_loop, schedule  # noqa: E402,E501
from lazyloop.core.evaluate import plan_of  # noqa: E402
from lazyloop.core.feeds import CheckedFeeds, check_feeds  # noqa: E402
from lazyloop.core.plan import Const  # noqa: E402
from lazyloop.core.reference.machine import Machine  # noqa: E402
from corpus_data import FOR_SUM, for_sum  # noqa: E402
from nets import counting  # noqa: E402

def test_a_loop_outside_loops_runs_without_the_driver(monkeypatch):
    # rule: stream/order, laziness/modes -- the loop's output is the run of its schedule;
    # the reference driver (Machine.demand) is not entered, and the sum is x * (1 + 0+1+2+3)
    lowered = lo.lower(FOR_SUM)
    feeds, want = for_sum(4)
    lo.evaluate(lowered, feeds)
    driver = counting(monkeypatch, Machine, "demand")
    runs = counting(monkeypatch, root_loop.RootLoop, "__call__")
    for _ in range(2):
        got = lo.evaluate(lowered, feeds)
        np.testing.assert_array_equal(next(iter(got.values())), want)
    assert driver == [] and len(runs) == 2


def test_an_evaluation_starts_with_the_constants_and_the_checked_inputs():
    # rule: stream/memo -- a constant's element is its value (read-only, the same object
    # every evaluation); check_feeds' read-only copies are the inputs' elements as they are
    lowered = lo.lower(FOR_SUM)
    feeds, want = for_sum(3)
    plan = plan_of(lowered.network, lowered.resolved)
    checked = check_feeds(plan, lowered.core_feeds(feeds))
    assert type(checked) is CheckedFeeds
    assert all(not v.flags.writeable for v in checked.values())
    assert feeds["x"].flags.writeable  # the caller's array is copied, not frozen
    machines = [engine_machine.EngineMachine(plan, checked, keep_trips=False) for _ in range(2)]
    constants = [k for k, node in plan.nodes.items() if isinstance(node, Const)
                 and node.scope is None]
    assert constants
    for k in constants:
        first, second = (m.root.memo[k][0] for m in machines)
        assert first is second is plan.nodes[k].value and not first.flags.writeable
    for k, value in checked.items():
        assert machines[0].root.memo[k][0] is value
    np.testing.assert_array_equal(machines[0].demand(plan.outputs[0][1]), want)


def test_a_run_that_is_not_hot_asks_for_compiled_trips_once(monkeypatch):
    # a run of 20 trips on a plan that has run few trips: trip_function answers None below
    # trip HOT_TRIPS, so the run asks it once, not on each of its 20 trips
    lowered = lo.lower(FOR_SUM)
    feeds, want = for_sum(20)
    asked = counting(monkeypatch, one_run, "trip_function")
    got = lo.evaluate(lowered, feeds)
    np.testing.assert_allclose(next(iter(got.values())), want, rtol=1e-6)
    assert len(asked) == 1


def test_the_iteration_number_is_stored_without_the_full_check(monkeypatch):
    # rule: structure/shapes -- a Loop's iteration number is a numpy int64 scalar (numpy's
    # 0-D arithmetic); once its shape () is admitted, the step-by-step path stores it
    # without Schedule.check_element, as the compiled trips do
    lowered = lo.lower(FOR_SUM)
    feeds, want = for_sum(5)
    lo.evaluate(lowered, feeds, mode="schedule")
    checked = counting(monkeypatch, schedule.Schedule, "check_element")
    got = lo.evaluate(lowered, feeds, mode="schedule")
    np.testing.assert_allclose(next(iter(got.values())), want, rtol=1e-6)
    assert checked == []
