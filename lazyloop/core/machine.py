"""Forcing stream elements on demand: the reference machine behind `evaluate` and `run`.

Every node of the plan has an element rule, written as a generator: it `yield`s the elements
it needs, as ``(node id, activation, index)``, and returns its value. A driver runs the rules
on an explicit stack, so a chain of 10^6 recurrence elements never recurses in Python
(`stream/order`), and memoises each element the first time it is computed (`stream/memo`).
Only what an output, a trip limit or a taken branch asks for is ever forced (`laziness/dead`).

An *activation* is one run of a loop: the loop, the activation it runs in, and the index of the
enclosing stream element it belongs to. The root activation holds everything outside loops,
as element 0.
"""
from __future__ import annotations

from typing import Optional

import attrs
import numpy as np

from .ambiguity import resolve
from .element_rules import ElementRules, Trips
from .enums import LoopOutput
from .errors import EvaluationError, LazyLoopError, LengthTooShort, StreamShapeChanged
from .fuel import CLOCK_EVERY, DEFAULT_MAX_TRIPS, Fuel
from .plan import (Const, IfOutput, Input, Iterator, LoopOut, Map, Plan, Project, Recurrence,
                   Undefined)
from .types import TensorType
from .undefined import split


@attrs.frozen
class ForceEvent:
    """One element computed: stream `stream` of loop `loop` (None: outside loops) at `index`,
    in the activation reached through the outer indices `activation`."""
    loop: Optional[str]
    stream: str
    index: int
    activation: tuple
    by: Optional[tuple] = None  # (stream, index) whose rule asked for it; None: an output


class Activation:
    __slots__ = ("loop", "parent", "index", "memo", "children", "path", "n")

    def __init__(self, loop, parent, index):
        self.loop = loop
        self.parent = parent
        self.index = index
        self.memo = {}
        self.children = {}
        self.n = None
        # the indices of the enclosing loops' elements this run belongs to, outermost first
        self.path = () if parent is None else parent.path + (((parent.loop, index),) if parent.loop else ())


def one_shape_streams(plan):
    """`structure/shapes`: streams whose elements must all have one shape in relaxed profiles
    -- what CONCATENATE/REVERSE stack. Every other stream of a relaxed profile, recurrences
    (carried values) included, may change shape from trip to trip; each element is checked
    against the stream's type, which is a constraint (dtype, and rank and dims where known).
    Under TensorRT every type is exact, so every stream has one shape."""
    return frozenset(n.source for n in plan.nodes.values()
                     if isinstance(n, LoopOut) and n.kind is not LoopOutput.LAST_VALUE)


class Machine(ElementRules):
    """The demand-driven evaluator of one plan on one set of feeds: the forcing stack, the
    memo of every activation, the trace, and the hand-off to the fast path. The element
    rules themselves are in `ElementRules`."""

    def __init__(self, plan: Plan, feeds, max_trips=DEFAULT_MAX_TRIPS, readings=None,
                 trace=False, fast=False, max_seconds=None, keep_trips=True):
        self.plan = plan
        self.nodes = dict(plan.nodes)
        for name in plan.loops:
            self.nodes[f"#trips:{name}"] = Trips(f"#trips:{name}", name, None, name)
        self.feeds = feeds
        self.fuel = Fuel(max_trips, max_seconds)
        self.max_trips = self.fuel.max_trips
        self.readings = resolve(readings)
        self.trace = [] if trace else None
        # loop -> [(outer indices, n)] of every run, for `run`'s Evaluation (None: not kept,
        # so that `evaluate` holds nothing per run of an inner loop)
        self.trips = {name: [] for name in plan.loops} if keep_trips else None
        self.root = Activation(None, None, 0)
        self.fast = fast
        self.one_shape = one_shape_streams(plan)
        self.fast_record = None  # tests: a list to collect (stream, index) the schedule forces
        self._demands = {}
        self.masked_loops = set()  # loops whose schedule met an undefined value (masked_steps.py)
        self._needed = None
        self.relaxed = plan.profile != "tensorrt"
        self.rules = {Input: self.rule_input, Const: self.rule_const, Map: self.rule_map,
                      Project: self.rule_project, Iterator: self.rule_iterator,
                      Recurrence: self.rule_recurrence, LoopOut: self.rule_loop_output,
                      IfOutput: self.rule_if, Undefined: self.rule_undefined,
                      Trips: self.rule_trips}

    # -- the driver ---------------------------------------------------------------------------
    def locate(self, nid, act, i):
        """An invariant is read from the scope that defines it (`stream/invariant`)."""
        scope = self.nodes[nid].scope
        while act.loop != scope:
            act, i = act.parent, act.index
        return act, i

    def demand(self, nid, act=None, i=0):
        """Force element i of node `nid` and return it, computing what it needs first."""
        act, i = self.locate(nid, act or self.root, i)
        memo = act.memo.get(nid)
        if memo is not None and i in memo:
            return memo[i]
        stack = [(nid, act, i, self.start(nid, act, i), None)]
        sent = None
        clock = self.fuel.deadline is not None  # a wall-time budget: read every CLOCK_EVERY steps
        steps = 0
        while stack:
            key, a, k, gen, asker = stack[-1]
            if clock:
                steps += 1
                if not steps % CLOCK_EVERY:
                    self.fuel.check_forcing(self.plan, self.nodes[key], k)
            try:
                want = gen.send(sent)
            except StopIteration as done:
                stack.pop()
                sent = self.store(key, a, k, done.value, asker)
                continue
            except LazyLoopError:
                raise
            except RecursionError as exc:  # a kernel of a frontend recursed: report it as ours
                raise EvaluationError(f"stream {key!r}", "stream/order", str(exc),
                                      "make the layer's function iterative") from None
            wid, wact, wi = want
            wact, wi = self.locate(wid, wact, wi)
            memo = wact.memo.get(wid)
            if memo is not None and wi in memo:
                sent = memo[wi]
            else:
                stack.append((wid, wact, wi, self.start(wid, wact, wi), (key, k)))
                sent = None
        return sent

    def start(self, nid, act, i):
        node = self.nodes[nid]
        return self.rules[type(node)](node, act, i)

    def store(self, nid, act, i, value, asker=None):
        node = self.nodes[nid]
        if self.relaxed and isinstance(node.type, TensorType):
            earlier = act.memo.get(nid) if nid in self.one_shape else None
            first = np.shape(split(next(iter(earlier.values())))[0]) if earlier else None
            self.check_element(node, value, first)
        if isinstance(value, np.ndarray):
            value.flags.writeable = False
        act.memo.setdefault(nid, {})[i] = value
        if self.trace is not None and not isinstance(node, Trips):
            self.trace.append(ForceEvent(act.loop, nid, i, tuple(ix for _, ix in act.path), asker))
        return value

    def check_element(self, node, value, first_shape=None):
        """`structure/shapes`: every element agrees with the stream's type -- its dtype, and
        its rank and dimensions where the type knows them; an element that is stacked
        (`first_shape` given) also has the first element's shape."""
        raw, _ = split(value)
        if isinstance(raw, np.generic):
            raw = np.asarray(raw)
        ty = node.type
        if not isinstance(raw, np.ndarray) or raw.dtype != ty.dtype or not ty.admits(raw.shape):
            got = f"{raw.dtype}{list(raw.shape)}" if isinstance(raw, np.ndarray) else type(raw).__name__
            raise StreamShapeChanged(f"stream {node.id!r} ({node!r})", "structure/shapes",
                                     f"an element is {got}, the stream is {ty!r}",
                                     "give every element the dtype, rank and dimensions its "
                                     "stream declares")
        if first_shape is not None and node.scope is not None and first_shape != raw.shape:
            raise StreamShapeChanged(f"stream {node.id!r} ({node!r})", "structure/shapes",
                                     f"element shape changed from {list(first_shape)} "
                                     f"to {list(raw.shape)}",
                                     "give every per-trip value that is stacked one shape")
        return value

    def activation(self, loop, parent, index):
        key = (loop, index)
        run = parent.children.get(key)
        if run is None:
            run = parent.children[key] = Activation(loop, parent, index)
        return run

    # -- the fast path ------------------------------------------------------------------------
    def static_demand(self, loop):
        """The loop's demand analysis when the schedule can run it exactly, else None."""
        from .demand import demand_of
        if loop not in self._demands:
            demand = None
            if self.readings["A10"] == "lazy" and self.readings["A2"] == "guide" and \
                    self.readings["A40"] == "count-first" and self.all_outputs_needed(loop):
                demand = demand_of(self.plan, loop)
            self._demands[loop] = demand
        return self._demands[loop]

    def all_outputs_needed(self, loop):
        """The schedule computes all of a loop's outputs at once: that is exact when every
        evaluation needs them all -- a loop outside loops whose outputs the network's
        outputs need whatever the values, or a nested loop with one output, whose run for
        an outer element is made only when that output's element is needed."""
        outputs = self.plan.loops[loop].outputs
        if self.plan.loops[loop].parent is not None:
            return len(outputs) == 1
        return all(o in self.statically_needed() for o in outputs)

    def statically_needed(self):
        """Root nodes every evaluation of the outputs forces, whatever the values."""
        if self._needed is None:
            needed, stack = set(), [nid for _, nid in self.plan.outputs]
            while stack:
                nid = stack.pop()
                node = self.plan.nodes[nid]
                if nid in needed or node.scope is not None:
                    continue
                needed.add(nid)
                stack.extend(r for r in node.inputs() if r is not None)
                if isinstance(node, LoopOut) and self.plan.loops[node.loop].count:
                    stack.append(self.plan.loops[node.loop].count)
            self._needed = needed
        return self._needed

    def fetch(self, nid, act, i):
        """A value outside a schedule's loop. A loop outside loops reads it through `demand`;
        a nested loop's schedule runs inside one step of the driver, so it only reads values
        already computed and asks the driver for the others (`NeedsValue`): a chain of outer
        elements each needing the last never becomes a chain of Python calls (`stream/order`)."""
        if act.loop is None:
            return self.demand(nid, act, i)
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
        """Run the whole loop with its per-trip schedule and store every output of it."""
        demand = self.static_demand(node.loop)
        if demand is None:
            return None
        n, values = self.schedule_values(demand, node, act, i)
        self.ran(node.loop, act.path, n)
        result = None
        for out_id, value in values.items():
            out = self.plan.nodes[out_id]
            value = self.output_value(out, value, n, lambda: self.demand(out.length, act, i))
            if out_id == node.id:
                result = value
            else:
                self.store(out_id, act, i, value)
        return result

    def inner_output(self, outer, node, k):
        """Element k of `node`, the one output of a loop nested in the loop `outer` runs:
        that element's run of the inner loop, on a schedule of its own that reads the
        enclosing loop's elements at k (`structure/nesting`)."""
        path = outer.path + ((outer.d.loop.name, k),)
        demand = self.static_demand(node.loop)
        n, values = self.schedule_values(demand, node, None, k, outer, path)
        self.ran(node.loop, path, n)
        return self.output_value(node, values[node.id], n, lambda: outer.get(node.length, k))

    def output_value(self, out, value, n, length):
        """A loop output after n trips: LAST_VALUE as it is; the elements stacked, to the
        length `length()` reads (`output/concat`, `output/reverse`)."""
        if out.kind is LoopOutput.LAST_VALUE:
            return value
        size = n
        if out.length is not None:
            size = int(np.asarray(split(length())[0]).reshape(-1)[0])
            if size < n:
                raise LengthTooShort(f"loop output {out.id!r} ({out!r})", "output/concat",
                                     f"length {size} is less than the {n} trips",
                                     "make the length at least the trip count")
        return self.stack(out, value, size)

    def schedule_values(self, demand, node, act, i, outer=None, path=None):
        """(n, the loop's outputs) from its schedule. A plain schedule that meets an undefined
        value stops (`MasksNeeded`) and the loop runs again on a masked one, which carries the
        masks as the element rules do (masked_steps.py); later runs of the loop start masked."""
        from .schedule import MasksNeeded, Schedule
        sink = self.fast_record if outer is None or outer.record is None else outer.record.entries
        while True:
            record = self.fast_record
            if record is not None:  # tests: what it forced; for a nested loop, for which element
                nested = path if outer is not None else (
                    self.activation(node.loop, act, i).path if act.loop is not None else None)
                record = NestedRecord(nested)
            schedule = Schedule(demand, self, act, i, record=record,
                                masked=node.loop in self.masked_loops, outer=outer, path=path)
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
                raise
            finally:
                schedule.release()
            if record is not None:  # kept only from the run that completed
                sink.extend(record.entries)
            return n, values


class NeedsValue(BaseException):
    """A nested loop's schedule reads a value not computed yet: the driver computes it
    (iteratively, `stream/order`) and runs the schedule again. Internal control flow, caught
    by `Machine.scheduled`; a BaseException so that no kernel guard converts it."""

    def __init__(self, ref):
        super().__init__(ref)
        self.ref = ref


class NestedRecord:
    """`fast_record` for one run of a schedule, held until the run completes (a run
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
