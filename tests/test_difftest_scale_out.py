"""Scaling a campaign out (difftest/parallel.py, spec/51 "Throughput and scaling out"): a
worker keeps its isolated backend child from shard to shard, and a campaign on workers
reports its costs as process-seconds. (That 1 and 2 workers find the same is
tests/test_difftest_findings.py's.) Structure only: no speed is asserted.

rules: onnx/loop
"""
import os

import pytest

import lazyloop.difftest as dt

pytest.importorskip("onnx")
pytest.importorskip("hypothesis")
pytest.importorskip("distributed")

LOG = "LAZYLOOP_TEST_PID_LOG"


class PidLogging:
    """lazyloop's own answers; each run notes the process it ran in (in the file $LOG)."""

    name = "pid-logging"
    format = "onnx"
    formats = ("onnx",)

    def __init__(self):
        self.inner = dt.backend("lazyloop")

    def run(self, model, feeds):
        with open(os.environ[LOG], "a") as f:
            f.write(f"{os.getpid()}\n")
        return self.inner.run(model, feeds)


def test_a_worker_keeps_its_backend_child_from_shard_to_shard(tmp_path, monkeypatch):
    # rule: onnx/loop -- 30 Loop programs are 3 shards on one worker: one child ran them all
    log = tmp_path / "pids"
    monkeypatch.setenv(LOG, str(log))
    report = dt.check("tests.test_difftest_scale_out:PidLogging", max_examples=30, seed=0,
                      kinds=["onnx-loop"], shrink=False, workers=1)
    assert report.agreements == report.examples == 30
    pids = log.read_text().split()
    assert len(pids) == 30 and len(set(pids)) == 1
    assert int(pids[0]) != os.getpid()
    doc = report.costs.document(report.seconds, report.processes)
    assert doc["processes"] == 1
    assert sum(doc["parts"].values()) <= doc["wall"] + 1e-3
    assert doc["parts"]["backend"] > 0 and doc["parts"]["generation"] > 0
