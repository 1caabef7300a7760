"""Edge routing for the diagrams: where each wire runs, decided before any x is known.

Columns hold the nodes; between two columns (and left of the first, right of the last) runs a
vertical *channel*. Positions along the flow are counted in columns: column c spans
[c - 1/4, c + 1/4], the channel before it sits at c - 1/2. A wire is a polyline through:

* **ports** — it leaves its source's right side at the source's *out port* (the box's middle,
  or a lower *back port* for a back edge, so that a value's back edge never shares the
  forward wires' track) and enters its target's left side at a port of its own: a node with k
  inputs has k ports down its left side, one arrowhead each, kept `STUB_GAP` off the heights
  at which other values leave the column before (which would meet them end to end);
* **tracks** — vertical runs in a channel. Every value (a source, or a source's back edge)
  gets one track per channel it uses; values whose runs in a channel come near each other get
  different tracks, so no two values' wires ever run along each other vertically;
* **lanes** — horizontal runs across the columns between the source's and the target's
  channels, at a height where no node box, loop border or loop title is, no other value's
  horizontal wire runs alongside within `SEP`, and none starts or ends in the same channel
  within `STUB_GAP`; a lane the value already runs along is reused (a fan-out reads as one
  wire that branches). A back edge (a recurrence's next value) runs along the lane the layout
  reserved for it at the bottom of its loop's band, on tracks of its own.

The result names each x symbolically (a node's side, or a track of a channel);
`teach.layout` turns tracks into x positions once it knows how many each channel needs.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Tuple

SEP = 0.07       # least distance between two horizontal wires of different values
TRACK = 0.08     # distance between neighbouring tracks of a channel
MARGIN = 0.07    # least distance between a lane and a node box it passes
BORDER = 0.06    # ... and a loop's or branch's top or bottom border
PORT_EDGE = 0.04  # least distance between a port and its box's corner
STUB_GAP = 0.12  # a port stays this far from another value's stub ending in its channel
JOG_GAP = 0.105  # ... or at least this far, if the box is too short for STUB_GAP
SHARE_GAP = 0.3  # two values share a track only with this much room between their runs


def input_ports(height: float, k: int) -> List[float]:
    """Offsets from a box's top of its k input ports, spread evenly down its left side."""
    return [-(j + 1) * height / (k + 1) for j in range(k)]


class Router:
    """Routes the edges of one diagram (see the module docstring).

    `column`: node -> column; `cy`: node -> centre y; `size`: node -> (w, h); `edges`:
    [(source, target, back)]; `scopes`: name -> (first column, last column, top y,
    bottom y); `back_lanes`: edge index -> the y of the lane reserved for a back edge that
    runs back to an earlier (or the same) column."""

    def __init__(self, column, cy, size, edges, scopes, back_lanes):
        self.column, self.cy, self.size, self.edges = column, cy, size, edges
        self.scopes, self.back_lanes = scopes, back_lanes
        self.horizontal: List[Tuple[float, float, float, object]] = []  # y, lo, hi, value
        self.vertical: Dict[int, Dict[object, List[float]]] = {}   # channel -> value -> ys
        self.attach: Dict[int, List[tuple]] = {}  # channel -> [(value, y, side)]
        self.out_port, self.back_port, self.in_port = {}, {}, {}
        self._ports()

    # -- ports ---------------------------------------------------------------------------------
    def _top(self, n):
        return self.cy[n] + self.size[n][1] / 2

    def _ports(self):
        for a, _, back in self.edges:
            self.out_port[a] = self.cy[a]
            if back:   # below the middle, apart from the value's forward wires
                self.back_port[a] = self.cy[a] - min(SEP + 0.02, self.size[a][1] / 2 - PORT_EDGE)
        into: Dict[object, List[int]] = {}
        for k, (_, b, _) in enumerate(self.edges):
            into.setdefault(b, []).append(k)
        for b, ks in into.items():   # ports top to bottom: sources from the top, back edges last
            ks.sort(key=lambda k: (self.edges[k][2], -self.cy[self.edges[k][0]]))
            for gap in (STUB_GAP, JOG_GAP, SEP):
                placed = self._place_ports(b, ks, gap)
                if placed is not None:
                    break
            else:   # no room: the even spread (problems() will say what touches)
                placed = [self._top(b) + off for off in input_ports(self.size[b][1], len(ks))]
            self.in_port.update(zip(ks, placed))

    def _stubs(self, b, value):
        """The heights at which other values' wires leave the column before b's: a port of b
        level with one would meet it end to end in the channel between."""
        ys = [self.out_port[s] for s, _, bk in self.edges
              if not bk and self.column[s] == self.column[b] - 1 and s != value]
        return ys + [self.back_port[s] for s, _, bk in self.edges
                     if bk and self.column[s] == self.column[b] - 1 and ("back", s) != value]

    def _place_ports(self, b, ks, gap) -> Optional[List[float]]:
        """Heights for b's input ports `ks`, top to bottom: each at least SEP from the next
        and `gap` from the stubs of other values (`_stubs`), as near the even spread down
        the box as that allows; None when they do not fit."""
        half = self.size[b][1] / 2 - PORT_EDGE
        lo, hi = self.cy[b] - half, self.cy[b] + half
        base = [self._top(b) + off for off in input_ports(self.size[b][1], len(ks))]
        grid = [hi - 0.005 * j for j in range(int((hi - lo) / 0.005) + 1)]
        values = [("back", self.edges[k][0]) if self.edges[k][2] else self.edges[k][0]
                  for k in ks]
        shared = [s for s in self._stubs(b, None) if all(s in self._stubs(b, v) for v in values)]

        def free(y, stubs):
            return all(abs(y - s) >= gap for s in stubs)

        def room_below(y, count):   # can `count` more ports fit below y?
            spots = [v for v in grid if v <= y - SEP + 1e-9 and free(v, shared)]
            last, fitted = None, 0
            for v in spots:
                if last is None or last - v >= SEP - 1e-9:
                    last, fitted = v, fitted + 1
            return fitted >= count
        placed: List[float] = []
        for j, value in enumerate(values):
            stubs = self._stubs(b, value)
            above = placed[-1] - SEP if placed else hi
            fits = [v for v in grid if v <= above + 1e-9 and free(v, stubs)
                    and room_below(v, len(values) - j - 1)]
            if not fits:
                return None
            placed.append(min(fits, key=lambda v: abs(v - base[j])))
        return placed

    # -- bookkeeping ---------------------------------------------------------------------------
    def _hold(self, y, lo, hi, value):
        self.horizontal.append((y, min(lo, hi), max(lo, hi), value))

    def _clashes(self, y, lo, hi, value) -> bool:
        """True when a horizontal run of `value` at y from lo to hi would come near another
        value's: closer than SEP alongside it, or closer than STUB_GAP end to end (touching
        it in one channel, where the two would read as one wire with a jog)."""
        lo, hi = min(lo, hi), max(lo, hi)
        for y2, lo2, hi2, v2 in self.horizontal:
            if v2 == value:
                continue
            overlap = min(hi, hi2) - max(lo, lo2)
            if overlap > 1e-9 and abs(y - y2) < SEP or abs(overlap) <= 1e-9 and \
                    abs(y - y2) < STUB_GAP:
                return True
        return False

    def _run(self, channel, value, *ys):
        self.vertical.setdefault(channel, {}).setdefault(value, []).extend(ys)

    def _attach(self, channel, value, y, side):
        """A horizontal wire of `value` leaves its track in `channel` at height y, towards the
        left (side -1) or the right (+1)."""
        self.attach.setdefault(channel, []).append((value, y, side))

    # -- lanes ---------------------------------------------------------------------------------
    def _blocked(self, lo, hi):
        """The y intervals a lane from position lo to hi must avoid."""
        spans = []
        for n, c in self.column.items():
            if lo < c < hi:
                h = self.size[n][1] / 2 + MARGIN
                spans.append((self.cy[n] - h, self.cy[n] + h))
        for first, last, top, bottom in self.scopes.values():
            if lo <= last + 0.5 and first - 0.5 <= hi:
                spans += [(top - BORDER, top + BORDER), (bottom - BORDER, bottom + BORDER)]
            if lo <= first + 0.25 and first - 0.5 <= hi:   # the loop's title, top left
                spans.append((top - 0.3, top))
        return spans

    def _lane(self, value, lo, hi, ya, yb) -> float:
        """The height of a horizontal run from channel position lo to hi: free of boxes,
        borders and titles, clear of other values' wires; as near ya or yb as possible."""
        spans = self._blocked(min(lo, hi), max(lo, hi))
        ys = [y for s in self.cy.values() for y in (s - 3, s + 3)]
        low, high = min(ys + [ya, yb]), max(ys + [ya, yb])
        grid = [low + k * SEP / 2 for k in range(int((high - low) / (SEP / 2)) + 1)]
        inside = sorted((ya, yb))

        def cost(y):
            outside = max(inside[0] - y, 0.0, y - inside[1])
            return (outside, min(abs(y - ya), abs(y - yb)))
        for y in sorted([ya, yb] + grid, key=cost):
            if not any(s0 < y < s1 for s0, s1 in spans) and not self._clashes(y, lo, hi, value):
                return y
        return (ya + yb) / 2   # none free: problems() will say so

    def _shared_lane(self, value, lo, hi) -> Optional[float]:
        """A lane `value` already runs along that is free from lo to hi too: a fan-out to
        targets further along then reads as one wire that branches."""
        spans = self._blocked(min(lo, hi), max(lo, hi))
        for y, _, _, v in self.horizontal:
            if v == value and not any(s0 < y < s1 for s0, s1 in spans) and \
                    not self._clashes(y, lo, hi, value):
                return y
        return None

    # -- routes --------------------------------------------------------------------------------
    def route(self):
        """Each edge's route: a list of points (x reference, y), where the x reference is
        ("right", node), ("left", node) or ("track", channel, value)."""
        for k, (a, b, back) in enumerate(self.edges):   # every stub first, then the lanes
            ca, cb = self.column[a], self.column[b]
            value = ("back", a) if back else a
            self._hold(self.back_port[a] if back else self.out_port[a], ca + 0.25, ca + 0.5,
                       value)
            self._hold(self.in_port[k], cb - 0.5, cb - 0.25, value)
        for k, lane in self.back_lanes.items():
            a, b, _ = self.edges[k]
            self._hold(lane, self.column[b] - 0.5, self.column[a] + 0.5, ("back", a))
        routes: List[Optional[list]] = [None] * len(self.edges)
        order = sorted(range(len(self.edges)), key=lambda k: (
            self.edges[k][2], abs(self.column[self.edges[k][1]] - self.column[self.edges[k][0]])))
        for k in order:
            a, b, back = self.edges[k]
            routes[k] = self._back(k) if back else self._forward(k)
        return routes

    def _forward(self, k):
        """An edge to a later column, or (in a rejected network) back to an earlier one: on
        its value's tracks, along a lane found free (or one the value already runs along)."""
        a, b, _ = self.edges[k]
        lo, hi = self.column[a] + 0.5, self.column[b] - 0.5
        ya, yb = self.out_port[a], self.in_port[k]

        def lane():
            y = self._shared_lane(a, lo, hi)
            y = self._lane(a, lo, hi, ya, yb) if y is None else y
            self._hold(y, lo, hi, a)
            return y
        return self._wire(a, b, ya, yb, a, a, lane)

    def _back(self, k):
        """A back edge: down its source's channel to the lane reserved for it, back along
        the lane, up the channel before the recurrence (its own track there too). A next
        value computed left of its recurrence (an invariant) runs forwards, on its own
        tracks and lanes all the same."""
        a, b, _ = self.edges[k]
        lo, hi = self.column[a] + 0.5, self.column[b] - 0.5
        ya, yb = self.back_port[a], self.in_port[k]
        down = ("back", a)

        def lane():
            if k in self.back_lanes:
                return self.back_lanes[k]
            y = self._lane(down, lo, hi, ya, yb)
            self._hold(y, lo, hi, down)
            return y
        return self._wire(a, b, ya, yb, down, ("back", a, b), lane)

    def _wire(self, a, b, ya, yb, down, up, lane):
        """The route from a's port at ya to b's at yb: through the channel between them when
        b's column is the next one, else down the track of `down` after a's column, along
        the height `lane()` gives, and up the track of `up` before b's column."""
        ca, cb = self.column[a], self.column[b]
        first = ("track", ca + 1, down)
        self._attach(ca + 1, down, ya, -1)
        if cb == ca + 1:
            self._run(ca + 1, down, ya, yb)
            self._attach(ca + 1, down, yb, +1)
            return [(("right", a), ya), (first, ya), (first, yb), (("left", b), yb)]
        y = lane()
        last = ("track", cb, up)
        self._run(ca + 1, down, ya, y)
        self._run(cb, up, y, yb)
        onward = 1 if cb > ca else -1   # a lane back to an earlier column runs leftwards
        self._attach(ca + 1, down, y, onward)
        self._attach(cb, up, y, -onward)
        self._attach(cb, up, yb, +1)
        return [(("right", a), ya), (first, ya), (first, y), (last, y), (last, yb),
                (("left", b), yb)]

    # -- tracks --------------------------------------------------------------------------------
    def tracks(self) -> Dict[int, Dict[object, int]]:
        """For each channel, each value's track (0 = leftmost). Values whose runs come near
        each other get different tracks (greedy interval colouring); two values share a
        track only when their runs are `SHARE_GAP` apart, so that one never reads as the
        continuation of the other. The tracks are then ordered to cross few wires."""
        result = {}
        for channel, runs in self.vertical.items():
            spans = sorted(((min(ys), max(ys), v) for v, ys in runs.items()),
                           key=lambda s: (s[0], s[1]))
            groups: List[List[tuple]] = []
            for span in spans:
                for group in groups:
                    if all(span[0] > other[1] + SHARE_GAP or other[0] > span[1] + SHARE_GAP
                           for other in group):
                        group.append(span)
                        break
                else:
                    groups.append([span])
            groups = self._order(groups, self.attach.get(channel, []))
            result[channel] = {v: j for j, group in enumerate(groups) for _, _, v in group}
        return result

    @staticmethod
    def _order(groups, attached):
        """Order a channel's tracks (groups of runs) left to right so that few horizontal
        wires cross another track: a wire leaving a track to the right crosses every track
        further right whose run spans its height, and likewise to the left."""
        def crossings(left, right):
            def spans(group, y):
                return any(lo - 1e-9 <= y <= hi + 1e-9 for lo, hi, _ in group)
            mine = {v for _, _, v in left}
            theirs = {v for _, _, v in right}
            return sum(1 for v, y, side in attached
                       if side > 0 and v in mine and spans(right, y) or
                       side < 0 and v in theirs and spans(left, y))
        order = list(groups)
        for _ in range(len(order)):
            swapped = False
            for j in range(len(order) - 1):
                if crossings(order[j + 1], order[j]) < crossings(order[j], order[j + 1]):
                    order[j], order[j + 1] = order[j + 1], order[j]
                    swapped = True
            if not swapped:
                break
        return order
