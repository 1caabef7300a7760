"""What the lowering of one ONNX model keeps while it walks the graphs: the shared `Lowering`
state (network, opsets, model functions, chosen readings, the lowerers of control-flow ops)
and the `Scope` of values one graph sees, with the names nodes get in messages and tensors.
"""
from __future__ import annotations

from typing import Dict, Optional

import onnx
from onnx import TypeProto

from ..core.ambiguity import resolve
from ..core.enums import LayerType
from ..core.errors import ModelError
from ..core.network import Network
from .types import from_ll, to_ll


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


class Consulted(dict):
    """The chosen readings, noting which ambiguities the lowering asked about (`asked`): a
    reading of any other ambiguity lowers the model to the same network."""

    def __init__(self, readings):
        super().__init__(readings)
        self.asked = set()

    def __getitem__(self, ambiguity):
        self.asked.add(ambiguity)
        return super().__getitem__(ambiguity)


class Lowering:
    """What the lowering of one model shares: the network, opsets, functions, readings, and
    `control_flow`, the lowerer of each default-domain op that is not lowered node by node
    ({op type: lowerer(low, node, scope, where)})."""

    def __init__(self, model: onnx.ModelProto, readings=None, control_flow=None):
        self.model = model
        self.net = Network(profile="onnx")
        self.opsets = opsets_of(model.opset_import)
        self.functions = {(f.domain, f.name): f for f in model.functions}
        self.readings_given = dict(readings or {})  # as the caller gave them
        self.readings = Consulted(resolve(readings))
        self.ir_version = model.ir_version or 10
        self.control_flow = dict(control_flow or {})
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
        # the CoreLoop whose body this graph is in (coreloop.py), inherited by nested graphs
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
        """The lazyloop type of a node output of this graph: a constraint (`structure/shapes`)
        that its values may meet with different shapes from trip to trip (ONNX's
        test_loop13_seq slices up to the iteration number); only what is stacked as a scan
        output is held to one shape."""
        return to_ll(self.types.get(name))
