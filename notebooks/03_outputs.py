# %% [markdown]
# # 3 · Loop outputs: LAST_VALUE, CONCATENATE, REVERSE
#
# **You will be able to:** predict the value and the shape of every kind of loop output for any
# trip count, including zero; say which positions of a padded output are undefined and why a
# comparison must ignore them; tell a carried final value (defined after zero trips) from the
# last value of a body result (undefined after zero trips); write a whole loop — its limits and
# its three kinds of output — as fifteen lines of plain Python. Terms: see the
# [glossary](README.md#glossary).
#
# Streams live inside the loop; a loop-output layer is the only way to get a tensor out
# (`structure/exit`). There are three kinds, and each is defined in terms of `n`, the trip count:
#
# * `output/last` — `LAST_VALUE(X) = X_n`, where `X` must be a recurrence of the loop
#   (`structure/last-value`). After zero trips that is the recurrence's initial value.
# * `output/concat` — `CONCATENATE(X, axis, Y)`: `X_0 … X_{n-1}` stacked along a **new** axis `axis`
#   (the output has one dimension more than `X`), padded at the end to length `Y`. `Y < n` is a
#   runtime error; `Y` is a build-time constant from outside the loop (`structure/length`).
# * `output/reverse` — `REVERSE`: the same, newest element first.
#
# The padding "contains arbitrary values", says TensorRT's guide. lazyloop does not make a number
# up: those positions are **undefined**. They hold a fill value that is easy to spot (spec/13's
# fill table: NaN for floats, the minimum for signed integers, the maximum for unsigned ones,
# `True` for bool), and `ll.run` returns a `defined` mask that is `False` there.
# Spec: `spec/13-outputs.md`; ambiguity A1.

# %%
# %matplotlib inline
import numpy as np
import lazyloop as ll
from lazyloop import teach

SUM = ll.ElementWiseOperation.SUM
LAST, CONCAT, REVERSE = ll.LoopOutput.LAST_VALUE, ll.LoopOutput.CONCATENATE, ll.LoopOutput.REVERSE

def const(net, value, dtype=np.int32):
    a = np.array(value, dtype)
    return net.add_constant(a.shape, a).get_output(0)


# %% [markdown]
# ## One loop, every kind of output
#
# `v` iterates over the rows of `x` (4 × 3); `acc` sums them. `last` is `LAST_VALUE(acc)`, and
# `stacked` collects `v` with the kind, axis and length we choose.

# %%
def outputs(count, kind=CONCAT, axis=0, length=5, profile="tensorrt", last_of="acc",
            dtype=ll.float32):
    net = ll.Network(profile=profile)
    x = net.add_input("x", dtype, (4, 3))
    loop = net.add_loop()
    loop.add_trip_limit(const(net, count), ll.TripLimit.COUNT)
    v = loop.add_iterator(x).get_output(0)
    v.name = "v"
    acc_layer = loop.add_recurrence(const(net, np.zeros(3), dtype))
    acc = acc_layer.get_output(0)
    acc.name = "acc"
    acc_layer.set_input(1, net.add_elementwise(acc, v, SUM).get_output(0))
    last = loop.add_loop_output({"acc": acc, "v": v}[last_of], LAST).get_output(0)
    last.name = "last"
    stacked = loop.add_loop_output(v, kind, axis)
    if length is not None:
        stacked.set_input(1, const(net, length))
    stacked.get_output(0).name = "stacked"
    net.mark_output(last)
    net.mark_output(stacked.get_output(0))
    return net

X = np.arange(1, 13, dtype=np.float32).reshape(4, 3)
teach.draw_network(outputs(3), title="outputs(3): LAST_VALUE(acc) and CONCATENATE(v, length 5)");

# %% [markdown]
# ## `CONCATENATE` with padding
#
# Three trips, length 5. Rows 0–2 are `v_0, v_1, v_2`; rows 3 and 4 are padding, undefined.
# `teach.masked` prints undefined positions as `?`:

# %%
ev = ll.run(outputs(3), {"x": X})
print("last =", ev.outputs["last"], "  (acc_3 = x[0] + x[1] + x[2])")
print("stacked, raw values:\n", ev.outputs["stacked"])
print("defined mask:\n", ev.defined["stacked"])
print("stacked, as lazyloop means it:\n", teach.masked(ev.outputs["stacked"], ev.defined["stacked"]))

# %% [markdown]
# `ll.evaluate` returns only the raw values (with their NaNs); comparisons between backends
# ignore undefined positions, because any value there is as correct as any other.
#
# ## Axes: the new dimension goes where you say
#
# `axis` says where the new dimension (of length `Y`) is inserted. TensorRT's guide shows two trips
# yielding `{a, b, c}` and `{d, e, f}`: with `axis=0` the result is `[[a, b, c], [d, e, f]]`, with
# `axis=1` it is `[[a, d], [b, e], [c, f]]`.

# %%
import matplotlib.pyplot as plt

fig, axes = plt.subplots(1, 3, figsize=(11, 3.0))
trips = {(CONCAT, 0): ("position in the element", "row i: trip i (new axis 0)"),
         (CONCAT, 1): ("column i: trip i (new axis 1)", "position in the element"),
         (REVERSE, 0): ("position in the element", "row i: trip n-1-i (new axis 0)")}
for ax, (kind, axis) in zip(axes, trips):
    ev = ll.run(outputs(3, kind=kind, axis=axis), {"x": X})
    xlabel, ylabel = trips[kind, axis]
    teach.plot_masked(ev.outputs["stacked"], ev.defined["stacked"], ax=ax, xlabel=xlabel,
                      ylabel=ylabel,
                      title=f"{kind.name}, axis={axis}: shape {ev.outputs['stacked'].shape}")
fig.tight_layout()
teach.undefined_legend(fig, bbox_to_anchor=(0.01, 0.0));

# %% [markdown]
# ## REVERSE and its padding (ambiguity A1)
#
# `REVERSE` is described only as "similar to CONCATENATE, but reversed". With padding that leaves
# a choice: reverse the values and then pad (`padding-after`, the default), or reverse the whole
# padded result (`reverse-all`). The ambiguity register records both; pick one with `readings`.

# %%
print(ll.AMBIGUITIES["A1"].question)
for reading in ("padding-after", "reverse-all"):
    ev = ll.run(outputs(3, kind=REVERSE), {"x": X}, readings={"A1": reading})
    print(f"\nA1 = {reading}:\n{teach.masked(ev.outputs['stacked'], ev.defined['stacked'])}")

# %% [markdown]
# ## Too short, and zero trips
#
# A length smaller than `n` is a runtime error (it can only be detected once `n` is known).
# With zero trips, `LAST_VALUE` gives the recurrence's initial value and a padded output is all
# padding:

# %%
try:
    ll.run(outputs(3, length=2), {"x": X})
except ll.LengthTooShort as err:
    print(err)

ev = ll.run(outputs(0), {"x": X})
print("\nzero trips: last =", ev.outputs["last"])
print(teach.masked(ev.outputs["stacked"], ev.defined["stacked"]))

# %% [markdown]
# Integers have no NaN. spec/13's fill table (`spec/13-outputs.md`, "Fill values") gives signed
# integers the minimum of their dtype, unsigned integers the maximum and `bool` the value
# `True`: values as conspicuous as a NaN if they leak into arithmetic. Two of them below (the
# TensorRT profile takes no 8-bit loop values, A6, so the `uint8` loop runs in the relaxed
# `"onnx"` profile), and the fill of each kind of dtype as `lazyloop/core/undefined.py` chooses
# it:

# %%
from lazyloop.core.undefined import fill_value

for dtype, profile in ((np.int32, "tensorrt"), (np.uint8, "onnx")):
    ev = ll.run(outputs(2, length=3, dtype=dtype, profile=profile), {"x": X.astype(dtype)})
    print(f"{np.dtype(dtype).name}: {ev.outputs['stacked'].tolist()}")
    print(teach.masked(ev.outputs["stacked"], ev.defined["stacked"]))
print({np.dtype(d).name: fill_value(d) for d in (np.float32, np.int32, np.int8, np.uint8, np.bool_)})

# %% [markdown]
# ## LAST_VALUE of something that is not a recurrence
#
# Under the TensorRT profile this is refused before anything runs (`structure/last-value`):

# %%
try:
    ll.run(outputs(3, last_of="v"), {"x": X})
except ll.StructureError as err:
    print(err)

# %% [markdown]
# ONNX's final values are not of this kind: an ONNX `Loop` returns its **carried** values, which
# are recurrences, so its final values are `LAST_VALUE` of a recurrence as above — after zero
# trips, the initial value, always defined (`onnx/loop`). The kind that needs more is
# OpenVINO's: a `Loop-5` or `TensorIterator` may return the value of a body result that has no
# back edge, "by the last iteration" (`openvino/loop5`). Such programs are lowered under a
# relaxed profile, where `LAST_VALUE(v)` means **the value of the last trip that ran**, `v_{n-1}`
# — carried by a hidden recurrence whose start is undefined. It is *not* `v_n`: trip `n` never
# runs. After zero trips there is no last trip, so that value is undefined (ambiguity A3, whose
# other reading is to refuse). The relaxed profiles also let the length go unset, meaning
# "exactly n":

# %%
for count in (3, 0):
    ev = ll.run(outputs(count, profile="onnx", length=None, last_of="v"), {"x": X})
    print(f"count={count}: last = {teach.masked(ev.outputs['last'], ev.defined['last'])},"
          f" stacked shape {ev.outputs['stacked'].shape}")
teach.print_plan(ev)

# %% [markdown]
# The plan shows the hidden pieces: `last_trip(v) = Recurrence(undefined(v), v)` and
# `last = LastValue(last_trip(v))`, i.e. `⟨?, v_0, v_1, …⟩` read at `n`.

# %% [markdown]
# ## The whole loop in plain Python
#
# Everything so far fits in one function of fifteen lines: the trip limits of notebook 2 decide
# `n` (the count looked at first, A40's default reading), the recurrences step from their
# initial values, each trip's values are kept, and the three kinds of output read them.
# `keep_going(state)` is the WHILE input, computed from the recurrences
# (`structure/while-input`); undefined padding is NaN here, as in lazyloop's float outputs.

# %%
def reference_loop(state, body, count=None, keep_going=None, outputs=()):
    """A loop, eagerly: `state` holds the recurrences' initial values; `body(state, j)` returns
    the next state and trip j's values. `outputs`: (name, kind, key, length, element shape)."""
    n, trips = 0, []
    while (count is None or n < count) and (keep_going is None or keep_going(state)):
        state, values = body(state, n)                         # recurrence/def, stream/map
        trips.append(values)
        n += 1                                                 # trip/count, trip/while, trip/both
    result = {}
    for name, kind, key, length, shape in outputs:
        if kind == "LAST_VALUE":
            result[name] = state[key]                          # output/last: element n
            continue
        assert length >= n, "a runtime error: the length is less than n"       # structure/length
        rows = [t[key] for t in (trips[::-1] if kind == "REVERSE" else trips)]  # output/reverse
        result[name] = np.stack(rows + [np.full(shape, np.nan)] * (length - n))  # output/concat
    return n, result


# %% [markdown]
# The same loop with lazyloop: `v` iterates over the rows of `x`, `acc` sums them, `t` sums
# their elements, and the loop may have a COUNT, a WHILE `t < bound`, or both.

# %%
def whole_loop(count=None, bound=None, length=4):
    net = ll.Network()
    x = net.add_input("x", ll.float32, (4, 3))
    loop = net.add_loop()
    v = loop.add_iterator(x).get_output(0)
    acc = loop.add_recurrence(const(net, np.zeros(3), np.float32))
    acc.set_input(1, net.add_elementwise(acc.get_output(0), v, SUM).get_output(0))
    t = loop.add_recurrence(const(net, 0.0, np.float32))
    row_sum = net.add_reduce(v, ll.ReduceOperation.SUM, 1, False).get_output(0)
    t.set_input(1, net.add_elementwise(t.get_output(0), row_sum, SUM).get_output(0))
    if count is not None:
        loop.add_trip_limit(const(net, count), ll.TripLimit.COUNT)
    if bound is not None:
        below = net.add_elementwise(t.get_output(0), const(net, bound, np.float32),
                                    ll.ElementWiseOperation.LESS).get_output(0)
        loop.add_trip_limit(below, ll.TripLimit.WHILE)
    outs = {"last": loop.add_loop_output(acc.get_output(0), LAST)}
    for name, kind in (("stacked", CONCAT), ("reversed", REVERSE)):
        outs[name] = loop.add_loop_output(v, kind, 0)
        outs[name].set_input(1, const(net, length))
    for name, layer in outs.items():
        layer.get_output(0).name = name
        net.mark_output(layer.get_output(0))
    return net

def body(state, j):
    v = X[j]
    return {"acc": state["acc"] + v, "t": state["t"] + v.sum()}, {"v": v}

shapes = [("last", "LAST_VALUE", "acc", None, None), ("stacked", "CONCATENATE", "v", 4, (3,)),
          ("reversed", "REVERSE", "v", 4, (3,))]
for count, bound in ((3, None), (None, 20.0), (3, 20.0), (1, 20.0), (0, None)):
    n, expected = reference_loop({"acc": np.zeros(3, np.float32), "t": np.float32(0)}, body,
                                 count, None if bound is None else (lambda s: s["t"] < bound),
                                 shapes)
    ev = ll.run(whole_loop(count, bound), {"x": X})
    for name in expected:
        np.testing.assert_array_equal(ev.outputs[name], expected[name])   # NaN == NaN here
    limits = " and ".join(([f"COUNT {count}"] if count is not None else []) +
                          ([f"WHILE t < {bound:g}"] if bound is not None else []))
    reversed_ = teach.masked(ev.outputs["reversed"], ev.defined["reversed"]).replace("\n", "")
    print(f"{limits:<24} n = {n} (lazyloop: {ev.trips['loop0'][0][1]}), reversed = {reversed_}")

# %% [markdown]
# The row sums of `x` are 6, 15, 24 and 33, so `t = ⟨0, 6, 21, …⟩` and `t < 20` first fails at
# index 2: `n = 2` with the WHILE alone, and with `COUNT = 3` too; `COUNT = 1` stops first.
# `reference_loop` differs from lazyloop in *how* it computes, not in *what*: it runs every
# trip's body eagerly and keeps every value, while lazyloop forces only the elements an output
# asks for (notebook 1). The values agree, and so do the errors whenever the eager loop meets
# one on a trip lazyloop also forces (ambiguity A10).
#
# ## Exercises: predict, then check
#
# Each ✎ cell ships as `answer = ...`: replace `...` with your prediction and run the check cell.
# A wrong answer gets a hint naming the rule; a right one shows what lazyloop did.
#
# **Exercise 3.1.** `outputs(2, axis=1, length=4)`: what is `stacked`? Write it as an array,
# with `np.nan` at the undefined positions.

# %%
# ✎ Exercise 3.1: a 3 × 4 array
answer_1 = ...

# %%
if teach.exercise("03.1", answer_1):
    ev = ll.run(outputs(2, axis=1, length=4), {"x": X})
    print(teach.masked(ev.outputs["stacked"], ev.defined["stacked"]))

# %% [markdown]
# **Exercise 3.2.** `outputs(2, kind=REVERSE, length=4)` under the default reading of A1: which
# positions of `stacked` are defined? A 4 × 3 boolean array.

# %%
# ✎ Exercise 3.2: a 4 × 3 boolean array
answer_2 = ...

# %%
if teach.exercise("03.2", answer_2):
    print(ll.run(outputs(2, kind=REVERSE, length=4), {"x": X}).defined["stacked"])

# %% [markdown]
# **Exercise 3.3.** In the relaxed (ONNX) profile with `count=2`, `last` reads the body result
# `v`. What does lazyloop give, and what would `v_n` have been? A pair of lists of three numbers.

# %%
# ✎ Exercise 3.3: (the value lazyloop gives, the value v_n would give)
answer_3 = ...

# %%
if teach.exercise("03.3", answer_3):
    ev = ll.run(outputs(2, profile="onnx", length=None, last_of="v"), {"x": X})
    print("last =", ev.outputs["last"])
