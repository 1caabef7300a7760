"""The integer value of an interpolating ONNX Resize: ambiguity A31 (rule `onnx/node`).

Resize computes each output element as a weighted average of input elements; for an integer
tensor the operator text does not say how that average becomes an integer. By default
(`round`) Resize is its reference kernel, bound by `kernels.bind`, which rounds to the
nearest integer (half to even) and clamps to the dtype's range. Under
`readings={"A31": "truncate"}` the lowering binds a Resize node to the same weighted average
-- the reference kernel run on the input as float64 -- truncated toward zero, then clamped:
what onnxruntime computes (spec/50, ORT-7). Float tensors are unchanged under both readings.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from ..core.kernel import Kernel
from . import kernels
from .numpy_kernels import with_single

TRUNCATE = "truncate"


def truncating_resize(node, opsets: dict, where: str, reading: str) -> Optional[Kernel]:
    """A default-domain Resize's kernel under A31 reading `truncate`; None otherwise (the
    node is bound by `kernels.bind`, as under `round`)."""
    if reading != TRUNCATE or node.op_type != "Resize" or \
            (node.domain or "") not in ("", "ai.onnx"):
        return None
    reference = kernels.bind(node, opsets, where)
    if reference is None:
        return None
    average = reference.function

    def single(x, *rest):
        if not np.issubdtype(np.asarray(x).dtype, np.integer):
            return average(x, *rest)[0]
        exact = average(np.asarray(x, np.float64), *rest)[0]
        info = np.iinfo(x.dtype)
        return np.clip(np.trunc(exact), info.min, info.max).astype(x.dtype)

    return with_single(single, where, reads_only=True)


def has_resize(model) -> bool:
    """A Resize node in the model's graph, its subgraphs or its functions: where A31 can
    change an answer."""
    def graph_has(g) -> bool:
        for node in g.node:
            if node.op_type == "Resize":
                return True
            for a in node.attribute:
                if any(graph_has(s) for s in ([a.g] if a.HasField("g") else []) + list(a.graphs)):
                    return True
        return False
    return graph_has(model.graph) or any(n.op_type == "Resize" for f in model.functions
                                         for n in f.node)


__all__ = ["truncating_resize", "has_resize", "TRUNCATE"]
