"""The conformance suite: every hand-written case passes on lazyloop itself, and the export
layout is the ONNX backend-test layout, readable by onnx.

rules: output/concat, output/reverse, iterator/reverse, trip/while, laziness/dead
"""
import os

import numpy as np
import pytest

import lazyloop as ll
from lazyloop.cli.conformance import cli_conformance
from lazyloop.conformance import export_suite, run_suite
from lazyloop.conformance.cases import CASES, U, Expected

onnx = pytest.importorskip("onnx")


def frontend(fmt):
    if fmt == "onnx":
        import lazyloop.onnx as fe
    else:
        import lazyloop.openvino as fe
    return fe


@pytest.mark.parametrize("name", sorted(CASES))
def test_case_passes_on_lazyloop(name):
    case = CASES[name]
    if case.format == "core":
        run = ll.run(case.network(), case.inputs)
        outputs, defined = run.outputs, run.defined
    else:
        if case.format == "openvino":
            pytest.importorskip("openvino")
        run = frontend(case.format).run(case.model(), case.inputs)
        outputs, defined = run.outputs, run.defined
    for out, (want, mask) in case.expected_arrays().items():
        got = np.asarray(outputs[out])
        assert got.dtype == want.dtype and got.shape == want.shape, (out, got, want)
        assert np.array_equal(np.asarray(defined[out]), mask), out
        np.testing.assert_allclose(got[mask], want[mask], rtol=1e-5, atol=1e-6)


def test_cases_cover_every_core_rule_family():
    families = {r.split("/")[0] for c in CASES.values() for r in c.rules}
    assert {"stream", "iterator", "recurrence", "trip", "output", "laziness",
            "structure", "onnx", "openvino"} <= families
    assert len(CASES) >= 25


def test_expected_marks_undefined_positions():
    values, mask = Expected([[1, U], [U, 4]]).array_and_mask()
    assert np.isnan(values[0, 1]) and mask.tolist() == [[True, False], [False, True]]
    values, mask = Expected([], shape=(2, 0, 3)).array_and_mask()
    assert values.shape == (2, 0, 3)


def test_suite_on_lazyloops_own_onnx_frontend():
    import lazyloop.difftest as dt
    results = run_suite(dt.backend("lazyloop"))
    assert {r.status for r in results} <= {"pass", "unsupported"}
    assert all(r.status == "pass" for r in results if CASES[r.case].format != "openvino")


def test_export_layout_is_readable_by_onnx(tmp_path):
    from onnx import numpy_helper
    names = [n for n, c in CASES.items() if c.format in ("core", "onnx")]
    export_suite(str(tmp_path), names)
    for name in names:
        case_dir = tmp_path / name
        model = onnx.load(str(case_dir / "model.onnx"))
        onnx.checker.check_model(model)
        data = case_dir / "test_data_set_0"
        outputs = sorted(p for p in os.listdir(data) if p.startswith("output_"))
        assert len(outputs) == len(model.graph.output)
        for k, out in enumerate(model.graph.output):
            t = onnx.TensorProto()
            t.ParseFromString((data / f"output_{k}.pb").read_bytes())
            assert t.name == out.name
            want, _ = CASES[name].expected_arrays()[out.name]
            assert numpy_helper.to_array(t).shape == want.shape
        inputs = sorted(p for p in os.listdir(data) if p.startswith("input_"))
        fed = [i for i in model.graph.input if i.name in CASES[name].inputs]
        assert len(inputs) == len(fed)
        assert (case_dir / "README.md").read_text().startswith(f"# {name}")


def test_cli_export_and_run(tmp_path, capsys):
    assert cli_conformance(["export", str(tmp_path), "--case", "fibonacci"]) == 0
    assert (tmp_path / "fibonacci" / "model.onnx").exists()
    assert cli_conformance(["run", "--backend", "lazyloop", "--no-isolate",
                            "--case", "fibonacci", "--case", "reverse_padding"]) == 0
    out = capsys.readouterr().out
    assert "pass: 2" in out
    assert cli_conformance(["run", "--backend", "lazyloop", "--case", "nope"]) == 2
