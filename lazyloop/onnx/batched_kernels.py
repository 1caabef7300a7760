"""Batched forms of ONNX reference kernels that are not bound straight to numpy.

The fast path batches a map over an iterated axis when its kernel has a batched form
(its `Kernel.batched`, rule `stream/map`): applied once to the stacked elements (the batch
axis first), it must give, for each element, the value the kernel gives for that element
alone. `batch.map_batch` also checks element 0 against the kernel, bit for bit, and drops
the batch when they differ. For the ops below the batched form is the reference kernel itself
(`onnx/node`), called on the stacked elements with the node's axes moved past the batch axis:

* elementwise ops (Cast, Erf, Sqrt, Where, Clip, ...): each output element depends only on
  the input elements at its position, so the kernel applied to the stack -- stacked
  arguments aligned against the invariants as one element would be -- is the stack of
  results;
* layout ops that keep the order of the values (Reshape, Flatten, Squeeze, Unsqueeze): each
  element's result is its values in the same order in another shape, so the stack of
  results is the stack reshaped to (batch,) + element 0's result shape;
* Transpose: the permutation, each axis one further, with the batch axis kept first;
* reductions whose axes are an input: the same reduction over the axes one further (the
  numpy reduction the kernel is bound to, where it has one, `reduce_kernels`).

A kernel that raises on the stack, or whose axes cannot be shifted (no axes: every axis,
which would include the batch axis), has no batched form there (`NotBatchable`): the
elements are computed one by one, as before.
"""
from __future__ import annotations

from typing import Callable, Optional

import numpy as np

from ..core.kernel import Kernel, NotBatchable, elementwise
from .array_kernels import array_kernel
from .numpy_kernels import attributes_of

ELEMENTWISE = frozenset((
    "Cast", "Erf", "Sqrt", "Log", "Reciprocal", "Softplus", "HardSigmoid", "HardSwish",
    "LeakyRelu", "Elu", "Selu", "Celu", "ThresholdedRelu", "Not", "IsNaN", "IsInf", "Round",
    "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "Mish", "Gelu",
    "BitwiseNot", "Where", "Clip", "Mod", "PRelu", "And", "Or", "Xor", "BitwiseAnd",
    "BitwiseOr", "BitwiseXor"))
SAME_ORDER = frozenset(("Reshape", "Flatten", "Squeeze", "Unsqueeze"))
REDUCTIONS = frozenset(("ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd",
                        "ReduceL1", "ReduceL2", "ReduceSumSquare", "ReduceLogSum",
                        "ReduceLogSumExp"))


def first(slow):
    return lambda *args: slow(*args)[0]


def only_first_stacked(flags):
    if not flags[0] or any(flags[1:]):
        raise NotBatchable("only the data input may be stacked")


def not_of_half_scalars(form):
    """An elementwise form that does not batch float16 0-D elements: numpy computes a 0-D
    float16 value by another path than an array's, and the two differ -- arcsin and arccos
    of a value out of [-1, 1] are a positive NaN 0-D and a negative NaN in an array (numpy
    2.4, found by the kernel law) -- so the stack's bits would not be the elements' own."""
    def batched(args, flags):
        if any(f and a.ndim == 1 and a.dtype == np.float16 for a, f in zip(args, flags)):
            raise NotBatchable("float16 0-D elements: numpy's scalar path is not its arrays'")
        return form(args, flags)
    return batched


def same_order(slow):
    """Reshape-like: element 0's result shape, then the stack in that shape."""
    def batched(args, flags):
        only_first_stacked(flags)
        stack = args[0]
        one = slow(stack[0], *args[1:])[0]
        return stack.reshape((stack.shape[0],) + np.shape(one))
    return batched


def transpose(perm):
    def batched(args, flags):
        only_first_stacked(flags)
        stack = args[0]
        axes = perm if perm else tuple(reversed(range(stack.ndim - 1)))
        return np.transpose(stack, (0,) + tuple(int(p) % (stack.ndim - 1) + 1 for p in axes))
    return batched


def reduction(single):
    """The reduction over the axes input, each axis one further (`single`: the kernel's
    one-value call)."""
    def batched(args, flags):
        only_first_stacked(flags)
        stack, axes = args[0], args[1]
        if axes is None or np.size(axes) == 0:
            raise NotBatchable("a reduction over every axis would reduce the batch axis")
        rank = stack.ndim - 1
        shifted = np.array([int(a) % rank + 1 for a in np.ravel(axes).tolist()], np.int64)
        return single(stack, shifted, *args[2:])
    return batched


def batched_form(op_type: str, arity: int, kernel, slow) -> Optional[Callable]:
    """The batched form of a default-domain node's reference kernel, or None."""
    form = None
    if op_type in ELEMENTWISE:
        form = not_of_half_scalars(elementwise(first(slow)))
    elif op_type in SAME_ORDER:
        form = same_order(slow)
    elif op_type == "Transpose" and arity == 1:
        form = transpose(tuple(getattr(kernel, "perm", None) or ()))
    elif op_type in REDUCTIONS and arity == 2:
        form = reduction(one_value(op_type, arity, kernel, slow))
    return None if form is None else refusing(form)


def one_value(op_type: str, arity: int, kernel, slow) -> Callable:
    """The one-value call of a reduction: its direct numpy binding where it has one (the
    numpy reduction the reference kernel makes, `reduce_kernels`), else the reference
    kernel's value."""
    fast = array_kernel(op_type, arity, attributes_of(kernel), slow)
    return first(slow) if fast is None else fast


def refusing(form):
    """A batched form that the kernel refuses on the stack has none (that stream only)."""
    def batched(args, flags):
        try:
            return form(args, flags)
        except NotBatchable:
            raise
        except Exception as exc:  # noqa: BLE001 -- per element, the kernel reports it
            raise NotBatchable(f"the kernel refuses the stack: {exc}") from None
    return batched


def with_batched(slow: Callable, form: Callable) -> Kernel:
    """The bound kernel's record: its call, its one-value form `single` (what a one-output
    layer calls) and the batched form; an op with a batched form is `pure` (elementwise,
    layout and reduction ops: the value depends on the inputs alone)."""
    return Kernel(slow, single=first(slow), batched=form, pure=True)
