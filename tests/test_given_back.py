"""A carried value its body gives back unchanged is an invariant of the loop (rules:
onnx/loop, onnx/scan9, stream/invariant): lowered with no recurrence, it gives the values of
ONNX's own evaluator and of numpy by hand, on every trip and after the last."""
from __future__ import annotations

import numpy as np
import onnx
import onnx.parser
import pytest

import lazyloop.onnx as lo

F32 = np.float32


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
    # rule: onnx/loop, stream/invariant -- recurrences only for the iteration number, the
    # condition and the sum; the final weight is the initial one, also after zero trips
    from onnx.reference import ReferenceEvaluator
    model = weighted_sum(give_back, out)
    feeds = {"M": np.array(m, np.int64), "c0": np.array(c0), "w0": np.array([0.5, -1, 2], F32),
             "s0": np.array([1, 0, -0.25], F32), "lim": np.array(lim, F32)}
    lowered = lo.lower(model)
    assert [len(loop.recurrences) for loop in lowered.network.loops] == [3]
    got = lo.evaluate(lowered, feeds)
    for name, want in zip(["w", "s", "terms"], by_hand(m, c0, feeds["w0"], feeds["s0"], lim)):
        assert got[name].dtype == want.dtype and got[name].tobytes() == want.tobytes()
    if m and c0:  # ONNX's evaluator refuses a zero-trip Loop with scan outputs
        for name, want in zip(["w", "s", "terms"], ReferenceEvaluator(model).run(None, feeds)):
            assert got[name].tobytes() == want.tobytes()


def test_loop_weight_changed_stays_carried():
    # rule: onnx/loop -- a weight given back changed (plus zero, a new value) is carried: a
    # fourth recurrence
    model = weighted_sum("zero = Constant <value_float = 0.0> ()\n      w_out = Add (w_in, zero)")
    assert [len(loop.recurrences) for loop in lo.lower(model).network.loops] == [4]
