"""The reference evaluator's entry points: `evaluate` (outputs only, letting loops that the
schedule can run take the fast path) and `run` (also the defined masks, the forcing trace and
the trip counts). The machine that forces elements is in `machine`, its element rules in
`element_rules`, the checking of feeds in `feeds`; their public names are re-exported here.
"""
from __future__ import annotations

from typing import Dict, List

import attrs
import numpy as np

from .element_rules import Trips
from .feeds import check_feeds, feed_dict
from .machine import DEFAULT_MAX_TRIPS, Activation, ForceEvent, Machine, one_shape_streams
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


__all__ = ["evaluate", "run", "Evaluation", "ForceEvent", "Machine", "Activation", "Trips",
           "one_shape_streams", "check_feeds", "feed_dict", "compile_network", "DEFAULT_MAX_TRIPS"]
