"""Where each part of a diagram goes, as plain geometry that can be checked without drawing.

A layered layout: columns (layers) by data-flow depth; one band of rows per loop, nested
loops and the branches of an if-conditional inside their parent's band, so that their boxes
nest and never cover a node of another scope. Node boxes are sized to their labels, and tall
enough for one input port per input. Edges are routed orthogonally by `teach.routing`: out of
a node's side into the vertical channel after its column, along a free horizontal lane, down
the channel before the target's column and into one of the target's ports; each value has its
own track in a channel, so wires of two values never run along each other. A back edge (a
recurrence's next value) leaves its real source at a port of its own, runs along its own lane
at the bottom of the loop's band and enters the recurrence: it is labelled ``next``. Channels
are as wide as their tracks need.

Sizes are in inches at the design scale (a 7 pt font), so a figure drawn 1:1 fits every label.
"""
from __future__ import annotations

import functools
from typing import Dict, List, Optional, Tuple

import attrs

from .graph import _Graph, branch_regions, within
from .routing import TRACK, Router

FONT = 7.0                               # the labels' size in points, at the design scale
CHAR, LINE = 0.068, 0.15                 # a character's width (without matplotlib), a line
PAD_X, PAD_Y = 0.1, 0.14                 # a box's padding around its label
PORT = 0.12                              # room per input port on a box's left side
CHANNEL, ROW_GAP = 0.22, 0.42            # least room between columns, between rows
TITLE, LANE = 0.3, 0.16                  # a loop's title, one back-edge lane

Box = Tuple[float, float, float, float]   # x0, y0, x1, y1 (y grows upwards)


@attrs.frozen
class Edge:
    source: object
    target: object
    back: bool
    points: Tuple[Tuple[float, float], ...]
    label: Optional[str] = None           # "next" on back edges, "true" / "false" on branches


@attrs.frozen
class Geometry:
    nodes: Dict[object, Box]               # each node's box
    edges: List[Edge]
    scopes: Dict[str, Tuple[Box, int, str]]  # loop or branch -> (box, depth, "loop"/"branch")
    width: float
    height: float


@functools.lru_cache(maxsize=None)
def _text_width(line: str) -> float:
    """How wide one line of a label is drawn, in inches: measured with matplotlib's font
    (DejaVu Sans at FONT points), or estimated from its length without matplotlib."""
    try:
        from matplotlib.font_manager import FontProperties
        from matplotlib.textpath import TextToPath
    except ImportError:
        return len(line) * CHAR
    width, _, _ = TextToPath().get_text_width_height_descent(
        line, FontProperties(size=FONT), ismath=False)
    return width / 72


def _size(label: str, inputs: int = 0) -> Tuple[float, float]:
    lines = str(label).split("\n")
    return (max(_text_width(s) for s in lines) + 2 * PAD_X,
            max(len(lines) * LINE + PAD_Y, (inputs + 1) * PORT))


def _columns(g: _Graph):
    """The layer of each node: the longest path from a source (back edges left out, they are
    the only cycles, `structure/acyclic`); loop outputs right of everything in their loop;
    constants and inputs just before their first reader."""
    import networkx as nx

    dag = nx.DiGraph()
    dag.add_nodes_from(g.nodes)
    dag.add_edges_from((a, b) for a, b, back in g.edges if not back)
    if not nx.is_directed_acyclic_graph(dag):  # a rejected network may have a cycle
        dag = nx.DiGraph(nx.bfs_tree(dag.to_undirected(), next(iter(g.nodes)))) if g.nodes else dag
        dag.add_nodes_from(g.nodes)
    order = list(nx.topological_sort(dag))
    column, lower = {}, {}
    for _ in range(2 + len(g.parents)):
        for nid in order:
            preds = list(dag.predecessors(nid))
            column[nid] = max(1 + max((column[p] for p in preds), default=-1), lower.get(nid, 0))
        changed = False
        for nid, (_, kind, box) in g.nodes.items():
            if kind == "loop_output" and box is not None:
                inside = [column[m] for m, (_, k, b) in g.nodes.items()
                          if k != "loop_output" and within(b, box, g.parents)]
                want = 1 + max(inside, default=-1)
                if want > lower.get(nid, 0):
                    lower[nid] = want
                    changed = True
        if not changed:
            break
    for nid, (_, kind, _) in g.nodes.items():
        succ = [column[s] for s in dag.successors(nid)]
        if kind in ("constant", "input") and succ:
            column[nid] = max(column[nid], min(succ) - 1)
    return column


@attrs.frozen
class _Rows:
    """The vertical half of a layout: each node's centre y, each scope's band (first and last
    column, top and bottom y, depth, kind), each back edge's lane, the total height."""
    cy: Dict[object, float]
    bands: Dict[str, Tuple[int, int, float, float, int, int, str]]
    lanes: Dict[int, float]
    height: float


def _rows(g: _Graph, column, size, branches) -> _Rows:
    """Bands of rows, one per scope, nested scopes inside their parent's; in each band the
    nodes of a column stacked in rows, ordered by the barycentre heuristic (fewer crossings,
    shorter edges); below each band, one lane per back edge into it."""
    pitch = max([h for _, h in size.values()] or [LINE]) + ROW_GAP
    children: Dict[Optional[str], List[str]] = {None: []}
    for scope in g.parents:
        children.setdefault(scope, [])
    for scope, parent in g.parents.items():
        children.setdefault(parent if parent in children else None, []).append(scope)
    members: Dict[Optional[str], list] = {}
    for nid, (_, _, box) in g.nodes.items():
        members.setdefault(box if box in children else None, []).append(nid)
    back_into: Dict[Optional[str], List[int]] = {}
    for k, (a, b, back) in enumerate(g.edges):
        if back and column[b] <= column[a]:   # a lane back to the recurrence
            back_into.setdefault(g.nodes[b][2], []).append(k)

    def depth_below(scope):
        return 1 + max((depth_below(c) for c in children.get(scope, [])), default=0)

    def place(scope, level, y, order, cy, bands, lanes):
        top = y
        if scope is not None:
            y += TITLE
        by_column: Dict[int, list] = {}
        for nid in sorted(members.get(scope, []), key=lambda n: (column[n], order[n], str(n))):
            by_column.setdefault(column[nid], []).append(nid)
        for nids in by_column.values():
            for k, nid in enumerate(nids):
                cy[nid] = -(y + pitch * (k + 0.5))
        y += pitch * max((len(v) for v in by_column.values()), default=0)
        for child in children.get(scope, []):
            y = place(child, level + 1, y + 0.12, order, cy, bands, lanes) + 0.12
        for k in back_into.get(scope, []):
            y += LANE
            lanes[k] = -y
        if back_into.get(scope):
            y += LANE / 2
        if scope is not None:
            cols = [column[n] for n in _subtree(scope, children, members)] or [0]
            kind = "branch" if scope in branches else "loop"
            bands[scope] = (min(cols), max(cols), -top + 0.02, -y - 0.04, level,
                            depth_below(scope), kind)
            y += 0.1
        return y

    neighbours = {n: [] for n in g.nodes}
    for a, b, back in g.edges:
        if not back:
            neighbours[a].append(b)
            neighbours[b].append(a)
    order = {n: 0.0 for n in g.nodes}
    for _ in range(4):
        cy, bands, lanes = {}, {}, {}
        height = place(None, 0, 0.0, order, cy, bands, lanes)
        order = {n: -sum(cy[m] for m in neighbours[n]) / len(neighbours[n])
                 if neighbours[n] else -cy[n] for n in g.nodes}
    return _Rows(cy, bands, lanes, height)


def _pad(depth_below: int) -> float:
    """How far a scope's box reaches past its columns: more for boxes with boxes inside."""
    return 0.1 + 0.1 * (depth_below - 1)


def layout(g: _Graph) -> Geometry:
    """The geometry of the diagram of `g` (see the module docstring)."""
    branches = branch_regions(g)
    column = _columns(g)
    inputs = {n: 0 for n in g.nodes}
    for _, b, _ in g.edges:
        inputs[b] += 1
    size = {n: _size(label, inputs[n]) for n, (label, _, _) in g.nodes.items()}
    rows = _rows(g, column, size, branches)
    scopes = {name: band[:4] for name, band in rows.bands.items()}
    router = Router(column, rows.cy, size, g.edges, scopes, rows.lanes)
    routes = router.route()
    tracks = router.tracks()

    ncols = 1 + max(column.values(), default=0)
    col_w = [max([size[n][0] for n in g.nodes if column[n] == c] or [0.5]) for c in range(ncols)]
    track_x, left, x = {}, [0.0] * (ncols + 1), 0.0
    for channel in range(ncols + 1):   # channel c runs just left of column c
        inner = [_pad(b[5]) + 0.05 for b in rows.bands.values() if b[1] == channel - 1]
        outer = [_pad(b[5]) + 0.05 for b in rows.bands.values() if b[0] == channel]
        zone_l, zone_r = max(inner, default=0.0), max(outer, default=0.0)
        used = tracks.get(channel, {})
        n = 1 + max(used.values(), default=-1)
        width = max(CHANNEL, zone_l + zone_r + (n + 1) * TRACK)
        spare = width - zone_l - zone_r - (n + 1) * TRACK
        for value, j in used.items():
            track_x[channel, value] = x + zone_l + spare / 2 + (j + 1) * TRACK
        x += width
        left[channel] = x
        if channel < ncols:
            x += col_w[channel]
    boxes = {}
    for n, (w, h) in size.items():
        cx = left[column[n]] + col_w[column[n]] / 2
        boxes[n] = (cx - w / 2, rows.cy[n] - h / 2, cx + w / 2, rows.cy[n] + h / 2)

    def where(ref):
        if ref[0] == "right":
            return boxes[ref[1]][2]
        if ref[0] == "left":
            return boxes[ref[1]][0]
        return track_x[ref[1], ref[2]]

    edges = []
    for (a, b, back), route in zip(g.edges, routes):
        points = _simplify([(where(ref), y) for ref, y in route])
        edges.append(Edge(a, b, back, points, "next" if back else g.roles.get((a, b))))
    geo_scopes = {}
    for name, (first, last, top, bottom, level, depth, kind) in rows.bands.items():
        pad = _pad(depth)
        geo_scopes[name] = ((left[first] - pad, bottom, left[last] + col_w[last] + pad, top),
                            level, kind)
    xs = [v for bx in list(boxes.values()) + [s[0] for s in geo_scopes.values()]
          for v in (bx[0], bx[2])]
    return Geometry(boxes, edges, geo_scopes, width=max(xs, default=1) - min(xs, default=0),
                    height=rows.height)


def _simplify(points):
    """Drop repeated points and the middle of three on one line running one way."""
    out = [points[0]]
    for p in points[1:]:
        if abs(p[0] - out[-1][0]) < 1e-9 and abs(p[1] - out[-1][1]) < 1e-9:
            continue
        if len(out) >= 2:
            (x0, y0), (x1, y1) = out[-2], out[-1]
            same_line = (abs(x0 - x1) < 1e-9 and abs(x1 - p[0]) < 1e-9) or \
                (abs(y0 - y1) < 1e-9 and abs(y1 - p[1]) < 1e-9)
            onward = (x1 - x0) * (p[0] - x1) + (y1 - y0) * (p[1] - y1) > 0
            if same_line and onward:
                out[-1] = p
                continue
        out.append(p)
    return tuple(out)


def _subtree(scope, children, members):
    out = list(members.get(scope, []))
    for c in children.get(scope, []):
        out += _subtree(c, children, members)
    return out
