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

Each stream's element is made by its kind's step in the step table
(`lazyloop.core.reference.steps`), bound once per run: the same rule functions the reference
calls. Undefined values (spec/13-outputs.md) take the same path: a schedule starts plain, and
the first undefined invariant it fetches (a `Partial`) makes the machine run the loop again on
a masked schedule (`self.masked`), whose steps carry the masks (masked_steps.py); the WHILE
test refuses an undefined element as `trip/while` does.

A schedule is built once and kept with the plan (`take`, `release`); a run only sets what
is its own (`begin`). What it reads of an enclosing loop's schedule it reads from that
schedule's memo or its held invariants; the first element of a stacked stream in a run
is checked in full only when its shape is not one its type was found to admit.
"""
from __future__ import annotations

import numpy as np

from ..enums import LoopOutput
from ..errors import LazyLoopError
from ..fuel import CLOCK_EVERY
from ..plan import Recurrence
from ..reference.machine import admitted_shapes, one_shape_streams
from ..reference.rules import count_limit, while_holds
from ..reference.steps import entry
from ..types import TensorType
from ..undefined import Partial, split
from .batch import batch_maps
from .branches import chain_step
from .compiled import trip_function
from .demand import Demand, NotStatic  # noqa: F401 -- Demand re-exported
from .fixpoint import first_check, ordinary_until, settle, watch_for
from .masked_steps import MasksNeeded
from .readonly import unmarked_streams


_MISSING = object()
NONE = frozenset()


KEEP = 4  # schedules of one loop kept for later runs (`Schedule.take`)


def pool_of(demand, masked) -> list:
    """The schedules of a loop kept with its plan for later runs, plain or masked."""
    derived, key = demand.plan.derived, ("schedules", demand.key, masked)
    found = derived.get(key)
    if found is None:
        found = derived[key] = []
    return found


class Schedule:
    """Runs one activation of a static loop. `machine` supplies invariants and readings.

    What a run does not change -- the memo dictionaries, the bound steps, the compiled
    trips bound to them -- is built once and kept with the plan (`take`, `release`): a
    loop run again (another evaluation, another outer element) starts at once."""

    def __init__(self, demand: Demand, machine, act=None, index=0, record=None, masked=False,
                 outer=None, path=None):
        self.d = demand
        self.masked = masked  # carries undefined masks (masked_steps.py)
        self.failures = {}  # (inner loop, index) -> the error its run raised
        self.memo = {k: {} for k in demand.members}
        self.invariants = {}
        self.record = record
        self.check = machine.relaxed
        self.first_shape = {}
        plan, one_shape = demand.plan, one_shape_streams(demand.plan)
        # stream -> the shapes found to agree with its type (one run's, for a stacked stream)
        self.shapes = {k: set() if k in one_shape else admitted_shapes(plan, k)
                       for k, n in demand.members.items() if isinstance(n.type, TensorType)}
        nodes = demand.plan.nodes
        self.lists = {nodes[o].source: [] for o in demand.loop.outputs
                      if o in demand.outputs and nodes[o].kind is not LoopOutput.LAST_VALUE}
        self.output_sources = tuple((o, nodes[o].source, nodes[o].kind is LoopOutput.LAST_VALUE)
                                    for o in demand.outputs)  # what `outputs` reads
        self.bound = None  # the compiled trips bound to this schedule (compiled.py)
        self.binding = None  # what they are bound to that no run changes (compiled.py)
        self.blocks = {}  # recurrence -> its accumulation's block, for later runs (accumulate.py)
        self.parts = None  # what a trip works on (`trip_parts`)
        self.watch = watch_for(demand)  # laziness/fixed-point: may end the loop early
        self.pool = pool_of(demand, masked)  # where `release` keeps it
        self.trips_key = ("trips run", demand.key)  # the plan's count of this loop's trips
        every, some = demand.external
        self.outside = tuple(dict.fromkeys(every + some))  # what a run reads outside the loop
        self.begin(machine, act, index, outer, path)
        self.build_steps()
        self.plain_steps = dict(self.steps)
        self.phase_a, self.phase_b = demand.phases  # see Demand.phases

    def begin(self, machine, act, index, outer=None, path=None):
        """The state of one run: for the activation `act` at `index` (or the element `index`
        of the enclosing loop's schedule `outer`)."""
        self.m = machine
        self.act = act
        self.index = index
        self.outer = outer  # the enclosing loop's schedule, when that loop is scheduled too
        self.given_path = path
        self.collected = dict(self.lists)  # CONCATENATE/REVERSE sources -> their elements
        self.batched = NONE  # streams whose elements come from a batch (batch.py)
        self.masked_batches = NONE  # those of them whose batch carries a mask
        self.compiled = False  # whether compiled trips ran (compiled.py)
        self.settled = False  # whether a fixed point ended it early (fixpoint.py)
        if outer is not None:
            self.held_by_outer(outer, index)
        elif act is not None and act.loop is None:
            self.held_invariants(machine.root.memo)
        return self

    def held_by_outer(self, outer, k):
        """A run for element k of an enclosing scheduled loop: what it reads outside its
        loop and that loop's schedule holds already -- its element k of a stream of it, or
        its invariant -- is this run's invariant from the start, as `fetch` would read it
        (reading a held value forces nothing, `stream/invariant`); an undefined one is left
        to `invariant`, which asks for masks."""
        kept, memo, held = self.invariants, outer.memo, outer.invariants
        for ref in self.outside:
            found = memo.get(ref)
            value = held.get(ref, _MISSING) if found is None else found.get(k, _MISSING)
            if value is not _MISSING and value.__class__ is not Partial:
                kept[ref] = value

    def held_invariants(self, memo):
        """A loop outside loops: what it reads outside it and the evaluation holds already
        (the root's constants and inputs, values forced before) is its invariant from the
        start -- reading a held value forces nothing (`stream/invariant`); an undefined one
        is left to `invariant`, which asks for masks."""
        kept = self.invariants
        for ref in self.outside:
            done = memo.get(ref)
            if done is not None and done[0].__class__ is not Partial:
                kept[ref] = done[0]

    @classmethod
    def take(cls, demand, machine, act, index, record=None, masked=False, outer=None,
             path=None):
        """A schedule for one run: one kept from an earlier run of the loop, or a new one
        (a run that records what it forces, for the tests, always gets a new one)."""
        if record is None:
            try:
                return pool_of(demand, masked).pop().begin(machine, act, index, outer, path)
            except IndexError:
                pass
        return cls(demand, machine, act, index, record, masked, outer, path)

    # -- values ---------------------------------------------------------------------------
    def invariant(self, ref):
        if ref not in self.invariants:
            value = self.fetch(ref) if ref is not None else None
            if type(value) is Partial and not self.masked:
                raise MasksNeeded(ref, self.d.loop.name)  # run the loop again, masked
            self.invariants[ref] = value
        return self.invariants[ref]

    def fetch(self, ref):
        """A value from outside the loop (`stream/invariant`): in a run for an element of an
        enclosing scheduled loop, that loop's element at this index or its invariant; else
        what the machine holds."""
        outer = self.outer
        if outer is None:
            return self.m.fetch(ref, self.act, self.index)
        if ref in outer.memo:
            return outer.get(ref, self.index)
        value = outer.invariants.get(ref, _MISSING)  # held already: the usual case
        return outer.invariant(ref) if value is _MISSING else value

    def inner_element(self, node, k):
        """Element k of an inner loop's output: its run for this loop's element k. A run that
        failed is not made twice (the compiled trips hand a failed trip back to `run`)."""
        failed = self.failures.get((node.loop, k))
        if failed is not None:
            raise failed
        try:
            return self.m.inner_output(self, node, k)
        except LazyLoopError as error:
            self.failures[(node.loop, k)] = error
            raise

    def store(self, nid, k, value):
        """Element k of member `nid`, made beside another (an inner run's other outputs)."""
        return self.finishers[nid](k, value)

    @property
    def path(self):
        """(loop, index) of each enclosing loop's element this run belongs to, outermost
        first (as the reference's activations say it)."""
        if self.given_path is None:  # as `Activation` makes it, without making one
            outer, act = self.outer, self.act
            self.given_path = (outer.path + ((outer.d.loop.name, self.index),)
                               if outer is not None else
                               act.path + (((act.loop, self.index),) if act.loop else ()))
        return self.given_path

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
        self.steps, self.finishers = {}, {}
        for nid, node in self.d.members.items():
            self.steps[nid] = self.step_for(nid, node)
        self.raw = {nid: self.steps[nid] for nid in self.d.chains}
        for nid in self.d.chains:
            self.steps[nid] = chain_step(self, nid, self.raw[nid])

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
        kept, invariant, missing = self.invariants, self.invariant, _MISSING

        def read(k):
            value = kept.get(ref, missing)
            return invariant(ref) if value is missing else value
        return read

    def step_for(self, nid, node):
        """Element k of a member: its kind's step in the step table, bound to this run."""
        step = entry(node).step
        if step is None:  # pragma: no cover -- Demand refuses every other kind
            raise NotStatic(repr(node))
        finish = self.finishers[nid] = self.finisher(nid, node)
        return step(self, node, finish)

    def finisher(self, nid, node):
        """Store an element: read-only, memoised, checked in relaxed profiles, recorded."""
        memo = self.memo[nid]
        check = self.check and isinstance(node.type, TensorType)
        record = self.record
        ndarray, generic = np.ndarray, np.generic  # a numpy scalar (a Loop's iteration number)
        dtype, shapes = (node.type.dtype, self.shapes[nid]) if check else (None, None)
        mark = nid not in unmarked_streams(self.d)  # stream/memo: only what a kernel could write
        if isinstance(node, Recurrence) and record is None:
            def carry(k, value):  # an element of another stream or an invariant: read-only
                if check and (value.__class__ is not ndarray and not isinstance(value, generic)
                              or value.dtype != dtype or value.shape not in shapes):
                    self.check_element(node, value)
                memo[k] = value
                return value
            return carry

        def finish(k, value):
            if value.__class__ is ndarray:
                if check and (value.dtype != dtype or value.shape not in shapes):
                    self.check_element(node, value)
                if mark:
                    value.setflags(write=False)
            elif check and not (isinstance(value, generic) and value.dtype == dtype
                                and value.shape in shapes):
                self.check_element(node, value)
            memo[k] = value
            if record is not None:
                record.append((nid, k))
            return value
        return finish

    def check_element(self, node, value):
        """`structure/shapes`, cheaply when the element has its stream's dtype and a shape
        its type was found to admit (the check depends on dtype and shape alone); a stacked
        stream admits, in one run, the first element's shape alone."""
        ty = node.type
        plain = isinstance(value, (np.ndarray, np.generic)) and value.dtype == ty.dtype
        shapes = self.shapes[node.id]
        if plain and value.shape in shapes:
            return
        shape = value.shape if plain else np.shape(split(value)[0])
        stacked = node.id in self.m.one_shape
        first = self.first_shape.setdefault(node.id, shape) if stacked else None
        admitted = admitted_shapes(self.d.plan, node.id) if stacked else shapes
        if not (plain and first == shape and shape in admitted):  # else: a first element
            self.m.check_element(node, value, first)  # of a shape its type admits
        if plain:
            shapes.add(shape)
            admitted.add(shape)

    # -- the run ------------------------------------------------------------------------------
    def run(self):
        loop = self.d.loop
        count = None
        if loop.count is not None:
            count = count_limit(loop, self.invariant(loop.count), self.m.readings["A4"],
                                self.m.plan.profile)
        fuel = self.m.fuel
        watch = self.watch  # laziness/fixed-point: may end the loop early
        fuel.before_first_trip(loop, count, may_settle=watch is not None and not watch.stacked)
        start = 0
        options = self.m.options
        if count is not None and loop.while_ is None and options.batch:  # n known before trip 0
            start = batch_maps(self, count, options.max_batch_bytes)  # stream/map (batch.py)
        cond = loop.while_
        cond_local = cond is not None and cond in self.memo
        cond_memo = self.memo.get(cond)
        window = self.d.window
        max_trips = self.m.max_trips
        phase_a, phase_b, memos = self.trip_parts() if start != count else ((), (), ())
        collected = list(self.collected.items())
        deferred = None
        stop = count  # laziness/fixed-point may lower it
        check_at = first_check(watch, count)
        i = start  # n when every trip's work was batched
        ordinary = None  # the loop's ordinary trips, compiled once it is hot (compiled.py)
        hot = options.compile_after
        ask_at = 0  # the next trip at which `trip_function` may answer otherwise than None
        while True:
            if deferred is None and not self.masked and hot is not None and i != stop:
                if ordinary is None and i >= ask_at:
                    ordinary = trip_function(self, i, hot)
                    ask_at = max(i + 1, hot)  # within a run, None until trip `hot`
                if ordinary is not None:
                    self.compiled = True
                    i = ordinary(i, ordinary_until(i, stop, check_at, self.m.max_trips))
            if stop is not None and i >= stop:
                break
            for memo, step in phase_a:
                if i not in memo:
                    step(i)
            if cond is not None:
                c = cond_memo[i] if cond_local else self.invariant(cond)
                if c.__class__ is Partial:  # masked: trip/while refuses an undefined element
                    c = while_holds(loop, i, c)
                if not c:  # a 0-D or one-element bool
                    break
            if i >= max_trips:
                raise fuel.exhausted(loop, count)
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
            gone = i - window - 1  # no scheduled reader asks for this index any more: free it
            for memo in memos:
                memo.pop(gone, None)
            if not i % CLOCK_EVERY:
                for memo in memos:  # an element forced out of order, below the window
                    for old in [k for k in memo if k < gone]:
                        del memo[old]
                fuel.check_clock(loop, count, i)
        if deferred is not None:
            raise deferred
        runs = self.d.plan.derived  # how many trips the loop ran on this plan (compiled.py)
        runs[self.trips_key] = runs.get(self.trips_key, 0) + i
        self.stopped = i  # the outputs are read here; past a fixed point, equal to trip n's
        self.settled = stop != count and i == stop  # laziness/fixed-point cut it short
        return count if self.settled else i

    def trip_parts(self):
        """What a trip of `run` works on: phase A's (memo, step), phase B's (memo, step,
        offset), and the memos whose window slides (a chain's is kept whole). Made once per
        schedule (kept with it for later runs); for a run fed by batches, whose steps read
        them, made for that run."""
        parts = None if self.batched else self.parts
        if parts is None:
            memo, steps, certain = self.memo, self.steps, self.d.certain
            parts = ([(memo[k], steps[k]) for k in self.phase_a],
                     [(memo[k], steps[k], certain[k]) for k in self.phase_b],
                     [m for k, m in memo.items() if k not in self.d.chains])
            if not self.batched:
                self.parts = parts
        return parts

    def release(self):
        """After a run: drop the elements and invariants it held and keep the schedule for
        a later run of the loop (at most KEEP per loop); a schedule not kept drops its steps
        too -- their closures refer to the schedule, a reference cycle that would keep it
        until Python's cycle collector runs (one per run of an inner loop adds up)."""
        for memo in self.memo.values():
            memo.clear()
        for elements in self.lists.values():
            elements.clear()
        self.invariants.clear()
        self.failures.clear()
        for k in self.first_shape:  # a stacked stream's shapes are checked run by run
            self.shapes[k].clear()
        self.first_shape.clear()
        self.m = self.act = self.outer = self.given_path = self.collected = None
        if self.batched:
            self.steps.clear()
            self.steps.update(self.plain_steps)
        pool = self.pool
        if self.record is None and len(pool) < KEEP:
            pool.append(self)
            return
        self.steps.clear()
        self.plain_steps.clear()
        self.raw.clear()
        self.finishers.clear()
        self.bound = self.parts = self.binding = None

    def outputs(self, n):
        """Every output of the loop after it stopped at n trips: last values forced now,
        concatenations from the elements collected trip by trip."""
        result = {}
        for out_id, source, last in self.output_sources:
            if last:
                result[out_id] = self.get(source, min(n, self.stopped))
            else:  # a batch as it is; elements collected trip by trip as a new list
                found = self.collected[source]
                result[out_id] = list(found) if type(found) is list else found
        return result
