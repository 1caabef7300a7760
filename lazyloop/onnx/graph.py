"""Lowering the nodes of one ONNX graph, in order, onto the network (rule onnx/node).

Initializers and Constant nodes become constants, a call of a model-local function or of an
op ONNX defines by a function is its body lowered in place (`onnx/function`), every other
node one function layer holding its bound reference kernel. Default-domain ops named in the
lowering's `control_flow` registry (Loop, Scan, If) are handed to their lowerer, which lowers
its subgraphs back through this module; also here are the helpers those lowerers share.
"""
from __future__ import annotations

from typing import Dict, List, Optional

import numpy as np
import onnx
from onnx import AttributeProto, TypeProto

from ..core.errors import EvaluationError, LazyLoopError, ModelError, UnsupportedError
from ..core.types import TensorType
from . import kernels
from .function_bodies import resolve_attribute_refs, schema_function
from .infer import infer_types, subgraphs
from .overflow import saturating_kernel
from .resize_rounding import truncating_resize
from .scope import Lowering, Scope, node_label, node_tag, opsets_of
from .types import UNKNOWN


# ------------------------------------------------------------------------------------------
# Graphs
# ------------------------------------------------------------------------------------------

def add_constant(low: Lowering, value, name: str):
    value = np.asarray(value)
    layer = low.net.add_constant(value.shape, value)
    return low.label(layer, name).get_output(0)


def lower_initializers(low: Lowering, graph: onnx.GraphProto, scope: Scope) -> None:
    for init in graph.initializer:
        try:
            value = onnx.numpy_helper.to_array(init)
        except Exception as exc:  # noqa: BLE001
            raise ModelError(f"initializer {init.name!r} of {scope.where}", "onnx/graph",
                             f"cannot be read: {exc}", "store the initializer as a "
                             "well-formed TensorProto (dims matching its data)") from None
        scope.bind(init.name, add_constant(low, value, scope.prefix + init.name))
    if len(graph.sparse_initializer):
        raise UnsupportedError(f"{scope.where}", "onnx/graph", "has sparse initializers",
                               "densify them (onnx.numpy_helper / a Constant node)")


def graph_types(low: Lowering, graph: onnx.GraphProto, scope: Scope,
                inputs: Dict[str, Optional[TypeProto]]) -> Dict[str, TypeProto]:
    """Declared types of the graph's values, completed by ONNX's inference given `inputs`."""
    init_types = {}
    for init in graph.initializer:
        tp = TypeProto()
        tp.tensor_type.elem_type = init.data_type
        tp.tensor_type.shape.SetInParent()
        for d in init.dims:
            tp.tensor_type.shape.dim.add().dim_value = d
        init_types[init.name] = tp
    all_inputs = dict(init_types)
    all_inputs.update(inputs)
    return infer_types(graph.node, all_inputs, {o.name: o.type for o in graph.output},
                       {v.name: v.type for v in graph.value_info}, scope.onnx_type,
                       scope.opsets, low.model.functions, low.ir_version, scope.constant)


def lower_nodes(low: Lowering, nodes, scope: Scope) -> None:
    for node in nodes:
        lower_node(low, node, scope)


def graph_outputs(graph: onnx.GraphProto, scope: Scope, user: str) -> List[object]:
    return [scope.lookup(o.name, f"{user}: output {o.name!r}") for o in graph.output]


# ------------------------------------------------------------------------------------------
# Nodes
# ------------------------------------------------------------------------------------------

def lower_node(low: Lowering, node: onnx.NodeProto, scope: Scope) -> None:
    """Lower one node; whatever goes wrong is reported naming it."""
    try:
        where = f"{node_label(node)} in {scope.where}"
    except Exception:  # noqa: BLE001 -- a name that is not text
        where = f"a node in {scope.where}"
    try:
        lower_one_node(low, node, scope, where)
    except LazyLoopError:
        raise
    except Exception as exc:  # noqa: BLE001 -- a malformed node: never a bare exception
        raise ModelError(where, "onnx/graph", f"cannot be lowered: {type(exc).__name__}: {exc}",
                         f"make the node a valid {node.op_type!s:.40} of its opset "
                         "(onnx.checker.check_model names the fault)") from None


def lower_one_node(low: Lowering, node: onnx.NodeProto, scope: Scope, where: str) -> None:
    """Rule `onnx/node` for every node but Loop, Scan and If (which the lowerers registered
    in `low.control_flow` lower: loops.py, scan.py, conditional.py)."""
    domain = "" if node.domain == "ai.onnx" else node.domain
    if domain == "" and node.op_type in low.control_flow:
        low.control_flow[node.op_type](low, node, scope, where)
        return
    if (node.domain, node.op_type) in low.functions:
        expand_function(low, node, scope, low.functions[(node.domain, node.op_type)], where)
        return
    inputs = [scope.lookup(x, where) if x else None for x in node.input]
    has_graph = any(subgraphs(a) for a in node.attribute)
    fn = None
    if not has_graph:
        try:
            fn = (saturating_kernel(node, scope.opsets, where, low.reading("A30"))  # A30
                  or truncating_resize(node, scope.opsets, where, low.reading("A31"))  # A31
                  or kernels.bind(node, scope.opsets, where))
        except LazyLoopError:
            raise
        except Exception as exc:  # noqa: BLE001 -- a kernel refusing its attributes
            raise ModelError(where, "onnx/node", f"its reference kernel refuses the node: "
                             f"{type(exc).__name__}: {exc}", f"give the node the attributes "
                             f"{node.op_type!s:.40} defines, of the types it defines") from None
    if fn is None:
        body = schema_function(node, scope, domain)
        if body is not None:
            expand_function(low, node, scope, body, where)
            return
        version = scope.opsets.get(domain)
        raise UnsupportedError(where, "onnx/node",
                               f"unknown op {domain or 'ai.onnx'}:{node.op_type} (opset "
                               f"{version}): onnx.reference has no kernel for it and it has no "
                               "function body", "use ONNX operators, or add a model-local "
                               "function defining it")
    if domain == "" and node.op_type == "Constant":
        lower_constant(low, node, scope, fn, where)
        return
    types = [scope.stream_type(o) if o else UNKNOWN for o in node.output]
    strings = [k for k, t in enumerate(types) if isinstance(t, TensorType) and t.dtype == object]
    if strings:
        fn = kernels.strings_as_objects(fn.function, strings)
    layer = low.net.add_function(fn, inputs, types, op=node.op_type)
    low.label(layer, scope.prefix + (node.output[0] if len(node.output) == 1 else
                                     (node.name or node.op_type)),
              {k: scope.prefix + o for k, o in enumerate(node.output) if o})
    for k, o in enumerate(node.output):
        scope.bind(o, layer.get_output(k))


def lower_constant(low, node, scope, fn, where):
    """A Constant node is its kernel run once, at lowering time."""
    try:
        (value,) = fn()[:1]
    except LazyLoopError as exc:
        raise ModelError(where, "onnx/node", exc.problem, "fix the Constant's attribute") from None
    if not isinstance(value, np.ndarray):
        raise UnsupportedError(where, "onnx/node", f"a constant of type {type(value).__name__}",
                               "use a dense tensor value")
    scope.bind(node.output[0], add_constant(low, value, scope.prefix + node.output[0]))


# ------------------------------------------------------------------------------------------
# Functions (rule onnx/function)
# ------------------------------------------------------------------------------------------

def expand_function(low: Lowering, node, scope: Scope, fn: onnx.FunctionProto, where: str):
    """Rule `onnx/function`: a call is its body, lowered in place with the formal inputs bound
    to the actual ones and attribute references resolved; the body sees nothing else."""
    values = {a.name: a for a in fn.attribute_proto}  # defaults
    values.update({a.name: a for a in node.attribute})
    opsets = dict(scope.opsets)
    opsets.update(opsets_of(fn.opset_import))
    prefix = low.fresh(scope.prefix + node_tag(node)) + "/"
    inner = Scope(low, scope, f"function {fn.domain}:{fn.name} called by {where}", prefix,
                  scope.in_loop, opsets=opsets, isolated=True)
    if len(node.input) > len(fn.input):
        raise ModelError(where, "onnx/function", f"gives {len(node.input)} inputs, function "
                         f"{fn.name!r} takes {len(fn.input)}", "match the function signature")
    input_types = {}
    for k, formal in enumerate(fn.input):
        actual = node.input[k] if k < len(node.input) else ""
        inner.bind(formal, scope.lookup(actual, where) if actual else None)
        input_types[formal] = scope.onnx_type(actual) if actual else None
    body = [resolve_attribute_refs(n, values) for n in fn.node]
    inner.types = infer_types(body, input_types, {o: None for o in fn.output},
                              {v.name: v.type for v in fn.value_info}, lambda _n: None,
                              opsets, low.model.functions, low.ir_version)
    lower_nodes(low, body, inner)
    if len(node.output) > len(fn.output):
        raise ModelError(where, "onnx/function", f"has {len(node.output)} outputs, function "
                         f"{fn.name!r} gives {len(fn.output)}", "match the function signature")
    for k, o in enumerate(node.output):
        if o:
            scope.bind(o, inner.lookup(fn.output[k], where))
            scope.types.setdefault(o, inner.types.get(fn.output[k]) or TypeProto())


# ------------------------------------------------------------------------------------------
# What the lowerers of Loop, Scan and If share
# ------------------------------------------------------------------------------------------

def graph_attribute(node, name: str, where: str, rule: str) -> onnx.GraphProto:
    for a in node.attribute:
        if a.name == name:
            if a.type != AttributeProto.GRAPH:
                raise ModelError(where, rule, f"attribute {name!r} is not a graph",
                                 f"make {name!r} a GRAPH attribute holding the subgraph")
            return a.g
    raise ModelError(where, rule, f"has no {name!r} attribute", f"give the node its {name!r} graph")


def body_attribute(low: Lowering, node, where: str, rule: str) -> onnx.GraphProto:
    """A Loop's or Scan's body as the node binds it (`onnx/graph`). In models of IR version 3
    or below a subgraph may list its own initializers among its inputs, after the inputs the
    node binds (ONNX's IR, "Names Within a Graph"): those trailing inputs are not bound by the
    node, their initializers give their values. From IR version 4 on they are inputs."""
    body = graph_attribute(node, "body", where, rule)
    if low.ir_version >= 4:
        return body
    constants = {init.name for init in body.initializer}
    bound = len(body.input)
    while bound and body.input[bound - 1].name in constants:
        bound -= 1
    if bound == len(body.input):
        return body
    trimmed = onnx.GraphProto()
    trimmed.CopyFrom(body)
    del trimmed.input[bound:]
    return trimmed


def as_scalar_bool(low: Lowering, t, name: str, where: str, rule: str):
    """A condition as the 0-D bool the core's WHILE and If take (ONNX allows [1] too)."""
    ty = t.type
    if isinstance(ty, TensorType) and ty.dtype == np.bool_ and ty.shape == ():
        return t

    def to_scalar(c):
        a = np.asarray(c)
        if a.dtype != np.bool_ or a.size != 1:
            raise EvaluationError(where, rule, f"the condition is {a.dtype}{list(a.shape)}",
                                  "give a bool tensor with one element")
        return (a.reshape(()),)

    layer = low.net.add_function(to_scalar, [t], [TensorType(np.bool_, ())], op="AsCondition")
    return low.label(layer, name).get_output(0)
