"""Lowering an ONNX model onto a core network of profile "onnx".

Graph inputs become network inputs, initializers and Constant nodes constants, every other
non-control-flow node one function layer holding its bound reference kernel (`onnx/node`),
model-local functions and ONNX function ops are expanded in place (`onnx/function`), If
becomes an if-conditional (`onnx/if`), Loop and Scan become core loops (`onnx/loop`,
`onnx/scan9`, `onnx/scan8`, in loops.py). Names from enclosing graphs resolve to the enclosing
tensors, so inside a loop they are invariants (`stream/invariant`) at any depth.
"""
from __future__ import annotations

import os
from typing import Dict, List, Optional

import numpy as np
import onnx
from onnx import AttributeProto, TypeProto

from ..core.ambiguity import REGISTER, resolve
from ..core.enums import LayerType
from ..core.errors import EvaluationError, LazyLoopError, ModelError, UnsupportedError
from ..core.network import Network
from ..core.types import OpaqueType, TensorType
from . import kernels
from .infer import infer_types, subgraphs
from .types import UNKNOWN, describe, from_ll, to_ll

ONNX_DOMAINS = ("", "ai.onnx")


#: The ONNX frontend's entries of the ambiguity register (lazyloop/ambiguity.py), as
#: {id: (default reading, other readings...)}.
FRONTEND_IDS = ("A11", "A12", "A13", "A14")
FRONTEND_READINGS = {k: (REGISTER[k].default,) + tuple(r for r in REGISTER[k].readings
                                                       if r != REGISTER[k].default)
                     for k in FRONTEND_IDS}


def split_readings(readings):
    """(the caller's readings, for the core; every reading resolved)."""
    readings = dict(readings or {})
    return readings, resolve(readings)


def node_tag(node) -> str:
    """A short name for a node in tensor names: its name, else op type and first output."""
    if node.name:
        return node.name
    first = next((o for o in node.output if o), "")
    return f"{node.op_type}({first})"


def node_label(node: onnx.NodeProto) -> str:
    """How messages name an ONNX node: its op type and name (or its first output)."""
    if node.name:
        return f"{node.op_type} node {node.name!r}"
    first = next((o for o in node.output if o), "")
    return f"{node.op_type} node (output {first!r})"


class Lowering:
    """What the lowering of one model shares: the network, opsets, functions, readings."""

    def __init__(self, model: onnx.ModelProto, readings=None):
        self.model = model
        self.net = Network(profile="onnx")
        self.opsets = opsets_of(model.opset_import)
        self.functions = {(f.domain, f.name): f for f in model.functions}
        self.readings_given = dict(readings or {})
        self.core_readings, self.readings = split_readings(readings)
        self.ir_version = model.ir_version or 10
        self._names = set()

    def reading(self, ambiguity: str) -> str:
        """The chosen reading of a registered ambiguity."""
        return self.readings[ambiguity]

    def fresh(self, base: str) -> str:
        """A tensor name no other tensor of the network has."""
        name, k = base, 1
        while name in self._names:
            k += 1
            name = f"{base}#{k}"
        self._names.add(name)
        return name

    def label(self, layer, name: str, tensor_names=None):
        """Name a layer (and its outputs) after the ONNX value it computes."""
        layer.name = self.fresh(name)
        for k in range(layer.num_outputs):
            layer.get_output(k).name = layer.name if layer.num_outputs == 1 else self.fresh(
                (tensor_names or {}).get(k, f"{layer.name}:{k}"))
        return layer


def opsets_of(opset_import) -> Dict[str, int]:
    opsets = {}
    for o in opset_import:
        opsets["" if o.domain == "ai.onnx" else o.domain] = o.version
    return opsets


class Scope:
    """The values of one ONNX graph: its own, then (unless isolated, as function bodies
    are) those of the graphs that enclose it."""

    def __init__(self, low: Lowering, parent: Optional["Scope"], where: str, prefix: str,
                 in_loop: bool, opsets: Optional[Dict[str, int]] = None, isolated=False):
        self.low = low
        self.parent = parent
        self.where = where
        self.prefix = prefix
        self.in_loop = in_loop
        self.opsets = opsets if opsets is not None else (parent.opsets if parent else low.opsets)
        self.isolated = isolated
        # the CoreLoop whose body this graph is in (loops.py), inherited by nested graphs
        self.loop = parent.loop if parent is not None else None
        self.values: Dict[str, object] = {}
        self.types: Dict[str, TypeProto] = {}

    def _chain(self):
        s = self
        while s is not None:
            yield s
            s = None if s.isolated else s.parent

    def lookup(self, name: str, user: str):
        for s in self._chain():
            if name in s.values:
                return s.values[name]
        raise ModelError(user, "onnx/graph", f"reads {name!r}, which is not defined before it "
                         f"in {self.where} or any graph enclosing it",
                         "define every value before it is used (nodes in topological order)")

    def onnx_type(self, name: str) -> Optional[TypeProto]:
        for s in self._chain():
            if name in s.types:
                return s.types[name]
            if name in s.values:
                t = s.values[name]
                return from_ll(t.type) if t is not None else None
        return None

    def constant(self, name: str):
        """The value of an enclosing constant (for shape inference), else None."""
        for s in self._chain():
            if name in s.values:
                t = s.values[name]
                layer = t.producer if t is not None else None
                if layer is not None and layer.type is LayerType.CONSTANT and layer.weights.size <= 64:
                    return layer.weights
                return None
        return None

    def bind(self, name: str, tensor) -> None:
        if name:
            self.values[name] = tensor

    def stream_type(self, name: str):
        """The lazyloop type of a node output of this graph. Body values other than carried
        values and scan outputs may change shape from trip to trip (ONNX's test_loop13_seq
        slices up to the iteration number); the core holds only those two to one shape."""
        return to_ll(self.types.get(name))


# ------------------------------------------------------------------------------------------
# Models and graphs
# ------------------------------------------------------------------------------------------

def load_model(model) -> onnx.ModelProto:
    """A ModelProto from a ModelProto, serialized bytes or a path; a bad file is a ModelError."""
    if isinstance(model, onnx.ModelProto):
        return model
    if isinstance(model, (bytes, bytearray)):
        proto = onnx.ModelProto()
        try:
            proto.ParseFromString(bytes(model))
        except Exception as exc:  # noqa: BLE001 -- protobuf's DecodeError and friends
            raise ModelError("model bytes", "onnx/graph", f"not an ONNX model: {exc}",
                             "pass a valid serialized ModelProto") from None
        return proto
    if isinstance(model, (str, os.PathLike)):
        path = os.fspath(model)
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as exc:
            raise ModelError(f"model file {path!r}", "onnx/graph", f"cannot be read: {exc}",
                             "pass the path of an .onnx file") from None
        try:
            proto = onnx.load_model_from_string(data)
        except Exception as exc:  # noqa: BLE001
            raise ModelError(f"model file {path!r}", "onnx/graph",
                             f"is not a valid ONNX protobuf: {type(exc).__name__}: {exc}",
                             "pass a file written by onnx.save") from None
        if len(proto.graph.node) == 0 and len(proto.graph.output) == 0 and data:
            raise ModelError(f"model file {path!r}", "onnx/graph",
                             "parses to an empty model", "pass a file written by onnx.save")
        if any(True for _ in proto.graph.initializer if _.data_location == 1):
            try:
                onnx.load_external_data_for_model(proto, os.path.dirname(path))
            except Exception as exc:  # noqa: BLE001
                raise ModelError(f"model file {path!r}", "onnx/graph",
                                 f"external data cannot be loaded: {exc}") from None
        return proto
    raise ModelError(f"model {type(model).__name__}", "onnx/graph",
                     "is neither an onnx.ModelProto nor a path", "pass a ModelProto or a path")


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
                             f"cannot be read: {exc}") from None
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
                         "check the node against its operator's definition") from None


def lower_one_node(low: Lowering, node: onnx.NodeProto, scope: Scope, where: str) -> None:
    """Rule `onnx/node` for every node but Loop, Scan and If (which loops.py lowers)."""
    from . import loops  # loops.py lowers bodies through this module

    domain = "" if node.domain == "ai.onnx" else node.domain
    if domain == "" and node.op_type in loops.CONTROL_FLOW:
        loops.CONTROL_FLOW[node.op_type](low, node, scope, where)
        return
    if (node.domain, node.op_type) in low.functions:
        expand_function(low, node, scope, low.functions[(node.domain, node.op_type)], where)
        return
    inputs = [scope.lookup(x, where) if x else None for x in node.input]
    has_graph = any(subgraphs(a) for a in node.attribute)
    fn = None
    if not has_graph:
        try:
            fn = kernels.bind(node, scope.opsets, where)
        except LazyLoopError:
            raise
        except Exception as exc:  # noqa: BLE001 -- a kernel refusing its attributes
            raise ModelError(where, "onnx/node", f"its reference kernel refuses the node: "
                             f"{type(exc).__name__}: {exc}", "check the node's attributes") from None
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
        fn = kernels.strings_as_objects(fn, strings)
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
# If (rule onnx/if)
# ------------------------------------------------------------------------------------------

def graph_attribute(node, name: str, where: str, rule: str) -> onnx.GraphProto:
    for a in node.attribute:
        if a.name == name:
            if a.type != AttributeProto.GRAPH:
                raise ModelError(where, rule, f"attribute {name!r} is not a graph")
            return a.g
    raise ModelError(where, rule, f"has no {name!r} attribute", f"give the node its {name!r} graph")


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


def opaque_view(low: Lowering, t, name: str):
    """The same values, typed opaquely (the core checks no shape or dtype on them)."""
    layer = low.net.add_function(lambda v: (v,), [t], [OpaqueType(f"{t.type!r} (unchecked)")],
                                 op="Unchecked")
    return low.label(layer, name).get_output(0)


def lower_if(low: Lowering, node, scope: Scope, where: str) -> None:
    """Rule `onnx/if`: per element, the taken branch's outputs; only that branch is forced."""
    rule = "onnx/if"
    cond = scope.lookup(node.input[0], where) if len(node.input) and node.input[0] else None
    if cond is None:
        raise ModelError(where, rule, "has no condition input", "give If its bool condition")
    branches = [graph_attribute(node, "then_branch", where, rule),
                graph_attribute(node, "else_branch", where, rule)]
    then_outs, else_outs = (lower_branch(low, node, scope, where, kind, g)
                            for kind, g in zip(("then", "else"), branches))
    conditional = low.net.add_if_conditional()
    conditional.set_condition(as_scalar_bool(low, cond, scope.prefix + f"{node_tag(node)}/cond",
                                             where, rule))
    for k, o in enumerate(node.output):
        a, b = agreeing_branch_types(low, then_outs[k], else_outs[k],
                                     scope.prefix + f"{node_tag(node)}:{k}")
        layer = conditional.add_output(a, b)
        low.label(layer, scope.prefix + (o or f"{node_tag(node)}:{k}"))
        scope.bind(o, layer.get_output(0))
        if o:
            scope.types.setdefault(o, branches[0].output[k].type)


def lower_branch(low: Lowering, node, scope: Scope, where: str, kind: str, g) -> list:
    """A branch is a graph nested in the node's graph; its outputs."""
    if len(g.output) != len(node.output):
        raise ModelError(where, "onnx/if", f"its {kind} branch gives {len(g.output)} outputs, "
                         f"the node has {len(node.output)}", "make the arities agree")
    prefix = low.fresh(scope.prefix + node_tag(node) + f"/{kind}") + "/"
    sub = Scope(low, scope, f"{kind} branch of {where}", prefix, scope.in_loop)
    lower_initializers(low, g, sub)
    sub.types = graph_types(low, g, sub, {})
    lower_nodes(low, g.node, sub)
    return graph_outputs(g, sub, f"{kind} branch of {where}")


def agreeing_branch_types(low: Lowering, a, b, name: str):
    """If 11+ lets the branches differ in shape, rank included; where their types differ in
    rank, dtype or kind, both are typed opaquely rather than refused by the core's
    if-conditional output (`stream/shape`)."""
    if a is None or b is None:
        raise ModelError(name, "onnx/if", "a branch output is an omitted value",
                         "compute every branch output")
    ta, tb = a.type, b.type
    if isinstance(ta, TensorType) and isinstance(tb, TensorType):
        if (ta.rank, ta.dtype) == (tb.rank, tb.dtype):
            return a, b
    elif not isinstance(ta, TensorType) and not isinstance(tb, TensorType):
        return a, b
    return opaque_view(low, a, f"{name}/then"), opaque_view(low, b, f"{name}/else")


# ------------------------------------------------------------------------------------------
# The model
# ------------------------------------------------------------------------------------------

class LoweredModel:
    """A model lowered onto a network; maps user feeds and core outputs across the boundary."""

    def __init__(self, low: Lowering, inputs, defaults, outputs):
        self.network = low.net
        self.lowering = low
        self.inputs = inputs          # graph input name -> network input tensor
        self.defaults = defaults      # graph input name -> initializer value
        self.outputs = outputs        # [(graph output name, tensor)]


def lower_model(model, readings=None) -> LoweredModel:
    model = load_model(model)
    try:
        return lower_graph_of(model, readings)
    except LazyLoopError:
        raise
    except Exception as exc:  # noqa: BLE001 -- a malformed model: never a bare exception
        raise ModelError("model", "onnx/graph", f"cannot be lowered: {type(exc).__name__}: "
                         f"{exc}", "check the model with onnx.checker.check_model") from None


def lower_graph_of(model: onnx.ModelProto, readings) -> LoweredModel:
    graph = model.graph
    low = Lowering(model, readings)
    where = f"graph {graph.name or 'main'!r}"
    scope = Scope(low, None, where, "", in_loop=False)
    inputs, defaults, input_types = {}, {}, {}
    for vi in graph.input:
        if vi.name in inputs:
            raise ModelError(f"input {vi.name!r} of {where}", "onnx/graph",
                             "is declared twice", "give every graph input its own name")
        ty = to_ll(vi.type)
        if isinstance(ty, TensorType):
            t = low.net.add_input(vi.name, ty.dtype, ty.shape)
            opaque = False
        else:
            # the core's add_input takes tensors only: an opaque input is declared as a 0-D
            # object tensor and retyped (see the report: a core change would remove this)
            t = low.net.add_input(vi.name, np.dtype(object), ())
            t._input_type = ty if isinstance(ty, OpaqueType) else OpaqueType(describe(vi.type))
            opaque = True
        low._names.add(vi.name)
        inputs[vi.name] = t
        input_types[vi.name] = vi.type
        scope.bind(vi.name, t)
    for init in graph.initializer:
        if init.name in inputs:
            defaults[init.name] = onnx.numpy_helper.to_array(init)
    shadowed = onnx.GraphProto()
    shadowed.CopyFrom(graph)
    del shadowed.initializer[:]
    shadowed.initializer.extend(i for i in graph.initializer if i.name not in inputs)
    lower_initializers(low, shadowed, scope)
    scope.types = graph_types(low, shadowed, scope, input_types)
    lower_nodes(low, graph.node, scope)
    outputs = []
    for o in graph.output:
        t = scope.lookup(o.name, f"output {o.name!r} of {where}")
        if t is None:
            raise ModelError(f"output {o.name!r} of {where}", "onnx/graph",
                             "is an omitted optional value", "output a computed value")
        low.net.mark_output(t)
        outputs.append((o.name, t))
    return LoweredModel(low, inputs, defaults, outputs)
