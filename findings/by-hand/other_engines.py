"""The other engines on a campaign's ONNX cases: each case folder's model.onnx run on plain
onnxruntime and on onnx.reference with its saved inputs, each answer compared with the
expected outputs saved in the case (lazyloop's). No lazyloop: numpy, onnx, onnxruntime.

    python findings/by-hand/other_engines.py FOLDER   # FOLDER holds case_* (a --out folder)

One line per case and engine: `agrees`, `DIFFERS` with the outputs, or the engine's error in
one line. OpenVINO IR cases (model.xml) are left out: only OpenVINO reads them."""
import glob
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper

from common import on_ort, on_reference, shown


def saved(case: str, prefix: str) -> dict:
    """The case's saved tensors (inputs or expected outputs) by name; sequences as lists."""
    values = {}
    for path in sorted(glob.glob(os.path.join(case, "test_data_set_0", prefix + "_*.pb"))):
        with open(path, "rb") as f:
            data = f.read()
        tensor = onnx.TensorProto()
        tensor.ParseFromString(data)
        if tensor.name:
            values[tensor.name] = np.array(numpy_helper.to_array(tensor), copy=True)
            continue
        seq = onnx.SequenceProto()
        seq.ParseFromString(data)
        values[seq.name] = [np.array(v, copy=True) for v in numpy_helper.to_list(seq)]
    return values


def undefined(case: str) -> dict:
    """Flat positions lazyloop leaves undefined, per output (defined_N.pb masks)."""
    names = [o.name for o in onnx.load(os.path.join(case, "model.onnx")).graph.output]
    masks = {}
    for path in glob.glob(os.path.join(case, "test_data_set_0", "defined_*.pb")):
        k = int(os.path.basename(path)[len("defined_"):-3])
        tensor = onnx.TensorProto()
        with open(path, "rb") as f:
            tensor.ParseFromString(f.read())
        masks[names[k]] = ~numpy_helper.to_array(tensor).reshape(-1).astype(bool)
    return masks


def same(want, got, skip) -> bool:
    if isinstance(want, list):
        return isinstance(got, list) and len(got) == len(want) and all(
            same(w, g, None) for w, g in zip(want, got))
    got = np.asarray(got)
    if got.dtype != want.dtype or got.shape != want.shape:
        return False
    keep = np.ones(want.size, bool) if skip is None else ~skip
    w, g = want.reshape(-1)[keep], got.reshape(-1)[keep]
    if w.dtype.kind == "f":
        return np.allclose(g, w, rtol=1e-4 if w.dtype != np.float16 else 1e-2,
                           atol=1e-5 if w.dtype != np.float16 else 1e-2, equal_nan=True)
    return np.array_equal(g, w)


def judged(case: str, engine: str, result) -> str:
    if isinstance(result, str):
        return f"{engine} failed: {result}"
    model = onnx.load(os.path.join(case, "model.onnx"))
    expected, skip = saved(case, "output"), undefined(case)
    names = [o.name for o in model.graph.output]
    wrong = [n for n, got in zip(names, result)
             if n in expected and not same(expected[n], got, skip.get(n))]
    if not wrong:
        return f"{engine} agrees"
    return f"{engine} DIFFERS on {wrong}: {shown(result)}"


def main(folder: str) -> None:
    ort.set_default_logger_severity(4)  # its errors come back as one line each
    for case in sorted(glob.glob(os.path.join(folder, "case_*"))):
        path = os.path.join(case, "model.onnx")
        if not os.path.exists(path):
            continue
        model, feeds = onnx.load(path), saved(case, "input")
        print(os.path.basename(case))
        print("   ", judged(case, "onnxruntime", on_ort(model, feeds)))
        print("   ", judged(case, "onnx-reference", on_reference(model, feeds)))


if __name__ == "__main__":
    main(sys.argv[1])
