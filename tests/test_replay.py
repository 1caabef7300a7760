"""Replaying core programs builder call by builder call (lazyloop.tensorrt.replay): onto lazyloop
itself, onto a recording stand-in for TensorRT's API, and as a difftest backend.

rules: recurrence/def, trip/count, output/last
"""
import types

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import lazyloop as ll
from lazyloop.conformance import run_suite
from lazyloop.conformance.cases import CASES
from lazyloop.tensorrt.replay import (KeepAlive, ReplayBackend, build_onto, check_names, replay)
from lazyloop.strategies import networks


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(networks())
def test_programs_use_only_tensorrt_names(program):
    assert check_names(program) == []


@settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck))
@given(networks())
def test_replay_onto_a_fresh_network_builds_the_same_program(program):
    net = ll.Network()
    env = replay(program, net)
    assert env["network"] is net
    assert net.num_layers == program.net.num_layers
    assert [net.get_output(i).name for i in range(net.num_outputs)] == list(program.outputs)


def test_replay_of_hand_written_cases_gives_the_hand_written_outputs():
    # rule: output/last -- every core conformance case through the replay backend
    results = [r for r in run_suite(ReplayBackend()) if CASES[r.case].format == "core"]
    assert results and all(r.status == "pass" for r in results), results


class Recorder:
    """A stand-in for TensorRT's INetworkDefinition: forwards to lazyloop and records every
    call by name, so a test sees exactly what TensorRT would be asked."""

    def __init__(self, net, log):
        self._net, self._log = net, log

    def __getattr__(self, name):
        attr = getattr(self._net, name)
        if not callable(attr):
            return attr

        def call(*args, **kwargs):
            self._log.append(name)
            return attr(*args, **kwargs)
        return call


def test_replay_onto_a_recording_network_with_a_separate_api_module():
    # The enums come from the `api` object given, as they would from `tensorrt`.
    api = types.SimpleNamespace(**{k: getattr(ll, k) for k in (
        "TripLimit", "LoopOutput", "ElementWiseOperation", "UnaryOperation", "ActivationType",
        "MatrixOperation", "ReduceOperation", "float32", "int32", "bool")})
    log = []
    net = ll.Network()
    CASES["count_sum_rows"].build(Recorder(net, log), api)
    assert log[:2] == ["add_input", "add_loop"]
    assert "mark_output" in log
    out = ll.evaluate(net, CASES["count_sum_rows"].inputs)
    assert out["total"].tolist() == [9.0, 12.0]   # 1+3+5, 2+4+6


def test_keep_alive_holds_the_weights():
    net = ll.Network()
    keep = KeepAlive(net)
    w = np.array([1.0, 2.0], np.float32)
    keep.add_constant((2,), w)
    assert any(w is a for args, _ in keep.kept for a in args)


def test_build_onto_takes_programs_and_cases():
    # rule: trip/count
    net = ll.Network()
    build_onto(CASES["both_count_stops_first"], net)
    assert ll.evaluate(net, {})["final"] == 2


def test_check_names_flags_a_call_tensorrt_lacks():
    from lazyloop.strategies import Call, Program
    steps = (Call("l", "network", "add_loop"), Call(None, "l", "add_magic"))
    bad = check_names(Program(steps, (), (), frozenset(), frozenset()))
    assert [s.method for s in bad] == ["add_magic"]


def test_difftest_with_the_replay_backend_agrees():
    # rule: recurrence/def -- core programs handed over as builder calls
    import lazyloop.difftest as dt
    report = dt.check(ReplayBackend(), max_examples=25, seed=0, shrink=False)
    assert report.examples > 0 and report.disagreements == []


def test_tensorrt_backend_needs_tensorrt():
    pytest.importorskip("tensorrt")  # never installed here: nothing can run TensorRT


def test_a_zero_extent_broadcast_keeps_the_drawn_program_buildable():
    # rule: stream/shape -- the example the suite once found: x0 of shape (2, 0) iterated on
    # axis 0 gives (0,) elements; (0,) + (1,) broadcasts to (0,), so the matrix multiply
    # that follows takes a (0, 0) weight. The strategy thought (1,) and drew a (1, 1) weight,
    # which the builder refused (inner dimensions 0 and 1).
    from hypothesis.core import decode_failure

    from lazyloop.difftest.shrinking import replay_program
    from lazyloop.strategies.writer import broadcast
    assert broadcast((0,), (1,)) == (0,) and broadcast((1, 3), (2, 1)) == (2, 3)
    choices = decode_failure(b"AXicTYyJDQAgCANbibu4xu2/lIgkWpI+lIBQAhlfk3mpgbndoY4qSmtG31dfYia"
                             b"1O3WbSIn3U3zzRBvk4wtY")
    program = replay_program(networks(), choices)
    assert program.feeds["x0"].shape == (2, 0)
    net = ll.Network()
    replay(program, net)  # the builder accepts every call
    assert net.num_layers == program.net.num_layers
    ll.run(program.net, program.feeds)
