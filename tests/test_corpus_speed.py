"""corpus/speed.py, the measurement of lazyloop against onnxruntime on the exporter corpus
(issue 25): its rows and report on a few committed models. Times are never asserted; what is
checked is what the rows say about the models (which side could run them, how many loop
elements the reference rules forced where that does not depend on the engine)."""
from __future__ import annotations

import functools
import importlib.util
import os
import sys

import pytest

pytest.importorskip("onnxruntime")

CORPUS = os.path.join(os.path.dirname(__file__), "corpus")


@functools.lru_cache(maxsize=None)
def speed():
    """corpus/speed.py as a module (registered first: its dataclass needs its module)."""
    where = os.path.join(os.path.dirname(__file__), os.pardir, "corpus", "speed.py")
    spec = importlib.util.spec_from_file_location("corpus_speed", where)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


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
    s = speed()
    cases = ["jax2onnx/top_cond", "torch_dynamo/while_counter", "paddle2onnx/nested_while",
             "skl2onnx/radius_regressor"]
    strict = under_readings("paddle2onnx/nested_while", {"A18": "constraint"}, str(tmp_path))
    rows = s.corpus_ratios([model(c) for c in cases] + [strict], budget=0.001)
    by_case = {r.case: r for r in rows}
    assert list(by_case) == cases + [strict]
    top, loop, nested, no_ort = (by_case[c] for c in cases)
    refused = by_case[strict]
    # paddle's nested while runs on both sides under the default readings (A18 "as-given")
    assert nested.ratio > 0 and nested.error == ""
    # both sides ran: a ratio from at least 5 interleaved rounds
    assert top.ratio > 0 and loop.ratio > 0 and top.rounds >= 5 and loop.rounds >= 5
    # an If outside loops has no loop element to force: never "fell back"
    assert top.reference_elements == 0 and top.fell_back is False and top.not_static == ""
    assert isinstance(loop.reference_elements, int) and loop.fell_back is not None
    # lazyloop refuses it under A18 "constraint" (onnx/declared); onnxruntime the radius
    # regressor
    assert refused.ratio is None and refused.error.startswith("lazyloop: ModelError")
    assert no_ort.ratio is None and no_ort.lazyloop_s > 0
    assert no_ort.error.startswith("onnxruntime: ")


def test_summary_and_report():
    s = speed()
    rows = [s.Ratio("a", 2.0, 1.0, 5, 0, ""), s.Ratio("b", 8.0, 1.0, 5, 500, "L: why"),
            s.Ratio("c", None, None, 0, None, "", "lazyloop: ModelError: no")]
    got = s.summary(rows)
    assert got["geomean"] == pytest.approx(4.0) and got["median"] == pytest.approx(5.0)
    assert [r.case for r in got["worst"]] == ["b", "a"]
    assert got["fell_back"] == 1 and got["unknown_path"] == 1 and got["timed"] == 2
    text = s.report(rows)
    assert "geometric mean 4.00x, median 5.00x" in text
    assert "worst: b 8.0x, a 2.0x" in text
    assert "fell back to the reference machine (> 50 loop elements through its rules): 1 of 3" \
        in text
    assert "no ratio: c: lazyloop: ModelError: no" in text


def test_every_corpus_model_has_its_feeds():
    s = speed()
    paths = s.corpus_paths()
    assert len(paths) >= 80
    for path in paths:
        feeds, _ = s.feeds_and_readings(path)
        assert s.case_of(path).count("/") == 1 and isinstance(feeds, dict)
