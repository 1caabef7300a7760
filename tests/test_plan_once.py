"""Plan once, run many: a lowered model keeps its plan and the engine's derived data (the
demand analyses, the compiled trip functions, the batch candidates) across evaluations, so
that evaluating it again costs only the run -- and `lazyloop.onnx.evaluate` given the same
model again reuses its lowering (`onnx/reuse.py`). Spies count the calls and call through.
(rule: laziness/modes -- the answers are the same each time)"""
import numpy as np
import pytest

pytest.importorskip("onnx")

import lazyloop.onnx as lo  # noqa: E402
from lazyloop.bench.versus_models import map_like, nested, ten_ops  # noqa: E402
from lazyloop.core import plan as plan_module  # noqa: E402
from lazyloop.core.engine import batch, compiled, demand  # noqa: E402
from lazyloop.onnx import lowering, reuse  # noqa: E402


class Spies:
    """Counts the calls of the planner, the demand analysis, the trip-function compiler,
    the batch candidates' derivation and the ONNX lowering, each calling the real one."""

    def __init__(self, monkeypatch):
        self.calls = {}
        for module, name in ((plan_module, "_compile"), (compiled, "source"),
                             (batch, "batchable"), (lowering, "lower_graph_of")):
            self.spy(monkeypatch, module, name)
        real_init = demand.Demand.__init__

        def counted_init(this, *args, **kwargs):
            self.calls["Demand"] = self.calls.get("Demand", 0) + 1
            real_init(this, *args, **kwargs)
        monkeypatch.setattr(demand.Demand, "__init__", counted_init)

    def spy(self, monkeypatch, module, name):
        real = getattr(module, name)

        def counted(*args, **kwargs):
            self.calls[name] = self.calls.get(name, 0) + 1
            return real(*args, **kwargs)
        monkeypatch.setattr(module, name, counted)

    def take(self):
        calls, self.calls = self.calls, {}
        return calls


@pytest.mark.parametrize("build, planned", [
    (lambda: ten_ops(200), {"_compile", "Demand", "source"}),       # compiled trips
    (lambda: map_like(100), {"_compile", "Demand", "batchable"}),    # batched maps
    (lambda: nested(5, 80), {"_compile", "Demand", "source"}),       # a loop in a loop
])
def test_a_second_evaluation_of_a_lowered_model_plans_nothing(monkeypatch, build, planned):
    # rule: laziness/modes -- the first evaluation plans (and compiles, and batches); the
    # second and third only run, and give the same values
    model, feeds = build()
    lowered = lo.lower(model)
    spies = Spies(monkeypatch)
    first = lo.evaluate(lowered, feeds)
    assert planned <= set(spies.take())
    for _ in range(2):
        again = lo.evaluate(lowered, feeds)
        assert spies.take() == {}
        for name, value in first.items():
            np.testing.assert_array_equal(again[name], value)


def test_evaluating_the_same_model_again_lowers_and_plans_nothing(monkeypatch):
    # rule: laziness/modes -- through `lazyloop.onnx.evaluate`, which keeps recent lowerings
    model, feeds = ten_ops(150)
    monkeypatch.setattr(reuse, "_kept", type(reuse._kept)())
    spies = Spies(monkeypatch)
    first = lo.evaluate(model, feeds)
    assert {"lower_graph_of", "_compile", "Demand", "source"} <= set(spies.take())
    again = lo.evaluate(model, feeds)
    assert spies.take() == {}
    np.testing.assert_array_equal(again["y"], first["y"])
