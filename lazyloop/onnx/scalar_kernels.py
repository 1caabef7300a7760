"""ONNX elementwise kernels on 0-D arrays, bound to scalar arithmetic (rule `onnx/node`).

A loop whose carried values are 0-D -- a counter, a flag, a scalar state, as jax2onnx's
`while_loop`, paddle's and torch's loops write them -- calls each elementwise kernel on 0-D
arrays, where a numpy ufunc's dispatch costs several times the arithmetic. For the ops and
dtypes below, the value a reference kernel gives on 0-D inputs of one dtype is the value of
the same operation on the scalars those arrays hold, made a 0-D array of the reference's
dtype: comparisons of floats by numpy's scalar comparison (IEEE: a NaN unequal to
everything), of integers and booleans exactly; the logical operations of booleans; float
division in the dtype, and integer division where truncation toward zero (the reference's)
and Python's floor agree. (`Add`, `Sub`, `Mul` are not here: on 0-D arrays a ufunc costs
what making their result's 0-D array does.)

Each function below takes the two (or one) 0-D arrays of one dtype and returns the 0-D
result, or None where it does not promise the reference's value -- another dtype, an integer
quotient of a negative operand (the reference truncates toward zero) or by zero, numpy
raising under an error state that says so. The caller then takes its array path (the ufunc,
or the reference kernel), so the value, the warning or the error is the reference's.
`ZERO_D` maps the numpy function an array binding calls to the function that replaces it on
0-D arrays.
"""
from __future__ import annotations

import operator

import numpy as np

_array = np.array


def comparison(op):
    """Equal, Less, Greater, LessOrEqual, GreaterOrEqual: the comparison of the held values
    (floats as numpy scalars: IEEE; integers and booleans exactly), a boolean 0-D array."""
    def on_0d(a, b):
        if a.dtype.kind == "f":
            return _array(op(a[()], b[()]))
        if a.dtype.kind in "biu":
            return _array(op(a.item(), b.item()))
        return None
    return on_0d


def logical(op):
    """And, Or, Xor of booleans."""
    def on_0d(a, b):
        if a.dtype.kind == "b":
            return _array(op(a.item(), b.item()))
        return None
    return on_0d


def true_division(a, b):
    """Div of floats: the quotient in the dtype (a zero divisor gives the IEEE infinity or
    NaN, and numpy's warning, as the ufunc does)."""
    if a.dtype.kind == "f":
        try:
            return _array(a[()] / b[()])
        except ArithmeticError:  # numpy's error state says raise: the array path's
            return None
    return None


def truncating_division(a, b):
    """Div of integers: the quotient truncated toward zero -- where a >= 0 and b > 0 that is
    the floor of the exact quotient, Python's `//`; every other case is the reference's."""
    if a.dtype.kind in "iu":
        x, y = a.item(), b.item()
        if x >= 0 and y > 0:
            return _array(x // y, a.dtype)
    return None


def logical_not(x):
    """Not of a boolean."""
    if x.dtype.kind == "b":
        return _array(not x.item())
    return None


ZERO_D = {np.equal: comparison(operator.eq), np.less: comparison(operator.lt),
          np.greater: comparison(operator.gt), np.less_equal: comparison(operator.le),
          np.greater_equal: comparison(operator.ge),
          np.logical_and: logical(operator.and_), np.logical_or: logical(operator.or_),
          np.logical_xor: logical(operator.xor),
          np.divide: true_division, np.logical_not: logical_not}
