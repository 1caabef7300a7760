"""Bad models and bad inputs give a LazyLoopError naming the node and the rule, never a bare
exception (rules: onnx/graph, onnx/node, onnx/loop, onnx/scan9, onnx/scan8, onnx/if,
structure/shapes)."""
from __future__ import annotations

import random

import numpy as np
import onnx
import onnx.parser
import pytest

import lazyloop as ll
import lazyloop.onnx as lo


def parse(text: str, check: bool = True) -> onnx.ModelProto:
    model = onnx.parser.parse_model(text)
    if check:
        onnx.checker.check_model(model)
    return model


LOOP = """
<ir_version: 8, opset_import: ["" : 17]>
g (int64 M, float[2] v0) => (float[2] v, float[N,2] vs) {
  v, vs = Loop <body = b (int64 i, bool c_in, float[2] v_in) => (bool c_out, float[2] v_out, float[2] seen) {
      c_out = Identity (c_in)
      v_out = Add (v_in, v_in)
      seen = Identity (v_out)
  }> (M, "", v0)
}"""
LOOP_FEEDS = {"M": np.array(3, np.int64), "v0": np.ones(2, np.float32)}


def test_the_well_formed_model_runs():
    out = lo.evaluate(parse(LOOP), LOOP_FEEDS)
    np.testing.assert_array_equal(out["v"], [8, 8])   # 1 -> 2 -> 4 -> 8


# rule: onnx/graph -- a malformed protobuf
def test_malformed_protobuf_bytes():
    with pytest.raises(ll.ModelError, match=r"onnx/graph"):
        lo.evaluate(b"\x08\x07\x12\xff\xff\xff\xff\x0fnot onnx", LOOP_FEEDS)


def test_malformed_protobuf_file(tmp_path):
    path = tmp_path / "bad.onnx"
    path.write_bytes(b"this is not a protobuf \xff\xfe\x00")
    with pytest.raises(ll.ModelError, match=r"onnx/graph") as err:
        lo.evaluate(str(path), LOOP_FEEDS)
    assert "bad.onnx" in str(err.value)


def test_missing_file(tmp_path):
    with pytest.raises(ll.ModelError, match=r"onnx/graph"):
        lo.evaluate(str(tmp_path / "nowhere.onnx"), LOOP_FEEDS)


# rule: onnx/graph -- truncated or corrupted bytes of a real model: only LazyLoopErrors escape
def test_corrupted_models_raise_only_lazyloop_errors():
    data = parse(LOOP).SerializeToString()
    rng = random.Random(0)
    for k in range(120):
        b = bytearray(data)
        if k % 2 == 0:
            b = b[:rng.randrange(len(b))]
        else:
            for _ in range(3):
                b[rng.randrange(len(b))] = rng.randrange(256)
        try:
            lo.evaluate(bytes(b), LOOP_FEEDS, max_trips=100)
        except ll.LazyLoopError:
            pass


# rule: onnx/loop -- the body's arity does not match the node
def test_loop_body_with_too_few_inputs():
    model = parse("""
<ir_version: 8, opset_import: ["" : 17]>
g (int64 M, float[2] v0) => (float[2] v) {
  v = Loop <body = b (int64 i, bool c_in) => (bool c_out, float[2] v_out) {
      c_out = Identity (c_in)
      v_out = Identity (v0)
  }> (M, "", v0)
}""", check=False)
    with pytest.raises(ll.ModelError, match=r"onnx/loop") as err:
        lo.evaluate(model, LOOP_FEEDS)
    assert "Loop node" in str(err.value) and "takes 2 inputs" in str(err.value)


def test_loop_body_with_too_few_outputs():
    model = parse("""
<ir_version: 8, opset_import: ["" : 17]>
g (int64 M, float[2] v0) => (float[2] v) {
  v = Loop <body = b (int64 i, bool c_in, float[2] v_in) => (bool c_out) {
      c_out = Identity (c_in)
  }> (M, "", v0)
}""", check=False)
    with pytest.raises(ll.ModelError, match=r"onnx/loop"):
        lo.evaluate(model, LOOP_FEEDS)


# rule: onnx/scan9 -- the body's arity does not match the node
def test_scan_body_arity():
    model = parse("""
<ir_version: 8, opset_import: ["" : 11]>
g (float[2] s0, float[3,2] x) => (float[2] s) {
  s = Scan <num_scan_inputs = 1, body = b (float[2] s_in) => (float[2] s_out) {
      s_out = Identity (s_in)
  }> (s0, x)
}""", check=False)
    with pytest.raises(ll.ModelError, match=r"onnx/scan9") as err:
        lo.evaluate(model, {"s0": np.zeros(2, np.float32), "x": np.zeros((3, 2), np.float32)})
    assert "Scan node" in str(err.value)


ZIP = """
<ir_version: 8, opset_import: ["" : 11]>
g (float[A] a, float[B] b) => (float[N] p) {
  p = Scan <num_scan_inputs = 2, body = m (float x, float y) => (float xy) {
      xy = Mul (x, y)
  }> (a, b)
}"""


# rule: onnx/scan9 -- scan inputs whose sequence lengths differ
def test_scan_inputs_of_different_lengths():
    with pytest.raises(ll.EvaluationError, match=r"onnx/scan9") as err:
        lo.evaluate(parse(ZIP), {"a": np.ones(3, np.float32), "b": np.ones(4, np.float32)})
    assert "Scan node" in str(err.value) and "[3, 4]" in str(err.value)


SCAN8 = """
<ir_version: 3, opset_import: ["" : 8]>
g (int64[B] lens, float[B,1] init, float[B,T,1] x) => (float[B,1] y) {
  y = Scan <num_scan_inputs = 1, body = b (float[1] s, float[1] e) => (float[1] s2) {
      s2 = Add (s, e)
  }> (lens, init, x)
}"""


# rule: onnx/scan8 -- a sequence length beyond the sequence axis
def test_scan8_length_out_of_range():
    feeds = {"lens": np.array([4], np.int64), "init": np.zeros((1, 1), np.float32),
             "x": np.zeros((1, 3, 1), np.float32)}
    with pytest.raises(ll.EvaluationError, match=r"onnx/scan8"):
        lo.evaluate(parse(SCAN8), feeds)


# rule: structure/shapes -- a carried value whose shape changes (A11, default "error")
def test_carried_value_whose_shape_changes():
    model = parse("""
<ir_version: 8, opset_import: ["" : 17]>
g (int64 M, float[2] v0) => (float[2] v) {
  v = Loop <body = b (int64 i, bool c_in, float[2] v_in) => (bool c_out, float[2] v_out) {
      c_out = Identity (c_in)
      v_out = Concat <axis = 0> (v_in, v_in)
  }> (M, "", v0)
}""")
    with pytest.raises(ll.StreamShapeChanged, match=r"structure/shapes") as err:
        lo.evaluate(model, LOOP_FEEDS)
    assert "Loop(v)" in str(err.value)   # names the node (by its output: it has no name)


# rule: onnx/scan9 -- a Scan state keeps one shape in every iteration (the operator's text),
# unlike a Loop's carried value (A11): a state declared float[K] that grows is refused at the
# Scan, naming the state; onnxruntime refuses it too (ONNX's reference evaluator runs it)
def test_scan_state_whose_shape_changes():
    model = parse("""
<ir_version: 8, opset_import: ["" : 11]>
g (float[2] s0, float[3,2] x) => (float[K] s) {
  s = Scan <num_scan_inputs = 1, body = b (float[K] s_in, float[2] e) => (float[K] s_out) {
      s_out = Concat <axis = 0> (s_in, e)
  }> (s0, x)
}""")
    with pytest.raises(ll.StreamShapeChanged, match=r"Scan node.*state 's_in' changes shape "
                                                    r"from \[2\] to \[4\].*onnx/scan9"):
        lo.evaluate(model, {"s0": np.zeros(2, np.float32), "x": np.ones((3, 2), np.float32)})


# rule: onnx/node -- an unknown op, named with its node
def test_unknown_op():
    model = parse("""
<ir_version: 8, opset_import: ["" : 17, "my.domain" : 1]>
g (int64 M, float[2] v0) => (float[2] v) {
  v = Loop <body = b (int64 i, bool c_in, float[2] v_in) => (bool c_out, float[2] v_out) {
      c_out = Identity (c_in)
      v_out = my.domain.Frobnicate (v_in)
  }> (M, "", v0)
}""", check=False)
    with pytest.raises(ll.UnsupportedError, match=r"onnx/node") as err:
        lo.evaluate(model, LOOP_FEEDS)
    assert "Frobnicate" in str(err.value)


# rule: onnx/graph -- a value used before any graph defines it
def test_undefined_value():
    model = parse("""
<ir_version: 8, opset_import: ["" : 17]>
g (int64 M, float[2] v0) => (float[2] v) {
  v = Loop <body = b (int64 i, bool c_in, float[2] v_in) => (bool c_out, float[2] v_out) {
      c_out = Identity (c_in)
      v_out = Add (v_in, nowhere)
  }> (M, "", v0)
}""", check=False)
    with pytest.raises(ll.ModelError, match=r"onnx/graph") as err:
        lo.evaluate(model, LOOP_FEEDS)
    assert "'nowhere'" in str(err.value) and "Add node" in str(err.value)


# rule: onnx/node -- a kernel that fails on the values it receives names its node
def test_kernel_failure_names_the_node():
    model = parse("""
<ir_version: 8, opset_import: ["" : 17]>
g (int64 M, float[2] v0) => (float[N] picked) {
  picked = Loop <body = b (int64 i, bool c_in) => (bool c_out, float p) {
      c_out = Identity (c_in)
      p = Gather <axis = 0> (v0, i)
  }> (M, "")
}""")
    assert lo.evaluate(model, {"M": np.array(2, np.int64),
                               "v0": np.array([5, 6], np.float32)})["picked"].tolist() == [5, 6]
    with pytest.raises(ll.EvaluationError, match=r"onnx/node") as err:
        lo.evaluate(model, {"M": np.array(3, np.int64), "v0": np.array([5, 6], np.float32)})
    assert "Gather node" in str(err.value)


# rule: onnx/if -- branches that give a different number of outputs than the node has
def test_if_branch_arity():
    model = parse("""
<ir_version: 8, opset_import: ["" : 17]>
g (bool c, float[2] a) => (float[2] r) {
  r = If (c) <then_branch = t () => (float[2] x, float[2] y) {
      x = Identity (a)
      y = Identity (a)
  }, else_branch = e () => (float[2] z) {
      z = Neg (a)
  }>
}""", check=False)
    with pytest.raises(ll.ModelError, match=r"onnx/if"):
        lo.evaluate(model, {"c": np.array(True), "a": np.zeros(2, np.float32)})


# rule: onnx/graph -- feeds that are missing or not inputs of the model
def test_missing_and_unexpected_feeds():
    with pytest.raises(ll.InputError, match=r"onnx/graph"):
        lo.evaluate(parse(LOOP), {"M": np.array(3, np.int64)})
    with pytest.raises(ll.InputError, match=r"onnx/graph"):
        lo.evaluate(parse(LOOP), dict(LOOP_FEEDS, extra=np.zeros(1)))


def test_feed_of_the_wrong_dtype():
    with pytest.raises(ll.InputError):
        lo.evaluate(parse(LOOP), {"M": np.array(3, np.int64), "v0": np.ones(2, np.int32)})


def test_unknown_reading():
    with pytest.raises(ll.LazyLoopError):
        lo.evaluate(parse(LOOP), LOOP_FEEDS, readings={"A11": "sometimes"})
    with pytest.raises(ll.LazyLoopError):
        lo.evaluate(parse(LOOP), LOOP_FEEDS, readings={"A99": "x"})


def test_softsign_on_a_scalar():
    # rule: onnx/node -- lazyloop's own Softsign kernel: 0.5 / (1 + 0.5) = 1/3
    import lazyloop.onnx as lo
    from onnx import TensorProto, helper
    graph = helper.make_graph([helper.make_node("Softsign", ["x"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 22)])
    y = lo.evaluate(model, {"x": np.array(0.5, np.float32)})["y"]
    assert y.dtype == np.float32 and y.shape == () and abs(float(y) - 1 / 3) < 1e-7


def test_feeds_must_be_a_mapping():
    # rule: onnx/graph -- a list of feeds is refused as a lazyloop error, not a TypeError
    import lazyloop.onnx as lo
    from onnx import TensorProto, helper
    graph = helper.make_graph([helper.make_node("Neg", ["x"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(ll.InputError):
        lo.evaluate(model, [np.float32(1)])
