"""A standalone `repro.py` for each finding, and the facts an upstream issue needs.

The script sits in the case folder beside `model.onnx` (or `model.xml`) and
`test_data_set_0/`. It needs numpy, onnx (to read the `.pb` tensors) and the backend's own
package — not lazyloop: it runs the model on the backend, compares with the expected outputs
written by lazyloop (positions lazyloop leaves undefined are listed in the script and
skipped) and prints expected vs actual, or the backend's error in one line. It feeds every
input the model declares to the engine's input that names it, as the tester's adapters do,
and says so when the engine lost one. Exit status 1 when the backend differs (or failed),
0 when it agrees, 2 when the script cannot read the case; a crash of the backend ends the
script as it ended the backend's process.
"""
from __future__ import annotations

import json
import os
import re

import numpy as np

from .feeding import model_inputs

# how each built-in backend runs the case's model: `run(inputs) -> {name: array}`, each input
# fed to the engine's input port that names it (`fed`, in the script)
RUNNERS = {
    "onnxruntime": '''import onnxruntime as ort
def run(inputs):
    session = ort.InferenceSession(os.path.join(HERE, "model.onnx"),
                                   providers=["CPUExecutionProvider"])
    ports = [i.name for i in session.get_inputs()]
    values = fed([{p} for p in ports], inputs)
    out = session.run(None, {ports[k]: v for k, v in values.items()})
    return dict(zip([o.name for o in session.get_outputs()], out))
''',
    "onnx-reference": '''from onnx.reference import ReferenceEvaluator
def run(inputs):
    ev = ReferenceEvaluator(os.path.join(HERE, "model.onnx"))
    ports = list(ev.input_names)
    values = fed([{p} for p in ports], inputs)
    return dict(zip(ev.output_names, ev.run(None, {ports[k]: v for k, v in values.items()})))
''',
    "openvino": '''import openvino as ov
def run(inputs):
    core = ov.Core()
    if os.path.exists(os.path.join(HERE, "model.xml")):
        model = read_ir(os.path.join(HERE, "model.xml"))
    else:  # an ONNX model is read from its bytes, as lazyloop's tester hands it over (read
        # from a path, OpenVINO's ONNX reader answers some models otherwise)
        with open(os.path.join(HERE, "model.onnx"), "rb") as f:
            model = core.read_model(f.read())
    compiled = core.compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    values = fed([set(port.get_names()) for port in compiled.inputs], inputs)
    result = compiled({compiled.inputs[k]: v for k, v in values.items()})
    out = {}
    for k, port in enumerate(compiled.outputs):
        for name in sorted(port.get_names()) or [str(k)]:
            out.setdefault(name, np.array(result[port]))
    return out
''',
    "tract": '''import tract
def run(inputs):
    model = onnx.load(os.path.join(HERE, "model.onnx"))
    inference = tract.onnx().load(os.path.join(HERE, "model.onnx"))
    ports = [{inference.input_name(k)} for k in range(inference.input_count())]
    values = fed(ports, inputs)
    values = [np.array(values[k], order="C") for k in range(len(ports))]
    for k, value in enumerate(values):
        inference.set_input_fact(k, ",".join([*map(str, value.shape), TRACT[value.dtype.name]]))
    runnable = inference.into_model().into_runnable()
    return {o.name: v.to_numpy() for o, v in zip(model.graph.output, runnable.run(values))}

TRACT = {"float32": "f32", "float64": "f64", "float16": "f16", "int8": "i8", "int16": "i16",
         "int32": "i32", "int64": "i64", "uint8": "u8", "uint16": "u16", "uint32": "u32",
         "uint64": "u64", "bool": "bool"}
''',
    "iree": '''import subprocess
import tempfile
import iree.compiler.tools as ireec
import iree.runtime as rt
# IREE as a user runs it: iree-import-onnx, then iree-compile for llvm-cpu (float64 kept)
FLAGS = ["--iree-llvmcpu-target-cpu=host", "--iree-input-demote-f64-to-f32=false"]
def run(inputs):
    path = os.path.join(HERE, "model.onnx")
    with tempfile.TemporaryDirectory() as tmp:
        mlir = os.path.join(tmp, "model.mlir")
        subprocess.run([sys.executable, "-m", "iree.compiler.tools.import_onnx", path,
                        "-o", mlir], check=True)
        try:
            vmfb = ireec.compile_file(mlir, target_backends=["llvm-cpu"], extra_args=FLAGS)
        except ireec.CompilerToolError as exc:
            raise SystemExit(f"iree: the model did not compile: {exc}")
    context = rt.SystemContext(config=rt.Config("local-sync"))
    context.add_vm_module(rt.VmModule.copy_buffer(context.instance, vmfb))
    model = onnx.load(path)
    given = {t.name for t in model.graph.initializer}
    names = [i.name for i in model.graph.input if i.name not in given]
    results = context.modules.module[model.graph.name](*[np.array(inputs[n]) for n in names])
    results = results if isinstance(results, (tuple, list)) else (results,)
    out = {}
    for o, result in zip(model.graph.output, results):
        value = result.to_host()
        declared = onnx.helper.tensor_dtype_to_np_dtype(o.type.tensor_type.elem_type)
        if value.dtype != declared and value.dtype.kind + declared.kind in ("iu", "ui"):
            value = value.view(declared)  # IREE hands uint8 back as int8
        out[o.name] = value
    return out
''',
    "mnn": '''import MNN.expr as F
import MNN.nn as nn
import _tools  # MNN's converter itself; never MNN.tools (its wrapper pip-installs, uploads logs)
# MNN keeps int64 and int8 feeds as int32 and float64 as float32 (its `const` reads only
# float32, int32 and uint8 arrays), then casts them to the converted input's type
CARRIERS = {"float": np.float32, "double": np.float32, "int": np.int32, "int64": np.int32,
            "int8": np.int32, "uint8": np.uint8}
def run(inputs):
    path, target = os.path.join(HERE, "model.onnx"), os.path.join(HERE, "model.mnn")
    if not _tools.mnnconvert(["mnnconvert", "-f", "ONNX", "--modelFile", path,
                              "--MNNModel", target, "--bizCode", "repro"]):
        raise SystemExit("mnn: the converter failed (its messages are above)")
    module = nn.load_module_from_file(target, [], [])  # the model's own inputs and outputs
    info = module.get_info()
    lost = sorted(set(inputs) - set(info["inputNames"]))
    if lost:
        raise SystemExit(f"mnn lost the model's input(s) {lost}")
    feeds = []
    for name, var in zip(info["inputNames"], info["inputs"]):
        carrier = CARRIERS[str(var.dtype).split(".")[-1]]
        value = np.array(inputs[name], dtype=carrier)  # 0-D stays 0-D
        kind = {np.float32: F.float, np.int32: F.int, np.uint8: F.uint8}[carrier]
        made = F.const(value, list(value.shape), F.NCHW, kind)
        feeds.append(made if kind == var.dtype else F.cast(made, var.dtype))
    declared = {o.name: onnx.helper.tensor_dtype_to_np_dtype(o.type.tensor_type.elem_type)
                for o in onnx.load(path).graph.output}
    return {name: np.array(v.read()).astype(declared.get(name, v.read().dtype))
            for name, v in zip(info["outputNames"], module.forward(feeds))}
''',
}

# the graph optimisers, each in front of onnxruntime: how each optimises a ModelProto
OPTIMISED = {"onnxslim": ("import onnxslim", "onnxslim.slim(model)"),
             "onnxsim": ("import onnxsim", "onnxsim.simplify(model)[0]"),
             "onnxoptimizer": ("import onnxoptimizer", "onnxoptimizer.optimize(model)")}
RUNNERS.update({name: f'''{imports}
import onnxruntime as ort
def run(inputs):
    model = onnx.load(os.path.join(HERE, "model.onnx"))
    model = {call}
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    lost = sorted(set(inputs) - {{i.name for i in session.get_inputs()}})
    if lost:
        raise SystemExit(f"{name} lost the model's input(s) {{lost}}")
    names = [o.name for o in session.get_outputs()]
    return dict(zip(names, session.run(None, {{i.name: inputs[i.name]
                                              for i in session.get_inputs()}})))
''' for name, (imports, call) in OPTIMISED.items()})

# a plug-in (`module:factory`, a registered name's entry point): the one import besides numpy
# and onnx (and openvino, to read an OpenVINO model) is the plug-in's own module, imported as
# `lazyloop check` imported it -- from the current folder first, as python -m does
PLUGIN_RUNNER = '''import importlib
PLUGIN = {spec!r}  # the plug-in's module:factory
def run(inputs):
    module, _, factory = PLUGIN.partition(":")
    sys.path.insert(0, os.getcwd())  # as python -m: a module in the current folder first
    made = importlib.import_module(module)
    for part in factory.split("."):
        made = getattr(made, part)
    backend = made if callable(getattr(made, "run", None)) and not isinstance(made, type) \\
        else made()
    if os.path.exists(os.path.join(HERE, "model.xml")):
        import openvino as ov
        model = ov.Core().read_model(os.path.join(HERE, "model.xml"))
    else:
        model = onnx.load(os.path.join(HERE, "model.onnx"))
    return dict(backend.run(model, {{name: inputs[name] for name in DECLARED if name in inputs}}))
'''

PACKAGES = {"onnxruntime": "onnxruntime", "onnx-reference": "onnx", "openvino": "openvino",
            "tract": "tract", "iree": ("iree-base-compiler", "iree-base-runtime"),
            "mnn": "mnn", **{name: (name, "onnxruntime") for name in OPTIMISED}}

_TEMPLATE = '''"""Reproduces a disagreement lazyloop found between backend {backend!r} and the
specification (see README.md). Needs numpy, onnx and the backend's package; not lazyloop.

    python repro.py   # prints expected vs actual (or the backend's error, one line);
                      # exit status 1 when they differ, 2 when this script cannot read the case
"""
import glob
import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
BACKEND = {backend!r}
# positions lazyloop leaves undefined (any value is right there), flat indices per output
UNDEFINED = {undefined}
RTOL_ATOL = {{"float16": (1e-2, 1e-2), "float32": (1e-4, 1e-5), "float64": (1e-4, 1e-5)}}
# the inputs the model declares, in order, and those no node reads (an engine may drop them)
DECLARED = {declared}
UNREAD = {unread}


# outputs that are sequences (SequenceProto) or empty optionals (OptionalProto), by file
KINDS = {kinds}


class Lost(Exception):
    """The engine's compiled model lacks or renames an input the model declares."""


def tensors(prefix):
    out = {{}}
    for path in sorted(glob.glob(os.path.join(HERE, "test_data_set_0", prefix + "_*.pb"))):
        kind = KINDS.get(os.path.basename(path), "tensor")
        t = {{"sequence": onnx.SequenceProto, "optional": onnx.OptionalProto}}.get(
            kind, onnx.TensorProto)()
        with open(path, "rb") as f:
            t.ParseFromString(f.read())
        out[t.name] = writable({{"sequence": numpy_helper.to_list,
                                "optional": numpy_helper.to_optional}}.get(
                                   kind, numpy_helper.to_array)(t))
    return out


def writable(value):
    """A writable copy (numpy_helper's arrays may be read-only views of the file's bytes)."""
    if value is None or isinstance(value, (list, tuple)):
        return None if value is None else [writable(v) for v in value]
    return np.array(value, copy=True)


def fed(ports, inputs):
    """{{port position: value}}: every declared input to the engine's port that names it,
    none skipped; a declared input no port names (read by the model) was lost."""
    named = {{k: d for k, names in enumerate(ports) for d in DECLARED if d in names}}
    spare = [k for k in range(len(ports)) if k not in named]
    for d in DECLARED:
        if d not in named.values() and d not in UNREAD:
            raise Lost(f"the engine lost input `{{d}}`: " + (
                f"its compiled model asks for {{sorted(ports[spare[0]])}} in its place"
                if spare else "its compiled model has no input of that name"))
    if spare:
        raise Lost(f"the engine asks for input {{sorted(ports[spare[0]])}}, which the model "
                   "does not declare")
    return {{k: writable(inputs[d]) for k, d in named.items()}}


def shown(value):
    if value is None or isinstance(value, (list, tuple)):
        return None if value is None else [shown(v) for v in value]
    value = np.asarray(value)
    return f"{{value.dtype}}{{list(value.shape)}}: {{value.tolist()}}"


{runner}

def differs(name, want, got):
    if want is None or got is None:  # an optional: holding nothing or not
        return (want is None) != (got is None)
    if isinstance(want, list):  # a sequence: its length, then its elements
        return not isinstance(got, (list, tuple)) or len(got) != len(want) or any(
            differs(name + "[]", w, g) for w, g in zip(want, got))
    got = np.asarray(got)
    if got.dtype != want.dtype or got.shape != want.shape:
        return True
    keep = np.ones(want.size, bool)
    keep[UNDEFINED.get(name, [])] = False
    w, g = want.reshape(-1)[keep], got.reshape(-1)[keep]
    if want.dtype.name in RTOL_ATOL:
        rtol, atol = RTOL_ATOL[want.dtype.name]
        return not np.allclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
    return not np.array_equal(g, w)


def main():
    try:
        inputs, expected = tensors("input"), tensors("output")
    except Exception as exc:  # the case itself, not the backend
        print(f"repro.py cannot read the case: {{type(exc).__name__}}: {{exc}}")
        return 2
    print("inputs:", {{k: shown(v) for k, v in inputs.items()}})
    try:
        actual = run(inputs)
    except Lost as exc:
        print(f"{{BACKEND}}: {{exc}}")
        return 1
    except Exception as exc:  # the backend failed: that is what differs
        print(f"{{BACKEND}} failed: {{type(exc).__name__}}: "
              f"{{' '.join(str(exc).split())[:600]}}")
        return 1
    bad = 0
    for name, want in expected.items():
        missing = name not in actual
        got = actual.get(name)
        wrong = missing or differs(name, want, got)
        bad += wrong
        print(f"{{name}}: {{'DIFFERS' if wrong else 'agrees'}}")
        print(f"  expected {{shown(want)}}")
        if missing:
            print(f"  actual: missing (the backend returned {{sorted(actual)}})")
        else:
            print(f"  actual   {{shown(got)}}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
'''


def runner_text(backend: str, plugin=None) -> str:
    """How repro.py runs the model: the built-in backend's runner, or the plug-in's
    `module:factory` imported and run (`PLUGIN_RUNNER`); a backend handed to lazyloop as an
    object, which no name imports again, leaves `run` to write."""
    if plugin:
        return PLUGIN_RUNNER.format(spec=plugin)
    if backend == "openvino":
        return RUNNERS[backend] + ir_reader()
    if backend in RUNNERS:
        return RUNNERS[backend]
    return (f"def run(inputs):  # backend {backend!r} was given as an object no module:factory "
            f"names: call it here\n    raise SystemExit('repro.py: write run(inputs) for "
            f"backend {backend}')\n")


def ir_reader() -> str:
    """The source of `lazyloop.openvino.ir.read_ir` and its helpers, for an OpenVINO case's
    repro.py: it reads its IR as lazyloop does (a negative port-map axis too, which
    OpenVINO writes and its own reader refuses), without lazyloop."""
    import inspect

    from ..openvino import ir
    parts = (ir.read_ir, ir.with_axes_counted, ir.restore_axes, ir._loops)
    return "import xml.etree.ElementTree as ET\n\n\n" + "\n\n".join(
        inspect.getsource(f) for f in parts)


def repro_script(backend: str, d, plugin=None) -> str:
    """The text of `repro.py` for disagreement `d` found on `backend` (a plug-in named by
    its `module:factory`, `plugin`)."""
    runner = runner_text(backend, plugin)
    tensors = {name: v for name, v in d.expected.items()
               if v is not None and not isinstance(v, list)}
    undefined = {name: np.flatnonzero(~np.broadcast_to(np.asarray(mask, bool),
                                                       np.shape(tensors[name]))).tolist()
                 for name, mask in d.defined.items() if name in tensors}
    undefined = {k: v for k, v in undefined.items() if v}
    kinds = {f"output_{k}.pb": "optional" if v is None else "sequence"
             for k, v in enumerate(d.expected.values()) if v is None or isinstance(v, list)}
    declared, _, unread = model_inputs(d.model)
    return _TEMPLATE.format(backend=backend, runner=runner, undefined=json.dumps(undefined),
                            kinds=json.dumps(kinds), declared=json.dumps(declared),
                            unread=json.dumps(sorted(unread)))


def write_repro(case: str, backend: str, d, plugin=None) -> str:
    path = os.path.join(case, "repro.py")
    with open(path, "w", encoding="utf-8") as f:
        f.write(repro_script(backend, d, plugin))
    return path


def versions(backend: str) -> dict:
    """Versions to quote upstream: lazyloop's and the backend package's (when built in)."""
    from importlib.metadata import PackageNotFoundError, version
    found = {}
    packages = PACKAGES.get(backend) or ()
    for package in ("lazyloop", *([packages] if isinstance(packages, str) else packages)):
        if package:
            try:
                found[package] = version(package)
            except PackageNotFoundError:
                found[package] = "not installed"
    return found


def spec_text(rule: str, limit: int = 1200) -> str:
    """The section of spec/ that defines `rule` (from a source checkout), or ''."""
    spec = os.path.join(os.path.dirname(__file__), "..", "..", "spec")
    heading = re.compile(rf"^#+ `{re.escape(rule)}`.*$", re.MULTILINE)
    for name in sorted(os.listdir(spec)) if os.path.isdir(spec) else ():
        with open(os.path.join(spec, name), encoding="utf-8") as f:
            text = f.read()
        m = heading.search(text)
        if m:
            rest = text[m.end():]
            end = re.search(r"^#+ ", rest, re.MULTILINE)
            return (m.group(0) + rest[:end.start() if end else None]).strip()[:limit]
    return ""
