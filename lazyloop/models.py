"""Recurrent networks built from loop layers: an LSTM the way TensorRT's char-RNN sample
builds one (SampleCharRNNLoop::addLSTMCell), and a plain numpy LSTM to check it against.

The loop version uses nothing but the loop API and ordinary layers:

* an iterator over the input sequence (`iterator/forward`): x_t, one [batch, input] step;
* two recurrences (`recurrence/def`): the hidden state h and the cell state c, [batch, hidden];
* one matrix multiply for all four gates: [x_t, h] @ [input_weights; hidden_weights] + bias,
  [batch, 4 * hidden] (the sample multiplies the input and the hidden state separately and
  adds; one product of the joined operands is the same sum and one GEMM instead of two);
* four slices of that product, one per gate, through sigmoid or tanh;
* elementwise updates: c' = f * c + i * g and h' = o * tanh(c');
* CONCATENATE of every h' (`output/concat`; length = the sequence length) and LAST_VALUE of
  the two recurrences (`output/last`): the final hidden and cell state.

Every layer inside the loop is applied trip by trip (`stream/map`).

Gate order along the last axis of the weights and the bias: input, forget, cell candidate,
output (`GATES`).
"""
from __future__ import annotations

from typing import NamedTuple, Optional

import numpy as np

from .core.enums import ActivationType, ElementWiseOperation, LoopOutput, MatrixOperation, TripLimit
from .core.errors import ShapeError

GATES = ("input", "forget", "cell", "output")
SIGMOID_GATES = ("input", "forget", "output")


class LSTMWeights(NamedTuple):
    """input_weights: [input, 4 * hidden]; hidden_weights: [hidden, 4 * hidden];
    bias: [4 * hidden]; the 4 * hidden columns hold the gates in `GATES` order."""
    input_weights: np.ndarray
    hidden_weights: np.ndarray
    bias: np.ndarray

    @property
    def hidden_size(self) -> int:
        return int(np.shape(self.bias)[-1]) // 4

    @property
    def input_size(self) -> int:
        return int(np.shape(self.input_weights)[0])

    @classmethod
    def random(cls, input_size: int, hidden_size: int, seed: int = 0, scale: float = 0.3,
               dtype=np.float32) -> "LSTMWeights":
        rng = np.random.default_rng(seed)
        def draw(*shape):
            return rng.uniform(-scale, scale, shape).astype(dtype)
        return cls(draw(input_size, 4 * hidden_size), draw(hidden_size, 4 * hidden_size),
                   draw(4 * hidden_size))


class LSTMTensors(NamedTuple):
    """The three outputs of `build_lstm`, tensors of the network (not yet marked)."""
    sequence: object  # [seq, batch, hidden]: h after every step (CONCATENATE)
    hidden: object    # [batch, hidden]: the final hidden state (LAST_VALUE)
    cell: object      # [batch, hidden]: the final cell state (LAST_VALUE)


# ------------------------------------------------------------------------------------------
# The loop LSTM, one function per step of the cell
# ------------------------------------------------------------------------------------------

def constant(net, value):
    value = np.asarray(value)
    return net.add_constant(value.shape, value).get_output(0)


def concatenate(net, tensors, axis: int):
    """TensorRT's concatenation with its `axis` set after creation. The layer is created over
    copies of the last tensor (valid on the default axis 0), then given its axis, then its
    real inputs, so that every intermediate state of the layer is a valid one."""
    layer = net.add_concatenation([tensors[-1]] * len(tensors))
    layer.axis = axis
    for index, tensor in enumerate(tensors):
        layer.set_input(index, tensor)
    return layer.get_output(0)


def gate_preactivations(net, x_t, h, kernel, bias):
    """All four gates at once, [batch, 4 * hidden]: [x_t, h] @ kernel + bias, where kernel
    stacks the input weights over the hidden weights: one matrix multiply, none per gate."""
    joined = concatenate(net, [x_t, h], axis=1)  # [batch, input + hidden]
    product = net.add_matrix_multiply(joined, MatrixOperation.NONE, kernel,
                                      MatrixOperation.NONE).get_output(0)
    return net.add_elementwise(product, bias, ElementWiseOperation.SUM).get_output(0)


def gate(net, preactivations, which: str, hidden: int):
    """One gate: its column block of the pre-activations, squashed by sigmoid (input, forget,
    output) or tanh (the cell candidate)."""
    batch = preactivations.shape[0]
    start = GATES.index(which) * hidden
    block = net.add_slice(preactivations, (0, start), (batch, hidden), (1, 1)).get_output(0)
    kind = ActivationType.SIGMOID if which in SIGMOID_GATES else ActivationType.TANH
    return net.add_activation(block, kind).get_output(0)


def next_cell_state(net, forget, c, input_gate, candidate):
    """c' = forget * c + input * candidate."""
    kept = net.add_elementwise(forget, c, ElementWiseOperation.PROD).get_output(0)
    written = net.add_elementwise(input_gate, candidate, ElementWiseOperation.PROD).get_output(0)
    return net.add_elementwise(kept, written, ElementWiseOperation.SUM).get_output(0)


def next_hidden_state(net, output_gate, c_next):
    """h' = output * tanh(c')."""
    squashed = net.add_activation(c_next, ActivationType.TANH).get_output(0)
    return net.add_elementwise(output_gate, squashed, ElementWiseOperation.PROD).get_output(0)


def check_lstm_shapes(x, weights: LSTMWeights, h0, c0):
    hidden = weights.hidden_size
    if len(x.shape) != 3:
        raise ShapeError(f"lstm input {x.name!r}", "iterator/forward",
                         f"the input has shape {x.shape}", "give it the layout [seq, batch, input]")
    for name, rows in (("input_weights", x.shape[2]), ("hidden_weights", hidden)):
        got = np.shape(getattr(weights, name))
        if got != (rows, 4 * hidden):
            raise ShapeError(f"lstm {name}", "stream/shape",
                             f"{name} {got} do not fit input size {x.shape[2]} and hidden "
                             f"size {hidden}", f"give [{rows}, {4 * hidden}] {name}")
    for name, state in (("h0", h0), ("c0", c0)):
        if state is not None and tuple(state.shape) != (x.shape[1], hidden):
            raise ShapeError(f"lstm {name} {state.name!r}", "recurrence/def",
                             f"the state has shape {state.shape}",
                             f"give it the shape [batch, hidden] = [{x.shape[1]}, {hidden}]")


def build_lstm(net, x, weights: LSTMWeights, h0=None, c0=None) -> LSTMTensors:
    """An LSTM over `x` ([seq, batch, input], a tensor outside any loop) with the loop API.
    `h0` and `c0` are [batch, hidden] tensors (zeros when omitted). Returns the concatenated
    hidden states and the final hidden and cell states; the caller marks what it wants."""
    check_lstm_shapes(x, weights, h0, c0)
    seq, batch, _ = x.shape
    hidden = weights.hidden_size
    dtype = np.dtype(x.dtype)
    if h0 is None:
        h0 = constant(net, np.zeros((batch, hidden), dtype))
    if c0 is None:
        c0 = constant(net, np.zeros((batch, hidden), dtype))
    steps = constant(net, np.array(seq, np.int32))

    loop = net.add_loop()
    loop.add_trip_limit(steps, TripLimit.COUNT)                      # trip/count: n = seq
    x_t = loop.add_iterator(x, axis=0).get_output(0)                 # iterator/forward
    h_rec = loop.add_recurrence(h0)                                  # recurrence/def
    c_rec = loop.add_recurrence(c0)
    h, c = h_rec.get_output(0), c_rec.get_output(0)

    # loop invariants (`stream/invariant`): the stacked kernel and the bias as a [1, 4H] row
    kernel = constant(net, np.concatenate([weights.input_weights, weights.hidden_weights]))
    bias = constant(net, np.reshape(weights.bias, (1, -1)))  # same rank as the product
    z = gate_preactivations(net, x_t, h, kernel, bias)
    i, f, g, o = (gate(net, z, which, hidden) for which in GATES)
    c_next = next_cell_state(net, f, c, i, g)
    h_next = next_hidden_state(net, o, c_next)
    h_rec.set_input(1, h_next)
    c_rec.set_input(1, c_next)

    sequence = loop.add_loop_output(h_next, LoopOutput.CONCATENATE, axis=0)  # output/concat
    sequence.set_input(1, steps)
    last_h = loop.add_loop_output(h, LoopOutput.LAST_VALUE)                  # output/last
    last_c = loop.add_loop_output(c, LoopOutput.LAST_VALUE)
    return LSTMTensors(sequence.get_output(0), last_h.get_output(0), last_c.get_output(0))


def lstm_network(seq: int, batch: int, weights: LSTMWeights, dtype=np.float32):
    """A network with inputs x, h0, c0 and outputs (sequence, hidden, cell) in that order."""
    from .core.network import Network
    net = Network()
    hidden = weights.hidden_size
    x = net.add_input("x", dtype, (seq, batch, weights.input_size))
    h0 = net.add_input("h0", dtype, (batch, hidden))
    c0 = net.add_input("c0", dtype, (batch, hidden))
    outs = build_lstm(net, x, weights, h0, c0)
    for name, tensor in zip(LSTMTensors._fields, outs):
        tensor.name = name
        net.mark_output(tensor)
    return net


# ------------------------------------------------------------------------------------------
# The reference: a numpy for loop, written without the loop API
# ------------------------------------------------------------------------------------------

def _sigmoid(v):
    return 1 / (1 + np.exp(-v))


def numpy_lstm(x, weights: LSTMWeights, h0: Optional[np.ndarray] = None,
               c0: Optional[np.ndarray] = None):
    """(sequence [seq, batch, hidden], h_n, c_n) of an LSTM over x [seq, batch, input], with a
    Python for loop, written straight from the LSTM equations without the loop API. It does
    the same one product of the joined [x_t, h] per step as `build_lstm`, so the benchmark
    compares equal matrix products and measures what the loop machinery adds."""
    x = np.asarray(x)
    seq, batch, _ = x.shape
    hidden = weights.hidden_size
    stacked = np.concatenate([weights.input_weights, weights.hidden_weights], axis=0)
    b = weights.bias
    h = np.zeros((batch, hidden), x.dtype) if h0 is None else np.asarray(h0)
    c = np.zeros((batch, hidden), x.dtype) if c0 is None else np.asarray(c0)
    states = np.empty((seq, batch, hidden), x.dtype)
    for t in range(seq):
        z = np.concatenate([x[t], h], axis=1) @ stacked + b
        i = _sigmoid(z[:, 0:hidden])
        f = _sigmoid(z[:, hidden:2 * hidden])
        g = np.tanh(z[:, 2 * hidden:3 * hidden])
        o = _sigmoid(z[:, 3 * hidden:])
        c = f * c + i * g
        h = o * np.tanh(c)
        states[t] = h
    return states, h, c


def bench_loop_model(trips: int = 10_000):
    """An ONNX Loop of `trips` trips with a scalar body, for timing against other runtimes:
    M = trips, cond = true, carried y: y_out = y + x, cond_out = cond_in (the exporters'
    usual shape of a for loop). Feed {"x": np.float32 scalar, "y0": np.float32 scalar}."""
    import onnx
    from onnx import TensorProto, helper

    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Add", ["y_in", "x"], ["y_out"])],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("y_in", TensorProto.FLOAT, [])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("y_out", TensorProto.FLOAT, [])])
    graph = helper.make_graph(
        [helper.make_node("Loop", ["M", "cond", "y0"], ["y"], body=body)],
        "bench_loop",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, []),
         helper.make_tensor_value_info("y0", TensorProto.FLOAT, [])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [])],
        initializer=[helper.make_tensor("M", TensorProto.INT64, [], [int(trips)]),
                     helper.make_tensor("cond", TensorProto.BOOL, [], [True])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def bench_feeds():
    return {"x": np.array(1.0, np.float32), "y0": np.array(0.0, np.float32)}
