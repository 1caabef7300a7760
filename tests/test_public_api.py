"""The held public API (issue: one package per part). Every name the README, the notebooks and
spec/ import or call is imported here, so a move that drops one fails this test instead of a
user's notebook. Internal module paths are not held; these are."""
import importlib
import shutil
import subprocess
import sys

import pytest

HELD = {
    "lazyloop": [
        "Network", "evaluate", "run", "compile_network", "Evaluation", "ForceEvent",
        "LazyLoopError", "EvaluationError", "FuelExhausted", "InputError", "IteratorOutOfBounds",
        "LengthTooShort", "ModelError", "NegativeTripCount", "NeverEnds", "ShapeError",
        "StreamShapeChanged",
        "StructureError", "UnsupportedError", "TensorType", "OpaqueType", "AMBIGUITIES",
        "ActivationType", "ElementWiseOperation", "LayerType", "LoopOutput", "MatrixOperation",
        "ReduceOperation", "TripLimit", "UnaryOperation",
        "bool", "float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8",
    ],
    "lazyloop.onnx": ["evaluate", "run", "lower", "Lowered", "load_model"],
    "lazyloop.onnx.export": ["export", "loop_forms", "ir_version_for"],
    "lazyloop.openvino": ["evaluate", "run", "lower", "read_model"],
    "lazyloop.openvino.export": ["export"],
    "lazyloop.difftest": ["check", "backend", "throughput", "compare", "Isolated", "Unsupported"],
    "lazyloop.strategies": ["networks", "invalid_networks", "Program", "Call", "replay",
                            "onnx_loops", "onnx_scans", "onnx_scan8s", "openvino_loops",
                            "dialect_programs"],
    "lazyloop.conformance": ["run_suite", "export_suite"],
    "lazyloop.conformance.cases": ["CASES"],
    "lazyloop.models": ["LSTMWeights", "build_lstm", "lstm_network", "numpy_lstm", "GATES"],
    "lazyloop.tensorrt.replay": ["replay", "build_engine", "run_engine", "TensorRTBackend"],
    "lazyloop.core.ambiguity": ["REGISTER", "UnknownReading", "resolve"],
    "lazyloop.core.export": ["NotExportable", "TargetRefused", "Structure"],
    "lazyloop.teach": ["check", "draw_network", "draw_plans", "forced", "masked",
                       "openvino_outline", "outline", "plot_masked", "plot_sequence",
                       "plot_trace", "print_plan", "print_trace", "rule_text",
                       "show_ambiguity", "side_by_side"],
    "lazyloop.bench": ["main"],
    "lazyloop.cli": ["main"],
    "lazyloop.cli.check": ["cli_check"],
    "lazyloop.cli.conformance": ["cli_conformance"],
}
NEEDS = {"lazyloop.onnx": "onnx", "lazyloop.onnx.export": "onnx", "lazyloop.openvino": None,
         "lazyloop.openvino.export": "openvino", "lazyloop.difftest": "hypothesis",
         "lazyloop.strategies": "hypothesis", "lazyloop.conformance": "onnx",
         "lazyloop.conformance.cases": "onnx", "lazyloop.tensorrt.replay": "hypothesis",
         "lazyloop.teach": "matplotlib", "lazyloop.cli.check": "hypothesis",
         "lazyloop.cli.conformance": "onnx"}


@pytest.mark.parametrize("module", sorted(HELD))
def test_held_names_import(module):
    if NEEDS.get(module):
        pytest.importorskip(NEEDS[module])
    mod = importlib.import_module(module)
    missing = [name for name in HELD[module] if not hasattr(mod, name)]
    assert missing == [], f"{module} lost {missing}"


def test_error_classes_derive_from_lazyloop_error():
    import lazyloop as ll
    for name in HELD["lazyloop"]:
        obj = getattr(ll, name)
        if isinstance(obj, type) and issubclass(obj, Exception):
            assert issubclass(obj, ll.LazyLoopError), name


def test_the_command_is_installed_and_answers():
    exe = shutil.which("lazyloop")
    cmd = [exe] if exe else [sys.executable, "-m", "lazyloop"]
    done = subprocess.run(cmd + ["--help"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0
    for command in ("run", "explain", "check", "conformance", "bench"):
        assert command in done.stdout


def test_the_core_imports_nothing_outward():
    """lazyloop/core/ may import only itself (and numpy/attrs): the shape of the package
    (imports inside functions count; read from the source by `imports.graph`)."""
    from imports import graph
    offenders = {name: sorted(m for m in targets if not m.startswith("lazyloop.core"))
                 for name, targets in graph().items() if name.startswith("lazyloop.core")}
    assert {k: v for k, v in offenders.items() if v} == {}
