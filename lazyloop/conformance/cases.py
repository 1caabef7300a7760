"""The conformance cases, as data.

Each case is a small loop program tied to rule IDs, with its inputs and its expected outputs
worked out by hand and written here literally (never computed by lazyloop). `U` marks an
undefined position (CONCATENATE padding, a last value after zero trips): any value is right
there. Cases whose answer depends on a reading of the ambiguity register list its IDs.

Core cases are builders written with TensorRT's network-definition calls only, so
``case.build(trt_network, api=tensorrt)`` builds the same network on TensorRT; they are
exported to ONNX or OpenVINO for other backends (`lazyloop.onnx.export`, `lazyloop.openvino.export`). Dialect cases are
written directly as ONNX or OpenVINO models (recipes of `lazyloop.strategies.dialects`) with
the inputs given here.

The machinery lives in `registry`, the cases in `core_cases` and `dialect_cases`; importing
this module registers all of them (core cases first) and re-exports the public names.
"""
from __future__ import annotations

from . import core_cases, dialect_cases  # noqa: F401  (registering the cases fills CASES)
from .registry import CASES, Case, Expected, U, case, dialect_case  # noqa: F401

__all__ = ["CASES", "Case", "Expected", "U"]
