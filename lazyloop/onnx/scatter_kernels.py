"""ONNX kernels that write values into a copy of their data input, bound to the numpy
assignments their reference kernels make (rule `onnx/node`; `array_kernels.ARRAY_OPS` lists
them with the other direct bindings).

The reference kernel of ScatterND walks the index tuples of `indices` with `np.ndindex` and
assigns one slice of the copy per tuple, each through an index array turned into a tuple of
numpy integers. Here the same assignments are made in the same order, over the tuples read
once as Python integers; anything else -- another reduction, a shape the reference would
broadcast, numpy raising -- goes to the reference kernel, so that the value or the error is
exactly the reference's.
"""
from __future__ import annotations

import numpy as np

from .gather_kernels import coordinates

_ndarray = np.ndarray


def scatter_nd(attributes, slow):
    """ScatterND with no reduction: a copy of the data (`np.copy`, which keeps its memory
    order: the array's `copy(order="K")`), then, for each index tuple of `indices` in order
    (the last of a repeated tuple wins), `copy[tuple] = updates[its position]`, for integer
    indices of depth at least 1 and updates of the shape the operator gives them
    (indices.shape[:-1] + data.shape[depth:])."""
    if attributes.get("reduction") not in (None, "none"):
        return None

    def single(data, indices, updates):
        if (type(data) is _ndarray and type(indices) is _ndarray and type(updates) is _ndarray
                and indices.ndim >= 1 and indices.dtype.kind == "i"):
            depth, lead = indices.shape[-1], indices.shape[:-1]
            if 1 <= depth <= data.ndim and updates.shape == lead + data.shape[depth:]:
                try:
                    output = data.copy(order="K")  # np.copy's own call
                    rows = updates.reshape((-1,) + data.shape[depth:])
                    for k, index in enumerate(indices.reshape(-1, depth).tolist()):
                        output[tuple(index)] = rows[k]
                    return output
                except Exception:  # noqa: BLE001 -- an index out of range: the reference's
                    pass
        return slow(data, indices, updates)[0]
    return single


def scatter_elements(attributes, slow):
    """ScatterElements with no reduction and one index per line along the axis
    (`indices.shape[axis] == 1`, what an `index_put` of one column exports to): the
    reference copies the data (`np.copy`) and assigns `updates[i]` at each position i of the
    indices, with i's coordinate along the axis replaced by `indices[i]`. No two positions
    then share a target, so the order of the assignments does not matter and one numpy
    assignment makes them all: `copy[index] = updates`, the index made of `indices` along
    the axis and the positions' own coordinates (`np.arange`) along the others. For integer
    indices of the data's rank, updates of the indices' shape and the data's dtype, a
    non-negative axis; anything else (a negative axis, which the reference counts its own
    way, an index out of range) goes to the reference kernel."""
    if attributes.get("reduction") not in (None, "none"):
        return None
    axis = attributes.get("axis", 0)

    def single(data, indices, updates):
        if (type(data) is _ndarray and type(indices) is _ndarray and type(updates) is _ndarray
                and isinstance(axis, int) and 0 <= axis < data.ndim == indices.ndim
                and indices.dtype.kind == "i" and indices.shape[axis] == 1
                and updates.shape == indices.shape and updates.dtype == data.dtype):
            around = coordinates(indices.shape, axis)  # the positions' own, kept per shape
            try:
                output = data.copy(order="K")  # np.copy's own call
                output[around[:axis] + (indices,) + around[axis + 1:]] = updates
                return output
            except IndexError:  # an index past the end: the reference's error
                pass
        return slow(data, indices, updates)[0]
    return single
