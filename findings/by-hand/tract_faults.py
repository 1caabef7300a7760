"""The faults of tract first met with seed 7 (spec/50, tract), each shown without lazyloop: a
model built by hand, run on tract (its Python API, every input fed by position) and on
onnxruntime and onnx.reference, beside the answer computed by hand.
Needs numpy, onnx, onnxruntime and tract."""
import json
import os
import signal
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx.reference import ReferenceEvaluator

from common import integer_gemm, model, on_ort, one_line, shown
from common import value as v

F = T.FLOAT
TRACT = {"float32": "f32", "int64": "i64", "uint64": "u64", "uint32": "u32"}


RUN = """
import json, sys
import numpy as np
import tract
path, facts = sys.argv[1], json.loads(sys.argv[2])
inference = tract.onnx().load(path)
for k, fact in enumerate(facts):
    inference.set_input_fact(k, fact)
feeds = [np.load(f"{path}.{k}.npy") for k in range(len(facts))]
try:
    out = inference.into_model().into_runnable().run(feeds)
except Exception as exc:
    print(type(exc).__name__ + ": " + " ".join(str(exc).split("Stack backtrace")[0].split()))
    sys.exit(1)
np.savez(path + ".out.npz", *[r.to_numpy() for r in out])
"""


def on_tract(m, feeds):
    """tract's outputs, or its error in one line (without the backtrace tract appends), or
    the signal that killed it: run in a child process, as a panic aborts the process."""
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "model.onnx")
        onnx.save(m, path)
        facts = [",".join([*map(str, f.shape), TRACT[f.dtype.name]]) for f in feeds]
        for k, f in enumerate(feeds):
            np.save(f"{path}.{k}.npy", np.ascontiguousarray(f))
        done = subprocess.run([sys.executable, "-c", RUN, path, json.dumps(facts)],
                              capture_output=True, text=True, timeout=120)
        if done.returncode < 0:
            return f"crash: {signal.Signals(-done.returncode).name}"
        if done.returncode:
            return (done.stdout.strip() or done.stderr.strip().splitlines()[-1])[:300]
        with np.load(path + ".out.npz") as out:
            return [out[f"arr_{k}"] for k in range(len(out.files))]


def on_reference(m, feeds):
    try:
        return ReferenceEvaluator(m).run(None, dict(zip([i.name for i in m.graph.input], feeds)))
    except Exception as exc:  # noqa: BLE001
        return one_line(exc)


def two_scan_outputs(second, state_read=False):
    """Scan over xs = [[-1, -0.75], [-0.5, -0.25]] fed (2 trips) carrying a state s + e (from
    [0, 0]) whose final value the graph reads or not: y0 scans out ReduceSum(e) forward, y1 a
    second value made by `second` ("same": another ReduceSum(e) node; "other": ReduceMax(e))
    in reverse."""
    nodes = [h.make_node("Add", ["s", "e"], ["s_next"]),
             h.make_node("ReduceSum", ["e"], ["o0"], keepdims=0),
             h.make_node({"same": "ReduceSum", "other": "ReduceMax"}[second], ["e"], ["o1"],
                         keepdims=0)]
    body = h.make_graph(nodes, "body", [v("s", F, [2]), v("e", F, [2])],
                        [v("s_next", F, [2]), v("o0", F, []), v("o1", F, [])])
    scan = h.make_node("Scan", ["s0", "xs"], ["s_final", "y0", "y1"], body=body,
                       num_scan_inputs=1, scan_output_directions=[0, 1])
    outputs = [v("y0", F, [2]), v("y1", F, [2])] + ([v("s_final", F, [2])] if state_read else [])
    m = model([scan], [v("s0", F, [2]), v("xs", F, [2, 2])], outputs, 16)
    xs = np.array([[-1, -0.75], [-0.5, -0.25]], np.float32)
    second_values = [-0.25, -0.75] if second == "other" else [-0.75, -1.75]
    expected = [np.array([-1.75, -0.75], np.float32), np.array(second_values, np.float32)]
    if state_read:
        expected.append(np.array([-1.5, -1.0], np.float32))
    return m, [np.zeros(2, np.float32), xs], expected


def reduce_unsigned(op):
    """ReduceL1 / ReduceSum of uint64 [0, 1] (all axes, keepdims): [1]."""
    m = model([h.make_node(op, ["x"], ["y"])], [v("x", T.UINT64, [2])],
              [v("y", T.UINT64, [1])], 18)
    return m, [np.array([0, 1], np.uint64)], [np.array([1], np.uint64)]


CASES = [
    ("TR-15 two equal scan outputs, the second reversed, the state's final value unread",
     lambda: two_scan_outputs("same")),
    ("TR-15 the same, the state's final value read",
     lambda: two_scan_outputs("same", state_read=True)),
    ("TR-15 control: two different values, the second reversed, the state unread",
     lambda: two_scan_outputs("other")),
    ("TR-16 Gemm of uint64, alpha 0.5", lambda: integer_gemm(np.uint64, 0.5)),
    ("TR-16 Gemm of uint64, alpha 1", lambda: integer_gemm(np.uint64, 1.0)),
    ("TR-17 ReduceL1 of uint64", lambda: reduce_unsigned("ReduceL1")),
    ("TR-17 ReduceSum of uint64", lambda: reduce_unsigned("ReduceSum")),
]

if __name__ == "__main__":
    from importlib.metadata import version
    import onnxruntime as ort
    ort.set_default_logger_severity(4)
    print("tract", version("tract"), "onnxruntime", ort.__version__, "onnx", onnx.__version__)
    for name, make in CASES:
        m, feeds, expected = make()
        print(f"{name}:\n  by hand {shown(expected)}\n  tract {shown(on_tract(m, feeds))}\n"
              f"  onnxruntime {shown(on_ort(m, feeds))}\n"
              f"  onnx.reference {shown(on_reference(m, feeds))}")
