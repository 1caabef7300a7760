"""lazyloop never crashes inside a campaign: the OpenVINO exporter met a network whose sliced
input OpenVINO infers with another rank (`lazyloop check --backend openvino --seed 7`, program
617, ended with exit 3 on an IndexError); it is now refused as the target's limitation, and
any internal error is kept with its traceback and its program, counted apart.

rules: openvino/loop5, iterator/forward, output/concat
"""
import numpy as np
import pytest

import lazyloop as ll

pytest.importorskip("openvino")


def zero_trip_columns_then_sliced_on_axis_1():
    """A loop whose WHILE condition starts false (0 > 0) concatenates rows on a new axis 1
    (shape [3, 0]); a second loop iterates that output on axis 1. OpenVINO infers the first
    loop's output as [0] (rank 1, A22), where the network has rank 2."""
    net = ll.Network()
    x0 = net.add_input("x0", ll.float32, (1, 3))
    zero = net.add_constant((), np.array(0, np.int32)).get_output(0)
    one = net.add_constant((), np.array(1, np.int32)).get_output(0)
    first = net.add_loop()
    counter = first.add_recurrence(zero)
    counter.set_input(1, net.add_elementwise(counter.get_output(0), one,
                                             ll.ElementWiseOperation.SUM).get_output(0))
    first.add_trip_limit(net.add_elementwise(zero, counter.get_output(0),
                                             ll.ElementWiseOperation.GREATER).get_output(0),
                         ll.TripLimit.WHILE)
    row = first.add_iterator(x0, axis=0).get_output(0)
    cols = first.add_loop_output(row, ll.LoopOutput.CONCATENATE, 1)
    cols.set_input(1, zero)
    second = net.add_loop()
    second.add_trip_limit(zero, ll.TripLimit.COUNT)
    col = second.add_iterator(cols.get_output(0), axis=1).get_output(0)
    out = second.add_loop_output(col, ll.LoopOutput.CONCATENATE, 0)
    out.set_input(1, zero)
    out.get_output(0).name = "y"
    net.mark_output(out.get_output(0))
    return net


def test_a_sliced_input_openvino_infers_with_another_rank_is_refused_by_the_target():
    # rule: openvino/loop5 -- lazyloop runs it (zero trips: an empty [0, 3], by hand); the
    # exporter no longer fails with an IndexError but says the target refuses it
    from lazyloop.core.export import TargetRefused
    from lazyloop.openvino.export import export
    net = zero_trip_columns_then_sliced_on_axis_1()
    y = ll.evaluate(net, {"x0": np.zeros((1, 3), np.float32)})["y"]
    assert y.shape == (0, 3)
    with pytest.raises(TargetRefused, match="rank 1.*rank 2"):
        export(net)


def test_a_case_folder_of_a_zero_trip_loop_re_runs_from_its_ir(tmp_path):
    # rule: openvino/loop5 -- program 367 of the OpenVINO campaign seeded 0: a loop whose
    # condition folds to false, then ShapeOf/Range/Pad of its output. OpenVINO infers that
    # output as [0] (A22) and writes the shapes it inferred downstream into the IR; read
    # back, lazyloop used to hold its own values to them (StreamShapeChanged on a Range).
    # Now shapes inferred from such a view are kept only as dtypes: the IR gives the
    # program's own answer.
    import openvino as ov

    import lazyloop.openvino as lo
    from lazyloop.difftest.comparing import compare
    from lazyloop.difftest.shrinking import draw_program
    from lazyloop.difftest.subject import subjects
    subject, _ = draw_program(subjects(("openvino",)), 0, 367)
    expected, defined, _ = subject.expectation()
    path = str(tmp_path / "model.xml")
    ov.save_model(subject.model(), path, compress_to_fp16=False)
    again = lo.run(path, subject.feeds)
    assert compare(expected, defined, again.outputs) == []


def test_an_internal_error_is_kept_with_its_program_and_traceback_and_counted_apart():
    # rule: openvino/loop5 -- lazyloop failing on a program (here a planted failure of the
    # exporter) is not a finding: it is listed with the program that caused it and its
    # traceback (stored, not printed), and lazyloop failed (exit status 3)
    import lazyloop.difftest as dt
    from lazyloop.difftest.campaign import Tally
    from lazyloop.difftest.checking import Checker
    from lazyloop.difftest.schema import check_document, judge
    from lazyloop.difftest.subject import Subject

    class Broken(Subject):
        def expectation(self):
            return {}, {}, frozenset()

        def model(self):
            raise IndexError("planted: list assignment index out of range")

    subject = Broken("core", "onnx", zero_trip_columns_then_sliced_on_axis_1_program())
    out = Checker(dt.backend("lazyloop")).outcome(subject)
    assert out.status == "invalid" and "Traceback" in out.internal
    assert "IndexError: planted" in out.internal.splitlines()[-1]
    tally = Tally()
    tally.add(617, subject, (), out)
    report = dt.Report("lazyloop", 7)
    report.internal_errors = tally.internal_errors
    document = judge(check_document(report))
    [error] = document["internal_errors"]
    assert error["program"] == 617 and error["kind"] == "core"
    assert error["error"] == "IndexError: planted: list assignment index out of range"
    assert "Traceback" in error["traceback"] and "mark_output" in error["subject"]
    assert document["verdict"]["exit_status"] == 3
    assert "program 617 (core): IndexError: planted" in report.summary()


def zero_trip_columns_then_sliced_on_axis_1_program():
    """A strategies `Program` (builder steps a report can show) whose last step is the one
    the crashing campaign program ended with."""
    from lazyloop.strategies.programs import Call, Program, Ref
    steps = (Call(None, "network", "mark_output", (Ref("t107"),)),)
    return Program(steps, (), ("y",), frozenset(), frozenset())
