"""The diagram model behind the teaching pictures: the colours of each kind of node, and the
conversion of a builder network or a compiled plan into nodes, edges and loop nesting."""
from __future__ import annotations

from typing import Dict

import numpy as np

from ..core.enums import LayerType
from ..core.plan import (Const, IfOutput, Input, Iterator, LoopOut, Map, Plan, Project, Recurrence,
                         Undefined, infer_nesting, innermost)
from .text import _short_id

# ------------------------------------------------------------------------------------------
# The look of the pictures
# ------------------------------------------------------------------------------------------

COLOURS = {
    "input": "#d9d9d9",
    "output": "#d9d9d9",
    "constant": "#ffffff",
    "layer": "#cfe2f3",
    "trip_limit": "#f6b26b",
    "iterator": "#93c47d",
    "recurrence": "#b4a7d6",
    "loop_output": "#6fa8dc",
    "conditional": "#ffe599",
    "undefined": "#ea9999",
}
LEGEND = [("input / output", "input", "o"), ("constant", "constant", "o"),
          ("layer (stream/map)", "layer", "o"), ("trip limit", "trip_limit", "s"),
          ("iterator", "iterator", "s"), ("recurrence", "recurrence", "s"),
          ("loop output", "loop_output", "s"), ("conditional", "conditional", "o")]
BOUNDARY = {"trip_limit", "iterator", "recurrence", "loop_output"}
LOOP_COLOURS = ["#3d85c6", "#6aa84f", "#cc4125", "#8e7cc3", "#e69138", "#45818e"]
BACK_EDGE = "#cc0000"


class _Graph:
    """What a diagram needs: nodes (label, kind, box), edges, and the loops' nesting."""

    def __init__(self):
        self.nodes = {}      # id -> (label, kind, box): box = the loop drawn around the node
        self.edges = []      # (from, to, is_back_edge)
        self.roles = {}      # (from, to) -> "true" / "false": an if-output's branch inputs
        self.parents = {}    # loop name -> enclosing loop name or None
        self.note = None

    def node(self, nid, label, kind, box):
        self.nodes[nid] = (label, kind, box)

    def edge(self, a, b, back=False, role=None):
        if a in self.nodes and b in self.nodes:
            self.edges.append((a, b, back))
            if role:
                self.roles[a, b] = role


def branch_regions(g: _Graph):
    """The branches of each if-output as regions: the nodes whose every reader lies in the
    branch, back from the output's true (false) input, in the output's loop. Returns
    {region name: (if-output id, "true" / "false")} and moves those nodes into the region
    (a box nested in the loop, `laziness/dead`: only the taken branch is forced)."""
    readers = {n: [] for n in g.nodes}
    for a, b, back in g.edges:
        if not back:
            readers[a].append(b)
    regions = {}
    for (src, out), role in list(g.roles.items()):
        scope = g.nodes[out][2]
        members = set()

        def inside(n):
            label, kind, box = g.nodes[n]
            return (n not in members and box == scope and kind in ("layer", "constant")
                    and readers[n] and all(r in members or (r == out and g.roles.get((n, r))
                                                            == role) for r in readers[n]))
        grown = True
        while grown:
            grown = False
            for n in g.nodes:
                if inside(n):
                    members.add(n)
                    grown = True
        if members:
            name = g.nodes[out][0].split("\n")[-1]
            region = f"{name}: {role}"
            regions[region] = (out, role)
            g.parents[region] = scope
            for n in members:
                label, kind, _ = g.nodes[n]
                g.nodes[n] = (label, kind, region)
    return regions


def _short(text: str, width: int = 30) -> str:
    text = str(text)
    return text if len(text) <= width else text[:width - 1] + "…"


def _user_named(tensor) -> bool:
    """True when the tensor's name was chosen by the author, not made up by the builder."""
    producer = tensor.producer
    return producer is None or not tensor.name.startswith(producer.name)


def _layer_caption(layer) -> str:
    t = layer.type
    if t is LayerType.TRIP_LIMIT:
        return layer.kind.name
    if t is LayerType.ITERATOR:
        return "Iterator" + (" rev" if layer.reverse else "") + f"\naxis={layer.axis}"
    if t is LayerType.RECURRENCE:
        return "Recurrence"
    if t is LayerType.LOOP_OUTPUT:
        name = {"LAST_VALUE": "LastValue", "CONCATENATE": "Concat", "REVERSE": "Reverse"}[
            layer.kind.name]
        return name if layer.kind.name == "LAST_VALUE" else f"{name}\naxis={layer.axis}"
    if t is LayerType.CONSTANT:
        w = layer.weights
        return _short(np.array2string(w, precision=2, separator=",")) if w.size <= 3 else "const"
    if t is LayerType.ELEMENTWISE:
        return layer.op.name.lower()
    if t in (LayerType.UNARY,):
        return layer.op.name.lower()
    if t is LayerType.ACTIVATION:
        return layer.activation_type.name.lower()
    if t is LayerType.FUNCTION:
        return _short(layer.op)
    if t is LayerType.CONDITION:
        return "if cond"
    if t is LayerType.CONDITIONAL_INPUT:
        return "if input"
    if t is LayerType.CONDITIONAL_OUTPUT:
        return "if output"
    if t is LayerType.MATRIX_MULTIPLY:
        return "matmul"
    return t.value


def _layer_kind(layer) -> str:
    t = layer.type
    if t.value in COLOURS:
        return t.value
    if t in (LayerType.CONDITION, LayerType.CONDITIONAL_INPUT, LayerType.CONDITIONAL_OUTPUT):
        return "conditional"
    return "layer"


def _network_graph(net) -> _Graph:
    """The diagram of a builder network: one node per layer, input and output."""
    g = _Graph()
    scope_of = _network_scopes(net, g)
    for t in net._inputs:
        g.node(("in", t.name), t.name, "input", None)
    for layer in net.layers:
        loop = getattr(layer, "loop", None)
        if loop is not None:
            box = loop.name
        elif layer._outputs:
            box = scope_of(layer._outputs[0])
        else:  # a condition layer: it lives where its input does
            box = scope_of(layer.get_input(0))
        caption = _layer_caption(layer)
        out = layer._outputs[0] if layer._outputs else None
        if out is not None and _user_named(out) and layer.type is not LayerType.CONSTANT:
            caption += "\n" + _short(out.name)
        g.node(("layer", layer.name), caption, _layer_kind(layer), box)
    for layer in net.layers:
        for k, t in enumerate(layer.inputs()):
            if t is None:
                continue
            src = ("in", t.name) if t.producer is None else ("layer", t.producer.name)
            back = layer.type is LayerType.RECURRENCE and k == 1
            role = ("true", "false")[k] if layer.type is LayerType.CONDITIONAL_OUTPUT and k < 2 \
                else None
            g.edge(src, ("layer", layer.name), back, role)
    for cond in getattr(net, "conditionals", []):
        if cond.condition is not None:
            for out in cond.outputs:
                g.edge(("layer", cond.condition.name), ("layer", out.name))
    for t in net._outputs:
        g.node(("out", t.name), "output\n" + _short(t.name), "output", None)
        src = ("in", t.name) if t.producer is None else ("layer", t.producer.name)
        g.edge(src, ("out", t.name))
    return g


def _network_scopes(net, g: _Graph):
    """Which loop each tensor is a stream of (`structure/nesting`); for a network whose loops
    do not nest cleanly only the boundary layers are boxed, and the graph carries a note."""
    try:
        inside, outer, loop_of = infer_nesting(net)
        for loop in net.loops:
            parents = outer[id(loop)]
            best = innermost(parents, outer, loop_of, loop.name) if parents else None
            g.parents[loop.name] = loop_of[best].name if best is not None else None
    except Exception as exc:  # a rejected network: draw what it is, say why it is rejected
        g.note = str(exc)
        g.parents = {loop.name: None for loop in net.loops}
        return lambda t: None

    def scope_of(t):
        loops = inside.get(id(t), frozenset())
        if not loops:
            return None
        try:
            return loop_of[innermost(loops, outer, loop_of, t.name)].name
        except Exception:
            return None
    return scope_of


def _plan_graph(plan: Plan) -> _Graph:
    """The diagram of a compiled plan: one node per stream node. A frontend's function call
    and the projections of its outputs are drawn as one node, labelled by the op and the
    name of what it computes."""
    g = _Graph()
    g.parents = {name: lp.parent for name, lp in plan.loops.items()}
    projections: Dict[str, list] = {}
    for nid, node in plan.nodes.items():
        if isinstance(node, Project):
            projections.setdefault(node.call, []).append(nid)
    drawn = {nid: node.call for nid, node in plan.nodes.items() if isinstance(node, Project)}

    def at(ref):
        return drawn.get(ref, ref)

    def name(nid):
        return _short(_short_id(nid))

    for nid, node in plan.nodes.items():
        if isinstance(node, Input):
            g.node(nid, name(nid), "input", None)
        elif isinstance(node, Const):
            v = node.value
            text = (_short(np.array2string(np.asarray(v), precision=2, separator=","))
                    if isinstance(v, np.ndarray) and v.size <= 3 else "const")
            g.node(nid, text, "constant", node.scope)
        elif isinstance(node, Iterator):
            g.node(nid, f"Iterator{' rev' if node.reverse else ''}\n{name(nid)}",
                   "iterator", node.scope)
        elif isinstance(node, Recurrence):
            g.node(nid, f"Recurrence\n{name(nid)}", "recurrence", node.scope)
        elif isinstance(node, LoopOut):
            kind = {"LAST_VALUE": "LastValue", "CONCATENATE": "Concat",
                    "REVERSE": "Reverse"}[node.kind.name]
            g.node(nid, f"{kind}\n{name(nid)}", "loop_output", node.loop)
        elif isinstance(node, IfOutput):
            g.node(nid, f"if output\n{name(nid)}", "conditional", node.scope)
        elif isinstance(node, Undefined):
            g.node(nid, "undefined", "undefined", node.scope)
        elif isinstance(node, Map):
            outs = projections.get(nid, [])
            caption = _short(node.op.rsplit(".", 1)[-1].lower() if node.op.startswith(
                "elementwise.") else node.op)
            if len(outs) == 1 and name(outs[0]) != name(nid):
                caption += "\n" + name(outs[0])
            g.node(nid, caption, "layer", node.scope)
        elif isinstance(node, Project):
            continue
        else:
            g.node(nid, _short(repr(node)), "layer", node.scope)
    for loop, lp in plan.loops.items():
        for kind, ref in (("COUNT", lp.count), ("WHILE", lp.while_)):
            if ref is not None:
                g.node(("limit", loop, kind), kind, "trip_limit", loop)
                g.edge(at(ref), ("limit", loop, kind))
    for nid, node in plan.nodes.items():
        if isinstance(node, Project):
            continue
        for ref in node.inputs():
            if ref is not None:
                g.edge(at(ref), nid)
        if isinstance(node, Recurrence):
            g.edge(at(node.next), nid, back=True)
        if isinstance(node, LoopOut):
            g.edge(at(node.source), nid)
        if isinstance(node, IfOutput):
            g.edge(at(node.then), nid, role="true")
            g.edge(at(node.orelse), nid, role="false")
    for out_name, nid in plan.outputs:
        g.node(("out", out_name), "output\n" + name(out_name), "output", None)
        g.edge(at(nid), ("out", out_name))
    return g


def within(scope, loop, parents) -> bool:
    """True when `scope` is `loop` or a loop nested in it."""
    seen = set()
    while scope is not None and scope not in seen:
        if scope == loop:
            return True
        seen.add(scope)
        scope = parents.get(scope)
    return False
