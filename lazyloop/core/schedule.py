"""The fast path: a per-trip schedule derived once from a static demand analysis.

The reference evaluator (`lazyloop.evaluate`) forces elements on demand and keeps them all.
For a loop whose demand does not depend on values (no conditional, no nested loop inside it),
which elements are needed is known before it runs, as a function of the trip count n:

* a *prefix* demand ``p``: every index below ``n + p`` (the WHILE input and what it reads have
  p = 1, a CONCATENATE input p = 0, the next value of a recurrence one less than the
  recurrence);
* *point* demands ``q``: the index ``n + q`` (LAST_VALUE reads its input at n, q = 0).

A recurrence that feeds itself turns a point demand into a prefix one. The schedule then runs
trip by trip: at step i it computes the prefix-demanded elements that step i proves needed,
and when the loop stops it forces the point-demanded ones on demand. It keeps a constant
window of elements per stream, so memory does not grow with the trip count, and it forces
exactly the elements the reference evaluator forces (`stream/memo`, `laziness/dead`); the
tests check both claims against the reference.
"""
from __future__ import annotations

import functools
from collections import deque
from typing import Dict, Optional

import numpy as np

from .enums import LoopOutput
from .errors import FuelExhausted, IteratorOutOfBounds, LazyLoopError, EvaluationError
from .batch import batch_maps
from .fixpoint import first_check, settle, watch_for
from .readonly import unmarked_streams
from .plan import IfOutput, Iterator, LoopOut, Map, Plan, Project, Recurrence, Undefined
from .types import TensorType
from .undefined import Partial


_MISSING = object()


class NotStatic(Exception):
    """The loop's demand depends on values; the reference evaluator runs it."""


class Fallback(Exception):
    """A value the schedule does not handle (an undefined position) reached the loop."""


def same_trip_inputs(node):
    """(input id, index offset) pairs a node's element reads inside its own loop."""
    if isinstance(node, Map):
        return [(a, 0) for a in node.args if a is not None]
    if isinstance(node, Project):
        return [(node.call, 0)]
    if isinstance(node, Recurrence):
        return [(node.next, -1)]
    return []


class Demand:
    """The static demand analysis of one loop.

    `certain[k]`: stream k is needed at every index below n + certain[k], however the loop
    stops. `prefix[k]`: the same with the WHILE input's demand added (`trip/both`: when a COUNT
    stops the loop, X_n of the WHILE input is not forced, so neither is what only it reads).
    `points[k]`: offsets q of single indices n + q needed (LAST_VALUE reads n)."""

    def __init__(self, plan: Plan, loop: str):
        self.plan = plan
        self.loop = plan.loops[loop]
        self.members = {k: n for k, n in plan.nodes.items() if n.scope == loop}
        for node in self.members.values():
            if isinstance(node, (IfOutput, LoopOut)):
                raise NotStatic(f"{loop} contains {node!r}")
            if isinstance(node, Recurrence) and isinstance(plan.nodes.get(node.init), Undefined):
                raise NotStatic(f"{loop} carries an undefined start")
        if self.loop.count is None and self.loop.while_ is None:
            raise NotStatic(f"{loop} has no trip limit")
        self.edges = {k: [(r, o) for r, o in same_trip_inputs(n) if r in self.members]
                      for k, n in self.members.items()}
        prefix, points = self.output_roots()
        self.certain, self.points = self.solve(prefix, points)
        cond = self.loop.while_
        if cond is not None and self.local(cond):
            prefix[cond] = 1
        self.prefix, _ = self.solve(prefix, points)

    def local(self, ref):
        return ref in self.members

    def output_roots(self):
        """CONCATENATE and REVERSE read indices 0..n-1 of their input; LAST_VALUE reads n."""
        prefix, points = {}, {}
        for out_id in self.loop.outputs:
            out = self.plan.nodes[out_id]
            if not self.local(out.source):
                continue
            if out.kind is LoopOutput.LAST_VALUE:
                points.setdefault(out.source, set()).add(0)
            else:
                prefix[out.source] = 0
        return prefix, points

    def solve(self, roots_prefix, roots_points):
        """Propagate demands to a fixed point: element k of a map needs element k of its
        inputs, element k of a recurrence element k-1 of its next value. Point demands that run
        down a recurrence cycle become prefix demands."""
        # a point demand goes one index down only through a recurrence: deeper than twice
        # the number of recurrences, its chain has gone round a recurrence cycle
        depth = 2 * sum(isinstance(n, Recurrence) for n in self.members.values()) + 4
        found: Dict[str, Optional[int]] = dict(roots_prefix)
        for _ in range(4 * len(self.members) + 8):
            prefix = {k: found.get(k) for k in self.members}
            points = {k: set(roots_points.get(k, ())) for k in self.members}
            self.propagate(prefix, points, depth)
            deep = False
            for k, qs in points.items():
                if qs and min(qs) <= -depth + 1:
                    top = self.contiguous_top(qs, depth)
                    if top is None:
                        raise NotStatic(f"stream {k} is demanded at a pattern of indices "
                                        "the schedule does not model")
                    if found.get(k) is None or top + 1 > found[k]:
                        found[k] = top + 1
                        deep = True
            if not deep:
                return prefix, {k: {q for q in qs if prefix[k] is None or q >= prefix[k]}
                                for k, qs in points.items()}
        raise NotStatic("the demand analysis did not settle")

    def propagate(self, prefix, points, depth):
        """A worklist: only a stream whose demand grew passes on what grew."""
        fresh = {k: set(qs) for k, qs in points.items() if qs}
        work = deque(k for k in self.members if prefix[k] is not None or k in fresh)
        queued = set(work)
        while work:
            k = work.popleft()
            queued.discard(k)
            p, qs = prefix[k], fresh.pop(k, ())
            for ref, off in self.edges[k]:
                grew = False
                if p is not None and (prefix[ref] is None or p + off > prefix[ref]):
                    prefix[ref] = p + off
                    grew = True
                new = {q + off for q in qs if q + off >= -depth} - points[ref]
                if new:
                    points[ref] |= new
                    fresh.setdefault(ref, set()).update(new)
                    grew = True
                if grew and ref not in queued:
                    work.append(ref)
                    queued.add(ref)

    @staticmethod
    def contiguous_top(qs, depth):
        """When a point set reaches the depth bound through a run of consecutive offsets,
        every index below the top of that run is demanded: the top, else None."""
        q = -depth + 1
        if q not in qs and q - 1 not in qs:
            return None
        q = max(x for x in (q, q - 1) if x in qs)
        run = 0
        while q + 1 in qs:
            q += 1
            run += 1
        return q if run >= depth // 2 else None

    def order(self, group, prefix):
        """Members of one phase, each after the same-step elements it reads."""
        done, out = set(), []
        for start in group:
            stack = [(start, False)]
            while stack:
                k, expanded = stack.pop()
                if k in done:
                    continue
                if expanded:
                    done.add(k)
                    out.append(k)
                    continue
                stack.append((k, True))
                for ref, off in same_trip_inputs(self.members[k]):
                    if ref in group and ref not in done and prefix[ref] == prefix[k] + off:
                        stack.append((ref, False))
        return out

    @functools.cached_property
    def window(self):
        deepest = max([-q for qs in self.points.values() for q in qs] + [0])
        return deepest + 3

    @functools.cached_property
    def phases(self):
        """The schedule's two phases, derived once: A, once trip i may run, the WHILE
        input's cone at i (what it reads one trip back is forced on demand); B, once trip i
        runs, what the outputs need."""
        members = self.members
        return (self.order([k for k in members if (self.prefix[k] or -1) >= 1], self.prefix),
                self.order([k for k in members if self.certain[k] is not None], self.certain))


class Schedule:
    """Runs one activation of a static loop. `machine` supplies invariants and readings."""

    def __init__(self, demand: Demand, machine, act, index, record=None):
        self.d = demand
        self.m = machine
        self.act = act
        self.index = index
        self.memo = {k: {} for k in demand.members}
        self.invariants = {}
        self.record = record
        self.check = machine.relaxed
        self.first_shape = {}
        self.collected = {machine.plan.nodes[o].source: [] for o in demand.loop.outputs
                          if machine.plan.nodes[o].kind is not LoopOutput.LAST_VALUE}
        self.build_steps()
        self.phase_a, self.phase_b = demand.phases  # see Demand.phases

    # -- values ---------------------------------------------------------------------------
    def invariant(self, ref):
        if ref not in self.invariants:
            value = self.m.fetch(ref, self.act, self.index) if ref is not None else None
            if type(value) is Partial:
                raise Fallback(ref)
            self.invariants[ref] = value
        return self.invariants[ref]

    def get(self, ref, k):
        """Element k of `ref`: a memoised element, an invariant, or forced now."""
        if ref is None:
            return None
        memo = self.memo.get(ref)
        if memo is None:
            return self.invariant(ref)
        if k in memo:
            return memo[k]
        return self.steps[ref](k)

    def compute(self, nid, k):
        return self.steps[nid](k)

    def build_steps(self):
        """One closure per stream, bound once: element k from its inputs' elements."""
        self.steps = {}
        for nid, node in self.d.members.items():
            self.steps[nid] = self.step_for(nid, node)

    def reader(self, ref):
        """A function k -> element k of `ref` (memo hit, forced now, or the invariant)."""
        if ref is None:
            return lambda k: None
        memo = self.memo.get(ref)
        if memo is None:
            return self.invariant_reader(ref)
        steps, get, missing = self.steps, memo.get, _MISSING

        def read(k):
            value = get(k, missing)  # a miss is common (what the WHILE input reads a trip
            return steps[ref](k) if value is missing else value  # back): no exception
        return read

    def invariant_reader(self, ref):
        """The invariant is fetched when first read (`stream/invariant`), then kept."""
        cell = []

        def read(k):
            if not cell:
                cell.append(self.invariant(ref))
            return cell[0]
        return read

    def step_for(self, nid, node):
        finish = self.finisher(nid, node)
        if isinstance(node, Map):
            return self.map_step(nid, node, finish)
        if isinstance(node, Project):
            def compute(k):
                return finish(k, self.get(node.call, k)[node.k])
        elif isinstance(node, Recurrence):
            init = self.invariant_reader(node.init)
            nxt = self.reader(node.next)

            def compute(k):
                return finish(k, init(k) if k == 0 else nxt(k - 1))
        elif isinstance(node, Iterator):
            def compute(k):
                return finish(k, self.iterate(node, k))
        else:  # pragma: no cover -- Demand refuses every other kind
            raise NotStatic(repr(node))
        return compute

    def map_step(self, nid, node, finish):
        """Element k of a map: its function of the inputs' elements k (`stream/map`)."""
        fn = node.fn
        readers = [self.reader(a) for a in node.args]
        if len(readers) == 1:
            (r0,) = readers
            apply = lambda k: fn(r0(k))  # noqa: E731
        elif len(readers) == 2:
            r0, r1 = readers
            apply = lambda k: fn(r0(k), r1(k))  # noqa: E731
        else:
            apply = lambda k: fn(*[r(k) for r in readers])  # noqa: E731

        def compute(k):
            try:
                value = apply(k)
            except LazyLoopError:
                raise
            except Exception as exc:
                raise EvaluationError(f"stream {nid!r} ({node!r})", "stream/map",
                                      f"{type(exc).__name__}: {exc}",
                                      "check the inputs reaching this layer") from None
            return finish(k, value)
        return compute

    def finisher(self, nid, node):
        """Store an element: read-only, memoised, checked in relaxed profiles, recorded."""
        memo = self.memo[nid]
        check = self.check and isinstance(node.type, TensorType)
        record = self.record
        ndarray = np.ndarray
        dtype, shape = (node.type.dtype, node.type.shape) if check else (None, None)
        mark = nid not in unmarked_streams(self.d)  # stream/memo: only what a kernel could write
        if isinstance(node, Recurrence) and record is None:
            def carry(k, value):  # an element of another stream or an invariant: read-only
                if check and (value.__class__ is not ndarray or value.dtype != dtype
                              or value.shape != shape):
                    self.check_element(node, value)
                memo[k] = value
                return value
            return carry

        def finish(k, value):
            if value.__class__ is ndarray:
                if check and (value.dtype != dtype or value.shape != shape):
                    self.check_element(node, value)
                if mark:
                    value.flags.writeable = False
            elif check:
                self.check_element(node, value)
            memo[k] = value
            if record is not None:
                record.append((nid, k))
            return value
        return finish

    def check_element(self, node, value):
        """`structure/shapes`, cheaply when the element has exactly the static type."""
        ty = node.type
        if value.__class__ is np.ndarray and value.dtype == ty.dtype and value.shape == ty.shape:
            return
        shape = np.shape(value)
        first = self.first_shape.setdefault(node.id, shape) if node.id in self.m.one_shape else None
        self.m.check_element(node, value, first)

    def iterate(self, node, k):
        whole = self.invariant(node.source)
        extent = np.shape(whole)[node.axis]
        index = extent - 1 - k if node.reverse else k
        if not 0 <= index < extent:
            raise IteratorOutOfBounds(f"iterator {node.id!r} ({node!r})", "iterator/bounds",
                                      f"trip {k} asks for index {index} of an axis of extent "
                                      f"{extent}", "limit the trips to the iterated extent")
        if node.axis == 0:
            return whole[index]
        return np.take(whole, index, axis=node.axis)

    # -- the run ------------------------------------------------------------------------------
    def run(self):
        loop = self.d.loop
        count = None
        if loop.count is not None:
            count = self.m.count_value(loop, self.invariant(loop.count))
        start = 0
        if count is not None and loop.while_ is None:  # n is known before trip 0
            start = batch_maps(self, count)  # stream/map: batched streams (batch.py)
        cond = loop.while_
        cond_local = cond is not None and cond in self.memo
        cond_memo = self.memo.get(cond)
        window = self.d.window
        max_trips = self.m.max_trips
        phase_a = [(self.memo[k], self.steps[k]) for k in self.phase_a]
        phase_b = [(self.memo[k], self.steps[k], self.d.certain[k]) for k in self.phase_b]
        memos = list(self.memo.values())
        collected = list(self.collected.items())
        sweep = max(4 * window, 64)
        deferred = None
        watch, stop = watch_for(self.d), count  # laziness/fixed-point: may lower the stop
        check_at = first_check(watch, count)
        i = start  # n when every trip's work was batched
        while True:
            if stop is not None and i >= stop:
                break
            for memo, step in phase_a:
                if i not in memo:
                    step(i)
            if cond is not None:
                c = cond_memo[i] if cond_local else self.invariant(cond)
                if not c:  # a 0-D or one-element bool
                    break
            if i >= max_trips:
                raise FuelExhausted(loop.name, "trip/while",
                                    f"still running after max_trips={max_trips} trips",
                                    "raise max_trips, or check the loop's trip limits")
            if deferred is None:
                try:
                    for memo, step, offset in phase_b:
                        j = i + offset
                        if j >= 0 and j not in memo:
                            step(j)
                    for src, elements in collected:
                        elements.append(self.get(src, i))
                except LazyLoopError as error:
                    # The reference evaluator forces these elements only once n is known:
                    # a loop that never stops reports fuel first, one that stops this error.
                    deferred = error
            i += 1
            if i == check_at:
                stop, watch, check_at = settle(watch, self.memo, i, stop)
            if i % sweep == 0:  # forget what no consumer can ask for any more
                for memo in memos:
                    for old in [k for k in memo if k < i - window]:
                        del memo[old]
        if deferred is not None:
            raise deferred
        self.stopped = i  # the outputs are read here; past a fixed point, equal to trip n's
        return count if stop != count and i == stop else i

    def outputs(self, n):
        """Every output of the loop after it stopped at n trips: last values forced now,
        concatenations from the elements collected trip by trip."""
        result = {}
        for out_id in self.d.loop.outputs:
            out = self.m.plan.nodes[out_id]
            if out.kind is LoopOutput.LAST_VALUE:
                result[out_id] = self.get(out.source, min(n, self.stopped))
            else:
                result[out_id] = self.collected[out.source]
        return result
