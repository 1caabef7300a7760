"""An inner loop's runs on the path decided once per (enclosing schedule, inner loop)
(lazyloop/core/engine/inner_run.py): evaluated again and again, each run computes what the
reference does for its outer element, keeps nothing of it once done, reports an inner run's
error once, as a LazyLoopError (rules: structure/nesting, stream/memo, trip/count). Expected
values are computed with plain numpy."""
import numpy as np
import pytest

import lazyloop as ll
from lazyloop.core.engine import inner_run
from lazyloop.core.engine.machine import EngineMachine
from lazyloop.core.engine.schedule import Schedule
from lazyloop.core.plan import compile_network

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402

import lazyloop.onnx as lo  # noqa: E402

FLOAT, INT64, BOOL = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL
OUTER, INNER = 4, 3


def info(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def nest(gather_from=None, outer=OUTER, inner=INNER):
    """for i < outer: (z, s) = inner(y): for j < inner: z = 2 z + [i, j] (s stacks each z);
    y = z; t stacks s. Outputs y [2] and t [outer, inner, 2]. `gather_from`: the inner body also
    adds data[i + j] (a Gather in the inner loop) -- out of range from i + j = len(data)."""
    pair = [helper.make_node("Cast", ["i"], ["fi"], to=FLOAT),
            helper.make_node("Cast", ["j"], ["fj"], to=FLOAT),
            helper.make_node("Unsqueeze", ["fi", "zero"], ["ui"]),
            helper.make_node("Unsqueeze", ["fj", "zero"], ["uj"]),
            helper.make_node("Concat", ["ui", "uj"], ["ij"], axis=0),
            helper.make_node("Mul", ["z_in", "two"], ["z2"]),
            helper.make_node("Add", ["z2", "ij"], ["z_sum"])]
    if gather_from is None:
        pair.append(helper.make_node("Identity", ["z_sum"], ["z_out"]))
    else:
        pair += [helper.make_node("Add", ["i", "j"], ["ij_sum"]),
                 helper.make_node("Gather", ["data", "ij_sum"], ["d"], axis=0),
                 helper.make_node("Add", ["z_sum", "d"], ["z_out"])]
    pair.append(helper.make_node("Identity", ["z_out"], ["s_out"]))
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_j"], ["cond_j_out"])] + pair, "inner",
        [info("j", INT64, []), info("cond_j", BOOL, []), info("z_in", FLOAT, [2])],
        [info("cond_j_out", BOOL, []), info("z_out", FLOAT, [2]), info("s_out", FLOAT, [2])])
    outer_body = helper.make_graph(
        [helper.make_node("Identity", ["cond_i"], ["cond_i_out"]),
         helper.make_node("Loop", ["N", "", "y_in"], ["y_out", "s"], body=body)], "outer",
        [info("i", INT64, []), info("cond_i", BOOL, []), info("y_in", FLOAT, [2])],
        [info("cond_i_out", BOOL, []), info("y_out", FLOAT, [2]),
         info("s", FLOAT, [inner, 2])])
    inits = [helper.make_tensor("M", INT64, [], [outer]),
             helper.make_tensor("N", INT64, [], [inner]),
             helper.make_tensor("zero", INT64, [1], [0]),
             helper.make_tensor("two", FLOAT, [], [2.0])]
    if gather_from is not None:
        inits.append(onnx.numpy_helper.from_array(np.asarray(gather_from, np.float32), "data"))
    graph = helper.make_graph(
        [helper.make_node("Loop", ["M", "", "y0"], ["y", "t"], body=outer_body)], "nest",
        [info("y0", FLOAT, [2])], [info("y", FLOAT, [2]), info("t", FLOAT, [outer, inner, 2])],
        initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def by_hand(y0, data=None, outer=OUTER, inner=INNER):
    """The nest's outputs (y, t) with numpy."""
    y, t = np.asarray(y0, np.float32), []
    for i in range(outer):
        z, s = y, []
        for j in range(inner):
            z = (2 * z + np.array([i, j], np.float32)
                 + (0 if data is None else np.float32(data[i + j])))
            s.append(z)
        y = z
        t.append(np.stack(s))
    return y, np.stack(t)


@pytest.fixture
def counted(monkeypatch):
    """Counts of the inner runs each path made: {"decided": InnerRuns.element, "step by
    step": EngineMachine.inner_output, "runs": the inner loop's runs}."""
    counts = {"decided": 0, "step by step": 0, "runs": 0}
    element, step, run = (inner_run.InnerRuns.element, EngineMachine.inner_output,
                          Schedule.run)

    def decided(self, outer, node, k):
        counts["decided"] += 1
        return element(self, outer, node, k)

    def stepwise(self, outer, node, k):
        counts["step by step"] += 1
        return step(self, outer, node, k)

    def runs(schedule):
        counts["runs"] += schedule.outer is not None
        return run(schedule)
    monkeypatch.setattr(inner_run.InnerRuns, "element", decided)
    monkeypatch.setattr(EngineMachine, "inner_output", stepwise)
    monkeypatch.setattr(Schedule, "run", runs)
    return counts


def kept_schedules(lowered):
    """Every schedule the lowered model's plan keeps for later runs."""
    derived = compile_network(lowered.network, lowered.resolved).derived  # the cached plan
    return [s for key, pool in derived.items()
            if isinstance(key, tuple) and key and key[0] == "schedules" for s in pool]


def test_runs_evaluated_again_and_again_equal_numpy_and_keep_nothing(counted):
    # rule: structure/nesting, stream/memo -- 4 outer elements x 3 inner trips, 30 calls of
    # one lowered model with other feeds each time (compiled once hot): every call's y and t
    # are numpy's (a run that kept an element of an earlier run, or of an earlier call,
    # would differ), and no kept schedule holds an element, an invariant or a run's state
    lowered = lo.lower(nest())
    for call in range(30):
        y0 = np.array([call, -call / 4], np.float32)
        got = lo.evaluate(lowered, {"y0": y0})
        y, t = by_hand(y0)
        np.testing.assert_allclose(got["y"], y, rtol=1e-6)
        np.testing.assert_allclose(got["t"], t, rtol=1e-6)
        assert got["t"].shape == (OUTER, INNER, 2) and got["t"].dtype == np.float32
    assert counted["decided"] == counted["runs"] == 30 * OUTER  # one run per element
    assert counted["step by step"] == 0  # nothing recorded, logged or masked
    kept = kept_schedules(lowered)
    assert any(s.d.loop.name.count("/") == 1 for s in kept)  # the inner loop's
    for s in kept:
        assert not any(s.memo.values()) and not s.invariants and not s.failures
        assert s.m is None and s.outer is None and s.collected is None


def test_the_decided_path_equals_the_step_by_step_one(counted):
    # rule: structure/nesting -- the same lowered nest, evaluated plainly (decided path) and
    # run with trip counts kept (the machine's inner_output, step by step), gives equal arrays
    lowered = lo.lower(nest())
    y0 = np.array([0.5, 2.0], np.float32)
    for _ in range(3):
        plain = lo.evaluate(lowered, {"y0": y0})
    assert counted["step by step"] == 0
    stepwise = lo.run(lowered, {"y0": y0}, mode="compiled")
    assert counted["step by step"] == OUTER
    for name in ("y", "t"):
        np.testing.assert_array_equal(plain[name], stepwise.outputs[name])


@pytest.mark.parametrize("mode", ["fast", "compiled"])
def test_an_inner_run_that_fails_is_run_once_and_reported_as_a_lazyloop_error(counted, mode):
    # rule: structure/nesting, stream/memo -- data has 4 elements: the inner run of outer
    # element 2 gathers out of range at its trip 2; the error is a LazyLoopError, and no
    # inner run is made twice (runs 0, 1 and the failing 2; the enclosing trip handed back
    # by the compiled trips finds the failure kept)
    data = np.arange(1, 7, dtype=np.float32)
    fine = lo.evaluate(nest(gather_from=data), {"y0": np.zeros(2, np.float32)}, mode=mode)
    np.testing.assert_allclose(fine["t"], by_hand(np.zeros(2), data)[1], rtol=1e-6)
    lowered = lo.lower(nest(gather_from=data[:4]))
    for call in range(3):
        counted["runs"] = 0
        with pytest.raises(ll.LazyLoopError):
            lo.evaluate(lowered, {"y0": np.zeros(2, np.float32)}, mode=mode)
        assert counted["runs"] == 3


def test_an_inner_run_out_of_fuel_is_a_lazyloop_error():
    # rule: trip/count -- 2 outer trips of 5 inner ones: a fuel of 4 trips a loop lets the
    # outer loop start and refuses its first inner run, as a LazyLoopError; 5 is enough
    lowered = lo.lower(nest(outer=2, inner=5))
    feeds = {"y0": np.ones(2, np.float32)}
    y, t = by_hand(feeds["y0"], outer=2, inner=5)
    for _ in range(3):
        with pytest.raises(ll.LazyLoopError):
            lo.evaluate(lowered, feeds, max_trips=4)
        got = lo.evaluate(lowered, feeds, max_trips=5)
        np.testing.assert_allclose(got["y"], y, rtol=1e-6)
        np.testing.assert_allclose(got["t"], t, rtol=1e-6)
