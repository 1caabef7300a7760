"""`explain` keeps only what it draws, whatever the trips; the progress line of `check` says
what a user waits on (programs done of all, findings so far, elapsed time).

rules: trip/count, onnx/loop
"""
import io

import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto as T, helper  # noqa: E402

from lazyloop.cli.check import progress_text  # noqa: E402
from lazyloop.cli.common import ProgressLine  # noqa: E402
from lazyloop.cli.evaluating import traced  # noqa: E402
from lazyloop.cli.explain import DrawnTrace, explain_table  # noqa: E402
from lazyloop.cli.inputs import load_model, parse_inputs  # noqa: E402
from lazyloop.difftest.campaign import Tally  # noqa: E402


def counter_model(path):
    """x = x0; repeat M times: x = x + 1 (an ONNX Loop with no condition)."""
    body = helper.make_graph(
        [helper.make_node("Identity", ["c_in"], ["c_out"]),
         helper.make_node("Add", ["x_in", "one"], ["x_out"])], "body",
        [helper.make_tensor_value_info("i", T.INT64, []),
         helper.make_tensor_value_info("c_in", T.BOOL, []),
         helper.make_tensor_value_info("x_in", T.INT64, [])],
        [helper.make_tensor_value_info("c_out", T.BOOL, []),
         helper.make_tensor_value_info("x_out", T.INT64, [])],
        [helper.make_tensor("one", T.INT64, [], [1])])
    graph = helper.make_graph(
        [helper.make_node("Loop", ["M", "", "x0"], ["x"], body=body)], "counter",
        [helper.make_tensor_value_info("M", T.INT64, []),
         helper.make_tensor_value_info("x0", T.INT64, [])],
        [helper.make_tensor_value_info("x", T.INT64, [])])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


def explained(path, trips, max_events=2000):
    lowered = load_model(path)
    drawn = DrawnTrace(16, max_events)
    evaluation = traced(lowered, parse_inputs([f"M={trips}", "x0=0"], lowered), 10**7, None,
                        drawn)
    return evaluation, drawn, explain_table(evaluation, drawn, 16)


def test_explain_keeps_what_it_draws_not_every_forced_element(tmp_path):
    # rule: trip/count -- 200 and 20000 trips: the same 16 columns are drawn and kept
    path = counter_model(str(tmp_path / "counter.onnx"))
    short, short_drawn, short_table = explained(path, 200)
    long, long_drawn, long_table = explained(path, 20000)
    assert int(short.outputs["Loop(x)/final:x_out"]) == 200     # 0 + 200 x 1
    assert int(long.outputs["Loop(x)/final:x_out"]) == 20000
    assert long_drawn.seen > 50 * short_drawn.seen  # every element was forced ...
    assert long_drawn.kept == short_drawn.kept       # ... but only the drawn ones are kept
    [act] = long_drawn.drawn.values()
    assert len(act.cells) == long_drawn.kept and long_drawn.kept <= 16 * 4
    assert all(index < 16 for _, index in act.cells)
    assert long.trace == []  # the run hands its events to the sink and keeps none itself
    assert "n = 20000 trips (first 16 indices shown)" in long_table
    assert long_table.replace("20000", "200") == short_table


def test_explain_past_max_events_counts_what_it_does_not_draw(tmp_path):
    # rule: trip/count -- a budget of 1: the one activation is still drawn (it opened first)
    path = counter_model(str(tmp_path / "counter.onnx"))
    _, drawn, table = explained(path, 50, max_events=1)
    assert len(drawn.drawn) == 1 and "not drawn" not in table


def test_progress_line_says_programs_done_findings_and_time():
    # rule: onnx/loop -- the formatter, fed a tally as exploring leaves it
    tally = Tally(generated=120, examples=118, agreements=100, instances=12)
    tally.first_seen = {("disagree", "onnx-loop", "shape"): None,
                        ("disagree", "onnx-scan9", "value"): None}
    text = progress_text("onnxruntime", "generate", 120, 1000, tally, 1000, 42.4)
    # refused: 118 given to the backend - 100 agreed - 12 disagreed = 6
    assert text == ("lazyloop check onnxruntime: 120/1000 programs, 2 finding(s) "
                    "(agree 100, disagree 12, refused 6), 42 s")
    shrinking = progress_text("onnxruntime", "shrink", 0, 2, tally, 1000, 61)
    assert shrinking.startswith("lazyloop check onnxruntime: shrinking finding 1/2; 120/1000")
    assert progress_text("x", "done", 2, 2, tally, 1000, 70).startswith(
        "lazyloop check x: done: 120/1000 programs")


def test_progress_line_in_a_log_is_a_plain_line_per_interval():
    # rule: onnx/loop -- not a terminal: a line when a stage starts, then at most one per
    # `every` seconds (here a huge interval: the second update of a stage is not written)
    stream = io.StringIO()
    line = ProgressLine(every=1e9, stream=stream)
    line.update("generate", "a")
    line.update("generate", "b")
    line.update("shrink", "c")
    line.update("done", "d", force=True)
    assert stream.getvalue() == "a\nc\nd\n"
