"""`lazyloop check --model`: the user's own model, fed drawn inputs (spec/51-difftest.md,
"Your own models").

rules: onnx/loop, trip/count
"""
import glob
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import lazyloop.difftest as dt
from lazyloop.difftest.model_feeds import (Declared, declared_inputs, feeds_of,
                                           model_subjects, read_model)
from lazyloop.difftest.shrinking import draw_program
from tests import planted

onnx = pytest.importorskip("onnx")
pytest.importorskip("hypothesis")
from onnx import TensorProto, helper  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "tests", "corpus")


def counting_loop(path):
    """Loop(M, "", x) adding 1 to x each trip and stacking it: x is float32[T, 2] (T a
    symbolic dim), M an int64 scalar graph input. Saved to `path`."""
    f = TensorProto.FLOAT
    one = helper.make_tensor("one", f, [], [1.0])
    body = helper.make_graph(
        [helper.make_node("Identity", ["cin"], ["cout"]),
         helper.make_node("Add", ["xb", "one"], ["y"]),
         helper.make_node("Identity", ["y"], ["ys"])], "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cin", TensorProto.BOOL, []),
         helper.make_tensor_value_info("xb", f, ["T", 2])],
        [helper.make_tensor_value_info("cout", TensorProto.BOOL, []),
         helper.make_tensor_value_info("y", f, ["T", 2]),
         helper.make_tensor_value_info("ys", f, ["T", 2])])
    graph = helper.make_graph(
        [helper.make_node("Loop", ["M", "", "x"], ["xf", "xs"], body=body)], "main",
        [helper.make_tensor_value_info("M", TensorProto.INT64, []),
         helper.make_tensor_value_info("x", f, ["T", 2]),
         helper.make_tensor_value_info("w", f, ["T", 2])],
        [helper.make_tensor_value_info("xf", f, ["T", 2]),
         helper.make_tensor_value_info("xs", f, [None, "T", 2])], initializer=[one])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
              str(path))
    return str(path)


def test_declared_inputs_say_what_drives_the_loop(tmp_path):
    path = counting_loop(tmp_path / "m.onnx")
    fmt, model = read_model(path)
    assert fmt == "onnx"
    assert declared_inputs(path, fmt, model) == (
        Declared("M", np.dtype(np.int64), (), False, "count"),
        Declared("x", np.dtype(np.float32), ("T", 2), False, "values"),
        Declared("w", np.dtype(np.float32), ("T", 2), False, "values"))


def test_symbolic_dims_are_drawn_once_and_counts_reach_every_class(tmp_path):
    # rule: trip/count -- 0, 1, a small and a large trip count among 60 programs
    strategy = model_subjects(counting_loop(tmp_path / "m.onnx"))
    counts = set()
    for i in range(60):
        feeds = draw_program(strategy, 0, i)[0].feeds
        assert feeds["x"].shape == feeds["w"].shape and feeds["x"].shape[1] == 2
        assert feeds["x"].dtype == np.float32 and feeds["M"].dtype == np.int64
        counts.add(int(feeds["M"]))
    assert {0, 1} <= counts and counts & {2, 3} and counts & {64, 1000}
    # the same (seed, index): the same feeds
    a, b = (draw_program(strategy, 5, 7)[0] for _ in range(2))
    assert a.key() == b.key()


def test_sequences_are_drawn_empty_and_not():
    inputs = (Declared("s", np.dtype(np.float32), (2,), True),)
    from lazyloop.difftest.shrinking import draw_with
    import random
    sizes = {len(draw_with(feeds_of(inputs), random.Random(k))[0]["s"]) for k in range(40)}
    assert 0 in sizes and max(sizes) > 0


def test_a_fault_for_some_feeds_is_found_and_its_feeds_shrunk(tmp_path):
    # rule: onnx/loop -- the backend runs one trip too many only when M >= 3: found, and its
    # case's trip count shrunk to 3, the smallest that fails; the model is the user's
    path = counting_loop(tmp_path / "m.onnx")
    report = dt.check(planted.WrongFromThreeTrips(), max_examples=30, seed=0, isolate=False,
                      models=[path])
    assert len(report.disagreements) == 1, report.summary()
    d = report.disagreements[0]
    assert int(d.feeds["M"]) == 3
    assert d.feeds["x"].shape == (1, 2)
    assert not np.any(d.feeds["x"])  # values shrunk toward 0
    assert d.model.SerializeToString() == onnx.load(path).SerializeToString()
    assert [m["path"] for m in report.models] == [path]


def cli(*args, cwd):
    env = dict(os.environ, PYTHONPATH=ROOT)
    return subprocess.run([sys.executable, "-m", "lazyloop", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)


def test_the_command_writes_the_case_with_shrunk_feeds_and_lists_the_models(tmp_path):
    path = counting_loop(tmp_path / "m.onnx")
    done = cli("check", "--backend", "tests.planted:WrongFromThreeTrips", "--model", path,
               "--examples", "30", "--out", "out", "--quiet", cwd=tmp_path)
    assert done.returncode == 1, done.stderr[-3000:]
    doc = json.loads((tmp_path / "out" / "report.json").read_text())
    assert doc["models"] == [{"path": path, "format": "onnx", "programs": 30, "findings": 1}]
    case = tmp_path / "out" / doc["findings"][0]["case"]
    from lazyloop.difftest.cases import read_case
    saved = read_case(str(case))
    assert int(saved.data_sets[0].inputs["M"]) == 3
    rerun = subprocess.run([sys.executable, "repro.py"], cwd=case, capture_output=True,
                           text=True, timeout=300, env=dict(os.environ, PYTHONPATH=ROOT))
    assert rerun.returncode == 1, rerun.stdout + rerun.stderr


def test_onnxruntime_on_a_corpus_model_agrees(tmp_path):
    pytest.importorskip("onnxruntime")
    model = os.path.join(CORPUS, "onnxscript", "for_sum.onnx")
    done = cli("check", "--backend", "onnxruntime", "--model", model, "--examples", "20",
               "--json", "r.json", "--quiet", cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["programs"]["run"] > 10 and not doc["findings"]
