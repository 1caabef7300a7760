"""The reference machine: forcing stream elements on demand (the definition made executable).

Every element is made by its kind's entry in the step table (`steps.py`), whose `force` is a
generator: it `yield`s the elements it needs, as ``(node id, activation, index)``, and returns
the element. The machine runs those generators on an explicit stack, so a chain of 10^6
recurrence elements never recurses in Python (`stream/order`), memoises each element the
first time it is computed (`stream/memo`) and, when asked, records each forcing in a trace.
Only what an output, a trip limit or a taken branch asks for is ever forced (`laziness/dead`).

An *activation* is one run of a loop: the loop, the activation it runs in, and the index of the
enclosing stream element it belongs to. The root activation holds everything outside loops,
as element 0.

`loop_output` -- how the element of a loop output is made from a run of its loop -- is the
one place another evaluator may do otherwise (the engine runs the loop on a per-trip
schedule); this package imports nothing of it.
"""
from __future__ import annotations

from typing import Optional

import attrs
import numpy as np

from ..ambiguity import resolve
from ..enums import LoopOutput
from ..errors import EvaluationError, LazyLoopError, StreamShapeChanged
from ..fuel import CLOCK_EVERY, DEFAULT_MAX_TRIPS, Fuel
from ..plan import LoopOut, Plan
from ..types import TensorType
from ..undefined import split
from . import rules
from .rules import Trips
from .steps import STEPS

FORCE = {kind: step.force for kind, step in STEPS.items()}  # each kind's reference step

#: how a run of a loop in mode "reference" was made (`Machine.paths`)
REFERENCE = 'reference: mode "reference"'

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
    Under TensorRT every type is exact, so every stream has one shape. Derived once per plan."""
    key = ("one shape",)
    if key not in plan.derived:
        plan.derived[key] = frozenset(n.source for n in plan.nodes.values() if isinstance(
            n, LoopOut) and n.kind is not LoopOutput.LAST_VALUE)
    return plan.derived[key]


def admitted_shapes(plan, nid) -> set:
    """Shapes an array of stream `nid`'s dtype was found to agree with its type: an array of
    one of them agrees too (`structure/shapes` depends on dtype and shape alone). Kept with
    the plan; the static shape of a static type from the start."""
    shapes = admitted_table(plan)
    found = shapes.get(nid)
    if found is None:
        ty = plan.nodes[nid].type
        found = shapes[nid] = {ty.shape} if ty.is_static else set()
    return found


def admitted_table(plan) -> dict:
    """{stream: its `admitted_shapes`}, for those asked so far, kept with the plan."""
    return plan.derived.setdefault(("admitted shapes",), {})


def with_trips(plan) -> dict:
    """The plan's nodes, and for each loop the pseudo-node of its trip count (`Trips`);
    derived once per plan."""
    key = ("with trips",)
    if key not in plan.derived:
        nodes = dict(plan.nodes)
        for name in plan.loops:
            nodes[f"#trips:{name}"] = Trips(f"#trips:{name}", name, None, name)
        plan.derived[key] = nodes
    return plan.derived[key]


class Machine:
    """The demand-driven evaluator of one plan on one set of feeds: the forcing stack, the
    memo of every activation and the trace; each element is made by its step (`steps.py`).
    `trace`: a list (or a sink with `append`) handed every forcing event, or None."""

    def __init__(self, plan: Plan, feeds, max_trips=DEFAULT_MAX_TRIPS, readings=None,
                 trace=None, max_seconds=None, keep_trips=True):
        self.prepare(plan, readings)
        self.begin(feeds, Fuel(max_trips, max_seconds), trace, keep_trips)

    def prepare(self, plan: Plan, readings):
        """What depends on the plan and the readings alone: the tables every evaluation of
        the plan reads and none writes (`for_feeds` shares them)."""
        self.plan = plan
        self.nodes = with_trips(plan)  # read only
        self.readings = resolve(readings)
        self.one_shape = one_shape_streams(plan)
        self.relaxed = plan.profile != "tensorrt"

    def begin(self, feeds, fuel: Fuel, trace=None, keep_trips=True):
        """What one evaluation holds: its feeds, fuel, trace, trip counts, paths and memo."""
        self.trace = trace
        # loop -> [(outer indices, n)] of every run, for `run`'s Evaluation (None: not kept,
        # so that `evaluate` holds nothing per run of an inner loop)
        self.trips = {name: [] for name in self.plan.loops} if keep_trips else None
        self.paths = {}  # loop -> the path its runs took (`ran`)
        self.root = Activation(None, None, 0)
        self.again(feeds, fuel)

    def again(self, feeds, fuel: Fuel):
        """What `begin` gives every evaluation, and all a machine that `finished` one needs
        to begin the next (its emptied memo, activations and paths kept): the feeds and the
        fuel."""
        self.feeds = feeds
        self.fuel = fuel
        self.max_trips = fuel.max_trips

    def finished(self):
        """After an evaluation that answered, kept no trace and no trip counts (a prepared
        one's): let go of everything it held -- feeds, fuel, the root memo and activations,
        the paths -- so that the machine holds nothing of the caller's and may begin another
        (`again`) as a new one would."""
        self.feeds = self.fuel = None
        root = self.root
        root.memo.clear()
        if root.children:
            root.children.clear()
        if self.paths:
            self.paths.clear()

    @classmethod
    def prepared(cls, plan: Plan, readings, *args):
        """A machine holding only what `prepare` makes (no evaluation): the template of
        `for_feeds`, made once per plan and readings by whoever evaluates the plan often."""
        machine = cls.__new__(cls)
        machine.prepare(plan, readings, *args)
        return machine

    def for_feeds(self, feeds, fuel: Fuel, trace=None, keep_trips=True):
        """A machine for one evaluation that shares this prepared one's tables (`prepare`)
        and holds its own state (`begin`): what the constructor makes, without making the
        tables again."""
        machine = self.__class__.__new__(self.__class__)
        machine.__dict__.update(self.__dict__)
        machine.begin(feeds, fuel, trace, keep_trips)
        return machine

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

    output_forcer = demand  # element 0 of a value outside loops, called as f(machine, nid)

    def start(self, nid, act, i):
        node = self.nodes[nid]
        return FORCE[type(node)](self, node, act, i)

    def store(self, nid, act, i, value, asker=None):
        node = self.nodes[nid]
        ty = node.type
        if self.relaxed and isinstance(ty, TensorType) and not (
                value.__class__ is np.ndarray and value.dtype == ty.dtype
                and value.shape in self.admitted(nid) and nid not in self.one_shape):
            earlier = act.memo.get(nid) if nid in self.one_shape else None
            first = np.shape(split(next(iter(earlier.values())))[0]) if earlier else None
            self.check_element(node, value, first)
            if value.__class__ is np.ndarray:
                self.admitted(nid).add(value.shape)
        if isinstance(value, np.ndarray):
            value.flags.writeable = False
        act.memo.setdefault(nid, {})[i] = value
        if self.trace is not None and not isinstance(node, Trips):
            self.trace.append(ForceEvent(act.loop, nid, i, tuple(ix for _, ix in act.path), asker))
        return value

    def admitted(self, nid) -> set:
        """`admitted_shapes` of stream `nid`."""
        return admitted_shapes(self.plan, nid)

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

    def ran(self, loop, path, n, how=REFERENCE):
        """Record that an activation of `loop` ran n trips (A5 "refuse": refused at zero),
        and `how`: "engine", or "reference: <why>" -- the first reason a run of the loop
        took the reference, which `paths` keeps over "engine"."""
        rules.zero_trips_refused(loop, n, self.plan.profile, self.readings["A5"])
        if self.trips is not None:
            self.trips[loop].append((tuple(ix for _, ix in path), n))
        if self.paths.get(loop, "engine") == "engine":
            self.paths[loop] = how

    def force_everything(self, loop, act, n):
        """A10 reading "eager": every stream of the loop on every trip that ran."""
        members = [k for k, nd in self.nodes.items() if nd.scope == loop and not isinstance(nd, Trips)]
        for j in range(n):
            for k in members:
                yield (k, act, j)

    # -- how a loop output is made: the one extension point -------------------------------
    def loop_output(self, node, act, i):
        """`output/last`, `output/concat`, `output/reverse`: element i of a loop output is
        made by the run of its loop for element i of the enclosing scope -- its trip count
        n, then X_n (LAST_VALUE) or X_0 .. X_{n-1} stacked to the output's length."""
        run = self.activation(node.loop, act, i)
        n = yield (f"#trips:{node.loop}", run, 0)
        if node.kind is LoopOutput.LAST_VALUE:
            return (yield (node.source, run, n))
        elements = []
        for j in range(n):
            elements.append((yield (node.source, run, j)))
        length = None
        if node.length is not None:
            length = yield (node.length, act, i)
        return self.stacked(node, elements, n, lambda: length)

    def stacked(self, node, elements, n, length):
        """A CONCATENATE/REVERSE output of n elements: its length checked, then stacked and
        padded (`length()` reads the length input's element)."""
        return rules.stack(node, elements, rules.output_length(node, n, length),
                           self.readings["A1"])
