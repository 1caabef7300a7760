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


@pytest.mark.parametrize("n,workers", [(1000, 2), (30, 1), (7, 4), (1, 2), (0, 2)])
def test_shards_cover_every_index_once_in_order_largest_first(n, workers):
    # rule: onnx/loop -- the shards are consecutive ranges over 0..n-1, never growing, at
    # most 50 programs, and the last ones small (so no worker waits long at the end)
    from lazyloop.difftest.parallel import shards
    parts = shards(n, workers)
    assert [i for r in parts for i in r] == list(range(n))
    sizes = [len(r) for r in parts]
    assert all(a >= b for a, b in zip(sizes, sizes[1:]))
    assert all(1 <= s <= 50 for s in sizes)
    if n >= 100:
        assert sizes[0] == 50 and sizes[-1] <= 2
        # the last quarter of the programs per worker comes in shards of at most a tenth
        tail = [s for r, s in zip(parts, sizes) if r.start >= n - n // (4 * workers)]
        assert max(tail) <= n // 40


class Slow(PidLogging):
    """lazyloop's own answers, a tenth of a second each."""

    name = "slow"

    def run(self, model, feeds):
        import time
        time.sleep(0.1)
        return self.inner.run(model, feeds)


def test_max_time_on_workers_keeps_what_the_running_shards_explored():
    # rule: onnx/loop -- 200 programs take 20 s; past 4 s each worker's shard stops at its
    # next program and comes back with what it explored (a first shard of 50 programs would
    # otherwise be cancelled, and nothing reported)
    report = dt.check("tests.test_difftest_scale_out:Slow", max_examples=200, seed=0,
                      kinds=["onnx-loop"], shrink=False, workers=1, max_seconds=4)
    assert report.stopped == "max-time"
    assert 0 < report.generated < 200
    assert report.agreements == report.examples == report.generated
