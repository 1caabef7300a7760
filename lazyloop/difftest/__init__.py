"""Differential testing: lazyloop is the oracle, a backend is the system under test.

    import lazyloop.difftest as dt
    report = dt.check(dt.backend("onnxruntime"), max_examples=200, seed=0)
    report.examples, report.disagreements, report.unsupported, report.coverage
    print(report.summary())

A *backend* is any object with `name`, optionally `format` ("onnx", the default, or
"openvino") or `formats` (every format it takes) and `kinds` (the subject kinds it runs), and
`run(model, feeds) -> {output name: value}`. To say "I do not support this" (an op, a type,
an attribute) its `run` raises `Unsupported`; any other exception, also while loading or
compiling a valid model (`LoadFailed`; `InputLost` when the engine's compiled model lost an
input the model declares), is a finding. `check` also takes a factory or a name:
built-in, registered in the entry-point group ``lazyloop.backends``, or ``module:factory``.

`check` runs the backend in a forked child process (`Isolated`; `isolate=False` to debug): a
crash (with its signal), a hang past `timeout` or a resident size past `memory_mb` is a
finding and a fresh child takes the next program; start-up has its own time limit.

What is generated (hypothesis strategies; program i is a pure function of (seed, i)): core
programs (`lazyloop.strategies.networks`) exported to the backend's format
(`lazyloop.onnx.export`, `lazyloop.openvino.export`, with drawn export options), and
programs written in the dialects themselves (`lazyloop.strategies.dialects`: ONNX Loop in
every mode, long Loops with narrow-typed counters, If alone and inside Scan, Scan 8 and 9+,
OpenVINO Loop-5 with every port kind). The expected values come from lazyloop: `ll.run` for
core programs, the frontends' `run` for dialect programs, with the masks of defined
positions.

Comparison (`compare`): every expected output must be present; dtype and shape are compared
exactly; values only where lazyloop says they are defined (CONCATENATE padding, A3 values are
ignored), floats with ``rtol=1e-4, atol=1e-5`` (float16: 1e-2), everything else exactly.

Each disagreement shows a *symptom* (`symptom`: a normalised error, or a kind of value
difference) and is shrunk by hypothesis (at most `shrink_steps` new programs; wall time,
candidates that time out and Ctrl-C bound it too: `shrinking.ShrinkBudget`) to a minimal
program, of any kind, that shows the same symptom; its model is then reduced node by node
(`minimize`, `minimize_ir`: at most `minimize_steps` edited models), and the minimal cases
are grouped by root cause (`grouping`: symptom and minimal model up to names and constants).
A difference that another reading of the ambiguity register computes (lazyloop evaluated
under that reading gives the backend's answer: `explaining`) is reported with that register
ID in `ambiguity` and the reading in `reading`. Every input the model declares is fed to the
engine (`feeding`); an engine that lost one is a finding of its own (`InputLost`).
`workers=N` spreads the programs over Dask workers (`parallel`) with the same findings.

The package is split by job: `backends` (the built-in backends), `errors` (what an adapter
raises), `feeding` (every input to the engine), `plugins` (naming a backend), `isolation` (a
backend in a child process), `comparing`, `subject` (what is generated), `report`,
`checking` (`Checker`), `check_campaign` (`check`, `throughput`), `campaign` (exploring and
finishing), `shrinking` (drawing program i, shrinking), `symptom`, `errorkey`, `skeleton` and
`grouping` (root causes), `minimize`,
`minimize_ir`, `passes` and `reducing` (minimal models), `explaining` (ambiguities by
meaning), `parallel` (Dask), `engines` (the engines users deploy), `cases` (backend-test
case folders), `repro` (standalone repro.py) and `cli` (`lazyloop check`).
"""
from __future__ import annotations

# every public name of the former single module stays importable from the package, and so do
# the private one used outside it (_error_key); __all__ gains HarnessError
from .backends import (BACKENDS, HarnessError, InputLost, LazyloopBackend, LoadFailed,
                       OnnxReferenceBackend, OnnxRuntimeBackend, OpenVinoBackend, TractBackend,
                       TripCountPlusOne, Unsupported, formats_of, says_unsupported)
from .cases import case_readme, write_case
from .check_campaign import check, throughput
from .checking import Checker, alternative_readings
from .comparing import DEFAULT_TOLERANCE, FLOAT_TOLERANCE, Difference, compare, tolerance
from .isolation import BackendCrashed, BackendStartFailed, Isolated, resident_mb
from .plugins import ENTRY_POINT_GROUP, BackendSpecError, backend, make_backend
from .errorkey import _error_key
from .report import EVERY_PROGRAM_RULES, Disagreement, Outcome, Refusal, Report, summary_table
from .subject import (Invalid, NotExported, Refused, Subject, onnx_export_options,
                      openvino_export_options, plan_rules, subjects)

__all__ = ["Unsupported", "BackendCrashed", "Isolated", "backend", "BACKENDS", "OnnxRuntimeBackend", "OnnxReferenceBackend",
           "OpenVinoBackend", "LazyloopBackend", "TripCountPlusOne", "compare", "Difference",
           "Subject", "subjects", "check", "Report", "Disagreement", "Refusal", "throughput",
           "write_case", "summary_table", "plan_rules", "alternative_readings",
           "LoadFailed", "TractBackend", "BackendStartFailed", "make_backend", "says_unsupported",
           "ENTRY_POINT_GROUP", "BackendSpecError", "resident_mb", "InputLost", "HarnessError"]
