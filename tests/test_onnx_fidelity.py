"""ONNX loops as exporters and other runtimes write them (issue 11, classes 1-3 and 5-7).

Carried values that change shape (A11), conditions/trip counts/iteration numbers of shape [1]
(A16), values of unknown rank, attributes outside the spec (`onnx/attributes`), a for loop
whose body's condition turns false (A15) and types that contradict each other
(`onnx/types`). Expected values are computed by hand (comments) or with numpy.
"""
from __future__ import annotations

import numpy as np
import onnx
import onnx.parser
import pytest
from onnx import TensorProto, helper

import lazyloop as ll
import lazyloop.onnx as lo

F32, I64 = np.float32, np.int64


def parse(text: str, check=True) -> onnx.ModelProto:
    model = onnx.parser.parse_model(text)
    if check:
        onnx.checker.check_model(model)
    return model


# -- class 1: carried values that change shape --------------------------------------------

DECODE = """
<ir_version: 8, opset_import: ["" : 17]>
g (int64 M, float[B, 0] buf0, float[B, 1] step) => (OUTPUTS) {
  RESULTS = Loop <body = b (int64 i, bool c_in, float[B, T] b_in) => (bool c_out, float[B, T] b_out, float[B, T] s) {
      c_out = Identity (c_in)
      fi = Cast <to = 1> (i)
      x = Add (step, fi)
      b_out = Concat <axis = 1> (b_in, x)
      s = Identity (b_in)
  }> (M, "", buf0)
}"""


def decode(stacked=False):
    if stacked:
        return parse(DECODE.replace("OUTPUTS", "float[B, T] buf, float[K, B, T2] seen")
                     .replace("RESULTS", "buf, seen"))
    return parse(DECODE.replace("OUTPUTS", "float[B, T] buf").replace("RESULTS", "buf"))


# rule: onnx/loop -- a decode buffer entering as [B, 0] grows by one column a trip (A11 allow)
def test_decode_buffer_grows_from_an_empty_start():
    step = np.array([[10], [20]], F32)
    out = lo.evaluate(decode(), {"M": np.array(3, I64), "buf0": np.zeros((2, 0), F32),
                                      "step": step})
    # column i is step + i
    np.testing.assert_array_equal(out["buf"], np.hstack([step, step + 1, step + 2]))


def test_zero_trips_return_the_empty_buffer_as_given():
    # rule: output/last -- zero trips: the initial value [2, 0] as given, no scan output rows
    out = lo.evaluate(decode(), {"M": np.array(0, I64), "buf0": np.zeros((2, 0), F32),
                                      "step": np.ones((2, 1), F32)})
    assert out["buf"].shape == (2, 0)


def test_a_scan_output_of_a_growing_value_is_still_one_shape():
    # rule: structure/shapes -- what is stacked keeps the first element's shape
    with pytest.raises(ll.StreamShapeChanged, match=r"structure/shapes"):
        lo.evaluate(decode(stacked=True), {"M": np.array(2, I64), "buf0": np.zeros((2, 0), F32),
                                    "step": np.ones((2, 1), F32)})


# rule: onnx/declared -- a static declared dim is a constraint: [2] cannot become [3], also
# when the same lowering admitted [2] before (evaluated again, as a lowered model is)
def test_a_value_breaking_a_static_declared_dim_is_refused():
    model = parse("""
<ir_version: 8, opset_import: ["" : 17]>
g (int64 M, float[N] v0) => (float[N] v) {
  v = Loop <body = b (int64 i, bool c_in, float[2] v_in) => (bool c_out, float[N] v_out) {
      c_out = Identity (c_in)
      v_out = Identity (v_in)
  }> (M, "", v0)
}""")
    lowered = lo.lower(model)
    for _ in range(3):
        np.testing.assert_array_equal(lo.evaluate(lowered, {"M": np.array(1, I64),
                                                            "v0": np.ones(2, F32)})["v"], [1, 1])
    with pytest.raises(ll.ModelError, match=r"onnx/declared") as err:
        lo.evaluate(lowered, {"M": np.array(1, I64), "v0": np.ones(3, F32)})
    assert "v_in" in str(err.value) and "Loop" in str(err.value)


# -- class 2: [1] conditions, trip counts and iteration numbers (A16) ---------------------

COND1 = """
<ir_version: 8, opset_import: ["" : 17]>
g (int64[1] M, bool[1] c0, int64 lim, int64[1] zero) => (int64[1] last, int64[N, 1] iters) {
  last, iters = Loop <body = b (int64[1] i, bool[1] c_in, int64[1] k_in) => (bool[1] c_out, int64[1] k_out, int64[1] it) {
      k_out = Add (k_in, i)
      c_out = Less (k_out, lim)
      it = Identity (i)
  }> (M, c0, zero)
}"""


def cond1_model():
    return parse(COND1)


# rule: onnx/loop -- the body's condition input on trip i+1 is its output of trip i, [1] as declared
def test_one_element_condition_trip_count_and_iteration_number():
    feeds = {"M": np.array([10], I64), "c0": np.array([True]), "lim": np.array(5, I64),
             "zero": np.array([0], I64)}
    out = lo.evaluate(cond1_model(), feeds)
    # k: 0 -> 0 (i=0) -> 1 (i=1) -> 3 (i=2) -> 6 (i=3, 6 < 5 false: stop after 4 trips)
    np.testing.assert_array_equal(out["last"], [6])
    np.testing.assert_array_equal(out["iters"], [[0], [1], [2], [3]])


def test_reading_a16_scalar_refuses_one_element_tensors():
    # rule: onnx/loop -- A16 "scalar": the text's scalars only
    feeds = {"M": np.array([10], I64), "c0": np.array([True]), "lim": np.array(5, I64),
             "zero": np.array([0], I64)}
    with pytest.raises(ll.LazyLoopError, match=r"A16=scalar"):
        lo.evaluate(cond1_model(), feeds, readings={"A16": "scalar"})
    with pytest.raises(ll.ModelError, match=r"trip count is int64\[1\] \(reading A16=scalar"):
        lo.lower(summing_loop_with_count_of_one(), readings={"A16": "scalar"})


def summing_loop_with_count_of_one():
    return parse("""
<ir_version: 8, opset_import: ["" : 17]>
g (int64[1] M, int64 s0) => (int64 s) {
  s = Loop <body = b (int64 i, bool c_in, int64 s_in) => (bool c_out, int64 s_out) {
      s_out = Add (s_in, i)
      c_out = Identity (c_in)
  }> (M, "", s0)
}""")


def test_a_one_element_trip_count_counts():
    # rule: onnx/loop -- M = [4]: four trips, s = 0+1+2+3 = 6 (A16 one-element)
    out = lo.evaluate(summing_loop_with_count_of_one(), {"M": np.array([4], I64),
                                                          "s0": np.array(0, I64)})
    assert out["s"] == 6


# -- class 6: Loop(M, cond omitted) whose body's condition turns false (A15) --------------

BREAK = """
<ir_version: 8, opset_import: ["" : 17]>
g (int64 M, int64 s0) => (int64 s, int64[N] seen) {
  s, seen = Loop <body = b (int64 i, bool c_in, int64 s_in) => (bool c_out, int64 s_out, int64 t) {
      s_out = Add (s_in, i)
      three = Constant <value = int64 {3}> ()
      c_out = Less (i, three)
      t = Cast <to = 7> (c_in)
  }> (M, "", s0)
}"""


# rule: onnx/loop -- A15: the letter ignores the body's condition; "honour" stops on it
def test_omitted_cond_ignores_the_body_condition_by_default():
    feeds = {"M": np.array(10, I64), "s0": np.array(0, I64)}
    assert lo.evaluate(parse(BREAK), feeds)["s"] == sum(range(10))   # 45: all ten trips


def test_reading_a15_honour_stops_when_the_body_condition_turns_false():
    feeds = {"M": np.array(10, I64), "s0": np.array(0, I64)}
    out = lo.evaluate(parse(BREAK), feeds, readings={"A15": "honour"})
    # trips i = 0..3 run (c_out = i < 3 is false after trip 3): s = 0+1+2+3 = 6
    assert out["s"] == 6
    # A9: the body's condition input is true on every trip that runs
    np.testing.assert_array_equal(out["seen"], [1, 1, 1, 1])


def test_reading_a15_honour_ends_an_infinite_loop():
    model = parse(BREAK.replace("(M, \"\", s0)", "(\"\", \"\", s0)").replace(
        "g (int64 M, int64 s0)", "g (int64 s0)"))
    assert lo.evaluate(model, {"s0": np.array(0, I64)}, readings={"A15": "honour"})["s"] == 6


# -- class 3: values of unknown rank ------------------------------------------------------

def scan9_unknown_rank(axis: int, direction: int = 0):
    body = helper.make_graph(
        [helper.make_node("Add", ["s_in", "e"], ["s_out"]),
         helper.make_node("Identity", ["s_out"], ["y"])], "b",
        [helper.make_tensor_value_info("s_in", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("e", TensorProto.FLOAT, None)],
        [helper.make_tensor_value_info("s_out", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    node = helper.make_node("Scan", ["s0", "x"], ["s", "ys"], body=body, num_scan_inputs=1,
                            scan_input_axes=[axis], scan_input_directions=[direction])
    graph = helper.make_graph([node], "g",
                              [helper.make_tensor_value_info("s0", TensorProto.FLOAT, None),
                               helper.make_tensor_value_info("x", TensorProto.FLOAT, None)],
                              [helper.make_tensor_value_info("s", TensorProto.FLOAT, None),
                               helper.make_tensor_value_info("ys", TensorProto.FLOAT, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 16)])


# rule: onnx/scan9 -- inputs of dynamic rank: the rank comes from the fed value
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_scan9_inputs_of_unknown_rank(axis):
    model = scan9_unknown_rank(axis)
    lo.lower(model)   # lowering needs no feeds
    x = np.arange(6, dtype=F32).reshape(2, 3)
    rows = np.moveaxis(x, axis, 0)
    out = lo.evaluate(model, {"s0": np.zeros(rows.shape[1:], F32), "x": x})
    np.testing.assert_array_equal(out["s"], rows.sum(axis=0))
    np.testing.assert_array_equal(out["ys"], np.cumsum(rows, axis=0))


def test_scan9_reverse_input_of_unknown_rank():
    x = np.arange(6, dtype=F32).reshape(3, 2)
    out = lo.evaluate(scan9_unknown_rank(0, 1), {"s0": np.zeros(2, F32), "x": x})
    np.testing.assert_array_equal(out["ys"], np.cumsum(x[::-1], axis=0))


def test_scan9_axis_beyond_the_fed_rank_is_refused():
    # rule: onnx/attributes -- axis 2 of a rank-2 value
    with pytest.raises(ll.ModelError, match=r"scan_input_axes"):
        lo.evaluate(scan9_unknown_rank(2), {"s0": np.zeros(2, F32), "x": np.zeros((2, 2), F32)})


def scan8_unknown_rank():
    """The Scan of `scan9_unknown_rank` at opset 8: sequence_lens omitted, default axes."""
    model = scan9_unknown_rank(0)
    model.opset_import[0].version = 8
    node = model.graph.node[0]
    node.input.insert(0, "")
    keep = [a for a in node.attribute if a.name in ("body", "num_scan_inputs")]
    del node.attribute[:]
    node.attribute.extend(keep)
    return model


def test_scan8_inputs_declared_without_shape():
    # rule: onnx/scan8 -- [batch, sequence, ...] read from the value; sums per batch item
    model = scan8_unknown_rank()
    x = np.arange(12, dtype=F32).reshape(2, 3, 2)
    out = lo.evaluate(model, {"s0": np.zeros((2, 2), F32), "x": x})
    np.testing.assert_array_equal(out["s"], x.sum(axis=1))
    np.testing.assert_array_equal(out["ys"], np.cumsum(x, axis=1))
    with pytest.raises(ll.ModelError, match=r"rank >= 2"):
        lo.evaluate(model, {"s0": np.zeros((2,), F32), "x": np.zeros(2, F32)})


def test_zero_trips_with_unknown_element_rank_follow_a12():
    # rule: onnx/loop -- A12 zero-extent: no element, unknown rank: an empty [0]
    body = helper.make_graph(
        [helper.make_node("Identity", ["c_in"], ["c_out"]),
         helper.make_node("Identity", ["v"], ["y"])], "b",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("c_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v_in", TensorProto.FLOAT, None)],
        [helper.make_tensor_value_info("c_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v_in", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    node = helper.make_node("Loop", ["M", "", "v"], ["vf", "ys"], body=body)
    graph = helper.make_graph([node], "g", [
        helper.make_tensor_value_info("M", TensorProto.INT64, []),
        helper.make_tensor_value_info("v", TensorProto.FLOAT, None)], [
        helper.make_tensor_value_info("vf", TensorProto.FLOAT, None),
        helper.make_tensor_value_info("ys", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    v = np.ones((2, 2), F32)
    out = lo.evaluate(model, {"M": np.array(0, I64), "v": v})
    np.testing.assert_array_equal(out["vf"], v)
    assert out["ys"].shape == (0,)
    out = lo.evaluate(model, {"M": np.array(2, I64), "v": v})
    np.testing.assert_array_equal(out["ys"], [v, v])
    with pytest.raises(ll.EvaluationError, match=r"A12"):
        lo.evaluate(model, {"M": np.array(0, I64), "v": v}, readings={"A12": "error"})


# -- class 5: attribute values outside the spec -------------------------------------------

SCAN = """
<ir_version: 8, opset_import: ["" : 16]>
g (float[2] s0, float[3, 2] x) => (float[2] s, float[3, 2] ys) {
  s, ys = Scan <num_scan_inputs = NUM, ATTRS body = b (float[2] s_in, float[2] e) => (float[2] s_out, float[2] y) {
      s_out = Add (s_in, e)
      y = Identity (s_out)
  }> (s0, x)
}"""


@pytest.mark.parametrize("attrs, num, named", [
    ("scan_input_directions = [2],", 1, "scan_input_directions"),
    ("scan_output_directions = [-1],", 1, "scan_output_directions"),
    ("scan_input_axes = [2],", 1, "scan_input_axes"),
    ("scan_output_axes = [3],", 1, "scan_output_axes"),
    ("scan_input_axes = [0, 0],", 1, "scan_input_axes"),
    ("", 3, "num_scan_inputs"),
])
def test_scan_attributes_outside_the_spec_are_refused(attrs, num, named):
    # rule: onnx/attributes -- each refusal names the node, the attribute and the rule
    model = parse(SCAN.replace("ATTRS", attrs).replace("NUM", str(num)), check=False)
    with pytest.raises(ll.ModelError, match=r"onnx/attributes") as err:
        lo.lower(model)
    assert named in str(err.value) and "Scan node" in str(err.value)


def test_scan8_directions_outside_the_spec_are_refused():
    # rule: onnx/attributes -- Scan 8's directions too
    model = scan8_unknown_rank()
    node = model.graph.node[0]
    keep = list(node.attribute)
    del node.attribute[:]
    node.attribute.extend(keep + [helper.make_attribute("directions", [3])])
    with pytest.raises(ll.ModelError, match=r"directions holds 3"):
        lo.lower(model)


def test_an_opset_newer_than_onnx_knows_is_refused():
    # rule: onnx/attributes -- the installed onnx defines opsets up to onnx_opset_version()
    model = parse(SCAN.replace("ATTRS", "").replace("NUM", "1"))
    model.opset_import[0].version = onnx.defs.onnx_opset_version() + 1
    with pytest.raises(ll.ModelError, match=r"newer than the installed onnx"):
        lo.lower(model)


# -- class 7: types that contradict each other --------------------------------------------

# rule: onnx/types -- reported at the node whose types disagree, before lowering
def test_mul_of_float_by_int64_is_reported_at_the_mul():
    model = parse("""
<ir_version: 8, opset_import: ["" : 17]>
g (int64 M, float[2] v0) => (float[2] v) {
  v = Loop <body = b (int64 i, bool c_in, float[2] v_in) => (bool c_out, float[2] v_out) {
      c_out = Identity (c_in)
      w = Mul (v_in, i)
      v_out = Identity (v_in)
  }> (M, "", v0)
}""")
    with pytest.raises(ll.ModelError, match=r"onnx/types") as err:
        lo.lower(model)
    text = str(err.value)
    assert "Mul node (output 'w')" in text and "inputs of different types" in text


def test_a_declared_output_type_that_contradicts_the_inputs():
    model = parse("""
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] a, float[2] b) => (int64[2] c) {
  c = Mul (a, b)
}""")
    with pytest.raises(ll.ModelError, match=r"input and output of different types"):
        lo.lower(model)


def test_body_inputs_with_no_type_at_all():
    # rule: onnx/declared -- an untyped body input takes the value it is given: a [2, 2]
    # carried value doubled three times is 8 v; the condition [1] passes through
    body = helper.make_graph(
        [helper.make_node("Identity", ["c_in"], ["c_out"]),
         helper.make_node("Add", ["v_in", "v_in"], ["v_out"])], "b",
        [onnx.ValueInfoProto(name=n) for n in ("i", "c_in", "v_in")],
        [onnx.ValueInfoProto(name=n) for n in ("c_out", "v_out")])
    node = helper.make_node("Loop", ["M", "c", "v"], ["vf"], body=body)
    graph = helper.make_graph([node], "g", [
        helper.make_tensor_value_info("M", TensorProto.INT64, []),
        helper.make_tensor_value_info("c", TensorProto.BOOL, [1]),
        helper.make_tensor_value_info("v", TensorProto.FLOAT, None)], [
        helper.make_tensor_value_info("vf", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    v = np.arange(4, dtype=F32).reshape(2, 2)
    out = lo.evaluate(model, {"M": np.array(3, I64), "c": np.array([True]), "v": v})
    np.testing.assert_array_equal(out["vf"], 8 * v)


def test_onnxruntime_agrees_with_reading_a15_honour():
    # rule: onnx/loop -- the tester attributes onnxruntime's answer to A15 "honour"
    ort = pytest.importorskip("onnxruntime")
    from lazyloop.difftest.checking import alternative_readings

    assert ("A15", "honour") in alternative_readings("onnx")
    model = parse(BREAK)
    feeds = {"M": np.array(10, I64), "s0": np.array(0, I64)}
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    theirs = session.run(["s"], feeds)[0]
    assert theirs == 6 != lo.evaluate(model, feeds)["s"]
    assert lo.evaluate(model, feeds, readings={"A15": "honour"})["s"] == theirs


def test_if_branches_of_different_ranks_give_an_output_of_unknown_rank():
    # rule: onnx/if -- one dtype, ranks 1 and 2: the output's rank is its value's
    model = parse("""
<ir_version: 8, opset_import: ["" : 17]>
g (bool c, float[2] a, float[2, 2] b) => (float y) {
  y = If (c) <then_branch = t () => (float[2] ya) { ya = Identity (a) },
              else_branch = e () => (float[2, 2] yb) { yb = Identity (b) }>
}""", check=False)
    a, b = np.array([1, 2], F32), np.ones((2, 2), F32)
    lowered = lo.lower(model)
    assert "[*]" in repr(lowered.network.layers[-1].get_output(0).type)
    np.testing.assert_array_equal(lo.evaluate(model, {"c": np.array(True), "a": a, "b": b})["y"], a)
    np.testing.assert_array_equal(lo.evaluate(model, {"c": np.array(False), "a": a, "b": b})["y"], b)


# rule: onnx/loop -- body nodes read the growing value at its actual shape on every trip
def test_body_nodes_read_a_growing_value_at_its_actual_shape():
    model = parse("""
<ir_version: 8, opset_import: ["" : 17]>
g (int64 M, float[0, 2] rows0, float[2] row) => (float[R, 2] rows, int64[N] counts, float[N, 2] sums) {
  rows, counts, sums = Loop <body = b (int64 i, bool c_in, float[R, 2] r_in) => (bool c_out, float[R, 2] r_out, int64 n, float[2] s) {
      c_out = Identity (c_in)
      shape = Shape (r_in)
      zero = Constant <value = int64 {0}> ()
      n = Gather <axis = 0> (shape, zero)
      axes = Constant <value = int64[1] {0}> ()
      s = ReduceSum <keepdims = 0> (r_in, axes)
      fi = Cast <to = 1> (i)
      scaled = Mul (row, fi)
      two_d = Unsqueeze (scaled, axes)
      r_out = Concat <axis = 0> (r_in, two_d)
  }> (M, "", rows0)
}""")
    row = np.array([1, 10], F32)
    out = lo.evaluate(model, {"M": np.array(4, I64), "rows0": np.zeros((0, 2), F32), "row": row})
    expected = np.stack([row * k for k in range(4)])           # row i is i * row
    np.testing.assert_array_equal(out["rows"], expected)
    np.testing.assert_array_equal(out["counts"], [0, 1, 2, 3])  # rows before each trip
    np.testing.assert_array_equal(out["sums"], [expected[:k].sum(axis=0) for k in range(4)])
