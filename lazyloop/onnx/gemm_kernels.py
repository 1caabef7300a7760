"""ONNX's Gemm bound to the product function its reference kernel makes (rule `onnx/node`;
`array_kernels.ARRAY_OPS` lists it with the other direct bindings), and MatMul's product
(`matmul`, which `numpy_kernels.direct` binds).

The reference kernel of Gemm (opset 7 on) picks one of four product functions by its
transposes and computes `alpha * A' B' + beta * C` in A's dtype. Here that function is
called directly, and its usual case -- alpha 1, beta 0 or 1, 2-D float32 or float64
operands of one dtype -- is made without the steps that change no value (`unscaled`);
anything else, and numpy raising, goes to the reference kernel's bound call, so that the
value or the error is exactly the reference's.
"""
from __future__ import annotations

import numpy as np

_ndarray = np.ndarray


def gemm(attributes, slow):
    """Gemm (opset 7 on): the reference kernel's own product function for its transposes,
    `alpha * A' B' + beta * C` in A's dtype; a 0-D product made an array (`unscaled`: its
    common case without the steps that change no value)."""
    if "broadcast" in attributes:  # Gemm 6 and older: the reference's own handling
        return None
    from onnx.reference.ops.op_gemm import _gemm00, _gemm01, _gemm10, _gemm11
    trans_a, trans_b = attributes.get("transA"), attributes.get("transB")
    alpha, beta = attributes.get("alpha"), attributes.get("beta")
    product = (_gemm11 if trans_b else _gemm10) if trans_a else (_gemm01 if trans_b else _gemm00)

    def single(a, b, c=None):
        if type(a) is _ndarray and type(b) is _ndarray and (c is None or type(c) is _ndarray):
            try:
                r = product(a, b, c, alpha, beta)
                if r.dtype != a.dtype:
                    r = r.astype(a.dtype)
            except Exception:  # noqa: BLE001
                return slow(a, b)[0] if c is None else slow(a, b, c)[0]
            return r if type(r) is _ndarray else np.array(r)
        return slow(a, b)[0] if c is None else slow(a, b, c)[0]
    if alpha == 1.0 and beta in (0.0, 1.0):
        return unscaled(trans_a, trans_b, beta, single)
    return single


#: the dtypes Gemm's product keeps as they are (`unscaled`)
SINGLE_AND_DOUBLE = (np.dtype(np.float32), np.dtype(np.float64))


def unscaled(trans_a, trans_b, beta, general):
    """Gemm's product with alpha 1 and beta 0 or 1, for 2-D A and B and a C of their one
    dtype, float32 or float64: the reference's `np.dot(A', B')`, plus C unless beta is 0 --
    without its `* alpha` on the product and `* beta` on C (alpha and beta are float32
    scalars: times 1.0 a float32 or float64 keeps its dtype and value, so the product, a new
    array, is left as it is and C is added as it is) and its `astype` to A's dtype, which the
    product already has. Other arguments (float16, which times a float32 becomes float32),
    and numpy raising, go to `general`, the reference's product function.
    A 1-D C is added as the one-row matrix `C[None]`: against the 2-D product that is the
    same row added to every row, as broadcasting C itself does, but numpy adds operands of
    one rank without its broadcasting set-up (an LSTM cell's (1, 16) + (16,): the bound call
    1.4 -> 1.2 us). The product is A's `dot` method: the matrix product np.dot makes, by the
    same call, without np.dot's array-function dispatch ((1, 4) by (4, 4): 0.6 -> 0.3 us)."""
    add = np.add
    adds = beta != 0

    def fast(a, b, c=None):
        if (type(a) is _ndarray and type(b) is _ndarray and a.ndim == 2 and b.ndim == 2
                and a.dtype in SINGLE_AND_DOUBLE and b.dtype == a.dtype
                and (c is None or (type(c) is _ndarray and c.dtype == a.dtype))):
            try:
                o = (a.T if trans_a else a).dot(b.T if trans_b else b)
                if c is not None and adds:
                    add(o, c[None] if c.ndim == 1 else c, o)  # in place: o is new
                return o
            except Exception:  # noqa: BLE001 -- a C that does not fit: the reference's
                pass
        return general(a, b, c)
    return fast


def matmul(a, b):
    """The reference's `numpy_matmul`: `np.dot(a, b)` for operands of rank 2 or less --
    here a's `dot` method, the same product without np.dot's array-function dispatch --
    else `np.matmul`, then cast to a's dtype where the product has another (MatMul, rule
    `onnx/node`; a refusal re-raised by the caller's reference kernel, with its message)."""
    res = a.dot(b) if a.ndim <= 2 and b.ndim <= 2 else np.matmul(a, b)
    return res if res.dtype == a.dtype else res.astype(a.dtype)
