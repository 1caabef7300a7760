"""The OpenVINO IR minimiser (lazyloop/difftest/minimize_ir.py, spec/51 "Minimal cases").

rules: openvino/loop5
"""
import numpy as np
import pytest

ov = pytest.importorskip("openvino")

from lazyloop.difftest.minimize_ir import edits, minimise, node_count  # noqa: E402
from lazyloop.difftest.reducing import model_bytes  # noqa: E402
from lazyloop.openvino import evaluate  # noqa: E402
from lazyloop.openvino import examples as ex  # noqa: E402
from lazyloop.openvino.ir import read_ir  # noqa: E402


def test_an_edit_of_a_loop_body_that_is_gone_is_skipped():
    # rule: openvino/loop5 -- a pass lists its edits from the IR it starts with; when a kept
    # edit removed the loop (OpenVINO renumbers layers as it writes the IR back), an edit of
    # that loop's body gives no candidate instead of failing
    looped = model_bytes("openvino", ex.nested_loop())
    body_edits = [edit for what, edit in edits(looped) if "drop layer ('" in what]
    assert body_edits
    x = ov.opset15.parameter([2], ov.Type.f32, name="x")
    plain = model_bytes("openvino", ov.Model([ov.opset15.negative(x)], [x], "plain"))
    assert all(edit((plain, {})) is None for edit in body_edits)


def test_minimising_keeps_what_the_symptom_needs():
    # rule: openvino/loop5 -- a "symptom" that holds while the output zs is [3, 2] (three trips
    # of [1, 2]): everything else may go, and the minimal IR still reads back and answers so
    x = np.array([10, 20], np.float32)

    def keeps(case):
        (payload, feeds) = case
        try:
            out = evaluate(read_ir(*payload), {"X": x, **feeds})
        except Exception:  # noqa: BLE001 -- an invalid candidate keeps nothing
            return False
        return any(np.shape(v) == (3, 2) for v in out.values())
    start = model_bytes("openvino", ex.scan_loop([1, 2], 0))
    (payload, feeds), ended = minimise((start, {"T": np.array(3, np.int64)}), keeps, steps=200)
    assert ended == "complete"
    assert keeps((payload, feeds))
    # the values do not matter to this symptom: the body's Add of x and i goes, and the
    # trip count T becomes the constant it was fed
    assert b'type="Add"' in start[0] and b'type="Add"' not in payload[0]
    assert feeds == {}
    assert node_count(payload[0]) < node_count(start[0]) + 1  # T is now a Const node
