"""Evaluate OpenVINO models with lazyloop's loop semantics.

    import lazyloop.openvino as llov
    outputs = llov.evaluate(model, {"X": x})     # model: openvino.Model or an IR .xml path

The model is lowered onto a core network of profile "openvino" (`lower`): Parameters become
inputs, Constants constants, Loop-5 and TensorIterator-1 core loops (rule `openvino/loop5`),
and every other op a function layer that runs OpenVINO's own per-node evaluation
(`openvino/node`). spec/40-openvino-lowering.md is the prose of every rule.

Readings: the core's ambiguity IDs (A1-A10, A30) and this frontend's (A20-A24, see
`lazyloop.openvino.register`) are selected together, e.g.
``readings={"A3": "error", "A20": "exclusive"}``.
"""
from __future__ import annotations

import os
from typing import Mapping, Optional

import attrs

from ..core.errors import ModelError, UnsupportedError

from ..core.fuel import DEFAULT_MAX_TRIPS


def _frontend():
    try:
        import openvino  # noqa: F401
    except ImportError as exc:  # pragma: no cover -- exercised only without OpenVINO
        raise UnsupportedError("lazyloop.openvino", "openvino/model",
                               f"OpenVINO is not installed ({exc})",
                               "install lazyloop[openvino]") from None
    from . import lowering, register
    return lowering, register


def read_model(model):
    """An `openvino.Model` as is, or a path to IR (.xml with its .bin) read by OpenVINO's own
    reader."""
    import openvino as ov
    if isinstance(model, ov.Model):
        return model
    if isinstance(model, (str, os.PathLike)):
        try:
            return ov.Core().read_model(os.fspath(model))
        except Exception as exc:
            raise ModelError(f"model {os.fspath(model)!r}", "openvino/model",
                             f"OpenVINO could not read it: {str(exc).strip()[:300]}",
                             "give an IR .xml path (with its .bin) or an openvino.Model") from None
    raise ModelError(f"model {type(model).__name__}", "openvino/model",
                     "is neither an openvino.Model nor a path", "pass an openvino.Model or a path")


def lower(model, readings: Optional[Mapping[str, str]] = None):
    """Lower a model onto an `ll.Network` (profile "openvino"). Returns a `Lowered` with
    `.network`, `.core_feeds(user_feeds)` and `.user_outputs(core_outputs)`."""
    lowering, register = _frontend()
    _, frontend = register.split_readings(readings)
    return lowering.lower_model(read_model(model).clone(), frontend)


@attrs.frozen
class Run:
    """`run`'s answer: outputs and defined masks keyed by the model's output names, and the
    core's `Evaluation` (trace, trip counts) behind them."""
    outputs: dict
    defined: dict
    evaluation: object


def evaluate(model, feeds: Mapping, max_trips: int = DEFAULT_MAX_TRIPS,
             readings: Optional[Mapping[str, str]] = None, max_seconds=None) -> dict:
    """{output tensor name: numpy array}, one entry per model output in model output order.
    Undefined positions (A3) hold their fill value; `run` says where they are."""
    from ..core.evaluate import evaluate as core_evaluate
    _, register = _frontend()
    core_readings, _ = register.split_readings(readings)
    lowered = lower(model, readings)
    out = core_evaluate(lowered.network, lowered.core_feeds(feeds), max_trips=max_trips,
                        readings=core_readings, max_seconds=max_seconds)
    return lowered.user_outputs(out)


def run(model, feeds: Mapping, max_trips: int = DEFAULT_MAX_TRIPS,
        readings: Optional[Mapping[str, str]] = None, trace: bool = False,
        max_seconds=None) -> Run:
    """As `evaluate`, also with the `defined` masks and the core's evaluation (its forcing
    trace when `trace`), as `lazyloop.onnx.run` does."""
    from ..core.evaluate import run as core_run
    _, register = _frontend()
    core_readings, _ = register.split_readings(readings)
    lowered = lower(model, readings)
    ev = core_run(lowered.network, lowered.core_feeds(feeds), max_trips=max_trips,
                  readings=core_readings, trace=trace, max_seconds=max_seconds)
    return Run(lowered.user_outputs(ev.outputs), lowered.user_outputs(ev.defined), ev)


__all__ = ["evaluate", "run", "lower", "read_model", "Run", "DEFAULT_MAX_TRIPS"]
