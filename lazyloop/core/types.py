"""Data types and static tensor types (`stream/shape`).

A tensor's type is known when its layer is added, without forcing anything. Dimensions are
ints; relaxed profiles (lowered ONNX/OpenVINO programs) may leave a dimension as None, and
then the first forced element fixes it (`structure/shapes`).
"""
from __future__ import annotations

from typing import Optional, Tuple

import attrs
import numpy as np

float32 = np.dtype(np.float32)
float16 = np.dtype(np.float16)
float64 = np.dtype(np.float64)
int8 = np.dtype(np.int8)
int16 = np.dtype(np.int16)
int32 = np.dtype(np.int32)
int64 = np.dtype(np.int64)
uint8 = np.dtype(np.uint8)
bool = np.dtype(np.bool_)  # noqa: A001 -- mirrors tensorrt.bool

Shape = Tuple[Optional[int], ...]


@attrs.frozen(repr=False)
class TensorType:
    """Shape and dtype every element of a stream shares."""

    dtype: np.dtype = attrs.field(converter=np.dtype)
    shape: Shape = attrs.field(converter=tuple)

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def is_static(self) -> bool:
        return all(d is not None for d in self.shape)

    def accepts(self, value) -> bool:
        return (isinstance(value, np.ndarray) and value.dtype == self.dtype
                and value.ndim == len(self.shape)
                and all(d is None or d == v for d, v in zip(self.shape, value.shape)))

    def __repr__(self) -> str:
        dims = ",".join("?" if d is None else str(d) for d in self.shape)
        return f"{self.dtype.name}[{dims}]"


@attrs.frozen(repr=False)
class OpaqueType:
    """A value that is not a tensor: an ONNX sequence or optional, checked by its frontend."""

    description: str

    def accepts(self, value) -> bool:
        return True

    def __repr__(self) -> str:
        return self.description
