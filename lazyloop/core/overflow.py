"""Integer overflow in arithmetic kernels: the two readings of ambiguity A30 (`stream/map`).

No source says what an integer Add, Sub, Mul, Neg or Abs gives when the exact result leaves
its dtype's range. numpy, onnxruntime and ONNX's reference evaluator wrap around (two's
complement): that is the default reading, `wrap`, and it is numpy's own kernels, bound as
they are. Under `saturate` (OpenVINO's CPU plugin on 8-bit integers, tract) the exact result
is clamped to the dtype's range. The reading is chosen when a kernel is bound (a plan is
compiled, a model lowered), never per element: `bound(fn, reading)` gives the kernel to bind.

A saturated result is computed exactly -- in int64 where every result of the operation fits
there, else in Python integers (object arrays) -- and only then clipped: never by wrapping
first. Floating-point and bool values are left to numpy unchanged.
"""
from __future__ import annotations

import numpy as np

from .kernel import Kernel, elementwise

WRAP, SATURATE = "wrap", "saturate"


def exact_dtype(fct, dtype: np.dtype):
    """A dtype in which `fct` of two `dtype` values is exact: int64 up to 16 bits, and for
    32 bits except the unsigned product (up to 2**64); Python integers otherwise."""
    if dtype.itemsize <= 2 or (dtype.itemsize == 4 and not (fct is np.multiply
                                                            and dtype.kind == "u")):
        return np.int64
    return object


def clamped(exact, dtype: np.dtype) -> np.ndarray:
    """`saturate`: an exact integer result clamped to `dtype`'s range, in `dtype`."""
    info = np.iinfo(dtype)
    return np.asarray(np.clip(exact, info.min, info.max)).astype(dtype)


def saturating(fct) -> Kernel:
    """The kernel of `fct` (a numpy add, subtract, multiply, negative or absolute) whose
    integer results saturate (A30 `saturate`), with its batched form."""
    def kernel(*args):
        arrays = [np.asarray(a) for a in args]
        dtype = np.result_type(*arrays)
        if dtype.kind not in "iu":
            return fct(*args)
        wide = exact_dtype(fct, dtype)
        return clamped(fct(*(a.astype(wide) for a in arrays)), dtype)

    kernel.__qualname__ = f"saturating_{fct.__name__}"
    return Kernel(kernel, batched=elementwise(kernel), reads_only=True)


#: numpy's wrapping integer arithmetic -> its saturating twin (built on first use)
OVERFLOWING = (np.add, np.subtract, np.multiply, np.negative, np.absolute)
_TWINS: dict = {}


def saturating_twin(fct) -> Kernel:
    """The saturating kernel of a numpy arithmetic function (the same object every time)."""
    if fct not in _TWINS:
        _TWINS[fct] = saturating(fct)
    return _TWINS[fct]


def bound(kernel: Kernel, reading: str) -> Kernel:
    """A30: the kernel to bind for `kernel` under `reading`. `wrap` keeps numpy's own (the
    kernel as it is); `saturate` swaps numpy's add, subtract, multiply, negative and
    absolute for their saturating twins; any other kernel is bound as it is."""
    if reading == SATURATE and any(kernel.function is f for f in OVERFLOWING):
        return saturating_twin(kernel.function)
    return kernel
