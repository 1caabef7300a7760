"""New faults before old ones (spec/51-difftest.md, "New faults before old ones"): a
program's shape, programs shaped like a known cause drawn again, deterministically, and the
report's `known_causes`.

rules: onnx/loop, onnx/scan9
"""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import lazyloop.difftest as dt
from lazyloop.difftest.campaign import explore
from lazyloop.difftest.checking import Checker
from lazyloop.difftest.known import (REDRAWS, KnownCauses, draw_avoiding, known_causes,
                                     load_known, program_shape, subject_shape)
from lazyloop.difftest.schema import check_document, judge, to_json
from lazyloop.difftest.shrinking import draw_program
from lazyloop.difftest.subject import subjects
from tests import planted

onnx = pytest.importorskip("onnx")
pytest.importorskip("hypothesis")
from onnx import TensorProto, helper  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KINDS = ["onnx-loop", "onnx-scan9"]
SCAN_OFFSET = "onnx | Scan | offset"  # AddsOneToScans: 1 added to outputs of a Scan model
LOOP_DTYPE = "onnx | Loop | dtype"    # and float32 outputs of a Loop model as float64


def loop_with_if():
    """main: Loop(M, "", x) whose body runs If(c) (then: Neg, else: Abs) on x, then Mul,
    and gives y as state and scan output."""
    f = TensorProto.FLOAT
    then_g = helper.make_graph([helper.make_node("Neg", ["xb"], ["t"])], "then", [],
                               [helper.make_tensor_value_info("t", f, [2])])
    else_g = helper.make_graph([helper.make_node("Abs", ["xb"], ["e"])], "else", [],
                               [helper.make_tensor_value_info("e", f, [2])])
    body = helper.make_graph(
        [helper.make_node("Identity", ["cin"], ["cout"]),
         helper.make_node("If", ["c"], ["z"], then_branch=then_g, else_branch=else_g),
         helper.make_node("Mul", ["z", "z"], ["y"]),
         helper.make_node("Identity", ["y"], ["ys"])],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cin", TensorProto.BOOL, []),
         helper.make_tensor_value_info("xb", f, [2])],
        [helper.make_tensor_value_info("cout", TensorProto.BOOL, []),
         helper.make_tensor_value_info("y", f, [2]),
         helper.make_tensor_value_info("ys", f, [2])])
    graph = helper.make_graph(
        [helper.make_node("Loop", ["M", "", "x"], ["xf", "xs"], body=body)], "main",
        [helper.make_tensor_value_info("M", TensorProto.INT64, []),
         helper.make_tensor_value_info("c", TensorProto.BOOL, []),
         helper.make_tensor_value_info("x", f, [2])],
        [helper.make_tensor_value_info("xf", f, [2]),
         helper.make_tensor_value_info("xs", f, [None, 2])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_the_shape_of_a_hand_built_program():
    # rule: onnx/loop -- traits written by hand from the model above: the ops computed in
    # any graph with their first input's dtype, the constructs with their nesting, how the
    # Loop is driven (no condition, its trip count as fed), a scan output
    model = loop_with_if()
    feeds = {"M": np.int64(0), "c": np.bool_(True), "x": np.ones(2, np.float32)}
    assert program_shape(model, feeds) == {
        "op:Neg", "op:Abs", "op:Mul", "dtype:float32",
        "construct:Loop", "construct:Loop>If",
        "Loop:cond=none", "Loop:M=0", "Loop:scan-outputs"}
    # three trips, an empty x and an int64 past 2^31: the trip count is no trait, the
    # values are
    feeds = {"M": np.int64(2 ** 33), "c": np.bool_(True), "x": np.ones(0, np.float32)}
    shape = program_shape(model, feeds)
    assert {"Loop:M=huge", "values:empty", "values:past-2^31"} <= shape
    assert "Loop:M=0" not in program_shape(model, dict(feeds, M=np.int64(3)))


def test_a_program_that_matches_a_known_cause_is_drawn_again():
    strategy = subjects(("onnx",), KINDS)
    first, _ = draw_program(strategy, 0, 0)
    shape = subject_shape(first)
    assert shape  # a program of the mix has a shape
    known = known_causes({"k"}, {"k": shape})
    again, _, redraws = draw_avoiding(strategy, 0, 0, known)
    assert 1 <= redraws <= REDRAWS
    assert again.key() != first.key()
    # no baseline, or one whose causes keep no shape: program i as always
    for nothing in (None, KnownCauses(frozenset({"k"}))):
        same, _, none = draw_avoiding(strategy, 0, 0, nothing)
        assert (same.key(), none) == (first.key(), 0)
    # a shape that names neither an op nor a construct would match everything: not kept
    assert not known_causes({"k"}, {"k": {"values:empty"}}).shapes


def test_drawing_is_a_pure_function_of_seed_index_and_baseline():
    # rule: onnx/scan9 -- two shards of ten programs explore what one run of twenty does
    strategy = subjects(("onnx",), KINDS)
    known = known_causes({"k"}, {"k": {"construct:Scan"}})
    checker = Checker(planted.AddsOneToScans())
    whole = explore(checker, strategy, 4, range(20), known=known)
    parts = explore(checker, strategy, 4, range(10), known=known)
    parts.merge(explore(checker, strategy, 4, range(10, 20), known=known))
    assert whole.redrawn == parts.redrawn > 0
    assert whole.counts == parts.counts
    assert {s: v[0] for s, v in whole.first_seen.items()} == \
        {s: v[0] for s, v in parts.first_seen.items()}


def test_two_workers_find_what_one_process_finds_with_a_baseline():
    pytest.importorskip("distributed")
    known = known_causes({"k"}, {"k": {"construct:Scan"}})
    runs = [dt.check("tests.planted:AddsOneToScans", max_examples=20, seed=4, kinds=KINDS,
                     shrink=False, baseline=known, workers=w) for w in (None, 2)]
    one, two = ([(d.root_cause, d.found_after, d.occurrences) for d in r.disagreements]
                for r in runs)
    assert one == two and one
    assert runs[0].redrawn == runs[1].redrawn > 0


@pytest.fixture(scope="module")
def two_fault_baseline(tmp_path_factory):
    """A shrunk campaign against the two-fault backend, and a baseline of its JSON report
    that knows only the Scan fault (the Loop fault's entry removed, as if never met)."""
    report = dt.check(planted.AddsOneToScans(), max_examples=40, seed=0, kinds=KINDS,
                      isolate=False)
    doc = check_document(report)
    assert sorted(f["root_cause"].rsplit(" | ", 1)[0] for f in doc["findings"]) == \
        [LOOP_DTYPE, SCAN_OFFSET]
    doc["findings"] = [f for f in doc["findings"] if f["root_cause"].startswith(SCAN_OFFSET)]
    path = tmp_path_factory.mktemp("baseline") / "known.json"
    path.write_text(to_json(doc))
    return path, doc["findings"][0]


def test_with_the_first_fault_known_the_second_is_met_more_often(two_fault_baseline):
    # rule: onnx/scan9 -- the Scan fault's minimal case (a zero-length Scan) is known:
    # programs shaped like it are drawn again, so fewer programs meet it and more meet the
    # Loop fault, in the same number of programs
    path, scan = two_fault_baseline
    assert {"construct:Scan", "Scan:length=0"} <= set(scan["shape"])
    known = load_known(str(path))
    assert [k for k, _ in known.shapes] == [scan["root_cause"]]
    runs = [dt.check(planted.AddsOneToScans(), max_examples=40, seed=0, kinds=KINDS,
                     isolate=False, shrink=False, baseline=b) for b in (None, str(path))]
    without, with_ = ({d.root_cause[2]: d.occurrences for d in r.disagreements} for r in runs)
    assert runs[0].redrawn == 0 < runs[1].redrawn
    assert with_["dtype"] > without["dtype"]
    assert with_["offset"] < without["offset"]


def test_a_broad_known_cause_brings_the_other_fault_forward():
    # rule: onnx/loop -- a known cause met by every Scan: with seed 11 the Loop fault is
    # first met by program 4 without the baseline, by an earlier one with it, and by more
    # programs of the twenty
    known = known_causes({"k"}, {"k": {"construct:Scan"}})
    runs = [dt.check(planted.AddsOneToScans(), max_examples=20, seed=11, kinds=KINDS,
                     isolate=False, shrink=False, baseline=b) for b in (None, known)]
    (first0, met0), (first1, met1) = ((d.found_after, d.occurrences)
                                      for r in runs for d in r.disagreements
                                      if d.root_cause[2] == "dtype")
    assert first1 < first0 == 4
    assert met1 > met0


def test_known_causes_counts_the_programs_that_met_each(two_fault_baseline, tmp_path):
    path, scan = two_fault_baseline
    # shrunk, as root-cause keys are those of minimal cases
    report = dt.check(planted.AddsOneToScans(), max_examples=10, seed=0, kinds=KINDS,
                      isolate=False, baseline=str(path))
    doc = check_document(report)
    never = "onnx | If | crash: SIGSEGV | case 0000000000"
    judge(doc, known=frozenset({scan["root_cause"], never}))
    met = next(f["occurrences"] for f in doc["findings"]
               if f["root_cause"] == scan["root_cause"])
    assert doc["known_causes"] == {scan["root_cause"]: met, never: 0}
    assert met > 0
    assert doc["programs"]["redrawn"] == report.redrawn


def test_a_baseline_without_shapes_gives_one_note(two_fault_baseline, tmp_path):
    path, _ = two_fault_baseline
    doc = json.loads(path.read_text())
    for f in doc["findings"]:
        del f["shape"]
        f["case"] = None
    old = tmp_path / "old.json"
    old.write_text(json.dumps(doc))
    env = dict(os.environ, PYTHONPATH=ROOT)
    done = subprocess.run(
        [sys.executable, "-m", "lazyloop", "check", "--backend", "tests.planted:AddsOneToScans",
         "--examples", "3", "--kind", "onnx-loop", "--no-shrink", "--baseline", str(old),
         "--json", "r.json", "--quiet"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    notes = [line for line in done.stderr.splitlines() if "note:" in line]
    assert len(notes) == 1 and "keeps no shape" in notes[0], done.stderr
    assert "Traceback" not in done.stderr
    written = json.loads((tmp_path / "r.json").read_text())
    assert written["programs"]["redrawn"] == 0
    assert list(written["known_causes"]) == [doc["findings"][0]["root_cause"]]
