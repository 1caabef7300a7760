"""Where each part of a diagram goes, as plain geometry that can be checked without drawing.

A layered layout: columns (layers) by data-flow depth; one band of rows per loop, nested
loops and the branches of an if-conditional inside their parent's band, so that their boxes
nest and never cover a node of another scope. Node boxes are sized to their labels. Edges are
routed orthogonally through the free space: out of a node's side into the vertical channel
between two columns, along a horizontal lane (a row that is free, or the gap between two
rows), down the channel before the target's column and into its side. A back edge (a
recurrence's next value) leaves its real source, runs along its own lane at the bottom of the
loop's band and enters the recurrence: it is labelled ``next``.

Sizes are in inches at the design scale (a 7 pt font), so a figure drawn 1:1 fits every label.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import attrs

from .diagram_check import segment_hits_box
from .graph import _Graph, branch_regions, within

CHAR, LINE, PAD = 0.068, 0.15, 0.14      # a character's width, a line's height, box padding
CHANNEL, ROW_GAP = 0.55, 0.42            # room between columns, between rows
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


def _size(label: str) -> Tuple[float, float]:
    lines = str(label).split("\n")
    return max(len(s) for s in lines) * CHAR + 2 * PAD, len(lines) * LINE + PAD


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


def layout(g: _Graph) -> Geometry:
    """The geometry of the diagram of `g` (see the module docstring)."""
    branches = branch_regions(g)
    column = _columns(g)
    size = {n: _size(label) for n, (label, _, _) in g.nodes.items()}
    ncols = 1 + max(column.values(), default=0)
    col_w = [max([size[n][0] for n in g.nodes if column[n] == c] or [0.5]) for c in range(ncols)]
    left = [0.0] * ncols
    for c in range(1, ncols):
        left[c] = left[c - 1] + col_w[c - 1] + CHANNEL
    pitch = max([h for _, h in size.values()] or [LINE]) + ROW_GAP

    children: Dict[Optional[str], List[str]] = {None: []}
    for scope in g.parents:
        children.setdefault(scope, [])
    for scope, parent in g.parents.items():
        children.setdefault(parent if parent in children else None, []).append(scope)
    members: Dict[Optional[str], list] = {}
    for nid, (_, _, box) in g.nodes.items():
        members.setdefault(box if box in children else None, []).append(nid)
    back_into = {}
    for a, b, back in g.edges:
        if back:
            back_into.setdefault(g.nodes[b][2], []).append((a, b))

    centre, scopes, lanes = {}, {}, {}
    y = [0.0]   # how far down the next row starts (positive downwards)

    def depth_below(scope):
        return 1 + max((depth_below(c) for c in children.get(scope, [])), default=0)

    def place(scope, level):
        top = y[0]
        if scope is not None:
            y[0] += TITLE
        by_column: Dict[int, list] = {}
        for nid in sorted(members.get(scope, []), key=lambda n: (column[n], order[n], str(n))):
            by_column.setdefault(column[nid], []).append(nid)
        for col, nids in by_column.items():
            for k, nid in enumerate(nids):
                centre[nid] = (left[col] + col_w[col] / 2, -(y[0] + pitch * (k + 0.5)))
        y[0] += pitch * max((len(v) for v in by_column.values()), default=0)
        for child in children.get(scope, []):
            y[0] += 0.12
            place(child, level + 1)
            y[0] += 0.12
        for edge in back_into.get(scope, []):
            y[0] += LANE
            lanes[edge] = -y[0]
        if back_into.get(scope):
            y[0] += LANE / 2
        if scope is not None:
            cols = [column[n] for n in _subtree(scope, children, members)] or [0]
            pad = 0.1 + 0.1 * (depth_below(scope) - 1)
            x0, x1 = left[min(cols)] - pad, left[max(cols)] + col_w[max(cols)] + pad
            kind = "branch" if scope in branches else "loop"
            scopes[scope] = ((x0, -y[0] - 0.04, x1, -top + 0.02), level, kind)
            y[0] += 0.1

    neighbours = {n: [] for n in g.nodes}
    for a, b, back in g.edges:
        if not back:
            neighbours[a].append(b)
            neighbours[b].append(a)
    order = {n: 0.0 for n in g.nodes}
    for _ in range(4):   # the barycentre heuristic: fewer crossings, shorter edges
        centre.clear(), scopes.clear(), lanes.clear()
        y[0] = 0.0
        place(None, 0)
        order = {n: -sum(centre[m][1] for m in neighbours[n]) / len(neighbours[n])
                 if neighbours[n] else -centre[n][1] for n in g.nodes}
    boxes = {n: (cx - size[n][0] / 2, cy - size[n][1] / 2, cx + size[n][0] / 2,
                 cy + size[n][1] / 2) for n, (cx, cy) in centre.items()}
    router = _Router(boxes, column, left, col_w, pitch)
    edges = []
    for a, b, back in g.edges:
        if back:
            edges.append(Edge(a, b, True, router.back(a, b, lanes[(a, b)]), "next"))
        else:
            edges.append(Edge(a, b, False, router.forward(a, b), g.roles.get((a, b))))
    xs = [v for bx in list(boxes.values()) + [s[0] for s in scopes.values()]
          for v in (bx[0], bx[2])]
    return Geometry(boxes, edges, scopes, width=max(xs, default=1) - min(xs, default=0),
                    height=y[0])


class _Router:
    """Orthogonal routes through channels and lanes. Edges from one source share their
    tracks (a fan-out reads as one wire that branches); edges from different sources never
    run along each other."""

    def __init__(self, boxes, column, left, col_w, pitch):
        self.boxes, self.column, self.left, self.col_w, self.pitch = \
            boxes, column, left, col_w, pitch
        self.vsegs: List[tuple] = []    # (x, y0, y1, source)
        self.hsegs: List[tuple] = []    # (y, x0, x1, source)

    @staticmethod
    def _overlaps(segs, at, lo, hi, src, near=0.035):
        lo, hi = min(lo, hi), max(lo, hi)
        return any(abs(s[0] - at) < near and s[3] != src and min(s[2], hi) - max(s[1], lo) > -near
                   for s in segs)

    def _channel(self, c, y0, y1, src):
        """An x in the channel before column `c` for a vertical run from y0 to y1."""
        centre = (self.left[c] if c < len(self.left) else
                  self.left[-1] + self.col_w[-1] + CHANNEL) - CHANNEL / 2
        for x, _, _, s in self.vsegs:
            if s == src and abs(x - centre) < CHANNEL / 2 and \
                    not self._overlaps(self.vsegs, x, y0, y1, src):
                return x
        for k in (0, 1, -1, 2, -2, 3, -3, 4, -4):
            x = centre + k * CHANNEL * 0.1
            if not self._overlaps(self.vsegs, x, y0, y1, src):
                return x
        return centre

    def _free(self, p, q, skip) -> bool:
        return not any(segment_hits_box(p, q, bx) for n, bx in self.boxes.items() if n not in skip)

    def _lane(self, xa, xb, ya, yb, skip, src):
        """A horizontal line from x = xa to xb that crosses no node and runs along no other
        source's wire: the source's or target's row if free, else near a gap between rows."""
        candidates = [yb, ya]
        for k in range(1, 40):
            for y0 in (yb, ya):
                for gap in (y0 - k * self.pitch / 2, y0 + k * self.pitch / 2):
                    candidates += [gap, gap + 0.07, gap - 0.07]
        for y in candidates:
            if self._free((xa, y), (xb, y), skip) and \
                    not self._overlaps(self.hsegs, y, xa, xb, src):
                return y
        return candidates[-1]

    def _record(self, points, src):
        for (x0, y0), (x1, y1) in zip(points, points[1:]):
            if abs(x0 - x1) < 1e-9:
                self.vsegs.append((x0, min(y0, y1), max(y0, y1), src))
            else:
                self.hsegs.append((y0, min(x0, x1), max(x0, x1), src))
        return points

    def forward(self, a, b):
        (ax0, ay0, ax1, ay1), (bx0, by0, bx1, by1) = self.boxes[a], self.boxes[b]
        ya, yb = (ay0 + ay1) / 2, (by0 + by1) / 2
        start, end = (ax1, ya), (bx0, yb)
        if abs(ya - yb) < 1e-9 and ax1 <= bx0 and self._free(start, end, {a, b}) and \
                not self._overlaps(self.hsegs, ya, ax1, bx0, a):
            return self._record((start, end), a)
        ca, cb = self.column[a] + 1, self.column[b]
        guess_a = self.left[ca] - CHANNEL / 2 if ca < len(self.left) else ax1 + CHANNEL / 2
        guess_b = self.left[cb] - CHANNEL / 2
        lane = self._lane(min(guess_a, guess_b) - 0.15, max(guess_a, guess_b) + 0.15, ya, yb,
                          {a, b}, a)
        xa = self._channel(ca, ya, lane, a)
        xb = self._channel(cb, lane, yb, a)
        return self._record(_simplify([start, (xa, ya), (xa, lane), (xb, lane), (xb, yb), end]),
                            a)

    def back(self, a, b, lane):
        """From the next value's source `a` to the recurrence `b`, along its own lane."""
        (ax0, ay0, ax1, ay1), (bx0, by0, bx1, by1) = self.boxes[a], self.boxes[b]
        ya, yb = (ay0 + ay1) / 2, by0 + (by1 - by0) * 0.3
        xa = self._channel(self.column[a] + 1, ya, lane, ("back", a))
        xb = self._channel(self.column[b], lane, yb, ("back", a))
        return self._record(_simplify([(ax1, ya), (xa, ya), (xa, lane), (xb, lane), (xb, yb),
                                       (bx0, yb)]), ("back", a))


def _simplify(points):
    out = [points[0]]
    for p in points[1:]:
        if abs(p[0] - out[-1][0]) > 1e-9 or abs(p[1] - out[-1][1]) > 1e-9:
            out.append(p)
    return tuple(out)


def _subtree(scope, children, members):
    out = list(members.get(scope, []))
    for c in children.get(scope, []):
        out += _subtree(c, children, members)
    return out
