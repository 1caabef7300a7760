"""OpenVINO element types and partial shapes, read as lazyloop types (rule `openvino/model`)."""
from __future__ import annotations

import numpy as np
import openvino as ov

from ..core.errors import UnsupportedError
from ..core.types import TensorType

# OpenVINO element type name -> numpy dtype. Types numpy cannot hold exactly (bf16, f8, u1,
# i4, string, ...) are refused rather than approximated.
DTYPES = {
    "f64": np.float64, "f32": np.float32, "f16": np.float16,
    "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
    "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64,
    "boolean": np.bool_,
}


def describe(node) -> str:
    """How errors name a node: its friendly name and its op type with version."""
    info = node.get_type_info()
    return f"node {node.get_friendly_name()!r} ({info.name}-{info.version_id})"


def numpy_dtype(element_type, where: str) -> np.dtype:
    name = element_type.get_type_name()
    if name not in DTYPES:
        raise UnsupportedError(where, "openvino/model",
                               f"element type {name} has no exact numpy equivalent",
                               f"use one of {sorted(DTYPES)}")
    return np.dtype(DTYPES[name])


def dims(partial_shape):
    """A partial shape as a tuple with None for dynamic dimensions; None for a dynamic rank."""
    if partial_shape.rank.is_dynamic:
        return None
    return tuple(d.get_length() if d.is_static else None for d in partial_shape)


def tensor_type(element_type, partial_shape, where: str) -> TensorType:
    """The core type of an OpenVINO value: dynamic dims are None, a dynamic rank is a shape
    of None (the rank comes from the value at run time: `structure/shapes`)."""
    return TensorType(numpy_dtype(element_type, where), dims(partial_shape))


def output_type(output, where: str) -> TensorType:
    return tensor_type(output.get_element_type(), output.get_partial_shape(), where)


def compatible(core_type, partial_shape) -> bool:
    """True when every value of a core type can be a value of an OpenVINO partial shape."""
    shape = dims(partial_shape)
    if shape is None:
        return True
    if not isinstance(core_type, TensorType) or core_type.shape is None:
        return False
    return len(shape) == core_type.rank and all(
        a is None or b is None or a == b for a, b in zip(shape, core_type.shape))


def other_rank(core_type: TensorType, partial_shape) -> bool:
    """OpenVINO's partial shape has a known rank, and not the core type's."""
    shape = dims(partial_shape)
    return shape is not None and core_type.shape is not None and len(shape) != core_type.rank


def relaxed(core_type: TensorType, any_rank=False) -> TensorType:
    """The same dtype with every dimension unknown (and the rank too when `any_rank`)."""
    if any_rank or core_type.shape is None:
        return TensorType(core_type.dtype, None)
    return TensorType(core_type.dtype, (None,) * core_type.rank)


__all__ = ["DTYPES", "describe", "numpy_dtype", "dims", "tensor_type", "output_type",
           "compatible", "other_rank", "relaxed", "ov"]
