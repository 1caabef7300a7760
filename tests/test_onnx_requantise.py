"""QLinearMatMul and QLinearConv round the scaled accumulator before adding the output zero
point (spec/30, "Kernels"; spec/50 LL-4: ONNX's reference kernels round after it, met as
tract's 'TR-14' by the campaigns). Expected values by hand below, and from onnxruntime where it
has the kernel (QLinearConv of int8; QLinearMatMul of uint8 to uint8).

rules: onnx/node
"""
from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h

import lazyloop.onnx as lo


def quantised_model(op, x, w, zero_points, y_type, y_shape, attrs=None, bias=None):
    """op(x, 0.5, zx, w, 0.25, zw, 0.5, zy[, bias]) of two graph inputs, the scales and zero
    points constants (x scale 0.5, w scale 0.25, y scale 0.5; zero points as given)."""
    zx, zw, zy = zero_points
    elem = {np.dtype(np.int8): T.INT8, np.dtype(np.uint8): T.UINT8}
    inits = [h.make_tensor("sx", T.FLOAT, [], [0.5]), h.make_tensor("zx", elem[x.dtype], [], [zx]),
             h.make_tensor("sw", T.FLOAT, [], [0.25]),
             h.make_tensor("zw", elem[w.dtype], [], [zw]),
             h.make_tensor("sy", T.FLOAT, [], [0.5]), h.make_tensor("zy", y_type, [], [zy])]
    names = ["x", "sx", "zx", "w", "sw", "zw", "sy", "zy"]
    if bias is not None:
        inits.append(h.make_tensor("b", T.INT32, [len(bias)], bias))
        names.append("b")
    node = h.make_node(op, names, ["y"], **(attrs or {}))
    graph = h.make_graph([node], "g", [h.make_tensor_value_info("x", elem[x.dtype], x.shape),
                                       h.make_tensor_value_info("w", elem[w.dtype], w.shape)],
                         [h.make_tensor_value_info("y", y_type, y_shape)], initializer=inits)
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 21)])
    onnx.checker.check_model(model)
    return model


def onnxruntime_run(model, feeds):
    ort = pytest.importorskip("onnxruntime")
    return ort.InferenceSession(model.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, feeds)[0]


def test_qlinearmatmul_rounds_the_tie_before_the_zero_point():
    # rule: onnx/node -- a = [[3,4,5],[6,7,8]] - 1, b = [[3,4],[5,6],[7,8]] - 2: row 1 of the
    # product is 5*1 + 6*3 + 7*5 = 58 and 5*2 + 6*4 + 7*6 = 76; scaled by 0.5 * 0.25 / 0.5:
    # 14.5 and 19; 14.5 rounds to even 14, plus the zero point 3: 17 (round(17.5) would be 18)
    a = np.array([[3, 4, 5], [6, 7, 8]], np.uint8)
    b = np.array([[3, 4], [5, 6], [7, 8]], np.uint8)
    model = quantised_model("QLinearMatMul", a, b, (1, 2, 3), T.INT8, [2, 2])
    y = lo.evaluate(model, {"x": a, "w": b})["y"]
    assert y.dtype == np.int8 and y.tolist() == [[11, 13], [17, 22]]


def test_qlinearmatmul_agrees_with_onnxruntime_at_a_tie():
    # rule: onnx/node -- the same product into uint8 (onnxruntime's kernel): 17 by the text
    a = np.array([[3, 4, 5], [6, 7, 8]], np.uint8)
    b = np.array([[3, 4], [5, 6], [7, 8]], np.uint8)
    model = quantised_model("QLinearMatMul", a, b, (1, 2, 3), T.UINT8, [2, 2])
    y = lo.evaluate(model, {"x": a, "w": b})["y"]
    assert y.tolist() == [[11, 13], [17, 22]]
    assert y.tolist() == onnxruntime_run(model, {"x": a, "w": b}).tolist()


def test_qlinearconv_rounds_the_tie_before_the_zero_point():
    # rule: onnx/node -- x - 1 over the window at (0, 1): [[-5, -4], [-2, -1]]; w - 2:
    # [[4, 5], [6, -10]]: -20 - 20 - 12 + 10 = -42; * 0.5 * 0.25 / 0.5 = -10.5, to even -10,
    # plus 3: -7 (the reference kernels' round(-7.5) is -8); onnxruntime agrees
    x = np.arange(-5, 4, dtype=np.int8).reshape(1, 1, 3, 3)
    w = np.array([[[[6, 7], [8, -8]]]], np.int8)
    model = quantised_model("QLinearConv", x, w, (1, 2, 3), T.INT8, [1, 1, 2, 2])
    y = lo.evaluate(model, {"x": x, "w": w})["y"]
    assert y.tolist() == [[[[-9, -7], [-5, -4]]]]
    assert y.tolist() == onnxruntime_run(model, {"x": x, "w": w}).tolist()


def test_qlinearconv_saturates_after_the_zero_point_and_adds_the_bias():
    # rule: onnx/node -- two output channels, padding 1, bias [100, -100] (int32, scale
    # 0.5 * 0.25); the accumulator of the centre of channel 0 is sum((x - 1) * (w0 - 2)) over
    # the 2x2 window; every value is checked against onnxruntime, and one by hand
    x = np.arange(-5, 4, dtype=np.int8).reshape(1, 1, 3, 3)
    w = np.array([[[[6, 7], [8, -8]]], [[[-3, 9], [2, 5]]]], np.int8)
    model = quantised_model("QLinearConv", x, w, (1, 2, 3), T.INT8, [1, 2, 4, 4],
                            attrs={"pads": [1, 1, 1, 1]}, bias=[100, -100])
    y = lo.evaluate(model, {"x": x, "w": w})["y"]
    # channel 0 at (1, 1): window rows 0-1, cols 0-1 of x - 1 = [[-6, -5], [-3, -2]],
    # w0 - 2 = [[4, 5], [6, -10]]: -24 - 25 - 18 + 20 = -47; + 100 = 53; * 0.25 = 13.25 -> 13 + 3
    assert y[0, 0, 1, 1] == 16
    assert y.tolist() == onnxruntime_run(model, {"x": x, "w": w}).tolist()
