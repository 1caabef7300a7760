"""The ONNX op types a model's loop and branch bodies hold (the report's `op_types`)."""
from __future__ import annotations

from typing import List


def _subgraphs(node):
    from onnx import AttributeProto
    for a in node.attribute:
        if a.type == AttributeProto.GRAPH:
            yield a.g
        elif a.type == AttributeProto.GRAPHS:
            yield from a.graphs


def _ops_inside(graph, found: set) -> None:
    for node in graph.node:
        found.add(node.op_type)
        for g in _subgraphs(node):
            _ops_inside(g, found)


def body_op_types(model) -> List[str]:
    """The distinct op types of the nodes inside Loop, Scan and If bodies (any subgraph), at
    any depth, sorted; the nodes of the main graph and of model-local functions do not count,
    the control-flow nodes inside a body do."""
    found: set = set()
    for node in model.graph.node:
        for g in _subgraphs(node):
            _ops_inside(g, found)
    return sorted(found)
