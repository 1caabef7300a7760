"""ONNX Scan lowered onto the core, checked against hand-computed values.

Scan 9+ (rule: onnx/scan9): directions, non-zero and negative axes on inputs and outputs.
Scan 8 (rule: onnx/scan8): the batch loop, sequence_lens, padding that is undefined, and the
direction of a shorter sequence (A13).
"""
from __future__ import annotations

import numpy as np
import onnx
import onnx.parser
import pytest

import lazyloop as ll
import lazyloop.onnx as lo

F32 = np.float32


def parse(text: str) -> onnx.ModelProto:
    model = onnx.parser.parse_model(text)
    onnx.checker.check_model(model)
    return model


def running_sum(x_type: str, attrs: str = "", opset: int = 11, out_type: str = "float[A,B] z",
                state: str = "float[2]", elem: str = "float[2]"):
    """Scan 9+: a running sum carried in s; each trip's sum is the scan output."""
    extra = f", {attrs}" if attrs else ""
    return parse(f"""
<ir_version: 8, opset_import: ["" : {opset}]>
g ({state} s0, {x_type} x) => ({state} s, {out_type}) {{
  s, z = Scan <num_scan_inputs = 1{extra}, body = b ({elem} s_in, {elem} e) => ({elem} s_out, {elem} o) {{
      s_out = Add (s_in, e)
      o = Identity (s_out)
  }}> (s0, x)
}}""")


ROWS = np.array([[1, 2], [3, 4], [5, 6]], F32)
COLS = np.array([[1, 2, 3], [4, 5, 6]], F32)


# rule: onnx/scan9 -- forward over axis 0
@pytest.mark.parametrize("opset", [9, 11, 16, 19, 21])
def test_scan9_forward(opset):
    out = lo.evaluate(running_sum("float[3,2]", opset=opset), {"s0": np.zeros(2, F32), "x": ROWS})
    # sums: [1,2], [4,6], [9,12]
    np.testing.assert_array_equal(out["s"], [9, 12])
    np.testing.assert_array_equal(out["z"], [[1, 2], [4, 6], [9, 12]])


# rule: onnx/scan9 -- scan_input_directions = [1] reads the rows last to first
def test_scan9_reverse_input():
    model = running_sum("float[3,2]", "scan_input_directions = [1]")
    out = lo.evaluate(model, {"s0": np.zeros(2, F32), "x": ROWS})
    # rows 2, 1, 0: [5,6], [8,10], [9,12]
    np.testing.assert_array_equal(out["s"], [9, 12])
    np.testing.assert_array_equal(out["z"], [[5, 6], [8, 10], [9, 12]])


# rule: onnx/scan9 -- scan_output_directions = [1] prepends each trip's value
def test_scan9_reverse_output():
    model = running_sum("float[3,2]", "scan_output_directions = [1]")
    out = lo.evaluate(model, {"s0": np.zeros(2, F32), "x": ROWS})
    np.testing.assert_array_equal(out["z"], [[9, 12], [4, 6], [1, 2]])


# rule: onnx/scan9 -- scan_input_axes = [1] (and -1, counted from the input's rank) scan columns
@pytest.mark.parametrize("axis", [1, -1])
def test_scan9_input_axis(axis):
    model = running_sum("float[2,3]", f"scan_input_axes = [{axis}]")
    out = lo.evaluate(model, {"s0": np.zeros(2, F32), "x": COLS})
    # columns [1,4], [2,5], [3,6]: sums [1,4], [3,9], [6,15]
    np.testing.assert_array_equal(out["s"], [6, 15])
    np.testing.assert_array_equal(out["z"], [[1, 4], [3, 9], [6, 15]])


# rule: onnx/scan9 -- scan_output_axes = [1] (and -1, counted from the output's rank) stacks
# each trip's [2] value as a column of a [2, n] output
@pytest.mark.parametrize("axis", [1, -1])
def test_scan9_output_axis(axis):
    model = running_sum("float[2,3]", f"scan_input_axes = [1], scan_output_axes = [{axis}]")
    out = lo.evaluate(model, {"s0": np.zeros(2, F32), "x": COLS})
    np.testing.assert_array_equal(out["z"], [[1, 3, 6], [4, 9, 15]])


def test_scan9_reverse_input_on_a_negative_axis_with_reverse_output():
    model = running_sum("float[2,3]", "scan_input_axes = [-1], scan_input_directions = [1], "
                        "scan_output_axes = [-1], scan_output_directions = [1]")
    out = lo.evaluate(model, {"s0": np.zeros(2, F32), "x": COLS})
    # columns read 2, 1, 0: [3,6], [5,11], [6,15]; prepended then stacked as columns
    np.testing.assert_array_equal(out["s"], [6, 15])
    np.testing.assert_array_equal(out["z"], [[6, 5, 3], [15, 11, 6]])


# rule: onnx/scan9 -- several scan inputs are zipped; no state is needed
def test_scan9_zip_without_state():
    model = parse("""
<ir_version: 8, opset_import: ["" : 16]>
g (float[3] a, float[3] b) => (float[3] p) {
  p = Scan <num_scan_inputs = 2, scan_input_directions = [0, 1], body = m (float x, float y) => (float xy) {
      xy = Mul (x, y)
  }> (a, b)
}""")
    out = lo.evaluate(model, {"a": np.array([1, 2, 3], F32), "b": np.array([10, 20, 30], F32)})
    np.testing.assert_array_equal(out["p"], [30, 40, 30])   # 1*30, 2*20, 3*10


# rule: onnx/scan9 -- a zero-length sequence: zero trips, the states come back unchanged
def test_scan9_zero_length():
    model = running_sum("float[T,2]", out_type="float[T,2] z")
    out = lo.evaluate(model, {"s0": np.array([7, 8], F32), "x": np.zeros((0, 2), F32)})
    np.testing.assert_array_equal(out["s"], [7, 8])
    assert out["z"].shape == (0, 2) and out["z"].dtype == np.float32


# rule: onnx/scan9 -- a Scan inside a Loop body, reading values of both enclosing graphs
def test_scan_inside_loop():
    model = parse("""
<ir_version: 8, opset_import: ["" : 17]>
g (int64 M, float[3] x, float k) => (float total) {
  zero = Constant <value = float {0}> ()
  total = Loop <body = b (int64 i, bool c_in, float t_in) => (bool c_out, float t_out) {
      c_out = Identity (c_in)
      fi = Cast <to = 1> (i)
      t_out = Scan <num_scan_inputs = 1, body = s (float acc, float e) => (float acc2) {
          scaled = Mul (e, k)
          shifted = Add (scaled, fi)
          acc2 = Add (acc, shifted)
      }> (t_in, x)
  }> (M, "", zero)
}""")
    # each outer trip i adds sum(k*x + i) = k*6 + 3*i; k=2, M=2: 0 + 12 + 0 = 12; 12 + 12 + 3 = 27
    out = lo.evaluate(model, {"M": np.array(2, np.int64), "x": np.array([1, 2, 3], F32),
                              "k": np.array(2, F32)})
    assert out["total"] == F32(27)


# ------------------------------------------------------------------------------------------
# Scan 8
# ------------------------------------------------------------------------------------------

def scan8(directions: str = "", lens: bool = True):
    attrs = f", directions = [{directions}]" if directions else ""
    first = "lens" if lens else '""'
    lens_in = "int64[2] lens, " if lens else ""
    return parse(f"""
<ir_version: 3, opset_import: ["" : 8]>
g ({lens_in}float[2,1] init, float[2,3,1] x) => (float[2,1] y, float[2,3,1] z) {{
  y, z = Scan <num_scan_inputs = 1{attrs}, body = b (float[1] s, float[1] e) => (float[1] s2, float[1] o) {{
      s2 = Add (s, e)
      o = Identity (s2)
  }}> ({first}, init, x)
}}""")


X8 = np.arange(6, dtype=F32).reshape(2, 3, 1)   # batch 0: 0, 1, 2; batch 1: 3, 4, 5
INIT8 = np.zeros((2, 1), F32)


# rule: onnx/scan8 -- no sequence_lens: every sequence has the full length
def test_scan8_full_lengths():
    out = lo.evaluate(scan8(lens=False), {"init": INIT8, "x": X8})
    np.testing.assert_array_equal(out["y"], [[3], [12]])
    np.testing.assert_array_equal(out["z"], [[[0], [1], [3]], [[3], [7], [12]]])


# rule: onnx/scan8 -- sequence_lens[b] trips per batch item; the padding is undefined
def test_scan8_sequence_lens_pad_with_undefined_values():
    result = lo.run(scan8(), {"lens": np.array([2, 3], np.int64), "init": INIT8, "x": X8})
    # batch 0 reads 0, 1 (2 trips); batch 1 reads 3, 4, 5
    np.testing.assert_array_equal(result.outputs["y"], [[1], [12]])
    z, defined = result.outputs["z"], result.defined["z"]
    np.testing.assert_array_equal(defined[:, :, 0], [[True, True, False], [True, True, True]])
    np.testing.assert_array_equal(z[defined], [0, 1, 3, 7, 12])
    assert np.isnan(z[0, 2, 0])                     # the documented fill for float32


# rule: onnx/scan8 -- directions = [1]: a shorter sequence is read from its last valid item
def test_scan8_reverse_starts_at_the_last_valid_item():
    result = lo.run(scan8("1"), {"lens": np.array([2, 3], np.int64), "init": INIT8, "x": X8})
    # batch 0 reads x[1]=1 then x[0]=0: 1, 1; batch 1 reads 5, 4, 3: 5, 9, 12
    np.testing.assert_array_equal(result.outputs["y"], [[1], [12]])
    z, defined = result.outputs["z"], result.defined["z"]
    np.testing.assert_array_equal(defined[:, :, 0], [[True, True, False], [True, True, True]])
    np.testing.assert_array_equal(z[defined], [1, 1, 5, 9, 12])


# A13: reading "padded-axis" reverses the whole sequence axis, padding included
def test_scan8_reading_a13_padded_axis():
    result = lo.run(scan8("1"), {"lens": np.array([2, 3], np.int64), "init": INIT8, "x": X8},
                    readings={"A13": "padded-axis"})
    # batch 0 reads x[2]=2 then x[1]=1: 2, 3
    np.testing.assert_array_equal(result.outputs["y"], [[3], [12]])
    np.testing.assert_array_equal(result.outputs["z"][0, :2, 0], [2, 3])


# rule: onnx/scan8 -- a zero length: the state is the initial one, every output position undefined
def test_scan8_zero_length_item():
    init = np.array([[5], [6]], F32)
    result = lo.run(scan8(), {"lens": np.array([0, 1], np.int64), "init": init, "x": X8})
    np.testing.assert_array_equal(result.outputs["y"], [[5], [9]])
    np.testing.assert_array_equal(result.defined["z"][:, :, 0],
                                  [[False, False, False], [True, False, False]])
    assert result.outputs["z"][1, 0, 0] == F32(9)


# rule: onnx/scan9 -- a Scan inside a Loop over a value whose length changes from trip to
# trip (xs = x[:i+1]): ONNX allows it (only carried values and scan outputs are held to one
# shape within a loop; structure/shapes holds only those to one shape). Expected by hand:
# sums of x[:1], x[:2], x[:3] with x = [0, 1, 2, 3, 4] are 0, 1, 3.
def test_scan_over_a_value_that_changes_length_inside_a_loop():
    model = parse("""
<ir_version: 8, opset_import: ["" : 17]>
g (int64 M, float[5] x) => (float[N] sums) {
  zero1 = Constant <value = int64[1] {0}> ()
  one = Constant <value = int64 {1}> ()
  zero = Constant <value = float {0}> ()
  sums = Loop <body = b (int64 i, bool c_in) => (bool c_out, float s) {
      c_out = Identity (c_in)
      e = Add (i, one)
      e1 = Unsqueeze (e, zero1)
      xs = Slice (x, zero1, e1)
      s = Scan <num_scan_inputs = 1, body = f (float acc, float v) => (float acc2) {
          acc2 = Add (acc, v)
      }> (zero, xs)
  }> (M, "")
}""")
    out = lo.evaluate(model, {"M": np.array(3, np.int64), "x": np.arange(5, dtype=F32)})
    np.testing.assert_array_equal(out["sums"], [0, 1, 3])


# rule: onnx/scan9 -- a Scan whose inputs all come from the main graph inside a Loop body that
# reads the outer iteration number: one Scan per outer trip
def test_scan_of_main_graph_values_reading_the_outer_trip():
    model = parse("""
<ir_version: 8, opset_import: ["" : 17]>
g (int64 M, float[3] x) => (float[N] totals) {
  zero = Constant <value = float {0}> ()
  totals = Loop <body = b (int64 i, bool c_in) => (bool c_out, float t) {
      c_out = Identity (c_in)
      fi = Cast <to = 1> (i)
      t = Scan <num_scan_inputs = 1, body = s (float acc, float e) => (float acc2) {
          shifted = Add (e, fi)
          acc2 = Add (acc, shifted)
      }> (zero, x)
  }> (M, "")
}""")
    # trip i: sum(x + i) = 6 + 3 i with x = [1, 2, 3]
    out = lo.evaluate(model, {"M": np.array(3, np.int64), "x": np.array([1, 2, 3], F32)})
    np.testing.assert_array_equal(out["totals"], [6, 9, 12])


def test_scan8_zero_length_follows_a14():
    # rule: onnx/scan8 -- A14: a sequence length of 0 runs zero trips (default) or is refused
    model = parse("""
<ir_version: 8, opset_import: ["" : 8]>
g (int64[2] lens, float[2] s0, float[2, 2] x) => (float[2] s, float[2, 2] ys) {
  s, ys = Scan <num_scan_inputs = 1, body = b (float st, float e) => (float nx, float y) {
    nx = Add (st, e)
    y = Identity (nx)
  }> (lens, s0, x)
}
""")
    feeds = {"lens": np.array([0, 2], np.int64), "s0": np.array([5, 5], F32),
             "x": np.array([[1, 2], [3, 4]], F32)}
    result = lo.run(model, feeds)
    # item 0 runs no trip: s = 5, ys row all padding; item 1: 5+3 = 8, 8+4 = 12
    np.testing.assert_array_equal(result.outputs["s"], [5, 12])
    np.testing.assert_array_equal(result.outputs["ys"][1], [8, 12])
    np.testing.assert_array_equal(result.defined["ys"], [[False, False], [True, True]])
    with pytest.raises(ll.EvaluationError):
        lo.evaluate(model, feeds, readings={"A14": "refuse"})


def distances(give_back: str, out: str = "s_out"):
    """Scan 9+ as skl2onnx writes a distance matrix: the data carried in s and given back
    unchanged (`give_back`), each trip the squared distances of its rows to one point."""
    return parse(f"""
<ir_version: 8, opset_import: ["" : 18]>
g (float[3,2] data, float[N,2] points) => (float[3,2] s, float[N,3] d, float[3,2] same) {{
  same = Identity (data)
  s, d = Scan <num_scan_inputs = 1, body = b (float[3,2] s_in, float[2] p) => (float[3,2] {out}, float[3] o) {{
      {give_back}
      diff = Sub (s_in, p)
      axes = Constant <value = int64[1] {{1}}> ()
      o = ReduceSumSquare <keepdims = 0> (diff, axes)
  }}> (data, points)
}}""")


@pytest.mark.parametrize("give_back,out", [("s_out = Identity (s_in)", "s_out"), ("", "s_in")])
@pytest.mark.parametrize("points", [12, 0])
def test_scan9_state_carried_unchanged_is_an_invariant(give_back, out, points):
    # rule: onnx/scan9, stream/invariant -- a state whose body output is its own body input
    # (itself, or through one Identity) is the same value on every trip: the body reads its
    # initial value, so the distances are made in one batch (no recurrence upstream), with
    # the values of ONNX's own evaluator and of numpy by hand (the final state the data,
    # also for zero trips)
    from onnx.reference import ReferenceEvaluator
    from nets import batched_runs, onnx_on_engine
    model = distances(give_back, out)
    data = np.array([[0, 1], [2, -1], [0.5, 0.25]], F32)
    pts = np.array([[1, 1], [0, 0], [-2, 3], [0.5, 0.5]] * 3, F32)[:points]  # 12: batched
    feeds = {"data": data, "points": pts}
    lowered = lo.lower(model)
    if points:
        _, machine = onnx_on_engine(model, feeds)
        assert any(k.endswith("/o") for run in batched_runs(machine) for k in run)
    got = lo.evaluate(lowered, feeds)
    if points:  # ONNX's evaluator refuses a zero-trip Scan with scan outputs
        want = ReferenceEvaluator(model).run(None, feeds)
        for name, w in zip(["s", "d", "same"], want):
            assert np.asarray(got[name]).tobytes() == w.tobytes() and got[name].shape == w.shape
    np.testing.assert_array_equal(got["s"], data)
    np.testing.assert_allclose(got["d"], ((data[None] - pts[:, None]) ** 2).sum(-1).reshape(
        points, 3))


