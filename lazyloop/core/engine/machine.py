"""The engine's machine: the reference machine, with loop outputs made on a per-trip schedule.

`EngineMachine` is the reference `Machine` (the same driver, memo and element steps) with
its one extension point, `loop_output`, overridden: a loop whose demand is static
(`demand.py`) runs on its schedule (`schedule.py`) -- with compiled trips, batches, fixed
points and masked steps as its `Options` allow -- and every output of it is stored at once;
any other loop is left to the reference's reading. A loop nested in another with one output
gets a schedule per outer element. The engine keeps no forcing trace (the reference does);
`record`, for the tests, collects the (stream, index) pairs the schedules force, and `log`
what each run of a schedule did.

What a run costs besides its trips is kept small, since a lowered model is evaluated again
and again (issue 25): a loop outside loops is run, and its outputs stored as the compiled
walk stores a value, by a runner bound once per plan and loop (`root_loop.py`); a run on the
engine with no trip counts kept only marks its loop "engine" (`ran`); a stacked output of
plain arrays is stacked at once (`stacked_plainly`, what `rules.stack` does then); an inner
loop's run for an element of the enclosing loop takes the path its enclosing schedule
decided once (inner_run.py), and `inner_output` step by step only when that run is
recorded, logged, keeps trip counts or carries masks.
"""
from __future__ import annotations

from typing import Optional

import attrs
import numpy as np

from ..enums import LoopOutput
from ..errors import LazyLoopError
from ..feeds import input_table
from ..fuel import DEFAULT_MAX_TRIPS, Fuel
from ..plan import LoopOut, Recurrence
from ..reference.machine import Machine
from ..reference import rules
from .batch import MAX_BATCH_BYTES
from .compiled import HOT_TRIPS
from .demand import demand_of, why_not
from .needed import outputs_to_compute
from .one_run import plain_run
from .root import constants, force_root, root_walks, store_inputs
from .root_loop import root_loop
from .masked_steps import MasksNeeded
from .schedule import Schedule
from .stacking import stacked_plainly


@attrs.frozen
class Options:
    """How the engine runs a scheduled loop: its ordinary trips compiled once a run reaches
    trip `compile_after` (None: never), map streams `batch`ed (at most `max_batch_bytes`
    per stream)."""
    compile_after: Optional[int] = HOT_TRIPS
    batch: bool = True
    max_batch_bytes: int = MAX_BATCH_BYTES


class EngineMachine(Machine):
    """The reference machine whose loop outputs come from schedules where they can."""

    def __init__(self, plan, feeds, max_trips=DEFAULT_MAX_TRIPS, readings=None,
                 options: Options = Options(), max_seconds=None, keep_trips=True, record=None,
                 log=None):
        self.prepare(plan, readings, options)
        self.begin(feeds, Fuel(max_trips, max_seconds), None, keep_trips)
        self.record = record  # tests: a list to collect (stream, index) the schedule forces
        self.log = log  # tests: a list given a `ScheduleRun` for every run that ended

    def prepare(self, plan, readings, options: Options = Options()):
        """The reference's tables, and the engine's: its options, the plan's static demands,
        the reading that keeps every loop on the reference, the plan's constants."""
        super().prepare(plan, readings)
        self.options = options
        self.record = self.log = None
        self._demands = plan.derived.setdefault(("static demands",), {})
        self.why = readings_refused(self.readings)  # a reading the schedule does not run
        self.constants = constants(plan)  # forced alike by every evaluation (root.py)
        self.walks = root_walks(plan)  # the walks of values outside loops (root.py)
        self.tensor_inputs = tuple(k for k, _, dtype, _ in input_table(plan) if dtype is not None)
        self.root_loops = {}  # output id -> its loop's `RootLoop`, or False (`demand_by_driver`)

    def begin(self, feeds, fuel, trace=None, keep_trips=True):
        """One evaluation's state; its root memo starts with the constants and the inputs."""
        self.scheduled_loops = {}  # loop -> the demand its last run on a schedule followed
        self.masked_loops = set()  # loops whose schedule met an undefined value (masked_steps.py)
        Machine.begin(self, feeds, fuel, None, keep_trips)

    def again(self, feeds, fuel):
        """The reference's `again`; the root memo starts with the constants and the inputs."""
        self.feeds, self.fuel, self.max_trips = feeds, fuel, fuel.max_trips  # (the reference's)
        self.root.memo.update(self.constants)
        store_inputs(self)

    def finished(self):
        """The reference's `finished`; which loops ran on a schedule, or masked, forgotten."""
        Machine.finished(self)
        if self.scheduled_loops:
            self.scheduled_loops.clear()
        if self.masked_loops:
            self.masked_loops.clear()

    def demand(self, nid, act=None, i=0):
        """As the reference's, but a value outside loops is forced by a walk of its static
        cone (`root.py`), without the driver where the cone is maps and projections."""
        if act is None or act is self.root:
            return force_root(self, nid)
        return super().demand(nid, act, i)

    output_forcer = force_root  # `demand` of a value outside loops, called as f(machine, nid)

    def demand_by_driver(self, nid):
        """A value outside loops forced by the reference's driver; an output of a loop that
        runs on its schedule by the loop's runner without it (`root_loop.py`): the driver's
        one step for it would be that run (`loop_output`: a loop outside loops reads what
        it needs through `demand`), and its element stored as the driver stores it."""
        run = self.root_loops.get(nid)
        if run is None:
            run = self.root_loops[nid] = self.root_loop_of(nid)
        if run:
            return run(self, nid)
        return super().demand(nid, self.root, 0)

    def root_loop_of(self, nid):
        """The `RootLoop` of `nid`'s loop when `nid` is the output of a loop the schedule
        runs exactly (`static_demand`), else False; asked once per prepared machine."""
        node = self.nodes[nid]
        if node.__class__ is LoopOut:
            demand = self.static_demand(node.loop)
            if demand is not None:
                return root_loop(self.plan, demand)
        return False

    def loop_output(self, node, act, i):
        """A loop's run on its schedule where it can (a loop nested in another gets a
        schedule per outer element), else the reference's reading."""
        done = yield from self.scheduled(node, act, i)
        if done is not None:
            return done
        return (yield from super().loop_output(node, act, i))

    def static_demand(self, loop):
        """The loop's demand analysis when the schedule can run it exactly -- for a loop
        outside loops, or nested in a loop the reference runs -- else None (`reason` says
        why)."""
        if self.why:
            return None
        demands = self._demands  # the plan's: it does not depend on the feeds
        if loop not in demands:
            outputs, _ = outputs_to_compute(self.plan, loop)
            demands[loop] = None if outputs is None else demand_of(self.plan, loop, outputs)
        return demands[loop]

    def reason(self, loop) -> str:
        """Why `loop` is not run on a schedule (`static_demand` is None)."""
        if self.why:
            return self.why
        outputs, why = outputs_to_compute(self.plan, loop)
        return why or why_not(self.plan, loop, outputs)

    def ran(self, loop, path, n, engine=False):
        """Record a run of `loop`, and which path made it (`paths`): a run on the engine,
        when no trip counts are kept, only says "engine" where no run said otherwise, after
        A5's refusal of zero trips (what the reference's `ran` does then)."""
        if engine and self.trips is None:
            if not n:
                rules.zero_trips_refused(loop, n, self.plan.profile, self.readings["A5"])
            self.paths.setdefault(loop, "engine")
            return
        super().ran(loop, path, n, "engine" if engine else f"reference: {self.reason(loop)}")

    def fetch(self, nid, act, i):
        """A value outside a schedule's loop. A loop outside loops reads it through `demand`;
        a nested loop's schedule runs inside one step of the driver, so it only reads values
        already computed and asks the driver for the others (`NeedsValue`): a chain of outer
        elements each needing the last never becomes a chain of Python calls (`stream/order`)."""
        if act.loop is None:
            return force_root(self, nid)  # which reads the memo first
        where, k = self.locate(nid, act, i)
        memo = where.memo.get(nid)
        if memo is None or k not in memo:
            raise NeedsValue(nid)
        return memo[k]

    def scheduled(self, node, act, i):
        """`run_schedule` as a step of the driver: the values a nested schedule needs are
        yielded to the driver, then the schedule runs again (None: not scheduled). What
        every run forces from outside -- the COUNT, the initial values of the recurrences
        needed from index 0 whatever n is -- is asked for first, which spares most reruns."""
        demand = self.static_demand(node.loop) if act.loop is not None else None
        if demand is not None:
            loop = self.plan.loops[node.loop]
            for ref in ([loop.count] if loop.count else []) + [
                    n.init for k, n in demand.members.items()
                    if isinstance(n, Recurrence) and (demand.certain[k] or 0) >= 1]:
                yield (ref, act, i)
        while True:
            try:
                return self.run_schedule(node, act, i)
            except NeedsValue as need:
                yield (need.ref, act, i)

    def run_schedule(self, node, act, i):
        """Run the whole loop, in a loop the reference runs, with its per-trip schedule and
        store every output of it (a loop outside loops: `RootLoop`)."""
        demand = self.static_demand(node.loop)
        if demand is None:
            return None
        n, values = (self.plain_values(demand, node, act, i, None, None)
                     or self.schedule_values(demand, node, act, i))
        self.ran(node.loop, act.path, n, engine=True)
        result = None
        nodes = self.plan.nodes
        for out_id, value in values.items():
            out = nodes[out_id]
            if out.kind is not LoopOutput.LAST_VALUE:
                value = self.output_value(out, value, n,
                                          lambda: self.demand(out.length, act, i))
            if out_id == node.id:
                result = value
            else:
                self.store(out_id, act, i, value)
        return result

    def inner_output(self, outer, node, k):
        """Element k of `node`, an output of a loop nested in the loop `outer` runs: that
        element's run of the inner loop, on a schedule of its own that reads the enclosing
        loop's elements at k (`structure/nesting`). The run computes every output of the
        inner loop the enclosing demand needs at k (`Demand.runs`); the others are stored
        in `outer` beside this one. Step by step: an evaluation's usual run takes the path
        decided once (`InnerRuns.element`, inner_run.py), which makes the same values."""
        runs = outer.inner_runs[node.loop]  # decided once per outer schedule (inner_run.py)
        demand, outs = runs.demand, runs.outs
        path = None  # the run's (loop, index) path, made only where trips or records keep it
        if self.trips is not None or self.record is not None:
            path = outer.path + ((outer.d.loop.name, k),)
        n, values = (self.plain_values(demand, node, None, k, outer, path)
                     or self.schedule_values(demand, node, None, k, outer, path))
        self.ran(node.loop, path, n, engine=True)
        found = None
        for out in outs:
            value = values[out.id]
            if out.kind is not LoopOutput.LAST_VALUE:
                value = self.output_value(out, value, n,
                                          lambda out=out: outer.get(out.length, k))
            if out is node:
                found = value
            else:
                outer.store(out.id, k, value)
        return found

    def output_value(self, out, value, n, length):
        """A loop output after n trips: LAST_VALUE as it is; the elements stacked, to the
        length `length()` reads (`output/concat`, `output/reverse`), as the reference does."""
        if out.kind is LoopOutput.LAST_VALUE:
            return value
        found = stacked_plainly(out, value)
        return self.stacked(out, value, n, length) if found is None else found

    def schedule_values(self, demand, node, act, i, outer=None, path=None):
        """(n, the loop's outputs) from its schedule. A plain schedule that meets an undefined
        value stops (`MasksNeeded`) and the loop runs again on a masked one, which carries the
        masks as the element rules do (masked_steps.py); later runs of the loop start masked.
        An evaluation's run takes `plain_values` first."""
        sink = self.record if outer is None or outer.record is None else outer.record.entries
        while True:
            record = self.record
            if record is not None:  # tests: what it forced; for a nested loop, for which element
                nested = path if outer is not None else (
                    self.activation(node.loop, act, i).path if act.loop is not None else None)
                record = NestedRecord(nested)
            self.scheduled_loops[node.loop] = demand
            schedule = Schedule.take(demand, self, act, i, record=record,
                                     masked=node.loop in self.masked_loops, outer=outer,
                                     path=path)
            try:
                n = schedule.run()
                values = schedule.outputs(n)
            except MasksNeeded as need:
                if need.loop != node.loop:  # an enclosing loop's: it runs again
                    raise
                self.masked_loops.add(node.loop)
                continue  # what the plain schedule recorded is dropped
            except LazyLoopError:
                if record is not None and (outer is not None or act.loop is None):
                    sink.extend(record.entries)  # what it forced until the error
                if self.log is not None:
                    self.note(schedule)
                raise
            finally:
                schedule.release()
            if self.log is not None:
                self.note(schedule)
            if record is not None:  # kept only from the run that completed
                sink.extend(record.entries)
            return n, values

    def plain_values(self, demand, node, act, i, outer, path):
        """`schedule_values` of an evaluation's run -- nothing recorded or logged, the loop
        not marked masked -- on a kept plain schedule taken at once: (n, the loop's
        outputs); None for any other run, or when the schedule met an undefined value of
        this loop (`MasksNeeded`: the loop is marked to run masked from now on)."""
        if self.record is not None or self.log is not None or node.loop in self.masked_loops:
            return None
        self.scheduled_loops[node.loop] = demand
        return plain_run(Schedule.take(demand, self, act, i, outer=outer, path=path), self,
                         node.loop, Schedule.outputs)

    def note(self, schedule):
        """Add a run that ended (an answer or an error) to `log` (kept: not None)."""
        self.log.append(ScheduleRun(schedule.d.loop.name, schedule.masked,
                                    schedule.batched, schedule.masked_batches,
                                    schedule.compiled, schedule.settled))


@attrs.frozen
class ScheduleRun:
    """What one run of a loop's schedule did (`EngineMachine.log`, for the tests): whether it
    carried masks, which streams came from batches (and which of those carry masks), whether
    compiled trips ran, whether a fixed point ended it early (`laziness/fixed-point`)."""
    loop: str
    masked: bool
    batched: frozenset
    masked_batches: frozenset
    compiled: bool
    settled: bool = False


def readings_refused(readings) -> str:
    """The reading that keeps every loop on the reference ("" when none does): A10 "eager"
    forces what no demand asks for; A2 "api-reference" and A40 "condition-first" read
    elements the schedule does not order that way."""
    for key, scheduled in (("A10", "lazy"), ("A2", "guide"), ("A40", "count-first")):
        if readings[key] != scheduled:
            return f"reading {key}={readings[key]}"
    return ""


class NeedsValue(BaseException):
    """A nested loop's schedule reads a value not computed yet: the driver computes it
    (iteratively, `stream/order`) and runs the schedule again. Internal control flow, caught
    by `Machine.scheduled`; a BaseException so that no kernel guard converts it."""

    def __init__(self, ref):
        super().__init__(ref)
        self.ref = ref


class NestedRecord:
    """`EngineMachine.record` for one run of a schedule, held until the run completes (a run
    interrupted by `NeedsValue` or `MasksNeeded` is run again): (stream, index) pairs, and
    for a nested loop (`path` given) (stream, index, outer indices), the outer indices as a
    reference trace's `activation` holds them."""

    def __init__(self, path):
        self.entries = []
        self.outer = None if path is None else (tuple(ix for _, ix in path),)

    def append(self, pair):
        self.entries.append(pair if self.outer is None else pair + self.outer)

    def extend(self, pairs):
        self.entries.extend(pairs if self.outer is None else (p + self.outer for p in pairs))
