"""MNN as a built-in backend (`mnn`, extra [mnn]): its converter and Module API called
directly, never the `mnnconvert` Python wrapper (which pip-installs a package and uploads
logs); hand-made Loop and If models with answers worked out by hand, a short campaign and
repro.py.

rules: onnx/loop, onnx/if, trip/both
"""
import sys
from importlib.metadata import version

import numpy as np
import pytest

pytest.importorskip("MNN")

import lazyloop.difftest as dt  # noqa: E402
from tests import engine_models as em  # noqa: E402


@pytest.fixture(scope="module")
def mnn():
    return dt.backend("mnn")


def test_a_counted_loop_runs(mnn):
    # rule: onnx/loop -- M = 3 trips (MNN keeps M int32 and b float32: exact here)
    model, feeds, expected = em.counted_loop(m=3)
    em.agrees(mnn.run(model, feeds), expected)


def test_a_loop_whose_cond_is_false_runs_no_trip(mnn):
    # rule: trip/both -- cond false: zero trips, the carried values come out as they went in
    model, feeds, expected = em.counted_loop(m=3, cond=False)
    em.agrees(mnn.run(model, feeds), expected)


@pytest.mark.parametrize("cond", [True, False])
def test_an_if_takes_its_branch(mnn, cond):
    # rule: onnx/if -- then x + x, else x * x (float32: MNN's 8-bit integer arithmetic is
    # not what this test is about)
    model, feeds, expected = em.if_model(np.float32, cond=cond)
    em.agrees(mnn.run(model, feeds), expected)


def test_int64_feeds_past_int32_are_refused_not_wrapped(mnn):
    model, feeds, _ = em.counted_loop(m=3)
    with pytest.raises(dt.Unsupported, match="int64"):
        mnn.run(model, dict(feeds, M=np.array(2 ** 40, np.int64)))


def test_the_wrapper_that_uploads_logs_is_never_imported(mnn):
    assert "MNN.tools.mnnconvert" not in sys.modules
    assert "MNN.tools.utils.log" not in sys.modules
    with pytest.raises(ImportError):
        import MNN.tools  # noqa: F401 -- blocked in the process that runs MNN


def test_a_short_campaign_runs_isolated_and_reports_mnn_version(mnn):
    report = dt.check(mnn, max_examples=20, seed=0, shrink=False)
    em.campaign_counts_add_up(report, 20)
    assert report.backend_version == version("mnn")
    assert set(report.by_kind) <= {"onnx-loop", "onnx-if-no-8bit", "onnx-schema-loop"}


def test_repro_py_converts_and_runs_the_model_with_mnn_alone(tmp_path):
    model, feeds, expected = em.counted_loop(m=2)
    done = em.run_repro(tmp_path, "mnn", model, feeds, expected)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "a_final: agrees" in done.stdout and "b_final: agrees" in done.stdout
    assert "MNN.tools" not in done.stdout + done.stderr
