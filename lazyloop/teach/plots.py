"""Plots of evaluations and values: the forcing trace (`forced`, `plot_trace`), values with
undefined positions (`plot_masked`, drawn the same way wherever they appear:
`hatch_undefined`, `undefined_legend`) and sequences over time (`plot_sequence`)."""
from __future__ import annotations

from typing import Dict, Iterable, Optional

import numpy as np

from ..core.plan import Undefined
from .graph import LOOP_COLOURS
from .text import trace_of

# ------------------------------------------------------------------------------------------
# The forcing trace
# ------------------------------------------------------------------------------------------

def forced(evaluation, stream, activation=()):
    """Sorted indices of `stream` that were forced in one activation (``()`` for a loop at the
    top level, ``(1,)`` for an inner loop's run during trip 1 of its outer loop). With
    ``activation=None``: a dict {activation: indices} over every activation."""
    seen: Dict[tuple, set] = {}
    for e in trace_of(evaluation):
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
               title=None, upto: Optional[int] = None):
    """The forcing trace as a grid: one row per stream (per activation, for nested loops),
    one column per trip index; a filled cell was forced (numbered in forcing order when
    `order`), a grey cell was never touched. The dashed line stands after the last trip that
    ran (index n-1): column n is where a WHILE input is forced one last time to stop the loop.
    With `upto`, only the first `upto` events of the trace are shown (a step of the evaluation).
    Returns the Axes."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    plan = evaluation.plan
    names = list(loops) if loops is not None else list(plan.loops)
    wanted = set(streams) if streams is not None else None
    step = {}
    for k, e in enumerate(trace_of(evaluation)):
        if upto is not None and k >= upto:
            break
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
    rank = {k: k + 1 for k in numbered}   # positions in the whole trace, as print_trace
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


# The look of an undefined position in every plot of values: grey, hatched, marked `?`.
UNDEFINED = {"fc": "#eeeeee", "ec": "#8c8c8c", "hatch": "///", "lw": 0.5}
UNDEFINED_LABEL = "? undefined (padding, or a value no trip wrote): any value there is right"


def hatch_undefined(ax, row, col):
    """Mark the cell (row, col) of a grid as an undefined position."""
    from matplotlib.patches import Rectangle
    ax.add_patch(Rectangle((col - 0.5, row - 0.5), 1, 1, **UNDEFINED))
    ax.text(col, row, "?", ha="center", va="center", fontsize=9, color="#555555")


def undefined_legend(where, **kwargs):
    """One legend entry saying what the hatched cells are, on an Axes or a Figure (pass a
    Figure for a grid of plots: one legend for all of them)."""
    from matplotlib.patches import Patch
    options = {"loc": "upper left", "bbox_to_anchor": (0.0, 0.0), "frameon": False,
               "fontsize": 8}
    options.update(kwargs)
    return where.legend(handles=[Patch(label=UNDEFINED_LABEL, **UNDEFINED)], **options)


def plot_masked(value, defined, ax=None, title=None, annotate=True, xlabel="position",
                ylabel="position", legend=False):
    """A 1-D or 2-D value as a grid, its axes labelled `xlabel` and `ylabel` (say which of
    them is the trip axis); undefined positions hatched and marked `?` (with `legend`, a
    legend says so; for a grid of plots call `undefined_legend(fig)` once instead)."""
    import matplotlib.pyplot as plt

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
            hatch_undefined(ax, r, c)
        elif annotate:
            ax.text(c, r, f"{grid[r, c]:g}", ha="center", va="center", fontsize=8)
    ax.set_xticks(range(grid.shape[1]))
    ax.set_yticks(range(grid.shape[0]))
    ax.set_xlabel(xlabel, fontsize=8)
    ax.set_ylabel(ylabel if value.ndim > 1 else "", fontsize=8)
    if title:
        ax.set_title(title, fontsize=9, loc="left")
    if legend and not mask.all():
        undefined_legend(ax, bbox_to_anchor=(0.0, -0.25))
    return ax


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
