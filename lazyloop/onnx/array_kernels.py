"""ONNX kernels that move, pick or multiply array elements, bound straight to numpy (rule
`onnx/node`).

For the ops below, ONNX's reference kernel is one numpy call (`np.reshape`, `np.expand_dims`,
`np.squeeze`, `np.take`, `np.concatenate`, `np.where`, `np.array(x.shape)`, a product by
`np.ones`, `np.arange`, `x[slices]`, `np.transpose`, Flatten's `x.reshape`, `np.full`,
`np.nonzero`, `data.size`; Gemm's own product function, `gemm_kernels.py`; `np.einsum`
with its greedy contraction order, `einsum_kernels.py`; the reductions of
`reduce_kernels.py`; ScatterND's and ScatterElements' assignments, `scatter_kernels.py`;
GatherElements and GatherND, `gather_kernels.py`; CumSum, Mod, Clip and IsNaN,
`arithmetic_kernels.py`; ArgMax, ArgMin, Compress and ArrayFeatureExtractor,
`select_kernels.py`) behind a few layers of dispatch and argument handling. Here the same
call is made directly, for the common case the reference reads the same way -- the
attribute values the node has, inputs that are plain arrays of the expected kinds -- and
anything else (another case, numpy raising) is handed to the reference kernel's bound call,
so that the value or the error is exactly the reference's (`numpy_kernels.py` does the same
for elementwise ops). `ARRAY_OPS` maps an op type and input count to the function that
binds it, given the node's attributes as the reference kernel resolved them and its slow
call.
"""
from __future__ import annotations

import math

import numpy as np

from .arithmetic_kernels import clip, cum_sum, is_nan, mod
from .einsum_kernels import einsum
from .gather_kernels import gather_elements, gather_nd
from .gemm_kernels import gemm
from .reduce_kernels import extreme, reduce_mean, reduce_prod, reduce_sum, reduce_sum_square
from .scatter_kernels import scatter_elements, scatter_nd
from .select_kernels import array_feature_extractor, compress, position_of

_ndarray = np.ndarray
_index_types = (np.ndarray, np.integer)
INT64 = np.dtype(np.int64)  # numpy's one int64 dtype object: compared by identity


def reshape(attributes, slow):
    """Reshape: `np.reshape(data, shape)` (which is `data.reshape(shape)`, here given the
    shape's dimensions as a list) when the shape holds no 0 (which, unless allowzero is set,
    copies the input's dimension)."""
    allowzero = attributes.get("allowzero", 0) == 1

    def single(data, shape):
        if (type(data) is _ndarray and type(shape) is _ndarray and shape.ndim == 1
                and shape.dtype == np.int64):
            dims = shape.tolist()
            if allowzero or 0 not in dims:
                try:
                    return data.reshape(dims)
                except Exception:  # noqa: BLE001 -- the reference kernel reports it
                    pass
        return slow(data, shape)[0]
    return single


def unsqueeze(attributes, slow):
    """Unsqueeze (axes as an input): what `np.expand_dims(data, axes)` makes -- the data
    reshaped with a 1 inserted at each axis of the result, counted from the end where
    negative -- when the axes are distinct and within the result's rank."""
    def single(data, axes):
        if type(data) is _ndarray and type(axes) is _ndarray and axes.ndim <= 1 and (
                axes.dtype.kind in "iu"):
            shape = (with_one(data.shape, axes.item()) if axes.size == 1
                     else with_ones(data.shape, axes.tolist()))
            if shape is not None:
                return data.reshape(shape)
        return slow(data, axes)[0]
    return single


def with_one(shape: tuple, axis: int):
    """`with_ones` for one axis: `shape` with a 1 inserted at `axis` of the result."""
    rank = len(shape) + 1
    if axis < 0:
        axis += rank
    return shape[:axis] + (1,) + shape[axis:] if 0 <= axis < rank else None


def with_ones(shape, axes):
    """`shape` with a 1 inserted at each of `axes` of the result; None for repeated axes or
    axes outside the result's rank (the reference kernel reports those)."""
    rank = len(shape) + len(axes)
    places = sorted(a + rank if a < 0 else a for a in axes)
    if len(set(places)) != len(places) or not all(0 <= a < rank for a in places):
        return None
    result = list(shape)
    for a in places:
        result.insert(a, 1)
    return result


def expand(attributes, slow):
    """Expand: `data * np.ones(shape, dtype=data.dtype)`. The ones depend on the shape's
    values and the dtype alone: the node keeps the last ones it made (read-only, as every
    stream element is) with what they were made from, and makes others only when these
    change (an exporter's shape is a node's constant, or nearly)."""
    last = [(None, None)]  # [((the shape's dimensions, the dtype), the ones)]

    def single(data, shape):
        if (type(data) is _ndarray and type(shape) is _ndarray and shape.dtype == np.int64
                and shape.ndim == 1):
            try:
                made = (shape.tolist(), data.dtype)
                built, ones = last[0]
                if built != made:
                    ones = np.ones(made[0], dtype=data.dtype)
                    ones.setflags(write=False)
                    last[0] = (made, ones)
                return data * ones
            except Exception:  # noqa: BLE001
                pass
        return slow(data, shape)[0]
    return single


def arange(attributes, slow):
    """Range: `np.arange(start, limit, delta)` in the start's dtype (not float16 or
    bfloat16, which the reference computes in its stash type); a range numpy makes in that
    dtype already is not copied again."""
    def single(start, limit, delta):
        if (type(start) is _ndarray and type(limit) is _ndarray and type(delta) is _ndarray
                and start.dtype.kind in "iuf" and start.dtype != np.float16):
            try:
                r = np.arange(start.item(), limit.item(), delta.item())
                return r if r.dtype == start.dtype else r.astype(start.dtype)
            except Exception:  # noqa: BLE001
                pass
        return slow(start, limit, delta)[0]
    return single


def squeeze(attributes, slow):
    """Squeeze (axes as an input, opset 13 on): `np.squeeze(data, tuple(axes))`, which calls
    `data.squeeze`; with no axes, `np.squeeze(data)`: every axis of length 1 (`data.squeeze()`;
    a 0-D data is itself there, as in the reference)."""
    if "axes" in attributes:  # Squeeze 1 and 11: the axes an attribute
        return None

    def single(data, axes=None):
        if type(data) is _ndarray and axes is None:
            return data.squeeze()
        if type(data) is _ndarray and type(axes) is _ndarray and axes.ndim == 1:
            try:
                return data.squeeze(axis=tuple(axes.tolist()))
            except Exception:  # noqa: BLE001
                pass
        return slow(data)[0] if axes is None else slow(data, axes)[0]
    return single


def gather(attributes, slow):
    """Gather: `np.take(x, indices, axis)` (which calls `x.take`), the indices an array or a
    numpy integer (a Loop's iteration number is one); a scalar result made a 0-D array, as
    the bound reference kernel makes it. One index (a numpy integer or a 0-D array) along
    axis 0 picks what `x[i]` picks -- row i, counted from the end where negative, out of
    range refused -- as a view of x rather than take's copy (stream elements are read-only,
    as Slice's views are)."""
    axis = attributes.get("axis", 0)
    integer = np.integer

    def single(x, indices):
        if type(x) is _ndarray and type(indices) is _ndarray and indices.dtype is INT64:
            try:  # the usual cases: take's value of an index vector is an array
                if indices.ndim:
                    return x.take(indices, axis=axis)
                if axis == 0:  # one row: x[i], a view (a 0-D array made of an element)
                    r = x[indices.item()]
                    return r if type(r) is _ndarray else np.array(r)
            except Exception:  # noqa: BLE001
                return slow(x, indices)[0]
        if (type(x) is _ndarray and isinstance(indices, _index_types)
                and indices.dtype.kind == "i"):
            try:
                if axis == 0 and not indices.ndim:  # one row: x[i], a view
                    r = x[indices if isinstance(indices, integer) else indices.item()]
                else:
                    r = x.take(indices, axis=axis)
            except Exception:  # noqa: BLE001
                return slow(x, indices)[0]
            return r if type(r) is _ndarray else np.array(r)
        return slow(x, indices)[0]
    return single


def concat(attributes, slow):
    """Concat: `np.concatenate(args, axis)`, every input of rank >= 1 with the axis in range
    (the reference refuses the others itself)."""
    axis = attributes.get("axis")

    def single(*args):
        if isinstance(axis, int):
            for a in args:  # a loop, not all() of a generator: a frame fewer per input
                if type(a) is not _ndarray or not -a.ndim <= axis < a.ndim:
                    break
            else:
                try:
                    return np.concatenate(args, axis)
                except Exception:  # noqa: BLE001
                    pass
        return slow(*args)[0]
    return single


def where(attributes, slow):
    """Where: `np.where(condition, x, y)` for x and y of one numeric dtype; of a boolean
    0-D condition between 0-D x and y, x or y itself (the value np.where copies; stream
    elements are read-only, so the kernel's record says it passes an input on); of an x of
    one element and of no higher rank than y, and a boolean condition of y's shape (which
    is then the broadcast shape), a copy of y with x's value written where the condition
    holds (np.where's value, in one copy and one masked write rather than its broadcast of
    three operands: (1, 23) float32, 0.7 -> 0.4 us)."""
    def single(condition, x, y):
        if (type(condition) is _ndarray and type(x) is _ndarray and type(y) is _ndarray
                and x.dtype == y.dtype and x.dtype.kind in "biuf"):
            if not (condition.ndim or x.ndim or y.ndim) and condition.dtype.kind == "b":
                return x if condition.item() else y
            if (x.size == 1 and x.ndim <= y.ndim and condition.shape == y.shape
                    and condition.dtype.kind == "b"):
                r = y.copy()  # the value np.where gives: y, with x where the condition holds
                r[condition] = x.reshape(())
                return r
            try:
                r = np.where(condition, x, y)
            except Exception:  # noqa: BLE001
                return slow(condition, x, y)[0]
            return r if r.dtype == x.dtype else r.astype(x.dtype)
        return slow(condition, x, y)[0]
    return single


def constant_of_shape(attributes, slow):
    """ConstantOfShape: `np.full(tuple(shape), value)`, the value the first element of the
    attribute's one-element tensor (none: a float32 0), for a 1-D integer shape."""
    value = attributes.get("value")
    if value is None:
        fill = np.array(0, dtype=np.float32)
    elif type(value) is _ndarray and value.size == 1:
        fill = value.flat[0]
    else:  # a value of another size: the reference refuses it
        return None

    def single(shape):
        if type(shape) is _ndarray and shape.ndim == 1 and shape.dtype.kind == "i":
            try:  # what np.full does: an empty array of the value's dtype, filled with it
                r = np.empty(shape.tolist(), fill.dtype)
                r.fill(fill)
                return r
            except Exception:  # noqa: BLE001 -- a negative dimension: the reference's
                pass
        return slow(shape)[0]
    return single


def nonzero(attributes, slow):
    """NonZero: `np.vstack(np.nonzero(x))` (np.nonzero calls `x.nonzero`) in int64, for x of
    rank 1 and more (the reference counts a 0-D x's elements its own way). For such an x,
    `x.nonzero()` is one 1-D index array per axis, all of one length: vstack makes them the
    rows of one 2-D array, which is the array `np.array` makes of them (without vstack's
    layers: (24,) 2.4 -> 0.8 us); for a vector, its one index array as the one row
    (`reshape(1, -1)`: (5,) 0.45 -> 0.2 us)."""
    def single(x):
        if type(x) is _ndarray and x.ndim >= 1:
            r = x.nonzero()[0].reshape(1, -1) if x.ndim == 1 else np.array(x.nonzero())
            return r if r.dtype == np.int64 else r.astype(np.int64)
        return slow(x)[0]
    return single


def transpose(attributes, slow):
    """Transpose: `np.transpose(data, perm)`, which calls `data.transpose(perm)` (no perm, or
    an empty one: the axes reversed), for a perm of the data's rank (the reference refuses
    others itself)."""
    perm = attributes.get("perm")
    perm = tuple(perm) if perm else None

    def single(data):
        if type(data) is _ndarray and (perm is None or len(perm) == data.ndim):
            try:
                return data.transpose(perm)
            except Exception:  # noqa: BLE001 -- a repeated axis, one out of range
                pass
        return slow(data)[0]
    return single


def flatten(attributes, slow):
    """Flatten: `x.reshape(1, -1)` for axis 0, else `x.reshape(prod(shape[:axis]), -1)` (the
    reference's np.prod of the leading dimensions, an exact integer product, here
    math.prod's)."""
    axis = attributes.get("axis")
    if not isinstance(axis, int):
        return None

    def single(x):
        if type(x) is _ndarray:
            try:
                return x.reshape((1, -1) if axis == 0 else (math.prod(x.shape[:axis]), -1))
            except Exception:  # noqa: BLE001 -- an empty x: -1 fits no size
                pass
        return slow(x)[0]
    return single


def kept_value(value):
    """A value a kernel gives again and again: a read-only view of a read-only array, which
    nobody can make writable again (numpy refuses it for a view of a read-only base), so
    that no caller holding one answer can change the next."""
    value.setflags(write=False)
    view = value.view()
    view.setflags(write=False)
    return view


def shape(attributes, slow):
    """Shape: `np.array(x.shape, dtype=int64)` -- the node keeps the last one it made,
    read-only as every stream element is, and gives it again while x's shape stays (a
    stream element is never written: `stream/memo`); with a start or an end (Shape 15), the
    dimensions from start to end, the interval the reference kernel's own `_interval`
    makes of them for x's rank, found once per rank."""
    start, end = attributes.get("start", 0), attributes.get("end")
    if start in (0, None) and end is None:
        last = [(None, None)]  # [(x's shape, its Shape)]

        def single(x):
            if type(x) is _ndarray:
                dims = x.shape
                kept, made = last[0]
                if dims != kept:
                    made = kept_value(np.array(dims, dtype=np.int64))
                    last[0] = (dims, made)
                return made
            return slow(x)[0]
        return single
    from onnx.reference.ops import op_shape
    interval = getattr(getattr(op_shape, "Shape_15", None), "_interval", None)
    if interval is None:  # another onnx: its Shape kernel reads start and end itself
        return None
    intervals = {}

    def part(x):
        if type(x) is _ndarray:
            rank = x.ndim
            if rank not in intervals:
                intervals[rank] = interval(rank, start=start, end=end)
            ab = intervals[rank]
            return np.array(x.shape if ab is None else x.shape[ab[0]:ab[1]], dtype=np.int64)
        return slow(x)[0]
    return part


def size(attributes, slow):
    """Size: `np.array(data.size, dtype=int64)`, the count of data's elements."""
    def single(data):
        if type(data) is _ndarray:
            return np.array(data.size, dtype=np.int64)
        return slow(data)[0]
    return single


def _index_vector(v) -> bool:
    return type(v) is _ndarray and v.ndim == 1 and v.dtype.kind == "i"


_WHOLE = slice(None)  # an axis of n taken whole: what slice(0, n) takes, the same view


def slices_of(shape, starts, ends, axes, steps) -> tuple:
    """Slice's index as the reference builds it: one `slice(start, end, step)` per listed
    axis (the leading axes when none are listed; the pairs cut to the shortest list), every
    other axis whole."""
    steps = [None] * len(starts) if steps is None else steps
    if axes is None:
        return tuple(map(slice, starts, ends, steps))
    index = [_WHOLE] * len(shape)
    for s, e, a, d in zip(starts, ends, axes, steps):
        index[a] = slice(s, e, d)
    return tuple(index)


def slice_(attributes, slow):
    """Slice (opset 10 on: starts, ends, axes and steps are inputs): `x[slices_of(...)]` for
    1-D integer starts, ends, axes and steps; a view of `x`, as the reference's. The index
    depends on x's rank and the four lists alone: the node keeps the last one it built with
    what it was built from, and builds another only when they change (they are a node's
    constants in every exported model)."""
    last = [((), None)]  # [(x's rank and the lists, the index they give)]

    def single(x, starts, ends, axes=None, steps=None):
        if (type(x) is _ndarray and type(starts) is _ndarray and type(ends) is _ndarray
                and starts.ndim == 1 and ends.ndim == 1 and starts.dtype.kind == "i"
                and ends.dtype.kind == "i" and (axes is None or _index_vector(axes))
                and (steps is None or _index_vector(steps))):
            try:
                lists = (x.ndim, starts.tolist(), ends.tolist(),
                         None if axes is None else axes.tolist(),
                         None if steps is None else steps.tolist())
                built, index = last[0]
                if built != lists:
                    index = slices_of(x.shape, *lists[1:])
                    last[0] = (lists, index)
                return x[index]
            except Exception:  # noqa: BLE001 -- a zero step, an axis out of range
                pass
        args = (x, starts, ends) + (() if axes is None and steps is None else
                                    (axes,) if steps is None else (axes, steps))
        return slow(*args)[0]
    return single


#: (op type, number of inputs) -> binder(attributes, slow) -> one-value function or None
ARRAY_OPS = {("Reshape", 2): reshape, ("Unsqueeze", 2): unsqueeze, ("Squeeze", 2): squeeze,
             ("Expand", 2): expand, ("Range", 3): arange,
             ("Gather", 2): gather, ("Where", 3): where, ("ReduceSum", 1): reduce_sum,
             ("ReduceSum", 2): reduce_sum, ("ReduceSumSquare", 1): reduce_sum_square,
             ("ReduceSumSquare", 2): reduce_sum_square, ("ReduceMean", 1): reduce_mean,
             ("ReduceMean", 2): reduce_mean, ("ReduceProd", 1): reduce_prod,
             ("ReduceProd", 2): reduce_prod, ("ReduceMax", 1): extreme(np.maximum),
             ("ReduceMax", 2): extreme(np.maximum), ("ReduceMin", 1): extreme(np.minimum),
             ("ReduceMin", 2): extreme(np.minimum), ("Gemm", 2): gemm, ("Gemm", 3): gemm,
             ("ScatterND", 3): scatter_nd, ("Shape", 1): shape, ("Transpose", 1): transpose,
             ("Flatten", 1): flatten, ("ConstantOfShape", 1): constant_of_shape,
             ("NonZero", 1): nonzero, ("GatherElements", 2): gather_elements,
             ("GatherND", 2): gather_nd, ("ScatterElements", 3): scatter_elements,
             ("Slice", 3): slice_, ("Slice", 4): slice_, ("Slice", 5): slice_,
             ("Squeeze", 1): squeeze, ("Size", 1): size, ("CumSum", 2): cum_sum,
             ("Mod", 2): mod, ("IsNaN", 1): is_nan, ("Clip", 1): clip, ("Clip", 2): clip,
             ("Clip", 3): clip, ("Compress", 2): compress, ("ArgMax", 1): position_of("argmax"),
             ("ArgMin", 1): position_of("argmin"),
             ("ArrayFeatureExtractor", 2): array_feature_extractor}


def array_kernel(op_type: str, arity: int, attributes: dict, slow):
    """The direct one-value function of a node, or None."""
    if op_type == "Concat" and arity >= 1:
        return concat(attributes, slow)
    if op_type == "Einsum" and arity >= 1:
        return einsum(attributes, slow, arity)
    binder = ARRAY_OPS.get((op_type, arity))
    return None if binder is None else binder(attributes, slow)
