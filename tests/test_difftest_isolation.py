"""The differential tester survives any backend: a user backend that aborts its process, runs
out of memory, hangs or starts slowly is run in a forked child, and what kills the child is a
finding; backends are named from the command line as module:factory or by an entry point.

rules: onnx/loop, onnx/scan9
"""
import os
import subprocess
import sys
from pathlib import Path

import pytest

import lazyloop.difftest as dt
from tests import planted

pytest.importorskip("onnx")
pytest.importorskip("hypothesis")
ROOT = Path(__file__).resolve().parents[1]


def test_a_user_backend_that_aborts_does_not_stop_check():
    # rule: onnx/scan9 -- every model with a Scan kills the backend's process (SIGABRT)
    report = dt.check(planted.AbortsOnScan(), max_examples=30, seed=0,
                      kinds=["onnx-loop", "onnx-scan9"], shrink=False)
    assert report.generated == 30
    assert report.by_kind["onnx-scan9"] > 0 and report.by_kind["onnx-loop"] > 0
    crashes = [d for d in report.disagreements if "SIGABRT" in (d.error or "")]
    assert crashes, report.summary()
    assert all(d.root_cause[1] == ("Scan",) for d in crashes)
    # the Loop programs ran in fresh children after each crash, and agree
    assert report.agreements == report.by_kind["onnx-loop"]
    assert report.instances == report.by_kind["onnx-scan9"]


def test_module_factory_names_a_backend_made_in_the_child():
    b = dt.Isolated("tests.planted:AbortsOnScan")
    try:
        assert b.name == "aborts-on-scan" and b.formats == ("onnx",)
        assert b._proc.pid != os.getpid()
    finally:
        b.close()


def test_out_of_memory_is_a_finding():
    own = dt.resident_mb(os.getpid())
    b = dt.Isolated(planted.Hungry(600), timeout=60, memory_mb=own + 200)
    report = dt.check(b, max_examples=1, seed=0, kinds=["onnx-loop"], shrink=False)
    b.close()
    [d] = report.disagreements
    assert "memory limit" in d.error


def test_a_hang_is_a_finding_and_start_up_has_its_own_time_limit():
    # 2 s to start, 1 s per program: the start-up does not count against the program
    b = dt.Isolated(planted.SlowStart, timeout=5, startup_timeout=30)
    try:
        report = dt.check(b, max_examples=3, seed=0, kinds=["onnx-loop"], shrink=False)
    finally:
        b.close()
    assert report.agreements == 3
    with pytest.raises(dt.BackendStartFailed):
        dt.Isolated(planted.SlowStart, startup_timeout=0.5)
    hung = dt.check(planted.Hungry(1), max_examples=1, seed=0, kinds=["onnx-loop"],
                    shrink=False, timeout=1)
    assert "no answer within 1 s" in hung.disagreements[0].error


def test_isolate_false_runs_in_this_process():
    pids = []

    class Recorder:
        name, format, formats = "recorder", "onnx", ("onnx",)

        def run(self, model, feeds):
            pids.append(os.getpid())
            return dt.backend("lazyloop").run(model, feeds)
    dt.check(Recorder(), max_examples=3, seed=0, kinds=["onnx-loop"], shrink=False,
             isolate=False)
    assert pids == [os.getpid()] * 3


def test_counts_say_how_many_programs_ran():
    report = dt.check(planted.RefusesAll(), max_examples=10, seed=0, shrink=False)
    assert report.examples == 10 and report.ran == 0 and report.unsupported_count == 10
    assert "ran (not refused)" in report.summary()


def test_an_internal_error_while_compiling_is_a_finding_not_a_refusal():
    report = dt.check(planted.FailsToCompile(), max_examples=5, seed=0, shrink=False)
    assert report.unsupported_count == 0 and report.instances == 5
    assert "LoadFailed" in report.disagreements[0].error
    assert dt.says_unsupported(RuntimeError("[ONNXRuntimeError] : 9 : NOT_IMPLEMENTED : "
                                            "Could not find an implementation for Loop(21)"))
    assert dt.says_unsupported(NotImplementedError("Scan"))
    assert not dt.says_unsupported(RuntimeError("Assertion `rank >= 0` failed"))
    assert not dt.says_unsupported(RuntimeError("[ONNXRuntimeError] : 1 : FAIL : bad shape"))


def test_entry_point_group_registers_a_backend_name(tmp_path, monkeypatch):
    dist = tmp_path / "planted_backends-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: planted-backends\n"
                                   "Version: 0.1\n")
    (dist / "entry_points.txt").write_text("[lazyloop.backends]\n"
                                           "loop-plus-one = tests.planted:loop_plus_one\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    b = dt.backend("loop-plus-one")
    assert b.name == "lazyloop+trip-count-plus-one"


def test_cli_check_takes_module_factory():
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    p = subprocess.run([sys.executable, "-m", "lazyloop", "check", "--backend",
                        "tests.planted:loop_plus_one", "--examples", "20", "--seed", "0",
                        "--kind", "onnx-loop", "--no-shrink", "--quiet"],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    # exit status 1: the planted fault is a finding that counts (spec/52's exit statuses)
    assert p.returncode == 1, p.stderr
    assert "lazyloop+trip-count-plus-one" in p.stdout
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("disagreeing examples")]
    assert int(lines[0].split()[-1]) > 0
    bad = subprocess.run([sys.executable, "-m", "lazyloop", "check", "--backend",
                          "no_such_module:factory", "--quiet"], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "no_such_module" in bad.stderr
