"""One frontend protocol: ONNX and OpenVINO models lower to one `Lowered` shape
(lazyloop/core/lowered.py), whose bindings translate feeds in and outputs back, and whose
`evaluate`/`run` resolve the readings once per evaluation (rules: onnx/graph,
openvino/model)."""
import numpy as np
import pytest

import lazyloop as ll
from lazyloop.core.ambiguity import Readings, resolve
from lazyloop.core.lowered import Lowered


def onnx_loop():
    pytest.importorskip("onnx")
    import lazyloop.onnx as lo
    from lazyloop.strategies.dialects import OnnxLoopRecipe
    model, feeds = OnnxLoopRecipe(mode="M,cond", count=3, carried=(((2,), "half"),)).build()
    return lo, model, feeds


def test_both_frontends_lower_to_one_shape():
    # rule: onnx/graph, openvino/model -- the same class, bindings and evaluate/run
    lo, model, feeds = onnx_loop()
    pytest.importorskip("openvino")
    import lazyloop.openvino as llov
    from lazyloop.openvino import examples as ex
    lowered = [lo.lower(model), llov.lower(ex.counter_loop(trip=3))]
    assert all(type(low) is Lowered for low in lowered)
    assert [low.format for low in lowered] == ["onnx", "openvino"]
    assert [low.rule for low in lowered] == ["onnx/graph", "openvino/model"]
    # v0 halved three times: [4, 8] -> [0.5, 1]; the run says every position is defined
    v0 = np.array([4, 8], np.float32)
    out = lowered[0].evaluate({"w": np.float32(0), "v0": v0})
    np.testing.assert_array_equal(list(out.values())[0], v0 / 8)
    run = lowered[0].run({"w": np.float32(0), "v0": v0}, mode="reference", trace=True)
    assert run.evaluation.mode == "reference" and run.evaluation.trace
    assert all(np.all(m) for m in run.defined.values())


def test_feeds_are_matched_to_the_bindings():
    # rule: onnx/graph -- a name the model lacks, an input not fed: one InputError each,
    # citing the frontend's rule
    lo, model, feeds = onnx_loop()
    low = lo.lower(model)
    with pytest.raises(ll.InputError) as info:
        low.core_feeds(dict(feeds, nonsense=np.float32(1)))
    assert info.value.rule == "onnx/graph" and "nonsense" in str(info.value)
    missing = dict(feeds)
    missing.pop(low.inputs[0].name)
    with pytest.raises(ll.InputError) as info:
        low.core_feeds(missing)
    assert info.value.rule == "onnx/graph" and "no value was fed" in str(info.value)


def test_an_openvino_parameter_answers_to_its_tensor_names_once():
    # rule: openvino/model -- a Parameter fed by its friendly name and by a tensor name
    ov = pytest.importorskip("openvino")
    import openvino.opset13 as ops

    import lazyloop.openvino as llov
    p = ops.parameter([2], np.float32, name="x")
    p.output(0).get_tensor().set_names({"x_tensor"})
    low = llov.lower(ov.Model([ops.relu(p)], [p], "relu"))
    (b,) = low.inputs
    assert (b.name, b.aliases) == ("x", ("x_tensor",))
    x = np.array([-1, 2], np.float32)
    np.testing.assert_array_equal(list(low.evaluate({"x_tensor": x}).values())[0], [0, 2])
    with pytest.raises(ll.InputError) as info:
        low.core_feeds({"x": x, "x_tensor": x})
    assert info.value.rule == "openvino/model" and "fed twice" in str(info.value)


def test_readings_are_resolved_once():
    # rule: stream/map -- a resolved reading table is taken as it is (A30 chosen once)
    chosen = resolve({"A30": "saturate"})
    assert type(chosen) is Readings and resolve(chosen) is chosen
    assert chosen["A30"] == "saturate" and chosen["A1"] == "padding-after"
    with pytest.raises(ll.LazyLoopError):
        resolve({"A30": "clamp"})
