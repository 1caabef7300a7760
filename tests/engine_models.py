"""Small hand-made ONNX models for the engine tests (tests/test_engines_*.py), each with
feeds and the answer worked out by hand or with numpy (not by lazyloop), and a helper that
writes a case folder for one and runs its repro.py without lazyloop."""
import os
import subprocess
import sys

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto as TP, helper, numpy_helper  # noqa: E402


def _model(nodes, inputs, outputs, opset=16, name="engine_test"):
    model = helper.make_model(helper.make_graph(nodes, name, inputs, outputs),
                              opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def counted_loop(m=3, cond=True, opset=16):
    """Loop(M, cond, a, b) with both M and cond given and no scan output: each trip adds the
    iteration number to a (float32 [2]) and halves b (float64 []); the body passes its
    condition through. Returns (model, feeds, expected)."""
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Cast", ["i"], ["i_f"], to=TP.FLOAT),
         helper.make_node("Add", ["a_in", "i_f"], ["a_out"]),
         helper.make_node("Constant", [], ["half"],
                          value=numpy_helper.from_array(np.array(0.5), "half_value")),
         helper.make_node("Mul", ["b_in", "half"], ["b_out"])],
        "body",
        [helper.make_tensor_value_info("i", TP.INT64, []),
         helper.make_tensor_value_info("cond_in", TP.BOOL, []),
         helper.make_tensor_value_info("a_in", TP.FLOAT, [2]),
         helper.make_tensor_value_info("b_in", TP.DOUBLE, [])],
        [helper.make_tensor_value_info("cond_out", TP.BOOL, []),
         helper.make_tensor_value_info("a_out", TP.FLOAT, [2]),
         helper.make_tensor_value_info("b_out", TP.DOUBLE, [])])
    model = _model(
        [helper.make_node("Loop", ["M", "cond", "a", "b"], ["a_final", "b_final"], body=body)],
        [helper.make_tensor_value_info("M", TP.INT64, []),
         helper.make_tensor_value_info("cond", TP.BOOL, []),
         helper.make_tensor_value_info("a", TP.FLOAT, [2]),
         helper.make_tensor_value_info("b", TP.DOUBLE, [])],
        [helper.make_tensor_value_info("a_final", TP.FLOAT, [2]),
         helper.make_tensor_value_info("b_final", TP.DOUBLE, [])], opset)
    feeds = {"M": np.array(m, np.int64), "cond": np.array(cond),
             "a": np.array([1.0, 2.0], np.float32), "b": np.array(8.0)}
    trips = m if cond else 0
    # by hand: a gains 0 + 1 + ... + (trips - 1); b is halved once per trip
    expected = {"a_final": np.array([1.0, 2.0], np.float32) + sum(range(trips)),
                "b_final": np.array(8.0 / 2 ** trips)}
    return model, feeds, expected


def scan_loop(m=3):
    """Loop(M, "", s) with a scan output: each trip adds i to s (float32 []) and stacks the
    new s. Returns (model, feeds, expected)."""
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Cast", ["i"], ["i_f"], to=TP.FLOAT),
         helper.make_node("Add", ["s_in", "i_f"], ["s_out"]),
         helper.make_node("Identity", ["s_out"], ["s_row"])],
        "body",
        [helper.make_tensor_value_info("i", TP.INT64, []),
         helper.make_tensor_value_info("cond_in", TP.BOOL, []),
         helper.make_tensor_value_info("s_in", TP.FLOAT, [])],
        [helper.make_tensor_value_info("cond_out", TP.BOOL, []),
         helper.make_tensor_value_info("s_out", TP.FLOAT, []),
         helper.make_tensor_value_info("s_row", TP.FLOAT, [])])
    model = _model(
        [helper.make_node("Loop", ["M", "", "s"], ["s_final", "s_rows"], body=body)],
        [helper.make_tensor_value_info("M", TP.INT64, []),
         helper.make_tensor_value_info("s", TP.FLOAT, [])],
        [helper.make_tensor_value_info("s_final", TP.FLOAT, []),
         helper.make_tensor_value_info("s_rows", TP.FLOAT, [m])])
    feeds = {"M": np.array(m, np.int64), "s": np.array(0.5, np.float32)}
    rows = np.float32(0.5) + np.cumsum(np.arange(m, dtype=np.float32))  # 0.5, 1.5, 3.5, ...
    return model, feeds, {"s_final": rows[-1], "s_rows": rows}


def running_sum_scan(with_rows=True):
    """Scan 9+ over the rows of xs (float32 [3, 2]) carrying their running sum s; with
    `with_rows` the sums so far are also a scan output. Returns (model, feeds, expected)."""
    outputs = ["s_out"] + (["row"] if with_rows else [])
    body = helper.make_graph(
        [helper.make_node("Add", ["s_in", "x"], ["s_out"])]
        + ([helper.make_node("Identity", ["s_out"], ["row"])] if with_rows else []),
        "body",
        [helper.make_tensor_value_info("s_in", TP.FLOAT, [2]),
         helper.make_tensor_value_info("x", TP.FLOAT, [2])],
        [helper.make_tensor_value_info(n, TP.FLOAT, [2]) for n in outputs])
    results = ["s_final"] + (["rows"] if with_rows else [])
    model = _model(
        [helper.make_node("Scan", ["s", "xs"], results, body=body, num_scan_inputs=1)],
        [helper.make_tensor_value_info("s", TP.FLOAT, [2]),
         helper.make_tensor_value_info("xs", TP.FLOAT, [3, 2])],
        [helper.make_tensor_value_info("s_final", TP.FLOAT, [2])]
        + ([helper.make_tensor_value_info("rows", TP.FLOAT, [3, 2])] if with_rows else []))
    xs = np.array([[1, 2], [3, 4], [5, 6]], np.float32)
    s = np.array([0.5, -0.5], np.float32)
    sums = s + np.cumsum(xs, axis=0)
    expected = {"s_final": sums[-1]}
    if with_rows:
        expected["rows"] = sums
    return model, {"s": s, "xs": xs}, expected


def if_model(dtype=np.uint8, cond=True):
    """If(c) then x + x else x * x, x of `dtype` [2] read from the enclosing scope (uint8
    wraps around: 200 + 200 = 144, 200 * 200 = 64). Returns (model, feeds, expected)."""
    T = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    then = helper.make_graph([helper.make_node("Add", ["x", "x"], ["t"])], "then", [],
                             [helper.make_tensor_value_info("t", T, [2])])
    other = helper.make_graph([helper.make_node("Mul", ["x", "x"], ["e"])], "else", [],
                              [helper.make_tensor_value_info("e", T, [2])])
    model = _model([helper.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other)],
                   [helper.make_tensor_value_info("x", T, [2]),
                    helper.make_tensor_value_info("c", TP.BOOL, [])],
                   [helper.make_tensor_value_info("y", T, [2])])
    x = np.array([200, 3] if np.dtype(dtype) == np.uint8 else [1.5, -2], dtype)
    with np.errstate(over="ignore"):
        y = x + x if cond else x * x
    return model, {"x": x, "c": np.array(cond)}, {"y": y}


def agrees(actual, expected):
    """Same names, dtypes and shapes, and values within float32's tolerance."""
    assert sorted(actual) == sorted(expected)
    for name, want in expected.items():
        got = np.asarray(actual[name])
        want = np.asarray(want)
        assert (got.dtype, got.shape) == (want.dtype, want.shape), name
        assert np.allclose(got, want, rtol=1e-5, atol=1e-6), (name, got, want)


def run_repro(tmp_path, backend, model, feeds, expected):
    """Write the case folder of (model, feeds, expected) as found on `backend` and run its
    repro.py with lazyloop unimportable; returns the finished process."""
    import lazyloop.difftest as dt
    from lazyloop.difftest.cases import Context
    d = dt.Disagreement(model=model, feeds=feeds, expected=expected, actual=None,
                        rules=frozenset(), ambiguity=None)
    case = dt.write_case(str(tmp_path), "case", d, Context(backend=backend))
    blocked = ("import sys; sys.modules['lazyloop'] = None; sys.argv = ['repro.py']; "
               "exec(compile(open('repro.py').read(), 'repro.py', 'exec'), "
               "{'__file__': 'repro.py', '__name__': '__main__'})")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run([sys.executable, "-I", "-c", blocked], cwd=case, env=env,
                           capture_output=True, text=True, timeout=300)


def campaign_counts_add_up(report, n):
    """What a short campaign must show whatever the engine's faults: every program drawn,
    each either run or skipped, each run one agreeing, disagreeing or refused."""
    assert report.generated == n
    assert report.examples + report.invalid + report.not_exportable == n
    refused = sum(r.count for r in report.unsupported)
    assert report.agreements + report.instances + refused == report.examples
    assert report.examples > 0
