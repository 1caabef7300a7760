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
from ..plan import Recurrence
from ..reference.machine import admitted_shapes, one_shape_streams
from ..reference.steps import entry
from ..types import TensorType
from ..undefined import Partial, split
from .batch import candidates
from .branches import chain_step
from .demand import Demand, NotStatic  # noqa: F401 -- Demand re-exported
from .fixpoint import watch_for
from .inner_run import InnerRuns
from .masked_steps import MasksNeeded
from .one_run import run
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
        self.inner_runs = {}  # inner loop -> its runs for this loop's elements (inner_run.py)
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
        self.parts = None  # what a trip works on (`one_run.trip_parts`)
        self.watch = watch_for(demand)  # laziness/fixed-point: may end the loop early
        watch = self.watch  # whether the fuel may let a COUNT above it run (`run`)
        self.may_settle = watch is not None and not watch.stacked
        self.pool = pool_of(demand, masked)  # where `release` keeps it
        self.trips_key = ("trips run", demand.key)  # the plan's count of this loop's trips
        every, some = demand.external
        self.outside = tuple(dict.fromkeys(every + some))  # what a run reads outside the loop
        self.by_outer = None  # `outside` split by the enclosing demand (`outer_reads`)
        self.batchable = bool(candidates(demand))  # whether a run may batch (batch.py)
        self.begin(machine, act, index, outer, path)
        self.build_steps()
        self.plain_steps = dict(self.steps)
        self.phase_a, self.phase_b = demand.phases  # see Demand.phases
        # what every run reads of the loop: its WHILE input, whether the loop makes it, and
        # its memo (none: an invariant)
        self.cond = demand.loop.while_
        self.cond_memo = self.memo.get(self.cond)
        # what `release` empties, in one pass: the memos, the collected lists, the invariants
        # and the failures
        self.held = (tuple(self.memo.values()) + tuple(self.lists.values())
                     + (self.invariants, self.failures))

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
        kept, memo = self.invariants, outer.memo
        found = self.by_outer
        if found is None or found[0] is not outer.d:
            found = self.outer_reads(outer)
        _, streams, invariants = found
        for ref in streams:
            value = memo[ref].get(k, _MISSING)
            if value is not _MISSING and value.__class__ is not Partial:
                kept[ref] = value
        held = outer.invariants
        for ref in invariants:
            value = held.get(ref, _MISSING)
            if value is not _MISSING and value.__class__ is not Partial:
                kept[ref] = value

    def outer_reads(self, outer) -> tuple:
        """What a run reads outside its loop, split once per enclosing demand (kept in
        `by_outer`): (that demand, the streams of the enclosing loop -- in its schedule's
        memo --, its invariants)."""
        memo = outer.memo
        self.by_outer = (outer.d, tuple(r for r in self.outside if r in memo),
                         tuple(r for r in self.outside if r not in memo))
        return self.by_outer

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
        memo = outer.memo.get(ref)
        if memo is not None:  # a stream of the enclosing loop: as `outer.get` reads it
            k = self.index
            value = memo.get(k, _MISSING)
            return outer.steps[ref](k) if value is _MISSING else value
        value = outer.invariants.get(ref, _MISSING)  # held already: the usual case
        return outer.invariant(ref) if value is _MISSING else value

    def inner_element(self, node, k):
        """Element k of an inner loop's output: its run for this loop's element k. A run that
        failed is not made twice (the compiled trips hand a failed trip back to `run`)."""
        failures = self.failures
        if failures:
            failed = failures.get((node.loop, k))
            if failed is not None:
                raise failed
        runs = self.inner_runs.get(node.loop)
        if runs is None:  # decided once per (this schedule, inner loop)
            runs = self.inner_runs[node.loop] = InnerRuns(self, node.loop)
        try:
            return runs.element(self, node, k)
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
    run = run  # run the loop until it stops: its trip count n (one_run.py)

    def release(self):
        """After a run: drop the elements and invariants it held and keep the schedule for
        a later run of the loop (at most KEEP per loop); a schedule not kept drops its steps
        too -- their closures refer to the schedule, a reference cycle that would keep it
        until Python's cycle collector runs (one per run of an inner loop adds up)."""
        for held in self.held:  # the memos, the collected lists, the invariants, failures
            if held:
                held.clear()
        if self.first_shape:
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
        self.inner_runs.clear()
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
