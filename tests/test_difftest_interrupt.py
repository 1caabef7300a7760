"""Ctrl-C during `lazyloop check`: the first keeps what was found and writes a report whose
verdicts are those of an uninterrupted run of the programs that finished; a second stops at
once and writes nothing (spec/52-report-schema.md, "Exit statuses").

rules: onnx/loop, onnx/scan9
"""
import json
import os
import signal
import subprocess
import sys
import time

import pytest

pytest.importorskip("onnx")
pytest.importorskip("hypothesis")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENV = dict(os.environ, PYTHONPATH=ROOT)


def start(tmp_path, backend, *options):
    return subprocess.Popen(
        [sys.executable, "-m", "lazyloop", "check", "--backend", backend, *options,
         "--json", "r.json", "--out", "out"],
        cwd=tmp_path, env=ENV, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def interrupt_while_shrinking(proc, times: int) -> str:
    """Send `times` SIGINTs (a twentieth of a second apart) once shrinking has begun; the
    whole stderr."""
    seen = []
    for line in proc.stderr:
        seen.append(line)
        if "shrinking finding 1/" in line:
            for _ in range(times):
                proc.send_signal(signal.SIGINT)
                time.sleep(0.05)
            break
    _, err = proc.communicate(timeout=300)
    return "".join(seen) + err


def test_a_second_ctrl_c_stops_at_once_without_a_report(tmp_path):
    # rule: onnx/loop -- a slow backend (0.3 s a program), two Ctrl-C while shrinking
    proc = start(tmp_path, "tests.planted:SlowLoopPlusOne", "--examples", "12", "--seed",
                 "1", "--kind", "onnx-loop", "--shrink-steps", "100000")
    err = interrupt_while_shrinking(proc, 2)
    assert proc.returncode == 130, err
    assert not (tmp_path / "r.json").exists()
    assert not (tmp_path / "out" / "report.json").exists()
    assert not [c for c in os.listdir(tmp_path / "out") if c.startswith("case_")]
    [line] = [x for x in err.splitlines() if "second Ctrl-C" in x]
    assert line.startswith("lazyloop check: stopped at once") and "Traceback" not in err


def verdicts(document) -> tuple:
    """(symptoms of the findings that count, symptoms and readings of those explained)."""
    counted = sorted(f["symptom"] for f in document["findings"] if f["counts"])
    explained = sorted((f["symptom"], f["explained_by"]) for f in document["findings"]
                       if f["ambiguity"])
    return counted, explained


def test_an_interrupted_report_carries_the_verdicts_of_an_uninterrupted_run(tmp_path):
    # rule: onnx/scan9 -- two faults: saturating integers (explained by A30) and Scan
    # outputs plus one (counts). Interrupted while the first finding shrinks, the report
    # keeps the others unshrunk, yet each is explained, or counts, as in a full run of the
    # same 12 programs
    options = ["--examples", "12", "--seed", "1", "--kind", "onnx-long-loop", "--kind",
               "onnx-scan9"]
    (tmp_path / "full").mkdir()
    (tmp_path / "cut").mkdir()
    full = start(tmp_path / "full", "tests.planted:SlowSaturatingScansPlusOne", *options)
    _, err = full.communicate(timeout=600)
    assert full.returncode == 1, err
    cut = start(tmp_path / "cut", "tests.planted:SlowSaturatingScansPlusOne", *options)
    err = interrupt_while_shrinking(cut, 1)
    assert cut.returncode == 1, err
    whole = json.loads((tmp_path / "full" / "r.json").read_text())
    partial = json.loads((tmp_path / "cut" / "r.json").read_text())
    assert partial["stopped"] == "interrupted" and whole["stopped"] is None
    assert partial["programs"]["generated"] == whole["programs"]["generated"] == 12
    assert verdicts(partial) == verdicts(whole) == (["offset"], [("offset", "A30=saturate")])
