"""ONNX reductions bound straight to the numpy reductions their reference kernels make (rule
`onnx/node`; `array_kernels.ARRAY_OPS` lists them with the other direct bindings).

ReduceSum, ReduceSumSquare, ReduceMean, ReduceProd, ReduceMax and ReduceMin: the reference
kernel reads the axes (an input from opset 13 or 18 on; none, or an empty list, means every
axis, or none with noop_with_empty_axes) and makes one numpy reduction. Here the axes are
read the same way and the same reduction is made, for integer and float arrays; anything
else -- another case, numpy raising -- goes to the reference kernel's bound call, so that
the value or the error is exactly the reference's.
"""
from __future__ import annotations

import numpy as np

from ..core.kernel import ELLIPSIS_OUT

_ndarray = np.ndarray
#: the `out` a reduction is called with: `...` where numpy takes it (its 0-D value then an
#: array, not a numpy scalar made one after), else None
AN_ARRAY = ... if ELLIPSIS_OUT else None
_sum = np.add.reduce  # what np.sum calls for an ndarray: (x, axis, dtype, out, keepdims=)
_product = np.multiply.reduce  # what np.prod calls for an ndarray


def reduce_sum(attributes, slow):
    """ReduceSum (axes as an input, opset 13 on): `np.sum(x, axes, keepdims, dtype=x.dtype)`,
    the axes read as the reference reads them (`reduced`)."""
    if "axes" in attributes:  # ReduceSum 1 and 11: axes as an attribute
        return None
    return reduced(attributes, slow, lambda x, axis, keepdims:  # np.sum of an ndarray is this
                   _sum(x, axis, x.dtype, out=AN_ARRAY, keepdims=keepdims))


def reduce_mean(attributes, slow):
    """ReduceMean (axes as an input, opset 18 on): `np.mean(x, axes, keepdims=keepdims,
    dtype=x.dtype)`, which for an ndarray is its `mean` method, the axes read as the
    reference reads them (`reduced`)."""
    if "axes" in attributes:  # ReduceMean 1 to 13: axes as an attribute
        return None
    return reduced(attributes, slow, lambda x, axis, keepdims:
                   x.mean(axis, x.dtype, None, keepdims))


def reduce_prod(attributes, slow):
    """ReduceProd (axes as an input, opset 18 on): `np.prod(x, axes, keepdims=keepdims,
    dtype=x.dtype)`, which for an ndarray is `np.multiply.reduce`, over the axes as the
    reference reads them (`reduced`)."""
    if "axes" in attributes:  # ReduceProd 1 to 13: axes as an attribute
        return None
    return reduced(attributes, slow, lambda x, axis, keepdims:
                   _product(x, axis, x.dtype, out=AN_ARRAY, keepdims=keepdims))


def extreme(ufunc):
    """ReduceMax and ReduceMin (axes as an input, opset 18 on): `ufunc.reduce(x, axes,
    keepdims=keepdims)` (np.maximum, np.minimum) over the axes as the reference reads them
    (`reduced`), for a non-empty x (the reference fills an empty one's result with the
    dtype's least or greatest value itself)."""
    def binder(attributes, slow):
        if "axes" in attributes:  # opsets 1 to 13: axes as an attribute
            return None
        return reduced(attributes, slow, lambda x, axis, keepdims: ufunc.reduce(
            x, axis, None, out=AN_ARRAY, keepdims=keepdims) if x.size else None)
    return binder


def reduce_sum_square(attributes, slow):
    """ReduceSumSquare: `np.sum(np.square(x), axes, keepdims)`, the axes an attribute
    (opsets 1 to 13, as the kernel normalised them: None or a tuple) or an input (18 on,
    `reduced`); a 0-D sum made an array."""
    def square_sum(x, axis, keepdims):  # np.sum of an ndarray is this call
        return _sum(np.square(x), axis, None, out=AN_ARRAY, keepdims=keepdims)
    if "axes" not in attributes:
        return reduced(attributes, slow, square_sum)
    axes = attributes["axes"]
    if axes is not None and not isinstance(axes, tuple):
        return None
    keepdims = attributes.get("keepdims", 1)

    def single(x):
        r = made(square_sum, x, axes, keepdims) if type(x) is _ndarray else None
        return slow(x)[0] if r is None else r
    return single


def reduced(attributes, slow, reduce):
    """`reduce(x, axis, keepdims)` over the axes given as an input, read as the reference
    reads them (none or empty: all, or none with noop_with_empty_axes), for integer and
    float x; a 0-D result made an array; where `reduce` declines (None) or raises, the
    reference kernel."""
    keepdims = attributes.get("keepdims", 1) != 0
    every = () if attributes.get("noop_with_empty_axes", 0) else None  # no axes, or empty

    def single(x, axes=None):
        if type(x) is _ndarray and x.dtype.kind in "iuf" and (
                axes is None or type(axes) is _ndarray and axes.ndim == 1):
            try:  # `made`, in line: one frame fewer
                r = reduce(x, tuple(axes.tolist()) if axes is not None and axes.shape[0]
                           else every, keepdims)
            except Exception:  # noqa: BLE001 -- the reference kernel reports it
                r = None
            if r is not None:
                return r if type(r) is _ndarray else np.array(r)
        return slow(x)[0] if axes is None else slow(x, axes)[0]
    return single


def made(reduce, x, axis, keepdims):
    """`reduce(x, axis, keepdims)` for an integer or float x, a 0-D result made an array;
    None where x is of another kind, or `reduce` declines (None) or raises (the caller then
    hands x to the reference kernel)."""
    if x.dtype.kind not in "iuf":
        return None
    try:
        r = reduce(x, axis, keepdims)
    except Exception:  # noqa: BLE001
        return None
    return r if r is None or type(r) is _ndarray else np.array(r)
