"""Forcing stream elements on demand: the reference evaluator.

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

from typing import Dict, List, Mapping, Optional

import attrs
import numpy as np

from .ambiguity import resolve
from .enums import LoopOutput
from .errors import (EvaluationError, FuelExhausted, InputError, IteratorOutOfBounds,
                     LazyLoopError, LengthTooShort, NegativeTripCount, StreamShapeChanged)
from .plan import (Const, IfOutput, Input, Iterator, LoopOut, Map, Node, Plan, Project,
                   Recurrence, Undefined, compile_network)
from .types import OpaqueType, TensorType
from .undefined import Partial, fill_value, filled, join, split, whole_mask

DEFAULT_MAX_TRIPS = 10_000_000


@attrs.frozen
class ForceEvent:
    """One element computed: stream `stream` of loop `loop` (None: outside loops) at `index`,
    in the activation reached through the outer indices `activation`."""
    loop: Optional[str]
    stream: str
    index: int
    activation: tuple
    by: Optional[tuple] = None  # (stream, index) whose rule asked for it; None: an output


@attrs.frozen
class Evaluation:
    outputs: Dict[str, object]
    defined: Dict[str, object]
    trace: List[ForceEvent]
    trips: Dict[str, list]  # loop name -> [(activation path, n), ...]
    plan: Plan


@attrs.frozen(repr=False)
class Trips(Node):
    """Pseudo-node: the trip count n of one activation of `loop`."""
    loop: str = ""

    def __repr__(self):
        return f"Trips({self.loop})"


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
    """`structure/shapes`: streams whose elements must all have one shape -- under TensorRT
    every stream (its shapes are static); in relaxed profiles the recurrences (carried values)
    and what CONCATENATE/REVERSE stack. Other streams of a lowered body may change shape from
    trip to trip (ONNX allows it) and are checked only against their known dimensions."""
    found = {k for k, n in plan.nodes.items() if isinstance(n, Recurrence)}
    found |= {n.source for n in plan.nodes.values()
              if isinstance(n, LoopOut) and n.kind is not LoopOutput.LAST_VALUE}
    return frozenset(found)


class Machine:
    """The demand-driven evaluator of one plan on one set of feeds."""

    def __init__(self, plan: Plan, feeds, max_trips=DEFAULT_MAX_TRIPS, readings=None,
                 trace=False, fast=False):
        self.plan = plan
        self.nodes = dict(plan.nodes)
        for name in plan.loops:
            self.nodes[f"#trips:{name}"] = Trips(f"#trips:{name}", name, None, name)
        self.feeds = feeds
        self.max_trips = int(max_trips)
        self.readings = resolve(readings)
        self.trace = [] if trace else None
        self.trips = {name: [] for name in plan.loops}
        self.root = Activation(None, None, 0)
        self.fast = fast
        self.one_shape = one_shape_streams(plan)
        self.fast_record = None  # tests: a list to collect (stream, index) the schedule forces
        self._demands = {}
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
        while stack:
            key, a, k, gen, asker = stack[-1]
            try:
                want = gen.send(sent)
            except StopIteration as done:
                stack.pop()
                sent = self.store(key, a, k, done.value, asker)
                continue
            except LazyLoopError:
                raise
            except RecursionError as exc:  # a kernel of a frontend recursed: report it as ours
                raise EvaluationError(f"stream {key!r}", "stream/order", str(exc)) from None
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
        """`structure/shapes`: every element of a stream has the stream's shape and dtype."""
        raw, _ = split(value)
        if isinstance(raw, np.generic):
            raw = np.asarray(raw)
        ty = node.type
        if not isinstance(raw, np.ndarray) or raw.dtype != ty.dtype or raw.ndim != ty.rank or any(
                d is not None and d != s for d, s in zip(ty.shape, raw.shape)):
            got = f"{raw.dtype}{list(raw.shape)}" if isinstance(raw, np.ndarray) else type(raw).__name__
            raise StreamShapeChanged(f"stream {node.id!r} ({node!r})", "structure/shapes",
                                     f"an element is {got}, the stream is {ty!r}",
                                     "make every element of a stream the same shape and dtype")
        if first_shape is not None and node.scope is not None and first_shape != raw.shape:
            raise StreamShapeChanged(f"stream {node.id!r} ({node!r})", "structure/shapes",
                                     f"element shape changed from {list(first_shape)} "
                                     f"to {list(raw.shape)}",
                                     "keep carried values the same shape on every trip")
        return value

    def activation(self, loop, parent, index):
        key = (loop, index)
        run = parent.children.get(key)
        if run is None:
            run = parent.children[key] = Activation(loop, parent, index)
        return run

    # -- element rules --------------------------------------------------------------------------
    def rule_input(self, node, act, i):
        return self.feeds[node.id]
        yield  # pragma: no cover -- makes this a generator

    def rule_const(self, node, act, i):
        return node.value
        yield  # pragma: no cover

    def rule_undefined(self, node, act, i):
        """A3: a last-trip value after zero trips is undefined."""
        if self.readings["A3"] == "error":
            raise EvaluationError(f"stream {node.id!r}", "openvino/loop5",
                                  "the last-trip value of a loop that ran zero trips is read",
                                  "reading A3=error refuses it; A3=undefined masks it")
        ty = node.type
        if isinstance(ty, TensorType):
            shape = tuple(0 if d is None else d for d in ty.shape)
            return Partial(filled(shape, ty.dtype), np.zeros(shape, bool))
        return Partial(None, False)
        yield  # pragma: no cover

    def rule_map(self, node, act, i):
        """`stream/map`: element i of every argument, then the layer's function."""
        args = []
        for ref in node.args:
            args.append(None if ref is None else (yield (ref, act, i)))
        partial = [a for a in args if type(a) is Partial]
        try:
            if not partial:
                return node.fn(*args)
            raw = [split(a)[0] for a in args]
            value = node.fn(*raw)
        except LazyLoopError:
            raise
        except Exception as exc:  # a kernel refused its element: name it, do not leak it
            raise EvaluationError(f"stream {node.id!r} ({node!r})", "stream/map",
                                  f"{type(exc).__name__}: {exc}",
                                  "check the inputs reaching this layer") from None
        if node.multi:
            return tuple(Partial(v, whole_mask(v, False)) for v in value)
        if node.positionwise:
            shape = np.shape(value)
            mask = np.ones(shape, bool)
            for a in partial:
                mask &= np.broadcast_to(a.mask, shape)
            return join(value, mask)
        return join(value, whole_mask(value, False))

    def rule_project(self, node, act, i):
        whole = yield (node.call, act, i)
        return whole[node.k]

    def rule_iterator(self, node, act, i):
        """`iterator/forward`, `iterator/reverse`, `iterator/bounds`."""
        whole = yield (node.source, act, i)
        value, mask = split(whole)
        extent = np.shape(value)[node.axis]
        index = i
        if node.reverse and self.readings["A2"] == "api-reference":
            index = yield from self.reverse_by_count(node, act, i)
        elif node.reverse:
            index = extent - 1 - i
        if not 0 <= index < extent:
            raise IteratorOutOfBounds(f"iterator {node.id!r} ({node!r})", "iterator/bounds",
                                      f"trip {i} asks for index {index} of an axis of extent "
                                      f"{extent}", "limit the trips to the iterated extent")
        element = np.take(value, index, axis=node.axis)
        if mask is None:
            return element
        return join(element, np.take(np.broadcast_to(mask, np.shape(value)), index, axis=node.axis))

    def reverse_by_count(self, node, act, i):
        """A2 "api-reference": a reverse iterator reads index M-1-i, M the COUNT limit."""
        count_ref = self.plan.loops[act.loop].count
        if count_ref is None:
            raise EvaluationError(f"iterator {node.id!r}", "iterator/reverse",
                                  "reading A2=api-reference needs a COUNT limit",
                                  "add a COUNT limit or use A2=guide")
        count = yield (count_ref, act.parent, act.index)
        return int(np.asarray(split(count)[0]).reshape(-1)[0]) - 1 - i

    def rule_recurrence(self, node, act, i):
        """`recurrence/def`: ⟨X, Y0, Y1, ...⟩."""
        if i == 0:
            return (yield (node.init, act.parent, act.index))
        return (yield (node.next, act, i - 1))

    def rule_if(self, node, act, i):
        """Force the condition's element, then only the taken branch's. An undefined
        condition takes neither branch: the element is wholly undefined."""
        c = yield (node.cond, act, i)
        value, mask = split(c)
        if mask is not None and not np.all(mask) and isinstance(node.type, TensorType) \
                and node.type.is_static:
            return Partial(filled(node.type.shape, node.type.dtype),
                           np.zeros(node.type.shape, bool))
        taken = yield ((node.then if bool(np.asarray(value).reshape(-1)[0]) else node.orelse), act, i)
        if mask is None or np.all(mask):
            return taken
        raw = split(taken)[0]
        return Partial(raw, whole_mask(raw, False))

    def rule_trips(self, node, act, i):
        """`trip/count`, `trip/while`, `trip/both`: iterate j = 0, 1, ...; stop at the count,
        else force the WHILE input's element j and stop when it is false."""
        loop = self.plan.loops[node.loop]
        count = None
        if loop.count is not None:
            count = yield from self.count_limit(loop, act)
        j = 0
        while True:
            if count is not None and j >= count:
                break
            if loop.while_ is not None:
                x = yield (loop.while_, act, j)
                value, mask = split(x)
                if mask is not None and not np.all(mask):
                    raise EvaluationError(f"WHILE input {loop.while_!r} of {loop.name}",
                                          "trip/while", f"its element {j} is undefined",
                                          "do not decide a loop on an undefined value")
                if not bool(np.asarray(value).reshape(-1)[0]):
                    break
            if j >= self.max_trips:
                raise FuelExhausted(loop.name, "trip/while",
                                    f"still running after max_trips={self.max_trips} trips",
                                    "raise max_trips, or check the loop's trip limits")
            j += 1
        self.ran(loop.name, act.path, j)
        if self.readings["A10"] == "eager":
            yield from self.force_everything(loop.name, act, j)
        return j

    def ran(self, loop, path, n):
        """Record that an activation of `loop` ran n trips (A5 "refuse": OpenVINO's reference
        implementation refuses zero trips)."""
        if n == 0 and self.plan.profile == "openvino" and self.readings["A5"] == "refuse":
            raise EvaluationError(loop, "openvino/loop5", "the loop runs zero trips",
                                  "reading A5=refuse refuses it; A5=execute runs it")
        self.trips[loop].append((tuple(ix for _, ix in path), n))

    def count_limit(self, loop, act):
        return self.count_value(loop, (yield (loop.count, act.parent, act.index)))

    def count_value(self, loop, c):
        """The COUNT limit's value; a negative count is read by A4 (None: no limit)."""
        value, mask = split(c)
        if mask is not None and not np.all(mask):
            raise EvaluationError(f"COUNT input {loop.count!r} of {loop.name}", "trip/count",
                                  "the count is undefined", "give the loop a defined count")
        count = int(np.asarray(value).reshape(-1)[0])
        if count >= 0:
            return count
        reading = self.readings["A4"]
        if reading == "by-profile":
            reading = {"tensorrt": "error", "onnx": "zero-trips", "openvino": "no-limit"}[
                self.plan.profile]
        if reading == "error":
            raise NegativeTripCount(f"COUNT input {loop.count!r} of {loop.name}", "trip/count",
                                    f"the count is {count}", "give a count >= 0")
        return 0 if reading == "zero-trips" else None

    def force_everything(self, loop, act, n):
        """A10 reading "eager": every stream of the loop on every trip that ran."""
        members = [k for k, nd in self.nodes.items() if nd.scope == loop and not isinstance(nd, Trips)]
        for j in range(n):
            for k in members:
                yield (k, act, j)

    def rule_loop_output(self, node, act, i):
        """`output/last`, `output/concat`, `output/reverse`."""
        if self.fast and act.loop is None:
            done = self.run_schedule(node, act, i)
            if done is not None:
                return done
        run = self.activation(node.loop, act, i)
        n = yield (f"#trips:{node.loop}", run, 0)
        if node.kind is LoopOutput.LAST_VALUE:
            return (yield (node.source, run, n))
        elements = []
        for j in range(n):
            elements.append((yield (node.source, run, j)))
        length = n
        if node.length is not None:
            length = int(np.asarray(split((yield (node.length, act, i)))[0]).reshape(-1)[0])
            if length < n:
                raise LengthTooShort(f"loop output {node.id!r} ({node!r})", "output/concat",
                                     f"length {length} is less than the {n} trips",
                                     "make the length at least the trip count")
        return self.stack(node, elements, length)

    # -- the fast path ------------------------------------------------------------------------
    def static_demand(self, loop):
        """The loop's demand analysis when the schedule can run it exactly, else None."""
        from .schedule import Demand, NotStatic
        if loop not in self._demands:
            demand = None
            if self.readings["A10"] == "lazy" and self.readings["A2"] == "guide" and all(
                    o in self.statically_needed() for o in self.plan.loops[loop].outputs):
                key = ("demand", loop)
                if key not in self.plan.derived:
                    try:
                        self.plan.derived[key] = Demand(self.plan, loop)
                    except NotStatic:
                        self.plan.derived[key] = None
                demand = self.plan.derived[key]
            self._demands[loop] = demand
        return self._demands[loop]

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

    def run_schedule(self, node, act, i):
        """Run the whole loop with its per-trip schedule and store every output of it."""
        from .schedule import Fallback, Schedule
        demand = self.static_demand(node.loop)
        if demand is None:
            return None
        schedule = Schedule(demand, self, act, i, record=self.fast_record)
        try:
            n = schedule.run()
            values = schedule.outputs(n)
        except Fallback:
            return None
        self.ran(node.loop, act.path, n)
        result = None
        for out_id, value in values.items():
            out = self.plan.nodes[out_id]
            if out.kind is not LoopOutput.LAST_VALUE:
                length = n
                if out.length is not None:
                    length = int(np.asarray(split(self.demand(out.length, act, i))[0]).reshape(-1)[0])
                    if length < n:
                        raise LengthTooShort(f"loop output {out_id!r} ({out!r})", "output/concat",
                                             f"length {length} is less than the {n} trips",
                                             "make the length at least the trip count")
                value = self.stack(out, value, length)
            if out_id == node.id:
                result = value
            else:
                self.store(out_id, act, i, value)
        return result

    def stack(self, node, elements, length):
        """Stack n elements on a new axis, post-padded to `length` with undefined values;
        REVERSE puts the values in reverse order (padding placement: A1)."""
        ty = node.type
        elem_shape = tuple(ty.shape[:node.axis] + ty.shape[node.axis + 1:])
        if elements:
            elem_shape = np.shape(split(elements[0])[0])
        elem_shape = tuple(0 if d is None else d for d in elem_shape)
        dtype = ty.dtype if isinstance(ty, TensorType) else np.float32
        values = [np.asarray(split(e)[0]) for e in elements]
        masks = [split(e)[1] for e in elements]
        n = len(values)
        out = filled((length,) + elem_shape, dtype)
        mask = np.zeros((length,) + elem_shape, bool)
        if n:
            out[:n] = np.stack(values)
            mask[:n] = True
            for j, m in enumerate(masks):
                if m is not None:
                    mask[j] = np.broadcast_to(m, elem_shape)
        if node.kind is LoopOutput.REVERSE:
            if self.readings["A1"] == "reverse-all":
                out, mask = out[::-1], mask[::-1]
            else:
                out[:n], mask[:n] = out[:n][::-1], mask[:n][::-1]
        out = np.ascontiguousarray(np.moveaxis(out, 0, node.axis))
        mask = np.ascontiguousarray(np.moveaxis(mask, 0, node.axis))
        return join(out, mask)


# ------------------------------------------------------------------------------------------
# Public entry points
# ------------------------------------------------------------------------------------------

def feed_dict(feeds) -> dict:
    """The caller's feeds as a new dict; anything but a mapping (or None) is refused."""
    if feeds is not None and not isinstance(feeds, Mapping):
        raise InputError("feeds", "stream/shape", f"is a {type(feeds).__name__}, not a mapping",
                         "pass a dict {input name: array}")
    return dict(feeds or {})


def check_feeds(plan: Plan, feeds) -> dict:
    feeds = feed_dict(feeds)
    out = {}
    for nid in plan.inputs:
        node = plan.nodes[nid]
        if nid not in feeds:
            raise InputError(f"input {nid!r}", "stream/shape", "no value was fed",
                             f"feed {nid!r} as a {node.type!r} array")
        value = feeds.pop(nid)
        ty = node.type
        if isinstance(ty, OpaqueType):
            out[nid] = value
            continue
        if not isinstance(value, (np.ndarray, np.generic)):
            try:
                value = np.asarray(value, dtype=ty.dtype)
            except (TypeError, ValueError) as exc:
                raise InputError(f"input {nid!r}", "stream/shape", f"cannot be read as "
                                 f"{ty!r}: {exc}", "feed a numpy array") from None
        value = np.array(value)
        if value.dtype != ty.dtype:
            raise InputError(f"input {nid!r}", "stream/shape",
                             f"was fed {value.dtype}, it is declared {ty.dtype}",
                             f"feed a {ty.dtype} array")
        if not ty.accepts(value):
            raise InputError(f"input {nid!r}", "stream/shape",
                             f"was fed shape {list(value.shape)}, it is declared {ty!r}",
                             "feed an array of the declared shape")
        value.flags.writeable = False
        out[nid] = value
    if feeds:
        raise InputError(f"inputs {sorted(feeds)}", "stream/shape", "are not inputs of the "
                         "network", f"the network's inputs are {list(plan.inputs)}")
    return out


def _plain(element):
    """A returned value: a fresh array whose undefined positions hold the dtype's fill."""
    value, mask = split(element)
    if isinstance(value, (np.ndarray, np.generic)):
        value = np.array(value)
        if mask is not None and not isinstance(mask, bool):
            value[~np.broadcast_to(mask, value.shape)] = fill_value(value.dtype)
        return value
    return value


def run(net, feeds, max_trips=DEFAULT_MAX_TRIPS, readings=None, trace=True) -> Evaluation:
    """Evaluate with the reference evaluator; also return the `defined` masks, the forcing
    trace and the trip counts."""
    plan = net if isinstance(net, Plan) else compile_network(net, readings)
    machine = Machine(plan, check_feeds(plan, feeds), max_trips, readings, trace=trace)
    outputs, defined = {}, {}
    for name, nid in plan.outputs:
        element = machine.demand(nid)
        value, mask = split(element)
        outputs[name] = _plain(element)
        defined[name] = (np.broadcast_to(mask, np.shape(value)).copy() if mask is not None
                         and not isinstance(mask, bool) else whole_mask(outputs[name], mask is None or mask))
    if machine.readings["A10"] == "eager":
        for nid, node in plan.nodes.items():
            if node.scope is None:
                machine.demand(nid)
    return Evaluation(outputs, defined, machine.trace or [], machine.trips, plan)


def evaluate(net, feeds, max_trips=DEFAULT_MAX_TRIPS, readings=None) -> dict:
    """Evaluate `net` on `feeds`: {output tensor name: numpy array}. Undefined positions hold
    their fill value (see `lazyloop.undefined`); `run` also says where they are."""
    plan = net if isinstance(net, Plan) else compile_network(net, readings)
    machine = Machine(plan, check_feeds(plan, feeds), max_trips, readings, fast=True)
    result = {}
    for name, nid in plan.outputs:
        result[name] = _plain(machine.demand(nid))
    if machine.readings["A10"] == "eager":
        for nid, node in plan.nodes.items():
            if node.scope is None:
                machine.demand(nid)
    return result
