"""Findings are grouped by root cause, program i is a pure function of (seed, i) so campaigns
split over Dask workers find the same, every finding gets a standalone repro.py, and tract is
a built-in backend.

rules: onnx/loop, onnx/scan9, trip/count
"""
import os

import numpy as np
import pytest

import lazyloop
import lazyloop.difftest as dt
from lazyloop.difftest.shrinking import draw_program
from lazyloop.difftest.subject import subjects
from tests import planted
from tests.findings_cases import run_repro

pytest.importorskip("onnx")
pytest.importorskip("hypothesis")


def test_program_i_is_a_pure_function_of_seed_and_i():
    strategy = subjects(("onnx",))
    a = [draw_program(strategy, 7, i)[0].key() for i in (0, 5, 9)]
    b = [draw_program(strategy, 7, i)[0].key() for i in (9, 5, 0)][::-1]
    assert a == b
    assert len(set(a)) == 3
    assert draw_program(strategy, 8, 5)[0].key() != a[1]


def test_two_planted_faults_give_two_root_causes_one_fault_met_twice_gives_one():
    # rule: onnx/scan9 -- Scan outputs come back plus one (an offset); onnx/loop -- Loop
    # outputs come back as float64 (a dtype): two symptoms, two root causes, each met by
    # many programs and shrunk to one minimal case
    report = dt.check(planted.AddsOneToScans(), max_examples=100, seed=0,
                      kinds=["onnx-loop", "onnx-scan9"], isolate=False)
    found = {d.root_cause[2]: d for d in report.disagreements}
    assert sorted(found) == ["dtype", "offset"], report.summary()
    assert found["dtype"].root_cause[1] == ("Loop",)
    assert found["offset"].root_cause[1] == ("Scan",)
    assert all(d.occurrences > 1 for d in found.values())


def test_two_workers_find_what_one_process_finds():
    pytest.importorskip("distributed")
    one = dt.check("tests.planted:loop_plus_one", max_examples=20, seed=2, shrink=False)
    two = dt.check("tests.planted:loop_plus_one", max_examples=20, seed=2, shrink=False,
                   workers=2)
    assert two.generated == one.generated == 20
    assert (two.agreements, two.instances) == (one.agreements, one.instances)
    assert [(d.root_cause, d.found_after, d.occurrences) for d in two.disagreements] == \
        [(d.root_cause, d.found_after, d.occurrences) for d in one.disagreements]
    assert one.instances > 0
    # the backend's version, however the programs were explored (lazyloop's own frontend
    # with a planted fault reports lazyloop's version)
    assert two.backend_version == one.backend_version == lazyloop.__version__


def test_repro_py_runs_without_lazyloop(tmp_path):
    pytest.importorskip("onnxruntime")
    report = dt.check(dt.TripCountPlusOne(dt.backend("lazyloop")), max_examples=30, seed=1,
                      kinds=["onnx-loop"], shrink=False)
    d = report.disagreements[0]
    report.backend = "onnxruntime"  # the same model on onnxruntime: it agrees with lazyloop
    good = dt.write_case(str(tmp_path), "good", d, report)
    d.expected = {k: np.asarray(v) + np.ones((), np.asarray(v).dtype)
                  for k, v in d.expected.items()}
    bad = dt.write_case(str(tmp_path), "bad", d, report)
    ok = run_repro(good, timeout=120)
    assert ok.returncode == 0, ok.stderr
    assert "agrees" in ok.stdout and "expected" in ok.stdout and "actual" in ok.stdout
    wrong = run_repro(bad, timeout=120)
    assert wrong.returncode == 1 and "DIFFERS" in wrong.stdout, wrong.stderr
    readme = open(os.path.join(good, "README.md")).read()
    assert "onnxruntime" in readme and "--seed 1" in readme and "repro.py" in readme


def test_tract_runs_scan_and_refuses_loop():
    pytest.importorskip("tract")
    from lazyloop.strategies.dialects import OnnxLoopRecipe, OnnxScanRecipe
    b = dt.backend("tract")
    # the body doubles each row of x (Mul by two); the scan output stacks them
    p = OnnxScanRecipe(opset=16, length=2, element=(2,), inputs=((0, 0),), states=0,
                       outputs=(("input", 0, 0),)).program()
    x = np.array([[1, 1], [2, 2]], np.float32)
    out = b.run(p.model, {"x0": x})
    assert np.array_equal(out["o0_stacked"], [[2, 2], [4, 4]])  # 2 * x, by hand
    loop = OnnxLoopRecipe(opset=16, mode="M,cond", count=2, cond_init=True, body_cond="pass",
                          stop=0, m_source="const", cond_source="const", carried=(),
                          scans=(("iter", 0),), seed=0).program()
    with pytest.raises(dt.Unsupported):
        b.run(loop.model, loop.feeds)


def test_long_loops_wrap_narrow_counters_as_numpy_does():
    # rule: onnx/loop -- 300 trips of an int8 counter from 5 by 1, accumulating the counter
    from lazyloop.strategies.dialects import OnnxLongLoopRecipe
    p = OnnxLongLoopRecipe(dtype="int8", count=300, start=5, step=1, scan_state=True).program()
    expected, _, _ = dt.Subject("onnx-long-loop", "onnx", p).expectation()
    counter, acc, stacked = np.int8(5), np.int8(0), []
    with np.errstate(over="ignore"):
        for _ in range(300):
            counter = np.int8(counter + np.int8(1))
            acc = np.int8(acc + counter)
            stacked.append(counter)
    assert expected["counter_final"] == counter == 49  # 305 - 256, by hand
    assert expected["acc_final"] == acc
    assert np.array_equal(expected["counter_stacked"], stacked)
    assert expected["counter_stacked"].dtype == np.int8


def test_a_trip_count_kept_in_eight_bits_is_caught_in_the_default_mix():
    # rule: trip/count -- caught within 200 programs of the default mix, not a narrowed one
    report = dt.check(planted.CounterInInt8(), max_examples=200, seed=0, shrink=False)
    kinds = {s[1] for d in report.disagreements for s in (d.signature,) + d.also_seen_as}
    assert "onnx-long-loop" in kinds, report.summary()  # (and onnx-count-loop, issue 22)


def test_an_if_that_takes_the_wrong_branch_is_caught_in_the_default_mix():
    # rule: onnx/if -- caught within 200 programs of the default mix, in If-only programs
    report = dt.check(planted.SwappedIf(), max_examples=200, seed=0, shrink=False)
    kinds = {d.subject.kind for d in report.disagreements}
    assert kinds & {"onnx-if", "onnx-scan-if"}, report.summary()


def test_shrinking_stops_at_its_step_budget_and_keeps_what_it_reached():
    # rule: onnx/loop -- a budget of 1 step: the shrinker stops at once, the campaign goes on
    report = dt.check(planted.loop_plus_one(), max_examples=60, seed=1, kinds=["onnx-loop"],
                      shrink_steps=1)
    assert report.disagreements
    d = report.disagreements[0]
    assert d.subject.expectation() and d.error is None and d.actual is not None


def test_notebook_sevens_reader_takes_schema_2_reports(tmp_path):
    # rule: onnx/loop -- a report of today's `check` (symptom and minimal case in the key)
    # reads as the four parts notebook 7 uses: format, constructs, control rules, symptom
    from lazyloop.difftest.schema import check_document, judge, to_json
    from lazyloop.teach import campaign
    report = dt.check(planted.AddsOneToScans(), max_examples=30, seed=0,
                      kinds=["onnx-loop", "onnx-scan9"], isolate=False)
    (tmp_path / "report.json").write_text(to_json(judge(check_document(report))))
    read = campaign.load_report(tmp_path / "report.json")
    keys = {f.key[1]: f.key for f in read.findings}
    assert keys[("Scan",)][3] == "offset" and "onnx/scan9" in keys[("Scan",)][2]
    assert keys[("Loop",)][3] == "dtype" and "onnx/loop" in keys[("Loop",)][2]
