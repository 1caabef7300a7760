"""The graph optimisers in front of onnxruntime as built-in backends (`onnxslim`, `onnxsim`,
`onnxoptimizer`; extras of the same names): the model is optimised with the tool's default
passes, then run on onnxruntime. Hand-made Loop and Scan models with answers worked out by
hand or numpy, an optimiser that loses an input, short campaigns and repro.py.

rules: onnx/loop, onnx/scan9, trip/count
"""
from importlib.metadata import version

import numpy as np
import pytest

pytest.importorskip("onnxruntime")

import lazyloop.difftest as dt  # noqa: E402
from tests import engine_models as em  # noqa: E402

TOOLS = ["onnxslim", "onnxsim", "onnxoptimizer"]


def tool(name):
    pytest.importorskip(name)
    return dt.backend(name)


@pytest.mark.parametrize("name", TOOLS)
@pytest.mark.parametrize("make", [em.counted_loop, em.scan_loop, em.running_sum_scan])
def test_optimised_loops_still_compute_their_answer(name, make):
    # rule: onnx/loop, onnx/scan9 -- by hand: a running sum, halvings, stacked rows
    model, feeds, expected = make()
    em.agrees(tool(name).run(model, feeds), expected)


def test_an_optimiser_that_drops_a_declared_input_lost_it():
    b = tool("onnxoptimizer")
    model, feeds, _ = em.counted_loop()

    def drops_b(proto):  # an optimiser that folds b away and forgets the input
        from onnx import helper, numpy_helper
        out = type(proto)()
        out.CopyFrom(proto)
        kept = [i for i in out.graph.input if i.name != "b"]
        del out.graph.input[:]
        out.graph.input.extend(kept)
        out.graph.node.insert(0, helper.make_node(
            "Constant", [], ["b"], value=numpy_helper.from_array(np.array(8.0), "b_value")))
        return out
    b._optimise = drops_b
    with pytest.raises(dt.InputLost, match="the engine lost input `b`"):
        b.run(model, feeds)


@pytest.mark.parametrize("name", TOOLS)
def test_a_short_campaign_runs_isolated_and_reports_the_tool_version(name):
    report = dt.check(tool(name), max_examples=20, seed=0, shrink=False)
    em.campaign_counts_add_up(report, 20)
    assert report.backend_version.startswith(version(name))


@pytest.mark.parametrize("name", TOOLS)
def test_repro_py_optimises_and_runs_the_model(tmp_path, name):
    pytest.importorskip(name)
    model, feeds, expected = em.scan_loop(m=2)
    done = em.run_repro(tmp_path, name, model, feeds, expected)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "s_rows: agrees" in done.stdout
