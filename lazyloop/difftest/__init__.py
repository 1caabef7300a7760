"""Differential testing: lazyloop is the oracle, a backend is the system under test.

    import lazyloop.difftest as dt
    report = dt.check(dt.backend("onnxruntime"), max_examples=200, seed=0)
    report.examples, report.disagreements, report.unsupported, report.coverage
    print(report.summary())

A *backend* is any object with `name`, optionally `format` ("onnx", the default, or
"openvino") or `formats` (every format it takes), and `run(model, feeds) -> {output name:
value}`. To say "I refuse this model" (it does not load or compile) its `run` raises
`Unsupported`; any other exception is a failure while running an accepted model.

What is generated (hypothesis, seeded): core programs (`lazyloop.strategies.networks`)
exported to the backend's format (`lazyloop.onnx.export`, `lazyloop.openvino.export`, with drawn export options), and programs
written in the dialects themselves (`lazyloop.strategies.dialects`: ONNX Loop in every mode,
Scan 8 and 9+, OpenVINO Loop-5 with every port kind). The expected values come from lazyloop:
`ll.run` for core programs, the frontends' `run` for dialect programs, with the masks of
defined positions.

Comparison (`compare`): every expected output must be present; dtype and shape are compared
exactly; values only where lazyloop says they are defined (CONCATENATE padding, A3 values are
ignored), floats with ``rtol=1e-4, atol=1e-5`` (float16: 1e-2), everything else exactly.

Each disagreement is shrunk by hypothesis to a minimal program of the same *signature*
(subject kind, kind of difference, ambiguity); a difference that an alternative reading of
the ambiguity register explains (lazyloop evaluated under that reading agrees with the
backend) is reported with that register ID in `ambiguity`.

The package is split by job: `backends` (the built-in backends), `isolation` (a backend in a
child process), `comparing`, `subject` (what is generated), `report`, `checking` (`check`),
`shrinking`, `cases` (backend-test case folders) and `cli` (`lazyloop check`).
"""
from __future__ import annotations

# every public name of the former single module stays importable from the package, and so do
# the private one used outside it (_error_key); __all__ is unchanged
from .backends import (BACKENDS, LazyloopBackend, LoadFailed, OnnxReferenceBackend,
                       OnnxRuntimeBackend, OpenVinoBackend, TractBackend, TripCountPlusOne,
                       Unsupported, backend, formats_of, says_unsupported)
from .cases import case_readme, write_case
from .checking import REFUSING_READINGS, Checker, alternative_readings, check, throughput
from .cli import EXIT_INTERNAL, cli_check
from .comparing import DEFAULT_TOLERANCE, FLOAT_TOLERANCE, Difference, compare, tolerance
from .isolation import BackendCrashed, BackendStartFailed, Isolated, resident_mb
from .plugins import ENTRY_POINT_GROUP, BackendSpecError, make_backend
from .report import (EVERY_PROGRAM_RULES, Disagreement, Outcome, Refusal, Report, _error_key,
                     summary_table)
from .subject import (Invalid, NotExported, Refused, Subject, onnx_export_options,
                      openvino_export_options, plan_rules, subjects)

__all__ = ["Unsupported", "BackendCrashed", "Isolated", "backend", "BACKENDS", "OnnxRuntimeBackend", "OnnxReferenceBackend",
           "OpenVinoBackend", "LazyloopBackend", "TripCountPlusOne", "compare", "Difference",
           "Subject", "subjects", "check", "Report", "Disagreement", "Refusal", "throughput",
           "cli_check", "write_case", "summary_table", "plan_rules", "alternative_readings"]
