"""The LSTM built with loop layers (lazyloop.models.build_lstm) against a plain numpy LSTM.

The expectations come from `numpy_lstm`, a Python for loop written without the loop API, and,
for tiny cases, from values worked out by hand. Both evaluators are checked: `ll.evaluate`
(the per-trip schedule) and `ll.run` (the demand-driven reference).
"""
import math

import numpy as np
import pytest

import lazyloop as ll
from lazyloop.models import GATES, LSTMWeights, build_lstm, lstm_network, numpy_lstm

TOL = dict(rtol=1e-5, atol=1e-5)
EVALUATORS = {
    "evaluate": lambda net, feeds: ll.evaluate(net, feeds),
    "run": lambda net, feeds: ll.run(net, feeds, trace=1).outputs,  # the reference evaluator
}


def random_case(seq, batch=2, n_in=3, hidden=8, seed=0):
    rng = np.random.default_rng(seed)
    weights = LSTMWeights.random(n_in, hidden, seed=seed + 1)
    feeds = {
        "x": rng.standard_normal((seq, batch, n_in)).astype(np.float32),
        "h0": rng.standard_normal((batch, hidden)).astype(np.float32),
        "c0": rng.standard_normal((batch, hidden)).astype(np.float32),
    }
    return weights, feeds


@pytest.mark.parametrize("evaluator", sorted(EVALUATORS))
def test_lstm_matches_numpy_lstm(evaluator):
    # rule: iterator/forward -- step t reads x[t] ([batch, input]) of the [seq, batch, input] input
    # rule: recurrence/def -- h and c are <h0, h1', ...> and <c0, c1', ...>
    # rule: stream/map -- the gate layers are applied step by step
    weights, feeds = random_case(seq=5)
    net = lstm_network(5, 2, weights)
    got = EVALUATORS[evaluator](net, feeds)
    states, h_n, c_n = numpy_lstm(feeds["x"], weights, feeds["h0"], feeds["c0"])
    # rule: output/concat -- the hidden state after each of the 5 steps, stacked on a new axis 0
    assert got["sequence"].shape == (5, 2, 8) and got["sequence"].dtype == np.float32
    np.testing.assert_allclose(got["sequence"], states, **TOL)
    # rule: output/last -- LAST_VALUE of a recurrence after n trips is its element n
    np.testing.assert_allclose(got["hidden"], h_n, **TOL)
    np.testing.assert_allclose(got["cell"], c_n, **TOL)
    np.testing.assert_allclose(got["sequence"][-1], got["hidden"], **TOL)


@pytest.mark.parametrize("evaluator", sorted(EVALUATORS))
def test_zero_steps_keep_initial_states(evaluator):
    # rule: output/last -- 0 trips: LAST_VALUE(recurrence) is its initial value
    # rule: output/concat -- 0 trips and length 0: an empty [0, batch, hidden] result
    weights, feeds = random_case(seq=0)
    got = EVALUATORS[evaluator](lstm_network(0, 2, weights), feeds)
    assert got["sequence"].shape == (0, 2, 8) and got["sequence"].dtype == np.float32
    np.testing.assert_array_equal(got["hidden"], feeds["h0"])
    np.testing.assert_array_equal(got["cell"], feeds["c0"])


def zero_weight_net(seq, c0_value, bias=None):
    """Hidden size 1, batch 1, input size 1, all weights zero: every gate sees only its bias."""
    weights = LSTMWeights(np.zeros((1, 4), np.float32), np.zeros((1, 4), np.float32),
                          np.zeros(4, np.float32) if bias is None else np.asarray(bias, np.float32))
    net = ll.Network()
    x = net.add_constant((seq, 1, 1), np.zeros((seq, 1, 1), np.float32)).get_output(0)
    c0 = net.add_constant((1, 1), np.array([[c0_value]], np.float32)).get_output(0)
    outs = build_lstm(net, x, weights, None, c0)
    for tensor in outs:
        net.mark_output(tensor)
    return net, weights, outs


@pytest.mark.parametrize("evaluator", sorted(EVALUATORS))
def test_zero_weights_by_hand(evaluator):
    # Hand computation: all gates have pre-activation 0, so i = f = o = sigmoid(0) = 1/2 and
    # the candidate g = tanh(0) = 0. Then c' = c / 2 and h' = tanh(c') / 2:
    # c: 1 -> 1/2 -> 1/4;  h: 0 -> tanh(1/2)/2 -> tanh(1/4)/2.
    net, weights, outs = zero_weight_net(2, 1.0)
    got = EVALUATORS[evaluator](net, {})
    h1, h2 = math.tanh(0.5) / 2, math.tanh(0.25) / 2
    np.testing.assert_allclose(got[outs.sequence.name], [[[h1]], [[h2]]], **TOL)  # output/concat
    np.testing.assert_allclose(got[outs.hidden.name], [[h2]], **TOL)              # output/last
    np.testing.assert_allclose(got[outs.cell.name], [[0.25]], **TOL)
    # the numpy reference agrees with the hand computation too
    states, h_n, c_n = numpy_lstm(np.zeros((2, 1, 1), np.float32), weights, None,
                                  np.array([[1.0]], np.float32))
    np.testing.assert_allclose(states.reshape(-1), [h1, h2], **TOL)
    np.testing.assert_allclose(c_n, [[0.25]], **TOL)


def test_gate_order_by_hand():
    # Gate order is input, forget, cell candidate, output. A large bias saturates a gate:
    # input gate open (sigmoid(20) ~ 1), forget gate shut (sigmoid(-20) ~ 0), candidate
    # tanh(1), output gate open. One step from c0 = 5: c1 = 0 * 5 + 1 * tanh(1) = tanh(1),
    # h1 = tanh(tanh(1)). A wrong gate order would keep part of c0.
    assert GATES == ("input", "forget", "cell", "output")
    net, weights, outs = zero_weight_net(1, 5.0, bias=[20.0, -20.0, 1.0, 20.0])
    got = ll.evaluate(net, {})
    np.testing.assert_allclose(got[outs.cell.name], [[math.tanh(1.0)]], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got[outs.hidden.name], [[math.tanh(math.tanh(1.0))]],
                               rtol=1e-5, atol=1e-5)


def test_builder_refuses_mismatched_weights():
    net = ll.Network()
    x = net.add_input("x", ll.float32, (4, 2, 3))
    with pytest.raises(ll.LazyLoopError, match="stream/shape"):
        build_lstm(net, x, LSTMWeights.random(5, 8))  # weights for input size 5, x has 3
    with pytest.raises(ll.LazyLoopError, match="recurrence/def"):
        h0 = net.add_input("h0", ll.float32, (2, 7))
        build_lstm(net, x, LSTMWeights.random(3, 8), h0=h0)
