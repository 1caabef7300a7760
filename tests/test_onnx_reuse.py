"""`lazyloop.onnx.evaluate` keeps the last lowered models: the same model is not lowered
again, a model changed in place is (rule: onnx/loop -- the values are the model's)."""
import numpy as np
import pytest

pytest.importorskip("onnx")
from onnx import numpy_helper  # noqa: E402

import lazyloop.onnx as lo  # noqa: E402
from lazyloop.bench.versus_models import counter  # noqa: E402
from lazyloop.onnx import reuse  # noqa: E402


def test_the_same_model_is_lowered_once(monkeypatch):
    # rule: onnx/loop -- y = y0 + M (M = 7 trips of y + 1)
    model, feeds = counter(7)
    calls = []
    real = lo.lower
    monkeypatch.setattr(lo, "lower", lambda m, r=None: calls.append(1) or real(m, r))
    assert float(lo.evaluate(model, feeds)["y"]) == 7.0
    assert float(lo.evaluate(model, feeds)["y"]) == 7.0
    assert len(calls) <= 1  # at most once (another test may have lowered it already)


def test_a_model_changed_in_place_is_lowered_again():
    # rule: onnx/loop -- M changed from 7 to 3 between the calls: y = 3
    model, feeds = counter(7)
    assert float(lo.evaluate(model, feeds)["y"]) == 7.0
    m = next(t for t in model.graph.initializer if t.name == "M")
    m.CopyFrom(numpy_helper.from_array(np.array(3, np.int64), "M"))
    assert float(lo.evaluate(model, feeds)["y"]) == 3.0
    assert len(reuse._kept) <= reuse.KEEP
