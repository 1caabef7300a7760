"""ONNX kernels that pick elements of their data at indices they are given, bound to one
numpy indexing of the same elements (rule `onnx/node`).

The reference kernels of GatherElements and GatherND reach their elements through several
numpy calls or a Python loop per index: GatherElements swaps the axis to the front and
`np.choose`s among the data's slices (wrapping indices past the end), GatherND collects
the element at each row of indices one by one. Where the indices lie within the data and
the shapes are the ones the operator's text describes, both pick exactly the elements one
numpy indexing picks -- `np.take_along_axis` for GatherElements, the index columns as a
tuple for GatherND -- and copy them, in the data's dtype; these are made directly. Anything
else -- an index past the end (which the reference wraps or refuses), shapes the reference
checks or reads its own way, numpy raising -- is handed to the reference kernel, so that the
value or the error is exactly the reference's.
"""
from __future__ import annotations

import functools

import numpy as np

_ndarray = np.ndarray
NUMBERS = "biufc"


def choices_numpy_chooses() -> int:
    """How many choices `np.choose` takes (63 from numpy 2, 31 before): the reference's
    GatherElements picks among the data's slices along the axis with it, and reads indices
    its own way for more slices (or refuses)."""
    for count in (63, 31):
        try:
            np.choose(np.zeros(1, np.intp), np.zeros((count, 1)))
            return count
        except ValueError:
            continue
    return 0


def along_axis(data, indices, axis: int):
    """`np.take_along_axis(data, indices, axis)` for indices of data's shape but along the
    axis: the one indexing take_along_axis builds -- `indices` along the axis, each
    position's own coordinate (`coordinates`, kept per shape) along the others. Where every
    other axis of the data has length 1, the data's elements in order are the ones along
    the axis, and the element at each index is that of the flat data."""
    if data.size == data.shape[axis]:
        return data.reshape(-1)[indices]
    around = coordinates(data.shape, axis)
    return data[around[:axis] + (indices,) + around[axis + 1:]]


@functools.lru_cache(maxsize=256)
def coordinates(shape: tuple, axis: int) -> tuple:
    """For an array of `shape`, each position's own coordinate along every axis but `axis`
    (None there): `np.arange(n)` along that axis, of length 1 along the others, so that
    with an index array along `axis` they broadcast to the positions' shape. Read-only,
    kept per shape and axis."""
    rank = len(shape)
    around = []
    for k, n in enumerate(shape):
        position = None if k == axis else np.arange(n).reshape((1,) * k + (n,)
                                                               + (1,) * (rank - 1 - k))
        if position is not None:
            position.setflags(write=False)
        around.append(position)
    return tuple(around)


def gather_elements(attributes, slow):
    """GatherElements: the reference's `np.choose(indices, data)` along the axis -- for
    indices in [-n, n) the element at that index of the axis (a negative one counted from
    the end, as the wrap it applies counts it), every other coordinate the index's own --
    which is what `np.take_along_axis(data, indices, axis)` picks (`along_axis`), for data and indices of
    one rank and one shape but along the axis, at most `choices_numpy_chooses()` slices
    along it, and integer indices (an index outside [-n, n): numpy raises, and the reference
    kernel wraps it). A negative axis is the reference's: it compares the shapes without
    counting the axis from the end, and refuses or reads them its own way."""
    axis = attributes.get("axis", 0)
    most = choices_numpy_chooses()

    def single(data, indices):
        if (type(data) is _ndarray and type(indices) is _ndarray and indices.size
                and data.dtype.kind in NUMBERS and indices.dtype.kind == "i"
                and data.ndim == indices.ndim and isinstance(axis, int)
                and 0 <= axis < data.ndim and data.shape[axis] <= most
                and data.shape[:axis] == indices.shape[:axis]
                and data.shape[axis + 1:] == indices.shape[axis + 1:]):
            try:
                return along_axis(data, indices, axis)
            except IndexError:  # an index past the end: the reference wraps it
                pass
        return slow(data, indices)[0]
    return single


def gather_nd(attributes, slow):
    """GatherND with no batch dimensions: the reference's element (or slice) of the data at
    each row of the indices' last axis, collected into an array of the indices' leading
    shape followed by the data's remaining axes -- what indexing the data by the tuple of
    the index columns picks (`data[idx[..., 0], idx[..., 1], ...]`: the same shape, the
    same elements, a negative index counted from the end as Python counts it), for integer
    indices of rank >= 1 with 1 to rank(data) columns (out of range: numpy raises, as the
    reference does)."""
    if attributes.get("batch_dims", 0) != 0:
        return None

    def single(data, indices):
        if (type(data) is _ndarray and type(indices) is _ndarray and indices.ndim >= 1
                and data.dtype.kind in NUMBERS and indices.dtype.kind == "i"
                and 1 <= indices.shape[-1] <= data.ndim):
            try:
                if indices.shape[-1] == 1:  # one column: the data's leading axis, by take
                    r = data.take(indices[..., 0], 0)  # (fancy indexing's elements)
                    return r if type(r) is _ndarray else np.array(r)
                columns = indices.reshape(-1, indices.shape[-1]).T
                return data[tuple(columns)].reshape(indices.shape[:-1]
                                                    + data.shape[indices.shape[-1]:])
            except IndexError:  # an index past the end: the reference's error
                pass
        return slow(data, indices)[0]
    return single
