"""A model compared up to names and constants: its *skeleton* (spec/51-difftest.md, "Grouping
findings").

Two minimal cases are one case when they differ only in what a program happened to draw:
tensor and node names, the values of constants and inputs (and whether a constant is an
initializer or a `Constant` node), dimensions, node order and the opset. The skeleton keeps what the model computes with: each node's operator, its integer and
string attributes (axes, directions, modes), how values flow between nodes (a value is known
by what produced it, not by its name), the element types and ranks of inputs, outputs and
constants, and, recursively, the bodies of Loop, Scan, If and OpenVINO Loop-5 (with their port
maps). Nodes that no output reads are left out. `digest` is a short hash of it.
"""
from __future__ import annotations

import hashlib
import json


def digest(model) -> str:
    """A 10-hex-digit hash of the skeleton of an ONNX ModelProto or an openvino.Model."""
    return _hash(skeleton(model))[:10]


def skeleton(model):
    """The skeleton as plain data (lists and strings): the graph's input types and, per
    output, the hash of what computes it (a node's hash covers its operator, attributes and
    the hashes of its inputs, so a value shared by two readers is hashed once)."""
    if hasattr(model, "graph"):
        return onnx_graph(model.graph, {})
    return openvino_model(model)


def _hash(data) -> str:
    return hashlib.sha1(json.dumps(data, separators=(",", ":")).encode()).hexdigest()


# ------------------------------------------------------------------------------------------
# ONNX
# ------------------------------------------------------------------------------------------


def onnx_type(t) -> str:
    """An ONNX value type without its dimensions: `float[r2]`, `seq(float[r0])`, ..."""
    kind = t.WhichOneof("value")
    if kind == "tensor_type":
        tt = t.tensor_type
        rank = f"r{len(tt.shape.dim)}" if tt.HasField("shape") else "r?"
        return f"{tt.elem_type}[{rank}]"
    if kind == "sequence_type":
        return f"seq({onnx_type(t.sequence_type.elem_type)})"
    if kind == "optional_type":
        return f"opt({onnx_type(t.optional_type.elem_type)})"
    return str(kind)


def onnx_graph(graph, outer: dict) -> list:
    """[input types, output trees]: a value's tree is what produced it (a graph input by its
    position and type, a constant by its type, a node output by the node and its input
    trees); `outer` gives the trees of values a subgraph reads from its enclosing scopes."""
    trees = dict(outer)
    for k, v in enumerate(graph.input):
        trees[v.name] = f"in{k}:{onnx_type(v.type)}"
    for t in graph.initializer:
        trees.setdefault(t.name, f"const:{t.data_type}[r{len(t.dims)}]")
    producer = {o: (node, j) for node in graph.node for j, o in enumerate(node.output) if o}

    def tree(name):
        if name == "":
            return "none"
        if name not in trees:
            if name not in producer:
                trees[name] = "unknown"
            elif _is_constant(producer[name][0]):  # a Constant node is a constant too
                trees[name] = _constant_tree(producer[name][0])
            else:
                node, j = producer[name]
                trees[name] = _hash([f"{node.domain}:{node.op_type}#{j}/{len(node.output)}",
                                     onnx_attributes(node, trees, tree),
                                     [tree(x) for x in node.input]])
        return trees[name]

    return [[onnx_type(v.type) for v in graph.input],
            [[tree(o.name), onnx_type(o.type)] for o in graph.output]]


def _is_constant(node) -> bool:
    return node.op_type == "Constant" and node.domain in ("", "ai.onnx") and any(
        a.name == "value" and a.HasField("t") for a in node.attribute)


def _constant_tree(node) -> str:
    t = next(a.t for a in node.attribute if a.name == "value")
    return f"const:{t.data_type}[r{len(t.dims)}]"


def onnx_attributes(node, trees, tree) -> list:
    """Attributes that shape the computation: ints and strings by value, floats and tensors
    by type only (constants), types as types, subgraphs by their skeletons (reading the
    enclosing values they name)."""
    from onnx import AttributeProto as A
    out = []
    for a in sorted(node.attribute, key=lambda a: a.name):
        if a.type == A.INT:
            value = a.i
        elif a.type == A.INTS:
            value = list(a.ints)
        elif a.type == A.STRING:
            value = a.s.decode(errors="replace")
        elif a.type == A.STRINGS:
            value = [s.decode(errors="replace") for s in a.strings]
        elif a.type == A.TENSOR:
            value = f"tensor:{a.t.data_type}[r{len(a.t.dims)}]"
        elif a.type == A.GRAPH:
            value = onnx_graph(a.g, _outer_trees(a.g, trees, tree))
        elif a.type == A.GRAPHS:
            value = [onnx_graph(g, _outer_trees(g, trees, tree)) for g in a.graphs]
        elif a.type == A.TYPE_PROTO:
            value = onnx_type(a.tp)
        else:  # floats: constants
            value = A.AttributeType.Name(a.type)
        out.append([a.name, value])
    return out


def _outer_trees(graph, trees, tree) -> dict:
    """The trees of the enclosing values a subgraph (and the subgraphs in it) names."""
    names = set()

    def collect(g):
        for node in g.node:
            names.update(node.input)
            for a in node.attribute:
                for sub in ([a.g] if a.HasField("g") else []) + list(a.graphs):
                    collect(sub)
        names.update(o.name for o in g.output)
    collect(graph)
    local = {v.name for v in graph.input} | {o for n in graph.node for o in n.output}
    return {n: tree(n) for n in names - local if n}


# ------------------------------------------------------------------------------------------
# OpenVINO
# ------------------------------------------------------------------------------------------


def openvino_model(model) -> list:
    """[parameter types, result trees] of an openvino.Model (a Loop's body too)."""
    params = {p.get_instance_id(): k for k, p in enumerate(model.get_parameters())}
    trees = {}

    def tree(output):
        node = output.get_node()
        key = (node.get_instance_id(), output.get_index())
        if key not in trees:
            kind = node.get_type_name()
            if kind == "Parameter":
                trees[key] = f"param{params.get(node.get_instance_id(), '?')}:" \
                             f"{_ov_type(output)}"
            elif kind == "Constant":
                trees[key] = f"const:{_ov_type(output)}"
            else:
                trees[key] = _hash([f"{kind}-{node.get_type_info().version_id}"
                                    f"#{output.get_index()}", openvino_attributes(node),
                                    [tree(v) for v in node.input_values()]])
        return trees[key]

    return [[_ov_type(p.output(0)) for p in model.get_parameters()],
            [[tree(r.input_value(0)), _ov_type(r.input_value(0))] for r in model.get_results()]]


def _ov_type(output) -> str:
    rank = output.get_partial_shape().rank
    return f"{output.get_element_type().get_type_name()}" \
           f"[r{rank.get_length() if rank.is_static else '?'}]"


def bodies(op) -> list:
    """The body models of an OpenVINO Loop or TensorIterator, or the then and else bodies of
    an If; none for any other op."""
    if op.get_type_name() == "If":
        return [op.get_then_body(), op.get_else_body()]
    return [op.get_function()] if hasattr(op, "get_function") else []


def openvino_attributes(node) -> list:
    """A node's attributes by value (a Constant's values left out), and for a loop its body
    skeleton, special ports and port map (for an If, its bodies)."""
    attributes = sorted((k, str(v)) for k, v in node.get_attributes().items())
    if node.get_type_name() == "If":
        return [attributes, [openvino_model(b) for b in bodies(node)]]
    if not hasattr(node, "get_function"):
        return attributes
    ports = [[type(d).__name__, *(getattr(d, f) for f in _PORT_FIELDS if hasattr(d, f))]
             for d in list(node.get_input_descriptions()) + list(node.get_output_descriptions())]
    special = list(node.get_special_body_ports()) if hasattr(node, "get_special_body_ports") \
        else []
    return [attributes, special, ports, openvino_model(node.get_function())]


_PORT_FIELDS = ("input_index", "output_index", "body_parameter_index", "body_value_index",
                "axis", "start", "stride", "part_size", "end", "iteration")
