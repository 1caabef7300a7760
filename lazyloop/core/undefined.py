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


def full_mask(value, mask):
    """`mask` (None: wholly defined) as a bool array of the value's shape."""
    return np.broadcast_to(True if mask is None else mask, np.shape(value))


def mapped(value, masks, positionwise: bool, multi: bool):
    """`stream/map` on undefined positions (spec/13-outputs.md, "Propagation"): the element
    a map returns when its kernel ran on the raw values of arguments, `masks` the masks of
    those that were undefined somewhere. A position-wise kernel's result is defined where
    every such mask, broadcast like the values, is; any other kernel's result is wholly
    undefined, and a kernel with several results has each wholly undefined. The reference
    evaluator, the fast path and its batches (a mask per stacked element) all use this."""
    if multi:
        return tuple(Partial(v, whole_mask(v, False)) for v in value)
    if positionwise:
        shape = np.shape(value)
        mask = None
        for m in masks:
            if type(m) is not np.ndarray or m.shape != shape:
                m = np.broadcast_to(m, shape)
            mask = m if mask is None else mask & m  # masks are never written: shared
        return join(value, mask)
    return join(value, whole_mask(value, False))
