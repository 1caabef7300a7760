"""Sequences and optionals carried through ONNX Loop (rule: onnx/sequences; issue 11 class 4).

Each model builds or reads a list across trips as exporters write it (SequenceEmpty,
SequenceInsert with and without a position, SequenceAt, SequenceLength, SplitToSequence,
ConcatFromSequence with and without new_axis), or carries an optional that enters empty. The
expected values are worked out by hand in the comments (or with plain numpy).
"""
from __future__ import annotations

import numpy as np
import onnx
import onnx.parser
import pytest

import lazyloop.onnx as lo
from lazyloop import LazyLoopError
from lazyloop.difftest.comparing import compare

I64, F32 = np.int64, np.float32


def parse(text: str) -> onnx.ModelProto:
    model = onnx.parser.parse_model(text)
    onnx.checker.check_model(model)
    return model


def evaluate(model, feeds, **kw):
    """lazyloop's answer by the fast path, checked against the reference evaluator (`run`,
    which forces by demand): the two agree on sequences and optionals too."""
    fast = lo.evaluate(model, feeds, **kw)
    reference = lo.run(model, feeds, mode="reference", **kw).outputs
    assert compare(reference, {}, fast) == []
    return fast


def ints(seq):
    return [np.asarray(v).tolist() for v in seq]


# rule: onnx/sequences -- SequenceEmpty, then SequenceInsert at the end on every trip
APPEND = """
<ir_version: 8, opset_import: ["" : 17]>
g (int64 M) => (seq(float) items, int64 n) {
  empty = SequenceEmpty <dtype = 1> ()
  items = Loop <body = b (int64 i, bool c_in, seq(float) s_in) => (bool c_out, seq(float) s_out) {
      c_out = Identity (c_in)
      f = Cast <to = 1> (i)
      v = Mul (f, f)
      s_out = SequenceInsert (s_in, v)
  }> (M, "", empty)
  n = SequenceLength (items)
}"""


def test_sequence_append_across_trips():
    out = evaluate(parse(APPEND), {"M": np.array(4, I64)})
    # trip i appends i*i: [0, 1, 4, 9]
    assert isinstance(out["items"], list) and len(out["items"]) == 4
    assert all(v.dtype == F32 and v.shape == () for v in out["items"])
    assert ints(out["items"]) == [0, 1, 4, 9]
    assert out["n"] == 4 and out["n"].dtype == I64


def test_sequence_zero_trips_is_the_empty_sequence():
    out = evaluate(parse(APPEND), {"M": np.array(0, I64)})
    assert out["items"] == [] and out["n"] == 0


# rule: onnx/sequences -- SequenceInsert with a position: position 0 prepends (the list ends
# reversed), and a negative position counts from the end (-1 = before the last element)
PREPEND = """
<ir_version: 8, opset_import: ["" : 17]>
g (int64 M, int64 pos) => (seq(int64) items) {
  empty = SequenceEmpty <dtype = 7> ()
  items = Loop <body = b (int64 i, bool c_in, seq(int64) s_in) => (bool c_out, seq(int64) s_out) {
      c_out = Identity (c_in)
      n = SequenceLength (s_in)
      some = Greater (n, zero)
      p = Where (some, pos, n)
      s_out = SequenceInsert (s_in, i, p)
  }> (M, "", empty)
}
<int64 zero = {0}>
"""


def test_sequence_insert_at_a_position():
    model = onnx.parser.parse_model(PREPEND.replace("<int64 zero = {0}>", ""))
    zero = onnx.helper.make_tensor("zero", onnx.TensorProto.INT64, [], [0])
    model.graph.initializer.append(zero)
    onnx.checker.check_model(model)
    # position 0 every time (on the empty list: position n = 0): [3, 2, 1, 0]
    out = evaluate(model, {"M": np.array(4, I64), "pos": np.array(0, I64)})
    assert ints(out["items"]) == [3, 2, 1, 0]
    # position -1 = before the last one: [0] -> [1, 0] -> [1, 2, 0] -> [1, 2, 3, 0]
    out = evaluate(model, {"M": np.array(4, I64), "pos": np.array(-1, I64)})
    assert ints(out["items"]) == [1, 2, 3, 0]


# rule: onnx/sequences -- a sequence fed from outside, read trip by trip with SequenceAt (the
# trip number as index), summed into a carried tensor; SequenceLength gives the trip count
READ = """
<ir_version: 8, opset_import: ["" : 17]>
g (seq(float[2]) xs) => (float[2] total, float[N,2] each) {
  n = SequenceLength (xs)
  z = Constant <value = float[2] {0, 0}> ()
  total, each = Loop <body = b (int64 i, bool c_in, float[2] acc) => (bool c_out, float[2] acc_out, float[2] x) {
      c_out = Identity (c_in)
      x = SequenceAt (xs, i)
      acc_out = Add (acc, x)
  }> (n, "", z)
}"""


def test_sequence_read_with_sequence_at():
    xs = [np.array([1, 2], F32), np.array([10, 20], F32), np.array([100, 200], F32)]
    out = evaluate(parse(READ), {"xs": xs})
    np.testing.assert_array_equal(out["total"], [111, 222])
    np.testing.assert_array_equal(out["each"], np.stack(xs))


# rule: onnx/sequences -- SplitToSequence outside, the loop consumes the list from the front
# (SequenceAt 0 then SequenceErase 0) and carries the shrinking list
SPLIT = """
<ir_version: 8, opset_import: ["" : 17]>
g (float[6] x) => (float[N,2] pieces, int64 left) {
  two = Constant <value = int64 {2}> ()
  parts = SplitToSequence (x, two)
  n = SequenceLength (parts)
  zero = Constant <value = int64 {0}> ()
  rest, pieces = Loop <body = b (int64 i, bool c_in, seq(float) s_in) => (bool c_out, seq(float) s_out, float[2] head) {
      c_out = Identity (c_in)
      head = SequenceAt (s_in, zero)
      s_out = SequenceErase (s_in, zero)
  }> (n, "", parts)
  left = SequenceLength (rest)
}"""


def test_split_to_sequence_consumed_across_trips():
    x = np.arange(6, dtype=F32)
    out = evaluate(parse(SPLIT), {"x": x})
    # Split into chunks of 2: [0,1], [2,3], [4,5]; each trip takes the head
    np.testing.assert_array_equal(out["pieces"], [[0, 1], [2, 3], [4, 5]])
    assert out["left"] == 0


# rule: onnx/sequences -- ConcatFromSequence after the loop, with and without new_axis
CONCAT = """
<ir_version: 8, opset_import: ["" : 17]>
g (int64 M, float[2] x) => (float[K] joined, float[N,2] stacked) {
  empty = SequenceEmpty <dtype = 1> ()
  items = Loop <body = b (int64 i, bool c_in, seq(float) s_in) => (bool c_out, seq(float) s_out) {
      c_out = Identity (c_in)
      f = Cast <to = 1> (i)
      v = Mul (x, f)
      s_out = SequenceInsert (s_in, v)
  }> (M, "", empty)
  joined = ConcatFromSequence <axis = 0> (items)
  stacked = ConcatFromSequence <axis = 0, new_axis = 1> (items)
}"""


def test_concat_from_sequence_with_and_without_new_axis():
    x = np.array([1, 2], F32)
    out = evaluate(parse(CONCAT), {"M": np.array(3, I64), "x": x})
    # elements x*0, x*1, x*2 = [0,0], [1,2], [2,4]
    np.testing.assert_array_equal(out["joined"], [0, 0, 1, 2, 2, 4])
    np.testing.assert_array_equal(out["stacked"], [[0, 0], [1, 2], [2, 4]])


# rule: onnx/sequences -- ConcatFromSequence inside the body: a growing buffer read each trip
GROW = """
<ir_version: 8, opset_import: ["" : 17]>
g (int64 M) => (seq(int64) items, int64[N] sums) {
  empty = SequenceEmpty <dtype = 7> ()
  items, sums = Loop <body = b (int64 i, bool c_in, seq(int64[1]) s_in) => (bool c_out, seq(int64[1]) s_out, int64 total) {
      c_out = Identity (c_in)
      one = Constant <value = int64[1] {1}> ()
      row = Expand (i, one)
      s_out = SequenceInsert (s_in, row)
      flat = ConcatFromSequence <axis = 0> (s_out)
      total = ReduceSum <keepdims = 0> (flat)
  }> (M, "", empty)
}"""


def test_concat_from_sequence_inside_the_body():
    out = evaluate(parse(GROW), {"M": np.array(4, I64)})
    # running sums of 0, 1, 2, 3 = 0, 1, 3, 6
    np.testing.assert_array_equal(out["sums"], [0, 1, 3, 6])
    assert ints(out["items"]) == [[0], [1], [2], [3]]


# rule: onnx/sequences -- sequences whose elements change shape from trip to trip
SHAPES = """
<ir_version: 8, opset_import: ["" : 17]>
g (int64 M) => (seq(float) items) {
  empty = SequenceEmpty <dtype = 1> ()
  items = Loop <body = b (int64 i, bool c_in, seq(float) s_in) => (bool c_out, seq(float) s_out) {
      c_out = Identity (c_in)
      n = Reshape (i, one)
      z = ConstantOfShape (n)
      s_out = SequenceInsert (s_in, z)
  }> (M, "", empty)
}
"""


def test_sequence_elements_of_different_shapes():
    model = onnx.parser.parse_model(SHAPES)
    model.graph.initializer.append(onnx.helper.make_tensor("one", onnx.TensorProto.INT64,
                                                           [1], [1]))
    onnx.checker.check_model(model)
    out = evaluate(model, {"M": np.array(3, I64)})
    # trip i inserts zeros of shape [i]
    assert [v.shape for v in out["items"]] == [(0,), (1,), (2,)]
    assert all(v.dtype == F32 and not v.any() for v in out["items"])


# rule: onnx/sequences -- an optional(tensor) that enters empty, filled on trip 0, read on
# later trips with OptionalHasElement / OptionalGetElement
OPT = """
<ir_version: 8, opset_import: ["" : 18]>
g (int64 M) => (float last, float[N] seen, bool[N] had) {
  o0 = Optional <type: type_proto = float> ()
  o, seen, had = Loop <body = b (int64 i, bool c_in, optional(float) o_in) => (bool c_out, optional(float) o_out, float prev, bool has) {
      c_out = Identity (c_in)
      has = OptionalHasElement (o_in)
      prev = If (has) <
          then_branch = t () => (float p) { p = OptionalGetElement (o_in) },
          else_branch = e () => (float q) { q = Constant <value = float {-1}> () }>
      fi = Cast <to = 1> (i)
      o_out = Optional (fi)
  }> (M, "", o0)
  last = OptionalGetElement (o)
}"""


def test_optional_tensor_carried_empty_on_entry():
    out = evaluate(parse(OPT), {"M": np.array(3, I64)})
    # trip 0 sees nothing (-1), trips 1, 2 see the previous trip number
    np.testing.assert_array_equal(out["had"], [False, True, True])
    np.testing.assert_array_equal(out["seen"], np.array([-1, 0, 1], F32))
    assert out["last"] == 2.0 and out["last"].dtype == F32


# rule: onnx/sequences -- optional(seq(tensor)) that enters empty: trip 0 starts a list, later
# trips append to the list it holds
OPT_SEQ = """
<ir_version: 8, opset_import: ["" : 18]>
g (int64 M) => (optional(seq(int64)) o, int64 n) {
  o0 = Optional <type: type_proto = seq(int64)> ()
  o = Loop <body = b (int64 i, bool c_in, optional(seq(int64)) o_in) => (bool c_out, optional(seq(int64)) o_out) {
      c_out = Identity (c_in)
      has = OptionalHasElement (o_in)
      s = If (has) <
          then_branch = t () => (seq(int64) p) { p = OptionalGetElement (o_in) },
          else_branch = e () => (seq(int64) q) { q = SequenceEmpty <dtype = 7> () }>
      s2 = SequenceInsert (s, i)
      o_out = Optional (s2)
  }> (M, "", o0)
  got = OptionalGetElement (o)
  n = SequenceLength (got)
}"""


def test_optional_sequence_carried_empty_on_entry():
    out = evaluate(parse(OPT_SEQ), {"M": np.array(3, I64)})
    assert ints(out["o"]) == [0, 1, 2] and out["n"] == 3


def test_optional_sequence_after_zero_trips_is_empty():
    model = parse(OPT_SEQ.replace("  got = OptionalGetElement (o)\n  n = SequenceLength (got)\n",
                                  "  n = Constant <value = int64 {0}> ()\n"))
    out = evaluate(model, {"M": np.array(0, I64)})
    assert out["o"] is None


# rule: onnx/sequences -- a sequence as a Loop scan output is refused by ONNX's checker (scan
# outputs are tensors); a sequence as a carried Loop output is what exporters write. Nested:
# an inner loop builds a list per outer trip, the outer loop keeps the longest so far.
NESTED = """
<ir_version: 8, opset_import: ["" : 17]>
g (int64 M) => (seq(int64) last, int64[N] lens) {
  empty = SequenceEmpty <dtype = 7> ()
  last, lens = Loop <body = outer (int64 i, bool c_in, seq(int64) keep) => (bool c_out, seq(int64) built, int64 len) {
      c_out = Identity (c_in)
      e2 = SequenceEmpty <dtype = 7> ()
      built = Loop <body = inner (int64 j, bool d_in, seq(int64) s_in) => (bool d_out, seq(int64) s_out) {
          d_out = Identity (d_in)
          v = Add (i, j)
          s_out = SequenceInsert (s_in, v)
      }> (i, "", e2)
      len = SequenceLength (built)
  }> (M, "", empty)
}"""


def test_nested_loops_build_sequences():
    out = evaluate(parse(NESTED), {"M": np.array(4, I64)})
    # outer trip i builds [i + 0, ..., i + (i-1)], of length i; the last is [3, 4, 5]
    np.testing.assert_array_equal(out["lens"], [0, 1, 2, 3])
    assert ints(out["last"]) == [3, 4, 5]


# rule: onnx/sequences -- a sequence fed from outside as the initial value: each trip splits a
# row of x without keepdims (SplitToSequence with no split), appends its last piece
# (SequenceAt -1) and a SequenceConstruct pair is concatenated into the scan output
FED = """
<ir_version: 8, opset_import: ["" : 17]>
g (seq(float) s0, float[N,3] x) => (seq(float) items, float[N,2] ends) {
  n = Shape <start = 0, end = 1> (x)
  m = Squeeze (n)
  items, ends = Loop <body = b (int64 i, bool c_in, seq(float) s_in) => (bool c_out, seq(float) s_out, float[2] pair) {
      c_out = Identity (c_in)
      row = Gather <axis = 0> (x, i)
      parts = SplitToSequence <axis = 0, keepdims = 0> (row)
      minus = Constant <value = int64 {-1}> ()
      zero = Constant <value = int64 {0}> ()
      last = SequenceAt (parts, minus)
      first = SequenceAt (parts, zero)
      s_out = SequenceInsert (s_in, last)
      both = SequenceConstruct (first, last)
      pair = ConcatFromSequence <axis = 0, new_axis = 1> (both)
  }> (m, "", s0)
}"""


def test_fed_sequence_carried_and_read_from_the_end():
    x = np.arange(6, dtype=F32).reshape(2, 3)
    s0 = [np.array(-1, F32)]
    out = evaluate(parse(FED), {"s0": s0, "x": x})
    # rows [0,1,2] and [3,4,5]: last pieces 2 and 5 appended to [-1]; pairs (first, last)
    assert ints(out["items"]) == [-1, 2, 5]
    np.testing.assert_array_equal(out["ends"], [[0, 2], [3, 5]])


def test_fed_sequence_after_zero_trips_is_returned_as_given():
    s0 = [np.array(-1, F32), np.array(7, F32)]
    out = evaluate(parse(FED), {"s0": s0, "x": np.zeros((0, 3), F32)})
    assert ints(out["items"]) == [-1, 7] and out["ends"].shape == (0, 2)


# rule: onnx/sequences -- an optional graph input fed as None (the empty optional) is carried:
# the body replaces it on odd trips only, so which trips see a value is decided by the data
FED_OPT = """
<ir_version: 8, opset_import: ["" : 18]>
g (int64 M, optional(int64) o0) => (optional(int64) o, bool[N] had) {
  o, had = Loop <body = b (int64 i, bool c_in, optional(int64) o_in) => (bool c_out, optional(int64) o_out, bool has) {
      c_out = Identity (c_in)
      has = OptionalHasElement (o_in)
      two = Constant <value = int64 {2}> ()
      r = Mod (i, two)
      one = Constant <value = int64 {1}> ()
      odd = Equal (r, one)
      o_out = If (odd) <
          then_branch = t () => (optional(int64) p) { p = Optional (i) },
          else_branch = e () => (optional(int64) q) { q = Identity (o_in) }>
  }> (M, "", o0)
}"""


def test_fed_empty_optional_carried():
    out = evaluate(parse(FED_OPT), {"M": np.array(4, I64), "o0": None})
    # trips 0, 1 see nothing; trip 1 stores 1; trips 2, 3 see it; trip 3 stores 3
    np.testing.assert_array_equal(out["had"], [False, False, True, True])
    assert out["o"] == 3 and out["o"].dtype == I64
    out = evaluate(parse(FED_OPT), {"M": np.array(1, I64), "o0": None})
    assert out["o"] is None
    out = evaluate(parse(FED_OPT), {"M": np.array(1, I64), "o0": np.array(9, I64)})
    assert out["o"] == 9 and out["had"].tolist() == [True]


# ---- comparing sequences and optionals (difftest) ---------------------------------------

# rule: onnx/sequences -- sequences compare by length then element by element; optionals by
# presence then value
def test_compare_sequences_by_length_then_elements():
    a = [np.array([1, 2], F32), np.array(3, F32)]
    assert compare({"s": a}, {}, {"s": [x.copy() for x in a]}) == []
    [short] = compare({"s": a}, {}, {"s": a[:1]})
    assert short.kind == "length" and "2" in short.detail and "1" in short.detail
    [off] = compare({"s": a}, {}, {"s": [a[0], np.array(4, F32)]})
    assert off.kind == "values" and off.output == "s[1]"
    [shape] = compare({"s": a}, {}, {"s": [a[0], np.array([3], F32)]})
    assert shape.kind == "shape" and shape.output == "s[1]"
    [kind] = compare({"s": a}, {}, {"s": np.array([1, 2], F32)})
    assert kind.kind == "type"


def test_compare_optionals_by_presence_then_value():
    x = np.array([1, 2], F32)
    assert compare({"o": None}, {}, {"o": None}) == []
    assert compare({"o": x}, {}, {"o": x.copy()}) == []
    [missing] = compare({"o": x}, {}, {"o": None})
    assert missing.kind == "presence"
    [extra] = compare({"o": None}, {}, {"o": x})
    assert extra.kind == "presence"
    [val] = compare({"o": x}, {}, {"o": x + 1})
    assert val.kind == "values"


# rule: onnx/sequences -- a position outside [-n, n] is an error naming the node, raised when
# that trip runs: position 2 on the empty list of trip 0
def test_sequence_insert_position_out_of_range():
    model = onnx.parser.parse_model(PREPEND.replace("<int64 zero = {0}>", ""))
    model.graph.initializer.append(onnx.helper.make_tensor("zero", onnx.TensorProto.INT64,
                                                           [], [-1]))
    # zero = -1: Greater(n, -1) holds even for the empty list, so trip 0 inserts at pos = 2
    with pytest.raises(LazyLoopError, match=r"SequenceInsert.*\[onnx/node\]"):
        lo.evaluate(model, {"M": np.array(1, I64), "pos": np.array(2, I64)})


# rule: onnx/sequences -- a sequence as a Loop scan output is not a valid model (ONNX's type
# inference and onnxruntime refuse it too): a LazyLoopError naming the Loop
def test_sequence_as_scan_output_is_refused():
    model = onnx.parser.parse_model("""
<ir_version: 8, opset_import: ["" : 17]>
g (int64 M) => (seq(int64) per) {
  per = Loop <body = b (int64 i, bool c_in) => (bool c_out, seq(int64) s) {
      c_out = Identity (c_in)
      e = SequenceEmpty <dtype = 7> ()
      s = SequenceInsert (e, i)
  }> (M, "")
}""")
    with pytest.raises(LazyLoopError, match="Loop"):
        lo.evaluate(model, {"M": np.array(2, I64)})


# rule: onnx/sequences -- returned sequences are fresh lists of fresh, writable arrays, as
# returned tensors are: neither the fed list nor lazyloop's memo can be changed through them
def test_returned_sequences_are_fresh():
    s0 = [np.array(-1, F32)]
    out = lo.evaluate(parse(FED), {"s0": s0, "x": np.zeros((0, 3), F32)})
    assert out["items"] is not s0 and out["items"][0] is not s0[0]
    out["items"][0][...] = 5
    assert s0[0] == -1
    built = lo.evaluate(parse(APPEND), {"M": np.array(2, I64)})["items"]
    assert all(a.flags.writeable for a in built)
