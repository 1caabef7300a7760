"""Reading an OpenVINO IR whose loop port map holds a negative axis (lazyloop/openvino/ir.py):
OpenVINO writes such an IR and its own reader refuses it; lazyloop reads it as written.

rules: openvino/model, openvino/slice, openvino/concat
"""
import os

import numpy as np
import pytest

ov = pytest.importorskip("openvino")
ops = pytest.importorskip("openvino.opset15")

from lazyloop.openvino import evaluate  # noqa: E402
from lazyloop.openvino import examples as ex  # noqa: E402
from lazyloop.openvino.ir import read_ir  # noqa: E402

F = np.float32


def rows_loop(axis: int):
    """Loop-5 over the rows of X[2, 2], sliced on `axis` (part size 1, two trips); the output
    "last" is the chunk of the last trip, by last iteration."""
    s = ops.parameter([1, 2], ov.Type.f32, name="s")
    body = ov.Model([ops.result(ops.constant(np.bool_(True))), r := ops.result(s)], [s], "b")
    x = ops.parameter([2, 2], ov.Type.f32, name="X")
    loop = ops.loop(ops.constant(np.int64(2)), ops.constant(np.bool_(True)))
    loop.set_friendly_name("rows")
    loop.set_function(body)
    loop.set_special_body_ports([-1, 0])
    loop.set_sliced_input(s, x.output(0), 0, 1, 1, -1, axis)
    out = loop.get_iter_value(r.output(0), -1)
    out.get_tensor().set_names({"last"})
    return ov.Model([out], [x], "rows")


def saved(model, tmp_path) -> str:
    path = os.path.join(tmp_path, "model.xml")
    ov.save_model(model, path, compress_to_fp16=False)
    return path


def test_a_negative_sliced_axis_is_read_back_as_written(tmp_path):
    # rule: openvino/model -- OpenVINO writes axis="-2" and its reader refuses the file
    path = saved(rows_loop(-2), tmp_path)
    with open(path, encoding="utf-8") as f:
        assert 'axis="-2"' in f.read()
    with pytest.raises(RuntimeError, match="unsigned"):
        ov.Core().read_model(path)
    model = read_ir(path)
    loop = next(n for n in model.get_ordered_ops() if n.get_type_name() == "Loop")
    assert [d.axis for d in loop.get_input_descriptions()] == [-2]
    # rule: openvino/slice -- axis -2 of a rank-2 input is axis 0: the rows; the last trip's
    # chunk is row 1, worked out by hand
    x = np.array([[1, 2], [3, 4]], F)
    got = evaluate(path, {"X": x})
    np.testing.assert_array_equal(got["last"], [[3, 4]])


def test_a_negative_concatenation_axis_is_read_back_as_written(tmp_path):
    # rule: openvino/concat -- z_i = reshape(X + i, [2, 1]) joined on axis -1 (= 1), 3 trips
    path = saved(ex.scan_loop([2, 1], -1), tmp_path)
    model = read_ir(path)
    loop = next(n for n in model.get_ordered_ops() if n.get_type_name() == "Loop")
    assert [d.axis for d in loop.get_output_descriptions() if hasattr(d, "axis")] == [-1]
    got = evaluate(path, {"X": np.array([10, 20], F), "T": np.array(3, np.int64)})
    np.testing.assert_array_equal(got["zs"], [[10, 11, 12], [20, 21, 22]])


def test_an_ir_without_negative_axes_is_read_by_openvino_alone(tmp_path):
    # rule: openvino/model -- the text is handed to OpenVINO's reader unchanged
    path = saved(rows_loop(0), tmp_path)
    with open(path, "rb") as f, open(path[:-4] + ".bin", "rb") as w:
        model = read_ir(f.read(), w.read())
    got = evaluate(model, {"X": np.array([[1, 2], [3, 4]], F)})
    np.testing.assert_array_equal(got["last"], [[3, 4]])
