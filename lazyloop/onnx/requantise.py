"""QLinearMatMul and QLinearConv: an integer product requantised by QuantizeLinear's formula
(rule `onnx/node`; spec/30, "Kernels lazyloop writes"; spec/50, LL-4).

Both operators compute an int32 accumulator (the zero points subtracted from the quantised
inputs, then a matrix product or a convolution) and quantise it again as QuantizeLinear does:
`y = saturate(round(acc * a_scale * b_scale / y_scale) + y_zero_point)`, where the rounding
(to the nearest, ties to even) is of the scaled value, *before* the zero point is added --
QLinearMatMul's text says so in those words; QLinearConv's text names the same scales and zero
points and defers to that formula. ONNX's reference kernels add the zero point first and round
the sum: at a tie with an odd zero point the two differ by one (-10.5 rounds to -10, plus 3 is
-7; -10.5 + 3 = -7.5 rounds to -8). onnxruntime and tract round first.
"""
from __future__ import annotations

from typing import Callable

import numpy as np


def requantised(acc, scale, zero_point, dtype):
    """saturate(round(acc * scale) + zero_point) in `dtype` (ties to even, as QuantizeLinear)."""
    y = np.rint(acc * scale)
    if zero_point is not None:
        y = y + zero_point
    info = np.iinfo(dtype)
    return np.clip(y, info.min, info.max).astype(dtype)


def qlinear_matmul(a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point):
    """QLinearMatMul: (a - a_zero_point) @ (b - b_zero_point) in int32, requantised."""
    left = a.astype(np.int32) - np.asarray(a_zero_point).astype(np.int32)
    right = b.astype(np.int32) - np.asarray(b_zero_point).astype(np.int32)
    dtype = a.dtype if y_zero_point is None else y_zero_point.dtype
    return (requantised(np.matmul(left, right), a_scale * b_scale / y_scale, y_zero_point,
                        dtype),)


def qlinear_conv(conv_integer: Callable) -> Callable:
    """QLinearConv as ConvInteger (`conv_integer(x, w, x_zero_point, w_zero_point)`, the node's
    own attributes bound) plus the int32 bias B, requantised; a per-channel `w_scale` scales
    its output channel (axis 1)."""
    def call(x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point=None,
             B=None):
        acc = conv_integer(x, w, x_zero_point, w_zero_point)[0]
        channel = (1, -1) + (1,) * (acc.ndim - 2)
        if B is not None:
            acc = acc + np.reshape(B, channel)
        scale = x_scale * (np.reshape(w_scale, channel) if np.size(w_scale) > 1 else w_scale)
        dtype = x.dtype if y_zero_point is None else y_zero_point.dtype
        return (requantised(acc, scale / y_scale, y_zero_point, dtype),)
    return call
