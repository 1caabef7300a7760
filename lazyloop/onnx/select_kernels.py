"""ONNX kernels that find or keep elements by position -- ArgMax, ArgMin, Compress, and
ai.onnx.ml's ArrayFeatureExtractor -- bound straight to the numpy calls their reference
kernels make (rule `onnx/node`; `array_kernels.ARRAY_OPS` lists them with the other direct
bindings).

Each reference kernel is one or two numpy calls (`np.argmax` and `np.expand_dims`,
`np.compress`, an indexing of the last axis and a reshape) behind `run`'s layers. Here the
same calls are made for the inputs the reference reads the same way -- plain arrays of
numbers, integer indices -- and anything else (another case, numpy raising) is handed to
the reference kernel's bound call, so that the value or the error is exactly the
reference's.
"""
from __future__ import annotations

import numpy as np

_ndarray = np.ndarray
INT64 = np.dtype(np.int64)


def position_of(find: str):
    """ArgMax (`find` "argmax") or ArgMin ("argmin"): the reference's `np.argmax(data, axis)`
    -- the first position of the extreme along the axis, a NaN counting as the extreme --
    with the axis kept as a 1 where keepdims is set (the reference's `np.expand_dims`, here
    numpy's own `keepdims`: the same shape); with select_last_index, the last such position,
    as the reference finds it: the first in the data read backwards along the axis, counted
    from the end. In int64, for number and boolean data of rank >= 1 and an axis within it;
    else (numpy raising on an empty axis) the reference kernel."""
    def binder(attributes, slow):
        axis = attributes.get("axis", 0)
        keepdims = bool(attributes.get("keepdims", 1))
        last = bool(attributes.get("select_last_index"))
        if not isinstance(axis, int):
            return None

        def single(data):
            if (type(data) is _ndarray and data.dtype.kind in "biuf"
                    and -data.ndim <= axis < data.ndim):
                try:
                    if last:
                        r = getattr(np.flip(data, axis), find)(axis, keepdims=keepdims)
                        r = data.shape[axis] - r - 1
                    else:
                        r = getattr(data, find)(axis, keepdims=keepdims)
                except Exception:  # noqa: BLE001 -- an empty axis: the reference's error
                    return slow(data)[0]
                if type(r) is not _ndarray:
                    r = np.array(r, INT64)
                return r if r.dtype == INT64 else r.astype(INT64)
            return slow(data)[0]
        return single
    return binder


def compress(attributes, slow):
    """Compress: `np.compress(condition, x, axis)`, which for an array is its `compress`
    method (no axis: x flattened), for array inputs; else the reference kernel."""
    axis = attributes.get("axis")

    def single(x, condition):
        if type(x) is _ndarray and type(condition) is _ndarray:
            try:
                return x.compress(condition, axis)
            except Exception:  # noqa: BLE001 -- the reference kernel reports it
                pass
        return slow(x, condition)[0]
    return single


def feature_shape(data_shape: tuple, count: int) -> tuple:
    """ArrayFeatureExtractor's result shape as the reference gives it: data's leading axes
    and the count of indices; a vector's picks are one row (`(1, count)`)."""
    return (1, count) if len(data_shape) == 1 else data_shape[:-1] + (count,)


def array_feature_extractor(attributes, slow):
    """ArrayFeatureExtractor (ai.onnx.ml): the reference's `data[..., index]` -- the
    elements at the indices along the last axis, a negative one counted from the end --
    reshaped to `feature_shape`, the index being the indices flattened (the reference's
    list of them: an integer array picks the same elements); for data of rank >= 1 and
    integer indices; an index out of range, or anything else, the reference kernel."""
    def single(data, indices):
        if (type(data) is _ndarray and type(indices) is _ndarray and data.ndim
                and indices.dtype.kind == "i"):
            index = indices.reshape(-1)
            try:
                return data[..., index].reshape(feature_shape(data.shape, index.shape[0]))
            except IndexError:  # the reference raises its own error
                pass
        return slow(data, indices)[0]
    return single
