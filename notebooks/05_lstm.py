# %% [markdown]
# # 5 · An LSTM made of loop layers
#
# **You will be able to:** build a recurrent network from loop layers (an iterator, two
# recurrences, loop outputs) and check it against a plain numpy loop; tell apart the stream `h`
# and the stacked next values `states`; predict the shapes of the loop's outputs and how many
# elements each stream forces; say what TensorRT's guide does not let a loop do. Terms: see the
# [glossary](README.md#glossary).
#
# TensorRT removed its prefabricated RNN layer in version 10; recurrent networks are now written
# with the loop API. Its char-RNN sample (`samples/sampleCharRNN/sampleCharRNN.cpp`,
# `SampleCharRNNLoop::addLSTMCell`) does it with one iterator over the input sequence, two
# recurrences for the hidden state `h` and the cell state `c`, ordinary layers for the gates,
# and loop outputs for the results. `lazyloop.models.build_lstm` has the same loop structure —
# `COUNT(seq)`, the iterator, the two recurrences, `CONCATENATE` of the next `h` and
# `LAST_VALUE` of `h` and `c` — but computes the gates with other layers:
#
# | | the sample's `addLSTMCell` | `build_lstm` |
# |---|---|---|
# | products | two: `x_t` by the input weights, `h_t` by the recurrent weights, then added | one: `[x_t, h_t]` (joined) by the input weights stacked over the hidden weights |
# | biases | two, input and recurrent, added | one |
# | gate order along the `4H` columns | input, cell, forget, output | input, forget, cell, output (`GATES`) |
#
# They compute the same function once the weights are laid out to match:
# $x W_x + h W_h = [x, h] \begin{bmatrix} W_x \\ W_h \end{bmatrix}$, two biases add up to one,
# and swapping the cell and forget column blocks turns one gate order into the other. (The
# sample also stacks two such layers and looks the character embedding up on the host; here
# the look-up is a gather in the network, and there is one layer.)
# `lazyloop.models.numpy_lstm` is a plain numpy `for` loop to check `build_lstm` against.
#
# This notebook wraps the LSTM the way a character model does — an embedding look-up before the
# loop, a projection to one score per character after it — evaluates it, checks it against numpy,
# and plots the hidden state over time. The weights are random: the point is the semantics, not
# the predictions. Rules at work: `trip/count`, `iterator/forward`, `recurrence/def`,
# `stream/invariant` (the weights), `stream/map` (the gates), `output/concat`, `output/last`.

# %%
# %matplotlib inline
import numpy as np
import matplotlib.pyplot as plt
import lazyloop as ll
from lazyloop import teach
from lazyloop.models import GATES, LSTMWeights, build_lstm, numpy_lstm

# %% [markdown]
# ## The data and the weights
#
# A short text, its characters as a vocabulary, and each character as a token id. The embedding
# table gives each token a vector of 8 numbers; the LSTM has 16 hidden units.

# %%
text = "lazy streams, forced in order"
vocab = sorted(set(text))
tokens = np.array([vocab.index(ch) for ch in text], np.int32)
SEQ, V, EMBED, HIDDEN = len(text), len(vocab), 8, 16

rng = np.random.default_rng(7)
embedding = (0.6 * rng.standard_normal((V, EMBED))).astype(np.float32)
projection = (0.6 * rng.standard_normal((HIDDEN, V))).astype(np.float32)
weights = LSTMWeights.random(EMBED, HIDDEN, seed=3, scale=0.6)
print(f"{SEQ} characters, vocabulary of {V}; gate order along the 4*H columns: {GATES}")


# %% [markdown]
# ## The cell, as equations
#
# Indexed as streams, `h = ⟨h_0, h_1, …⟩` with `h_0` the initial state, trip *t* reads `x_t`,
# `h_t` and `c_t` and computes the next state. $\sigma$ is the logistic sigmoid, $\odot$ the
# element-wise product, and $z^{(k)}$ the $k$-th block of $H$ columns of $z$ in `GATES` order:
#
# $$
# \begin{aligned}
# z_t &= [x_t,\ h_t] \begin{bmatrix} W_x \\ W_h \end{bmatrix} + b \\
# i_t &= \sigma\big(z_t^{(0)}\big) \qquad f_t = \sigma\big(z_t^{(1)}\big) \qquad
# g_t = \tanh\big(z_t^{(2)}\big) \qquad o_t = \sigma\big(z_t^{(3)}\big) \\
# c_{t+1} &= f_t \odot c_t + i_t \odot g_t \\
# h_{t+1} &= o_t \odot \tanh\big(c_{t+1}\big)
# \end{aligned}
# $$
#
# `i` (input) decides how much of the candidate `g` is written into the cell, `f` (forget) how
# much of the old cell is kept, `o` (output) how much of the squashed cell is shown as `h`.
# In the loop, `c_{t+1}` and `h_{t+1}` are computed on trip *t*, as elements of the next values
# `c_next` and `h_next` (`recurrence/def`).
#
# ## Building the network
#
# Outside the loop: gather the embeddings of the tokens and reshape them to
# `[seq, batch=1, embed]`. `build_lstm` adds the loop: `COUNT(seq)`, an iterator over axis 0 giving
# `x_t`, recurrences `h` and `c` (zeros to start), one matrix multiply for all four gates of
# `[x_t, h]`, the gate non-linearities, `c' = f·c + i·g` and `h' = o·tanh(c')`. It returns
# `CONCATENATE(h')` (the state after every step) and `LAST_VALUE(h)`, `LAST_VALUE(c)`. After the
# loop, one matrix multiply turns every hidden state into scores over the vocabulary.

# %%
def char_model(seq=SEQ, outputs=("scores", "states", "h_final")):
    net = ll.Network()
    ids = net.add_input("tokens", ll.int32, (seq,))
    table = net.add_constant(embedding.shape, embedding).get_output(0)
    embedded = net.add_gather(table, ids, 0).get_output(0)            # [seq, embed]
    as_batch = net.add_shuffle(embedded)
    as_batch.reshape_dims = (seq, 1, EMBED)                            # [seq, 1, embed]
    lstm = build_lstm(net, as_batch.get_output(0), weights)
    w_out = net.add_constant((1, HIDDEN, V), projection[None]).get_output(0)
    scores = net.add_matrix_multiply(lstm.sequence, ll.MatrixOperation.NONE,
                                     w_out, ll.MatrixOperation.NONE).get_output(0)
    scores.name = "scores"                                             # [seq, 1, V]
    lstm.sequence.name, lstm.hidden.name = "states", "h_final"
    for t in (scores, lstm.sequence, lstm.hidden):
        if t.name in outputs:
            net.mark_output(t)
    name_streams(net)
    return net

def name_streams(net):
    """Readable names for the loop's streams (build_lstm leaves the builder's names)."""
    loop = net.loops[0]
    loop.iterators[0].get_output(0).name = "x_t"
    for rec, name in zip(loop.recurrences, ("h", "c")):
        rec.get_output(0).name = name
        rec.get_input(1).name = name + "_next"
    squashed = [layer for layer in net.layers if layer.type is ll.LayerType.ACTIVATION]
    for layer, name in zip(squashed, ("i", "f", "g", "o", "tanh_c")):
        layer.get_output(0).name = name

def lstm_loop(seq=SEQ):
    """build_lstm's loop alone, over an input sequence of embeddings [seq, 1, embed]."""
    net = ll.Network()
    x = net.add_input("embedded", ll.float32, (seq, 1, EMBED))
    lstm = build_lstm(net, x, weights)
    lstm.sequence.name, lstm.hidden.name = "states", "h_final"
    net.mark_output(lstm.sequence)
    net.mark_output(lstm.hidden)
    name_streams(net)
    return net

net = char_model()
teach.draw_network(lstm_loop(), title="the LSTM loop of the char-model (build_lstm)");

# %% [markdown]
# The diagram shows the loop alone: in the char-model the input `embedded` is the gather of the
# embeddings and `states` goes on to the projection. The two dashed back edges are the LSTM's
# memory: `h_next` feeds `h` and `c_next` feeds `c` on the next trip. Everything else in the box
# is a `stream/map`: the same layer applied to element *t* of its inputs. The weight constants
# outside the box are invariants, the same on every trip.
#
# ## Evaluating, and checking against numpy
#
# `ll.evaluate` runs the loop with a per-trip schedule worked out once from the demand analysis;
# `ll.run` uses the plain demand-driven evaluator and records the trace. Both must agree with a
# numpy LSTM written without any loop API.

# %%
feeds = {"tokens": tokens}
fast = ll.evaluate(net, feeds)          # the per-trip schedule
ev = ll.run(net, feeds)                 # the demand-driven reference, with its trace

states, h_n, c_n = numpy_lstm(embedding[tokens][:, None, :], weights)   # numpy, independently
np.testing.assert_allclose(fast["states"], states, rtol=1e-5, atol=1e-6)
np.testing.assert_allclose(fast["h_final"], h_n, rtol=1e-5, atol=1e-6)
np.testing.assert_allclose(fast["scores"], states @ projection, rtol=1e-5, atol=1e-5)
for name in fast:
    np.testing.assert_array_equal(fast[name], ev.outputs[name])
print("lazyloop and numpy agree on", sorted(fast))

# %% [markdown]
# ## The hidden state over time
#
# `states[t]` is the hidden state after reading character *t*. Each line is one of the 16 units;
# the heat map shows the same numbers as a picture.

# %%
h = fast["states"][:, 0, :]
fig, (top, bottom) = plt.subplots(2, 1, figsize=(11, 6), sharex=True)
teach.plot_sequence(h, ax=top, title="states[t], the hidden state after character t;"
                    " one line per unit", xlabel="")
teach.plot_sequence(h, ax=bottom, kind="heatmap", title="the same as a heat map",
                    xlabel="character read")
bottom.set_xticks(range(SEQ))
bottom.set_xticklabels(list(text))
fig.tight_layout()

# %% [markdown]
# And the most likely next character after each step — with random weights, gibberish:

# %%
guess = "".join(vocab[k] for k in fast["scores"][:, 0, :].argmax(axis=1))
print("read:   ", repr(text))
print("guessed:", repr(guess))

# %% [markdown]
# ## What was forced
#
# The trace of the loop's main streams over all trips. `h` has one element more than the others:
# the marked output `h_final = LAST_VALUE(h)` reads element `n` (`output/last`), while the gates
# are only needed for trips `0 … n-1`. `c` stops at `n-1`: `build_lstm` also made a
# `LAST_VALUE(c)`, but nobody marked it, so `c_n` is never asked for (`laziness/dead`).

# %%
teach.plot_trace(ev, streams=["x_t", "h", "c", "i", "f", "g", "o", "c_next", "h_next"],
                 order=False, title=f"LSTM over {SEQ} characters: forced elements");

# %% [markdown]
# Zero steps is a legal loop too: `COUNT(0)` runs no trip, `LAST_VALUE(h)` is the initial state
# (zeros here) and the stacked states are empty.

# %%
net0 = ll.Network()
x0 = net0.add_input("x", ll.float32, (0, 1, EMBED))
empty = build_lstm(net0, x0, weights)
empty.hidden.name, empty.sequence.name = "h_final", "states"
net0.mark_output(empty.hidden)
net0.mark_output(empty.sequence)
out0 = ll.evaluate(net0, {"x": np.zeros((0, 1, EMBED), np.float32)})
print("states:", out0["states"].shape, "  h_final:", out0["h_final"].shape,
      "all zero:", not out0["h_final"].any())

# %% [markdown]
# ## What TensorRT's guide does not let a loop do
#
# The guide ends its chapter on loops with limitations (seed `004`, *Limitations*). None of
# them changes what a loop means — lazyloop's answers are the same either way — but each
# decides whether TensorRT builds a network like this one, and what running it costs.
#
# 1. **Memory with dynamic shapes.** A loop that refers to more than one dynamic dimension may
#    take more memory than expected: TensorRT allocates the loop's tensors as if every dynamic
#    dimension had the largest value of any of them (the guide's example: tensors `[4, x, y]` and
#    `[6, y]` are allocated as `[4, m, m]` and `[6, m]`, `m = max(x, y)`). Give this LSTM a
#    dynamic sequence length of up to 512 and a dynamic batch of up to 8, and the rule, applied
#    by hand below, allocates each state as if the batch were 512 too.
# 2. **FP32 and FP16 only.** "The loop API supports only FP32 and FP16 precision" — yet the
#    same guide feeds a WHILE limit a bool and a COUNT an int32. The ambiguity register keeps
#    the two readings as **A6** (`profile/tensorrt-dtypes`): by default (`profile`) floating
#    point loop values must be FP32 or FP16 while bool and int32/int64 serve as conditions and
#    counters; `fp-only` takes the sentence literally. Under both, a float64 LSTM is refused.
# 3. **`LAST_VALUE` reads a recurrence.** Its input must be the output of a recurrence layer
#    (`structure/last-value`, notebook 3).

# %%
def allocated(shapes, bounds):
    """Elements per tensor under the guide's rule: each dynamic dimension (a name in `bounds`)
    sized as the largest bound of all of them."""
    largest = max(bounds.values())
    return {k: int(np.prod([largest if d in bounds else d for d in shape]))
            for k, shape in shapes.items()}

loop_tensors = {"x_t": ("batch", EMBED), "h": ("batch", HIDDEN), "c": ("batch", HIDDEN),
                "z": ("batch", 4 * HIDDEN)}
bounds = {"seq": 512, "batch": 8}
needed = allocated(loop_tensors, {"batch": bounds["batch"]})
for k, v in allocated(loop_tensors, bounds).items():
    print(f"{k:<4} needs {needed[k]:>5} floats, allocated as {v:>6} ({v // needed[k]} times)")

x64 = ll.Network()
lstm64 = build_lstm(x64, x64.add_input("x", ll.float64, (SEQ, 1, EMBED)),
                    LSTMWeights.random(EMBED, HIDDEN, seed=3, dtype=np.float64))
x64.mark_output(lstm64.hidden)
try:
    ll.compile_network(x64)                 # the checks every evaluation starts with
except ll.StructureError as err:
    print("\nfloat64:", err)
teach.show_ambiguity("A6")

# %% [markdown]
# ## Exercises: predict, then check
#
# Each ✎ cell ships as `answer = ...`: replace `...` with your prediction and run the check cell.
# A wrong answer gets a hint naming the rule; a right one shows what lazyloop did.
#
# **Exercise 5.1.** `char_model(seq=7, outputs=("states",))` reads a 7-character prefix and marks
# only `states` — not `h_final`. How many elements of the stream `h` does `ll.run` force?

# %%
# ✎ Exercise 5.1: a count
answer_1 = ...

# %%
if teach.exercise("05.1", answer_1):
    ev7 = ll.run(char_model(seq=7, outputs=("states",)), {"tokens": tokens[:7]})
    print("h forced at", teach.forced(ev7, "h"), "  h_next forced at", teach.forced(ev7, "h_next"))

# %% [markdown]
# **Exercise 5.2.** `char_model(seq=7)` reads a 7-character prefix. What shape does its output
# `states` have? A tuple.

# %%
# ✎ Exercise 5.2: a shape
answer_2 = ...

# %%
if teach.exercise("05.2", answer_2):
    print(ll.evaluate(char_model(seq=7), {"tokens": tokens[:7]})["states"].shape)

# %% [markdown]
# **Exercise 5.3.** `states[4]` equals which element of the recurrence's stream `h`? Give its
# index `k`, so that `states[4]` is `h_k`.

# %%
# ✎ Exercise 5.3: an index into the stream h
answer_3 = ...

# %%
if teach.exercise("05.3", answer_3):
    prefix = ll.evaluate(char_model(seq=5), {"tokens": tokens[:5]})
    print("h_final of the 5-character model equals states[4]:",
          np.allclose(prefix["h_final"], fast["states"][4], atol=1e-6))
