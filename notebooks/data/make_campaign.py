"""Write the campaigns notebook 7 replays, with the command line itself.

    PYTHONPATH=. python notebooks/data/make_campaign.py

Each campaign is one seeded `lazyloop check ... --out notebooks/data/NAME` run, so what the
notebook reads is exactly what the command line leaves behind: `NAME/report.json` (the
versioned report of spec/52-report-schema.md) and one case folder per finding (`model.onnx`
or `model.xml`, `test_data_set_0/`, README.md, repro.py). To keep the repository lean, only
the case folders the notebook opens are kept (`KEEP` below); the report still names the others.

The shrinking is bounded by steps, not seconds, so a rerun with the same lazyloop and
backend versions gives the same findings; the committed reports are what notebook 7 reads.
"""
from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent

# name -> the arguments of `lazyloop check` (besides --out NAME --quiet)
CAMPAIGNS = {
    # lazyloop's own ONNX frontend with two planted faults (lazyloop/teach/planted.py)
    "planted": ["--backend", "lazyloop.teach.planted:two_faults", "--kind", "onnx-loop",
                "--kind", "onnx-scan9", "--examples", "100", "--seed", "0"],
    "onnxruntime": ["--backend", "onnxruntime", "--examples", "200", "--seed", "0"],
    "openvino": ["--backend", "openvino", "--format", "openvino", "--examples", "40",
                 "--seed", "1"],
}

# name -> which findings' case folders the notebook opens (the others are deleted)
KEEP = {
    "planted": lambda f: True,
    "onnxruntime": lambda f: f["kind"] == "onnx-scan9",
    "openvino": lambda f: f["ambiguity"] is not None,
}


def run(name: str, args) -> float:
    """One campaign into HERE/name (replacing an earlier one); returns its wall time."""
    out = HERE / name
    if out.exists():
        shutil.rmtree(out)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    started = time.monotonic()
    status = subprocess.run([sys.executable, "-m", "lazyloop", "check", *args, "--out", name,
                             "--quiet"], cwd=HERE, env=env, stdout=subprocess.DEVNULL).returncode
    seconds = time.monotonic() - started
    if status not in (0, 1):  # 1: findings count, which is what we are after
        raise SystemExit(f"lazyloop check for {name} ended with status {status}")
    prune(name)
    return seconds


def prune(name: str) -> None:
    import json
    report = json.loads((HERE / name / "report.json").read_text())
    for f in report["findings"]:
        if f["case"] and not KEEP[name](f):
            shutil.rmtree(HERE / name / f["case"])


def main():
    for name, args in CAMPAIGNS.items():
        seconds = run(name, args)
        print(f"{name}: {seconds:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
