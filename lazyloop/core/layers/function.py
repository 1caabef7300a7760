"""A layer whose function is given by a frontend (an ONNX or OpenVINO op kernel).

Frontends lower every non-loop node onto one of these: the core applies the function
sequence-wise like any other layer (`stream/map`) and never looks inside it.
"""
from __future__ import annotations

from ..enums import LayerType
from .base import Layer


class FunctionLayer(Layer):
    type = LayerType.FUNCTION
    optional_inputs = "all"  # an absent optional input of a frontend's op

    def __init__(self, network, fn, inputs, output_types, op: str = "function"):
        self.fn = fn
        self.op = op
        self._declared = list(output_types)
        super().__init__(network, list(inputs), num_outputs=len(self._declared))

    def compute_types(self):
        return list(self._declared)

    def infer(self):
        return self._declared[0]

    def kernel(self):
        return self.fn

    def describe(self):
        args = ", ".join(t.name if t is not None else "<absent>" for t in self._inputs)
        return f"{self.op}({args})"
