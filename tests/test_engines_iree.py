"""IREE as a built-in backend (`iree`, extra [iree]): hand-made models with answers worked
out by hand, the conventions its adapter handles (float64 kept, uint8 read back, 0-D
values), what it refuses, a short campaign and repro.py. Compiles are slow (about half a
second a model): a handful of programs only.

rules: onnx/loop, onnx/scan9, onnx/if, trip/both
"""
from importlib.metadata import version

import numpy as np
import pytest

pytest.importorskip("iree.compiler")
pytest.importorskip("iree.runtime")

import lazyloop.difftest as dt  # noqa: E402
from tests import engine_models as em  # noqa: E402


@pytest.fixture(scope="module")
def iree():
    return dt.backend("iree")


def test_a_loop_with_both_m_and_cond_runs_and_keeps_float64(iree):
    # rule: onnx/loop -- M = 3 trips; b is float64 (the compiler would demote it to f32)
    model, feeds, expected = em.counted_loop(m=3)
    em.agrees(iree.run(model, feeds), expected)
    assert iree.run(model, feeds)["b_final"].dtype == np.float64


def test_uint8_comes_back_as_uint8_and_zero_d_values_stay_zero_d(iree):
    # rule: onnx/if -- IREE hands uint8 back as int8; 200 + 200 wraps to 144
    model, feeds, expected = em.if_model(np.uint8, cond=True)
    got = iree.run(model, feeds)
    em.agrees(got, expected)
    assert got["y"].tolist() == [144, 6]
    loop, feeds, expected = em.counted_loop(m=1)  # M, cond and b are 0-D
    assert iree.run(loop, feeds)["b_final"].shape == ()


def test_a_scan_state_runs(iree):
    # rule: onnx/scan9 -- the running sum of the rows, carried as the Scan's state
    model, feeds, expected = em.running_sum_scan(with_rows=False)
    em.agrees(iree.run(model, feeds), expected)


@pytest.mark.parametrize("what, model", [
    ("without both M and cond", lambda: em.scan_loop()[0]),   # Loop(M, "", s)
    ("below opset 13", lambda: em.counted_loop(opset=11)[0]),
])
def test_what_iree_does_not_convert_is_refused(iree, what, model):
    feeds = {"M": np.array(3, np.int64), "cond": np.array(True), "s": np.array(0, np.float32),
             "a": np.zeros(2, np.float32), "b": np.array(1.0)}
    with pytest.raises(dt.Unsupported, match="iree: "):
        iree.run(model(), feeds)


def test_a_short_campaign_runs_isolated_and_reports_iree_version(iree):
    iree.run(*em.counted_loop()[:2])  # compiled here first: the forked child must not hang
    report = dt.check(iree, max_examples=4, seed=0, shrink=False, timeout=30)
    em.campaign_counts_add_up(report, 4)
    assert not [d for d in report.disagreements if "no answer within" in (d.error or "")]
    assert report.backend_version == version("iree-base-compiler")
    assert set(report.by_kind) <= {"onnx-loop-m-cond", "onnx-scan11", "onnx-if", "onnx-scan-if",
                                   "onnx-schema-scan"}


def test_repro_py_compiles_and_runs_the_model_with_iree_alone(tmp_path):
    model, feeds, expected = em.if_model(np.uint8, cond=False)  # 200 * 200 wraps to 64
    done = em.run_repro(tmp_path, "iree", model, feeds, expected)
    assert done.returncode == 0 and "y: agrees" in done.stdout, done.stdout + done.stderr
