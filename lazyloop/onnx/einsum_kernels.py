"""ONNX's Einsum bound to the contraction steps numpy's einsum makes, chosen once per shape
of its inputs (rule `onnx/node`; `array_kernels.array_kernel` binds it with the other direct
bindings).

The reference kernel calls `np.einsum(equation, *args, optimize=True)`, which on every call
searches the contraction order (`np.einsum_path`) and parses each pairwise step's equation
again. Both depend on the equation and the inputs' shapes alone: here they are made once
per shape and the same steps replayed -- the same numpy calls on the same operands, so the
same values. Other dtypes (bfloat16, summed in float32), numpy's einsum without these steps,
and numpy raising go to the reference kernel.
"""
from __future__ import annotations

import functools

import numpy as np

_ndarray = np.ndarray


def einsum(attributes, slow, arity):
    """Einsum: what the reference's `np.einsum(equation, *args, optimize=True)` does -- the
    contraction steps `np.einsum_path` chooses, each pair contracted by numpy's own pairwise
    function -- with the steps chosen once per shape of the inputs (they depend on the
    equation and the shapes alone) instead of on every call (`einsum_plan`). Where numpy's
    einsum is not made of these steps, or for other dtypes (bfloat16 is summed in float32),
    the reference kernel."""
    from numpy._core import einsumfunc
    if getattr(einsumfunc, "bmm_einsum", None) is None:
        return None
    equation = attributes.get("equation")
    if not isinstance(equation, str) or not equation.strip():
        return None
    equation, plans = equation.strip(), {}

    def single(*args):
        if all(type(a) is _ndarray and a.dtype.kind in "biufc" for a in args):
            return planned(args, tuple([a.shape for a in args]))
        return slow(*args)[0]

    def pair(a, b):  # the common case, without the loops over the arguments
        if (type(a) is _ndarray and type(b) is _ndarray and a.dtype.kind in "biufc"
                and b.dtype.kind in "biufc"):
            return planned((a, b), (a.shape, b.shape))
        return slow(a, b)[0]

    def planned(args, key):
        try:
            plan = plans.get(key)
            if plan is None:
                plan = plans[key] = einsum_plan(equation, args)
            r = plan(args)
        except Exception:  # noqa: BLE001 -- the reference kernel reports it
            return slow(*args)[0]
        return r if type(r) is _ndarray else slow(*args)[0]
    return pair if arity == 2 else single


def einsum_plan(equation: str, args):
    """The contraction of `args` (arrays of these shapes) as numpy's einsum makes it: the
    steps `np.einsum_path(..., optimize=True)` lists, each popping its operands (by the
    indices it lists) and appending their contraction -- a pair by `pairwise`, one operand
    by numpy's `c_einsum`. A single step of two operands, what a vector-matrix or
    matrix-matrix equation is, is called without the loop."""
    from numpy._core.einsumfunc import c_einsum
    steps = np.einsum_path(equation, *args, optimize=True, einsum_call=True)[1]
    shapes = [a.shape for a in args]
    calls = []
    for inds, step, _ in steps:
        these = [shapes.pop(x) for x in inds]
        calls.append((inds, pairwise(step, *these) if len(these) == 2
                      else functools.partial(c_einsum, step)))
        shapes.append(None)  # an intermediate's shape: only its position matters
    if len(calls) == 1 and calls[0][0] == (1, 0):  # numpy lists the indices downwards
        (first, second), contract = calls[0]
        return lambda operands: contract(operands[first], operands[second])

    def run(operands):
        operands = list(operands)
        for inds, contract in calls:
            operands.append(contract(*[operands.pop(x) for x in inds]))
        return operands[0]
    return run


def pairwise(step: str, shape_a, shape_b):
    """numpy's pairwise einsum (`bmm_einsum`) of `step` for operands of these shapes, with
    its equation parsed once: each operand reduced or transposed by `c_einsum` and
    reshaped where the parse says, then multiplied elementwise where no index is contracted
    or matrix-multiplied, the product reshaped and transposed where it says -- with no
    `out` and numpy's default order, which leaves the order of the product as matmul makes
    it. Where an intermediate's shape is unknown (a later step of several), numpy's own
    function, which parses per call."""
    from numpy._core import einsumfunc
    bmm, c_einsum = einsumfunc.bmm_einsum, einsumfunc.c_einsum
    parse = getattr(einsumfunc, "_parse_eq_to_batch_matmul", None)
    if parse is None or shape_a is None or shape_b is None:
        return functools.partial(bmm, step)
    eq_a, eq_b, new_a, new_b, new_ab, perm_ab, multiply_only = parse(step, shape_a, shape_b)
    combine = np.multiply if multiply_only else np.matmul

    def contract(a, b):
        if eq_a is not None:
            a = c_einsum(eq_a, a)
        if new_a is not None:
            a = a.reshape(new_a)
        if eq_b is not None:
            b = c_einsum(eq_b, b)
        if new_b is not None:
            b = b.reshape(new_b)
        ab = combine(a, b)
        if multiply_only:
            return ab
        if new_ab is not None:
            ab = ab.reshape(new_ab)
        return ab if perm_ab is None else ab.transpose(perm_ab)
    return contract
