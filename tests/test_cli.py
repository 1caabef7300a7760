"""The command line as a new user would try it."""
import subprocess
import sys

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402

from lazyloop.cli import main  # noqa: E402


def seed_sample_model(path):
    """The ONNX Loop sample: a = 3, b = 6, keepgoing = true, max_trip_count = 10."""
    body = helper.make_graph(
        [helper.make_node("Add", ["a", "b_in"], ["my_local"]),
         helper.make_node("Sub", ["a", "b_in"], ["b_out"]),
         helper.make_node("Greater", ["my_local", "b_out"], ["keepgoing_out"]),
         helper.make_node("Add", ["b_in", "b_in"], ["user_defined_val"])],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("keepgoing_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("b_in", TensorProto.INT32, [])],
        [helper.make_tensor_value_info("keepgoing_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("b_out", TensorProto.INT32, []),
         helper.make_tensor_value_info("user_defined_val", TensorProto.INT32, [])])
    graph = helper.make_graph(
        [helper.make_node("Loop", ["max_trip_count", "keepgoing", "b"], ["b_final", "user_defined_vals"],
                          body=body)],
        "sample",
        [helper.make_tensor_value_info("b", TensorProto.INT32, [])],
        [helper.make_tensor_value_info("b_final", TensorProto.INT32, []),
         helper.make_tensor_value_info("user_defined_vals", TensorProto.INT32, [None])],
        initializer=[helper.make_tensor("a", TensorProto.INT32, [], [3]),
                     helper.make_tensor("max_trip_count", TensorProto.INT64, [], [10]),
                     helper.make_tensor("keepgoing", TensorProto.BOOL, [], [True])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 16)])
    onnx.save(model, path)
    return path


def test_run_prints_and_saves_outputs(tmp_path, capsys):
    # rule: onnx/loop -- trips: b 6 -> -3 -> 6; vals 12, -6; stops when 0 > 6 fails
    model = seed_sample_model(str(tmp_path / "sample.onnx"))
    assert main(["run", model, "--input", "b=6", "--save", str(tmp_path / "out")]) == 0
    text = capsys.readouterr().out
    assert "b_final: shape=[] dtype=int32" in text and "[12 -6]" in text
    np.testing.assert_array_equal(np.load(tmp_path / "out" / "user_defined_vals.npy"), [12, -6])


def test_explain_shows_forcing_table(tmp_path, capsys):
    # rule: trip/while -- the condition stream is forced at trips 0..2 and no further
    model = seed_sample_model(str(tmp_path / "sample.onnx"))
    assert main(["explain", model, "--input", "b=6"]) == 0
    text = capsys.readouterr().out
    assert "n = 2 trips" in text and "asked for by" in text


def test_errors_are_reported_not_raised(tmp_path, capsys):
    model = seed_sample_model(str(tmp_path / "sample.onnx"))
    assert main(["run", model]) == 2  # b not fed: the user's input, found before evaluating
    assert "missing --input for b" in capsys.readouterr().err
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not a protobuf")
    assert main(["run", str(bad)]) == 2  # not a model: the user's input, not a refusal
    assert "bad.onnx" in capsys.readouterr().err


def test_console_script_is_installed(tmp_path):
    model = seed_sample_model(str(tmp_path / "sample.onnx"))
    out = subprocess.run([sys.executable, "-m", "lazyloop", "run", model, "--input", "b=6"],
                         capture_output=True, text=True, check=True).stdout
    assert "user_defined_vals" in out


def test_run_openvino_ir(tmp_path, capsys):
    # rule: openvino/loop5 -- x_next = x + i over i = 0, 1, 2 from [1, 2]: [4, 5]; y_last is
    # 10 * x on the last trip ([2, 3]); zs stacks x: [1, 2], [1, 2], [2, 3]
    ov = pytest.importorskip("openvino")
    from lazyloop.openvino import examples
    path = str(tmp_path / "counter.xml")
    ov.save_model(examples.counter_loop(feed_limits=True), path)
    feeds = ["--input", "X=[[1,2]]", "--input", "C=True"]
    assert main(["run", path, "--input", "T=3", *feeds]) == 0
    text = capsys.readouterr().out
    assert "[[4. 5.]]" in text and "[[20. 30.]]" in text and "[2. 3.]]" in text
    # zero trips: the last value of a result without back edge is undefined (A3), shown as --
    assert main(["run", path, "--input", "T=0", *feeds]) == 0
    text = capsys.readouterr().out
    assert "y_last: shape=[1, 2] dtype=float32\n  (2 undefined positions, shown as --)" in text
