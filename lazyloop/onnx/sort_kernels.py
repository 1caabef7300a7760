"""ONNX's TopK bound to one stable numpy sort of the same order (rule `onnx/node`).

The reference kernel of TopK (opset 10 on: k an input) orders the data along the axis by
`np.lexsort` on two keys -- the values first, then each value's index along the axis (its
negative where the largest are asked for, the order then flipped) -- and keeps the first k
values and their indices. A lexsort of the index under the values is a stable sort of the
values: equal values (and -0.0 beside 0.0, and NaNs, which numpy sorts after every number)
keep the order of their indices. So the smallest k are the first k of a stable
`np.argsort`; the largest k -- values descending, equal ones by ascending index -- are the
last k of a stable argsort of the data reversed along the axis, read backwards, its indices
counted from the other end. Integer and float data, a one-element k within the axis's
length, go this way; anything else (bool or string data, k out of range, numpy raising) is
handed to the reference kernel, so that the value or the error is exactly the reference's.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from ..core.kernel import Kernel
from .gather_kernels import along_axis

_ndarray = np.ndarray
_WHOLE = slice(None)
INT64 = np.dtype(np.int64)


def stable_order(data, axis: int, largest: bool):
    """The indices along `axis` that order `data` as the reference's lexsort orders it,
    smallest or largest first, equal values by ascending index."""
    if not largest:
        return data.argsort(axis, kind="stable")  # what np.argsort calls
    n = data.shape[axis]
    flip = (_WHOLE,) * axis + (slice(None, None, -1),)  # np.flip's own index
    return (n - 1 - data[flip].argsort(axis, kind="stable"))[flip]


def top_k(attributes: dict, slow, where: str) -> Optional[Kernel]:
    """TopK 10 and 11 (k a one-element input): the first k of `stable_order` along the
    axis, their values picked from the data, the indices in int64 (what the reference
    returns, not copied again where the sort gives them so; `sorted` = 0 leaves the order to
    the kernel, and the reference's is sorted)."""
    axis, largest = attributes.get("axis", -1), bool(attributes.get("largest", 1))
    if not isinstance(axis, int):
        return None

    def call(data, k):
        if (type(data) is _ndarray and type(k) is _ndarray and k.shape == (1,)
                and k.dtype.kind == "i" and data.dtype.kind in "iuf"
                and -data.ndim <= axis < data.ndim):
            at = axis % data.ndim
            count = int(k[0])
            if 0 <= count <= data.shape[at]:
                index = [_WHOLE] * data.ndim
                index[at] = slice(0, count)
                order = stable_order(data, at, largest)[tuple(index)]
                return (along_axis(data, order, at),
                        order if order.dtype == INT64 else order.astype(INT64))
        return slow(data, k)
    call.__qualname__ = f"kernel[{where}]"
    return Kernel(call, reads_only=True, pure=True)
