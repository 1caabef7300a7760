"""The tester's data in the command line's report: a root-cause key written as one line in the
JSON findings, the isolated child's deaths as crash/oom outcomes with their signal, and a
campaign cut short (--max-time) reported as partial, also when tallies of shards merge.

rules: onnx/loop, trip/count
"""
import time

import pytest

import lazyloop.difftest as dt
from lazyloop.difftest.campaign import Tally, explore
from lazyloop.difftest.campaign import campaign_strategy
from lazyloop.difftest.checking import Checker
from lazyloop.difftest.grouping import key_text
from lazyloop.difftest.schema import check_document, crash_signal, outcome_of

pytest.importorskip("onnx")
pytest.importorskip("hypothesis")


def test_root_cause_key_is_one_line():
    key = ("onnx", ("Loop", "Scan"), "rows", "0123456789")
    assert key_text(key) == "onnx | Loop+Scan | rows | case 0123456789"
    assert key_text(("core", (), "missing-output", "?")) == "core | - | missing-output | case ?"


def test_json_findings_carry_the_root_cause_key():
    # the planted fault (M + 1 trips) on lazyloop's own frontend, in this process
    report = dt.check(dt.TripCountPlusOne(dt.backend("lazyloop")), max_examples=30, seed=1,
                      kinds=["onnx-loop"], shrink=False, isolate=False)
    doc = check_document(report)
    assert doc["findings"]
    for d, f in zip(report.disagreements, doc["findings"]):
        assert f["root_cause"] == key_text(d.root_cause)
        assert f["root_cause"].startswith("onnx | Loop | ")
        assert f["outcome"] == "disagree" and f["crash_signal"] is None


class _Died:
    def __init__(self, error):
        self.error, self.outcome = error, None


def test_isolation_deaths_are_crash_and_oom():
    died = _Died("BackendCrashed: the backend's process died (signal SIGSEGV)")
    assert outcome_of(died) == "crash" and crash_signal(died) == "SIGSEGV"
    killed = _Died("BackendCrashed: the backend's process passed its memory limit of 64 MiB "
                   "while running (killed)")
    assert outcome_of(killed) == "oom" and crash_signal(killed) is None


def test_a_deadline_stops_exploring_and_merged_tallies_stay_partial():
    b = dt.backend("lazyloop")
    _, strategy = campaign_strategy(b, None, ["onnx-loop"])
    past = time.monotonic() - 1
    stopped = explore(Checker(b), strategy, 0, range(5), deadline=past)
    assert stopped.stopped == "max-time" and stopped.generated == 0
    whole = explore(Checker(b), strategy, 0, range(5, 8))
    assert whole.stopped is None and whole.generated == 3
    merged = Tally().merge(whole).merge(stopped)
    assert merged.stopped == "max-time" and merged.generated == 3
    report = dt.check(b, max_examples=5, seed=0, kinds=["onnx-loop"], isolate=False,
                      max_seconds=0)
    assert report.stopped == "max-time" and report.generated == 0
