"""An ambiguity explains a finding by meaning: the backend's answer is what lazyloop computes
under another reading on this very model (spec/51-difftest.md, "Explanations").

rules: openvino/loop5, openvino/slice, onnx/loop, onnx/scan8, onnx/sequences
"""
import numpy as np
import pytest

import lazyloop.difftest as dt
from lazyloop.difftest.checking import Checker
from lazyloop.difftest.reducing import ReducedModel
from lazyloop.difftest.subject import Subject

pytest.importorskip("onnx")


def checked(backend, fmt, model, feeds):
    """The outcome of `model` on `backend`, with the reading that explains it (if any)."""
    subject = Subject("reduced", fmt, ReducedModel.of(fmt, model, feeds))
    checker = Checker(backend)
    out = checker.outcome(subject)
    checker.attribute(subject, out, out.actual)
    return out


# -- A22: a condition that folds to false is as false as a literal one -----------------------

def zero_trip_last_value(folded: bool):
    """Loop-5, trip count 2, execution condition false -- a literal Constant, or
    Greater(0, 0) -- with one back-edged [1] value (m + 1) output by last iteration."""
    import openvino as ov
    from openvino import opset13 as ops
    x = ops.parameter([1], np.float32, name="x")
    zero = ops.constant(np.int64(0))
    cond = ops.greater(zero, zero) if folded else ops.constant(False)
    m = ops.parameter([1], np.float32, name="m")
    results = [ops.result(ops.constant(True)),
               ops.result(ops.add(m, ops.constant(np.float32([1]))))]
    loop = ops.loop(ops.constant(np.int64(2)), cond)
    loop.set_function(ov.Model(results, [m]))
    loop.set_special_body_ports([-1, 0])
    loop.set_merged_input(m, x.output(0), results[1].output(0))
    y = ops.result(loop.get_iter_value(results[1].output(0), -1))
    y.output(0).get_tensor().set_names({"y"})
    return ov.Model([y], [x])


@pytest.mark.parametrize("folded", [False, True])
def test_a22_explains_a_zero_trip_shape_whether_the_condition_is_literal_or_folds(folded):
    # rule: openvino/loop5 -- zero trips: the last value is the initial [5.] (shape [1]);
    # OpenVINO's CPU plugin returns shape [0] in both forms (checked by hand with plain
    # openvino), which is A22's "inference" reading
    pytest.importorskip("openvino")
    out = checked(dt.backend("openvino"), "openvino", zero_trip_last_value(folded),
                  {"x": np.float32([5])})
    assert out.status == "disagree" and str(out.symptom) == "rows"
    assert np.shape(out.actual["y"]) == (0,)
    assert out.reading == "A22=inference"


# -- A23: a reading that changes values explains values --------------------------------------

class StrideCutBackend:
    """lazyloop's OpenVINO frontend cutting |stride| elements per trip, the rest of each chunk
    left as zeros (A23 "stride-cut" with its undefined positions made concrete): a backend
    that answers with values, where the CPU plugin refuses these models outright."""

    name = "stride-cut"
    format = "openvino"
    formats = ("openvino",)

    def run(self, model, feeds):
        import lazyloop.openvino as lo
        r = lo.run(model, feeds, readings={"A23": "stride-cut"})
        return {k: np.where(r.defined[k], v, 0) for k, v in r.outputs.items()}


def overlapping_chunks():
    """Loop-5 of 2 trips over x [4, 2] sliced on axis 0 with part_size 2 and stride 1 (chunks
    overlap); the chunk is the back-edged value, output by last iteration."""
    import openvino as ov
    from openvino import opset13 as ops
    x = ops.parameter([4, 2], np.float32, name="x")
    chunk = ops.parameter([2, 2], np.float32, name="chunk")
    m = ops.parameter([2, 2], np.float32, name="m")
    results = [ops.result(ops.constant(True)), ops.result(chunk)]
    loop = ops.loop(ops.constant(np.int64(2)), ops.constant(True))
    loop.set_function(ov.Model(results, [chunk, m]))
    loop.set_special_body_ports([-1, 0])
    loop.set_sliced_input(chunk, x.output(0), 0, 1, 2, -1, 0)  # start, stride, part, end, axis
    loop.set_merged_input(m, ops.constant(np.zeros((2, 2), np.float32)).output(0),
                          results[1].output(0))
    y = ops.result(loop.get_iter_value(results[1].output(0), -1))
    y.output(0).get_tensor().set_names({"y"})
    return ov.Model([y], [x])


def test_a23_explains_values_when_its_reading_computes_them():
    # rule: openvino/slice -- trip 1 reads chunk 1: rows 1 and 2 by the default `windows`
    # ([[3, 4], [5, 6]] for x = 1..8); `stride-cut` copies one row ([3, 4]) and leaves the
    # other undefined, so a backend answering [[3, 4], [0, 0]] is explained by it
    pytest.importorskip("openvino")
    x = np.arange(1, 9, dtype=np.float32).reshape(4, 2)
    out = checked(StrideCutBackend(), "openvino", overlapping_chunks(), {"x": x})
    assert out.status == "disagree" and str(out.symptom) == "values: zeros"
    assert np.array_equal(out.actual["y"], [[3, 4], [0, 0]])
    assert out.reading == "A23=stride-cut"


def test_a_reading_that_leaves_the_wrong_output_wholly_undefined_explains_nothing():
    # rule: openvino/slice -- a backend answering [[9, 9], [9, 9]]: `stride-cut` defines row
    # 0 as [3, 4], so it does not agree; no reading may explain it by defining nothing
    pytest.importorskip("openvino")

    class Nines(StrideCutBackend):
        def run(self, model, feeds):
            return {"y": np.full((2, 2), 9, np.float32)}

    x = np.arange(1, 9, dtype=np.float32).reshape(4, 2)
    out = checked(Nines(), "openvino", overlapping_chunks(), {"x": x})
    assert out.status == "disagree" and out.ambiguity is None and out.reading is None


# -- A11 (and A14): a reading that only refuses explains an error outside the default's domain

def sequence_insert_at_front():
    """Loop(M=1, cond=true) carrying a list that enters empty; the body inserts i at
    position 0 (SequenceInsert). The list grows: A11's `error` reading refuses it."""
    import onnx
    from onnx import TensorProto as T
    from onnx import helper as h
    seq = h.make_sequence_type_proto(h.make_tensor_type_proto(T.FLOAT, []))
    body = h.make_graph(
        [h.make_node("Identity", ["c_in"], ["c_out"]),
         h.make_node("Cast", ["i"], ["v"], to=T.FLOAT),
         h.make_node("Constant", [], ["zero"], value=h.make_tensor("z", T.INT64, [], [0])),
         h.make_node("SequenceInsert", ["s_in", "v", "zero"], ["s_out"])],
        "body", [h.make_tensor_value_info("i", T.INT64, []),
                 h.make_tensor_value_info("c_in", T.BOOL, []), h.make_value_info("s_in", seq)],
        [h.make_tensor_value_info("c_out", T.BOOL, []), h.make_value_info("s_out", seq)])
    graph = h.make_graph(
        [h.make_node("Constant", [], ["M"], value=h.make_tensor("m", T.INT64, [], [1])),
         h.make_node("Constant", [], ["cond"], value=h.make_tensor("c", T.BOOL, [], [True])),
         h.make_node("SequenceEmpty", [], ["empty"], dtype=T.FLOAT),
         h.make_node("Loop", ["M", "cond", "empty"], ["out"], body=body)],
        "g", [], [h.make_value_info("out", seq)])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 16)])


def test_a11_error_does_not_explain_a_reference_fault_on_a_growing_list():
    # rule: onnx/sequences -- one trip inserts 0.0 into the empty list: [0.0] (onnxruntime
    # gives the same); ONNX's reference evaluator fails (its SequenceInsert takes the
    # position modulo the length: ZeroDivisionError). A11 `error` refuses the growing list,
    # but the default answers every position, so the finding counts
    model = sequence_insert_at_front()
    expected = dt.backend("lazyloop").run(model, {})["out"]
    assert [v.tolist() for v in expected] == [0.0]
    out = checked(dt.backend("onnx-reference"), "onnx", model, {})
    assert out.status == "disagree" and out.symptom.detail.startswith("ZeroDivisionError")
    assert out.ambiguity is None and out.reading is None


def test_a14_refuse_explains_an_error_where_the_default_leaves_outputs_undefined():
    # rule: onnx/scan8 -- sequence_lens [0]: zero trips, the scan output all padding
    # (undefined); onnxruntime refuses ("Invalid entries in sequence_lens"), as A14's
    # `refuse` reading does, and the default states no value it could have given
    pytest.importorskip("onnxruntime")
    from lazyloop.strategies.dialects import OnnxScan8Recipe
    p = OnnxScan8Recipe(batch=1, length=1, element=(2,), lens=(0,), directions=(0,), states=0,
                        outputs=("input",), seed=0).program()
    out = checked(dt.backend("onnxruntime"), "onnx", p.model, p.feeds)
    assert out.status == "disagree" and "sequence_lens" in out.symptom.detail
    assert out.reading == "A14=refuse"


def test_a14_refuse_does_not_explain_the_same_error_where_the_default_answers_every_position():
    # rule: onnx/scan8 -- the same zero length, but the model asks only for the state
    # (onnxruntime seed 7, case_006): the default answers it wholly, the initial state
    # [[1.25, 2.0]]; onnxruntime's refusal withholds that answer, so the finding counts
    pytest.importorskip("onnxruntime")
    from lazyloop.strategies.dialects import OnnxScan8Recipe
    p = OnnxScan8Recipe(batch=1, length=1, element=(2,), lens=(0,), directions=(0,), states=1,
                        outputs=(), seed=0).program()
    expected = dt.backend("lazyloop").run(p.model, p.feeds)
    assert [v.tolist() for v in expected.values()] == [p.feeds["s0"].tolist()]
    out = checked(dt.backend("onnxruntime"), "onnx", p.model, p.feeds)
    assert out.status == "disagree" and "sequence_lens" in out.symptom.detail
    assert out.ambiguity is None and out.reading is None


def test_a_reading_the_lowering_never_asked_about_answers_as_a_fresh_lowering_does():
    # rule: onnx/loop -- explaining lowers a model once and evaluates the readings its
    # lowering never asked about on that lowering; each answer is the answer of lowering
    # afresh under the reading (every alternative reading, programs of every ONNX kind)
    from lazyloop.difftest.backends import _frontend
    from lazyloop.difftest.explaining import (alternative_readings, lowered_alike,
                                              reading_answer)
    from lazyloop.difftest.shrinking import draw_program
    from lazyloop.difftest.subject import differing, subjects
    pytest.importorskip("hypothesis")
    frontend, strategy = _frontend("onnx"), subjects(("onnx",))
    reused = 0
    for index in range(24):
        subject = draw_program(strategy, 3, index)[0]
        try:
            model = subject.model()
            lowered = frontend.lower(model)
        except Exception:  # noqa: BLE001 -- not exported or refused: nothing to read
            continue
        assert lowered.asked  # every lowering asks about some reading (A30 for its nodes)
        for amb_id, reading in alternative_readings("onnx"):
            if lowered_alike(lowered, amb_id) is None:
                continue
            reused += 1
            kept = reading_answer(frontend, lowered, subject.feeds, amb_id, reading)
            fresh = reading_answer(frontend, model, subject.feeds, amb_id, reading)
            assert kept[0] == fresh[0], (subject, amb_id, reading)
            if kept[0] == "values":
                assert differing(kept[1].outputs, fresh[1].outputs) is None
                assert differing(kept[1].defined, fresh[1].defined) is None
            else:
                assert str(kept[1]) == str(fresh[1])
    assert reused > 100
