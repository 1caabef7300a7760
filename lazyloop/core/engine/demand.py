"""The static demand analysis behind the fast path (`laziness/dead`, `stream/order`).

For a loop whose demand does not depend on values, which elements are needed is known before
it runs, as a function of the trip count n: *prefix* demands (every index below n + p) and
*point* demands (the index n + q); a recurrence that feeds itself turns a point demand into a
prefix one. `Demand` works this out once per loop of a plan; `lazyloop.core.engine.schedule` runs it.
"""
from __future__ import annotations

import functools
from collections import deque
from typing import Dict, Optional

import numpy as np

from ..enums import LoopOutput
from ..plan import Const, LoopOut, Plan, Recurrence
from ..reference.steps import entry


class NotStatic(Exception):
    """The loop's demand depends on values; the reference evaluator runs it."""


def same_trip_inputs(node):
    """(input id, index offset) pairs a node's element reads inside its own loop: what its
    entry of the step table says it reads (`reads`)."""
    return entry(node).reads(node)


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
        self.inner = {}  # loop output of an inner loop -> what every run of it reads here
        for k, node in self.members.items():
            if entry(node).step is None:  # a kind the schedule does not run (if-conditionals)
                raise NotStatic(f"{loop} contains {node!r}")
            if isinstance(node, LoopOut):
                self.inner[k] = inner_reads(plan, node, self.members)
        if self.loop.count is None and self.loop.while_ is None:
            raise NotStatic(f"{loop} has no trip limit")
        self.edges = {k: [(r, 0) for r in self.inner[k]] if k in self.inner else
                      [(r, o) for r, o in same_trip_inputs(n) if r in self.members]
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
        """How many indices below the current trip a stream's elements are kept: as deep as
        any scheduled reader reads. A stream is computed at index i + f on trip i (f = 0 in
        the WHILE cone, else its `certain` offset) and reads its inputs at that index plus the
        edge's offset; the outputs read n + q after the loop, and what those need one below."""
        deepest = max([-q for qs in self.points.values() for q in qs] + [0])
        lowest = -1  # the WHILE cone reads one trip back on demand
        for k in self.members:
            f = 0 if (self.prefix[k] or -1) >= 1 else self.certain[k]
            if f is not None:
                lowest = min([lowest] + [f + off for _, off in self.edges[k]])
        return max(deepest + 1, -lowest)

    @functools.cached_property
    def phases(self):
        """The schedule's two phases, derived once: A, once trip i may run, the WHILE
        input's cone at i (what it reads one trip back is forced on demand); B, once trip i
        runs, what the outputs need."""
        members = self.members
        return (self.order([k for k in members if (self.prefix[k] or -1) >= 1], self.prefix),
                self.order([k for k in members if self.certain[k] is not None], self.certain))


def demand_of(plan, loop) -> Optional["Demand"]:
    """The loop's demand analysis, made once per plan; None when its demand is not static."""
    key = ("demand", loop)
    if key not in plan.derived:
        try:
            plan.derived[key] = Demand(plan, loop)
        except NotStatic:
            plan.derived[key] = None
    return plan.derived[key]


def least_trips(plan, loop) -> int:
    """A trip count every run of `loop` reaches: its COUNT when that is a constant and no
    WHILE input can stop it earlier, else 0."""
    count = plan.nodes.get(loop.count)
    if loop.while_ is not None or not isinstance(count, Const):
        return 0
    return max(int(np.asarray(count.value).reshape(-1)[0]), 0)


def needed_in_every_run(demand, k) -> bool:
    """Some element of stream k is forced whatever the trip count n: index 0 (needed below
    n + p with n + p >= 1 for the least n, or in the WHILE input's cone of a loop without a
    COUNT, whose element 0 is always tested), or index n + q with q >= 0 (what LAST_VALUE
    reads)."""
    certain = demand.certain[k]
    if certain is not None and certain + least_trips(demand.plan, demand.loop) >= 1:
        return True
    if demand.loop.count is None and (demand.prefix[k] or 0) >= 1:
        return True
    return not isinstance(demand.members[k], Recurrence) and any(
        q >= 0 for q in demand.points.get(k, ()))


def inner_reads(plan, out, members) -> tuple:
    """`structure/nesting`: the streams of the enclosing loop (`members`) that every run of
    the inner loop behind `out` reads, at the outer element's index. The enclosing loop is
    scheduled only when that set is static: the inner loop has the one output (so a run is
    made only when that output is needed), it is static itself, and each stream of the
    enclosing loop it reads is read in every run -- its limits, the length of its output,
    and what its streams forced in every run read, through loops nested in it too;
    otherwise NotStatic."""
    loop = plan.loops[out.loop]
    if len(loop.outputs) != 1:
        raise NotStatic(f"inner {loop.name} has {len(loop.outputs)} outputs")
    inner = demand_of(plan, out.loop)
    if inner is None:
        raise NotStatic(f"inner {loop.name} is not static")
    reads = []

    def read(ref, every_run):
        if ref in members and ref not in reads:
            if not every_run:
                raise NotStatic(f"inner {loop.name} reads {ref} only in some runs")
            reads.append(ref)
    read(loop.count, True)
    read(loop.while_, loop.count is None)  # a COUNT of 0 stops it before WHILE element 0
    read(out.length, True)
    for k, node in inner.members.items():
        if inner.prefix[k] is None and not inner.points.get(k):
            continue  # never forced: reads nothing
        forced = needed_in_every_run(inner, k)
        if isinstance(node, Recurrence):
            read(node.init, forced)
        elif isinstance(node, LoopOut):  # a loop in the inner loop: what its runs read
            for ref in inner_reads(plan, node, members):
                read(ref, forced)
        else:
            for ref in node.inputs():
                read(ref, forced)
    return tuple(reads)
