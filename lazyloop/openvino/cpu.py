"""Running models on OpenVINO's CPU plugin, isolated in a child process.

The CPU plugin is the system under test of the differential tests, and some models crash it
(a floating point exception kills the process). Models therefore run in a worker process:
each case is saved as IR, the worker compiles it once and runs every feed set on the same
compiled model (so state kept between runs shows), and a case that kills the worker is
reported as a crash while the remaining cases run in a fresh worker.

    results = run_cases([(model, [feeds, ...]), ...])   # -> [CaseResult, ...]
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from typing import List, Optional, Sequence

import attrs
import numpy as np


@attrs.frozen
class RunResult:
    status: str                      # "ok" or "run-error"
    outputs: Optional[list] = None   # arrays in model output order
    message: str = ""


@attrs.frozen
class CaseResult:
    status: str                      # "ok", "compile-error", "crash", "timeout"
    runs: tuple = ()                 # one RunResult per feed set (status "ok")
    message: str = ""


def _worker(root: str, names: Sequence[str]) -> None:
    """The child: compile and run each case, writing results next to it."""
    import openvino as ov
    core = ov.Core()
    for name in names:
        case = os.path.join(root, name)
        open(os.path.join(case, "started"), "w").close()
        runs = []
        try:
            compiled = core.compile_model(core.read_model(os.path.join(case, "model.xml")), "CPU")
        except Exception as exc:  # noqa: BLE001 -- the plugin's refusal is data
            with open(os.path.join(case, "result.json"), "w") as f:
                json.dump({"status": "compile-error", "message": str(exc)}, f)
            continue
        open(os.path.join(case, "compiled"), "w").close()
        k = 0
        while os.path.exists(os.path.join(case, f"feeds{k}.npz")):
            open(os.path.join(case, f"running{k}"), "w").close()
            with np.load(os.path.join(case, f"feeds{k}.npz")) as data:
                feeds = {key: data[key] for key in data.files}
            try:
                result = compiled(feeds)
                arrays = [np.array(result[out], copy=True) for out in compiled.outputs]
                np.savez(os.path.join(case, f"out{k}.npz"),
                         **{f"o{i}": a for i, a in enumerate(arrays)})
                runs.append({"status": "ok"})
            except Exception as exc:  # noqa: BLE001
                runs.append({"status": "run-error", "message": str(exc)})
            k += 1
        with open(os.path.join(case, "result.json"), "w") as f:
            json.dump({"status": "ok", "runs": runs}, f)


def _read_case(case: str) -> Optional[CaseResult]:
    path = os.path.join(case, "result.json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        data = json.load(f)
    if data["status"] != "ok":
        return CaseResult(data["status"], (), data.get("message", ""))
    runs = []
    for k, run in enumerate(data["runs"]):
        if run["status"] != "ok":
            runs.append(RunResult("run-error", None, run["message"]))
            continue
        with np.load(os.path.join(case, f"out{k}.npz")) as out:
            runs.append(RunResult("ok", [out[f"o{i}"] for i in range(len(out.files))]))
    return CaseResult("ok", tuple(runs))


def _stage(case: str) -> str:
    """Where a worker stopped answering: compiling, or running feed set k."""
    if not os.path.exists(os.path.join(case, "compiled")):
        return "while compiling"
    k = 0
    while os.path.exists(os.path.join(case, f"running{k + 1}")):
        k += 1
    return f"while running feed set {k}"


def run_cases(cases, timeout: float = 120.0) -> List[CaseResult]:
    """Run [(openvino.Model, [feeds, ...]), ...] on the CPU plugin; one CaseResult each."""
    import openvino as ov
    with tempfile.TemporaryDirectory(prefix="lazyloop-cpu-") as root:
        names = []
        for k, (model, feed_sets) in enumerate(cases):
            name = f"case{k}"
            os.makedirs(os.path.join(root, name))
            ov.save_model(model, os.path.join(root, name, "model.xml"), compress_to_fp16=False)
            for r, feeds in enumerate(feed_sets):
                np.savez(os.path.join(root, name, f"feeds{r}.npz"),
                         **{key: np.asarray(v) for key, v in feeds.items()})
            names.append(name)
        results: dict = {}
        pending = list(names)
        while pending:
            code = ("import sys; from lazyloop.openvino.cpu import _worker; "
                    "_worker(sys.argv[1], sys.argv[2:])")
            env = dict(os.environ)
            package_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
            env["PYTHONPATH"] = package_root + os.pathsep + env.get("PYTHONPATH", "")
            try:
                proc = subprocess.run([sys.executable, "-c", code, root, *pending], env=env,
                                      capture_output=True, text=True, timeout=timeout)
                ended = f"worker exit status {proc.returncode}: {proc.stderr.strip()[-300:]}"
                timed_out = False
            except subprocess.TimeoutExpired:
                ended, timed_out = f"no answer within {timeout} s", True
            still = []
            for name in pending:
                case = os.path.join(root, name)
                got = _read_case(case)
                if got is not None:
                    results[name] = got
                elif os.path.exists(os.path.join(case, "started")):
                    results[name] = CaseResult("timeout" if timed_out else "crash", (),
                                               f"{_stage(case)}: {ended}")
                else:
                    still.append(name)
            if len(still) == len(pending):  # the worker did nothing: do not loop forever
                for name in still:
                    results[name] = CaseResult("crash", (), ended)
                still = []
            pending = still
        return [results[name] for name in names]


__all__ = ["RunResult", "CaseResult", "run_cases"]
