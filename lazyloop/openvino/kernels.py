"""One OpenVINO node evaluated from Python (rule `openvino/node`).

Ordinary ops are not re-implemented: each node is evaluated by OpenVINO's own per-node
reference evaluation, `Node.evaluate(output_tensors, input_tensors)`, bound once per node
when the model is lowered. The core applies the kernel element-wise over streams
(`stream/map`). A node whose op has no such evaluation is refused when one of its elements is
forced, with an error naming the node (OpenVINO answers "not evaluated" only at run time).
"""
from __future__ import annotations

import numpy as np
import openvino as ov

from ..core.errors import EvaluationError, UnsupportedError
from ..core.overflow import SATURATE, WRAP, saturating_twin
from .types import describe


def _as_ov_tensor(value) -> "ov.Tensor":
    array = np.asarray(value)
    if not array.flags.c_contiguous:
        array = np.ascontiguousarray(array) if array.ndim else array.copy()
    return ov.Tensor(array)  # copies: stream elements stay read-only


class NodeKernel:
    """`openvino/node`: fn(*input values) -> tuple of output values, by `node.evaluate`."""

    __slots__ = ("node", "where", "out_types", "out_shapes")

    def __init__(self, node, trusted: bool = True):
        self.node = node
        self.where = describe(node)
        self.out_types = [node.get_output_element_type(k) for k in range(node.get_output_size())]
        # Output tensors start with the declared shape when it is static (some evaluations
        # only fill a tensor of the right size) and empty otherwise (evaluate resizes them);
        # also empty when the declared shape is not `trusted` (OpenVINO inferred it from a
        # view of the inputs that lazyloop's values do not share: lowering's `unsure`).
        shapes = []
        for k in range(node.get_output_size()):
            ps = node.get_output_partial_shape(k)
            shapes.append(ps.to_shape() if ps.is_static and trusted else ov.Shape([0]))
        self.out_shapes = shapes

    def __call__(self, *values):
        check = INPUT_CHECKS.get(self.node.get_type_name())
        if check is not None:
            check(self.where, values)
        inputs = [_as_ov_tensor(v) for v in values]
        outputs = [ov.Tensor(t, ov.Shape(s)) for t, s in zip(self.out_types, self.out_shapes)]
        try:
            done = self.node.evaluate(outputs, inputs)
        except Exception as exc:  # OpenVINO's own checks refused these inputs
            raise EvaluationError(self.where, "openvino/node",
                                  f"OpenVINO's evaluation failed: {str(exc).strip()[:400]}",
                                  "check the values reaching this node") from None
        if not done:
            got = ", ".join(f"{np.asarray(v).dtype}{list(np.shape(v))}" for v in values)
            raise UnsupportedError(self.where, "openvino/node",
                                   f"OpenVINO has no per-node evaluation of this op for inputs "
                                   f"({got})",
                                   "lazyloop evaluates ordinary ops only through OpenVINO's "
                                   "Node.evaluate; replace the op or add a kernel "
                                   "(spec/40-openvino-lowering.md)")
        return tuple(np.array(t.data, copy=True) for t in outputs)

    def __repr__(self):
        return f"NodeKernel({self.where})"


def _pads_per_axis(where, values):
    """Pad-1/12: `pads_begin` and `pads_end` hold one amount per axis of the data. OpenVINO's
    Node.evaluate does not check it: handed shorter lists it reads past them and kills the
    process (spec/50 LL-5), so lazyloop refuses such values first."""
    rank = np.ndim(values[0])
    if any(np.size(p) != rank for p in values[1:3]):
        raise EvaluationError(where, "openvino/node",
                              f"Pad got pads of {np.size(values[1])} and {np.size(values[2])} "
                              f"amounts for data of rank {rank}",
                              "give pads_begin and pads_end one amount per data axis")


# Checks of input values OpenVINO's Node.evaluate omits, by op type (`openvino/node`).
INPUT_CHECKS = {"Pad": _pads_per_axis}


# Ops OpenVINO gives no per-node evaluation, with the kernel lazyloop uses instead. Each one is
# listed with its reason in spec/40-openvino-lowering.md (`openvino/node`).
def _identity(x):
    """Identity-16 (OpenVINO's ONNX reader emits it): its Node.evaluate answers "not
    evaluated"; the op's meaning is its input unchanged (the value is read-only)."""
    return (x,)


def _elu(node):
    """Elu-1: x for x > 0, alpha * (exp(x) - 1) otherwise; Node.evaluate answers "not
    evaluated" for it."""
    alpha = float(node.get_attributes()["alpha"])

    def elu(x):
        return (np.where(x > 0, x, alpha * np.expm1(x)).astype(x.dtype),)
    return elu


def _hard_sigmoid(node):
    """HardSigmoid-1: max(0, min(1, alpha * x + beta)), alpha and beta its inputs 1 and 2;
    Node.evaluate answers "not evaluated" for it."""
    def hard_sigmoid(x, alpha, beta):
        return (np.clip(alpha * x + beta, 0, 1).astype(x.dtype),)
    return hard_sigmoid


HAND_KERNELS = {"Identity": lambda node: _identity, "Elu": _elu, "HardSigmoid": _hard_sigmoid}


# A30 `saturate`: the arithmetic ops whose integer results clamp to the type's range. Under
# `wrap` they are Node.evaluate, which wraps (numpy's saturating twins would not).
SATURATING_OPS = {"Add": np.add, "Subtract": np.subtract, "Multiply": np.multiply,
                  "Negative": np.negative, "Abs": np.absolute}


def saturates(node) -> bool:
    """An integer Add/Subtract/Multiply/Negative/Abs broadcasting as numpy does (`none` only
    refuses what numpy would broadcast; `pdpd` keeps OpenVINO's own evaluation)."""
    return (node.get_type_name() in SATURATING_OPS
            and node.get_output_element_type(0).is_integral_number()
            and node.get_attributes().get("auto_broadcast", "numpy") in ("numpy", "none"))


def _saturating(node):
    """A30 `saturate`: the exact result clamped to the output type's range."""
    fct = saturating_twin(SATURATING_OPS[node.get_type_name()]).function

    def saturating(*values):
        return (fct(*values),)
    return saturating


def kernel_for(node, overflow: str = WRAP, trusted: bool = True):
    """`openvino/node`: OpenVINO's Node.evaluate, or the hand kernel where it has none, or
    under the overflow reading `saturate` (A30) a saturating kernel for integer arithmetic;
    `trusted`: whether the output shapes OpenVINO declared are those of the values."""
    if overflow == SATURATE and saturates(node):
        return _saturating(node)
    own = HAND_KERNELS.get(node.get_type_name())
    return own(node) if own is not None else NodeKernel(node, trusted)
