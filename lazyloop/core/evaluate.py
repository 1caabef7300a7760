"""The reference evaluator's entry points: `evaluate` (outputs only, letting loops that the
schedule can run take the fast path) and `run` (also the defined masks, the forcing trace and
the trip counts). The machine that forces elements is in `machine`, its element rules in
`element_rules`, the checking of feeds in `feeds`; their public names are re-exported here.
"""
from __future__ import annotations

from collections import deque
from typing import Dict, List

import attrs
import numpy as np

from .reference.rules import Trips
from .errors import InputError
from .feeds import check_feeds, feed_dict
from .reference.machine import DEFAULT_MAX_TRIPS, Activation, ForceEvent, Machine, one_shape_streams
from .plan import Plan, compile_network
from .undefined import fill_value, split, whole_mask


@attrs.frozen
class Evaluation:
    outputs: Dict[str, object]
    defined: Dict[str, object]
    trace: List[ForceEvent]
    trips: Dict[str, list]  # loop name -> [(activation path, n), ...]
    plan: Plan


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
    from .network import Network
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


def run(net, feeds, max_trips=DEFAULT_MAX_TRIPS, readings=None, trace=True,
        max_seconds=None) -> Evaluation:
    """Evaluate; also return the `defined` masks, the trip counts and, when `trace`, the
    forcing trace of the reference evaluator (True: every event; an int N: the last N; a
    sink with `append`: each event handed to it, and `trace` is then `list(sink)`).
    Events are small (stream, index, activation, asker), never element copies; but a traced
    run is the reference evaluator, which memoises every element it forces. Without a trace
    (`trace=False`) loops the schedule can run take the fast path, as in `evaluate`, keeping
    only the elements demand still needs. `max_seconds` is an optional wall-time budget."""
    plan = plan_of(net, readings)
    kept = trace_option(trace)
    traced = kept is not False
    machine = Machine(plan, check_feeds(plan, feeds), max_trips, readings, trace=traced,
                      fast=not traced, max_seconds=max_seconds)
    if kept is not True and kept is not False:  # the last N events, or the caller's sink
        machine.trace = kept
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
    return Evaluation(outputs, defined, list(machine.trace or []), machine.trips, plan)


def evaluate(net, feeds, max_trips=DEFAULT_MAX_TRIPS, readings=None, max_seconds=None) -> dict:
    """Evaluate `net` on `feeds`: {output tensor name: numpy array}. Undefined positions hold
    their fill value (see `lazyloop.undefined`); `run` also says where they are. `max_trips`
    is every loop's fuel (`lazyloop.core.fuel`); `max_seconds` an optional wall-time budget."""
    plan = plan_of(net, readings)
    machine = Machine(plan, check_feeds(plan, feeds), max_trips, readings, fast=True,
                      max_seconds=max_seconds, keep_trips=False)
    result = {}
    for name, nid in plan.outputs:
        result[name] = _plain(machine.demand(nid))
    if machine.readings["A10"] == "eager":
        for nid, node in plan.nodes.items():
            if node.scope is None:
                machine.demand(nid)
    return result


__all__ = ["evaluate", "run", "Evaluation", "ForceEvent", "Machine", "Activation", "Trips",
           "one_shape_streams", "check_feeds", "feed_dict", "compile_network", "DEFAULT_MAX_TRIPS"]
