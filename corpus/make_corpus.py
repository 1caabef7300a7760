"""Write the exporter corpus: small ONNX loop models written by real exporters, each with the
exporting framework's own answer (issue 11).

    python corpus/make_corpus.py onnxscript torch      # main environment
    /work/venv-tf/bin/python corpus/make_corpus.py tf  # TensorFlow + tf2onnx (own venv)
    python corpus/make_corpus.py table                 # corpus/README.md's table

Each case writes `tests/corpus/<exporter>/<case>.onnx` and `<case>.npz` next to it. The
answers are computed by the framework itself, never by an ONNX runtime's Loop: onnxscript's
eager mode (Python runs the loop, op by op), the TensorFlow function, the torch module. The
`.npz` holds feeds `in<k>` and outputs `out<k>` by position (a sequence as `out<k>.len` plus
`out<k>.<j>`, an empty optional as `out<k>.none`) and `meta`, a JSON string with the input
and output names, the case's description and the readings it is checked under (for example
`{"A15": "honour"}`).

This script is generation-time only: the test suite reads the committed files and never
imports onnxscript, TensorFlow or torch.
"""
from __future__ import annotations

import json
import os
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "tests", "corpus")
F32, I64 = np.float32, np.int64


# ---- writing one case --------------------------------------------------------------------

def pack(key: str, value, into: dict):
    """One feed or output into npz entries (see the module docstring)."""
    if value is None:
        into[key + ".none"] = np.array(True)
    elif isinstance(value, (list, tuple)):
        into[key + ".len"] = np.array(len(value), I64)
        for k, v in enumerate(value):
            into[f"{key}.{k}"] = np.asarray(v)
    else:
        into[key] = np.asarray(value)


def save(exporter: str, case: str, model, feeds: dict, outputs: dict, about: str,
         readings: dict | None = None):
    """`outputs` in graph output order, keyed by the graph's output names."""
    import onnx

    folder = os.path.join(CORPUS, exporter)
    os.makedirs(folder, exist_ok=True)
    onnx.checker.check_model(model, full_check=True)
    names = [o.name for o in model.graph.output]
    if len(names) != len(outputs):
        raise SystemExit(f"{case}: {len(outputs)} answers for outputs {names}")
    outputs = dict(zip(names, outputs.values()))
    onnx.save(model, os.path.join(folder, case + ".onnx"))
    entries = {"meta": np.array(json.dumps({"about": about, "readings": readings or {},
                                            "inputs": list(feeds), "outputs": names}))}
    for k, value in enumerate(feeds.values()):
        pack(f"in{k}", value, entries)
    for k, value in enumerate(outputs.values()):
        pack(f"out{k}", value, entries)
    np.savez_compressed(os.path.join(folder, case + ".npz"), **entries)
    print(f"wrote {exporter}/{case}: outputs {names}")


# ---- onnxscript ----------------------------------------------------------------------------

def make_onnxscript():
    from onnxscript_cases import CASES
    for case, fn, feeds, about, readings, *by_hand in CASES:
        answer = (by_hand[0] if by_hand else fn)(**feeds)   # eager: Python runs the loop
        answer = answer if isinstance(answer, tuple) else (answer,)
        outputs = {f"out{k}": to_numpy(v) for k, v in enumerate(answer)}
        save("onnxscript", case, fn.to_model_proto(), feeds, outputs, about, readings)


def to_numpy(v):
    if isinstance(v, (list, tuple)):
        return [to_numpy(x) for x in v]
    if v is None:
        return None
    v = getattr(v, "value", v)  # onnxscript's eager tensors
    return np.asarray(v)


# ---- torch (TorchScript exporter) ------------------------------------------------------------

def make_torch():
    import io

    import onnx
    import torch
    from torch_cases import CASES, READINGS

    for case, module, feeds, about in CASES:
        scripted = torch.jit.script(module)
        args = tuple(torch.from_numpy(np.asarray(v)) for v in feeds.values())
        with torch.no_grad():
            answer = scripted(*args)
        answer = answer if isinstance(answer, tuple) else (answer,)
        buf = io.BytesIO()
        torch.onnx.export(scripted, args, buf, input_names=list(feeds), dynamo=False,
                          opset_version=17)
        model = onnx.load_from_string(buf.getvalue())
        outputs = {f"out{k}": as_np(v) for k, v in enumerate(answer)}
        save("torch", case, model, feeds, outputs, about, READINGS.get(case))


def as_np(v):
    if isinstance(v, (list, tuple)):
        return [as_np(x) for x in v]
    return v.detach().numpy() if hasattr(v, "detach") else np.asarray(v)


# ---- TensorFlow (tf2onnx) --------------------------------------------------------------------

def make_tf():
    import tf2onnx
    import tensorflow as tf
    from tf_cases import CASES

    for case, fn, feeds, about in CASES:
        specs = [tf.TensorSpec(np.asarray(v).shape if np.ndim(v) == 0 else [None] * np.ndim(v),
                               tf.as_dtype(np.asarray(v).dtype), name=k)
                 for k, v in feeds.items()]
        answer = fn(*[tf.constant(v) for v in feeds.values()])
        answer = answer if isinstance(answer, (tuple, list)) else (answer,)
        model, _ = tf2onnx.convert.from_function(tf.function(fn), input_signature=specs,
                                                 opset=17)
        outputs = {f"out{k}": v.numpy() for k, v in enumerate(answer)}
        save("tf2onnx", case, model, feeds, outputs, about)


# ---- jax (jax2onnx) ---------------------------------------------------------------------------

def make_jax():
    import jax
    from jax2onnx import to_onnx
    from jax_cases import CASES

    for case, fn, feeds, about in chosen(CASES):
        specs = [jax.ShapeDtypeStruct(np.shape(v), np.asarray(v).dtype) for v in feeds.values()]
        model = to_onnx(fn, specs, model_name=case, input_names=list(feeds))
        answer = jax.tree_util.tree_leaves(jax.jit(fn)(*feeds.values()))
        outputs = {f"out{k}": np.asarray(v) for k, v in enumerate(answer)}
        save("jax2onnx", case, loop_model(case, model), feeds, outputs, about)


# ---- torch (dynamo exporter) ------------------------------------------------------------------

def make_dynamo():
    import torch
    from torch.utils._pytree import tree_leaves
    from torch_dynamo_cases import CASES

    for case, module, feeds, about, *options in chosen(CASES):
        args = tuple(torch.from_numpy(np.asarray(v)) for v in feeds.values())
        options = dict(options[0]) if options else {}
        if "dynamic_shapes" in options:  # {input: {axis: name}}: the names as torch Dims
            options["dynamic_shapes"] = {k: {a: torch.export.Dim(d, min=2) for a, d in v.items()}
                                         for k, v in options["dynamic_shapes"].items()}
        torch._dynamo.reset()  # a nested while_loop fails to trace after another case's
        with torch.no_grad():
            answer = tree_leaves(module(*args))
            program = torch.onnx.export(module, args, input_names=list(feeds), dynamo=True,
                                        verbose=False, **options)
        outputs = {f"out{k}": as_np(v) for k, v in enumerate(answer)}
        save("torch_dynamo", case, loop_model(case, program.model_proto), feeds, outputs,
             about)


# ---- scikit-learn (skl2onnx) ---------------------------------------------------------------

def make_skl():
    from skl2onnx import to_onnx
    from skl_cases import CASES

    for case, (estimator, answer), x, about, options in chosen(CASES):
        model = to_onnx(estimator, x[:1], options=options, target_opset=18)
        name = model.graph.input[0].name
        outputs = {f"out{k}": v for k, v in enumerate(answer(estimator, x))}
        outputs = {k: np.asarray(v).astype(dtype_of(model.graph.output[j]))
                   for j, (k, v) in enumerate(outputs.items())}
        save("skl2onnx", case, loop_model(case, model), {name: x}, outputs, about)


def dtype_of(value_info):
    """The numpy dtype of a graph output that is a tensor."""
    from onnx.helper import tensor_dtype_to_np_dtype
    return tensor_dtype_to_np_dtype(value_info.type.tensor_type.elem_type)


# ---- paddle (paddle2onnx) -------------------------------------------------------------------

def make_paddle():
    import tempfile

    import onnx
    import paddle
    from paddle_cases import CASES

    for case, layer, feeds, about in chosen(CASES):
        specs = [paddle.static.InputSpec(list(np.shape(v)), str(np.asarray(v).dtype), k)
                 for k, v in feeds.items()]
        answer = layer(*[paddle.to_tensor(v) for v in feeds.values()])  # dygraph
        answer = answer if isinstance(answer, (tuple, list)) else (answer,)
        static = paddle.jit.to_static(layer, input_spec=specs, full_graph=True)
        with tempfile.TemporaryDirectory() as tmp:
            paddle.onnx.export(static, os.path.join(tmp, case), input_spec=specs,
                               opset_version=17)
            model = onnx.load(os.path.join(tmp, case + ".onnx"))
        outputs = {f"out{k}": v.numpy() for k, v in enumerate(answer)}
        save("paddle2onnx", case, loop_model(case, model), feeds, outputs, about)


# ---- what every exporter's case goes through -------------------------------------------------

def chosen(cases):
    """The cases named in CORPUS_ONLY (comma-separated), or all of them."""
    only = [c for c in os.environ.get("CORPUS_ONLY", "").split(",") if c]
    return [c for c in cases if not only or c[0] in only]


def loop_model(case, model):
    """`model` when some graph of it holds a Loop, Scan or If; else the case is refused (an
    exporter that unrolled the loop gives the corpus nothing to measure). Local functions
    count."""
    if not control_flow(model.graph) and not any(control_flow(f) for f in model.functions):
        raise SystemExit(f"{case}: the exported model holds no Loop, Scan or If")
    return model


def control_flow(graph) -> list:
    """The Loop, Scan and If nodes of `graph` (or of a function) and of its subgraphs, by op
    type."""
    found = []
    for node in graph.node:
        if node.op_type in ("Loop", "Scan", "If"):
            found.append(node.op_type)
        for attr in node.attribute:
            for sub in ([attr.g] if attr.HasField("g") else []) + list(attr.graphs):
                found += control_flow(sub)
    return found


# ---- the table -----------------------------------------------------------------------------

def make_table():
    sys.path.insert(0, ROOT)
    from corpus_table import write_table
    write_table(CORPUS, os.path.join(ROOT, "corpus", "README.md"))


MAKERS = {"onnxscript": make_onnxscript, "torch": make_torch, "tf": make_tf,
          "jax": make_jax, "dynamo": make_dynamo, "skl": make_skl,
          "paddle": make_paddle, "table": make_table}

if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    for which in sys.argv[1:] or ["onnxscript", "torch", "table"]:
        MAKERS[which]()
