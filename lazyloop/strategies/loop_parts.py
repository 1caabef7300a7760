"""The loops' boundaries in the valid-program generator: `LoopState` (what is known about the
loop being written) and `LoopParts`, which places a loop, gives it trip limits and counters,
and adds its iterators and recurrences. `ProgramBuilder` (in `valid`), whose collaborator it
is, writes the body, the outputs and the program around them."""
from __future__ import annotations

from typing import Optional, Tuple

import attrs
from hypothesis import strategies as st

from .programs import Member, Ref
from .writer import (FLOAT, INT, LoopPlan, Value, Writer, counter_styles, deepest,
                     element_shapes, recurrence_kinds, visible_in)


@attrs.define
class LoopState:
    """What the builder knows about the loop it is writing."""
    ref: str
    scope: Tuple[str, ...]
    shape: Tuple[int, ...]          # the element shape E of its float values
    n_max: int                      # the most trips any of its runs makes
    varying: bool = False           # runs of it make different numbers of trips
    anchor: Tuple[str, ...] = ()    # the deepest scope a boundary layer of it reads from
    reads: Tuple[str, ...] = ()     # the deepest scope it reads values from (data flow
                                    # nests it there, and its outputs live there)
    pool: list = attrs.Factory(list)         # float32 values of shape E usable in the body
    terminal: list = attrs.Factory(list)     # values only fit to be output (other shapes)
    recurrences: list = attrs.Factory(list)  # its float recurrences
    counter: Optional[Value] = None


class LoopParts:
    """Writes the parts of a loop around its body: where it sits and its element shape, its
    trip limits and counters, its iterators and its recurrences."""

    def __init__(self, draw, max_depth: int, avoid: frozenset):
        self.w = Writer(draw)
        self.draw = draw
        self.max_depth = max_depth
        self.avoid = avoid

    def read(self, loop: LoopState, *values: Value, boundary: bool = False) -> None:
        """Note that `loop` reads `values` (through a boundary layer: its iterator, trip limit
        or recurrence init): those from outside it decide where it nests."""
        for v in values:
            if len(v.scope) < len(loop.scope):
                loop.reads = deepest(loop.reads, v.scope)
                if boundary:
                    loop.anchor = deepest(loop.anchor, v.scope)

    def pick(self, options):
        return self.draw(st.sampled_from(list(options)))

    def repeat(self, at_most: int, at_least: int = 0):
        """0, 1, ... for as long as a drawn flag asks for one more: the way hypothesis draws
        its own lists, so shrinking deletes an element together with its flag."""
        k = 0
        while k < at_most and (k < at_least or self.draw(st.booleans())):
            yield k
            k += 1

    def visible(self, scope):
        return [v for v in self.w.values if visible_in(v, scope) and v.defined]

    # -- where a loop sits, its element shape, its first iterator ------------------------
    def anchor(self, outer: LoopState) -> Optional[str]:
        """How a nested loop is tied to its outer loop, so that data flow nests it there
        (`structure/nesting`): a boundary layer may "iterate" over an outer stream, "carry"
        one in as a recurrence's initial value, or "count" its trips with the outer counter;
        or only a "body" layer reads an outer stream (unless "body-only-nesting" is avoided).
        None when the outer loop has no stream to offer."""
        streams = [v for v in outer.pool if v.scope == outer.scope and v.dtype == FLOAT]
        options = (["iterate"] if any(v.shape for v in streams) else []) \
            + (["carry"] if streams else []) + (["count"] if outer.counter else []) \
            + (["body"] if streams and "body-only-nesting" not in self.avoid else [])
        return self.pick(options) if options else None

    def element_shape(self, scope, plan: LoopPlan, how: Optional[str], outer):
        """(E, n, iterated source or None, carried value or None). A top-level loop takes a
        fresh shape, or iterates over an existing value (an earlier loop's output, an input);
        a nested loop follows its anchor."""
        if how in ("iterate", "carry", "body"):
            streams = [v for v in outer.pool if v.scope == outer.scope and v.dtype == FLOAT]
            if how in ("carry", "body"):
                v = self.pick(streams)
                return v.shape, plan.trips, None, v
            v, axis = self.pick([(v, a) for v in streams for a in range(len(v.shape))])
            return v.shape[:axis] + v.shape[axis + 1:], min(plan.trips, v.shape[axis]), \
                (v, axis), None
        sources = [(v, a) for v in self.visible(scope) if v.dtype == FLOAT
                   and v.kind != "const" for a in range(len(v.shape))]
        outputs = [(v, a) for v, a in sources if v.kind == "loop-output"]
        where = self.draw(st.sampled_from(["fresh", "earlier-output", "existing"]))
        if how is None and (where == "earlier-output" and outputs
                            or where == "existing" and sources):
            v, axis = self.pick(outputs if where == "earlier-output" else sources)
            return v.shape[:axis] + v.shape[axis + 1:], min(plan.trips, v.shape[axis]), \
                (v, axis), None
        return self.draw(element_shapes), plan.trips, None, None

    # -- trip limits and counters -----------------------------------------------------------
    def counter(self, loop: LoopState, style: str, start: Value, step: int = 1) -> Value:
        """An int32 recurrence counting up from `start` (or down); `top` is set by the caller."""
        w = self.w
        rec = w.layer("add_recurrence", Ref(start.ref), target=loop.ref, dtype=INT, shape=(),
                      scope=loop.scope, kind="counter")
        one = w.int_constant(step)
        nxt = w.elementwise(rec, one, "SUM" if style == "up" else "SUB")
        w.call(rec.layer, "set_input", 1, Ref(nxt.ref), result=None)
        w.rules.update({"recurrence/def", "stream/order"})
        w.features.add(f"counter-{style}")
        return rec

    def while_limit(self, loop: LoopState, bound: int, outer: Optional[LoopState]):
        """WHILE on a counter: up from 0 while c < bound, or down from bound while c > 0;
        given `outer`, down from the outer loop's counter (the trips vary per run)."""
        w = self.w
        style = self.draw(counter_styles)
        if outer is not None:
            style = "down"
            start, top = outer.counter, outer.counter.top
            loop.varying = True
            self.read(loop, start, boundary=True)
            w.features.add("counter-from-outer")
        else:
            start, top = (w.int_constant(0) if style == "up" else w.int_constant(bound)), bound
        c = self.counter(loop, style, start)
        if style == "up":
            cond = (w.elementwise(c, w.int_constant(bound), "LESS") if self.draw(st.booleans())
                    else w.elementwise(w.int_constant(bound), c, "GREATER"))
            loop.counter = attrs.evolve(c, top=max(bound - 1, 0))
        else:
            cond = w.elementwise(c, w.int_constant(0), "GREATER")
            loop.counter = attrs.evolve(c, top=top)
        w.call(loop.ref, "add_trip_limit", Ref(cond.ref), Member(("TripLimit", "WHILE")),
               result=None)
        w.rules.add("trip/while")
        return top

    def count_limit(self, loop: LoopState, count: int, outer: Optional[LoopState]):
        """COUNT from a constant, or (given `outer`) from the outer loop's counter."""
        w = self.w
        if outer is not None:
            t, n = outer.counter, outer.counter.top
            loop.varying = True
            self.read(loop, t, boundary=True)
            w.features.add("count-from-outer")
        else:
            t, n = w.int_constant(count), count
        w.call(loop.ref, "add_trip_limit", Ref(t.ref), Member(("TripLimit", "COUNT")),
               result=None)
        w.rules.add("trip/count")
        return n

    def trip_limits(self, loop: LoopState, plan: LoopPlan, n: int, outer):
        """Returns the most trips a run of the loop makes. Given `outer`, the trips are
        counted by the outer loop's counter."""
        if plan.limit == "count":
            return self.count_limit(loop, n, outer)
        if plan.limit == "while":
            return self.while_limit(loop, n, outer)
        # both: one limit stops the loop at n, the other would allow more
        self.w.rules.add("trip/both")
        slack = self.draw(st.integers(0, 2))
        if "count-stops-both" in self.avoid:
            slack = max(slack, 1)
        if self.draw(st.booleans()) and "count-stops-both" not in self.avoid:
            a = self.count_limit(loop, n, outer)
            b = self.while_limit(loop, n + slack, None)
            if outer is None:
                self.w.features.add("count-stops-both")
        else:
            a = self.count_limit(loop, n + slack, outer)
            b = self.while_limit(loop, n, None)
        return min(a, b)

    # -- iterators and recurrences ----------------------------------------------------------
    def iterator(self, loop: LoopState, source: Optional[Tuple[Value, int]] = None) -> Value:
        w = self.w
        if source is None:
            axis = self.draw(st.integers(0, len(loop.shape)))
            extent = max(loop.n_max, 1) + self.draw(st.integers(0, 1))
            shape = loop.shape[:axis] + (extent,) + loop.shape[axis:]
            candidates = [v for v in self.visible(loop.scope[:-1]) if v.dtype == FLOAT
                          and v.shape == shape and v.kind != "const"]
            v = self.pick(candidates) if candidates and self.draw(st.booleans()) else w.input(shape)
        else:
            v, axis = source
        reverse = self.draw(st.booleans())
        self.read(loop, v, boundary=True)
        it = w.layer("add_iterator", Ref(v.ref), target=loop.ref, axis=axis, reverse=reverse,
                     dtype=FLOAT, shape=loop.shape, scope=loop.scope, kind="iterator")
        w.rules.add("iterator/reverse" if reverse else "iterator/forward")
        w.features.add(f"iterator-axis-{axis}")
        if v.scope:
            w.features.add("iterates-outer-stream")
        elif v.kind == "loop-output":
            w.features.add("iterates-loop-output")
        loop.pool.append(it)
        return it

    def recurrence(self, loop: LoopState, init: Optional[Value] = None) -> Value:
        """A float recurrence of shape E; its initial value comes from outside the loop."""
        w = self.w
        inits = [v for v in self.visible(loop.scope[:-1]) if v.dtype == FLOAT
                 and v.shape == loop.shape]
        choice = "given" if init is not None else \
            self.draw(st.sampled_from(["constant", "input", "outside"]))
        if choice == "given":
            w.features.add("init-from-outer-stream")
        elif choice == "outside" and inits:
            init = self.pick(inits)
            w.features.add("init-from-outer-stream" if init.scope else "init-from-outside")
        elif choice == "input":
            init = w.input(loop.shape)
        else:
            init = w.float_constant(loop.shape)
        self.read(loop, init, boundary=True)
        rec = w.layer("add_recurrence", Ref(init.ref), target=loop.ref, dtype=FLOAT,
                      shape=loop.shape, scope=loop.scope, kind="recurrence")
        w.rules.update({"recurrence/def", "stream/order"})
        loop.pool.append(rec)
        loop.recurrences.append(rec)
        return rec

    def close_recurrences(self, loop: LoopState, recs):
        """Set every recurrence's next value: bounded updates of several shapes."""
        w = self.w
        inside = [v for v in loop.pool if v.scope == loop.scope]
        kinds = []
        i = 0
        while i < len(recs):
            kind = self.draw(recurrence_kinds)
            if kind == "pair" and i + 1 < len(recs):
                r1, r2 = recs[i], recs[i + 1]          # r1' = r2, r2' = tanh(r1 + r2)
                self.set_next(r1, r2)
                self.set_next(r2, w.tanh(w.elementwise(r1, r2, "SUM")))
                kinds.append(kind)
                i += 2
                continue
            r = recs[i]
            x = self.pick(loop.pool)
            if kind == "matmul" and 1 <= len(r.shape) <= 2:
                nxt = w.tanh(w.matmul_square(r))
            elif kind == "shift" and inside:
                nxt = self.pick(inside)      # r' = a value of this trip: r is it, delayed
            elif kind == "scale":
                nxt = w.tanh(w.elementwise(r, x, "PROD"))
            elif kind == "max":
                nxt = w.elementwise(r, x, "MAX")
            elif kind == "clip":
                nxt = w.activation(w.elementwise(r, x, "SUM"), "CLIP", -1.0, 1.0)
            else:
                kind = "accumulate"
                nxt = w.tanh(w.elementwise(r, x, "SUM"))
            self.set_next(r, nxt)
            kinds.append(kind)
            i += 1
        w.features.update(f"recurrence-{k}" for k in kinds)

    def set_next(self, rec: Value, nxt: Value):
        self.w.call(rec.layer, "set_input", 1, Ref(nxt.ref), result=None)
