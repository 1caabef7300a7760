"""The committed campaign cases (findings/cases-BACKEND-seedS.tar.gz), unpacked once per test
session, and each case folder as a subject lazyloop's tester can check again."""
import os
import tarfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FINDINGS = os.path.join(ROOT, "findings")
BACKENDS = ("onnxruntime", "onnx-reference", "openvino", "tract")
SEEDS = (0, 7)
PACKAGES = {"onnxruntime": "onnxruntime", "onnx-reference": "onnx", "openvino": "openvino",
            "tract": "tract"}


def out_folder(backend: str, seed: int) -> str:
    """The campaign's --out folder: BACKEND for seed 0 (as the first reports), BACKEND-seedS
    for the others."""
    return backend if seed == 0 else f"{backend}-seed{seed}"


def unpack(backend: str, into: str, seed: int = 0) -> str:
    """The folder holding the campaign's case_* (unpacked under `into` on first use)."""
    folder = os.path.join(into, out_folder(backend, seed))
    if not os.path.isdir(folder):
        with tarfile.open(os.path.join(FINDINGS, f"cases-{backend}-seed{seed}.tar.gz")) as tar:
            tar.extractall(into, filter="data")
    return folder


def cases(backend: str, into: str, seed: int = 0) -> list:
    folder = unpack(backend, into, seed)
    return sorted(os.path.join(folder, c) for c in os.listdir(folder) if c.startswith("case_"))


def case_subject(case: str):
    """The case folder's model and inputs as a subject of kind "reduced"."""
    from lazyloop.difftest.cases import read_case
    from lazyloop.difftest.reducing import ReducedModel
    from lazyloop.difftest.subject import Subject
    saved = read_case(case)
    feeds = {k: np.array(v, copy=True) for k, v in saved.data_sets[0].inputs.items()}
    if saved.format == "onnx":
        with open(saved.model_path, "rb") as f:
            payload = f.read()
    else:
        with open(saved.model_path, "rb") as f, \
                open(saved.model_path[:-4] + ".bin", "rb") as w:
            payload = (f.read(), w.read())
    return Subject("reduced", saved.format,
                   ReducedModel((saved.format, payload, tuple(sorted(feeds.items())))))
