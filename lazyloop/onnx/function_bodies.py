"""The bodies that calls of functions are expanded into (rule onnx/function): the function
ONNX's schema defines for an op at the model's opset, and a function-body node with its
attribute references replaced by the values the call gives. Lowering the body in place is
graph.py's `expand_function`.
"""
from __future__ import annotations

from typing import Dict, Optional

import onnx
from onnx import AttributeProto, TypeProto

from .scope import Scope


def schema_function(node, scope: Scope, domain: str) -> Optional[onnx.FunctionProto]:
    """The function body ONNX defines for an op, when it defines one for this opset."""
    version = scope.opsets.get(domain)
    try:
        schema = onnx.defs.get_schema(node.op_type, version, domain)
    except Exception:  # noqa: BLE001
        return None
    fp = onnx.FunctionProto()
    try:
        body = _schema_body(schema, node, scope, version, fp)
    except Exception:  # noqa: BLE001 -- no usable body: the caller reports an unknown op
        return None
    if body is None:
        return None
    # the operator's attribute defaults live in its schema, not in the function body
    declared = {a.name for a in body.attribute_proto}
    for name, a in schema.attributes.items():
        if name not in declared and a.default_value.type != AttributeProto.UNDEFINED:
            default = AttributeProto()
            default.CopyFrom(a.default_value)
            default.name = name
            body.attribute_proto.append(default)
    return body


def _schema_body(schema, node, scope, version, fp):
    """The op's function body for the highest version <= the model's opset: a fixed body, or
    one built from the node and its input types (context-dependent), else None."""
    if schema.has_function:
        versions = [v for v in schema.function_opset_versions if v <= version] or [version]
        fp.ParseFromString(schema.get_function_with_opset_version(max(versions)))
        return fp
    if schema.has_context_dependent_function:
        types = [scope.onnx_type(x) if x else TypeProto() for x in node.input]
        if any(t is None for t in types):
            return None
        versions = [v for v in schema.context_dependent_function_opset_versions
                    if v <= version] or [version]
        data = schema.get_context_dependent_function_with_opset_version(
            max(versions), node.SerializeToString(), [t.SerializeToString() for t in types])
        fp.ParseFromString(data)
        return fp
    return None


def resolve_attribute_refs(node: onnx.NodeProto, values: Dict[str, AttributeProto]):
    """A copy of a function-body node with every attribute that refers to an attribute of the
    function replaced by the caller's value (or dropped when the caller gives none, so the
    op's default applies), in subgraphs too."""
    out = onnx.NodeProto()
    out.CopyFrom(node)
    del out.attribute[:]
    for a in node.attribute:
        if a.ref_attr_name:
            given = values.get(a.ref_attr_name)
            if given is None:
                continue
            b = AttributeProto()
            b.CopyFrom(given)
            b.name = a.name
            out.attribute.append(b)
            continue
        b = AttributeProto()
        b.CopyFrom(a)
        if b.type == AttributeProto.GRAPH:
            _resolve_graph(b.g, values)
        elif b.type == AttributeProto.GRAPHS:
            for g in b.graphs:
                _resolve_graph(g, values)
        out.attribute.append(b)
    return out


def _resolve_graph(graph, values):
    nodes = [resolve_attribute_refs(n, values) for n in graph.node]
    del graph.node[:]
    graph.node.extend(nodes)
