"""ONNX Loop lowered onto the core (rule: onnx/loop), checked against hand-computed values.

Every mode of the operator's table (seed 000): ("", ""), ("", cond), ("", 1), (M, ""),
(M, cond); the documented sample; the iteration number's type; scopes; sequences and optionals
as carried values; If inside a body; the readings A7, A8, A9 and A11.
"""
from __future__ import annotations

import numpy as np
import onnx
import onnx.parser
import pytest

import lazyloop as ll
import lazyloop.onnx as lo

I64 = np.int64


def parse(text: str) -> onnx.ModelProto:
    model = onnx.parser.parse_model(text)
    onnx.checker.check_model(model)
    return model


# A loop whose body adds the iteration number to a carried sum s and whose condition output
# is s_next < lim (lim read from the enclosing graph). Its M and cond inputs are graph inputs
# or omitted, as each mode needs.
def summing_loop(m: str, cond: str, opset: int = 17) -> onnx.ModelProto:
    inputs = ["int64 s0", "int64 lim"]
    if m:
        inputs.append("int64 M")
    if cond:
        inputs.append("bool c0")
    ir = 3 if opset < 11 else 8
    return parse(f"""
<ir_version: {ir}, opset_import: ["" : {opset}]>
g ({", ".join(inputs)}) => (int64 s, int64[N] trace) {{
  s, trace = Loop <body = b (int64 i, bool c_in, int64 s_in) => (bool c_out, int64 s_out, int64 seen) {{
      s_out = Add (s_in, i)
      c_out = Less (s_out, lim)
      seen = Identity (s_out)
  }}> ({"M" if m else '""'}, {"c0" if cond else '""'}, s0)
}}""")


def feeds(**kw):
    return {k: np.array(v) if not isinstance(v, np.ndarray) else v for k, v in kw.items()}


# rule: onnx/loop -- input (trip_count, ""): a for loop; the body's condition is ignored
def test_for_loop_ignores_the_body_condition():
    model = summing_loop("M", "")
    # s: 0, 0+0=0, 0+1=1, 1+2=3, 3+3=6; lim=2 makes c_out false from trip 3 on, ignored
    out = lo.evaluate(model, feeds(s0=I64(0), lim=I64(2), M=I64(4)))
    assert list(out) == ["s", "trace"]
    assert out["s"] == 6 and out["s"].dtype == np.int64 and out["s"].shape == ()
    np.testing.assert_array_equal(out["trace"], [0, 1, 3, 6])


# rule: onnx/loop -- input ("", cond): a while loop
def test_while_loop_stops_when_the_condition_is_false():
    model = summing_loop("", "c0")
    # trips: s=0 (0<5), 1 (1<5), 3 (3<5), 6 (6<5 false) -> 4 trips
    out = lo.evaluate(model, feeds(s0=I64(0), lim=I64(5), c0=True))
    assert out["s"] == 6
    np.testing.assert_array_equal(out["trace"], [0, 1, 3, 6])


def test_while_loop_with_a_false_initial_condition_runs_zero_trips():
    model = summing_loop("", "c0")
    out = lo.evaluate(model, feeds(s0=I64(7), lim=I64(5), c0=False))
    assert out["s"] == 7
    assert out["trace"].shape == (0,) and out["trace"].dtype == np.int64


# rule: onnx/loop -- input ("", 1): a do-while loop (the condition is a constant true)
def test_do_while_loop():
    model = parse("""
<ir_version: 8, opset_import: ["" : 17]>
g (int64 s0, int64 lim) => (int64 s, int64[N] trace) {
  one = Constant <value = bool {1}> ()
  s, trace = Loop <body = b (int64 i, bool c_in, int64 s_in) => (bool c_out, int64 s_out, int64 seen) {
      s_out = Add (s_in, i)
      c_out = Less (s_out, lim)
      seen = Identity (s_out)
  }> ("", one, s0)
}""")
    # trip 0: s=0, 0<1 true; trip 1: s=1, 1<1 false -> 2 trips
    out = lo.evaluate(model, feeds(s0=I64(0), lim=I64(1)))
    assert out["s"] == 1
    np.testing.assert_array_equal(out["trace"], [0, 1])


# rule: onnx/loop -- input (trip_count, cond): whichever stops first
@pytest.mark.parametrize("m, lim, s, trace", [
    (3, 5, 3, [0, 1, 3]),          # M stops it after 3 trips (the condition is still true)
    (10, 5, 6, [0, 1, 3, 6]),      # the condition stops it after 4 trips
    (0, 5, 0, []),                 # M = 0: zero trips, the condition is never read
])
def test_count_and_condition(m, lim, s, trace):
    model = summing_loop("M", "c0")
    out = lo.evaluate(model, feeds(s0=I64(0), lim=I64(lim), M=I64(m), c0=True))
    assert out["s"] == s
    np.testing.assert_array_equal(out["trace"], np.array(trace, np.int64))


# rule: onnx/loop -- a negative M runs zero trips (A4, ONNX profile)
def test_negative_trip_count_runs_zero_trips():
    model = summing_loop("M", "")
    out = lo.evaluate(model, feeds(s0=I64(4), lim=I64(0), M=I64(-3)))
    assert out["s"] == 4 and out["trace"].shape == (0,)


# rule: onnx/loop -- input ("", ""): no limit; only fuel ends it
def test_infinite_loop_is_ended_by_fuel():
    model = summing_loop("", "")
    with pytest.raises(ll.FuelExhausted) as err:
        lo.evaluate(model, feeds(s0=I64(0), lim=I64(0)), max_trips=50)
    message = str(err.value)
    assert "max_trips=50" in message and "Loop(s)" in message


# rule: onnx/loop -- every opset version of Loop lowers the same way
@pytest.mark.parametrize("opset", [1, 11, 13, 16, 19, 21, 23])
def test_every_loop_opset(opset):
    model = summing_loop("M", "c0", opset=opset)
    out = lo.evaluate(model, feeds(s0=I64(1), lim=I64(100), M=I64(3), c0=True))
    # s: 1+0=1, 1+1=2, 2+2=4
    assert out["s"] == 4
    np.testing.assert_array_equal(out["trace"], [1, 2, 4])


SAMPLE = """
<ir_version: 8, opset_import: ["" : 11]>
predict_net (int32 a, int32 b, bool keepgoing, int64 max_trip_count) => ({outputs}) {{
  {results} = Loop <body = body_net (int32 i, bool keepgoing_in, int32 b_in) => (bool keepgoing_out, int32 b_out, int32 user_defined_val) {{
      my_local = Add (a, b_in)
      b_out = Sub (a, b_in)
      keepgoing_out = Greater (my_local, b_out)
      user_defined_val = Add (b_in, b_in)
  }}> (max_trip_count, keepgoing, b)
}}"""
SAMPLE_FEEDS = {"a": np.array(3, np.int32), "b": np.array(6, np.int32),
                "keepgoing": np.array(True), "max_trip_count": np.array(10, np.int64)}


# rule: onnx/loop -- the operator's documented sample, computed by hand:
# trip 0: b_in=6, my_local=9, b_out=-3, keepgoing=9>-3=true, val=12
# trip 1: b_in=-3, my_local=0, b_out=6, keepgoing=0>6=false, val=-6  -> stop after 2 trips
def test_documented_sample():
    model = parse(SAMPLE.format(outputs="int32 b_final, int32[N] user_defined_vals",
                                results="b_final, user_defined_vals"))
    out = lo.evaluate(model, SAMPLE_FEEDS)
    assert out["b_final"] == 6 and out["b_final"].dtype == np.int32
    np.testing.assert_array_equal(out["user_defined_vals"], np.array([12, -6], np.int32))


# A7: the sample lists the condition among the results; the signature does not
def test_documented_sample_reading_a7_sample():
    model = parse(SAMPLE.format(outputs="bool keepgoing_out, int32 b_final, int32[N] vals",
                                results="keepgoing_out, b_final, vals"))
    out = lo.evaluate(model, SAMPLE_FEEDS, readings={"A7": "sample"})
    assert out["keepgoing_out"] == np.bool_(False)
    assert out["b_final"] == 6
    np.testing.assert_array_equal(out["vals"], [12, -6])


def test_documented_sample_default_signature_refuses_three_results():
    model = parse(SAMPLE.format(outputs="bool keepgoing_out, int32 b_final, int32[N] vals",
                                results="keepgoing_out, b_final, vals"))
    with pytest.raises(ll.ModelError, match=r"onnx/loop"):
        lo.evaluate(model, SAMPLE_FEEDS)


# rule: onnx/loop -- the iteration number has the body's declared dtype and shape
@pytest.mark.parametrize("declared, dtype, shape", [
    ("int64 i", np.int64, (3,)),
    ("int32 i", np.int32, (3,)),
    ("int64[1] i", np.int64, (3, 1)),
    ("i", np.int64, (3,)),          # undeclared: int64 scalar
])
def test_iteration_number_type(declared, dtype, shape):
    model = onnx.parser.parse_model(f"""
<ir_version: 8, opset_import: ["" : 17]>
g (int64 M) => (its) {{
  its = Loop <body = b ({declared}, bool c_in) => (bool c_out, seen) {{
      c_out = Identity (c_in)
      seen = Identity (i)
  }}> (M, "")
}}""")
    out = lo.evaluate(model, {"M": np.array(3, np.int64)})
    assert out["its"].dtype == dtype and out["its"].shape == shape
    np.testing.assert_array_equal(out["its"].reshape(-1), [0, 1, 2])


# rule: onnx/loop -- scan outputs are stacked on a new axis 0 (A8 "stack")
CHUNKS = """
<ir_version: 8, opset_import: ["" : 17]>
g (int64 M, float[2] x) => (float[N] out) {
  out = Loop <body = b (int64 i, bool c_in) => (bool c_out, float[2] piece) {
      c_out = Identity (c_in)
      fi = Cast <to = 1> (i)
      piece = Add (x, fi)
  }> (M, "")
}"""


def test_scan_outputs_stack_on_a_new_axis():
    x = np.array([1, 2], np.float32)
    out = lo.evaluate(parse(CHUNKS), {"M": np.array(3, np.int64), "x": x})["out"]
    np.testing.assert_array_equal(out, [[1, 2], [2, 3], [3, 4]])


def test_reading_a8_concatenate_joins_the_first_axis():
    x = np.array([1, 2], np.float32)
    out = lo.evaluate(parse(CHUNKS), {"M": np.array(3, np.int64), "x": x},
                      readings={"A8": "concatenate"})["out"]
    np.testing.assert_array_equal(out, [1, 2, 2, 3, 3, 4])


def test_zero_trip_scan_output_takes_the_declared_element_shape():
    out = lo.evaluate(parse(CHUNKS), {"M": np.array(0, np.int64),
                                      "x": np.zeros(2, np.float32)})["out"]
    assert out.shape == (0, 2) and out.dtype == np.float32


# A12: a zero-trip scan output whose declared element shape has an unknown dimension
ROWS = """
<ir_version: 8, opset_import: ["" : 17]>
g (int64 M, float[R,3] x) => (float[N,R,3] out) {
  out = Loop <body = b (int64 i, bool c_in) => (bool c_out, float[R,3] row) {
      c_out = Identity (c_in)
      row = Identity (x)
  }> (M, "")
}"""


def test_reading_a12_zero_extent_is_the_default():
    out = lo.evaluate(parse(ROWS), {"M": np.array(0, np.int64),
                                    "x": np.zeros((2, 3), np.float32)})["out"]
    assert out.shape == (0, 0, 3)


def test_reading_a12_error():
    with pytest.raises(ll.EvaluationError, match=r"A12"):
        lo.evaluate(parse(ROWS), {"M": np.array(0, np.int64), "x": np.zeros((2, 3), np.float32)},
                    readings={"A12": "error"})
    out = lo.evaluate(parse(ROWS), {"M": np.array(2, np.int64), "x": np.ones((2, 3), np.float32)},
                      readings={"A12": "error"})["out"]
    assert out.shape == (2, 2, 3)


# rule: onnx/loop -- omitted cond: the body's condition input is true (A9)
ECHO = """
<ir_version: 8, opset_import: ["" : 17]>
g (int64 M) => (bool[N] seen) {
  seen = Loop <body = b (int64 i, bool c_in) => (bool c_out, bool echo) {
      c_out = Identity (c_in)
      echo = Identity (c_in)
  }> (M, "")
}"""


def test_omitted_condition_feeds_true():
    out = lo.evaluate(parse(ECHO), {"M": np.array(2, np.int64)})
    np.testing.assert_array_equal(out["seen"], [True, True])


def test_reading_a9_undefined_masks_what_reads_the_condition():
    result = lo.run(parse(ECHO), {"M": np.array(2, np.int64)}, readings={"A9": "undefined"})
    assert result.outputs["seen"].shape == (2,)
    np.testing.assert_array_equal(result.defined["seen"], [False, False])


# rule: onnx/loop -- values of enclosing graphs are invariants at any depth
def test_nested_loops_read_enclosing_values():
    model = parse("""
<ir_version: 8, opset_import: ["" : 17]>
g (int64 a, int64 acc0) => (int64 acc, int64[N] per_trip) {
  two = Constant <value = int64 {2}> ()
  three = Constant <value = int64 {3}> ()
  acc, per_trip = Loop <body = outer (int64 i, bool c_in, int64 acc_in) => (bool c_out, int64 acc_out, int64 seen) {
      c_out = Identity (c_in)
      acc_out = Loop <body = inner (int64 j, bool d_in, int64 t_in) => (bool d_out, int64 t_out) {
          d_out = Identity (d_in)
          step = Add (a, i)
          t_out = Add (t_in, step)
      }> (three, "", acc_in)
      seen = Identity (acc_out)
  }> (two, "", acc0)
}""")
    # outer trip i adds 3 * (a + i): a=10: 0 + 30 = 30, 30 + 33 = 63
    out = lo.evaluate(model, {"a": np.array(10, np.int64), "acc0": np.array(0, np.int64)})
    assert out["acc"] == 63
    np.testing.assert_array_equal(out["per_trip"], [30, 63])


# rule: onnx/loop -- sequences are carried values too
def test_sequence_as_carried_value():
    model = parse("""
<ir_version: 8, opset_import: ["" : 17]>
g (int64 M) => (seq(int64) items) {
  empty = SequenceEmpty <dtype = 7> ()
  items = Loop <body = b (int64 i, bool c_in, seq(int64) s_in) => (bool c_out, seq(int64) s_out) {
      c_out = Identity (c_in)
      sq = Mul (i, i)
      s_out = SequenceInsert (s_in, sq)
  }> (M, "", empty)
}""")
    out = lo.evaluate(model, {"M": np.array(3, np.int64)})["items"]
    assert isinstance(out, list) and [int(v) for v in out] == [0, 1, 4]


# rule: onnx/loop -- optionals are carried values too; an empty optional is None
OPTIONAL = """
<ir_version: 8, opset_import: ["" : 18]>
g (int64 M, optional(float) o0) => (optional(float) o, bool[N] had) {
  o, had = Loop <body = b (int64 i, bool c_in, optional(float) o_in) => (bool c_out, optional(float) o_out, bool has) {
      c_out = Identity (c_in)
      has = OptionalHasElement (o_in)
      fi = Cast <to = 1> (i)
      o_out = Optional (fi)
  }> (M, "", o0)
}"""


def test_optional_as_carried_value():
    model = parse(OPTIONAL)
    out = lo.evaluate(model, {"M": np.array(2, np.int64), "o0": None})
    # trip 0 sees the empty optional, trip 1 the optional holding 0.0; the last holds 1.0
    np.testing.assert_array_equal(out["had"], [False, True])
    assert isinstance(out["o"], np.ndarray) and out["o"].dtype == np.float32
    assert out["o"].shape == () and out["o"] == 1.0
    empty = lo.evaluate(model, {"M": np.array(0, np.int64), "o0": None})
    assert empty["o"] is None and empty["had"].shape == (0,)


# rule: onnx/if -- an If inside a body: per trip, only the taken branch is evaluated
def test_if_inside_a_loop_evaluates_only_the_taken_branch():
    model = parse("""
<ir_version: 8, opset_import: ["" : 17]>
g (int64 M, float[2] a) => (float[N,2] picked) {
  two = Constant <value = int64 {2}> ()
  far = Constant <value = int64 {7}> ()
  picked = Loop <body = b (int64 i, bool c_in) => (bool c_out, float[2] v) {
      c_out = Identity (c_in)
      small = Less (i, two)
      v = If (small) <then_branch = t () => (float[2] tv) {
          tv = Identity (a)
      }, else_branch = e () => (float[2] ev) {
          bad = Gather (a, far)
          ev = Neg (a)
      }>
  }> (M, "")
}""")
    a = np.array([1, -2], np.float32)
    out = lo.evaluate(model, {"M": np.array(2, np.int64), "a": a})["picked"]
    np.testing.assert_array_equal(out, [[1, -2], [1, -2]])   # the else branch never runs
    out = lo.evaluate(model, {"M": np.array(3, np.int64), "a": a})["picked"]
    np.testing.assert_array_equal(out, [[1, -2], [1, -2], [-1, 2]])


# A11: a carried value that changes shape from trip to trip
GROWING = """
<ir_version: 8, opset_import: ["" : 17]>
g (int64 M, float[K] v0) => (float[L] v) {
  one = Constant <value = float[1] {1.0}> ()
  v = Loop <body = b (int64 i, bool c_in, float[K] v_in) => (bool c_out, float[K] v_out) {
      c_out = Identity (c_in)
      v_out = Concat <axis = 0> (v_in, one)
  }> (M, "", v0)
}"""


# rule: structure/shapes -- a carried stream may hold elements of different shapes (A11 allow)
def test_carried_value_grows_by_default():
    out = lo.evaluate(parse(GROWING), {"M": np.array(3, np.int64), "v0": np.zeros(1, np.float32)})
    np.testing.assert_array_equal(out["v"], [0, 1, 1, 1])   # [0] then three 1s appended


def test_reading_a11_error_keeps_a_carried_value_one_shape():
    with pytest.raises(ll.StreamShapeChanged, match=r"A11=error"):
        lo.evaluate(parse(GROWING), {"M": np.array(3, np.int64), "v0": np.zeros(1, np.float32)},
                    readings={"A11": "error"})


# lazyloop.onnx.lower for the CLI: a Network of profile "onnx" and the maps across it
def test_lower_exposes_the_core_network():
    lowered = lo.lower(summing_loop("M", ""))
    assert isinstance(lowered.network, ll.Network) and lowered.network.profile == "onnx"
    core_feeds = lowered.core_feeds(feeds(s0=I64(0), lim=I64(0), M=I64(3)))
    evaluation = ll.run(lowered.network, core_feeds)
    out = lowered.user_outputs(evaluation.outputs)
    assert list(out) == ["s", "trace"] and out["s"] == 3
    assert len(evaluation.trace) > 0


def test_model_from_a_path(tmp_path):
    path = tmp_path / "loop.onnx"
    onnx.save(summing_loop("M", ""), str(path))
    out = lo.evaluate(str(path), feeds(s0=I64(0), lim=I64(0), M=I64(2)))
    assert out["s"] == 1


def test_bench_loop_model():
    from lazyloop.models import bench_loop_model
    model = bench_loop_model(7)
    out = lo.evaluate(model, {"x": np.array(1.5, np.float32), "y0": np.array(1.0, np.float32)})
    assert out["y"] == np.float32(1.0 + 7 * 1.5)


# rule: onnx/function -- a model-local function is its body, lowered in place; here its body
# is a Loop whose trip count is an attribute of the call
def test_model_local_function_containing_a_loop():
    model = onnx.parser.parse_model("""
<ir_version: 8, opset_import: ["" : 17, "local" : 1]>
g (float x) => (float y) {
  y = local.Repeat <times = 3> (x)
}
<domain: "local", opset_import: ["" : 17]>
Repeat <times> (v) => (w) {
  m = Constant <value_int: int = @times> ()
  w = Loop <body = b (int64 i, bool c_in, float t_in) => (bool c_out, float t_out) {
      c_out = Identity (c_in)
      t_out = Add (t_in, v)
  }> (m, "", v)
}""")
    onnx.checker.check_model(model)
    out = lo.evaluate(model, {"x": np.array(2.0, np.float32)})
    assert out["y"] == np.float32(8.0)     # 2 + 3 * 2


# rule: onnx/function -- an ONNX op defined by a (context-dependent) function: SequenceMap
def test_sequence_map_is_expanded_to_a_loop():
    model = onnx.parser.parse_model("""
<ir_version: 8, opset_import: ["" : 17]>
g (seq(float[H,W]) xs) => (seq(int64[2]) shapes) {
  shapes = SequenceMap <body = f (float[H,W] t) => (int64[2] s) {
      s = Shape (t)
  }> (xs)
}""")
    xs = [np.ones((4, 3), np.float32), np.ones((2, 5), np.float32)]
    lowered = lo.lower(model)
    assert lowered.network.loops, "SequenceMap's function body is a Loop"
    out = lo.evaluate(lowered, {"xs": xs})["shapes"]
    assert [s.tolist() for s in out] == [[4, 3], [2, 5]]


# rule: onnx/node -- Optional is lazyloop's own kernel (the reference one wraps the value in a
# list): Optional(x) holds x itself, Optional<type>() is the empty optional, None
def test_optional_kernel():
    model = parse("""
<ir_version: 8, opset_import: ["" : 18]>
g (float[2] x) => (optional(float[2]) full, optional(float[2]) empty, bool has_full, bool has_empty) {
  full = Optional (x)
  empty = Optional <type: type_proto = float[2]> ()
  has_full = OptionalHasElement (full)
  has_empty = OptionalHasElement (empty)
}""")
    out = lo.evaluate(model, {"x": np.array([1, 2], np.float32)})
    np.testing.assert_array_equal(out["full"], [1, 2])
    assert out["empty"] is None
    assert out["has_full"] == np.bool_(True) and out["has_empty"] == np.bool_(False)


# rule: onnx/loop -- an inner Loop whose own inputs all come from the main graph, but whose
# body reads the outer body's iteration number: it runs once per outer trip
def test_inner_loop_reading_only_the_outer_body():
    model = parse("""
<ir_version: 8, opset_import: ["" : 17]>
g (int64 M) => (int64[N,3] table) {
  three = Constant <value = int64 {3}> ()
  ten = Constant <value = int64 {10}> ()
  table = Loop <body = outer (int64 i, bool c_in) => (bool c_out, int64[3] row) {
      c_out = Identity (c_in)
      row = Loop <body = inner (int64 j, bool d_in) => (bool d_out, int64 cell) {
          d_out = Identity (d_in)
          ti = Mul (i, ten)
          cell = Add (ti, j)
      }> (three, "")
  }> (M, "")
}""")
    out = lo.evaluate(model, {"M": np.array(2, np.int64)})["table"]
    np.testing.assert_array_equal(out, [[0, 1, 2], [10, 11, 12]])   # row i: 10 i + j
