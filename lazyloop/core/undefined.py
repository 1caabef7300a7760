"""Undefined values (DESIGN §4).

Where a source says "arbitrary" (CONCATENATE padding) or produces nothing (a last-trip value
after zero trips), lazyloop invents no number. The position is undefined: it holds a fill
value chosen to make accidental use visible, and the opt-in `defined` mask of `ll.run` is
False there. Fills: NaN for floating point, the minimum for signed integers, the maximum for
unsigned integers, True for bool.
"""
from __future__ import annotations

import attrs
import numpy as np


def fill_value(dtype):
    dtype = np.dtype(dtype)
    if dtype.kind in "fc":
        return np.nan
    if dtype.kind == "i":
        return np.iinfo(dtype).min
    if dtype.kind == "u":
        return np.iinfo(dtype).max
    if dtype.kind == "b":
        return True
    return 0


def filled(shape, dtype) -> np.ndarray:
    return np.full(shape, fill_value(dtype), dtype=dtype)


@attrs.frozen(eq=False)
class Partial:
    """A value with undefined positions: `mask` is True where `value` is defined."""

    value: object
    mask: object  # bool ndarray broadcastable to value, or a Python bool for opaque values


def split(v):
    """(value, mask) of any element; mask None means wholly defined."""
    if type(v) is Partial:
        return v.value, v.mask
    return v, None


def join(value, mask):
    if mask is None:
        return value
    if isinstance(mask, np.ndarray) and mask.all():
        return value
    if mask is True:
        return value
    return Partial(value, mask)


def whole_mask(value, defined: bool):
    if isinstance(value, np.ndarray) or isinstance(value, np.generic):
        return np.full(np.shape(value), defined, dtype=bool)
    return defined
