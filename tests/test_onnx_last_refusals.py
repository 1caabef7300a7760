"""Valid ONNX models lazyloop used to refuse (issue 22, point 6), and what it still refuses.

Each model is checked with ONNX's checker first where the checker accepts it; expected values
are computed by hand (comments) and, where the engine runs the model, by onnxruntime or ONNX's
reference evaluator on the same file.
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
        onnx.checker.check_model(model, full_check=True)
    return model


def onnxruntime_run(model, feeds):
    ort = pytest.importorskip("onnxruntime")
    session = ort.InferenceSession(model.SerializeToString(),
                                   providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


# -- a carried input declared [1] whose initial value is 0-D (A18) --------------------------

def scalar_into_one_element():
    """v = Loop(M, c0, v0) whose body declares its carried input int64[1] (its next value
    undeclared: v_in + 1), fed v0 a 0-D int64."""
    body = helper.make_graph(
        [helper.make_node("Identity", ["c"], ["c_out"]),
         helper.make_node("Add", ["v_in", "one"], ["v_out"])], "b",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("c", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v_in", TensorProto.INT64, [1])],
        [helper.make_tensor_value_info("c_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v_out", TensorProto.INT64, None)],
        [helper.make_tensor("one", TensorProto.INT64, [], [1])])
    graph = helper.make_graph(
        [helper.make_node("Loop", ["M", "c0", "v0"], ["v"], body=body)], "g",
        [helper.make_tensor_value_info("M", TensorProto.INT64, []),
         helper.make_tensor_value_info("c0", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v0", TensorProto.INT64, [])],
        [helper.make_tensor_value_info("v", TensorProto.INT64, [])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model, full_check=True)
    return model


# rule: onnx/declared -- A18 "as-given": the body receives the 0-D value (ONNX's checker
# accepts the model: the Loop's inference drops carried shapes)
def test_a_scalar_fed_to_a_carried_input_declared_one_element_runs_as_given():
    model = scalar_into_one_element()
    feeds = {"M": np.array(3, I64), "c0": np.array(True), "v0": np.array(5, I64)}
    out = lo.evaluate(model, feeds)["v"]
    assert out.shape == () and out == 8          # 5 + 1 + 1 + 1, still 0-D
    want = onnxruntime_run(model, feeds)[0]      # onnxruntime gives the same, 0-D
    assert want.shape == () and want == 8
    assert lo.evaluate(model, {**feeds, "M": np.array(0, I64)})["v"] == 5   # zero trips


def test_reading_a18_constraint_refuses_the_scalar():
    model = scalar_into_one_element()
    feeds = {"M": np.array(3, I64), "c0": np.array(True), "v0": np.array(5, I64)}
    with pytest.raises(ll.ModelError, match=r"'v_in' is declared int64\[1\] in the body but "
                                            r"receives int64\[\].*onnx/declared.*A18"):
        lo.evaluate(model, feeds, readings={"A18": "constraint"})


# rule: onnx/declared -- a Scan state declared [1] fed a 0-D value stays refused: ONNX's
# checker refuses the model (Scan's inference keeps declared shapes), so does onnxruntime
def test_a_scalar_scan_state_declared_one_element_stays_refused():
    model = parse("""
<ir_version: 8, opset_import: ["" : 17]>
g (float s0, float[3] xs) => (float s, float[3] ys) {
  s, ys = Scan <num_scan_inputs = 1, body = b (float[1] s_in, float x) => (float s_out, float y) {
      s_out = Add (s_in, x)
      y = Identity (s_out)
  }> (s0, xs)
}""", check=False)
    with pytest.raises(onnx.shape_inference.InferenceError):
        onnx.checker.check_model(model, full_check=True)
    with pytest.raises(ll.ModelError, match=r"state 's_in' is declared float32\[1\].*"
                                            r"onnx/declared"):
        lo.evaluate(model, {"s0": np.array(1, F32), "xs": np.arange(3, dtype=F32)})


# -- a subgraph listing its initializers among its inputs (IR version 3 and below) ----------

def loop_with_initializer_input(ir_version: int):
    """v = Loop(M, c0, v0) (opset 8) whose body lists its initializer w = [1, 10] as a fourth
    input, after the three the Loop binds; v_out = v_in + w."""
    body = helper.make_graph(
        [helper.make_node("Identity", ["c"], ["c_out"]),
         helper.make_node("Add", ["v_in", "w"], ["v_out"])], "b",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("c", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v_in", TensorProto.FLOAT, [2]),
         helper.make_tensor_value_info("w", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("c_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v_out", TensorProto.FLOAT, [2])],
        [helper.make_tensor("w", TensorProto.FLOAT, [2], [1, 10])])
    graph = helper.make_graph(
        [helper.make_node("Loop", ["M", "c0", "v0"], ["v"], body=body)], "g",
        [helper.make_tensor_value_info("M", TensorProto.INT64, []),
         helper.make_tensor_value_info("c0", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v0", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("v", TensorProto.FLOAT, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 8)])
    model.ir_version = ir_version
    return model


LOOP_FEEDS = {"M": np.array(3, I64), "c0": np.array(True), "v0": np.zeros(2, F32)}


# rule: onnx/graph -- IR 3: the body's trailing inputs named after its initializers are
# constants, not inputs the Loop binds (ONNX's checker accepts the model)
def test_ir3_loop_body_listing_its_initializer_as_an_input():
    model = loop_with_initializer_input(3)
    onnx.checker.check_model(model, full_check=True)
    out = lo.evaluate(model, LOOP_FEEDS)["v"]
    np.testing.assert_array_equal(out, [3, 30])                      # 0 + 3 * [1, 10]
    np.testing.assert_array_equal(onnxruntime_run(model, LOOP_FEEDS)[0], [3, 30])


# rule: onnx/graph -- from IR 4 on a subgraph's initializer is not an input: the body takes
# four inputs where the Loop binds three (ONNX's checker refuses it too)
def test_ir4_loop_body_listing_its_initializer_as_an_input_is_refused():
    model = loop_with_initializer_input(4)
    with pytest.raises(onnx.shape_inference.InferenceError):
        onnx.checker.check_model(model, full_check=True)
    with pytest.raises(ll.ModelError, match=r"body takes 4 inputs.*must take 3.*onnx/loop"):
        lo.evaluate(model, LOOP_FEEDS)


# rule: onnx/graph -- the same for a Scan 8 body (IR 3, opset 8): state s, scan input x,
# initializer w listed last; s_out = s_in + x * w
def test_ir3_scan8_body_listing_its_initializer_as_an_input():
    body = helper.make_graph(
        [helper.make_node("Mul", ["x", "w"], ["xw"]),
         helper.make_node("Add", ["s_in", "xw"], ["s_out"])], "b",
        [helper.make_tensor_value_info("s_in", TensorProto.FLOAT, []),
         helper.make_tensor_value_info("x", TensorProto.FLOAT, []),
         helper.make_tensor_value_info("w", TensorProto.FLOAT, [])],
        [helper.make_tensor_value_info("s_out", TensorProto.FLOAT, [])],
        [helper.make_tensor("w", TensorProto.FLOAT, [], [10])])
    graph = helper.make_graph(
        [helper.make_node("Scan", ["", "s0", "xs"], ["s"], body=body, num_scan_inputs=1)], "g",
        [helper.make_tensor_value_info("s0", TensorProto.FLOAT, [1]),
         helper.make_tensor_value_info("xs", TensorProto.FLOAT, [1, 3])],
        [helper.make_tensor_value_info("s", TensorProto.FLOAT, [1])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 8)])
    model.ir_version = 3
    onnx.checker.check_model(model, full_check=True)
    feeds = {"s0": np.array([1], F32), "xs": np.array([[1, 2, 3]], F32)}
    np.testing.assert_array_equal(lo.evaluate(model, feeds)["s"], [61])   # 1 + 10 * (1+2+3)
    np.testing.assert_array_equal(onnxruntime_run(model, feeds)[0], [61])


# -- a condition declared a scalar in the body that arrives as [1] (A16 "one-element") -----

def for_loop_with_constant_condition(cond_shape, body_reads_shape=False):
    """v = Loop(M, c0, v0): a for loop whose cond c0 = [true] is a constant initializer
    (shape `cond_shape`: [1] or None for a graph input of unknown rank) and whose body
    declares its condition input a bool scalar and passes it through; v_out = v_in + 1.
    With `body_reads_shape` the body also stacks Shape(c), the shape it is given."""
    nodes = [helper.make_node("Identity", ["c"], ["c_out"]),
             helper.make_node("Add", ["v_in", "one"], ["v_out"])]
    outputs = [helper.make_tensor_value_info("c_out", TensorProto.BOOL, []),
               helper.make_tensor_value_info("v_out", TensorProto.FLOAT, [])]
    if body_reads_shape:
        nodes.append(helper.make_node("Shape", ["c"], ["sh"]))
        outputs.append(helper.make_tensor_value_info("sh", TensorProto.INT64, None))
    body = helper.make_graph(
        nodes, "b",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("c", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v_in", TensorProto.FLOAT, [])], outputs,
        [helper.make_tensor("one", TensorProto.FLOAT, [], [1])])
    inputs = [helper.make_tensor_value_info("M", TensorProto.INT64, []),
              helper.make_tensor_value_info("v0", TensorProto.FLOAT, [])]
    inits = [helper.make_tensor("c0", TensorProto.BOOL, [1], [True])]
    if cond_shape is None:
        inputs.append(helper.make_tensor_value_info("c0", TensorProto.BOOL, None))
        inits = []
    results = [helper.make_tensor_value_info("v", TensorProto.FLOAT, [])]
    if body_reads_shape:
        results.append(helper.make_tensor_value_info("shapes", TensorProto.INT64, None))
    graph = helper.make_graph(
        [helper.make_node("Loop", ["M", "c0", "v0"], ["v"] + (["shapes"] if body_reads_shape
                                                                 else []), body=body)],
        "g", inputs, results, inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


# rule: onnx/loop -- A16 "one-element": a constant [1] condition whose body declares a scalar
# is read as its one element; the for loop runs its M trips. ONNX's reference evaluator
# gives the same; onnxruntime refuses to load this model (its inference sees the [1])
def test_a_constant_one_element_condition_the_body_declares_a_scalar():
    from onnx.reference import ReferenceEvaluator

    model = for_loop_with_constant_condition([1])
    feeds = {"M": np.array(10, I64), "v0": np.array(0, F32)}
    assert lo.evaluate(model, feeds)["v"] == 10                       # 0 + 1 * 10 trips
    assert ReferenceEvaluator(model).run(None, feeds)[0] == 10
    assert lo.evaluate(model, {**feeds, "M": np.array(0, I64)})["v"] == 0


# rule: onnx/loop -- A16 "one-element": the body is given its condition in the shape it
# declares (0-D here), as onnxruntime feeds it when the cond's rank is not known statically
def test_the_body_sees_its_condition_in_its_declared_shape():
    model = for_loop_with_constant_condition(None, body_reads_shape=True)
    feeds = {"M": np.array(3, I64), "v0": np.array(0, F32), "c0": np.array([True])}
    out = lo.evaluate(model, feeds)
    assert out["shapes"].shape == (3, 0)                  # three trips, each Shape(c) = []
    want = onnxruntime_run(model, feeds)
    assert want[1].shape == (3, 0) and want[0] == 3
    assert out["v"] == 3


# -- a floating-point Mod without fmod = 1 (opsets 10-27) ----------------------------------

def mod_in_a_loop(opset: int, dtype=TensorProto.FLOAT, **attributes):
    """s = Loop(2, "", s0): s_out = Mod(s_in, b) in the body; b = [3, -3, 2]."""
    body = helper.make_graph(
        [helper.make_node("Identity", ["c"], ["c_out"]),
         helper.make_node("Mod", ["s_in", "b"], ["s_out"], name="the_mod", **attributes)], "b",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("c", TensorProto.BOOL, []),
         helper.make_tensor_value_info("s_in", dtype, [3])],
        [helper.make_tensor_value_info("c_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("s_out", dtype, [3])],
        [helper.make_tensor("b", dtype, [3], [3, -3, 2])])
    graph = helper.make_graph(
        [helper.make_node("Loop", ["M", "", "s0"], ["s"], body=body)], "g",
        [helper.make_tensor_value_info("M", TensorProto.INT64, []),
         helper.make_tensor_value_info("s0", dtype, [3])],
        [helper.make_tensor_value_info("s", dtype, [3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    onnx.checker.check_model(model, full_check=True)
    return model


MOD_FEEDS = {"M": np.array(1, I64), "s0": np.array([-4, 7, 5.5], F32)}


# rule: onnx/attributes -- Mod-13's text: a floating-point T needs fmod = 1 (the default is
# 0); onnxruntime refuses to run it ("fmod attribute must be true for floating point types")
@pytest.mark.parametrize("attributes", [{}, {"fmod": 0}])
def test_a_float_mod_without_fmod_1_is_refused_before_opset_28(attributes):
    model = mod_in_a_loop(13, **attributes)
    with pytest.raises(ll.ModelError, match=r"the_mod.*in body of Loop.*Mod-13 of "
                                            r"tensor\(float\) has fmod = 0.*onnx/attributes"):
        lo.evaluate(model, MOD_FEEDS)
    with pytest.raises(Exception, match="fmod"):
        onnxruntime_run(model, MOD_FEEDS)


def test_a_float_mod_with_fmod_1_and_the_floor_mod_of_mod_28_run():
    # rule: onnx/attributes -- fmod = 1 is C's fmod (sign of the dividend); Mod-28 defines
    # the floor modulo of floats (sign of the divisor)
    out = lo.evaluate(mod_in_a_loop(13, fmod=1), MOD_FEEDS)["s"]
    np.testing.assert_array_equal(out, np.fmod([-4, 7, 5.5], [3, -3, 2]))      # [-1, 1, 1.5]
    out = lo.evaluate(mod_in_a_loop(28), MOD_FEEDS)["s"]
    np.testing.assert_array_equal(out, np.mod([-4, 7, 5.5], [3, -3, 2]))       # [2, -2, 1.5]
    # integer Mod with the default fmod = 0 is Python's %
    ints = lo.evaluate(mod_in_a_loop(13, TensorProto.INT64),
                       {"M": np.array(1, I64), "s0": np.array([-4, 7, 5], I64)})["s"]
    np.testing.assert_array_equal(ints, [-4 % 3, 7 % -3, 5 % 2])


# -- NonMaxSuppression with 0-D limits (REF-10) ---------------------------------------------

def non_max_suppression(limit_shape):
    """NonMaxSuppression of three boxes (the first two overlap: IoU 1/3 > 0.25) with
    max_output_boxes_per_class = 2 and iou_threshold = 0.25 of shape `limit_shape`."""
    graph = helper.make_graph(
        [helper.make_node("NonMaxSuppression", ["boxes", "scores", "m", "t"], ["y"])], "g",
        [helper.make_tensor_value_info("boxes", TensorProto.FLOAT, [1, 3, 4]),
         helper.make_tensor_value_info("scores", TensorProto.FLOAT, [1, 1, 3])],
        [helper.make_tensor_value_info("y", TensorProto.INT64, [None, 3])],
        [helper.make_tensor("m", TensorProto.INT64, limit_shape, [2]),
         helper.make_tensor("t", TensorProto.FLOAT, limit_shape, [0.25])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    onnx.checker.check_model(model, full_check=True)
    return model


NMS_FEEDS = {"boxes": np.array([[[0, 0, 1, 1], [0, 0.5, 1, 1.5], [0, 3, 1, 4]]], F32),
             "scores": np.array([[[0.9, 0.8, 0.7]]], F32)}


# rule: onnx/node -- REF-10: the reference kernel fails on 0-D limits (the text's scalars);
# lazyloop gives them to it as [1]: boxes 0 and 2 are kept (box 1 overlaps box 0), as
# onnxruntime gives
def test_non_max_suppression_with_scalar_limits():
    from onnx.reference import ReferenceEvaluator

    want = [[0, 0, 0], [0, 0, 2]]
    scalar = non_max_suppression([])
    np.testing.assert_array_equal(lo.evaluate(scalar, NMS_FEEDS)["y"], want)
    np.testing.assert_array_equal(onnxruntime_run(scalar, NMS_FEEDS)[0], want)
    with pytest.raises(IndexError):                       # the fault, outside lazyloop
        ReferenceEvaluator(scalar).run(None, NMS_FEEDS)
    np.testing.assert_array_equal(lo.evaluate(non_max_suppression([1]), NMS_FEEDS)["y"], want)


# rule: onnx/node -- REF-10 stays out of the schema-body generator: no 0-D limit is drawn
def test_the_generator_never_draws_non_max_suppression_with_scalar_limits():
    pytest.importorskip("hypothesis")
    from lazyloop.strategies import onnx_op_search as search

    calls = search.signatures("NonMaxSuppression", 21)
    assert calls and all(p.shape != () for c in calls for p in c.inputs[2:])


# -- Scan states whose shape changes --------------------------------------------------------

def growing_scan_state(opset: int):
    """s, ys = Scan(s0, xs): s_out = Concat(s_in, [x]) grows by one a trip; ys stacks x.
    Scan 8 (opset 8) has a batch axis: s0 [1, A], xs [1, N]."""
    batch = opset < 9
    body = helper.make_graph(
        [helper.make_node("Unsqueeze", ["x"], ["x1"], axes=[0]) if opset < 13 else
         helper.make_node("Unsqueeze", ["x", "zero"], ["x1"]),
         helper.make_node("Concat", ["s_in", "x1"], ["s_out"], axis=0),
         helper.make_node("Identity", ["x"], ["y"])], "b",
        [helper.make_tensor_value_info("s_in", TensorProto.FLOAT, ["K"]),
         helper.make_tensor_value_info("x", TensorProto.FLOAT, [])],
        [helper.make_tensor_value_info("s_out", TensorProto.FLOAT, ["K2"]),
         helper.make_tensor_value_info("y", TensorProto.FLOAT, [])],
        [helper.make_tensor("zero", TensorProto.INT64, [1], [0])] if opset >= 13 else [])
    lead = [1] if batch else []
    graph = helper.make_graph(
        [helper.make_node("Scan", ([""] if batch else []) + ["s0", "xs"], ["s", "ys"],
                          body=body, num_scan_inputs=1)], "g",
        [helper.make_tensor_value_info("s0", TensorProto.FLOAT, lead + ["A"]),
         helper.make_tensor_value_info("xs", TensorProto.FLOAT, lead + ["N"])],
        [helper.make_tensor_value_info("s", TensorProto.FLOAT, lead + ["B"]),
         helper.make_tensor_value_info("ys", TensorProto.FLOAT, lead + ["N"])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    onnx.checker.check_model(model, full_check=True)
    return model


# rule: onnx/scan9 -- "All the output tensors (state_variables as well as scan_output_element
# tensors) are required to have the same shape in each iteration": a state that grows is
# refused on its first trip, naming the node and the state, as onnxruntime refuses it (ONNX's
# reference evaluator lets it grow)
def test_a_scan9_state_that_grows_is_refused():
    model = growing_scan_state(17)
    feeds = {"s0": np.zeros(1, F32), "xs": np.array([1, 2, 3], F32)}
    with pytest.raises(ll.StreamShapeChanged, match=r"Scan node.*state 's_in' changes shape "
                                                    r"from \[1\] to \[2\].*onnx/scan9"):
        lo.evaluate(model, feeds)
    with pytest.raises(Exception, match="s_out"):
        onnxruntime_run(model, feeds)
    # zero trips: nothing changes shape, the state is returned as it entered
    out = lo.evaluate(model, {"s0": np.zeros(1, F32), "xs": np.zeros(0, F32)})
    np.testing.assert_array_equal(out["s"], [0])


# rule: onnx/scan8 -- the same for Scan 8's states
def test_a_scan8_state_that_grows_is_refused():
    model = growing_scan_state(8)
    with pytest.raises(ll.StreamShapeChanged, match=r"state 's_in' changes shape.*onnx/scan8"):
        lo.evaluate(model, {"s0": np.zeros((1, 1), F32), "xs": np.array([[1, 2]], F32)})


# rule: onnx/scan9 -- a state that keeps its shape runs (a running sum, by hand)
def test_a_scan_state_of_one_shape_runs():
    model = parse("""
<ir_version: 8, opset_import: ["" : 17]>
g (float[2] s0, float[3, 2] xs) => (float[2] s, float[3, 2] ys) {
  s, ys = Scan <num_scan_inputs = 1, body = b (float[2] s_in, float[2] x) => (float[2] s_out, float[2] y) {
      s_out = Add (s_in, x)
      y = Identity (s_out)
  }> (s0, xs)
}""")
    out = lo.evaluate(model, {"s0": np.zeros(2, F32), "xs": np.arange(6, dtype=F32).reshape(3, 2)})
    np.testing.assert_array_equal(out["s"], [6, 9])            # [0+2+4, 1+3+5]
    np.testing.assert_array_equal(out["ys"], [[0, 1], [2, 4], [6, 9]])


# -- OneHot with float indices (LL-1) ----------------------------------------------------------

def test_onehot_casts_float_indices_to_int64():
    # rule: onnx/node -- LL-1 (spec/50): the OneHot text casts non-integer indices to int64
    # before use; -1.75 becomes -1, the last of 3 classes, and -2.0 class 1 (by hand), as
    # onnxruntime answers; the reference kernel alone matches no class for -1.75
    from onnx import TensorProto, helper
    import lazyloop.onnx as lo
    graph = helper.make_graph(
        [helper.make_node("OneHot", ["x", "depth", "values"], ["y"], axis=1)], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor("depth", TensorProto.FLOAT, [], [3.0]),
         helper.make_tensor("values", TensorProto.FLOAT, [2], [0.0, 1.0])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])
    x = np.array([-2.0, -1.75], np.float32)
    want = np.array([[0, 1, 0], [0, 0, 1]], np.float32)
    np.testing.assert_array_equal(lo.evaluate(model, {"x": x})["y"], want)
    ort = pytest.importorskip("onnxruntime")
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    np.testing.assert_array_equal(sess.run(None, {"x": x})[0], want)
