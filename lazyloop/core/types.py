"""Data types and static tensor types (`stream/shape`).

A tensor's type is known when its layer is added, without forcing anything. Under the
TensorRT profile it is exact: every element of the stream has that dtype and shape. In the
relaxed profiles (lowered ONNX/OpenVINO programs) it is a constraint (`structure/shapes`):
the dtype, and where known the rank and each dimension. A dimension may be None (any size)
and the whole shape may be None (any rank: the rank comes from the values at run time);
every element is checked against what is known, and nothing more.
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

Shape = Optional[Tuple[Optional[int], ...]]


def _shape(value) -> Shape:
    return None if value is None else tuple(value)


@attrs.frozen(repr=False)
class TensorType:
    """The dtype and shape every element of a stream has (TensorRT profile), or may have
    (relaxed profiles: a None dimension is any size, a None shape any rank)."""

    dtype: np.dtype = attrs.field(converter=np.dtype)
    shape: Shape = attrs.field(converter=_shape)

    @property
    def rank(self) -> Optional[int]:
        """The number of dimensions, None when unknown."""
        return None if self.shape is None else len(self.shape)

    @property
    def is_static(self) -> bool:
        return self.shape is not None and all(d is not None for d in self.shape)

    def admits(self, shape) -> bool:
        """`structure/shapes`: a concrete shape agrees with what this type knows."""
        if self.shape is None:
            return True
        return len(shape) == len(self.shape) and all(
            d is None or d == v for d, v in zip(self.shape, shape))

    def accepts(self, value) -> bool:
        return (isinstance(value, np.ndarray) and value.dtype == self.dtype
                and self.admits(value.shape))

    def __repr__(self) -> str:
        if self.shape is None:
            return f"{self.dtype.name}[*]"
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
