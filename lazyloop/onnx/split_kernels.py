"""ONNX kernels that cut their input into several outputs, bound to the slicing their
reference kernels make (rule `onnx/node`).

The reference kernel of Split (opset 13 on: the sizes an input) slices its input along the
axis, one part per size (no sizes: equal parts, the last one taking what the division
leaves), each part a view of the input. Here the same slices are made, with the sizes read
once as Python integers; anything else -- sizes as an attribute (opsets before 13), an input
that is not an integer vector, numpy raising -- goes to the reference kernel, so that the
values or the error are exactly the reference's. Several outputs: the record has no
one-value form (`Kernel.single`); a one-output layer takes the first of the tuple.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from ..core.kernel import Kernel

_ndarray = np.ndarray
_WHOLE = slice(None)  # an axis of n taken whole: what slice(0, n) takes, the same view


def equal_parts(length: int, count: int) -> list:
    """Split's sizes when none are given, as the reference computes them: `count` parts of
    length // count, or, where that leaves a remainder, of length // count + 1 with the last
    part the rest."""
    if length % count == 0:
        return [length // count] * count
    sizes = [length // count + 1] * count
    sizes[-1] += length - sum(sizes)
    return sizes


def part_indexes(rank: int, axis: int, lengths: list) -> list:
    """The index of each part: `pos:pos + length` along the axis, one per length in order,
    every other axis whole."""
    index, indexes, pos = [_WHOLE] * rank, [], 0
    for length in lengths:
        index[axis] = slice(pos, pos + length)
        pos += length
        indexes.append(tuple(index))
    return indexes


def split(attributes: dict, outputs: int, slow, where: str) -> Optional[Kernel]:
    """Split 13 and 18: the parts `mat[..., pos:pos + size, ...]` along the axis, one per
    size, in order (the reference's own slices). The indexes depend on the input's rank, its
    length along the axis and the sizes alone: the node keeps the last ones it built with
    what they were built from, and builds others only when these change."""
    if "split" in attributes:  # Split 2 and 11: the sizes an attribute
        return None
    axis = attributes.get("axis", 0)
    count = attributes.get("num_outputs") or outputs
    if not isinstance(axis, int) or not isinstance(count, int) or count < 1:
        return None

    last = [((), ())]  # [(mat's rank and length along the axis, and the sizes; the indexes)]

    def call(mat, sizes=None):
        if type(mat) is _ndarray and (sizes is None or (
                type(sizes) is _ndarray and sizes.ndim == 1 and sizes.dtype.kind == "i")):
            try:
                parts = (mat.ndim, mat.shape[axis], None if sizes is None else sizes.tolist())
                built, indexes = last[0]
                if built != parts:
                    indexes = part_indexes(mat.ndim, axis, equal_parts(parts[1], count)
                                           if sizes is None else parts[2])
                    last[0] = (parts, indexes)
                return tuple([mat[index] for index in indexes])
            except Exception:  # noqa: BLE001 -- an axis out of range: the reference's
                pass
        return slow(mat) if sizes is None else slow(mat, sizes)
    call.__qualname__ = f"kernel[{where}]"
    return Kernel(call, reads_only=True, pure=True)
