"""Drawing diagrams with matplotlib: `draw_network`, `draw_plan`, `draw_plans`, from the
geometry of `layout` (boxes sized to their labels, edges routed around nodes)."""
from __future__ import annotations

import os
from typing import Mapping


from ..core.plan import Plan, compile_network
from .graph import BACK_EDGE, BOUNDARY, COLOURS, LEGEND, LOOP_COLOURS, _Graph, _network_graph, \
    _plan_graph
from .diagram_check import MAX_WIDTH, problems
from .layout import FONT, layout
from .text import _wrap

LEGEND_WIDTH = 2.3   # inches: the legend beside a diagram (below one that is too wide)


def _draw(g: _Graph, ax=None, title=None, legend=True):
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D
    from matplotlib.patches import FancyBboxPatch, Rectangle

    geo = layout(g)
    if os.environ.get("LAZYLOOP_STRICT_DIAGRAMS"):   # set by tests/test_notebooks.py
        wrong = problems(g, geo)
        if wrong:
            raise AssertionError("diagram: " + "; ".join(wrong[:5]))
    xs = [v for bx in geo.nodes.values() for v in (bx[0], bx[2])] + \
        [v for bx, _, _ in geo.scopes.values() for v in (bx[0], bx[2])]
    ys = [v for bx in geo.nodes.values() for v in (bx[1], bx[3])] + \
        [v for bx, _, _ in geo.scopes.values() for v in (bx[1], bx[3])]
    xlim = (min(xs, default=0) - 0.3, max(xs, default=1) + 0.3)
    ylim = (min(ys, default=-1) - 0.2, max(ys, default=0) + 0.2)
    legend_right = legend and xlim[1] - xlim[0] + LEGEND_WIDTH <= MAX_WIDTH
    if ax is None:   # 1:1 at the design scale (every label fits its box), at most MAX_WIDTH
        wide, high = xlim[1] - xlim[0], ylim[1] - ylim[0]
        shrink = min(1.0, MAX_WIDTH / wide)
        fig = plt.figure(figsize=(wide * shrink, high * shrink))
        ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(*xlim)
    ax.set_ylim(*ylim)
    ax.set_aspect("equal")
    fig = ax.figure
    bbox = ax.get_window_extent().transformed(fig.dpi_scale_trans.inverted())
    scale = min(1.0, bbox.width / (xlim[1] - xlim[0]), bbox.height / (ylim[1] - ylim[0]))
    font = FONT * scale
    loop_names = list(g.parents)
    for name, ((x0, y0, x1, y1), level, kind) in geo.scopes.items():
        colour = LOOP_COLOURS[loop_names.index(name) % len(LOOP_COLOURS)] if kind == "loop" \
            else "#bf9000"
        ax.add_patch(FancyBboxPatch((x0, y0), x1 - x0, y1 - y0,
                                    boxstyle="round,pad=0,rounding_size=0.08",
                                    fc=colour, alpha=0.07 if kind == "loop" else 0.1, ec=colour,
                                    lw=1.4 if kind == "loop" else 1.0,
                                    ls="-" if kind == "loop" else "--", zorder=0))
        ax.text(x0 + 0.06, y1 - 0.05, name, color=colour, fontsize=font * 1.15,
                fontweight="bold", va="top", ha="left", zorder=1)
    for e in geo.edges:
        px, py = zip(*e.points)
        colour = BACK_EDGE if e.back else "#555555"
        ax.plot(px, py, color=colour, lw=1.4 if e.back else 0.9, ls="--" if e.back else "-",
                zorder=2, solid_capstyle="butt")
        ax.annotate("", xy=e.points[-1], xytext=e.points[-2], zorder=3,
                    arrowprops=dict(arrowstyle="-|>", color=colour, lw=0.9,
                                    mutation_scale=9 * scale, shrinkA=0, shrinkB=0))
        if e.label:
            (xa, ya), (xb, yb) = _longest_segment(e.points)
            ax.text((xa + xb) / 2, (ya + yb) / 2, e.label, fontsize=font * 1.1,
                    color=colour, ha="center", va="center", zorder=4, fontweight="bold",
                    bbox=dict(fc="white", ec="none", pad=0.4))
    for n, (x0, y0, x1, y1) in geo.nodes.items():
        label, kind, _ = g.nodes[n]
        style = "square,pad=0" if kind in BOUNDARY else "round,pad=0,rounding_size=0.06"
        ax.add_patch(FancyBboxPatch((x0, y0), x1 - x0, y1 - y0, boxstyle=style,
                                    fc=COLOURS[kind], ec="#444444",
                                    lw=1.2 if kind in BOUNDARY else 0.7, zorder=5))
        ax.text((x0 + x1) / 2, (y0 + y1) / 2, label, fontsize=font, ha="center",
                va="center", zorder=6, linespacing=1.05)
    ax.set_axis_off()
    if legend:
        handles = [Rectangle((0, 0), 1, 1, fc=COLOURS[k], ec="#444444",
                             lw=1.4 if m == "s" else 0.6, label=t) for t, k, m in LEGEND]
        handles.append(Line2D([], [], color=BACK_EDGE, ls="--", lw=1.4,
                              label="back edge: a recurrence's next value"))
        handles.append(Rectangle((0, 0), 1, 1, fc="#bf9000", alpha=0.2, ec="#bf9000", ls="--",
                                 label="if branch (true / false)"))
        if legend_right:
            ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0),
                      fontsize=7, frameon=False)
        else:   # below, in as many columns as the diagram's width holds
            columns = max(1, min(len(handles), int(bbox.width // LEGEND_WIDTH)))
            ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(0.0, 0.0),
                      fontsize=7, frameon=False, ncol=columns)
    text = title or ""
    if g.note:
        text += ("\n" if text else "") + "rejected: " + _wrap(g.note, 100)
    if text:
        ax.set_title(text, fontsize=9, loc="left")
    return ax


def _longest_segment(points):
    pairs = list(zip(points, points[1:]))
    return max(pairs, key=lambda s: abs(s[1][0] - s[0][0]) + abs(s[1][1] - s[0][1]))


def geometry(what):
    """The layout of the diagram of a network or plan, without drawing it (see
    `teach.layout.Geometry`): node boxes, routed edges, loop and branch boxes."""
    if isinstance(what, Plan) or hasattr(what, "plan"):
        plan = what if isinstance(what, Plan) else what.plan
        return layout(_plan_graph(plan))
    return layout(_network_graph(what))


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
    """Several plans (or networks) in a grid of subplots, titled by the mapping's keys. Each
    subplot is at least `width` x `height` inches and large enough to draw its diagram 1:1."""
    import matplotlib.pyplot as plt

    items = list(plans.items())
    nrows = (len(items) + ncols - 1) // ncols
    sizes = [(geo.width, geo.height) for geo in (geometry(what) for _, what in items)]
    width = max([width] + [w + 0.8 for w, _ in sizes])
    height = max([height] + [h + 1.0 for _, h in sizes])
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
