"""Reductions over the axes of a TensorRT bit mask."""
from __future__ import annotations

import numpy as np

from .. import checks
from ..enums import LayerType, ReduceOperation as R
from ..types import TensorType
from .base import Layer

REDUCERS = {R.SUM: np.sum, R.PROD: np.prod, R.MAX: np.max, R.MIN: np.min, R.AVG: np.mean}


class ReduceLayer(Layer):
    type = LayerType.REDUCE
    settable = {**Layer.settable, "op": checks.a_member(R), "axes": checks.an_int(low=1),
                "keep_dims": checks.a_bool}

    def __init__(self, network, x, op: R, axes: int, keep_dims: bool):
        self.op, self.axes, self.keep_dims = op, axes, keep_dims
        super().__init__(network, [x])

    def axis_list(self, rank):
        if self.axes <= 0 or self.axes >= (1 << rank):
            self.refuse(f"axes bit mask {self.axes:#b} does not fit rank {rank}",
                        f"set bit i for each axis i to reduce, i below {rank}")
        return tuple(i for i in range(rank) if self.axes >> i & 1)

    def infer(self):
        t = self.input_type(0)
        axes = self.axis_list(t.rank)
        shape = tuple((1 if i in axes else d) for i, d in enumerate(t.shape)
                      if self.keep_dims or i not in axes)
        return TensorType(t.dtype, shape)

    def kernel(self):
        f, keep = REDUCERS[self.op], self.keep_dims
        axes = self.axis_list(self.input_type(0).rank)
        return lambda x: np.asarray(f(x, axis=axes, keepdims=keep)).astype(x.dtype)
