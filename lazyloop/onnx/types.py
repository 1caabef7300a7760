"""ONNX types as lazyloop types (`stream/shape`).

A tensor type becomes `ll.TensorType(numpy dtype, shape)` with unknown dimensions as None. A
value whose rank ONNX does not know, and every sequence, optional or map, becomes an
`ll.OpaqueType` named with ONNX's spelling (for example ``seq(tensor(float))``): the core lets
any Python value flow through it. dtypes numpy lacks (bfloat16, float8, int4) are the
`ml_dtypes` ones, as ONNX's reference evaluator uses.
"""
from __future__ import annotations

from typing import Optional

import numpy as np
import onnx
from onnx import TensorProto, TypeProto, helper

from ..core.types import OpaqueType, TensorType

UNKNOWN = OpaqueType("?")


def np_dtype(elem_type: int) -> np.dtype:
    """The numpy dtype of an ONNX element type (ml_dtypes for bfloat16 and friends)."""
    return np.dtype(helper.tensor_dtype_to_np_dtype(elem_type))


def onnx_elem_type(dtype) -> int:
    return helper.np_dtype_to_tensor_dtype(np.dtype(dtype))


def describe(tp: Optional[TypeProto]) -> str:
    """ONNX's own spelling of a type: tensor(float), seq(tensor(int64)), optional(...)."""
    if tp is None:
        return "?"
    kind = tp.WhichOneof("value")
    if kind == "tensor_type":
        elem = tp.tensor_type.elem_type
        return f"tensor({TensorProto.DataType.Name(elem).lower()})" if elem else "tensor(?)"
    if kind == "sequence_type":
        return f"seq({describe(tp.sequence_type.elem_type)})"
    if kind == "optional_type":
        return f"optional({describe(tp.optional_type.elem_type)})"
    if kind == "map_type":
        key = TensorProto.DataType.Name(tp.map_type.key_type).lower()
        return f"map({key},{describe(tp.map_type.value_type)})"
    if kind == "sparse_tensor_type":
        return "sparse_tensor"
    return "?"


def is_tensor(tp: Optional[TypeProto]) -> bool:
    return tp is not None and tp.WhichOneof("value") == "tensor_type"


def to_ll(tp: Optional[TypeProto]):
    """The lazyloop type of an ONNX type: a TensorType when the dtype is known (of unknown
    rank, shape None, when ONNX gives no shape); static dims are kept, symbolic ones
    (`dim_param`) and unknown ones become None (`structure/shapes`)."""
    if tp is None or tp.WhichOneof("value") is None:
        return UNKNOWN
    if not is_tensor(tp):
        return OpaqueType(describe(tp))
    tt = tp.tensor_type
    if not tt.elem_type:
        return OpaqueType(describe(tp))
    if not tt.HasField("shape"):
        return TensorType(np_dtype(tt.elem_type), None)
    dims = tuple(d.dim_value if d.HasField("dim_value") and d.dim_value >= 0 else None
                 for d in tt.shape.dim)
    return TensorType(np_dtype(tt.elem_type), dims)


def from_ll(ty) -> Optional[TypeProto]:
    """Back to ONNX, so ONNX's shape inference can run on a subgraph with known input types."""
    if isinstance(ty, TensorType):
        try:
            elem = onnx_elem_type(ty.dtype)
        except (KeyError, ValueError, TypeError):
            return None
        return helper.make_tensor_type_proto(elem, None if ty.shape is None else
                                             [d if d is not None else None for d in ty.shape])
    return None


def merge(declared: Optional[TypeProto], inferred: Optional[TypeProto]) -> Optional[TypeProto]:
    """The declared type, with what ONNX's shape inference knows filled in where it is silent."""
    if declared is None or declared.WhichOneof("value") is None:
        return inferred
    if inferred is None or not (is_tensor(declared) and is_tensor(inferred)):
        return declared
    out = TypeProto()
    out.CopyFrom(declared)
    d, i = out.tensor_type, inferred.tensor_type
    if not d.elem_type:
        d.elem_type = i.elem_type
    if not d.HasField("shape") and i.HasField("shape"):
        d.shape.CopyFrom(i.shape)
    elif d.HasField("shape") and i.HasField("shape") and len(d.shape.dim) == len(i.shape.dim):
        for dd, ii in zip(d.shape.dim, i.shape.dim):
            if not dd.HasField("dim_value") and ii.HasField("dim_value"):
                dd.dim_value = ii.dim_value
    return out


def ll_equal_or_unknown(a, b) -> bool:
    """True when two lazyloop types could describe the same values."""
    if not (isinstance(a, TensorType) and isinstance(b, TensorType)):
        return True
    if a.shape is None or b.shape is None:
        return a.dtype == b.dtype
    return a.dtype == b.dtype and a.rank == b.rank and all(
        x is None or y is None or x == y for x, y in zip(a.shape, b.shape))


__all__ = ["np_dtype", "onnx_elem_type", "describe", "to_ll", "from_ll", "merge", "UNKNOWN",
           "is_tensor", "ll_equal_or_unknown", "onnx"]
