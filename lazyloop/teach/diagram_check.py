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
    """What is wrong with a diagram's geometry, in words (empty when nothing is): an edge that
    passes through a node's box, an edge that does not start on its source's box or end on
    its target's, a back edge without its `next` label, node boxes that overlap or touch, a
    node inside the box of a loop or branch it does not belong to."""
    found = []

    def on(point, box, tol=1e-6):
        x, y = point
        inside = box[0] - tol <= x <= box[2] + tol and box[1] - tol <= y <= box[3] + tol
        border = min(abs(x - box[0]), abs(x - box[2]), abs(y - box[1]), abs(y - box[3])) < tol
        return inside and border

    for e in geo.edges:
        if not on(e.points[0], geo.nodes[e.source]):
            found.append(f"edge {e.source} -> {e.target} does not start on its source")
        if not on(e.points[-1], geo.nodes[e.target]):
            found.append(f"edge {e.source} -> {e.target} does not end on its target")
        if e.back and e.label != "next":
            found.append(f"back edge {e.source} -> {e.target} is not labelled next")
        for p, q in zip(e.points, e.points[1:]):
            for n, box in geo.nodes.items():
                if segment_hits_box(p, q, box):
                    found.append(f"edge {e.source} -> {e.target} passes through {n}")
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
