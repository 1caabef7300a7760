"""Reading the exporter corpus (tests/corpus/<exporter>/<case>.onnx + .npz, written by
corpus/make_corpus.py): feeds, the framework's answers and each case's metadata."""
from __future__ import annotations

import glob
import json
import os

import numpy as np

CORPUS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def case_ids():
    """'exporter/case' for every committed model, sorted."""
    paths = sorted(glob.glob(os.path.join(CORPUS, "*", "*.onnx")))
    return [os.path.relpath(p, CORPUS)[:-len(".onnx")].replace(os.sep, "/") for p in paths]


def unpack(entries, prefix: str) -> dict:
    """The feeds ('in') or outputs ('out') of a case: arrays, lists (sequences), None (empty
    optionals), in the order they were saved."""
    values = {}
    for key in entries.files:
        parts = key.split(":")
        if parts[0] != prefix:
            continue
        name, rest = parts[1], parts[2:]
        if not rest:
            values[name] = entries[key]
        elif rest == ["none"]:
            values[name] = None
        elif rest == ["len"]:
            values[name] = [entries[f"{prefix}:{name}:{k}"] for k in range(int(entries[key]))]
    return values


def load(case_id: str):
    """(model path, feeds, expected outputs in graph order, metadata dict)."""
    base = os.path.join(CORPUS, *case_id.split("/"))
    with np.load(base + ".npz", allow_pickle=False) as entries:
        meta = json.loads(str(entries["meta"]))
        feeds, outputs = unpack(entries, "in"), unpack(entries, "out")
    outputs = {name: outputs[name] for name in meta["outputs"]}
    return base + ".onnx", feeds, outputs, meta


def differences(expected: dict, actual: dict):
    """Output by output, compared as the differential tester compares (sequences by length
    then element-wise, optionals by presence then value, floats with its tolerance)."""
    from lazyloop.difftest.comparing import compare
    return compare(expected, {}, actual)
