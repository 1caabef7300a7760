"""Reading the exporter corpus (tests/corpus/<exporter>/<case>.onnx + .npz, written by
corpus/make_corpus.py): feeds, the framework's answers and each case's metadata."""
from __future__ import annotations

import glob
import json
import os

import numpy as np

from lazyloop.bench.corpus import unpack  # the .npz format, shared with the bench

CORPUS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def case_ids():
    """'exporter/case' for every committed model, sorted."""
    paths = sorted(glob.glob(os.path.join(CORPUS, "*", "*.onnx")))
    return [os.path.relpath(p, CORPUS)[:-len(".onnx")].replace(os.sep, "/") for p in paths]


def load(case_id: str):
    """(model path, feeds, expected outputs in graph order, metadata dict)."""
    base = os.path.join(CORPUS, *case_id.split("/"))
    with np.load(base + ".npz", allow_pickle=False) as entries:
        meta = json.loads(str(entries["meta"]))
        feeds = unpack(entries, "in", meta["inputs"])
        outputs = unpack(entries, "out", meta["outputs"])
    return base + ".onnx", feeds, outputs, meta


def differences(expected: dict, actual: dict):
    """Output by output, compared as the differential tester compares (sequences by length
    then element-wise, optionals by presence then value, floats with its tolerance)."""
    from lazyloop.difftest.comparing import compare
    return compare(expected, {}, actual)


#: onnxscript's `for i in range(n): acc = acc + x * i`, a Loop outside loops
FOR_SUM = os.path.join(CORPUS, "onnxscript", "for_sum.onnx")


def for_sum(n):
    """FOR_SUM's feeds for n trips and its answer from acc = x, by numpy."""
    x = np.array([1.5, -2.0], np.float32)
    want = x.copy()
    for i in range(n):
        want = want + x * np.float32(i)
    return {"x": x, "n": np.array(n, np.int64)}, want
