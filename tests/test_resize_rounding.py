"""Ambiguity A31: how an ONNX Resize of an integer tensor turns its weighted average into an
integer (lazyloop/onnx/resize_rounding.py); onnxruntime's answer is explained by `truncate`.

rules: onnx/node
"""
import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto as T  # noqa: E402
from onnx import helper as h  # noqa: E402

import lazyloop.onnx as llo  # noqa: E402

IMAGE = np.array([[[[-5, -4], [-3, -2]]]], np.int8)


def resize_model(elem=T.INT8, mode="linear"):
    node = h.make_node("Resize", ["x", "", "scales"], ["y"], mode=mode,
                       coordinate_transformation_mode="half_pixel")
    graph = h.make_graph([node], "resize", [h.make_tensor_value_info("x", elem, [1, 1, 2, 2])],
                         [h.make_tensor_value_info("y", elem, [1, 1, 4, 4])],
                         [h.make_tensor("scales", T.FLOAT, [4], [1, 1, 2, 2])])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 19)])


def test_round_and_truncate_of_an_int8_linear_resize():
    # rule: onnx/node -- half_pixel: output column j samples x = (j + 0.5) / 2 - 0.5, i.e.
    # -0.25 (clamped to 0), 0.25, 0.75, 1.25 (clamped to 1); row 0 samples input row 0:
    # -5, -5 + 0.25 = -4.75, -4.25, -4 (by hand)
    rounded = llo.evaluate(resize_model(), {"x": IMAGE})["y"]
    truncated = llo.evaluate(resize_model(), {"x": IMAGE}, readings={"A31": "truncate"})["y"]
    assert rounded.dtype == truncated.dtype == np.int8
    np.testing.assert_array_equal(rounded[0, 0, 0], [-5, -5, -4, -4])
    np.testing.assert_array_equal(truncated[0, 0, 0], [-5, -4, -4, -4])


def test_float_and_nearest_resize_are_the_same_under_both_readings():
    # rule: onnx/node -- nothing to round: the readings agree
    x = IMAGE.astype(np.float32)
    for model, feed in ((resize_model(T.FLOAT), x), (resize_model(mode="nearest"), IMAGE)):
        a = llo.evaluate(model, {"x": feed})["y"]
        b = llo.evaluate(model, {"x": feed}, readings={"A31": "truncate"})["y"]
        np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(llo.evaluate(resize_model(T.FLOAT), {"x": x})["y"][0, 0, 0],
                               [-5, -4.75, -4.25, -4])


def test_onnxruntimes_integer_resize_is_explained_by_truncate():
    # rule: onnx/node -- the finding of spec/50 ORT-7: the backend's answer is truncate's
    pytest.importorskip("onnxruntime")
    import lazyloop.difftest as dt
    from lazyloop.difftest.checking import Checker
    from lazyloop.difftest.reducing import ReducedModel
    from lazyloop.difftest.subject import Subject
    subject = Subject("reduced", "onnx", ReducedModel.of("onnx", resize_model(), {"x": IMAGE}))
    checker = Checker(dt.backend("onnxruntime"))
    out = checker.outcome(subject)
    checker.attribute(subject, out)
    assert out.status == "disagree"
    assert out.reading == "A31=truncate"
