"""Unary operations and activations: one input, same shape."""
from __future__ import annotations

import math

import numpy as np

from .. import checks
from ..enums import ActivationType as Act, LayerType, UnaryOperation as U
from .base import Layer

_erf = np.vectorize(math.erf, otypes=[np.float64])

UNARY = {
    U.EXP: np.exp, U.LOG: np.log, U.SQRT: np.sqrt, U.RECIP: np.reciprocal, U.ABS: np.abs,
    U.NEG: np.negative, U.SIN: np.sin, U.COS: np.cos, U.TAN: np.tan, U.SINH: np.sinh,
    U.COSH: np.cosh, U.ASIN: np.arcsin, U.ACOS: np.arccos, U.ATAN: np.arctan,
    U.ASINH: np.arcsinh, U.ACOSH: np.arccosh, U.ATANH: np.arctanh, U.CEIL: np.ceil,
    U.FLOOR: np.floor, U.NOT: np.logical_not, U.SIGN: np.sign, U.ROUND: np.rint,
    U.ERF: lambda x: _erf(x).astype(np.asarray(x).dtype),
}


class UnaryLayer(Layer):
    type = LayerType.UNARY
    settable = {**Layer.settable, "op": checks.a_member(U)}

    def __init__(self, network, x, op: U):
        self.op = op
        super().__init__(network, [x])

    def infer(self):
        t = self.input_type(0)
        if (self.op is U.NOT) != (t.dtype == np.bool_):
            self.refuse(f"{self.op.name} does not take {t.dtype}",
                        "NOT takes bool, every other operation numbers: cast the input")
        return t

    def kernel(self):
        return UNARY[self.op]

    def describe(self):
        return f"unary({self._inputs[0].name}, {self.op.name})"


def _sigmoid(x):
    return (1 / (1 + np.exp(-x))).astype(x.dtype)


def activation_function(kind: Act, alpha: float, beta: float):
    """The function of one activation kind, with TensorRT's alpha/beta meanings."""
    def same(f):
        return lambda x: np.asarray(f(x)).astype(x.dtype, copy=False)

    return {
        Act.RELU: same(lambda x: np.maximum(x, 0)),
        Act.SIGMOID: same(lambda x: 1 / (1 + np.exp(-x))),
        Act.TANH: np.tanh,
        Act.LEAKY_RELU: same(lambda x: np.where(x >= 0, x, alpha * x)),
        Act.ELU: same(lambda x: np.where(x >= 0, x, alpha * (np.exp(x) - 1))),
        Act.SELU: same(lambda x: beta * np.where(x > 0, x, alpha * (np.exp(x) - 1))),
        Act.SOFTSIGN: same(lambda x: x / (1 + np.abs(x))),
        Act.SOFTPLUS: same(lambda x: alpha * np.log1p(np.exp(beta * x))),
        Act.CLIP: same(lambda x: np.clip(x, alpha, beta)),
        Act.HARD_SIGMOID: same(lambda x: np.clip(alpha * x + beta, 0, 1)),
        Act.SCALED_TANH: same(lambda x: alpha * np.tanh(beta * x)),
        Act.THRESHOLDED_RELU: same(lambda x: np.where(x > alpha, x, 0)),
    }[kind]


class ActivationLayer(Layer):
    type = LayerType.ACTIVATION
    settable = {**Layer.settable, "activation_type": checks.a_member(Act),
                "alpha": checks.a_float, "beta": checks.a_float}

    def __init__(self, network, x, kind: Act):
        self.activation_type = kind
        self.alpha = 0.0
        self.beta = 0.0
        super().__init__(network, [x])

    def infer(self):
        t = self.input_type(0)
        if not np.issubdtype(t.dtype, np.floating):
            self.refuse(f"activations take floating point inputs, got {t.dtype}",
                        "cast the input to float32")
        return t

    def kernel(self):
        return activation_function(self.activation_type, self.alpha, self.beta)

    def describe(self):
        return f"activation({self._inputs[0].name}, {self.activation_type.name})"
