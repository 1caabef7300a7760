"""Evaluate ONNX models with lazyloop's own loops (rules onnx/loop, onnx/scan9, onnx/scan8).

    import lazyloop.onnx
    outputs = lazyloop.onnx.evaluate(model, {"x": x})   # {graph output name: value}

Loop, Scan and If are lowered onto the core's streams (spec/30-onnx-lowering.md); every other
node runs ONNX's own reference kernel, bound once per node (`onnx/node`). Values are numpy
arrays, Python lists for sequences and None for empty optionals.
"""
from __future__ import annotations

from typing import Dict

import attrs
import numpy as np

from ..core.evaluate import DEFAULT_MAX_TRIPS, feed_dict
from ..core.evaluate import evaluate as _core_evaluate
from ..core.evaluate import run as _core_run
from . import reuse
from .lowering import LoweredModel, load_model, lower_model


@attrs.frozen
class Lowered:
    """A model lowered onto an `ll.Network` (profile "onnx"), with the maps across the
    boundary: user feeds -> core feeds, core outputs -> user outputs."""

    network: object
    model_inputs: tuple
    model_outputs: tuple
    _lowered: LoweredModel = attrs.field(repr=False)

    def core_feeds(self, user_feeds) -> dict:
        return _core_feeds(self._lowered, user_feeds)

    def user_outputs(self, core_outputs) -> dict:
        return {name: core_outputs[t.name] for name, t in self._lowered.outputs}


def lower(model, readings=None) -> Lowered:
    """Lower `model` (a ModelProto, serialized bytes or a path) onto a core network."""
    low = lower_model(model, readings)
    return Lowered(low.network, tuple(low.inputs), tuple(n for n, _ in low.outputs), low)


def evaluate(model, feeds: Dict[str, object], max_trips: int = DEFAULT_MAX_TRIPS,
             readings=None, max_seconds=None) -> Dict[str, object]:
    """{graph output name: value}, in graph output order. `model` is a ModelProto, bytes, a
    path, or a `Lowered` (whose frontend readings were fixed by `lower`; `readings` None
    keeps the ones it was lowered with). `max_trips` is the fuel of every loop, `max_seconds`
    an optional wall-time budget (`lazyloop.core.fuel`)."""
    lowered, readings = _lowered(model, readings)
    core = _core_evaluate(lowered.network, lowered.core_feeds(feeds), max_trips,
                          _core_readings(readings), max_seconds=max_seconds)
    return lowered.user_outputs(core)


def _lowered(model, readings):
    if isinstance(model, Lowered):
        return model, (model._lowered.lowering.readings_given if readings is None else readings)
    return reuse.lowered(model, readings, lower), readings  # lowered once, kept for reuse


@attrs.frozen
class OnnxRun:
    """outputs and `defined` masks (True where a value is defined) keyed by graph output name,
    and the core's Evaluation (trace, trip counts)."""

    outputs: dict
    defined: dict
    evaluation: object


def run(model, feeds: Dict[str, object], max_trips: int = DEFAULT_MAX_TRIPS,
        readings=None, trace: bool = False, max_seconds=None) -> OnnxRun:
    """As `evaluate`, also saying which positions are defined (Scan 8 padding is not)."""
    lowered, readings = _lowered(model, readings)
    ev = _core_run(lowered.network, lowered.core_feeds(feeds), max_trips,
                   _core_readings(readings), trace=trace, max_seconds=max_seconds)
    return OnnxRun(lowered.user_outputs(ev.outputs), lowered.user_outputs(ev.defined), ev)


def _core_readings(readings):
    """The readings the core's register knows (the register holds the frontend's A11-A16 too)."""
    from .lowering import split_readings
    return split_readings(readings)[0]


def _as_value(value, ty):
    """A feed as the core takes it: protobuf values (TensorProto, SequenceProto,
    OptionalProto) as numpy/lists/None; unicode arrays for string inputs as object arrays."""
    import onnx
    from onnx import numpy_helper

    from ..core.types import TensorType

    if isinstance(value, onnx.TensorProto):
        value = numpy_helper.to_array(value)
    elif isinstance(value, onnx.SequenceProto):
        value = numpy_helper.to_list(value)
    elif isinstance(value, onnx.OptionalProto):
        value = numpy_helper.to_optional(value)
    if (isinstance(value, np.ndarray) and value.dtype.kind == "U" and isinstance(ty, TensorType)
            and ty.dtype == object):
        value = value.astype(object)
    return value


def _core_feeds(low: LoweredModel, user_feeds) -> dict:
    from ..core.errors import InputError

    user_feeds = feed_dict(user_feeds)
    feeds = {}
    for name, t in low.inputs.items():
        if name in user_feeds:
            feeds[t.name] = _as_value(user_feeds.pop(name), t.type)
        elif name in low.defaults:
            feeds[t.name] = low.defaults[name]
        else:
            raise InputError(f"input {name!r}", "onnx/graph", "no value was fed",
                             f"feed {name!r} as {t.type!r}")
    if user_feeds:
        raise InputError(f"inputs {sorted(user_feeds)}", "onnx/graph",
                         "are not inputs of the model", f"its inputs are {list(low.inputs)}")
    return feeds


__all__ = ["evaluate", "run", "lower", "Lowered", "OnnxRun", "load_model"]
