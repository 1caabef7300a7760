"""Evaluate ONNX models with lazyloop's own loops (rules onnx/loop, onnx/scan9, onnx/scan8).

    import lazyloop.onnx
    outputs = lazyloop.onnx.evaluate(model, {"x": x})   # {graph output name: value}

Loop, Scan and If are lowered onto the core's streams (spec/30-onnx-lowering.md); every other
node runs ONNX's own reference kernel, bound once per node (`onnx/node`). Values are numpy
arrays, Python lists for sequences and None for empty optionals.
"""
from __future__ import annotations

from typing import Dict, Optional

from ..core.fuel import DEFAULT_MAX_TRIPS
from ..core.lowered import Lowered, LoweredRun
from . import reuse
from .lowering import load_model, lower_model

#: `run`'s answer (outputs, defined masks, the core's Evaluation): one shape for every frontend
OnnxRun = LoweredRun


def lower(model, readings=None) -> Lowered:
    """Lower `model` (a ModelProto, serialized bytes or a path) onto a core network: a
    `Lowered` (`lazyloop.core.lowered`), which evaluates it too."""
    return lower_model(model, readings)


def evaluate(model, feeds: Dict[str, object], max_trips: int = DEFAULT_MAX_TRIPS,
             readings=None, max_seconds=None, mode: str = "fast") -> Dict[str, object]:
    """{graph output name: value}, in graph output order. `model` is a ModelProto, bytes, a
    path, or a `Lowered` (whose frontend readings were fixed by `lower`; `readings` None
    keeps the ones it was lowered with). `max_trips` is the fuel of every loop, `max_seconds`
    an optional wall-time budget (`lazyloop.core.fuel`), `mode` the evaluator ("fast";
    `lazyloop.core.evaluate.MODES`)."""
    if model.__class__ is Lowered:  # the usual call: a model lowered once
        return model.evaluate(feeds, max_trips, readings, max_seconds, mode)
    return _lowered(model, readings).evaluate(feeds, max_trips, readings, max_seconds, mode)


def run(model, feeds: Dict[str, object], max_trips: int = DEFAULT_MAX_TRIPS,
        readings=None, trace=False, max_seconds=None, mode: Optional[str] = None) -> LoweredRun:
    """As `evaluate`, also saying which positions are defined (Scan 8 padding is not); with
    `trace`, the reference evaluator's forcing trace (mode "reference", the default then;
    without a trace the default mode is "fast")."""
    return _lowered(model, readings).run(feeds, max_trips, readings, trace, max_seconds, mode)


def _lowered(model, readings) -> Lowered:
    if isinstance(model, Lowered):
        return model
    return reuse.lowered(model, readings, lower)  # lowered once, kept for reuse


__all__ = ["evaluate", "run", "lower", "Lowered", "OnnxRun", "load_model"]
