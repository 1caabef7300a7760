"""Loops nested in a scheduled loop (`structure/nesting`): what each run of an inner loop
reads of the enclosing loops, and which of its outputs one run computes.

An inner loop's output is one more stream of the enclosing loop: its element k is the inner
loop's run for the enclosing element k. A run reads streams of the enclosing loop at k --
its COUNT, the start of its carried values, what its body reads from outside. Some of those
it reads in *every* run (its COUNT; what its streams forced whatever its trip count read);
those are demanded statically with the inner output's element. The others it reads only in
some runs (its body's reads, when its COUNT may be 0; a branch's reads): those are
*conditional* in the enclosing loop, made when the run asks for them (`branches.py`).

A run computes several outputs of the inner loop together, when the enclosing loop needs
them at the same indices (a `lax.scan` step whose inner scan gives two results): one run per
element, as the reference, whose run memoises what both outputs force, does. Outputs needed
at different indices, or only in some trips, would need a run made twice: `NotStatic`.
"""
from __future__ import annotations

import numpy as np

from ..plan import Const, LoopOut, Recurrence
from ..reference.steps import entry
from .branches import NotStatic


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


def external_reads(demand) -> tuple:
    """(every, some): the streams outside the loop one run of it reads -- in every run, and
    only in some (the rest) -- for the outputs `demand` computes; through loops nested in it
    too. Its COUNT is read in every run, its WHILE input (when outside it) in every run
    without a COUNT (a COUNT of 0 stops it before element 0)."""
    members, loop = demand.members, demand.loop
    every, some = [], []

    def read(ref, always):
        if ref is not None and ref not in members:
            (every if always else some).append(ref)
    read(loop.count, True)
    read(loop.while_, loop.count is None)
    for k in demand.forced():
        node = members[k]
        always = k not in demand.conditional and needed_in_every_run(demand, k)
        if isinstance(node, Recurrence):
            read(node.init, always)  # read for element 0 only
        elif isinstance(node, LoopOut):  # a loop nested in it: what its runs read
            inner_every, inner_some = demand.nested[k].external
            for ref in inner_every:
                read(ref, always)
            for ref in inner_some:
                read(ref, False)
            read(node.length, always)
        else:
            for ref in node.inputs():
                read(ref, always)
            for ref in entry(node).branches(node):
                read(ref, False)
    every = tuple(dict.fromkeys(every))
    return every, tuple(r for r in dict.fromkeys(some) if r not in every)


def inner_reads(node, members, inner) -> tuple:
    """(every, some): the streams of the enclosing loop (`members`) each run of the inner
    loop behind `node` reads -- in every run, and only in some -- its demand being `inner`
    (computing that output alone); and the output's length, read in every run."""
    every, some = inner.external
    found = [r for r in every if r in members]
    if node.length in members:
        found.append(node.length)
    found = tuple(dict.fromkeys(found))
    return found, tuple(r for r in some if r in members and r not in found)


def signature(demand, k):
    return (demand.certain[k], demand.prefix[k], frozenset(demand.points.get(k, ())),
            k in demand.conditional)


def inner_runs(demand) -> dict:
    """inner loop -> the outputs of it one run computes (those of its outputs that are
    streams of this loop and that some run forces), when they are needed at the same indices
    in the same way; else `NotStatic`. Outputs needed only on demand (in a branch) are run
    one at a time: at most one of an inner loop's outputs may be."""
    groups = {}
    forced = set(demand.forced())
    for k, node in demand.members.items():
        if isinstance(node, LoopOut) and k in forced:
            groups.setdefault(node.loop, []).append(k)
    runs = {}
    for loop, outs in groups.items():
        kinds = {signature(demand, k) for k in outs}
        if len(kinds) > 1 or (len(outs) > 1 and outs[0] in demand.conditional):
            raise NotStatic(f"the outputs of inner loop {loop!r} are needed at different "
                            "trips or only in some")
        runs[loop] = frozenset(outs)
    return runs

