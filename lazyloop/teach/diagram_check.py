"""The strict check of a diagram's geometry (`problems`): what would make a diagram misread,
found without drawing it. notebooks/build.py and the notebook tests set
``LAZYLOOP_STRICT_DIAGRAMS``, and `teach.draw` then refuses any diagram with a problem."""
from __future__ import annotations

from typing import TYPE_CHECKING, List

from .graph import _Graph, within

if TYPE_CHECKING:  # for the annotations only
    from .layout import Geometry


def segment_hits_box(p, q, box, margin: float = 0.02) -> bool:
    """True when the segment p-q passes through the inside of `box` (shrunk by `margin`)."""
    x0, y0, x1, y1 = box[0] + margin, box[1] + margin, box[2] - margin, box[3] - margin
    if x0 >= x1 or y0 >= y1:
        return False
    t0, t1 = 0.0, 1.0
    dx, dy = q[0] - p[0], q[1] - p[1]
    for d, lo, hi, s in ((dx, x0, x1, p[0]), (dy, y0, y1, p[1])):
        if abs(d) < 1e-12:
            if not lo < s < hi:
                return False
            continue
        a, b = (lo - s) / d, (hi - s) / d
        t0, t1 = max(t0, min(a, b)), min(t1, max(a, b))
        if t0 >= t1:
            return False
    return True


def problems(g: _Graph, geo: "Geometry") -> List[str]:
    """What is wrong with a diagram's geometry, in words (empty when nothing is): every
    finding of `box_problems`, `edge_problems`, `wire_problems` and `width_problems`."""
    return box_problems(g, geo) + edge_problems(geo) + wire_problems(geo) + width_problems(geo)


def box_problems(g: _Graph, geo: "Geometry") -> List[str]:
    """Node boxes that overlap or touch; a node inside the box of a loop or branch it does
    not belong to, or outside the box of one it does belong to."""
    found = []
    items = list(geo.nodes.items())
    for k, (n, a) in enumerate(items):
        for m, b in items[k + 1:]:
            gap = 0.1   # boxes never touch: boundary layers stand apart
            if min(a[2], b[2]) - max(a[0], b[0]) > -gap and \
                    min(a[3], b[3]) - max(a[1], b[1]) > -gap:
                found.append(f"boxes of {n} and {m} overlap or touch")
    for scope, (box, _, _) in geo.scopes.items():
        for n, (x0, y0, x1, y1) in geo.nodes.items():
            centre = ((x0 + x1) / 2, (y0 + y1) / 2)
            inside = box[0] < centre[0] < box[2] and box[1] < centre[1] < box[3]
            if inside != within(g.nodes[n][2], scope, g.parents):
                found.append(f"{n} is {'inside' if inside else 'outside'} the box of {scope}")
    return found


def _on_border(point, box, tol=1e-6) -> bool:
    x, y = point
    inside = box[0] - tol <= x <= box[2] + tol and box[1] - tol <= y <= box[3] + tol
    border = min(abs(x - box[0]), abs(x - box[2]), abs(y - box[1]), abs(y - box[3])) < tol
    return inside and border


def edge_problems(geo: "Geometry") -> List[str]:
    """Each edge on its own: it starts on its source's box and ends on its target's, runs
    through no node's box, a back edge is labelled `next`, and no edge doubles back on
    itself (which draws a dangling stub) or runs along one of its own segments."""
    found = []
    for e in geo.edges:
        name = f"edge {e.source} -> {e.target}"
        if not _on_border(e.points[0], geo.nodes[e.source]):
            found.append(f"{name} does not start on its source")
        if not _on_border(e.points[-1], geo.nodes[e.target]):
            found.append(f"{name} does not end on its target")
        if e.back and e.label != "next":
            found.append(f"back {name} is not labelled next")
        segments = list(zip(e.points, e.points[1:]))
        for p, q in segments:
            for n, box in geo.nodes.items():
                if segment_hits_box(p, q, box):
                    found.append(f"{name} passes through {n}")
        for k, s in enumerate(segments):
            for t in segments[k + 1:]:
                if _collinear(s, t, gap=-TOUCH):   # adjacent segments share one point only
                    found.append(f"{name} doubles back on itself (a dangling stub)")
    return found


# Wires of different values closer than this read as one wire, or as joined.
TOUCH = 0.03
# Two values' wires end to end on one line, less than IN_LINE apart along it and less than
# JOG across, read as one wire (with a jog).
IN_LINE, JOG = 0.15, 0.1
# Two arrowheads whose tips are closer than this read as one (`problems`: one per input).
ARROWHEAD = 0.05


def _horizontal(s) -> bool:
    return abs(s[0][1] - s[1][1]) < 1e-9


def _collinear(s, t, gap: float = TOUCH, jog: float = TOUCH) -> bool:
    """True when two axis-parallel segments read as one line: on one line (less than TOUCH
    across) and overlapping, or end to end with less than `gap` between them along the line
    and less than `jog` across (horizontal segments only: two vertical runs side by side
    that end near each other are two wires turning into their own ports)."""
    if _horizontal(s) != _horizontal(t):
        return False
    along, across = (0, 1) if _horizontal(s) else (1, 0)
    offset = abs(s[0][across] - t[0][across])
    lo_s, hi_s = sorted((s[0][along], s[1][along]))
    lo_t, hi_t = sorted((t[0][along], t[1][along]))
    overlap = min(hi_s, hi_t) - max(lo_s, lo_t)
    if overlap > 0:
        return offset < TOUCH
    return -overlap < gap and offset < (jog if along == 0 else TOUCH)


def _point_on(point, s, tol: float = TOUCH) -> bool:
    (x0, y0), (x1, y1) = s
    return (min(x0, x1) - tol <= point[0] <= max(x0, x1) + tol and
            min(y0, y1) - tol <= point[1] <= max(y0, y1) + tol)


def _value(e):
    """What a wire carries: one source's value, drawn solid, or as a back edge, dashed.
    Wires of one value may share their track (a fan-out); wires of two may not touch."""
    return (e.source, e.back)


def wire_problems(geo: "Geometry") -> List[str]:
    """Edges read against each other: wires of two values that run along each other (on one
    line, overlapping, or end to end less than `IN_LINE` apart with less than `JOG` between
    their heights), an edge that starts, bends or ends on another value's
    wire (a false connection; crossings are fine), two edges into one node whose arrowheads
    meet (one arrowhead per input), an edge running along a loop's or branch's border."""
    found = []
    edges = geo.edges
    for k, e in enumerate(edges):
        mine = list(zip(e.points, e.points[1:]))
        for f in edges[k + 1:]:
            theirs = list(zip(f.points, f.points[1:]))
            pair = f"edges {e.source} -> {e.target} and {f.source} -> {f.target}"
            if f.target == e.target and \
                    max(abs(a - b) for a, b in zip(e.points[-1], f.points[-1])) < ARROWHEAD:
                found.append(f"{pair} share one arrowhead")
            if _value(e) == _value(f):
                continue
            if any(_collinear(s, t, gap=IN_LINE, jog=JOG) for s in mine for t in theirs):
                found.append(f"{pair} run along each other")
            elif any(_point_on(p, t) for p in e.points for t in theirs) or \
                    any(_point_on(p, s) for p in f.points for s in mine):
                found.append(f"{pair} touch: one starts, bends or ends on the other")
        for scope, ((x0, y0, x1, y1), _, _) in geo.scopes.items():
            border = [((x0, y0), (x1, y0)), ((x0, y1), (x1, y1)), ((x0, y0), (x0, y1)),
                      ((x1, y0), (x1, y1))]
            if any(_collinear(s, b, gap=0.0) for s in mine for b in border):
                found.append(f"edge {e.source} -> {e.target} runs along the border of {scope}")
    return found


# A diagram is drawn at most this wide (inches) and shrunk to fit; past READABLE_WIDTH its
# labels would shrink below READABLE_SCALE of their design size (7 pt), too small to read
# at a notebook's column width.
MAX_WIDTH = 10.0
READABLE_SCALE = 0.8
READABLE_WIDTH = MAX_WIDTH / READABLE_SCALE


def width_problems(geo: "Geometry") -> List[str]:
    """A diagram too wide to read at a notebook's column width (`READABLE_WIDTH`)."""
    if geo.width > READABLE_WIDTH:
        return [f"the diagram is {geo.width:.1f} in wide: its labels would be shrunk below "
                f"{READABLE_SCALE:.0%} to fit {MAX_WIDTH:.0f} in (at most "
                f"{READABLE_WIDTH:.1f} in)"]
    return []
