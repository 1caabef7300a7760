"""What every exporter of a core network shares (lazyloop.onnx.export, lazyloop.openvino.export).

An export is *equivalent* to the network: on every input, wherever lazyloop says an output
position is defined, the exported model computes the same value (rule IDs: the core rules it
translates, plus `onnx/loop`, `onnx/scan9`, `openvino/loop5` for the target). Undefined
positions (CONCATENATE padding) are filled with zeros by the export; nothing may read them.
A construct with no faithful translation raises `NotExportable` (an `UnsupportedError`) naming
the layer and the reason; spec/51-difftest.md lists them.

This module holds the two export errors and `Structure`: which scope each tensor lives in, the
order in which each scope's layers and child loops can be emitted, and the cone of a WHILE
condition. The network is compiled first, so a network that breaks a structure rule is
refused with the core's own error before anything is exported.
"""
from __future__ import annotations

import heapq
from typing import Dict, List, Optional

import numpy as np

from .enums import LayerType, LoopOutput, TripLimit
from .plan import _unique_ids, compile_network
from .validate import is_ancestor_or_self
from .errors import UnsupportedError



class NotExportable(UnsupportedError):
    """The network uses a construct the target IR cannot express faithfully."""


class TargetRefused(UnsupportedError):
    """The target library refused to build a node of a valid network (for example OpenVINO's
    shape inference of a loop that runs zero trips); a limitation of the target."""


BOUNDARY = {LayerType.TRIP_LIMIT, LayerType.ITERATOR, LayerType.RECURRENCE,
            LayerType.LOOP_OUTPUT}


class Structure:
    """Scopes and emission order of a compiled network."""

    def __init__(self, net):
        self.net = net
        self.plan = compile_network(net)  # structure rules first: a bad network fails here
        self.ids = _unique_ids(net)
        self.loops = {loop.name: loop for loop in net.loops}
        self.parent = {name: lp.parent for name, lp in self.plan.loops.items()}
        self.children: Dict[Optional[str], list] = {}
        for loop in net.loops:
            self.children.setdefault(self.parent[loop.name], []).append(loop)
        self._items = {}

    # -- scopes -----------------------------------------------------------------------------
    def scope(self, tensor) -> Optional[str]:
        """The loop whose stream `tensor` is (None: outside every loop)."""
        node = self.plan.nodes.get(self.ids[id(tensor)])
        return None if node is None else node.scope

    def encloses(self, outer: Optional[str], inner: Optional[str]) -> bool:
        """True when scope `outer` is `inner` or encloses it."""
        return is_ancestor_or_self(outer, inner, self.parent)

    def layer_scope(self, layer) -> Optional[str]:
        if layer.type in BOUNDARY:
            return layer.loop.name
        outs = layer._outputs
        return self.scope(outs[0]) if outs else None

    def in_subtree(self, layer, loop_name: str) -> bool:
        return self.encloses(loop_name, self.layer_scope(layer))

    # -- emission order -----------------------------------------------------------------------
    def items(self, scope: Optional[str]) -> List[tuple]:
        """("layer", layer) and ("loop", loop) items of one scope, each after what it reads.
        Boundary layers belong to their loop's item; condition layers to their outputs."""
        if scope in self._items:
            return self._items[scope]
        owner = {}          # id(layer) -> item key, for layers that are items of this scope
        items = {}          # key -> (kind, obj, position)
        for layer in self.net.layers:
            if layer.type in BOUNDARY or layer.type is LayerType.CONDITION:
                continue
            if not layer._outputs or self.layer_scope(layer) != scope:
                continue
            key = ("layer", id(layer))
            items[key] = ("layer", layer, layer._position)
            owner[id(layer)] = key
        for loop in self.children.get(scope, []):
            key = ("loop", loop.name)
            members = self.subtree_layers(loop.name)
            position = min((m._position for m in members), default=0)
            items[key] = ("loop", loop, position)
            for out in loop.outputs:
                owner[id(out)] = key
        deps = {key: set() for key in items}
        for key, (kind, obj, _) in items.items():
            layers = [obj] if kind == "layer" else self.subtree_layers(obj.name)
            for layer in layers:
                for t in self.reads(layer):
                    p = t.producer
                    if p is None or id(p) not in owner:
                        continue
                    if owner[id(p)] != key:
                        deps[key].add(owner[id(p)])
        order = _toposort(items, deps)
        self._items[scope] = [(items[k][0], items[k][1]) for k in order]
        return self._items[scope]

    def reads(self, layer):
        """Every tensor a layer reads, including the condition of an if-conditional output."""
        ts = [t for t in layer.inputs() if t is not None]
        if layer.type is LayerType.CONDITIONAL_OUTPUT:
            ts.append(layer.conditional.condition.get_input(0))
        return ts

    def subtree_layers(self, loop_name: str) -> list:
        return [layer for layer in self.net.layers if self.in_subtree(layer, loop_name)]

    # -- loops ------------------------------------------------------------------------------
    def count(self, loop):
        lim = loop.limit(TripLimit.COUNT)
        return lim.get_input(0) if lim else None

    def while_input(self, loop):
        lim = loop.limit(TripLimit.WHILE)
        return lim.get_input(0) if lim else None

    def while_cone(self, loop, tensor) -> list:
        """The layers of `loop`'s own scope that compute `tensor` from the loop's recurrences
        and from values outside the loop, in emission order. Iterators, nested loops and
        recurrences of other loops are refused: the condition must be computable before a
        trip starts (as `structure/while-input` demands of TensorRT networks)."""
        found, stack = {}, [tensor]
        while stack:
            t = stack.pop()
            p = t.producer
            if p is None or self.scope(t) != loop.name or id(p) in found:
                continue
            if p.type is LayerType.RECURRENCE:
                if p.loop is not loop:  # pragma: no cover -- a nested scope's recurrence
                    raise NotExportable(f"WHILE input {tensor.name!r} of {loop.name}",
                                        "structure/while-input",
                                        "reads another loop's recurrence", "")
                continue
            if p.type in BOUNDARY:
                raise NotExportable(f"WHILE input {tensor.name!r} of {loop.name}",
                                    "structure/while-input",
                                    f"is computed from {p.type.value} layer {p.name!r}; the "
                                    "target IR decides a trip before the trip's body runs",
                                    "compute the condition from recurrences and invariants")
            found[id(p)] = p
            stack.extend(self.reads(p))
        return sorted(found.values(), key=lambda layer: layer._position)

    def scan_fit(self, loop) -> Optional[int]:
        """The trip count when `loop` is a plain scan: a constant COUNT, no WHILE, at least one
        iterator and every iterator's extent equal to the count, and only outputs a scan has
        (LAST_VALUE of a recurrence, CONCATENATE/REVERSE of length >= count)."""
        if loop.limit(TripLimit.WHILE) is not None or not loop.iterators:
            return None
        count = constant_value(self.count(loop))
        if count is None or count < 0:
            return None
        for it in loop.iterators:
            shape = it.get_input(0).shape
            if shape is None or shape[it.axis] != count:
                return None
        for out in loop.outputs:
            if out.kind is LoopOutput.LAST_VALUE:
                p = out.get_input(0).producer
                if p is None or p.type is not LayerType.RECURRENCE or p.loop is not loop:
                    return None
            else:
                length = out.get_input(1) if out.num_inputs > 1 else None
                if length is not None and constant_value(length) is None:
                    return None
        return count


def constant_value(tensor) -> Optional[int]:
    """The integer held by a build-time constant (through identities), else None."""
    if tensor is None:
        return None
    layer = tensor.producer
    while layer is not None and layer.type is LayerType.IDENTITY:
        layer = layer.get_input(0).producer
    if layer is not None and layer.type is LayerType.CONSTANT and layer.weights.size == 1:
        return int(np.asarray(layer.weights).reshape(()))
    return None


def _toposort(items, deps):
    """Kahn's algorithm; among ready items the one added first goes first."""
    users = {k: [] for k in items}
    waiting = {k: len(v) for k, v in deps.items()}
    for k, ds in deps.items():
        for d in ds:
            users[d].append(k)
    ready = [(items[k][2], k) for k, n in waiting.items() if n == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        _, k = heapq.heappop(ready)
        order.append(k)
        for u in users[k]:
            waiting[u] -= 1
            if waiting[u] == 0:
                heapq.heappush(ready, (items[u][2], u))
    if len(order) != len(items):  # pragma: no cover -- compile_network refuses cycles first
        raise NotExportable("network", "structure/acyclic", "its scopes do not order", "")
    return order
