"""Matrix multiply with TensorRT's NONE / TRANSPOSE / VECTOR operand modes."""
from __future__ import annotations

import numpy as np

from .. import checks
from ..enums import LayerType, MatrixOperation as M
from ..types import TensorType
from .base import Layer
from .elementwise import broadcast_shape


class MatrixMultiplyLayer(Layer):
    type = LayerType.MATRIX_MULTIPLY
    settable = {**Layer.settable, "op0": checks.a_member(M), "op1": checks.a_member(M)}

    def __init__(self, network, a, op_a: M, b, op_b: M):
        self.op0, self.op1 = op_a, op_b
        super().__init__(network, [a, b])

    def _operand(self, t: TensorType, op: M, left: bool):
        """Batch dims and the (rows, cols) the operand contributes."""
        if op is M.VECTOR:
            if t.rank < 1:
                self.refuse("a VECTOR operand needs rank >= 1",
                            "reshape the operand to rank 1 with a shuffle layer")
            n = t.shape[-1]
            return t.shape[:-1], ((1, n) if left else (n, 1))
        if t.rank < 2:
            self.refuse(f"a matrix operand needs rank >= 2, got rank {t.rank}",
                        "use MatrixOperation.VECTOR for vectors")
        rows, cols = t.shape[-2:]
        if op is M.TRANSPOSE:
            rows, cols = cols, rows
        return t.shape[:-2], (rows, cols)

    def infer(self):
        a, b = self.input_type(0), self.input_type(1)
        if a.dtype != b.dtype:
            self.refuse(f"input dtypes differ: {a.dtype} and {b.dtype}", "add a cast layer")
        batch_a, (m, k) = self._operand(a, self.op0, True)
        batch_b, (k2, n) = self._operand(b, self.op1, False)
        if k is not None and k2 is not None and k != k2:
            self.refuse(f"inner dimensions differ: {k} and {k2}",
                        "transpose an operand (MatrixOperation.TRANSPOSE) or fix its shape")
        batch = broadcast_shape(self, [batch_a, batch_b]) if (batch_a or batch_b) else ()
        out = batch
        if self.op0 is not M.VECTOR:
            out += (m,)
        if self.op1 is not M.VECTOR:
            out += (n,)
        return TensorType(a.dtype, out)

    def kernel(self):
        op0, op1 = self.op0, self.op1

        def matmul(a, b):
            if op0 is M.TRANSPOSE:
                a = np.swapaxes(a, -1, -2)
            if op1 is M.TRANSPOSE:
                b = np.swapaxes(b, -1, -2)
            if op0 is M.VECTOR:
                a = a[..., None, :]
            if op1 is M.VECTOR:
                b = b[..., :, None]
            out = np.matmul(a, b)
            if op1 is M.VECTOR:
                out = out[..., 0]
            if op0 is M.VECTOR:
                out = out[..., 0] if op1 is M.VECTOR else out[..., 0, :]
            return out
        return matmul
