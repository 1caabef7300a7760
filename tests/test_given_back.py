"""A carried value its body gives back unchanged is read in the body as an invariant of the
loop (rules: onnx/loop, onnx/scan9, stream/invariant): its recurrence is read only for the
node's output, and the values are ONNX's own evaluator's and numpy's by hand, on every trip
and after the last; a loop that never ends still never ends."""
from __future__ import annotations

import numpy as np
import onnx
import onnx.parser
import pytest

import lazyloop as ll
import lazyloop.onnx as lo

F32 = np.float32


def readers(network, suffix: str) -> list:
    """The kinds of the layers that read the stream of the layer named `...suffix`."""
    (layer,) = [x for x in network.layers if x.name.endswith(suffix)]
    stream = layer.get_output(0)
    return sorted(type(x).__name__ for x in network.layers
                  if any(t is stream for t in x.inputs()))


def weighted_sum(give_back: str, out: str = "w_out"):
    """A Loop carrying a weight vector w (given back by `give_back`) and a running sum s of
    w times the iteration number, while s stays below a limit; the weighted terms are its
    scan output."""
    model = onnx.parser.parse_model(f"""
<ir_version: 8, opset_import: ["" : 17]>
g (int64 M, bool c0, float[3] w0, float[3] s0, float lim) => (float[3] w, float[3] s, float[N,3] terms) {{
  w, s, terms = Loop <body = b (int64 i, bool c_in, float[3] w_in, float[3] s_in) => (bool c_out, float[3] {out}, float[3] s_out, float[3] t) {{
      {give_back}
      f = Cast <to = 1> (i)
      t = Mul (w_in, f)
      s_out = Add (s_in, t)
      total = ReduceSum <keepdims = 0> (s_out)
      c_out = Less (total, lim)
  }}> (M, c0, w0, s0)
}}""")
    onnx.checker.check_model(model)
    return model


def by_hand(m, c0, w0, s0, lim):
    """The loop as the operator's text runs it (independent of lazyloop)."""
    s, terms, i, cond = s0.copy(), [], 0, c0
    while i < m and cond:
        t = w0 * F32(i)
        s = s + t
        terms.append(t)
        cond = s.sum() < lim
        i += 1
    return w0, s, np.array(terms, F32).reshape(-1, 3)


@pytest.mark.parametrize("give_back,out", [("w_out = Identity (w_in)", "w_out"), ("", "w_in")])
@pytest.mark.parametrize("m,c0,lim", [(5, True, 1e9), (9, True, 20.0), (0, True, 1e9),
                                      (4, False, 1e9)])
def test_loop_weight_given_back_unchanged_is_an_invariant(give_back, out, m, c0, lim):
    # rule: onnx/loop, stream/invariant -- the body reads the weight's initial value; its
    # recurrence only makes the node's output, the initial weight, also after zero trips
    from onnx.reference import ReferenceEvaluator
    model = weighted_sum(give_back, out)
    feeds = {"M": np.array(m, np.int64), "c0": np.array(c0), "w0": np.array([0.5, -1, 2], F32),
             "s0": np.array([1, 0, -0.25], F32), "lim": np.array(lim, F32)}
    lowered = lo.lower(model)
    assert readers(lowered.network, "carried:w_in") == ["LoopOutputLayer"]
    got = lo.evaluate(lowered, feeds)
    for name, want in zip(["w", "s", "terms"], by_hand(m, c0, feeds["w0"], feeds["s0"], lim)):
        assert got[name].dtype == want.dtype and got[name].tobytes() == want.tobytes()
    if m and c0:  # ONNX's evaluator refuses a zero-trip Loop with scan outputs
        for name, want in zip(["w", "s", "terms"], ReferenceEvaluator(model).run(None, feeds)):
            assert got[name].tobytes() == want.tobytes()


def test_loop_weight_changed_stays_carried():
    # rule: onnx/loop -- a weight given back changed (plus zero, a new value) is read in the
    # body from its recurrence
    model = weighted_sum("zero = Constant <value_float = 0.0> ()\n      w_out = Add (w_in, zero)")
    assert readers(lo.lower(model).network, "carried:w_in") == [
        "FunctionLayer", "FunctionLayer", "LoopOutputLayer"]  # w_out, t


def test_a_loop_giving_back_its_values_unchanged_still_never_ends():
    # rule: onnx/loop, laziness/fixed-point -- no trip count, a condition that stays true:
    # the node's output is the last value of a loop that never ends, so there is none
    model = onnx.parser.parse_model("""
<ir_version: 8, opset_import: ["" : 17]>
g (int32 r0) => (int32 r) {
  c = Constant <value = bool {1}> ()
  r = Loop ("", c, r0) <body = b (int64 i, bool c_in, int32 r_in) => (bool c_out, int32 r_in) {
      zero = Constant <value = int32 {0}> ()
      c_out = Greater (r_in, zero)
  }>
}""")
    with pytest.raises(ll.LazyLoopError, match="laziness/fixed-point"):
        lo.evaluate(model, {"r0": np.array(1, np.int32)})
    assert lo.evaluate(model, {"r0": np.array(0, np.int32)})["r"] == 0  # false at once
