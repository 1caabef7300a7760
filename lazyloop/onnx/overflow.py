"""Integer overflow in ONNX arithmetic nodes: A30's `saturate` reading (rule `onnx/node`).

By default (`wrap`) Add, Sub, Mul, Neg and Abs are their reference kernels, bound by
`kernels.bind`: numpy's, which wrap around. Under `readings={"A30": "saturate"}` the lowering
binds them to the core's saturating twins instead (`lazyloop.core.overflow`): integer results
clamped to the dtype's range, floats unchanged. The choice is made once per node, when it is
lowered. Nodes of opsets before 7 (whose Add, Sub and Mul carry legacy broadcasting
attributes) keep the reference kernel under both readings.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from ..core.kernel import Kernel
from ..core.overflow import SATURATE, saturating_twin
from .kernels import _failed
from .numpy_kernels import with_single

#: (op type, number of inputs) -> numpy's wrapping function the reference kernel calls
ARITHMETIC = {("Add", 2): np.add, ("Sub", 2): np.subtract, ("Mul", 2): np.multiply,
              ("Neg", 1): np.negative, ("Abs", 1): np.absolute}


def saturating_kernel(node, opsets: dict, where: str, reading: str) -> Optional[Kernel]:
    """The node's kernel under A30 reading `reading`: a saturating one for a default-domain
    Add/Sub/Mul/Neg/Abs of opset 7 or later when the reading is `saturate`; else None (the
    node is bound by `kernels.bind`, as under `wrap`)."""
    fct = ARITHMETIC.get((node.op_type, len(node.input)))
    if (reading != SATURATE or fct is None or (node.domain or "") not in ("", "ai.onnx")
            or node.attribute or opsets.get("", opsets.get("ai.onnx", 0)) < 7):
        return None
    saturating = saturating_twin(fct)
    clamp = saturating.function

    def single(*args):
        try:
            return clamp(*args)
        except Exception as exc:  # noqa: BLE001 -- reported as a typed error naming the node
            raise _failed(where, exc) from exc

    return with_single(single, where, reads_only=True, batched=saturating.batched)
