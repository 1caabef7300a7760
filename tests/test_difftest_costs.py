"""What a campaign spends its time on (difftest/costs.py, spec/51 "What a campaign costs"):
every part present and non-negative, the parts adding up to at most the wall time, the
backend's own run timed where it runs, a hang counted apart, and the same split in `check
--json`. Structure only: no speed is asserted.

rules: onnx/loop
"""
import json
import subprocess
import sys
import time

import pytest

import lazyloop.difftest as dt
from lazyloop.difftest.costs import PARTS, Costs, overhead
from tests import planted

pytest.importorskip("onnx")
pytest.importorskip("hypothesis")


class Sleepy:
    """lazyloop's own answer after `seconds` of sleep (a backend whose work is known to
    take at least that long)."""

    name = "sleepy"
    format = "onnx"
    formats = ("onnx",)

    def __init__(self, seconds=0.05):
        self.seconds = seconds
        self.inner = dt.backend("lazyloop")

    def run(self, model, feeds):
        time.sleep(self.seconds)
        return self.inner.run(model, feeds)


def well_formed(doc: dict) -> None:
    assert set(doc["parts"]) == set(PARTS)
    assert all(s >= 0 for s in doc["parts"].values()) and doc["other"] >= 0
    # the backend's run that overlapped lazyloop's work on the next program is counted in
    # both: at most `overlapped` over the wall time
    assert 0 <= doc["overlapped"] <= doc["parts"]["backend"]
    assert sum(doc["parts"].values()) <= doc["wall"] * doc["processes"] + \
        doc["overlapped"] + 1e-3


def test_the_split_covers_every_part_and_adds_up_to_at_most_the_wall_time():
    # rule: onnx/loop -- each of 6 Loop programs runs on a backend that sleeps 50 ms first
    report = dt.check(Sleepy(0.05), max_examples=6, seed=0, kinds=["onnx-loop"],
                      shrink=False)
    doc = report.costs.document(report.seconds, report.processes)
    well_formed(doc)
    parts = doc["parts"]
    # the sleep is the backend's own run, timed in its child, not the transfer's
    assert parts["backend"] >= 0.05 * report.examples
    for part in ("generation", "export", "lowering", "expectation", "serialisation",
                 "transfer", "finishing"):
        assert parts[part] > 0, part
    assert parts["hangs"] == 0
    assert doc["overhead"] == pytest.approx(doc["wall"] / parts["backend"], rel=1e-2)


def test_a_hang_is_counted_apart_from_the_backends_work_and_lazyloops():
    report = dt.check(planted.Hungry(1), max_examples=2, seed=0, kinds=["onnx-loop"],
                      shrink=False, timeout=1)
    doc = report.costs.document(report.seconds, report.processes)
    well_formed(doc)
    # two programs, each waited for its full second from its sending -- less the time the
    # parent spent meanwhile on the next program (drawn and prepared while the backend runs)
    preparing = sum(doc["parts"][p] for p in ("generation", "export", "lowering",
                                               "expectation"))
    assert doc["parts"]["hangs"] + preparing >= 2 * 1.0
    assert doc["parts"]["backend"] < doc["parts"]["hangs"]
    assert doc["parts"]["starting"] > 0  # the second program needed a fresh child


def test_a_backend_run_in_this_process_is_all_backend():
    report = dt.check(Sleepy(0.02), max_examples=3, seed=0, kinds=["onnx-loop"],
                      shrink=False, isolate=False)
    parts = report.costs.seconds
    assert parts["backend"] >= 0.02 * report.examples
    assert parts["serialisation"] == parts["transfer"] == 0


def test_costs_merge_by_adding_and_the_overhead_leaves_hangs_out():
    a, b = Costs(), Costs()
    a.add("backend", 1.0)
    b.add("backend", 2.0)
    b.add("hangs", 3.0)
    a.merge(b)
    assert a.seconds["backend"] == 3.0 and a.seconds["hangs"] == 3.0
    assert overhead(9.0, a.seconds) == 2.0  # (9 - 3) / 3
    assert overhead(9.0, Costs().seconds) is None
    assert a.since(b).seconds["backend"] == 1.0


def test_check_json_carries_the_split(tmp_path):
    out = tmp_path / "r.json"
    done = subprocess.run([sys.executable, "-m", "lazyloop", "check", "--backend", "lazyloop",
                           "--examples", "3", "--kind", "onnx-loop", "--no-shrink",
                           "--json", str(out), "--quiet"], capture_output=True, text=True,
                          cwd=tmp_path, timeout=600)
    assert done.returncode in (0, 1), done.stderr
    doc = json.loads(out.read_text())["costs"]
    well_formed(doc)
    assert doc["processes"] == 1 and doc["overhead"] > 1


def test_the_backends_run_overlapping_lazyloops_work_is_counted_once_in_the_wall():
    # by hand: 5 s of expectation and 4 s of backend, 2 s of which ran meanwhile, in 10 s of
    # wall time: 7 s accounted for, 3 s other; the bench's text names the overlap apart
    from lazyloop.bench.throughput import split_text
    costs = Costs()
    costs.add("expectation", 5.0)
    costs.add("backend", 4.0)
    costs.add("overlapped", 2.0)
    doc = costs.document(10.0)
    assert doc["overlapped"] == 2.0 and doc["other"] == 3.0 and doc["overhead"] == 2.5
    assert "overlapped" not in doc["parts"]
    assert split_text(doc) == ("expectation 50%, backend 40%, other 30% "
                               "(backend overlapping lazyloop's work 20%)")
