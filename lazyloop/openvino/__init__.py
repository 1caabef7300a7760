"""Evaluate OpenVINO models with lazyloop's loop semantics.

    import lazyloop.openvino as llov
    outputs = llov.evaluate(model, {"X": x})     # model: openvino.Model or an IR .xml path

The model is lowered onto a core network of profile "openvino" (`lower`): Parameters become
inputs, Constants constants, Loop-5 and TensorIterator-1 core loops (rule `openvino/loop5`),
and every other op a function layer that runs OpenVINO's own per-node evaluation
(`openvino/node`). spec/40-openvino-lowering.md is the prose of every rule.

Readings: the core's ambiguity IDs (A1-A10, A40), the kernels' (A30) and this frontend's
(A20-A24, see `lazyloop.openvino.register`) are selected together, e.g.
``readings={"A3": "error", "A20": "exclusive"}``.
"""
from __future__ import annotations

import os
from typing import Mapping, Optional

from ..core.errors import ModelError, UnsupportedError
from ..core.fuel import DEFAULT_MAX_TRIPS
from ..core.lowered import Lowered, LoweredRun

#: `run`'s answer (outputs, defined masks, the core's Evaluation): one shape for every frontend
Run = LoweredRun


def _lowering():
    try:
        import openvino  # noqa: F401
    except ImportError as exc:  # pragma: no cover -- exercised only without OpenVINO
        raise UnsupportedError("lazyloop.openvino", "openvino/model",
                               f"OpenVINO is not installed ({exc})",
                               "install lazyloop[openvino]") from None
    from . import lowering
    return lowering


def read_model(model):
    """An `openvino.Model` as is, or a path to IR (.xml with its .bin) read by OpenVINO's own
    reader (negative port-map axes too: `lazyloop.openvino.ir`)."""
    import openvino as ov
    if isinstance(model, ov.Model):
        return model
    if isinstance(model, (str, os.PathLike)):
        try:
            from .ir import read_ir
            return read_ir(os.fspath(model))
        except Exception as exc:
            raise ModelError(f"model {os.fspath(model)!r}", "openvino/model",
                             f"OpenVINO could not read it: {str(exc).strip()[:300]}",
                             "give an IR .xml path (with its .bin) or an openvino.Model") from None
    raise ModelError(f"model {type(model).__name__}", "openvino/model",
                     "is neither an openvino.Model nor a path", "pass an openvino.Model or a path")


def lower(model, readings: Optional[Mapping[str, str]] = None) -> Lowered:
    """Lower a model onto an `ll.Network` (profile "openvino"): a `Lowered`
    (`lazyloop.core.lowered`) with `.network`, `.core_feeds(user_feeds)`,
    `.user_outputs(core_outputs)`, and `evaluate`/`run` of its own."""
    if isinstance(model, Lowered):
        return model
    return _lowering().lower_model(read_model(model).clone(), readings)


def evaluate(model, feeds: Mapping, max_trips: int = DEFAULT_MAX_TRIPS,
             readings: Optional[Mapping[str, str]] = None, max_seconds=None,
             mode: str = "fast") -> dict:
    """{output tensor name: numpy array}, one entry per model output in model output order.
    Undefined positions (A3) hold their fill value; `run` says where they are. `model`: an
    `openvino.Model`, an IR path, or a `Lowered`; `mode` the evaluator ("fast";
    `lazyloop.core.evaluate.MODES`)."""
    return lower(model, readings).evaluate(feeds, max_trips, readings, max_seconds, mode)


def run(model, feeds: Mapping, max_trips: int = DEFAULT_MAX_TRIPS,
        readings: Optional[Mapping[str, str]] = None, trace=False, max_seconds=None,
        mode: Optional[str] = None) -> LoweredRun:
    """As `evaluate`, also with the `defined` masks and the core's evaluation (its forcing
    trace when `trace`: mode "reference"), as `lazyloop.onnx.run` does."""
    return lower(model, readings).run(feeds, max_trips, readings, trace, max_seconds, mode)


__all__ = ["evaluate", "run", "lower", "read_model", "Lowered", "Run", "DEFAULT_MAX_TRIPS"]
