"""The static demand analysis behind the fast path (`laziness/dead`, `stream/order`).

For a loop whose demand does not depend on values, which elements are needed is known before
it runs, as a function of the trip count n: *prefix* demands (every index below n + p) and
*point* demands (the index n + q); a recurrence that feeds itself turns a point demand into a
prefix one. What is forced only in some trips -- a branch of an if-conditional, what an inner
loop reads only in some runs -- is *conditional*: made on demand within the trip
(`branches.py`). `Demand` works this out once per loop of a plan and set of its outputs to
compute; `lazyloop.core.engine.schedule` runs it.
"""
from __future__ import annotations

import functools
from collections import deque
from typing import Dict, FrozenSet, Optional

from ..enums import LoopOutput
from ..plan import LoopOut, Plan, Recurrence
from ..reference.steps import entry
from .branches import NotStatic, branch_meets, chains, conditional_streams, on_demand_lows
from .nests import external_reads, inner_reads, inner_runs


def same_trip_inputs(node):
    """(input id, index offset) pairs a node's element reads inside its own loop whatever the
    values: what its entry of the step table says it reads (`reads`)."""
    return entry(node).reads(node)


class Demand:
    """The static demand analysis of one loop, computing the outputs `outputs` (all of them
    by default).

    `certain[k]`: stream k is needed at every index below n + certain[k], however the loop
    stops. `prefix[k]`: the same with the WHILE input's demand added (`trip/both`: when a COUNT
    stops the loop, X_n of the WHILE input is not forced, so neither is what only it reads).
    `points[k]`: offsets q of single indices n + q needed (LAST_VALUE reads n).
    `conditional`: streams made only on demand (a branch's, an inner run's some-run reads);
    `chains`: those of them that read their own earlier elements, kept whole.
    `runs[inner loop]`: the outputs of a loop nested in this one that each of its runs
    computes together."""

    def __init__(self, plan: Plan, loop: str, outputs: Optional[FrozenSet[str]] = None):
        self.plan = plan
        self.loop = plan.loops[loop]
        self.outputs = frozenset(self.loop.outputs) if outputs is None else outputs
        self.key = (loop, self.outputs)  # what the plan's derived data of this demand is under
        self.members = {k: n for k, n in plan.nodes.items() if n.scope == loop}
        if self.loop.count is None and self.loop.while_ is None:
            raise NotStatic("it has no trip limit")
        depth = 2 * sum(isinstance(n, Recurrence) for n in self.members.values()) + 4
        meets = branch_meets(self.members, depth)
        self.inner = {}  # inner loop output -> what every run of it reads here
        self.nested = {}  # inner loop output -> the inner loop's demand for it alone
        self.edges, self.cond_edges = {}, {}
        for k, node in self.members.items():
            step = entry(node)
            if isinstance(node, LoopOut):
                self.nested[k] = inner = demand_of(plan, node.loop, frozenset({k}))
                if inner is None:
                    raise NotStatic(f"inner loop {node.loop!r}: "
                                    f"{why_not(plan, node.loop, frozenset({k}))}")
                every, some = inner_reads(node, self.members, inner)
                self.inner[k] = every
                reads = [(r, 0) for r in every]
                conditional = [(r, 0) for r in some]
            else:
                reads = list(same_trip_inputs(node)) + sorted(meets.get(k, ()))
                conditional = [(b, 0) for b in step.branches(node)]
            self.edges[k] = [(r, o) for r, o in reads if r in self.members]
            self.cond_edges[k] = [(r, o) for r, o in conditional if r in self.members]
        prefix, points = self.output_roots()
        cond = self.loop.while_
        if cond is not None and self.local(cond) and self.loop.count is None:
            prefix[cond] = 1  # trip/while: with no COUNT, only the WHILE input stops the loop
        self.certain, self.points = self.solve(prefix, points)
        if cond is not None and self.local(cond):
            prefix[cond] = 1
        self.prefix, _ = self.solve(prefix, points)
        demanded = {k for k in self.members if self.prefix[k] is not None or self.points.get(k)}
        self.conditional = conditional_streams(self.members, demanded, self.cond_edges,
                                               self.edges)
        self.chains = chains(self.conditional, self.cond_edges, self.edges)
        self.lows = on_demand_lows(self.origins(), self.made(), self.cond_edges, self.edges,
                                   depth, self.chains)
        self.runs = inner_runs(self)
        for inner_loop, outs in self.runs.items():
            if demand_of(plan, inner_loop, outs) is None:
                raise NotStatic(f"inner loop {inner_loop!r}: {why_not(plan, inner_loop, outs)}")

    def local(self, ref):
        return ref in self.members

    def output_roots(self):
        """CONCATENATE and REVERSE read indices 0..n-1 of their input; LAST_VALUE reads n."""
        prefix, points = {}, {}
        for out_id in self.loop.outputs:
            out = self.plan.nodes[out_id]
            if out_id not in self.outputs or not self.local(out.source):
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
                        raise NotStatic(f"stream {k!r} is demanded at a pattern of indices "
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

    def offsets(self, k) -> list:
        """The indices, relative to trip i, at which the phases make stream k on trip i:
        i + prefix - 1 in the WHILE input's cone (phase A makes i, and what the cone reads a
        trip back is made on demand), i + certain for what the outputs need (phase B)."""
        p, c = self.prefix[k], self.certain[k]
        found = [p - 1] if p is not None and (p >= 1 or p != c) else []
        return found + ([self.certain[k]] if self.certain[k] is not None else [])

    def made(self) -> dict:
        """Streams the phases make trip by trip -> the highest index, relative to the trip,
        made once that trip ran."""
        return {k: max(self.offsets(k)) for k in self.members if self.offsets(k)}

    def origins(self) -> dict:
        """Statically demanded streams -> the lowest index, relative to the trip, at which
        one is made: by the phases, or as a point demand once the loop stopped."""
        found = {}
        for k in self.members:
            at = self.offsets(k) + list(self.points.get(k, ()))
            if at:
                found[k] = min(at)
        return found

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
                for ref, off in self.edges[k]:
                    if ref in group and ref not in done and prefix[ref] == prefix[k] + off:
                        stack.append((ref, False))
        return out

    @functools.cached_property
    def window(self):
        """How many indices below the current trip a stream's elements are kept: as deep as
        any scheduled reader reads. A stream is made at the indices `offsets` says and reads
        its inputs there plus the edge's offset; the outputs read n + q after the loop, and
        what those need one below; what is made on demand reads as low as `lows` says."""
        deepest = max([-q for qs in self.points.values() for q in qs] + [0])
        lowest = -1  # the WHILE cone reads one trip back on demand
        for k in self.members:
            for f in self.offsets(k):
                lowest = min([lowest] + [f + off for _, off in self.edges[k]])
        lowest = min([lowest] + list(self.lows.values()))
        return max(deepest + 1, -lowest)

    @functools.cached_property
    def phases(self):
        """The schedule's two phases, derived once: A, once trip i may run, the WHILE
        input's cone at i (what it reads one trip back is forced on demand); B, once trip i
        runs, what the outputs need."""
        members = self.members
        return (self.order([k for k in members if (self.prefix[k] or -1) >= 1], self.prefix),
                self.order([k for k in members if self.certain[k] is not None], self.certain))

    @functools.cached_property
    def output_order(self) -> tuple:
        """The outputs it computes, in the order a run stores them (sorted by name)."""
        return tuple(sorted(self.outputs))

    @functools.cached_property
    def external(self):
        """What one run reads outside the loop: (in every run, only in some)."""
        return external_reads(self)

    def forced(self):
        """Every stream some run may force: demanded statically, or made on demand."""
        return [k for k in self.members if self.prefix[k] is not None or self.points.get(k)
                or k in self.conditional]


def demand_of(plan, loop, outputs=None) -> Optional["Demand"]:
    """The loop's demand analysis for the outputs `outputs` (None: all), made once per plan;
    None when its demand is not static (`why_not` says why)."""
    if outputs is None:
        outputs = frozenset(plan.loops[loop].outputs)
    key = ("demand", loop, outputs)
    if key not in plan.derived:
        try:
            plan.derived[key] = Demand(plan, loop, outputs)
        except NotStatic as why:
            plan.derived[key] = None
            plan.derived[("not static", loop, outputs)] = str(why)
    return plan.derived[key]


def why_not(plan, loop, outputs=None) -> str:
    """Why `demand_of(plan, loop, outputs)` is None (its `NotStatic` reason)."""
    if outputs is None:
        outputs = frozenset(plan.loops[loop].outputs)
    demand_of(plan, loop, outputs)
    return plan.derived.get(("not static", loop, outputs), "")
