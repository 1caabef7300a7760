"""The checker's pipeline (checking.py `Checker.prepare/send/conclude`, isolation.py
`Isolated.send/receive`, spec/51 "What a campaign costs"): lazyloop prepares the next
program while the isolated backend answers the one before. The backend gets the same
programs in the same order as when each is checked alone, one at a time; an answer is
never judged against another program's expectation; a question left unanswered goes with
its child. Structure only: no speed is asserted.

rules: onnx/loop
"""
import hashlib
import os

import numpy as np
import pytest

import lazyloop.difftest as dt
from lazyloop.difftest.campaign import campaign_strategy
from lazyloop.difftest.shrinking import draw_program

pytest.importorskip("onnx")
pytest.importorskip("hypothesis")


class Logging:
    """lazyloop's own answer, each model it is given noted in `log` (a file: the backend runs
    in a child process) by a digest of its bytes, after `seconds` of sleep."""

    name = "logging"
    format = "onnx"
    formats = ("onnx",)

    def __init__(self, log, seconds=0.0):
        self.log, self.seconds = str(log), seconds
        self.inner = dt.backend("lazyloop")

    def run(self, model, feeds):
        import time
        with open(self.log, "a") as f:
            f.write(hashlib.sha256(model.SerializeToString()).hexdigest()[:16] + "\n")
        time.sleep(self.seconds)
        return self.inner.run(model, feeds)


def lines(path) -> list:
    return path.read_text().split() if path.exists() else []


def long_loop(start):
    from lazyloop.strategies.dialects import OnnxLongLoopRecipe
    recipe = OnnxLongLoopRecipe(dtype="int32", count=5, start=start, step=3)
    return dt.Subject("onnx-long-loop", "onnx", recipe.program())


def test_a_campaign_hands_the_backend_the_programs_one_by_one_in_index_order(tmp_path):
    # rule: onnx/loop -- the pipelined campaign against checking each program alone
    alone_log, campaign_log = tmp_path / "alone", tmp_path / "campaign"
    runner = dt.Isolated(Logging(alone_log))
    try:
        _, strategy = campaign_strategy(runner, kinds=["onnx-loop", "onnx-scan9"])
        checker = dt.Checker(runner)
        alone = [checker.outcome(draw_program(strategy, 0, i)[0]).status for i in range(8)]
    finally:
        runner.close()
    report = dt.check(Logging(campaign_log), max_examples=8, seed=0,
                      kinds=["onnx-loop", "onnx-scan9"], shrink=False)
    assert lines(campaign_log) == lines(alone_log) and lines(alone_log)
    assert report.agreements == alone.count("agree")


def test_each_answer_is_judged_against_its_own_program(tmp_path):
    # rule: onnx/loop -- two programs that differ only in a start value, the second
    # prepared while the backend answers the first: both agree (an answer judged against
    # the other program's expectation would differ by the start values' difference)
    first, second = long_loop(0), long_loop(7)
    assert first.key() != second.key()
    runner = dt.Isolated(Logging(tmp_path / "log"))
    try:
        checker = dt.Checker(runner)
        q1 = checker.prepare(first)
        checker.send(q1)
        q2 = checker.prepare(second)
        out1 = checker.conclude(q1)
        checker.send(q2)
        out2 = checker.conclude(q2)
    finally:
        runner.close()
    assert (out1.status, out2.status) == ("agree", "agree")
    assert any(not np.array_equal(q1.expected[k], q2.expected[k]) for k in q1.expected)
    assert len(lines(tmp_path / "log")) == 2


def test_a_program_equal_to_the_one_on_its_way_is_asked_once(tmp_path):
    # rule: onnx/loop -- the same program drawn twice in a row: one question, one outcome
    runner = dt.Isolated(Logging(tmp_path / "log"))
    try:
        checker = dt.Checker(runner)
        q1 = checker.prepare(long_loop(2))
        checker.send(q1)
        q2 = checker.prepare(long_loop(2))
        assert q2.remembered
        out1 = checker.conclude(q1)
        checker.send(q2)
        assert checker.conclude(q2) is out1
    finally:
        runner.close()
    assert len(lines(tmp_path / "log")) == 1


def test_a_question_left_unanswered_goes_with_its_child(tmp_path):
    # rule: onnx/loop -- a child still working on a discarded question is killed; the next
    # question is answered by a fresh child, with its own answer
    runner = dt.Isolated(Logging(tmp_path / "log", seconds=30))
    try:
        checker = dt.Checker(runner)
        checker.send(checker.prepare(long_loop(1)))
        pid = runner._proc.pid
        checker.discard()
        assert not runner.asked and runner._proc is None
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
        runner.timeout = 60
        fast = dt.Isolated(Logging(tmp_path / "log2"))
        try:
            assert dt.Checker(fast).outcome(long_loop(1)).status == "agree"
        finally:
            fast.close()
    finally:
        runner.close()


def test_the_backends_run_while_the_parent_worked_is_overlapped(tmp_path):
    # rule: onnx/loop -- the answer is there before the parent waits: all of the backend's
    # run overlapped the parent's work, and the answer is the one `run` gives
    subject = long_loop(4)
    runner = dt.Isolated(Logging(tmp_path / "log", seconds=0.05))
    try:
        runner.send(subject.model(), subject.feeds)
        assert runner.asked and runner.last_costs["transfer"] >= 0
        assert runner._conn.poll(60)  # the parent "works" until the answer has come
        answer = runner.receive()
        costs = dict(runner.last_costs)
        again = runner.run(subject.model(), subject.feeds)
    finally:
        runner.close()
    assert costs["backend"] >= 0.05
    # overlapped is min(the backend's run, the time from sending to receiving); the child
    # may start its clock before the parent notes the sending (the parent can be descheduled
    # between writing and reading the clock), so under load it may fall a little short of
    # the run, never past it, and never to the zero of an answer the parent waited for
    assert 0.5 * costs["backend"] <= costs["overlapped"] <= costs["backend"]
    assert answer.keys() == again.keys()
    assert all((answer[k] == again[k]).all() for k in answer)
    with pytest.raises(RuntimeError, match="no question"):
        runner.receive()
