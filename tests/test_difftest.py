"""The differential tester: a planted fault is caught, a correct backend agrees, real
backends run, comparisons ignore undefined positions, disagreements are written as ONNX
backend-test cases.

rules: onnx/loop, trip/count, output/concat
"""
import os

import numpy as np
import pytest

import lazyloop.difftest as dt

pytest.importorskip("onnx")
pytest.importorskip("hypothesis")


# -- compare ----------------------------------------------------------------------------------

def test_compare_ignores_undefined_positions():
    # rule: output/concat -- padding is undefined: any value there agrees
    want = np.array([[1, 2], [np.nan, np.nan]], np.float32)
    mask = np.array([[True, True], [False, False]])
    got = np.array([[1, 2], [7, -3]], np.float32)
    assert dt.compare({"y": want}, {"y": mask}, {"y": got}) == []


def test_compare_reports_values_shapes_dtypes_and_missing_outputs():
    want = {"a": np.array([1, 2], np.float32), "b": np.array([1], np.int32),
            "c": np.zeros((2, 0), np.float32), "d": np.array(1.0, np.float32)}
    got = {"a": np.array([1, 2.5], np.float32), "b": np.array([1], np.int64),
           "c": np.zeros((0,), np.float32)}
    kinds = {d.output: d.kind for d in dt.compare(want, {}, got)}
    assert kinds == {"a": "values", "b": "dtype", "c": "shape", "d": "missing-output"}


def test_compare_tolerance():
    want = {"a": np.array([1.0], np.float32), "h": np.array([1.0], np.float16)}
    close = {"a": np.array([1.00005], np.float32), "h": np.array([1.005], np.float16)}
    far = {"a": np.array([1.001], np.float32), "h": np.array([1.05], np.float16)}
    assert dt.compare(want, {}, close) == []
    assert {d.output for d in dt.compare(want, {}, far)} == {"a", "h"}


def test_each_dtype_has_its_own_tolerance_and_an_override_may_name_one():
    # float16 looser than float32 and float64, integers and bools exact; --rtol DTYPE=X
    # replaces one dtype's, a plain number every float dtype's
    assert dt.tolerance(np.float16) == (1e-2, 1e-2)
    assert dt.tolerance(np.float32) == dt.tolerance(np.float64) == (1e-4, 1e-5)
    want = {"d": np.array([1.0]), "h": np.array([1.0], np.float16),
            "i": np.array([7], np.int8), "b": np.array([True])}
    got = {"d": np.array([1.00005]), "h": np.array([1.005], np.float16),
           "i": np.array([8], np.int8), "b": np.array([False])}
    assert {d.output for d in dt.compare(want, {}, got)} == {"i", "b"}
    assert {d.output for d in dt.compare(want, {}, got, rtol={"float64": 1e-9},
                                         atol={"float64": 0})} == {"d", "i", "b"}
    assert {d.output for d in dt.compare(want, {}, got, rtol=0, atol=0)} == {"d", "h", "i", "b"}


# -- the planted fault and the correct backend --------------------------------------------------

def test_planted_fault_is_caught_within_200_examples():
    # rule: trip/count -- every Loop runs one trip too many
    planted = dt.TripCountPlusOne(dt.backend("lazyloop"))
    report = dt.check(planted, max_examples=200, seed=0, shrink=False)
    assert report.disagreements, report.summary()
    assert report.instances > 0
    assert all(d.actual is not None or d.error for d in report.disagreements)


def test_planted_fault_shrinks_to_a_small_program():
    planted = dt.TripCountPlusOne(dt.backend("lazyloop"))
    report = dt.check(planted, max_examples=60, seed=1, kinds=["onnx-loop"],
                      shrink_steps=200)
    assert report.disagreements
    d = report.disagreements[0]
    recipe = d.subject.program.recipe
    # the minimal ONNX Loop: M is given (the fault needs it), little else is left
    assert recipe.mode.startswith("M")
    assert len(recipe.carried) + len(recipe.scans) == 1


def test_correct_backend_gives_no_disagreements():
    report = dt.check(dt.backend("lazyloop"), max_examples=60, seed=3, shrink=False)
    assert report.examples > 0
    assert report.disagreements == [], report.summary()
    assert {"onnx/loop", "trip/count", "output/concat"} <= report.coverage


def test_onnxruntime_small_run_completes():
    pytest.importorskip("onnxruntime")
    b = dt.Isolated("onnxruntime", timeout=60)
    try:
        report = dt.check(b, max_examples=25, seed=0, shrink=False)
    finally:
        b.close()
    assert report.examples + report.invalid + report.not_exportable == report.generated
    assert report.examples > 0
    assert "onnxruntime" in report.summary()


def test_isolated_backend_survives_a_model_that_crashes_it():
    # A zero-length scan on axis 1 kills onnxruntime 1.31 with SIGFPE (spec/50-findings.md);
    # whatever the installed version does, the isolated backend answers.
    pytest.importorskip("onnxruntime")
    from lazyloop.strategies.dialects import OnnxScanRecipe
    p = OnnxScanRecipe(opset=16, length=0, element=(2,), inputs=((1, 0),), states=1,
                       outputs=(("input", 0, 0),)).program()
    b = dt.Isolated("onnxruntime", timeout=60)
    try:
        try:
            b.run(p.model, p.feeds)
        except Exception as exc:  # a crash or an error, never the end of this process
            assert isinstance(exc, Exception)
        q = OnnxScanRecipe(opset=16, length=1, element=(2,), inputs=((1, 0),), states=1,
                           outputs=(("input", 0, 0),)).program()
        out = b.run(q.model, {"s0": np.ones(2, np.float32), "x0": np.ones((2, 1), np.float32)})
        assert np.allclose(out["s0_final"], np.tanh(2))  # tanh(1 + 1), by hand
    finally:
        b.close()


# -- reports, cases, command line ------------------------------------------------------------

def test_disagreements_are_written_as_onnx_backend_test_cases(tmp_path):
    import onnx
    from onnx import numpy_helper
    planted = dt.TripCountPlusOne(dt.backend("lazyloop"))
    report = dt.check(planted, max_examples=30, seed=1, kinds=["onnx-loop"], shrink=False)
    assert report.disagreements
    case = dt.write_case(str(tmp_path), "case0", report.disagreements[0])
    model = onnx.load(os.path.join(case, "model.onnx"))
    onnx.checker.check_model(model)
    data = os.path.join(case, "test_data_set_0")
    inputs = sorted(f for f in os.listdir(data) if f.startswith("input_"))
    outputs = sorted(f for f in os.listdir(data) if f.startswith("output_"))
    assert len(outputs) == len(model.graph.output)
    for f in inputs + outputs:
        t = onnx.TensorProto()
        with open(os.path.join(data, f), "rb") as fh:
            t.ParseFromString(fh.read())
        numpy_helper.to_array(t)
    readme = open(os.path.join(case, "README.md")).read()
    assert "What differs" in readme


def test_cli_check_exits_zero_and_writes_cases(tmp_path, capsys):
    from lazyloop.cli.check import cli_check
    status = cli_check(["--backend", "lazyloop", "--examples", "10", "--seed", "0",
                           "--out", str(tmp_path), "--quiet", "--no-isolate"])
    assert status == 0
    out = capsys.readouterr().out
    assert "agreements" in out and "rule coverage" in out


def test_cli_check_unknown_backend_is_a_usage_error():
    from lazyloop.cli.check import cli_check
    assert cli_check(["--backend", "no-such-backend", "--quiet"]) == 2


def test_error_keys_drop_names_and_numbers():
    a = dt._error_key("EvaluationError: Pad node 'n_Pad_43' in graph 'g': index -1 bad")
    b = dt._error_key("EvaluationError: Pad node 'n_Pad_7' in body of Loop node 'x' in "
                      "graph 'g': index -3 bad")
    assert a == b
    # names quoted in backticks too: one lost input whatever an exporter named it
    lost = ["InputLost: the engine lost input `x:0` (the model declares it; the compiled model "
            "takes 0 input(s))", "InputLost: the engine lost input `input.1` (the model "
            "declares it; the compiled model takes 0 input(s))"]
    assert dt._error_key(lost[0]) == dt._error_key(lost[1])


def test_throughput_is_positive():
    assert dt.throughput(dt.backend("lazyloop"), n=10, kinds=["onnx-loop"]) > 0
