"""The pieces an ONNX graph is assembled from during an export: `Graph`, which collects the
nodes, inputs and outputs of the main graph or of one loop body or If branch, and the
conversions of core dtypes and tensor types into ONNX ones.
"""
from __future__ import annotations

from typing import List

import numpy as np
import onnx
from onnx import helper, numpy_helper

from ..core.export import NotExportable
from ..core.types import TensorType

INT64_MIN = np.iinfo(np.int64).min


def onnx_dtype(dtype) -> int:
    return helper.np_dtype_to_tensor_dtype(np.dtype(dtype))


def value_info(name: str, ty) -> onnx.ValueInfoProto:
    if not isinstance(ty, TensorType):
        raise NotExportable(f"tensor {name!r}", "stream/shape",
                            f"has the non-tensor type {ty!r}", "export tensors only")
    return helper.make_tensor_value_info(name, onnx_dtype(ty.dtype), list(ty.shape))


class Graph:
    """One ONNX graph under construction: the model's main graph or a loop body. `exporter`
    is the Exporter (export.py) that names its values."""

    def __init__(self, exporter, name: str):
        self.x = exporter
        self.name = name
        self.nodes: List[onnx.NodeProto] = []
        self.inputs: List[onnx.ValueInfoProto] = []
        self.outputs: List[onnx.ValueInfoProto] = []

    def op(self, op_type: str, inputs, n_out: int = 1, base: str = None, **attrs):
        outs = [self.x.fresh(base or op_type.lower()) for _ in range(n_out)]
        self.nodes.append(helper.make_node(op_type, list(inputs), outs,
                                           name=self.x.fresh("n_" + op_type), **attrs))
        return outs[0] if n_out == 1 else outs

    def const(self, value, base="c") -> str:
        value = np.asarray(value)
        return self.op("Constant", [], base=base,
                       value=numpy_helper.from_array(value, self.x.fresh("w")))

    def i64(self, values) -> str:
        return self.const(np.asarray(values, dtype=np.int64), base="i64")

    def make(self) -> onnx.GraphProto:
        return helper.make_graph(self.nodes, self.name, self.inputs, self.outputs)
