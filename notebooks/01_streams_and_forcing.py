# %% [markdown]
# # 1 · Streams and forcing
#
# **You will be able to:** write out by hand the stream every tensor of a loop stands for;
# predict which elements of each stream an evaluation forces, and in which order; explain why an
# element no output needs is never computed, even when computing it would fail (in lazyloop's
# default reading, A10); read a loop as a scan. Words in bold are defined in the
# [glossary](README.md#glossary).
#
# In an imperative language a loop body runs, overwrites its variables, and runs again. TensorRT's
# loops are specified differently: there are no variables to overwrite. Every tensor *inside* a
# loop stands for the whole **stream** of values it takes, one element per trip,
#
# $$X = \langle X_0, X_1, X_2, \dots \rangle ,$$
#
# and an element is computed only when something asks for it (**forcing**), and then remembered.
# Boundary layers (iterators, recurrences, loop outputs, trip limits) are the operations that turn
# tensors into streams and streams back into tensors.
#
# This notebook builds one small loop, writes its streams out by hand, and then lets `lazyloop`
# show which elements it actually computed, in which order. Rules met here:
# `stream/invariant`, `stream/map`, `iterator/forward`, `iterator/reverse`, `recurrence/def`,
# `stream/memo`, `stream/order`, `laziness/dead`, `iterator/bounds` (spec: `spec/10-streams.md`,
# `spec/11-boundary-layers.md`, `spec/14-laziness.md`), and the ambiguities A10 and A11.

# %%
# %matplotlib inline
import collections
import numpy as np
import lazyloop as ll
from lazyloop import teach

SUM, PROD = ll.ElementWiseOperation.SUM, ll.ElementWiseOperation.PROD

def const(net, value, dtype=np.float32):
    """A constant tensor from a Python value."""
    a = np.array(value, dtype)
    return net.add_constant(a.shape, a).get_output(0)


# %% [markdown]
# ## A scaled running sum
#
# The network reads a matrix `x` row by row, multiplies each row by a scale `w`, and keeps a
# running total. It has two outputs: the final total, and every scaled row stacked.

# %%
def running_sum(count=4, rows=4, mark=("total", "scaled_rows")):
    net = ll.Network()                                    # the TensorRT profile
    x = net.add_input("x", ll.float32, (rows, 3))
    w = const(net, [0.5])                                 # defined outside the loop; rank 1,
                                                          # as TensorRT broadcasts equal ranks only
    loop = net.add_loop()
    loop.add_trip_limit(const(net, count, np.int32), ll.TripLimit.COUNT)

    row = loop.add_iterator(x, axis=0).get_output(0)      # <x[0], x[1], ...>
    row.name = "row"
    scaled = net.add_elementwise(row, w, PROD).get_output(0)
    scaled.name = "scaled"

    acc_layer = loop.add_recurrence(const(net, np.zeros(3)))
    acc = acc_layer.get_output(0)
    acc.name = "acc"
    acc_next = net.add_elementwise(acc, scaled, SUM).get_output(0)
    acc_next.name = "acc_next"
    acc_layer.set_input(1, acc_next)                     # the back edge

    total = loop.add_loop_output(acc, ll.LoopOutput.LAST_VALUE).get_output(0)
    total.name = "total"
    stacked = loop.add_loop_output(scaled, ll.LoopOutput.CONCATENATE, axis=0)
    stacked.set_input(1, const(net, count, np.int32))
    stacked.get_output(0).name = "scaled_rows"
    outputs = {"total": total, "scaled_rows": stacked.get_output(0)}
    for name in mark:
        net.mark_output(outputs[name])
    return net

net = running_sum()
teach.draw_network(net, title="running_sum(): one loop, two outputs");

# %% [markdown]
# How to read the diagram: the shaded box is the loop. Boxes with square corners and a thick
# border are its boundary layers; rounded boxes are ordinary layers. Wires run in the channels
# between the columns of boxes. Each input of a layer has an arrowhead of its own, top to
# bottom in the order of the wires' sources; a wire that branches is one value read by several
# layers, and two values' wires only ever cross, never join. Data enters the loop through the
# iterator (green) and the recurrence's first input, and leaves it only through the loop
# outputs (blue). The dashed red arrow labelled `next` is a back edge: the recurrence's second
# input, its *next value*, on a wire and a lane of its own along the bottom of the loop. A loop
# has one back edge per recurrence (this loop has one recurrence, `acc`), each starting at the
# layer that computes that recurrence's next value — here `acc_next`. The constant `[0.5]` sits
# outside the box, yet `prod` inside the loop reads it.
#
# ### The streams, by hand
#
# With `x = [[0,1,2],[3,4,5],[6,7,8],[9,10,11]]` and four trips:
#
# | tensor | rule | stream |
# |---|---|---|
# | `w` | `stream/invariant`: an outside value is the same on every trip | ⟨[0.5], [0.5], [0.5], …⟩ |
# | `row` | `iterator/forward`: one slice along `axis` per trip | ⟨[0,1,2], [3,4,5], [6,7,8], [9,10,11]⟩ |
# | `scaled` | `stream/map`: element *i* is `row_i * w_i` | ⟨[0,.5,1], [1.5,2,2.5], [3,3.5,4], [4.5,5,5.5]⟩ |
# | `acc` | `recurrence/def`: ⟨initial, acc_next₀, acc_next₁, …⟩ | ⟨[0,0,0], [0,.5,1], [1.5,2.5,3.5], …⟩ |
# | `acc_next` | `stream/map` | ⟨acc₀+scaled₀, acc₁+scaled₁, …⟩ |
#
# The outputs are `total = acc_n` (with `n = 4`) and `scaled_rows`, the stack of
# `scaled_0 … scaled_3`.

# %%
X = np.arange(12, dtype=np.float32).reshape(4, 3)
ev = ll.run(net, {"x": X})
print("total       =", ev.outputs["total"])
print("scaled_rows =\n", ev.outputs["scaled_rows"])
print("trip counts =", ev.trips)

# the same with numpy, independently
assert np.allclose(ev.outputs["total"], (0.5 * X).sum(axis=0))
assert np.allclose(ev.outputs["scaled_rows"], 0.5 * X)

# %% [markdown]
# ### Each combinator beside a plain-Python reference
#
# The boundary layers are small functions on sequences. Written eagerly, on Python lists (lazyloop
# computes the same elements, but only on demand):
#
# | lazyloop | rule | plain Python |
# |---|---|---|
# | `loop.add_iterator(x, axis)` | `iterator/forward` | `[x[i] for i in range(L)]` (along `axis`) |
# | `loop.add_iterator(x, axis, reverse=True)` | `iterator/reverse` | `[x[L-1-i] for i in range(L)]` |
# | `net.add_elementwise(a, b, op)` in a loop | `stream/map` | `[op(a[i], b[i]) for i …]` |
# | `r = loop.add_recurrence(init)`; `r.set_input(1, nxt)` | `recurrence/def` | `s = [init]; s.append(nxt_i)` per trip |
# | `loop.add_loop_output(s, LAST_VALUE)` | `output/last` | `s[n]` |
# | `loop.add_loop_output(v, CONCATENATE, axis)` | `output/concat` | `np.stack(v[:n], axis)` (then padding) |
# | `loop.add_loop_output(v, REVERSE, axis)` | `output/reverse` | `np.stack(v[:n][::-1], axis)` |

# %%
def iterator(x, axis=0, reverse=False):          # iterator/forward, iterator/reverse
    L = x.shape[axis]
    return [np.take(x, L - 1 - i if reverse else i, axis=axis) for i in range(L)]

def recurrence(initial, next_value, n):          # recurrence/def: <initial, next_0, next_1, ...>
    s = [initial]
    for i in range(n):
        s.append(next_value(s[i], i))
    return s

def last_value(s, n):                            # output/last: element n
    return s[n]

def concatenate(v, n, axis=0):                   # output/concat: elements 0 .. n-1, a new axis
    return np.stack(v[:n], axis=axis)

def reverse_stack(v, n, axis=0):                 # output/reverse: the same, newest first
    return np.stack(v[:n][::-1], axis=axis)

n = 4
row = iterator(X)
scaled = [r * np.float32(0.5) for r in row]      # stream/map
acc = recurrence(np.zeros(3, np.float32), lambda acc_i, i: acc_i + scaled[i], n)
print("total:      ", last_value(acc, n), "   lazyloop:", ev.outputs["total"])
print("scaled_rows:", concatenate(scaled, n)[1], "...   lazyloop:", ev.outputs["scaled_rows"][1], "...")
assert np.allclose(last_value(acc, n), ev.outputs["total"])
assert np.allclose(concatenate(scaled, n), ev.outputs["scaled_rows"])

# %% [markdown]
# ### An iterator, a recurrence and a CONCATENATE make a scan
#
# `running_sum` is a **scan**, the loop that functional languages build in (JAX calls it
# `lax.scan`): walk over `xs`, carry a value from step to step, and collect one output per
# step. `f(carry, x)` returns the next carry and the step's output:

# %%
def scan(f, carry, xs):
    """(final carry, the outputs stacked): for x in xs: carry, y = f(carry, x)."""
    ys = []
    for x in xs:
        carry, y = f(carry, x)
        ys.append(y)
    return carry, np.stack(ys)

def step(acc, row):
    scaled = row * np.float32(0.5)
    return acc + scaled, scaled

final, ys = scan(step, np.zeros(3, np.float32), X)
print("final carry:", final, "   lazyloop total:", ev.outputs["total"])
assert np.allclose(final, ev.outputs["total"]) and np.allclose(ys, ev.outputs["scaled_rows"])

# %% [markdown]
# Piece by piece: `xs` is the iterator (`iterator/forward`), here as long as the COUNT; the
# carry is the recurrence, `f`'s first result its next value (`recurrence/def`); the final
# carry is `LAST_VALUE` (`output/last`) and `ys` is `CONCATENATE` of `f`'s second result
# (`output/concat`). ONNX's `Scan` is this loop as one operator (notebook 6).
#
# One thing `scan` above allows and a TensorRT loop does not: a carry whose shape changes from
# step to step. Under the TensorRT profile a recurrence's next value must have the dtype and
# the shape of its initial value (`recurrence/def`), and the builder refuses any other at once.
# ONNX's `Loop` text constrains the shapes of its scan outputs only, and every ONNX runtime lets
# a carried value grow; lazyloop's ONNX frontend reads it so (ambiguity **A11**, default
# `allow`), and its relaxed profiles check each element only against the declared type
# (`structure/shapes`). A carry that doubles its length on each of two trips:

# %%
def doubling(profile, declared):
    net = ll.Network(profile=profile)
    s = net.add_input("s", ll.float32, declared)
    loop = net.add_loop()
    loop.add_trip_limit(const(net, 2, np.int32), ll.TripLimit.COUNT)
    r = loop.add_recurrence(s)
    twice = net.add_concatenation([r.get_output(0), r.get_output(0)]).get_output(0)
    r.set_input(1, twice)                                   # the next carry: [r, r]
    net.mark_output(loop.add_loop_output(r.get_output(0), ll.LoopOutput.LAST_VALUE).get_output(0))
    return net

try:
    doubling("tensorrt", (1,))
except ll.ShapeError as err:
    print("TensorRT profile:", err)
print("ONNX profile:    ", ll.evaluate(doubling("onnx", (None,)), {"s": np.array([1.0], np.float32)}))
teach.show_ambiguity("A11")

# %% [markdown]
# `ll.evaluate(net, feeds)` returns just the outputs; `ll.run` returns an `Evaluation` that also
# carries the `trace` of forced elements, the `defined` masks, the trip counts and the compiled
# `plan`. In the plan every tensor is one stream node, and its repr reads like the expression
# above:

# %%
teach.print_plan(ev)

# %% [markdown]
# ## Watching elements being forced
#
# Each entry of `ev.trace` is a `ForceEvent(loop, stream, index, activation)`: element `index` of
# `stream` was computed. `by` says which element's rule asked for it. A tensor outside every loop
# (`x`, the constants, the outputs) is one value, the same on every trip (`stream/invariant`);
# the table lists it by its name alone. `x` there is the whole matrix, not its row 0 — the rows
# are the iterator's elements `row[0]`, `row[1]`, ….

# %%
teach.print_trace(ev, limit=25)

# %% [markdown]
# The table is in **completion order**: an element is listed when its value has been computed,
# after everything it needed. The *demand* runs the other way: the output `total` asks for
# `acc_4`; by `recurrence/def`, `acc_4` is `acc_next_3`, which needs `acc_3` and `scaled_3`, and
# so on down to `acc_0`, the initial value — which is why `acc[0]` completes near the top and
# `total` near the bottom. The evaluator does not recurse down that chain: by `stream/order` the
# elements a recurrence depends on are computed first, in index order, iteratively — so a loop
# of a million trips needs no deep call stack. The same trace as a picture; each cell carries the
# number of its line in the table above:

# %%
teach.plot_trace(ev);

# %% [markdown]
# Things to notice:
#
# * `acc` has **five** forced elements, the others four. `LAST_VALUE` reads `acc_n` (`output/last`),
#   the value *after* the last trip; element 4 of `row`, `scaled` and `acc_next` is never asked
#   for, so it is never computed (the grey cells). There is no fifth row of `x` to read — and no
#   error, because nothing forced it.
# * `scaled` is read twice per trip (by `acc_next` and by the `CONCATENATE` output) but computed
#   once per trip: `stream/memo`. We can count:

# %%
counts = collections.Counter((e.stream, e.activation, e.index) for e in ev.trace)
print(len(counts), "elements computed; the most often computed one was computed",
      max(counts.values()), "time(s)")
assert max(counts.values()) == 1   # stream/memo: every element at most once

# %% [markdown]
# ## Nothing that is not needed is computed (`laziness/dead`)
#
# Mark only the stacked output and the recurrence has no reader left: its stream is never
# touched. Ask only for the total and the stacked copy is never built, but `scaled` is still
# needed because `acc_next` reads it.

# %%
only_rows = ll.run(running_sum(mark=("scaled_rows",)), {"x": X})
teach.plot_trace(only_rows, title="only scaled_rows is marked: acc and acc_next stay untouched");

# %% [markdown]
# ## Errors in elements nobody asks for (`iterator/bounds`, A10)
#
# Two sentences of TensorRT's guide meet here (seed `004`). Its formal semantics says that the
# elements of a loop's sequences "are evaluated lazily, meaning as needed"; its description of
# the iterator says that iterating beyond the tensor's bounds is invalid. Is a loop of six trips
# over a matrix of four rows invalid even when nothing needs rows 4 and 5? The guide does not
# say, and the ambiguity register keeps both answers as **A10**. lazyloop's default reading,
# `lazy`, follows the formal semantics: `iterator/bounds` makes *forcing* an element past the
# end an error, so a loop no output needs does no work and raises nothing, while one whose
# output needs row 4 raises. The other reading, `eager`, is what ONNX and OpenVINO runtimes do
# (they run every node of the body on every trip): there the loop fails whatever is marked.

# %%
too_long = running_sum(count=6, rows=4, mark=())     # nothing marked at all
print("lazy, nothing marked:  trace", ll.run(too_long, {"x": X}).trace)   # no work, no error

try:
    ll.run(running_sum(count=6, rows=4, mark=("total",)), {"x": X})
except ll.IteratorOutOfBounds as err:
    print("lazy, total marked:   ", type(err).__name__, ":", err)

try:
    ll.run(too_long, {"x": X}, readings={"A10": "eager"})
except ll.IteratorOutOfBounds as err:
    print("eager, nothing marked:", type(err).__name__)
teach.show_ambiguity("A10")


# %% [markdown]
# Every deliberate error is a `ll.LazyLoopError`; its message names the layer, the rule ID in
# brackets, and what to do.
#
# ## Iterating backwards and along other axes
#
# `add_iterator(x, axis, reverse)` subscripts along any axis; the element has one dimension less.
# With `reverse=True`, element *i* is `x[L-1-i]` along that axis, `L` being its extent
# (`iterator/reverse`; the API reference suggests another reading in terms of the trip count,
# which the ambiguity register keeps as A2).

# %%
def column_stack(reverse):
    net = ll.Network()
    x = net.add_input("x", ll.float32, (4, 3))
    loop = net.add_loop()
    three = const(net, 3, np.int32)
    loop.add_trip_limit(three, ll.TripLimit.COUNT)
    col = loop.add_iterator(x, axis=1, reverse=reverse).get_output(0)   # float32[4]
    out = loop.add_loop_output(col, ll.LoopOutput.CONCATENATE, axis=0)
    out.set_input(1, three)
    net.mark_output(out.get_output(0))
    return net, out.get_output(0).name

for reverse in (False, True):
    net_c, name = column_stack(reverse)
    print(f"reverse={reverse}:\n", ll.evaluate(net_c, {"x": X})[name])

# %% [markdown]
# ## Exercises: predict, then check
#
# Each ✎ cell ships as `answer = ...`. Work the answer out from the rules, put it in place of
# `...` and run the check cell below it: a wrong answer gets a hint naming the rule to re-read
# (never the expected value); a right one shows you what lazyloop did. The expected values are
# worked out without lazyloop, in `lazyloop/teach/exercises.py`.
#
# **Exercise 1.1.** With `count=3` and only `total` marked, which indices of the stream `acc` are
# forced? Answer with a set of integers.

# %%
# ✎ Exercise 1.1: a set of indices
answer_1 = ...

# %%
if teach.exercise("01.1", answer_1):
    ev_1 = ll.run(running_sum(count=3, mark=("total",)), {"x": X})
    print("lazyloop forced acc at", teach.forced(ev_1, "acc"))

# %% [markdown]
# **Exercise 1.2.** The cells above ran six trips over four rows. Now mark only
# `"scaled_rows"` and keep `rows=4`: for which trip counts among 3, 4, 5 and 6 does `ll.run`
# raise `IteratorOutOfBounds`? Answer with a dict `{3: bool, 4: bool, 5: bool, 6: bool}`.

# %%
# ✎ Exercise 1.2: {marking: raises?}
answer_2 = ...

# %%
if teach.exercise("01.2", answer_2):
    for count in (3, 4, 5, 6):
        try:
            ll.run(running_sum(count=count, rows=4, mark=("scaled_rows",)), {"x": X})
            print(f"count={count}: runs")
        except ll.IteratorOutOfBounds as err:
            print(f"count={count}: raises: {str(err)[:70]}…")

# %% [markdown]
# **Exercise 1.3.** In `column_stack(reverse=True)`, what is element 1 of the iterator's stream,
# for the `X` above? (The iterator runs over axis 1, whose extent is 3.) A list of four numbers.

# %%
# ✎ Exercise 1.3: a list of four numbers
answer_3 = ...

# %%
if teach.exercise("01.3", answer_3):
    net_c, name = column_stack(True)
    print("element 1, stacked as row 1 of the output:", ll.evaluate(net_c, {"x": X})[name][1])
