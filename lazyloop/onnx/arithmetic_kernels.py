"""ONNX kernels that compute element values -- running sums, remainders, bounds, NaN tests --
bound straight to the numpy calls their reference kernels make (rule `onnx/node`;
`array_kernels.ARRAY_OPS` lists them with the other direct bindings).

The reference kernels of CumSum, Mod, Clip (opset 11 on: the bounds inputs) and IsNaN each
make one or two numpy calls behind `run`'s layers of checks and argument handling. Here the
same calls are made on the same arrays, for the inputs the reference reads the same way --
plain arrays of numbers, CumSum's axis a 0-D integer within the data's rank, Mod's operands
of one dtype -- and anything else (another case, numpy raising) is handed to the reference
kernel's bound call, so that the value or the error is exactly the reference's.
`RESULT_TYPES` says, per op, the type a value has from its arguments' types, where the
direct path and the reference agree on it (`result_types`).
"""
from __future__ import annotations

import numpy as np

from ..core.kernel import ELLIPSIS_OUT
from ..core.result_types import elementwise_in, same_as_argument

_ndarray = np.ndarray
_accumulate = np.add.accumulate  # what ndarray.cumsum calls: (x, axis, dtype)
BOOL = np.dtype(bool)
NUMBERS = "biuf"


def _reversed(x, axis: int):
    """x read backwards along `axis`, every other axis whole: the reference's
    `x[tuple(rev_indices)]`, a view."""
    index = [slice(None)] * x.ndim
    index[axis] = slice(None, None, -1)
    return x[tuple(index)]


def _shifted(x, axis: int):
    """The exclusive running sum as the reference makes it: zeros of x's shape and dtype,
    and along the axis from position 1 on the running sum of x without its last position
    (`np.cumsum(..., out=...)`, numpy's own accumulation dtype)."""
    head = [slice(None)] * x.ndim
    tail = [slice(None)] * x.ndim
    head[axis] = slice(0, -1)
    tail[axis] = slice(1, x.shape[axis])
    res = np.zeros(x.shape, dtype=x.dtype)
    np.cumsum(x[tuple(head)], axis=axis, out=res[tuple(tail)])
    return res


def cum_sum(attributes, slow):
    """CumSum: `np.cumsum(x, axis, dtype=x.dtype)` -- for an array of rank >= 1 its
    `cumsum` method, which calls `np.add.accumulate(x, axis, dtype)`; called here directly
    ((3,) float32: 0.8 -> 0.3 us) -- with `exclusive` the sum of the positions before each
    one (`_shifted`) and `reverse` the sums taken from the end (`_reversed` before and
    after), as the reference makes them; for a number or boolean x of rank >= 1 and a 0-D
    integer axis in [-rank, rank) (the reference refuses an axis of another rank itself)."""
    exclusive, reverse = bool(attributes.get("exclusive")), bool(attributes.get("reverse"))

    def single(x, axis):
        if (type(x) is _ndarray and type(axis) is _ndarray and axis.ndim == 0
                and axis.dtype.kind == "i" and x.dtype.kind in NUMBERS):
            a = axis.item()
            if -x.ndim <= a < x.ndim:
                a %= x.ndim
                try:
                    if not (exclusive or reverse):
                        return _accumulate(x, a, x.dtype)
                    data = _reversed(x, a) if reverse else x
                    res = _shifted(data, a) if exclusive else _accumulate(data, a, x.dtype)
                    return _reversed(res, a) if reverse else res
                except Exception:  # noqa: BLE001 -- the reference kernel reports it
                    pass
        return slow(x, axis)[0]
    return single


def mod(attributes, slow):
    """Mod: `np.fmod(a, b)` where fmod is 1 (the sign of the dividend), else `np.mod(a, b)`
    (the sign of the divisor), for number arrays of one dtype whose value keeps it (numpy's
    warnings, on a zero divisor, are the reference's too: the same call); anything else --
    operands of two dtypes, booleans, numpy raising -- the reference kernel."""
    fct = np.fmod if attributes.get("fmod") == 1 else np.mod

    def single(a, b):
        if (type(a) is _ndarray and type(b) is _ndarray and a.dtype == b.dtype
                and a.dtype.kind in "iuf"):
            try:
                r = fct(a, b, out=...) if ELLIPSIS_OUT else np.asarray(fct(a, b))
            except Exception:  # noqa: BLE001
                return slow(a, b)[0]
            if r.dtype == a.dtype:
                return r
        return slow(a, b)[0]
    return single


def clip(attributes, slow):
    """Clip (opset 11 on: the bounds are inputs, either may be missing): `np.clip(data, min,
    max)` -- which for an array is its `clip` method -- in data's dtype; with neither bound,
    data itself (as the reference returns it: the record says it passes an input on). For a
    number array and bounds that are arrays or missing; else the reference kernel."""
    if "min" in attributes or "max" in attributes:  # Clip 6: the bounds attributes
        return None

    def single(data, low=None, high=None):
        if (type(data) is _ndarray and data.dtype.kind in "iuf"
                and (low is None or type(low) is _ndarray)
                and (high is None or type(high) is _ndarray)):
            if low is None and high is None:
                return data
            try:
                r = data.clip(low, high)
            except Exception:  # noqa: BLE001
                r = None
            if r is not None:
                return r if r.dtype == data.dtype else r.astype(data.dtype)
        args = (data,) if low is None and high is None else (data, low) if high is None \
            else (data, low, high)
        return slow(*args)[0]
    return single


def is_nan(attributes, slow):
    """IsNaN: `np.isnan(x)` (out=... makes a 0-D x's answer an array) for a float array;
    else the reference kernel."""
    isnan = np.isnan

    def single(x):
        if type(x) is _ndarray and x.dtype.kind == "f":
            return isnan(x, out=...) if ELLIPSIS_OUT else np.asarray(isnan(x))
        return slow(x)[0]
    return single


def nan_test_type(attributes):
    """IsNaN of a float: booleans of its shape."""
    return elementwise_in(lambda dtype: BOOL if dtype.kind == "f" else None)


def remainder_type(attributes):
    """Mod of numbers of one dtype: that dtype, their broadcast shape."""
    return elementwise_in(lambda dtype: dtype if dtype.kind in "iuf" else None)


def running_sum_type(attributes):
    """CumSum of numbers of a known rank >= 1: the data's dtype and shape (the axis input
    says nothing more). Of a 0-D x the reference kernel's `np.cumsum` makes a vector of one,
    so nothing is said for a rank that may be 0."""
    data = same_as_argument("iuf")

    def gives(types):
        if len(types) != 2 or types[0].rank in (None, 0):
            return None
        return data(types[:1])
    return gives


#: op type -> (attributes -> `gives`): the type the direct kernel's value, and the
#: reference's, has from its arguments' types
RESULT_TYPES = {"IsNaN": nan_test_type, "Mod": remainder_type, "CumSum": running_sum_type}
