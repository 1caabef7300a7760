"""The entry points, `evaluate` (outputs only) and `run` (also the defined masks, the
forcing trace and the trip counts), and the one place that chooses an evaluator: the `mode`.

* ``"reference"`` -- the reference machine (`lazyloop.core.reference`): the definition made
  executable, the only mode that records a forcing trace;
* ``"fast"`` -- the engine (`lazyloop.core.engine`): loops on per-trip schedules, their
  ordinary trips compiled once a run reaches `HOT_TRIPS`, map streams batched;
* ``"schedule"`` -- the engine's schedules step by step: nothing compiled, nothing batched;
* ``"compiled"`` -- the engine with every scheduled loop compiled from its first trip.

Every mode gives the same outputs, masks and errors, except where spec/14 says they may
differ (`laziness/modes`). The engine is imported only when a mode asks for it: the reference
stands alone. The checking of feeds is in `feeds`; `evaluate_checked` evaluates a plan on
feeds a caller checked already (`lazyloop.core.lowered`).
"""
from __future__ import annotations

import copy
from collections import deque
from typing import Dict, List, Optional

import attrs
import numpy as np

from .ambiguity import resolve
from .errors import InputError
from .feeds import check_feeds, feed_dict
from .fuel import DEFAULT_MAX_TRIPS, Fuel
from .network import Network
from .plan import Plan, compile_network
from .reference.machine import Activation, ForceEvent, Machine, one_shape_streams
from .reference.rules import Trips
from .undefined import fill_value, split, whole_mask

#: every mode: the reference machine, and the engine's (`lazyloop.core.engine.OPTIONS`)
MODES = ("reference", "fast", "schedule", "compiled")


@attrs.frozen
class Evaluation:
    """`run`'s answer. `paths`: for each loop that ran, which evaluator made its runs --
    "engine" (its per-trip schedule), or "reference: <why>", the first reason a run of it
    took the reference machine (in mode "reference": `reference: mode "reference"`); a
    loop nothing needed ran no run and is absent (`laziness/modes`)."""
    outputs: Dict[str, object]
    defined: Dict[str, object]
    trace: Optional[List[ForceEvent]]  # None: no trace was recorded (not the reference)
    trips: Dict[str, list]  # loop name -> [(activation path, n), ...]
    plan: Plan
    mode: str = "reference"
    paths: Dict[str, str] = attrs.field(factory=dict)


def _plain(element):
    """A returned value: a fresh array whose undefined positions hold the dtype's fill; a list
    (an opaque value such as an ONNX sequence) is a fresh list of fresh values."""
    value, mask = split(element)
    if type(value) is list:
        return [_plain(v) for v in value]
    if isinstance(value, (np.ndarray, np.generic)):
        value = np.array(value)
        if mask is not None and not isinstance(mask, bool):
            value[~np.broadcast_to(mask, value.shape)] = fill_value(value.dtype)
        return value
    return value


def plan_of(net, readings) -> Plan:
    """The compiled plan of a Network (or a Plan as given); anything else is refused."""
    if isinstance(net, Plan):
        return net
    if not isinstance(net, Network):
        raise InputError("net", "stream/shape", f"is a {type(net).__name__}, not a network",
                         "pass a lazyloop Network (or its compiled Plan)")
    return compile_network(net, readings)


def trace_option(trace):
    """True: every forcing event; False: none; an int N: the last N events; an object with
    `append`: a sink given every event in order, keeping what it wants (`stream/order`)."""
    if isinstance(trace, bool):
        return trace
    if isinstance(trace, int) and trace > 0:
        return deque(maxlen=trace)
    if callable(getattr(trace, "append", None)) and not isinstance(trace, (str, bytes)):
        return trace
    raise InputError("trace", "stream/order", f"is {trace!r}", "pass True, False, a "
                     "positive int (keep the last that many events) or a sink with append")


def mode_option(mode, traced=False) -> str:
    """A mode's name, checked: one of `MODES`; a trace only in "reference" (`laziness/modes`)."""
    if not isinstance(mode, str) or mode not in MODES:
        raise InputError("mode", "laziness/modes", f"is {mode!r}, not a mode",
                         f"pass one of {', '.join(map(repr, MODES))}")
    if traced and mode != "reference":
        raise InputError("mode", "laziness/modes", f"is {mode!r}, and a trace was asked for: "
                         "only the reference evaluator records one",
                         "pass mode=\"reference\" with a trace, or trace=False")
    return mode


def machine_for(mode, plan, feeds, max_trips, readings, max_seconds, keep_trips=True,
                trace=None):
    """The evaluator of `mode` for one evaluation (a trace only for "reference")."""
    if mode == "reference":
        return Machine(plan, feeds, max_trips, readings, trace, max_seconds, keep_trips)
    engine, options = engine_of(mode)
    return engine(plan, feeds, max_trips, readings, options, max_seconds, keep_trips)


_ENGINE = {}  # mode -> (EngineMachine, its Options), filled when a mode first asks


def engine_of(mode):
    """The engine's machine and the options of `mode`, the engine loaded when a mode first
    asks for it (the reference stands alone); kept for the next evaluation."""
    found = _ENGINE.get(mode)
    if found is None:
        from .engine import OPTIONS, EngineMachine
        found = _ENGINE[mode] = (EngineMachine, OPTIONS[mode])
    return found


def run(net, feeds, max_trips=DEFAULT_MAX_TRIPS, readings=None, trace=True,
        max_seconds=None, mode=None) -> Evaluation:
    """Evaluate; also return the `defined` masks, the trip counts and, when `trace`, the
    forcing trace of the reference evaluator (True: every event; an int N: the last N; a
    sink with `append`: each event handed to it, and `trace` is then `list(sink)`).
    Events are small (stream, index, activation, asker), never element copies; but a traced
    run is the reference evaluator, which memoises every element it forces. `mode` chooses
    the evaluator (`MODES`); by default "reference" with a trace, "fast" without one
    (`trace=False`), which keeps only the elements demand still needs, and whose
    Evaluation's `trace` is None. `max_seconds` is an optional wall-time budget."""
    readings = resolve(readings)  # once for the whole evaluation
    plan = plan_of(net, readings)
    kept = trace_option(trace)
    traced = kept is not False
    mode = mode_option(("reference" if traced else "fast") if mode is None else mode, traced)
    sink = None if not traced else [] if kept is True else kept
    machine = machine_for(mode, plan, check_feeds(plan, feeds), max_trips, readings,
                          max_seconds, trace=sink)
    outputs, defined = {}, {}
    for name, nid in plan.outputs:
        element = machine.demand(nid)
        value, mask = split(element)
        outputs[name] = _plain(element)
        defined[name] = (np.broadcast_to(mask, np.shape(value)).copy() if mask is not None
                         and not isinstance(mask, bool) else whole_mask(outputs[name], mask is None or mask))
    eager(machine, plan)
    return Evaluation(outputs, defined, None if sink is None else list(sink), machine.trips,
                      plan, mode, {loop: machine.paths[loop] for loop in plan.loops
                                   if loop in machine.paths})


def eager(machine, plan):
    """A10 "eager": after the outputs, every value outside loops is forced too."""
    if machine.readings["A10"] == "eager":
        for nid, node in plan.nodes.items():
            if node.scope is None:
                machine.demand(nid)


def evaluate(net, feeds, max_trips=DEFAULT_MAX_TRIPS, readings=None, max_seconds=None,
             mode="fast") -> dict:
    """Evaluate `net` on `feeds`: {output tensor name: numpy array}. Undefined positions hold
    their fill value (see `lazyloop.undefined`); `run` also says where they are. `max_trips`
    is every loop's fuel (`lazyloop.core.fuel`); `max_seconds` an optional wall-time budget;
    `mode` the evaluator (`MODES`, "fast" by default)."""
    readings = resolve(readings)  # once for the whole evaluation
    plan = plan_of(net, readings)
    mode = mode_option(mode)
    return evaluate_checked(plan, check_feeds(plan, feeds), max_trips, readings, max_seconds,
                            mode)


def evaluate_checked(plan, feeds, max_trips, readings, max_seconds, mode) -> dict:
    """`evaluate` of a plan on feeds as `check_feeds` answers them (`CheckedFeeds`), the
    readings resolved: what a caller that checked the feeds itself calls."""
    return prepared(plan, readings, mode)(feeds, max_trips, max_seconds)


def prepared(plan, readings, mode, named=None) -> "Prepared":
    """The plan's `Prepared` evaluation in `mode` under `readings` (resolved), made when
    first asked and kept with the plan; `named` pairs (name, output id) name the outputs
    otherwise than the plan's (a `Prepared` sharing the kept one's template)."""
    kept = plan.derived.setdefault(("prepared",), {})
    found = kept.get(mode_option(mode))
    if found is None or found.readings is not readings and found.readings != readings:
        found = kept[mode] = Prepared(plan, readings, mode)
    return found if named is None else found.named(named)


SPARES = 2  # machines a prepared evaluation keeps for later calls (`Prepared.spare`)


class Prepared:
    """One plan's evaluation on checked feeds, set up once (issue 25, "plan once, run
    many"): the evaluator of `mode` made as a template whose tables -- what depends on the
    plan and the readings alone -- every evaluation shares (`Machine.for_feeds`), the outputs
    to demand, whether A10 "eager" forces the rest, and the default fuel (which holds no
    state without a wall-time budget, so every such evaluation shares it). Calling it
    evaluates: {output name: value}, as `evaluate` answers."""

    def __init__(self, plan, readings, mode):
        mode = mode_option(mode)
        if mode == "reference":
            template = Machine.prepared(plan, readings)
        else:
            engine, options = engine_of(mode)
            template = engine.prepared(plan, readings, options)
        self.plan, self.readings, self.mode = plan, readings, mode
        self.template = template
        self.outputs = plan.outputs
        self.eager = template.readings["A10"] == "eager"
        self.force = type(template).output_forcer  # f(machine, output id) -> its value
        self.fuel = Fuel()
        self.spares = []  # machines of evaluations that answered, emptied (`machine`)

    def __repr__(self):
        return f"prepared(<plan of {[name for name, _ in self.outputs]}>, {self.mode!r})"

    def named(self, named) -> "Prepared":
        """The same evaluation, its outputs the pairs (name, output id) `named`."""
        other = copy.copy(self)
        other.outputs = tuple(named)
        return other

    def __call__(self, feeds, max_trips=DEFAULT_MAX_TRIPS, max_seconds=None) -> dict:
        fuel = self.fuel
        if max_seconds is not None or max_trips.__class__ is not int \
                or max_trips != fuel.max_trips:
            fuel = Fuel(max_trips, max_seconds)  # checks them
        machine = self.machine(feeds, fuel)
        result = {}
        ndarray, force = np.ndarray, self.force
        for name, nid in self.outputs:
            element = force(machine, nid)
            result[name] = np.array(element) if element.__class__ is ndarray else _plain(element)
        if self.eager:
            eager(machine, self.plan)
        self.spare(machine)
        return result

    def machine(self, feeds, fuel):
        """The evaluator of one evaluation: a spare one begun `again`, else one made from
        the template (`for_feeds`). Each call has its own: a call made while another runs
        (from another thread, or from inside a kernel) takes another, or a new one."""
        try:
            machine = self.spares.pop()
        except IndexError:
            return self.template.for_feeds(feeds, fuel, None, False)
        machine.again(feeds, fuel)
        return machine

    def spare(self, machine):
        """Keep the machine of an evaluation that answered for a later one, emptied of
        everything it held (`Machine.finished`); at most `SPARES`. A machine an error
        stopped is never kept: what it held half-way goes with it."""
        machine.finished()
        if len(self.spares) < SPARES:
            self.spares.append(machine)


__all__ = ["evaluate", "evaluate_checked", "prepared", "Prepared", "run", "Evaluation",
           "ForceEvent", "Machine", "Activation", "Trips", "MODES", "one_shape_streams",
           "check_feeds", "feed_dict", "compile_network", "DEFAULT_MAX_TRIPS"]
