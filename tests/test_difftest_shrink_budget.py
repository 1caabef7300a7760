"""Shrinking is bounded and can be interrupted: hanging candidates run with a shorter time
limit and stop a signature after a few, wall time is capped per finding and for the whole
stage, Ctrl-C keeps what was reached and leaves the rest unshrunk; every finding says why its
shrinking ended (spec/51-difftest.md, "Shrinking with hypothesis, reproducibly").

rules: onnx/loop
"""
import json
import os
import signal
import subprocess
import sys

import pytest

import lazyloop.difftest as dt
from lazyloop.difftest.campaign import explore, finish
from lazyloop.difftest.campaign import campaign_strategy
from lazyloop.difftest.checking import Checker
from lazyloop.difftest.schema import check_document, judge
from lazyloop.difftest.shrinking import INTERRUPTED, ShrinkBudget, hang_limit
from tests import planted

pytest.importorskip("onnx")
pytest.importorskip("hypothesis")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_hang_limit_is_a_margin_over_the_slowest_answer_within_the_timeout():
    # 10 x the slowest answer, at least a tenth of the timeout, never above it (by hand)
    assert hang_limit(60.0, 0.5) == 6.0      # max(10 * 0.5, 6.0)
    assert hang_limit(60.0, 2.0) == 20.0     # max(10 * 2.0, 6.0)
    assert hang_limit(60.0, 10.0) == 60.0    # 100 s capped at the timeout
    assert hang_limit(1.0, 0.0) == 0.1       # nothing answered: a tenth of the timeout


def test_hanging_candidates_run_with_the_shorter_limit_and_stop_after_the_hang_budget(tmp_path):
    # rule: onnx/loop -- every Loop with a carried value hangs; 2 programs explored at the 1 s
    # timeout, then the shrinker may try exactly 1 new candidate that hangs, killed at 0.1 s
    # (nothing answered: hang_limit(1, 0) = 0.1); the model is not minimised after that
    log = tmp_path / "runs.txt"
    runner = dt.Isolated(planted.SleepsOnLoop(str(log), carried_only=True), timeout=1.0)
    try:
        _, strategy = campaign_strategy(runner, kinds=["onnx-loop"])
        checker = Checker(runner)
        tally = explore(checker, strategy, 0, range(2))
        assert tally.instances == 2 and len(tally.first_seen) == 1
        report = finish(tally, checker, strategy, runner.name, 0, True,
                        ShrinkBudget(steps=300, seconds=None, total_seconds=None, hangs=1))
        assert runner.timeout == 1.0  # the shorter limit was only for shrinking
    finally:
        runner.close()
    errors = [o.error for o in checker.memo.values() if o.error]
    assert sum("no answer within 1 s" in e for e in errors) == 2       # explored
    assert sum("no answer within 0.1 s" in e for e in errors) == 1     # shrink candidate
    ran = len(checker.memo) - 2  # the simplest programs and candidates that did not hang
    assert len(log.read_text().splitlines()) == 2 + ran  # nothing else reached the backend
    [d] = report.disagreements
    assert d.shrinking == "hangs"
    finding = judge(check_document(report))["findings"][0]
    assert finding["outcome"] == "hang" and finding["shrinking"] == "hangs"
    assert "shrunk: too many of its candidates timed out" in dt.case_readme("c", d)


@pytest.mark.parametrize("option", ["shrink_seconds", "shrink_total_seconds"])
def test_a_spent_wall_time_budget_leaves_findings_unshrunk_and_says_so(option):
    # rule: onnx/loop -- a budget of 0 s is spent before the first candidate
    report = dt.check(planted.loop_plus_one(), max_examples=30, seed=1, kinds=["onnx-loop"],
                      isolate=False, **{option: 0})
    assert report.disagreements and report.stopped is None
    assert all(d.shrinking == "time" and not d.shrunk for d in report.disagreements)
    assert "[shrinking cut: time]" in report.summary()
    assert "not shrunk: its wall-time budget was spent" in dt.case_readme(
        "c", report.disagreements[0])


def test_steps_and_a_complete_shrink_are_told_apart():
    # rule: onnx/loop -- no step: cut by the step budget; the default: the shrinker's end
    cut = dt.check(planted.loop_plus_one(), max_examples=30, seed=1, kinds=["onnx-loop"],
                   isolate=False, shrink_steps=0)
    whole = dt.check(planted.loop_plus_one(), max_examples=30, seed=1, kinds=["onnx-loop"],
                     isolate=False)
    assert {d.shrinking for d in cut.disagreements} == {"steps"}
    assert {d.shrinking for d in whole.disagreements} == {"complete"}
    assert all(d.shrunk for d in whole.disagreements)


def test_ctrl_c_before_shrinking_leaves_every_finding_unshrunk_and_the_run_interrupted():
    # rule: onnx/loop -- the flag the command line's Ctrl-C handler sets
    b = planted.loop_plus_one()
    _, strategy = campaign_strategy(b, kinds=["onnx-loop"])
    checker = Checker(b)
    tally = explore(checker, strategy, 1, range(30))
    ran = len(checker.memo)
    INTERRUPTED.set()
    try:
        report = finish(tally, checker, strategy, b.name, 1, True)
    finally:
        INTERRUPTED.clear()
    assert len(checker.memo) == ran  # no candidate ran after Ctrl-C
    assert report.stopped == "interrupted" and report.disagreements
    assert all(d.shrinking == "interrupted" and not d.shrunk for d in report.disagreements)
    document = judge(check_document(report))
    assert not document["complete"] and document["verdict"]["exit_status"] == 1
    # nothing that counts: an interrupted run exits 130 (a fuzzer's convention), not 0
    assert judge(check_document(report), "never")["verdict"]["exit_status"] == 130


def test_ctrl_c_while_shrinking_writes_the_reports_and_cases_and_exits_1(tmp_path):
    # rule: onnx/loop -- a slow backend (0.3 s a program): Ctrl-C once shrinking has started
    env = dict(os.environ, PYTHONPATH=ROOT)
    proc = subprocess.Popen(
        [sys.executable, "-m", "lazyloop", "check", "--backend", "tests.planted:SlowLoopPlusOne",
         "--examples", "12", "--seed", "1", "--kind", "onnx-loop", "--shrink-steps", "100000",
         "--json", "r.json", "--junit", "j.xml", "--out", "out"],
        cwd=tmp_path, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    seen = []
    for line in proc.stderr:
        seen.append(line)
        if "shrinking finding 1/" in line:
            proc.send_signal(signal.SIGINT)
            break
    out, err = proc.communicate(timeout=120)
    err = "".join(seen) + err
    assert proc.returncode == 1, err
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["stopped"] == "interrupted" and not doc["complete"]
    assert doc["findings"] and doc["findings"][0]["shrinking"] == "interrupted"
    assert doc["verdict"]["exit_status"] == 1
    assert (tmp_path / "j.xml").exists() and (tmp_path / "out" / "report.json").exists()
    cases = [c for c in os.listdir(tmp_path / "out") if c.startswith("case_")]
    assert len(cases) == len(doc["findings"])
    readme = (tmp_path / "out" / cases[0] / "README.md").read_text()
    assert "Ctrl-C" in readme
    [note] = [x for x in err.splitlines() if "interrupted (Ctrl-C)" in x]
    assert note.startswith("lazyloop check: interrupted (Ctrl-C) after 12 program(s)")
    assert "Traceback" not in err


def test_the_isolated_child_leaves_ctrl_c_to_the_parent():
    # rule: onnx/loop -- Ctrl-C reaches the whole process group; the child must not die of
    # it (its death would be reported as a crash of the backend)
    import time
    b = dt.Isolated("lazyloop")
    try:
        os.kill(b._proc.pid, signal.SIGINT)
        time.sleep(0.3)
        assert b._proc.is_alive() and b.restarts == 0
    finally:
        b.close()


def test_the_progress_line_ticks_while_one_finding_is_shrunk():
    # rule: onnx/loop -- besides one call per finding, one per candidate run while shrinking
    calls = []
    report = dt.check(planted.loop_plus_one(), max_examples=30, seed=1, kinds=["onnx-loop"],
                      isolate=False, progress=lambda stage, done, total, tally:
                      calls.append((stage, done, total)))
    shrinking = [c for c in calls if c[0] == "shrink"]
    signatures = {total for _, _, total in shrinking}
    assert len(signatures) == 1 and len(shrinking) > signatures.pop()  # more than 1 each
    assert calls[-1][0] == "done" and report.disagreements
