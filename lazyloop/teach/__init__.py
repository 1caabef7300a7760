"""Pictures and small helpers for the teaching notebooks (notebooks/).

Nothing here is part of the semantics: these functions only *look at* networks, plans and
evaluations. They need matplotlib and networkx (the ``notebooks`` extra).

Public helpers
--------------
- ``draw_network(net)``: a loop network as a diagram: loops as (nested) boxes, boundary
  layers as coloured squares, back edges (a recurrence's next value) dashed.
- ``draw_plan(plan)`` / ``draw_plans({title: plan})``: the same picture for a compiled plan,
  which is what every dialect is lowered to (ONNX, OpenVINO and the TensorRT-style builder).
- ``plot_trace(evaluation)``: which elements of which streams were forced (the forcing trace of
  ``ll.run``), streams by trip, forced versus never touched, with the trip count n marked.
- ``forced(evaluation, stream)``: the indices of a stream that were forced.
- ``print_trace``, ``print_plan``: the trace and the plan as text.
- ``outline(plan)``: a compact text of a plan, loop by loop, for comparing lowerings.
- ``openvino_outline(model)``: an OpenVINO model's ops and its Loops' ports, as text.
- ``masked(value, defined)`` / ``plot_masked``: a value with its undefined positions shown as ``?``.
- ``plot_sequence(values)``: a sequence over time (lines or a heat map), e.g. an LSTM's state.
- ``side_by_side({title: text})``: blocks of text in columns.
- ``show_ambiguity("A4", ...)``: entries of the ambiguity registers (core and frontends).
- ``rule_text("trip/while")``: the section of spec/ that defines a rule.
- ``check(answer, expected)``: the check of an exercise.
"""
from __future__ import annotations

from typing import Dict, Iterable, Mapping, Optional

import numpy as np

from ..core.enums import LayerType
from ..core.plan import (Const, IfOutput, Input, Iterator, LoopOut, Map, Plan, Project, Recurrence,
                   Undefined, compile_network, infer_nesting, innermost)

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
        self.parents = {}    # loop name -> enclosing loop name or None
        self.note = None

    def node(self, nid, label, kind, box):
        self.nodes[nid] = (label, kind, box)

    def edge(self, a, b, back=False):
        if a in self.nodes and b in self.nodes:
            self.edges.append((a, b, back))


def _short(text: str, width: int = 12) -> str:
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
            g.edge(src, ("layer", layer.name), back)
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
            g.edge(at(node.then), nid)
            g.edge(at(node.orelse), nid)
    for out_name, nid in plan.outputs:
        g.node(("out", out_name), "output\n" + name(out_name), "output", None)
        g.edge(at(nid), ("out", out_name))
    return g


# ------------------------------------------------------------------------------------------
# Layout: columns by data-flow depth, nested horizontal bands by loop
# ------------------------------------------------------------------------------------------

def _layout(g: _Graph):
    """Positions for the nodes and rectangles for the loops.

    Columns follow the longest path from a source, back edges left out (they are the only
    cycles, `structure/acyclic`). Every loop gets a horizontal band of rows; a nested loop's
    band lies inside its parent's, so loop boxes nest and never cover a node of another scope.
    """
    import networkx as nx

    dag = nx.DiGraph()
    dag.add_nodes_from(g.nodes)
    dag.add_edges_from((a, b) for a, b, back in g.edges if not back)
    if not nx.is_directed_acyclic_graph(dag):  # a rejected network may have a cycle
        dag = nx.DiGraph(nx.bfs_tree(dag.to_undirected(), next(iter(g.nodes)))) if g.nodes else dag
        dag.add_nodes_from(g.nodes)
    order = list(nx.topological_sort(dag))
    column, lower = {}, {}
    for _ in range(2 + len(g.parents)):  # loop outputs sit right of everything in their loop
        for nid in order:
            preds = list(dag.predecessors(nid))
            column[nid] = max(1 + max((column[p] for p in preds), default=-1), lower.get(nid, 0))
        changed = False
        for nid, (_, kind, box) in g.nodes.items():
            if kind == "loop_output" and box is not None:
                inside = [column[m] for m, (_, k, b) in g.nodes.items()
                          if k != "loop_output" and _within(b, box, g.parents)]
                want = 1 + max(inside, default=-1)
                if want > lower.get(nid, 0):
                    lower[nid] = want
                    changed = True
        if not changed:
            break
    # constants and inputs sit just before their first reader
    for nid, (_, kind, _) in g.nodes.items():
        succ = [column[s] for s in dag.successors(nid)]
        if kind in ("constant", "input") and succ:
            column[nid] = max(column[nid], min(succ) - 1)

    children = {None: []}
    for loop in g.parents:
        children.setdefault(loop, [])
    for loop, parent in g.parents.items():
        children.setdefault(parent, []).append(loop)
    members = {}
    for nid, (_, _, box) in g.nodes.items():
        members.setdefault(box if box in children else None, []).append(nid)

    pos, boxes, row = {}, {}, [0.0]
    with_back_edges = {g.nodes[b][2] for a, b, back in g.edges if back}

    def depth_below(scope):
        return 1 + max((depth_below(c) for c in children.get(scope, [])), default=0)

    def place(scope, level):
        top = row[0]
        if scope is not None:
            row[0] += 0.55  # room for the loop's title
        mine = members.get(scope, [])
        by_column = {}
        for nid in sorted(mine, key=lambda n: (column[n], str(n))):
            by_column.setdefault(column[nid], []).append(nid)
        height = max((len(v) for v in by_column.values()), default=0)
        for col, nids in by_column.items():
            for k, nid in enumerate(nids):
                pos[nid] = (col * 1.7, -(row[0] + k + (height - len(nids)) / 2.0))
        row[0] += height
        for child in children.get(scope, []):
            row[0] += 0.35
            place(child, level + 1)
            row[0] += 0.35
        if scope in with_back_edges:
            row[0] += 0.6  # room for the back edges, drawn underneath the loop's layers
        if scope is not None:
            inner = _subtree_nodes(scope, children, members)
            cols = [column[n] for n in inner] or [0]
            pad = 0.55 + 0.18 * (depth_below(scope) - 1)
            boxes[scope] = (min(cols) * 1.7 - pad, -(row[0] - 0.5 + 0.05),
                            (max(cols) - min(cols)) * 1.7 + 2 * pad, row[0] - top + 0.1, level)

    place(None, 0)
    _untangle(g, pos, column, members)
    return pos, boxes


def _untangle(g: _Graph, pos, column, members, rounds: int = 3):
    """Reorder the nodes that share a column and a band by the mean height of their
    neighbours (the barycentre heuristic), so that fewer edges cross."""
    neighbours = {n: [] for n in g.nodes}
    for a, b, back in g.edges:
        if not back:
            neighbours[a].append(b)
            neighbours[b].append(a)
    groups = {}
    for scope, nids in members.items():
        for nid in nids:
            groups.setdefault((scope, column[nid]), []).append(nid)
    for _ in range(rounds):
        for nids in groups.values():
            if len(nids) < 2:
                continue
            slots = sorted(pos[n][1] for n in nids)[::-1]
            def centre(n):
                ys = [pos[m][1] for m in neighbours[n]]
                return -(sum(ys) / len(ys)) if ys else 0.0
            for nid, y in zip(sorted(nids, key=centre), slots):
                pos[nid] = (pos[nid][0], y)


def _within(scope, loop, parents) -> bool:
    """True when `scope` is `loop` or a loop nested in it."""
    seen = set()
    while scope is not None and scope not in seen:
        if scope == loop:
            return True
        seen.add(scope)
        scope = parents.get(scope)
    return False


def _subtree_nodes(scope, children, members):
    out = list(members.get(scope, []))
    for c in children.get(scope, []):
        out += _subtree_nodes(c, children, members)
    return out


def _draw(g: _Graph, ax=None, title=None, legend=True):
    import matplotlib.pyplot as plt
    import networkx as nx
    from matplotlib.lines import Line2D
    from matplotlib.patches import FancyBboxPatch

    pos, boxes = _layout(g)
    xs = [p[0] for p in pos.values()] or [0]
    ys = [p[1] for p in pos.values()] or [0]
    if ax is None:
        width = min(22, max(6.5, 1.25 * (max(xs) - min(xs) + 3)))
        height = min(14, max(3.0, 0.95 * (max(ys) - min(ys) + 2.5)))
        _, ax = plt.subplots(figsize=(width, height))
    loop_names = list(g.parents)
    for name, (x, y, w, h, level) in boxes.items():
        colour = LOOP_COLOURS[loop_names.index(name) % len(LOOP_COLOURS)]
        ax.add_patch(FancyBboxPatch((x, y), w, h, boxstyle="round,pad=0.02,rounding_size=0.25",
                                    fc=colour, alpha=0.07, ec=colour, lw=1.6, zorder=0))
        ax.text(x + 0.12, y + h - 0.12, name, color=colour, fontsize=9, fontweight="bold",
                va="top", ha="left", zorder=1)
    graph = nx.DiGraph()
    graph.add_nodes_from(g.nodes)
    for shape in ("o", "s"):
        chosen = [n for n, (_, kind, _) in g.nodes.items() if (kind in BOUNDARY) == (shape == "s")]
        nx.draw_networkx_nodes(graph, pos, nodelist=chosen, node_shape=shape, ax=ax,
                               node_color=[COLOURS[g.nodes[n][1]] for n in chosen],
                               edgecolors="#444444", linewidths=0.8, node_size=1500)
    forward = [(a, b) for a, b, back in g.edges if not back]
    backward = [(a, b) for a, b, back in g.edges if back]
    low = min([min(ys)] + [b[1] for b in boxes.values()]) - 0.3
    ax.set_xlim(min(xs) - 1.2, max(xs) + 1.2)
    ax.set_ylim(low, max(ys) + 0.9)
    origin, unit = ax.transData.transform((0, 0)), ax.transData.transform((1, 1))
    sx, sy = unit[0] - origin[0], unit[1] - origin[1]
    # an edge along a row that skips columns bends a little, around the nodes in between
    skipping = [(a, b) for a, b in forward
                if abs(pos[b][0] - pos[a][0]) > 1.8 and abs(pos[b][1] - pos[a][1]) < 0.6]
    nx.draw_networkx_edges(graph, pos, edgelist=[e for e in forward if e not in skipping],
                           ax=ax, node_size=1500, arrowsize=11, edge_color="#555555",
                           width=1.0, node_shape="s", connectionstyle="arc3,rad=0.08")
    for a, b in skipping:
        rad = _arc(pos[a], pos[b], -0.4, sx, sy)
        nx.draw_networkx_edges(graph, pos, edgelist=[(a, b)], ax=ax, node_size=1500,
                               arrowsize=11, edge_color="#555555", width=1.0, node_shape="s",
                               connectionstyle=f"arc3,rad={rad:.3f}")
    for a, b in backward:
        if g.nodes[a][2] == g.nodes[b][2]:  # dip under the loop's layers
            dip = max(0.3, (pos[a][1] + pos[b][1]) / 2 - _floor(g, pos, boxes, b))
            rad = _arc(pos[a], pos[b], dip, sx, sy)
        else:  # a next value from outside the loop (a lowered constant condition, say)
            rad = 0.15
        nx.draw_networkx_edges(graph, pos, edgelist=[(a, b)], ax=ax, node_size=1500,
                               arrowsize=13, edge_color=BACK_EDGE, width=1.6, style="dashed",
                               node_shape="s", connectionstyle=f"arc3,rad={rad:.3f}")
    nx.draw_networkx_labels(graph, pos, labels={n: lab for n, (lab, _, _) in g.nodes.items()},
                            font_size=7, ax=ax)
    ax.set_axis_off()
    if legend:
        handles = [Line2D([], [], marker=m, ls="", mfc=COLOURS[k], mec="#444444", ms=9, label=t)
                   for t, k, m in LEGEND]
        handles.append(Line2D([], [], color=BACK_EDGE, ls="--", lw=1.6,
                              label="back edge (recurrence next)"))
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=7,
                  frameon=False)
    text = title or ""
    if g.note:
        text += ("\n" if text else "") + "rejected: " + _wrap(g.note, 110)
    if text:
        ax.set_title(text, fontsize=9, loc="left")
    return ax


def _floor(g: _Graph, pos, boxes, node):
    """The height just above the bottom edge of the box of `node`'s loop."""
    box = boxes.get(g.nodes[node][2])
    if box is None:
        return min(p[1] for p in pos.values()) - 0.6
    return box[1] + 0.3


def _arc(a, b, dip, sx, sy):
    """The `rad` of an arc3 connection from a to b whose middle lies `dip` data units below
    the straight line (above, for a negative dip). arc3 bends by rad * length / 2 measured
    on the screen, so the axes' scales enter."""
    dx, dy = (b[0] - a[0]) * sx, (b[1] - a[1]) * sy
    length = float(np.hypot(dx, dy))
    if abs(dx) < 1e-6 or length == 0:
        return -0.45
    rad = max(-1.2, min(1.2, 2 * dip * abs(sy) / length))
    return rad if dx > 0 else -rad


def _wrap(text, width):
    import textwrap
    return "\n".join(textwrap.wrap(text, width))


def draw_network(net, ax=None, title=None, legend=True):
    """Draw a builder network: loops as boxes (nested loops nested), boundary layers as
    coloured squares, back edges dashed red. Works on networks that are rejected too (the
    title then says why). Returns the matplotlib Axes."""
    return _draw(_network_graph(net), ax=ax, title=title, legend=legend)


def draw_plan(plan, ax=None, title=None, legend=True):
    """Draw a compiled plan (``ll.compile_network(net)``, ``evaluation.plan``, or what a
    frontend lowers a model to): one node per stream. Returns the Axes."""
    if not isinstance(plan, Plan):
        plan = getattr(plan, "plan", None) or compile_network(plan)
    return _draw(_plan_graph(plan), ax=ax, title=title, legend=legend)


def draw_plans(plans: Mapping[str, object], ncols: int = 2, width: float = 8.0,
               height: float = 4.5):
    """Several plans (or networks) in a grid of subplots, titled by the mapping's keys."""
    import matplotlib.pyplot as plt

    items = list(plans.items())
    nrows = (len(items) + ncols - 1) // ncols
    fig, axes = plt.subplots(nrows, ncols, figsize=(width * ncols, height * nrows),
                             squeeze=False)
    for ax, (title, what) in zip(axes.flat, items):
        if isinstance(what, Plan) or hasattr(what, "plan"):
            draw_plan(what, ax=ax, title=title, legend=False)
        else:
            draw_network(what, ax=ax, title=title, legend=False)
    for ax in list(axes.flat)[len(items):]:
        ax.set_axis_off()
    fig.tight_layout()
    return axes


# ------------------------------------------------------------------------------------------
# The forcing trace
# ------------------------------------------------------------------------------------------

def forced(evaluation, stream, activation=()):
    """Sorted indices of `stream` that were forced in one activation (``()`` for a loop at the
    top level, ``(1,)`` for an inner loop's run during trip 1 of its outer loop). With
    ``activation=None``: a dict {activation: indices} over every activation."""
    seen: Dict[tuple, set] = {}
    for e in evaluation.trace:
        if e.stream == stream:
            seen.setdefault(tuple(e.activation), set()).add(e.index)
    if activation is None:
        return {a: sorted(ix) for a, ix in sorted(seen.items())}
    return sorted(seen.get(tuple(activation), ()))


def loop_streams(plan, loop) -> list:
    """The stream nodes of `loop`, in plan order (hidden helper nodes included)."""
    return [nid for nid, node in plan.nodes.items() if node.scope == loop
            and not isinstance(node, Undefined)]


def plot_trace(evaluation, loops: Optional[Iterable[str]] = None, ax=None, order=True,
               columns: Optional[int] = None, streams: Optional[Iterable[str]] = None,
               title=None):
    """The forcing trace as a grid: one row per stream (per activation, for nested loops),
    one column per trip index; a filled cell was forced (numbered in forcing order when
    `order`), a grey cell was never touched. The dashed line stands after the last trip that
    ran (index n-1): column n is where a WHILE input is forced one last time to stop the loop.
    Returns the Axes."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    plan = evaluation.plan
    names = list(loops) if loops is not None else list(plan.loops)
    wanted = set(streams) if streams is not None else None
    step = {}
    for k, e in enumerate(evaluation.trace):
        step.setdefault((e.stream, tuple(e.activation), e.index), k)
    rows = []  # (loop, activation, stream, label, n)
    for loop in names:
        acts = {tuple(p): n for p, n in evaluation.trips.get(loop, [])}
        for e in evaluation.trace:
            if e.loop == loop:
                acts.setdefault(tuple(e.activation), None)
        lp = plan.loops[loop]
        for act in sorted(acts) or [()]:
            for nid in loop_streams(plan, loop):
                if wanted is not None and nid not in wanted:
                    continue
                label = nid
                if nid == lp.while_:
                    label += "  (WHILE)"
                if len(acts) > 1 or act:
                    label = f"{loop}{list(act)} {label}"
                elif len(names) > 1:
                    label = f"{loop}: {label}"
                rows.append((loop, act, nid, label, acts.get(act)))
    top = max([i for (s, a, i) in step if any(r[2] == s for r in rows)] +
              [r[4] for r in rows if r[4] is not None] + [0])
    ncols = columns if columns is not None else top + 2
    ys, y = [], 0.0
    for k, r in enumerate(rows):
        if k and rows[k - 1][:2] != r[:2]:
            y += 0.6  # a gap between loops and activations, where n is written
        ys.append(y)
        y += 1.0
    if ax is None:
        longest = max((len(r[3]) for r in rows), default=0)
        _, ax = plt.subplots(figsize=(min(18, max(5.0, 1.6 + 0.42 * ncols + 0.07 * longest)),
                                      max(1.6, 0.38 * (ys[-1] if ys else 0) + 1.5)))
    numbered = sorted(k for (s, a, i), k in step.items()
                      if any(r[2] == s and r[1] == a for r in rows))
    rank = {k: j + 1 for j, k in enumerate(numbered)}
    loop_names = list(plan.loops)
    for row_k, ((loop, act, nid, label, n), y) in enumerate(zip(rows, ys)):
        colour = LOOP_COLOURS[loop_names.index(loop) % len(LOOP_COLOURS)]
        for i in range(ncols):
            k = step.get((nid, act, i))
            hit = k is not None
            ax.add_patch(Rectangle((i - 0.45, y - 0.4), 0.9, 0.8, lw=0.6,
                                   fc=colour if hit else "#f2f2f2",
                                   ec="#333333" if hit else "#cccccc", alpha=0.85 if hit else 1))
            if hit and order and ncols <= 40:
                ax.text(i, y, str(rank[k]), ha="center", va="center", fontsize=7,
                        color="white", fontweight="bold")
        if n is not None:
            ax.plot([n - 0.5, n - 0.5], [y - 0.5, y + 0.5], color="black", lw=1.4, ls="--")
            if row_k == 0 or rows[row_k - 1][:2] != (loop, act):
                ax.text(n - 0.5, y - 0.5, f"n={n}", ha="center", va="bottom", fontsize=8)
    ax.set_yticks(ys)
    ax.set_yticklabels([r[3] for r in rows], fontsize=8)
    ax.set_xticks(range(ncols))
    ax.set_xticklabels([str(i) for i in range(ncols)], fontsize=7 if ncols > 25 else 8)
    ax.set_xlim(-0.6, ncols - 0.4)
    ax.set_ylim((ys[-1] if ys else 0) + 0.6, -1.0)
    ax.set_xlabel("element index i (trip)")
    for side in ("top", "right", "left", "bottom"):
        ax.spines[side].set_visible(False)
    ax.tick_params(length=0)
    ax.set_title(title or ("forced elements (numbered in forcing order)" if order
                           else "forced elements"), fontsize=9, loc="left")
    return ax


def print_trace(evaluation, limit: Optional[int] = 60, streams: Optional[Iterable[str]] = None):
    """The forcing trace as a numbered table: what was forced, in order, and who asked."""
    wanted = set(streams) if streams is not None else None
    events = [e for e in evaluation.trace if wanted is None or e.stream in wanted]
    print(f"{'#':>3}  {'loop':<7} {'activation':<10} {'element':<28} asked for by")
    for k, e in enumerate(events[:limit] if limit else events, 1):
        by = "an output" if e.by is None else (f"{e.by[0]}[{e.by[1]}]"
                                               if not str(e.by[0]).startswith("#trips")
                                               else f"the trip limit of {e.by[0][7:]}")
        print(f"{k:>3}  {str(e.loop or '-'):<7} {str(e.activation or '-'):<10} "
              f"{e.stream + '[' + str(e.index) + ']':<28} {by}")
    if limit and len(events) > limit:
        print(f"... and {len(events) - limit} more")


def print_plan(plan):
    """Every stream node of a plan with its scope; each node's repr reads like its expression."""
    if not isinstance(plan, Plan):
        plan = getattr(plan, "plan", None) or compile_network(plan)
    width = max((len(str(k)) for k in plan.nodes), default=4)
    for name, lp in plan.loops.items():
        print(repr(lp))
    for nid, node in plan.nodes.items():
        print(f"  {nid:<{width}}  in {str(node.scope or '(outside)'):<10} = {node!r}")
    print("outputs:", ", ".join(f"{name} <- {nid}" for name, nid in plan.outputs))


def _short_id(ref) -> str:
    """A stream id without the frontend's path: "Loop(total)/carried:acc" -> "carried:acc"."""
    if ref is None:
        return "-"
    text = str(ref)
    if text.endswith("()"):
        text = text[:-2]
    return text.rsplit("/", 1)[-1]


def _expression(node, short) -> str:
    if isinstance(node, Input):
        return f"input {node.type!r}"
    if isinstance(node, Const):
        v = node.value
        return (f"const {np.asarray(v).tolist()}" if isinstance(v, np.ndarray) and v.size <= 3
                else f"const {node.type!r}")
    if isinstance(node, Iterator):
        return (f"Iterator({short(node.source)}, axis={node.axis}"
                + (", reverse" if node.reverse else "") + ")")
    if isinstance(node, Recurrence):
        return f"Recurrence({short(node.init)}, {short(node.next)})"
    if isinstance(node, LoopOut):
        if node.kind.name == "LAST_VALUE":
            return f"LastValue({short(node.source)})"
        kind = "Concatenate" if node.kind.name == "CONCATENATE" else "Reverse"
        length = short(node.length) if node.length else "n"
        return f"{kind}({short(node.source)}, {length}, axis={node.axis})"
    if isinstance(node, IfOutput):
        return f"{short(node.cond)} ? {short(node.then)} : {short(node.orelse)}"
    if isinstance(node, Undefined):
        return "undefined"
    if isinstance(node, Map):
        return f"{node.op}({', '.join(short(a) for a in node.args)})"
    return repr(node)


def outline(plan, constants: bool = False) -> str:
    """A compact text of a plan: each loop with its limits and its streams, then what is
    computed outside the loops. Frontend prefixes are dropped from the names and a function
    call with its projections is one line, so lowerings of one program from different
    dialects can be read side by side (`side_by_side`)."""
    if not isinstance(plan, Plan):
        plan = getattr(plan, "plan", None) or compile_network(getattr(plan, "network", plan))
    projections: Dict[str, list] = {}
    for nid, node in plan.nodes.items():
        if isinstance(node, Project):
            projections.setdefault(node.call, []).append(nid)

    def line(nid, node):
        if isinstance(node, Project):
            return None
        if isinstance(node, Const) and not constants:
            return None
        names = ", ".join(_short_id(p) for p in projections.get(nid, [])) or _short_id(nid)
        return f"{names} = {_expression(node, _short_id)}"

    out = ["inputs: " + ", ".join(_short_id(i) for i in plan.inputs)]

    def block(loop, depth):
        lp = plan.loops[loop]
        limits = [f"COUNT({_short_id(lp.count)})"] if lp.count else []
        limits += [f"WHILE({_short_id(lp.while_)})"] if lp.while_ else []
        pad = "  " * depth
        out.append(f"{pad}loop {_short_id(loop)}: {' '.join(limits) or 'no limit'}")
        for nid, node in plan.nodes.items():
            if node.scope == loop:
                text = line(nid, node)
                if text:
                    out.append(f"{pad}  {text}")
        for child, cp in plan.loops.items():
            if cp.parent == loop:
                block(child, depth + 1)

    for loop, lp in plan.loops.items():
        if lp.parent is None:
            block(loop, 0)
    out.append("outside the loops:")
    for nid, node in plan.nodes.items():
        if node.scope is None and not isinstance(node, Input):
            text = line(nid, node)
            if text:
                out.append(f"  {text}")
    out.append("outputs: " + ", ".join(_short_id(nid) for _, nid in plan.outputs))
    return "\n".join(out)


def openvino_outline(model) -> str:
    """An OpenVINO model as text: its ops in order, and for every Loop / TensorIterator its
    ports: what each body Parameter is bound to (merged with a back edge, sliced, invariant),
    the special body ports, and what each output takes (last iteration or concatenation)."""
    lines = []

    def source(value):
        node = value.get_node()
        return f"{node.get_friendly_name()} ({node.get_type_name()})"

    def walk(m, pad):
        for op in m.get_ordered_ops():
            kind = op.get_type_name()
            if kind not in ("Loop", "TensorIterator"):
                lines.append(f"{pad}{kind:<14} {op.get_friendly_name()}")
                continue
            body = op.get_function()
            params, results = body.get_parameters(), body.get_results()

            def result(k):
                return f"Result {k} = {source(results[k].input_value(0))}"

            head = f"{pad}{kind} {op.get_friendly_name()}"
            if kind == "Loop":
                current, condition = op.get_special_body_ports()
                head += (f": trip count <- {source(op.input_value(0))}, execution condition <- "
                         f"{source(op.input_value(1))}; body condition: {result(condition)}"
                         + (f"; current_iteration: {params[current].get_friendly_name()}"
                            if current >= 0 else ""))
            lines.append(head)
            for d in op.get_input_descriptions():
                name = params[d.body_parameter_index].get_friendly_name()
                where = source(op.input_value(d.input_index))
                kind_d = type(d).__name__
                if kind_d.startswith("Merged"):
                    lines.append(f"{pad}  in  merged    {name} <- {where}, back edge from "
                                 f"{result(d.body_value_index)}")
                elif kind_d.startswith("Slice"):
                    lines.append(f"{pad}  in  sliced    {name} <- {where}: axis={d.axis} "
                                 f"start={d.start} stride={d.stride} part_size={d.part_size} "
                                 f"end={d.end}")
                else:
                    lines.append(f"{pad}  in  invariant {name} <- {where}")
            for d in op.get_output_descriptions():
                if type(d).__name__.startswith("Concat"):
                    lines.append(f"{pad}  out {d.output_index}  concat    "
                                 f"{result(d.body_value_index)}: "
                                 f"axis={d.axis} start={d.start} stride={d.stride} "
                                 f"part_size={d.part_size} end={d.end}")
                else:
                    lines.append(f"{pad}  out {d.output_index}  by iteration {d.iteration}: "
                                 f"{result(d.body_value_index)}")
            lines.append(f"{pad}  body:")
            walk(body, pad + "    ")

    walk(model, "")
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------
# Undefined values
# ------------------------------------------------------------------------------------------

def masked(value, defined, precision: int = 3) -> str:
    """The value as text with every undefined position shown as `?` (DESIGN §4)."""
    value = np.asarray(value)
    defined = np.broadcast_to(np.asarray(defined, bool), value.shape)
    floats = value.dtype.kind == "f"
    if floats:  # numpy's style: "2.", "1.25", aligned on the left like numpy aligns them
        texts = [np.format_float_positional(v, precision=precision, trim=".")
                 for v in value.reshape(-1)]
    else:
        texts = [str(v) for v in value.reshape(-1)]
    texts = [t if ok else "?" for t, ok in zip(texts, defined.reshape(-1))]
    width = max((len(t) for t in texts), default=1)
    cells = np.array([t.ljust(width) if floats else t.rjust(width) for t in texts],
                     dtype=object).reshape(value.shape)
    if value.ndim == 0:
        return str(cells[()]).strip()
    return np.array2string(cells, formatter={"all": lambda s: s}, max_line_width=100)


def plot_masked(value, defined, ax=None, title=None, annotate=True):
    """A 1-D or 2-D value as a grid; undefined positions hatched and marked `?`."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    value = np.asarray(value)
    grid = value.reshape(1, -1) if value.ndim <= 1 else value.reshape(value.shape[0], -1)
    mask = np.broadcast_to(np.asarray(defined, bool), value.shape).reshape(grid.shape)
    if ax is None:
        _, ax = plt.subplots(figsize=(max(2.5, 0.6 * grid.shape[1] + 1),
                                      max(1.2, 0.5 * grid.shape[0] + 0.8)))
    shown = np.where(mask, grid, np.nan).astype(float)
    ax.imshow(shown, cmap="Blues", vmin=np.nanmin(shown) - 1 if mask.any() else 0,
              vmax=np.nanmax(shown) + 1 if mask.any() else 1, aspect="auto")
    for (r, c), ok in np.ndenumerate(mask):
        if not ok:
            ax.add_patch(Rectangle((c - 0.5, r - 0.5), 1, 1, fc="#f4cccc", ec="#cc0000",
                                   hatch="///", lw=0.5))
        if annotate:
            text = f"{grid[r, c]:g}" if ok else "?"
            ax.text(c, r, text, ha="center", va="center", fontsize=8)
    ax.set_xticks(range(grid.shape[1]))
    ax.set_yticks(range(grid.shape[0]))
    if title:
        ax.set_title(title, fontsize=9, loc="left")
    return ax


# ------------------------------------------------------------------------------------------
# Sequences, text layout, exercises
# ------------------------------------------------------------------------------------------

def plot_sequence(values, ax=None, kind="lines", title=None, xlabel="time step t",
                  ylabel=None, labels=None):
    """A sequence of vectors over time, shape (T, units): one line per unit, or a heat map."""
    import matplotlib.pyplot as plt

    values = np.asarray(values)
    values = values.reshape(values.shape[0], -1)
    if ax is None:
        _, ax = plt.subplots(figsize=(8, 3))
    if kind == "heatmap":
        im = ax.imshow(values.T, aspect="auto", cmap="RdBu_r", vmin=-np.abs(values).max(),
                       vmax=np.abs(values).max(), interpolation="nearest")
        ax.figure.colorbar(im, ax=ax, fraction=0.03)
        ax.set_ylabel(ylabel or "unit")
    else:
        for k in range(values.shape[1]):
            ax.plot(values[:, k], lw=1.2, label=None if labels is None else labels[k])
        ax.set_ylabel(ylabel or "value")
        if labels is not None:
            ax.legend(fontsize=7, ncol=min(4, len(labels)))
    ax.set_xlabel(xlabel)
    if title:
        ax.set_title(title, fontsize=9, loc="left")
    return ax


def side_by_side(blocks: Mapping[str, str], width: Optional[int] = None, gap: int = 3) -> str:
    """Blocks of text next to each other, each under its title; returns the text."""
    columns = [[title, "-" * len(title)] + str(text).splitlines() for title, text in blocks.items()]
    widths = [width or max(len(line) for line in col) for col in columns]
    height = max(len(col) for col in columns)
    lines = []
    for r in range(height):
        parts = []
        for col, w in zip(columns, widths):
            cell = col[r] if r < len(col) else ""
            parts.append(cell[:w].ljust(w))
        lines.append((" " * gap).join(parts).rstrip())
    return "\n".join(lines)


def _registers():
    """Every ambiguity register lazyloop knows: the core's and the frontends' (if loaded)."""
    import importlib
    from ..core.ambiguity import REGISTER
    found = dict(REGISTER)
    for module in ("lazyloop.openvino.register", "lazyloop.onnx.register",
                   "lazyloop.onnx.lowering"):
        try:
            mod = importlib.import_module(module)
        except Exception:  # a frontend that is absent or not installed
            continue
        for name in dir(mod):
            table = getattr(mod, name)
            if name.endswith("REGISTER") and isinstance(table, dict):
                found.update({k: v for k, v in table.items() if k not in found})
    return found


def show_ambiguity(*ids):
    """Print register entries: the rule, the question, each reading (default marked *)."""
    table = _registers()
    for key in ids:
        entry = table.get(key)
        if entry is None:
            print(f"{key}: not in the register")
            continue
        print(f"{entry.id} [{entry.rule}] {entry.question}")
        for reading, source in entry.readings.items():
            mark = "*" if reading == entry.default else " "
            print(f"   {mark} {reading}: {_wrap(source, 90).replace(chr(10), chr(10) + ' ' * 8)}")


def rule_text(rule_id: str, spec_dir=None, max_lines: int = 40) -> str:
    """The section of the specification (spec/*.md of a source checkout) that defines
    `rule_id`: from its heading to the next heading of the same or a higher level."""
    import pathlib
    import re
    folder = pathlib.Path(spec_dir) if spec_dir else \
        pathlib.Path(__file__).resolve().parent.parent / "spec"
    pattern = re.compile(r"^(#+) .*`" + re.escape(rule_id) + r"`")
    for path in sorted(folder.glob("*.md")):
        if path.name == "ambiguities.md":
            continue
        lines = path.read_text().splitlines()
        for k, line in enumerate(lines):
            found = pattern.match(line)
            if found:
                level, body = len(found.group(1)), [line]
                for later in lines[k + 1:]:
                    head = re.match(r"^(#+) ", later)
                    if head and len(head.group(1)) <= level:
                        break
                    body.append(later)
                text = "\n".join(body).strip()
                cut = text.splitlines()
                if len(cut) > max_lines:
                    text = "\n".join(cut[:max_lines]) + "\n[...]"
                return f"{path.name}:\n{text}"
    return f"{rule_id}: no section in {folder} (the spec ships with a source checkout)"


class ExerciseNotAnswered(AssertionError):
    pass


def _matches(answer, expected, rtol, atol) -> bool:
    if isinstance(expected, (set, frozenset)):
        return isinstance(answer, (set, frozenset, list, tuple)) and set(answer) == set(expected)
    if isinstance(expected, dict):
        return (isinstance(answer, dict) and answer.keys() == expected.keys()
                and all(_matches(answer[k], expected[k], rtol, atol) for k in expected))
    if isinstance(expected, (list, tuple)) and any(
            isinstance(e, (list, tuple, dict, set, np.ndarray)) for e in expected):
        return (isinstance(answer, (list, tuple)) and len(answer) == len(expected)
                and all(_matches(a, e, rtol, atol) for a, e in zip(answer, expected)))
    if isinstance(expected, str) or isinstance(answer, str):
        return answer == expected
    try:
        a, e = np.asarray(answer), np.asarray(expected)
    except ValueError:  # a ragged answer cannot equal a regular expectation
        return False
    if a.dtype.kind in "biuf" and e.dtype.kind in "biuf":
        return a.shape == e.shape and bool(np.allclose(a, e, rtol=rtol, atol=atol,
                                                       equal_nan=True))
    ok = answer == expected
    return bool(np.all(ok)) if isinstance(ok, np.ndarray) else bool(ok)


def check(answer, expected, what: str = "answer", rtol: float = 1e-5, atol: float = 1e-6):
    """The check of an exercise: `answer` (what the reader filled in) against `expected`
    (computed independently of lazyloop: by hand, in plain Python or with numpy). Numbers
    are compared with a tolerance, sets as sets, containers element by element."""
    if answer is Ellipsis:
        raise ExerciseNotAnswered(f"{what}: replace the ... placeholder with your answer")
    if not _matches(answer, expected, rtol, atol):
        raise AssertionError(f"{what}: got {answer!r}, expected {expected!r}")
    print(f"correct: {what}")


__all__ = ["draw_network", "draw_plan", "draw_plans", "plot_trace", "forced", "loop_streams",
           "print_trace", "print_plan", "outline", "openvino_outline", "masked", "plot_masked",
           "plot_sequence", "side_by_side", "show_ambiguity", "rule_text", "check",
           "ExerciseNotAnswered"]
