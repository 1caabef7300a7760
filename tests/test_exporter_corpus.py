"""The exporter corpus: ONNX loop models written by onnxscript, tf2onnx, torch's TorchScript
exporter (issue 11), jax2onnx, torch's dynamo exporter, skl2onnx and paddle2onnx (issue 25),
checked against the exporting framework's own answers.

The models and answers are committed files (tests/corpus/, written by corpus/make_corpus.py);
this file needs none of the exporters. Outputs are compared as the differential tester compares
them (rule: onnx/sequences -- sequences by length then element, optionals by presence then
value). Every model gives the framework's answer, under the readings its case names.
"""
from __future__ import annotations

import functools

import numpy as np
import pytest

import lazyloop as ll
import lazyloop.onnx as lo

from corpus_data import case_ids, differences, load

CASES = case_ids()

# case -> how onnxruntime fails it (corpus/README.md's table says the same; spec/50, EXP-1).
# while_cond_1 is refused by ONNX's strict shape inference too; lazyloop runs it as ONNX's
# reference evaluator does and gives the Python program's answer.
ONNXRUNTIME_WRONG = {
    "onnxscript/while_cond_1": "refuses to load: the Loop's cond is [1] while the body "
                               "declares its condition input a scalar",
    # skl2onnx pads the neighbours outside the radius with index -1, reads them with
    # ArrayFeatureExtractor, then weighs them by 0; the operator text says nothing of negative
    # indices, onnxruntime refuses them, ONNX's reference evaluator takes them from the end
    "skl2onnx/radius_regressor": "refuses to run: ArrayFeatureExtractor index -1",
}


def test_npz_format_round_trips(tmp_path):
    """The writer (corpus/make_corpus.py, importable without any exporter) and the reader
    (corpus_data.unpack) agree on tensors, sequences (also empty) and empty optionals."""
    values = {"t": np.arange(3, dtype=np.float32), "s": [np.array(1), np.zeros((2, 0))],
              "e": [], "o": None, "a:b/c.0": np.array(True)}
    entries = {}
    for k, v in enumerate(values.values()):
        maker().pack(f"out{k}", v, entries)
    np.savez(tmp_path / "x.npz", **entries)
    from corpus_data import unpack
    with np.load(tmp_path / "x.npz") as loaded:
        back = unpack(loaded, "out", list(values))
    assert list(back) == list(values)
    assert differences(values, back) == []
    assert back["e"] == [] and back["o"] is None


@functools.lru_cache(maxsize=None)
def maker():
    """corpus/make_corpus.py as a module (it imports no exporter at module level)."""
    import importlib.util
    import os

    where = os.path.join(os.path.dirname(__file__), os.pardir, "corpus", "make_corpus.py")
    spec = importlib.util.spec_from_file_location("make_corpus", where)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_corpus_is_there():
    exporters = {c.split("/")[0] for c in CASES}
    assert {"onnxscript", "torch", "tf2onnx", "jax2onnx", "torch_dynamo", "skl2onnx",
            "paddle2onnx"} <= exporters
    assert len(CASES) >= 80


# case -> why ONNX's checker (full_check: strict shape inference) refuses the model
CHECKER_REFUSES = {
    "onnxscript/while_cond_1": "the Loop's cond is [1] while the body declares a scalar",
}


# every committed model passes ONNX's own checker with its strict shape inference, but the
# one CHECKER_REFUSES names; every model of the issue-25 exporters holds a Loop, Scan or If
# somewhere (an exporter that unrolled the loop would give the corpus nothing to measure)
@pytest.mark.parametrize("case", CASES)
def test_every_model_passes_the_full_onnx_check(case):
    import onnx
    model = onnx.load(load(case)[0])
    if case in CHECKER_REFUSES:
        with pytest.raises(onnx.shape_inference.InferenceError):
            onnx.checker.check_model(model, full_check=True)
    else:
        onnx.checker.check_model(model, full_check=True)
    if case.split("/")[0] in ("jax2onnx", "torch_dynamo", "skl2onnx", "paddle2onnx"):
        found = maker().control_flow(model.graph) + [
            op for f in model.functions for op in maker().control_flow(f)]
        assert found, f"{case} holds no Loop, Scan or If"


# rule: onnx/loop -- every exporter model gives the framework's answer (under the readings
# the case names: {"A15": "honour"} for onnxscript's break)
@pytest.mark.parametrize("case", CASES)
def test_lazyloop_gives_the_framework_answer(case):
    path, feeds, want, meta = load(case)
    got = lo.evaluate(path, feeds, readings=meta["readings"] or None)
    assert list(got) == list(want)
    assert differences(want, got) == []


BREAKS = [c for c in CASES if load(c)[3]["readings"].get("A15") == "honour"]


# rule: onnx/loop -- onnxscript's break relies on the body's condition being honoured with
# M given and cond omitted; under the default reading (the operator text: the condition is
# ignored) the loop runs all M trips, and so gives another answer
@pytest.mark.parametrize("case", BREAKS)
def test_break_differs_under_the_default_reading(case):
    path, feeds, want, meta = load(case)
    honoured = lo.evaluate(path, feeds, readings={"A15": "honour"})
    letter = lo.evaluate(path, feeds)
    assert differences(want, honoured) == []
    assert differences(want, letter) != []


HINTS = [c for c in CASES if load(c)[3]["readings"].get("A17") == "hint"]


# rule: onnx/declared -- TorchScript declares a torch.cat-grown carried input with the first
# trip's static dims; under A17's default those dims are a constraint the model breaks, and it
# is refused at the Loop naming the rule; under "hint" it gives torch's answer (spec/50, EXP-3)
@pytest.mark.parametrize("case", HINTS)
def test_declared_dims_as_hints_differ_from_the_default_reading(case):
    path, feeds, want, meta = load(case)
    assert differences(want, lo.evaluate(path, feeds, readings={"A17": "hint"})) == []
    with pytest.raises(ll.ModelError, match=r"onnx/declared.*A17"):
        lo.evaluate(path, feeds)


# rule: onnx/declared -- paddle2onnx's nested while feeds an int64 scalar to a carried body
# input declared int64[1]; under A18's default ("as-given", as onnxruntime and ONNX's reference
# evaluator read it) the model gives paddle's answer (test above); under "constraint" (ONNX's
# IR: a scalar is not a vector of length 1) it is refused at the outer Loop, naming A18
def test_paddle_nested_while_is_refused_under_the_declared_rank_reading():
    path, feeds, want, _ = load("paddle2onnx/nested_while")
    with pytest.raises(ll.ModelError, match=r"Loop\.1.*int64\[1\] in the body but "
                                            r"receives int64\[\].*onnx/declared.*A18"):
        lo.evaluate(path, feeds, readings={"A18": "constraint"})


def test_hint_cases_are_the_torch_cat_loops():
    assert HINTS == ["torch/cat_loop"]


def test_break_cases_are_the_onnxscript_for_breaks():
    assert sorted(BREAKS) == ["onnxscript/for_break", "onnxscript/for_break_1",
                              "onnxscript/for_break_count"]


def onnxruntime_outputs(path, feeds, want):
    ort = pytest.importorskip("onnxruntime")
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    got = session.run(None, {k: np.asarray(v) for k, v in feeds.items()})
    return dict(zip(want, got))


# onnxruntime on the same models: right on all but the cases ONNXRUNTIME_WRONG lists
@pytest.mark.parametrize("case", CASES)
def test_onnxruntime_on_the_corpus(case):
    path, feeds, want, _ = load(case)
    if case in ONNXRUNTIME_WRONG:
        try:
            got = onnxruntime_outputs(path, feeds, want)
        except Exception:  # noqa: BLE001 -- refusing the model is the recorded failure
            return
        assert differences(want, got) != []
    else:
        assert differences(want, onnxruntime_outputs(path, feeds, want)) == []


# The reasons the corpus' loops take the reference machine, written by hand: none -- every
# loop of every committed model runs on the engine (an If in a loop body, a Loop whose scan
# outputs carry weights nobody reads, nested while loops, an inner loop with several outputs,
# an iteration number read only by some runs of an inner loop all do).
REASONS_MET = {}


def test_which_path_ran_every_corpus_loop():
    # rule: laziness/modes -- `run`'s paths say, per loop, "engine" or "reference: <why>"
    met, loops = {}, 0
    for case in CASES:
        path, feeds, _, meta = load(case)
        ran = lo.run(path, feeds, readings=meta["readings"] or None).paths
        loops += len(ran)
        met.update({f"{case} {loop}": why for loop, why in ran.items() if why != "engine"})
    assert met == REASONS_MET
    assert loops >= 80


def test_the_reference_mode_says_so_for_every_loop():
    # rule: laziness/modes -- scan_nested: a Loop in a Loop body, both run by the reference
    path, feeds, _, _ = load("jax2onnx/scan_nested")
    reference = lo.run(path, feeds, trace=True)
    fast = lo.run(path, feeds)
    assert fast.paths == {"node_Loop_0": "engine", "node_Loop_0/node_Loop_1": "engine"}
    assert reference.paths == {loop: 'reference: mode "reference"' for loop in fast.paths}


# rule: laziness/modes, laziness/dead -- every corpus model in every mode: the reference's
# outputs and masks, and in each loop the engine ran, exactly the elements the reference
# forced (with the outer indices of their run), each once (stream/memo)
@pytest.mark.parametrize("case", CASES)
def test_every_mode_gives_the_reference_answer_on_the_corpus(case):
    from lazyloop.core.evaluate import MODES
    from nets import on_engine
    from test_modes import same_values
    path, feeds, _, meta = load(case)
    readings = meta["readings"] or None
    lowered = lo.lower(path, readings)
    plan = ll.compile_network(lowered.network, readings)
    core_feeds = lowered.core_feeds(feeds)
    reference = ll.run(plan, core_feeds, readings=readings)
    for mode in MODES[1:]:
        run = ll.run(plan, core_feeds, readings=readings, trace=False, mode=mode)
        assert same_values(run.outputs, reference.outputs), mode
        assert same_values(run.defined, reference.defined), mode
        _, machine = on_engine(plan, core_feeds, readings, mode)
        assert bool(machine.scheduled_loops) == bool(plan.loops), mode  # If alone: no loop
        for loop in machine.scheduled_loops:
            forced = [r if len(r) == 3 else r + ((),) for r in machine.record
                      if plan.nodes[r[0]].scope == loop]
            assert len(forced) == len(set(forced)), (mode, loop)
            assert set(forced) == {(e.stream, e.index, e.activation) for e in reference.trace
                                   if e.loop == loop}, (mode, loop)
