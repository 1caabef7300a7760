"""Reproduces a disagreement lazyloop found between backend 'onnxruntime' and the
specification (see README.md). Needs numpy, onnx and the backend's package; not lazyloop.

    python repro.py      # prints expected vs actual; exit status 1 when they differ
"""
import glob
import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
# positions lazyloop leaves undefined (any value is right there), flat indices per output
UNDEFINED = {}
RTOL_ATOL = {"float16": (1e-2, 1e-2), "float32": (1e-4, 1e-5), "float64": (1e-4, 1e-5)}


# outputs that are sequences (SequenceProto) or empty optionals (OptionalProto), by file
KINDS = {}


def tensors(prefix):
    out = {}
    for path in sorted(glob.glob(os.path.join(HERE, "test_data_set_0", prefix + "_*.pb"))):
        kind = KINDS.get(os.path.basename(path), "tensor")
        t = {"sequence": onnx.SequenceProto, "optional": onnx.OptionalProto}.get(
            kind, onnx.TensorProto)()
        with open(path, "rb") as f:
            t.ParseFromString(f.read())
        out[t.name] = {"sequence": numpy_helper.to_list, "optional": numpy_helper.to_optional
                       }.get(kind, numpy_helper.to_array)(t)
    return out


def shown(value):
    if value is None or isinstance(value, (list, tuple)):
        return None if value is None else [shown(v) for v in value]
    value = np.asarray(value)
    return f"{value.dtype}{list(value.shape)}: {value.tolist()}"


import onnxruntime as ort
def run(inputs):
    session = ort.InferenceSession(os.path.join(HERE, "model.onnx"),
                                   providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    wanted = {i.name for i in session.get_inputs()}
    return dict(zip(names, session.run(None, {k: v for k, v in inputs.items() if k in wanted})))


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
    inputs, expected = tensors("input"), tensors("output")
    print("inputs:", {k: v.tolist() for k, v in inputs.items()})
    actual = run(inputs)
    bad = 0
    for name, want in expected.items():
        missing = name not in actual
        got = actual.get(name)
        wrong = missing or differs(name, want, got)
        bad += wrong
        print(f"{name}: {'DIFFERS' if wrong else 'agrees'}")
        print(f"  expected {shown(want)}")
        if missing:
            print(f"  actual: missing (the backend returned {sorted(actual)})")
        else:
            print(f"  actual   {shown(got)}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
