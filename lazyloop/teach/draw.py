"""Drawing diagrams with matplotlib/networkx: `draw_network`, `draw_plan`, `draw_plans`."""
from __future__ import annotations

from typing import Mapping

import numpy as np

from ..core.plan import Plan, compile_network
from .graph import BACK_EDGE, BOUNDARY, COLOURS, LEGEND, LOOP_COLOURS, _Graph, _network_graph, \
    _plan_graph
from .layout import _layout
from .text import _wrap

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
