"""The exporter corpus against onnxruntime (`lazyloop.bench.corpus`, section r of
`lazyloop bench`, and `corpus/speed.py`): its rows and report on a few committed models.
Times are never asserted; what is checked is what the rows say about the models (which side
could run them, which evaluator ran their loops). (rule: laziness/modes)"""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytest.importorskip("onnxruntime")

from lazyloop.bench import corpus as bc  # noqa: E402
from lazyloop.bench.measure import QUICK  # noqa: E402

CORPUS = os.path.join(os.path.dirname(__file__), "corpus")


def model(case):
    return os.path.join(CORPUS, *case.split("/")) + ".onnx"


def under_readings(case, readings, where):
    """A copy of a corpus model whose answers file names other readings (outside the corpus:
    its row is named by its path)."""
    import json
    import shutil

    import numpy as np
    base = os.path.join(where, case.replace("/", "_"))
    shutil.copy(model(case), base + ".onnx")
    with np.load(model(case)[:-len(".onnx")] + ".npz", allow_pickle=False) as entries:
        data = dict(entries)
    meta = json.loads(str(data["meta"]))
    data["meta"] = np.array(json.dumps({**meta, "readings": readings}))
    np.savez(base + ".npz", **data)
    return base + ".onnx"


def test_rows_say_which_side_ran_each_model(tmp_path):
    cases = ["jax2onnx/top_cond", "torch_dynamo/while_counter", "paddle2onnx/nested_while",
             "skl2onnx/radius_regressor"]
    strict = under_readings("paddle2onnx/nested_while", {"A18": "constraint"}, str(tmp_path))
    rows = bc.corpus_ratios([model(c) for c in cases] + [strict], budget=0.001)
    by_case = {r.case: r for r in rows}
    assert list(by_case) == cases + [strict]
    top, loop, nested, no_ort = (by_case[c] for c in cases)
    refused = by_case[strict]
    # paddle's nested while runs on both sides under the default readings (A18 "as-given")
    assert nested.ratio > 0 and nested.error == ""
    # both sides ran: a ratio from at least 5 interleaved rounds
    assert top.ratio > 0 and loop.ratio > 0 and top.rounds >= 5 and loop.rounds >= 5
    # an If outside loops runs no loop; the while loop runs on the engine
    assert top.paths == {} and top.on_engine and top.reason == ""
    assert loop.paths == {"node_while_loop__1": "engine"} and loop.on_engine
    # lazyloop refuses it under A18 "constraint" (onnx/declared); onnxruntime the radius
    # regressor
    assert refused.ratio is None and refused.error.startswith("lazyloop: ModelError")
    assert refused.on_engine is None
    assert no_ort.ratio is None and no_ort.lazyloop_s > 0
    assert no_ort.error.startswith("onnxruntime: ")


def test_summary_and_report():
    rows = [bc.Ratio("a", 2.0, 1.0, 5, {"L": "engine"}),
            bc.Ratio("b", 8.0, 1.0, 5, {"L": "engine", "M": 'reference: reading A10=eager'}),
            bc.Ratio("c", None, None, 0, {}, "lazyloop: ModelError: no")]
    got = bc.summary(rows)
    assert got["geomean"] == pytest.approx(4.0) and got["median"] == pytest.approx(5.0)
    assert [r.case for r in got["worst"]] == ["b", "a"]
    assert got["on_engine"] == 1 and got["ran"] == 2 and got["timed"] == 2
    assert got["reasons"] == ["b M: reference: reading A10=eager"]
    text = bc.report(rows)
    assert "geometric mean 4.00x, median 5.00x" in text
    assert "worst: b 8.0x, a 2.0x" in text
    assert "every loop on the engine: 1 of the 2 models lazyloop ran" in text
    assert "no ratio: c: lazyloop: ModelError: no" in text


def test_every_corpus_model_has_its_feeds():
    paths = bc.corpus_paths()
    assert len(paths) >= 80
    for path in paths:
        feeds, _ = bc.feeds_and_readings(path)
        assert bc.case_of(path).count("/") == 1 and isinstance(feeds, dict)


def test_the_bench_rows():
    # the quick configuration's models: four rows, the ratios positive, every loop on the
    # engine; without the clone's corpus the section says it is skipped
    rows = bc.bench_corpus(QUICK)
    assert [r.key for r in rows] == ["r1", "r2", "r3", "r4"]
    assert all(r.ratio > 0 for r in rows[:3]) and rows[0].target == 2.0
    assert rows[3].measured == f"{len(QUICK['corpus_cases'])} of {len(QUICK['corpus_cases'])}"


def test_the_bench_section_without_a_corpus(monkeypatch, tmp_path):
    monkeypatch.setattr(bc, "CORPUS", str(tmp_path))
    monkeypatch.setattr(bc, "corpus_paths", lambda corpus=str(tmp_path): [])
    (row,) = bc.bench_corpus(QUICK)
    assert row.measured == "skipped" and "needs a clone" in row.baseline


def test_the_script_reports():
    done = subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__), os.pardir,
                                                        "corpus", "speed.py"),
                           model("onnxscript/for_sum"), "--budget", "0.001"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "onnxscript/for_sum" in done.stdout and "geometric mean" in done.stdout
    assert "every loop on the engine: 1 of the 1 models lazyloop ran" in done.stdout
