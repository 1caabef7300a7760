# %% [markdown]
# # 3 · Loop outputs: LAST_VALUE, CONCATENATE, REVERSE
#
# **You will be able to:** predict the value and the shape of every kind of loop output for any
# trip count, including zero; say which positions of a padded output are undefined and why a
# comparison must ignore them; tell a carried final value (defined after zero trips) from the
# last value of a body result (undefined after zero trips). Terms: see the
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
# up: those positions are **undefined**. They hold a fill value that is easy to spot (NaN for
# floats, the minimum for signed ints), and `ll.run` returns a `defined` mask that is `False` there.
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
fig, axes = __import__("matplotlib.pyplot").pyplot.subplots(1, 3, figsize=(11, 2.6))
for ax, (kind, axis) in zip(axes, [(CONCAT, 0), (CONCAT, 1), (REVERSE, 0)]):
    ev = ll.run(outputs(3, kind=kind, axis=axis), {"x": X})
    teach.plot_masked(ev.outputs["stacked"], ev.defined["stacked"], ax=ax,
                      title=f"{kind.name}, axis={axis}: shape {ev.outputs['stacked'].shape}")
fig.tight_layout()

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
# Integers have no NaN; their undefined positions hold the minimum value of the dtype, which is
# just as conspicuous if it leaks into arithmetic:

# %%
ev = ll.run(outputs(2, dtype=ll.int32), {"x": X.astype(np.int32)})
print(ev.outputs["stacked"])
print(teach.masked(ev.outputs["stacked"], ev.defined["stacked"]))

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
