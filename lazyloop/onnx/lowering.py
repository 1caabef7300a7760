"""Lowering an ONNX model onto a core network of profile "onnx".

Graph inputs become network inputs, initializers and Constant nodes constants, every other
non-control-flow node one function layer holding its bound reference kernel (`onnx/node`),
model-local functions and ONNX function ops are expanded in place (`onnx/function`), If
becomes an if-conditional (`onnx/if`), Loop and Scan become core loops (`onnx/loop`,
`onnx/scan9`, `onnx/scan8`). Names from enclosing graphs resolve to the enclosing tensors, so
inside a loop they are invariants (`stream/invariant`) at any depth.

This module loads the model, lowers its main graph and wires the lowerers of the control-flow
ops (loops.py, scan.py, conditional.py) into the node-by-node lowering of graph.py; scope.py
holds the state both share.
"""
from __future__ import annotations

import os

import numpy as np
import onnx

from ..core.ambiguity import REGISTER
from ..core.lowered import NO_DEFAULT, InputBinding, Lowered, OutputBinding
from ..core.errors import LazyLoopError, ModelError
from ..core.types import OpaqueType, TensorType
from .conditional import lower_if
from .graph import graph_types, lower_initializers, lower_nodes
from .loops import lower_loop
from .scan import lower_scan
from .scope import Lowering, Scope
from .typecheck import check_opsets, check_types
from .types import describe, to_ll

ONNX_DOMAINS = ("", "ai.onnx")

#: The lowerers of the default-domain ops that graph.py does not lower node by node.
CONTROL_FLOW = {"Loop": lower_loop, "If": lower_if, "Scan": lower_scan}

#: The ONNX frontend's entries of the ambiguity register (lazyloop/ambiguity.py), as
#: {id: (default reading, other readings...)}.
FRONTEND_IDS = ("A11", "A12", "A13", "A14", "A15", "A16", "A17", "A18")
FRONTEND_READINGS = {k: (REGISTER[k].default,) + tuple(r for r in REGISTER[k].readings
                                                       if r != REGISTER[k].default)
                     for k in FRONTEND_IDS}


# ------------------------------------------------------------------------------------------
# Loading a model
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
                                 f"external data cannot be loaded: {exc}",
                                 "keep the external data files beside the model file, at the "
                                 "paths its initializers name") from None
        return proto
    raise ModelError(f"model {type(model).__name__}", "onnx/graph",
                     "is neither an onnx.ModelProto nor a path", "pass a ModelProto or a path")


# ------------------------------------------------------------------------------------------
# The model
# ------------------------------------------------------------------------------------------

def lower_model(model, readings=None) -> Lowered:
    model = load_model(model)
    try:
        return lower_graph_of(model, readings)
    except LazyLoopError:
        raise
    except Exception as exc:  # noqa: BLE001 -- a malformed model: never a bare exception
        raise ModelError("model", "onnx/graph", f"cannot be lowered: {type(exc).__name__}: "
                         f"{exc}", "repair the model where onnx.checker.check_model(model, "
                         "full_check=True) reports a fault") from None


def lower_graph_of(model: onnx.ModelProto, readings) -> Lowered:
    check_opsets(model)
    check_types(model)
    graph = model.graph
    low = Lowering(model, readings, CONTROL_FLOW)
    where = f"graph {graph.name or 'main'!r}"
    scope = Scope(low, None, where, "", in_loop=False)
    inputs, defaults, input_types = {}, {}, {}
    for vi in graph.input:
        if vi.name in inputs:
            raise ModelError(f"input {vi.name!r} of {where}", "onnx/graph",
                             "is declared twice", "give every graph input its own name")
        ty = to_ll(vi.type)
        if isinstance(ty, TensorType):   # shape None: any rank is fed
            t = low.net.add_input(vi.name, ty.dtype, ty.shape)
        else:  # a sequence or optional: an opaque input, any Python value
            t = low.net.add_input(vi.name, ty if isinstance(ty, OpaqueType)
                                  else OpaqueType(describe(vi.type)))
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
        outputs.append(OutputBinding(o.name, t.name))
    bindings = tuple(InputBinding(name, t.name, t.type, default=defaults.get(name, NO_DEFAULT))
                     for name, t in inputs.items())
    return Lowered(low.net, bindings, tuple(outputs), low.readings_given, "onnx", "onnx/graph",
                   as_core_value, model, frozenset(low.readings.asked))


def as_core_value(value, binding: InputBinding):
    """A feed as the core takes it: protobuf values (TensorProto, SequenceProto,
    OptionalProto) as numpy arrays, lists and None; unicode arrays for string inputs as
    object arrays (`onnx/graph`)."""
    if value.__class__ is np.ndarray and value.dtype.kind != "U":
        return value  # the usual feed, as it is
    from onnx import numpy_helper

    if isinstance(value, onnx.TensorProto):
        value = numpy_helper.to_array(value)
    elif isinstance(value, onnx.SequenceProto):
        value = numpy_helper.to_list(value)
    elif isinstance(value, onnx.OptionalProto):
        value = numpy_helper.to_optional(value)
    ty = binding.type
    if (isinstance(value, np.ndarray) and value.dtype.kind == "U" and isinstance(ty, TensorType)
            and ty.dtype == object):
        value = value.astype(object)
    return value
