"""The committed campaign cases (findings/cases-BACKEND-seedS.tar.gz), unpacked once per test
session, each case folder as a subject lazyloop's tester can check again, and the check that
a case shows the symptom judged by hand and is 1-minimal."""
import os
import subprocess
import sys
import tarfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FINDINGS = os.path.join(ROOT, "findings")
BACKENDS = ("onnxruntime", "onnx-reference", "openvino", "tract")
SEEDS = (0, 7)
PACKAGES = {"onnxruntime": "onnxruntime", "onnx-reference": "onnx", "openvino": "openvino",
            "tract": "tract"}
# the engines users deploy (findings/faults-engines.json), with the package whose absence
# skips an engine's part
ENGINE_PACKAGES = {"iree": "iree.runtime", "mnn": "MNN", "onnxslim": "onnxslim",
                   "onnxsim": "onnxsim", "onnxoptimizer": "onnxoptimizer"}


def out_folder(backend: str, seed: int) -> str:
    """The campaign's --out folder: BACKEND for a built-in backend's seed 0 (as the first
    reports), BACKEND-seedS for the others."""
    return backend if seed == 0 and backend in BACKENDS else f"{backend}-seed{seed}"


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


def check_case(checker, case: str, entry: dict) -> None:
    """Run the case folder again on the checker's backend: it shows the symptom and the
    explanation `entry` (its hand-judged record) gives, and no node can go (rewired through
    its first input) with the model still valid and that symptom (one_minimal_violations).
    With `answer_changed` (a fault of lazyloop's, fixed since) lazyloop and the backend agree
    now."""
    from lazyloop.difftest.reducing import one_minimal_violations
    subject = case_subject(case)
    out = checker.outcome(subject)
    checker.attribute(subject, out)
    if entry.get("answer_changed"):
        assert out.status == "agree", (case, out.status, out.symptom)
        return
    # an engine that answers with memory it never wrote shows a symptom of one of the listed
    # kinds with any detail (zeros, NaN, ...), or none when that memory happens to hold the
    # right values (each seen in clean-clone runs)
    if "why_symptoms" in entry:
        if out.status == "agree":
            return
        kinds = {k.split(":")[0] for k in entry["symptoms"]}
        assert out.symptom.kind in kinds, (case, str(out.symptom))
    else:
        assert str(out.symptom) in entry.get("symptoms", [entry["symptom"]]), \
            (case, str(out.symptom))
    assert out.reading == entry.get("explained_by"), (case, out.reading)
    assert one_minimal_violations(subject, checker) == [], case


def run_repro(case: str, timeout: int = 300) -> subprocess.CompletedProcess:
    """The case folder's repro.py run in a fresh interpreter that cannot import lazyloop."""
    blocked = ("import sys; sys.modules['lazyloop'] = None; sys.argv = ['repro.py']; "
               "exec(compile(open('repro.py').read(), 'repro.py', 'exec'), "
               "{'__file__': 'repro.py', '__name__': '__main__'})")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run([sys.executable, "-I", "-c", blocked], cwd=case, env=env,
                          capture_output=True, text=True, timeout=timeout)


def check_repro(backend: str, case: str, outcome: str) -> None:
    """The case's repro.py, in an interpreter that cannot import lazyloop: exit status 1 (the
    backend differs, fails or lost an input; no traceback), or the signal of a crash; never a
    failure of the script itself."""
    done = run_repro(case)
    said = done.stdout + done.stderr
    if outcome == "crash":  # IREE's script runs its compiler as a tool, and says it died
        assert done.returncode < 0 or done.returncode == 1 and "Error code: -" in said, \
            (case, said)
        return
    assert done.returncode == 1, (case, said)
    assert "Traceback" not in said, case
    # the engines' scripts end on an engine's own failure with its message: "iree: the model
    # did not compile: ...", "mnn: the converter failed", "onnxsim lost the model's input(s)"
    assert any(sign in said for sign in ("DIFFERS", f"{backend} failed:", f"{backend}: ",
                                         "lost input", "lost the model's input")), (case, said)
