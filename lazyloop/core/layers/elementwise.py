"""Elementwise binary operations and select: numpy broadcasting of two or three inputs."""
from __future__ import annotations

import numpy as np

from .. import checks
from ..enums import ElementWiseOperation as Op, LayerType
from ..types import TensorType
from .base import Layer

COMPARISONS = {Op.EQUAL, Op.GREATER, Op.LESS}
LOGICAL = {Op.AND, Op.OR, Op.XOR}


def _truncating_divide(a, b):
    """Integer DIV rounds toward zero (TensorRT's kDIV on integers); floats divide."""
    if np.issubdtype(np.result_type(a), np.integer):
        q = np.abs(a) // np.abs(b)
        return (np.sign(a) * np.sign(b) * q).astype(np.result_type(a))
    return np.divide(a, b)


FUNCTIONS = {
    Op.SUM: np.add, Op.PROD: np.multiply, Op.MAX: np.maximum, Op.MIN: np.minimum,
    Op.SUB: np.subtract, Op.DIV: _truncating_divide, Op.POW: np.power,
    Op.FLOOR_DIV: np.floor_divide, Op.AND: np.logical_and, Op.OR: np.logical_or,
    Op.XOR: np.logical_xor, Op.EQUAL: np.equal, Op.GREATER: np.greater, Op.LESS: np.less,
}


def broadcast_shape(layer: Layer, shapes):
    """Broadcast static shapes; the TensorRT profile also wants equal ranks."""
    if layer.network.profile == "tensorrt" and len({len(s) for s in shapes}) > 1:
        layer.refuse(f"inputs have ranks {[len(s) for s in shapes]}",
                     "TensorRT broadcasts only between tensors of equal rank: add a shuffle")
    rank = max(len(s) for s in shapes)
    padded = [(1,) * (rank - len(s)) + tuple(s) for s in shapes]
    out = []
    for dims in zip(*padded):
        known = {d for d in dims if d is not None and d != 1}
        if len(known) > 1:
            layer.refuse(f"shapes {[tuple(s) for s in shapes]} do not broadcast",
                         "make each dimension equal across the inputs, or 1")
        if known:
            out.append(known.pop())
        elif any(d is None for d in dims):
            out.append(None)
        else:
            out.append(1)
    return tuple(out)


class ElementWiseLayer(Layer):
    type = LayerType.ELEMENTWISE
    settable = {**Layer.settable, "op": checks.a_member(Op)}

    def __init__(self, network, a, b, op: Op):
        self.op = op
        super().__init__(network, [a, b])

    def infer(self):
        a, b = self.input_type(0), self.input_type(1)
        if a.dtype != b.dtype:
            self.refuse(f"input dtypes differ: {a.dtype} and {b.dtype}", "add a cast layer")
        if self.op in LOGICAL and a.dtype != np.bool_:
            self.refuse(f"{self.op.name} takes bool inputs, got {a.dtype}",
                        "compare first to make bools, or cast to bool")
        if self.op not in LOGICAL and a.dtype == np.bool_ and self.op is not Op.EQUAL:
            self.refuse(f"{self.op.name} does not take bool inputs",
                        "cast the inputs to a number type, or use AND/OR/XOR/EQUAL")
        shape = broadcast_shape(self, [a.shape, b.shape])
        dtype = np.dtype(np.bool_) if self.op in COMPARISONS else a.dtype
        return TensorType(dtype, shape)

    def kernel(self):
        return FUNCTIONS[self.op]

    def describe(self):
        return f"elementwise({self._inputs[0].name}, {self._inputs[1].name}, {self.op.name})"


class SelectLayer(Layer):
    type = LayerType.SELECT

    def __init__(self, network, condition, then_input, else_input):
        super().__init__(network, [condition, then_input, else_input])

    def infer(self):
        c, t, e = (self.input_type(i) for i in range(3))
        if c.dtype != np.bool_:
            self.refuse(f"condition must be bool, got {c.dtype}",
                        "compare to make a bool condition")
        if t.dtype != e.dtype:
            self.refuse(f"branches have dtypes {t.dtype} and {e.dtype}", "add a cast layer")
        return TensorType(t.dtype, broadcast_shape(self, [c.shape, t.shape, e.shape]))

    def kernel(self):
        return np.where
