"""Static types of the values of one ONNX graph, known before anything runs (`stream/shape`).

The declared types (graph inputs, outputs, value_info) come first; ONNX's own shape inference
fills in what they leave out. A subgraph (a Loop/Scan body, an If branch, a function body) is
inferred once per lowering with the types its inputs are actually bound to and the types of
the enclosing values it reads, which ONNX's inference of the whole model does not pass down.
"""
from __future__ import annotations

from typing import Callable, Dict, Iterable, Optional

import onnx
from onnx import AttributeProto, TypeProto, helper

from .types import merge


def names_defined_and_used(nodes: Iterable[onnx.NodeProto]):
    """(defined, used) value names of `nodes` and of every subgraph inside them."""
    defined, used = set(), set()

    def walk(ns):
        for n in ns:
            used.update(x for x in n.input if x)
            defined.update(x for x in n.output if x)
            for a in n.attribute:
                for g in subgraphs(a):
                    defined.update(i.name for i in g.input)
                    defined.update(i.name for i in g.initializer)
                    used.update(o.name for o in g.output)
                    walk(g.node)

    walk(nodes)
    return defined, used


def subgraphs(attribute: AttributeProto):
    if attribute.type == AttributeProto.GRAPH:
        return [attribute.g]
    if attribute.type == AttributeProto.GRAPHS:
        return list(attribute.graphs)
    return []


# Data propagation tracks the values of shape tensors, vectors as long as a rank. Fed a large
# declared dimension, ONNX's propagation grows with it: a 4M-element carried state costs about
# a second per graph, and 2**62 makes it spin, growing memory, uninterruptible. A graph with a
# dimension past BIG_DIM (no shape vector is that long) is inferred without it (`stream/shape`);
# the declared types still hold, and the kernels see the actual values.
BIG_DIM = 2**20


def has_big_dim(graph: onnx.GraphProto) -> bool:
    """Whether a declared dimension of `graph` or of a subgraph inside it exceeds BIG_DIM."""
    for vi in list(graph.input) + list(graph.output) + list(graph.value_info):
        shape = vi.type.tensor_type.shape if vi.type.HasField("tensor_type") else None
        if shape is not None and any(d.HasField("dim_value") and abs(d.dim_value) > BIG_DIM
                                     for d in shape.dim):
            return True
    return any(has_big_dim(g) for n in graph.node for a in n.attribute for g in subgraphs(a))


def infer_types(nodes, inputs: Dict[str, Optional[TypeProto]], outputs: Dict[str, Optional[TypeProto]],
                value_info: Dict[str, TypeProto], outer_type: Callable[[str], Optional[TypeProto]],
                opsets: Dict[str, int], functions=(), ir_version: int = 10,
                outer_constant: Callable[[str], object] = lambda _n: None) -> Dict[str, TypeProto]:
    """name -> best known TypeProto for every value of a graph (declared, merged with ONNX's
    inference). `outer_type(name)` gives the type of a value of an enclosing scope and
    `outer_constant(name)` its value when it is a constant (so that, say, the axes of an
    Unsqueeze in a loop body are known)."""
    known: Dict[str, TypeProto] = {}
    for table in (inputs, value_info, outputs):
        for k, t in table.items():
            if t is not None and t.WhichOneof("value") is not None:
                known[k] = t
    defined, used = names_defined_and_used(nodes)
    free = sorted((used | set(outputs)) - defined - set(inputs))
    constants = {n: outer_constant(n) for n in free}
    constants = {n: v for n, v in constants.items() if v is not None}
    graph_inputs = []
    for name, t in list(inputs.items()) + [(n, outer_type(n)) for n in free if n not in constants]:
        vi = onnx.ValueInfoProto(name=name)
        if t is not None:
            vi.type.CopyFrom(t)
        graph_inputs.append(vi)
    graph_outputs = []
    for name, t in outputs.items():
        if name in inputs or name in free:
            continue  # a graph output that is an input: nothing to infer
        vi = onnx.ValueInfoProto(name=name)
        if t is not None:
            vi.type.CopyFrom(t)
        graph_outputs.append(vi)
    initializers = []
    for n, v in constants.items():
        try:
            initializers.append(onnx.numpy_helper.from_array(v, n))
        except Exception:  # noqa: BLE001 -- a dtype ONNX cannot store: type only
            vi = onnx.ValueInfoProto(name=n)
            t = outer_type(n)
            if t is not None:
                vi.type.CopyFrom(t)
            graph_inputs.append(vi)
    graph = helper.make_graph(list(nodes), "infer", graph_inputs, graph_outputs,
                              initializer=initializers)
    graph.value_info.extend(helper.make_value_info(k, t) for k, t in value_info.items()
                            if k not in inputs and k not in outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid(d, v)
                                                    for d, v in opsets.items()],
                              functions=list(functions))
    model.ir_version = max(ir_version, 3)
    try:
        inferred = onnx.shape_inference.infer_shapes(model, check_type=False, strict_mode=False,
                                                     data_prop=not has_big_dim(graph))
    except Exception:  # noqa: BLE001 -- inference is a help, not a judge: keep what is declared
        return known
    found = {vi.name: vi.type for vi in list(inferred.graph.value_info) + list(inferred.graph.output)}
    result = dict(known)
    for name, t in found.items():
        result[name] = merge(known.get(name), t)
    return result
