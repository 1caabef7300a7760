"""What type a kernel's value has, known from its arguments' types alone (`Kernel.gives`).

`structure/shapes` checks every element a kernel gives against its stream's type. For some
kernels the check cannot fail: given arguments that agree with their streams' types (each
element is checked when it is made, or is known to agree by this same reasoning), the
kernel's value has a dtype and shape those types decide -- an elementwise numpy function's
value has the dtype numpy resolves for its arguments' one dtype and their broadcast shape,
Identity's is its argument, a Cast's is its argument's shape in the dtype it casts to. A
kernel record states this as `gives(types)`: the `TensorType` its every value agrees with,
for arguments of these types, or None where it cannot say. The engine's compiled trips then
leave out the check of an element whose stream's type `contains` what its kernel gives
(compiled.py); everywhere else the check is made as before.

Each rule here answers only for dtypes of the kinds "biufc" (booleans and numbers): a
kernel's fast path is numpy's own for them, and other dtypes take paths these rules do not
describe.
"""
from __future__ import annotations

from typing import Callable, Optional, Sequence

import numpy as np

from .types import Shape, TensorType

NUMERIC = "biufc"  # the dtype kinds every rule here answers for


def broadcast(shapes: Sequence[Shape]) -> Shape:
    """The shape numpy's broadcasting gives arrays of these shapes, as far as the shapes
    say: None when a rank is unknown; a dimension None where it depends on a size not known
    (a dimension that is 1 or unknown beside a known size k is k: else numpy raises)."""
    if any(s is None for s in shapes):
        return None
    rank = max((len(s) for s in shapes), default=0)
    dims = []
    for column in zip(*[(1,) * (rank - len(s)) + tuple(s) for s in shapes]):
        sizes = {d for d in column if d is not None and d != 1}
        if len(sizes) == 1:
            dims.append(sizes.pop())
        elif sizes or None in column:  # sizes that cannot broadcast, or not known
            dims.append(None)
        else:
            dims.append(1)
    return tuple(dims)


def contains(outer: TensorType, inner: TensorType) -> bool:
    """Whether every value of type `inner` agrees with `outer` (`structure/shapes`): the
    same dtype, and each dimension `outer` knows known in `inner` and equal."""
    if outer.dtype != inner.dtype:
        return False
    if outer.shape is None:
        return True
    return inner.shape is not None and len(inner.shape) == len(outer.shape) and all(
        o is None or o == i for o, i in zip(outer.shape, inner.shape))


def one_dtype(types) -> Optional[np.dtype]:
    """The arguments' one dtype, of a kind the rules answer for; else None."""
    dtypes = {t.dtype for t in types}
    if len(dtypes) != 1:
        return None
    (dtype,) = dtypes
    return dtype if dtype.kind in NUMERIC else None


def of_ufunc(ufunc: np.ufunc) -> Callable:
    """A numpy ufunc with one output applied to arguments of one dtype: the dtype numpy
    resolves for them (`ufunc.resolve_dtypes`), their broadcast shape."""
    def gives(types):
        dtype = one_dtype(types)
        if dtype is None or len(types) != ufunc.nin or ufunc.nout != 1:
            return None
        try:
            out = ufunc.resolve_dtypes((dtype,) * ufunc.nin + (None,))[-1]
        except Exception:  # noqa: BLE001 -- no loop for this dtype: numpy raises, say nothing
            return None
        return TensorType(out, broadcast([t.shape for t in types]))
    return gives


def same_as_argument(kinds: str = NUMERIC) -> Callable:
    """A one-argument kernel whose value has its argument's dtype and shape, for dtypes of
    the kinds `kinds` (Identity, any number; Abs, Exp, Tanh, ... on floats, where numpy
    keeps the dtype or the kernel casts back to it)."""
    def gives(types):
        if len(types) != 1 or types[0].dtype.kind not in kinds or one_dtype(types) is None:
            return None
        return types[0]
    return gives


def cast_to(dtype: np.dtype) -> Callable:
    """A Cast to `dtype` of a number or boolean: that dtype, the argument's shape."""
    def gives(types):
        if len(types) != 1 or types[0].dtype.kind not in "biuf":
            return None
        return TensorType(dtype, types[0].shape)
    return gives


def elementwise_in(dtype_of: Callable) -> Callable:
    """A kernel applied elementwise to arguments of one dtype (a comparison, Max, Min):
    `dtype_of(their dtype)` (None: not known), their broadcast shape."""
    def gives(types):
        dtype = one_dtype(types)
        out = None if dtype is None else dtype_of(dtype)
        return None if out is None else TensorType(out, broadcast([t.shape for t in types]))
    return gives


def matrix_product(trans_a: bool = False, trans_b: bool = False) -> Callable:
    """A matrix product of arguments of one dtype of rank 2 or more (ONNX MatMul, numpy's
    `matmul`; Gemm with its transposes, of rank 2, a third argument added in place): their
    dtype, the broadcast of their leading dimensions, then A's rows and B's columns."""
    def gives(types):
        a, b = types[:2]
        if a.dtype != b.dtype or a.dtype.kind not in NUMERIC or a.shape is None \
                or b.shape is None or len(a.shape) < 2 or len(b.shape) < 2:
            return None
        rows = a.shape[-1] if trans_a else a.shape[-2]
        columns = b.shape[-2] if trans_b else b.shape[-1]
        lead = broadcast([a.shape[:-2], b.shape[:-2]])
        return TensorType(a.dtype, lead + (rows, columns))
    return gives


def chosen_elementwise() -> Callable:
    """A choice between two arguments of one dtype by a boolean condition, elementwise
    (ONNX Where, numpy's `where`): their dtype, the broadcast shape of all three."""
    def gives(types):
        if len(types) != 3 or types[0].dtype.kind != "b":
            return None
        dtype = one_dtype(types[1:])
        if dtype is None or dtype.kind not in "biuf":
            return None
        return TensorType(dtype, broadcast([t.shape for t in types]))
    return gives


def joined_along(axis: int) -> Callable:
    """Arrays of one dtype and one rank (at least 1) joined along `axis` (ONNX Concat,
    numpy's `concatenate`): that dtype; along the axis the sum of the sizes (unknown if one
    is), elsewhere the size some argument knows (the others have it, else numpy raises)."""
    def gives(types):
        dtype = one_dtype(types)
        shapes = [t.shape for t in types]
        if dtype is None or dtype.kind not in "biuf" or any(s is None for s in shapes):
            return None
        ranks = {len(s) for s in shapes}
        if len(ranks) != 1:
            return None
        (rank,) = ranks
        if rank == 0 or not -rank <= axis < rank:
            return None
        at = axis % rank
        dims = []
        for d, column in enumerate(zip(*shapes)):
            if d == at:
                dims.append(None if None in column else sum(column))
            else:
                known = {n for n in column if n is not None}
                dims.append(known.pop() if len(known) == 1 else None)
        return TensorType(dtype, tuple(dims))
    return gives


def taken_along(axis: int) -> Callable:
    """Integer indices taking slices of an array along `axis` (ONNX Gather, numpy's
    `take`): the array's dtype; its shape with that axis replaced by the indices' shape."""
    def gives(types):
        data, indices = types if len(types) == 2 else (None, None)
        if data is None or data.dtype.kind not in "biuf" or data.shape is None \
                or indices.shape is None or indices.dtype not in (np.int32, np.int64):
            return None
        rank = len(data.shape)
        if not -rank <= axis < rank:
            return None
        at = axis % rank
        return TensorType(data.dtype, data.shape[:at] + tuple(indices.shape)
                          + data.shape[at + 1:])
    return gives


def cast_to_like() -> Callable:
    """A cast of a number or boolean to the dtype of another (ONNX CastLike): that dtype,
    the first argument's shape."""
    def gives(types):
        if len(types) != 2 or any(t.dtype.kind not in "biuf" for t in types):
            return None
        return TensorType(types[1].dtype, types[0].shape)
    return gives


def shape_vector() -> Callable:
    """An array's whole shape as a vector (ONNX Shape with no start or end): int64, as
    many entries as the array has dimensions, where its rank is known."""
    def gives(types):
        if len(types) != 1 or types[0].shape is None:
            return None
        return TensorType(np.dtype(np.int64), (len(types[0].shape),))
    return gives


def vector_length(t: TensorType) -> Optional[int]:
    """How many entries a vector argument of type `t` has (a 0-D one counts as one), or
    None where its shape does not say."""
    if t.shape is None or len(t.shape) > 1:
        return None
    return 1 if t.shape == () else t.shape[0]


def of_rank(dtype: np.dtype, rank: Optional[int]) -> Optional[TensorType]:
    """An array of `dtype` (of a numeric or boolean kind) and `rank`, its sizes not known;
    None where the rank is not known or negative."""
    if rank is None or rank < 0 or dtype.kind not in "biuf":
        return None
    return TensorType(dtype, (None,) * rank)


def rank_from(rank_of: Callable) -> Callable:
    """A kernel whose value has its first argument's dtype and a rank `rank_of(data rank,
    the other arguments' types)` says (None: not known), its sizes not known (ONNX Reshape,
    Expand, Unsqueeze, Slice: what a shape or axes argument's values decide)."""
    def gives(types):
        if not types or types[0].shape is None:
            return None
        return of_rank(types[0].dtype, rank_of(len(types[0].shape), types[1:]))
    return gives


def reshaped(rank, others):
    """Reshape to a shape vector of n entries: rank n."""
    (shape,) = others
    return vector_length(shape) if shape.shape is not None and len(shape.shape) == 1 else None


def expanded(rank, others):
    """Expand to a shape vector of n entries: rank max(rank, n) (numpy's broadcasting)."""
    (shape,) = others
    n = vector_length(shape) if shape.shape is not None and len(shape.shape) == 1 else None
    return None if n is None else max(rank, n)


def axes_added(rank, others):
    """Unsqueeze by m axes: rank + m."""
    (axes,) = others
    m = vector_length(axes)
    return None if m is None else rank + m


def sliced(rank, others):
    """Slice: the same rank (of at least 1)."""
    return rank if rank >= 1 else None


def summed(keepdims: bool, noop_with_empty_axes: bool) -> Callable:
    """A sum of floats over axes (ONNX ReduceSum with its axes an input, or none): the same
    dtype; kept as size-1 dimensions (the same rank), or gone -- one axis given: rank - 1;
    no axes input: rank 0, or the data as it is where no axes mean no reduction. Other
    counts of axes are not described (repeated axes)."""
    def gives(types):
        data = types[0]
        if data.shape is None or data.dtype.kind != "f":
            return None
        rank = len(data.shape)
        if len(types) == 1:
            if noop_with_empty_axes:
                return data
            return TensorType(data.dtype, (1,) * rank if keepdims else ())
        m = vector_length(types[1])
        if keepdims and m is not None and m >= 1:
            return of_rank(data.dtype, rank)
        return of_rank(data.dtype, rank - 1) if m == 1 and types[1].shape == (1,) else None
    return gives
