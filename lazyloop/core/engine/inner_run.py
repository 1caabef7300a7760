"""An inner loop's run for one element of its enclosing scheduled loop (`structure/nesting`),
on a path decided once per (enclosing schedule, inner loop).

An inner loop nested in a scheduled loop runs once per element of it that needs the inner
loop's output: four runs of three trips each in a `lax.scan` of a `lax.scan`, so what a run
costs besides its trips counts as much as the trips. What does not depend on the element is
decided when the enclosing schedule first asks (`InnerRuns`): the inner loop's demand and
the outputs one run computes (`Demand.runs`), the list of its kept schedules (`Schedule.take`
without a key per run), what a run reads of the enclosing schedule (its memos and held
invariants, `Schedule.held_by_outer`), and how each output is made once the run stopped --
a last value read at once, the collected elements of a CONCATENATE/REVERSE output without a
length input stacked at once (`stacker`), anything else by the machine's stacking
(`Machine.stacked`) as before.

That path is an evaluation's usual run: nothing recorded or logged, no trip counts kept, the
loop not met undefined. Any other run -- and a run that meets an undefined value of its loop
(`MasksNeeded`: the loop then runs masked, from this element on) -- goes through the
machine's `inner_output`, which does what this does step by step. Errors are the run's own:
an inner run's `LazyLoopError` reaches the enclosing schedule, which reports it once
(`Schedule.inner_element`).
"""
from __future__ import annotations

from ..enums import LoopOutput
from .demand import demand_of
from .one_run import plain_run
from .stacking import stacker


class InnerRuns:
    """The runs of inner loop `loop` for the elements of the enclosing schedule `outer`
    (kept in its `inner_runs`, so for as long as that schedule is kept with the plan; it
    holds `outer`'s finishers, which `Schedule.release` drops with it)."""

    def __init__(self, outer, loop):
        plan = outer.d.plan
        self.loop = loop
        self.demand = demand = demand_of(plan, loop, outer.d.runs[loop])
        self.outs = tuple(plan.nodes[o] for o in demand.output_order)  # as one run makes them
        self.kept = None  # the inner loop's kept plain schedules (`Schedule.take`'s pool)
        nodes = plan.nodes
        # per output: (its node, the inner stream it reads, None for a last value, else its
        # `stacker` -- None for an output with a length input)
        self.made = tuple((out, nodes[out.id].source, None if out.kind is LoopOutput.LAST_VALUE
                           else stacker(out) or False) for out in self.outs)
        # per output: how `outer` stores it when another output of the run is asked for
        self.stores = tuple(outer.finishers[out.id] for out in self.outs)

    def __repr__(self):
        return f"InnerRuns({self.loop!r})"

    def element(self, outer, node, k):
        """Element k of `node` (an output of this inner loop): the inner loop's run for the
        enclosing element k; its other outputs are stored in `outer` beside it."""
        m = outer.m
        loop = self.loop
        if m.record is not None or m.log is not None or m.trips is not None \
                or loop in m.masked_loops:
            return m.inner_output(outer, node, k)  # step by step
        m.scheduled_loops[loop] = demand = self.demand
        kept = self.kept
        if kept:
            schedule = kept.pop().begin(m, None, k, outer)
        else:
            # a kept one or a new one (`Schedule`, the enclosing schedule's class: schedule.py
            # imports this module)
            schedule = outer.__class__.take(demand, m, None, k, outer=outer)
            self.kept = schedule.pool  # where its runs are kept from now on
        done = plain_run(schedule, m, loop, self.values)
        if done is None:  # the loop runs masked: step by step
            return m.inner_output(outer, node, k)
        n, values = done
        m.ran(loop, None, n, True)
        found = None
        for out, value, store in zip(self.outs, values, self.stores):
            if out is node:
                found = value
            else:
                store(k, value)
        return found

    def values(self, schedule, n) -> list:
        """The run's outputs after n trips, in `outs`' order, as they are stored
        (`Schedule.outputs`, then `output_value`): a last value as it is; the elements of a
        stacked output stacked at once where its `stacker` can, else as the machine stacks
        them (reading the length input at the enclosing element the run is for)."""
        outer, k = schedule.outer, schedule.index
        values = []
        for out, source, stack in self.made:
            if stack is None:
                values.append(schedule.get(source, min(n, schedule.stopped)))
                continue
            found = schedule.collected[source]  # a list, or a batch (batch.py)
            stacked = stack(found) if stack else None
            if stacked is None:
                found = list(found) if found.__class__ is list else found
                stacked = schedule.m.stacked(out, found, n,
                                             lambda out=out: outer.get(out.length, k))
            values.append(stacked)
        return values
