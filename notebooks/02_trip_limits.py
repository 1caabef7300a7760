# %% [markdown]
# # 2 · Trip limits: COUNT, WHILE, both
#
# **You will be able to:** work out `n`, the number of trips, for any combination of COUNT and
# WHILE limits; say which elements of a WHILE condition are forced (n + 1 of them) and which are
# not; recognise the two kinds of "one trip too many" and fix them. Terms: see the
# [glossary](README.md#glossary).
#
# A loop's outputs are defined in terms of one number, **n**, the number of trips that run.
# `LAST_VALUE` reads element `n` of a recurrence, `CONCATENATE` stacks elements `0 … n-1`. The trip
# limits decide `n`:
#
# * `trip/count` — `COUNT(t)`: `n = t`, a 0-D int32/int64 value known before the loop starts.
# * `trip/while` — `WHILE(X)`: `n` is the **least** index with `X_n` false. `X_0, X_1, …, X_n` are
#   forced, in order — including `X_n`, the check that fails — and nothing after it.
# * `trip/both` — with both: for `j = 0, 1, …` stop at `j = count`, else force `X_j` and stop if it
#   is false. So `n = min(count, first false)`, and `X_count` is never forced.
#
# That last rule is lazyloop's reading, not the guide's. TensorRT's guide (seed `004`) allows at
# most one limit of each kind, so a loop may have one COUNT and one WHILE, but it defines `n`
# separately for the two: for a counted loop, the count; for a while loop, the least `n` with
# `X_n` false. It never says what `n` is for a loop with both. The ambiguity register keeps
# lazyloop's answer as **A40**: its default reading `count-first` is `n = min(count, first
# false)` with the count looked at first — the order ONNX's and OpenVINO's loop texts write,
# `i < M && cond` — so that a loop with a COUNT never reaches past it; the other reading,
# `condition-first`, gives the same `n` but also forces `X_count` (`spec/12-trip-limits.md`).
#
# This notebook answers two questions that trip people up: *how many times is the condition
# evaluated* (n + 1), and *why did my while loop run one time too many*. Spec:
# `spec/12-trip-limits.md`; also `structure/while-input`, `structure/limits` and ambiguities A4
# and A40.

# %%
# %matplotlib inline
import numpy as np
import lazyloop as ll
from lazyloop import teach

SUM, LESS, GREATER = (ll.ElementWiseOperation.SUM, ll.ElementWiseOperation.LESS,
                      ll.ElementWiseOperation.GREATER)

def const(net, value, dtype=np.int32):
    a = np.array(value, dtype)
    return net.add_constant(a.shape, a).get_output(0)


# %% [markdown]
# ## A counter
#
# `i` starts at 0 and goes up by one each trip; `keep_going = i < limit`. We can give it a COUNT
# limit, a WHILE limit on `keep_going`, or both. The output is `LAST_VALUE(i)`.

# %%
def counter(count=None, use_while=True, limit=3):
    net = ll.Network()
    loop = net.add_loop()
    i_layer = loop.add_recurrence(const(net, 0))
    i = i_layer.get_output(0)
    i.name = "i"
    i_next = net.add_elementwise(i, const(net, 1), SUM).get_output(0)
    i_next.name = "i_next"
    i_layer.set_input(1, i_next)
    if use_while:
        keep_going = net.add_elementwise(i, const(net, limit), LESS).get_output(0)
        keep_going.name = "keep_going"
        loop.add_trip_limit(keep_going, ll.TripLimit.WHILE)
    if count is not None:
        loop.add_trip_limit(const(net, count), ll.TripLimit.COUNT)
    last = loop.add_loop_output(i, ll.LoopOutput.LAST_VALUE).get_output(0)
    last.name = "i_final"
    net.mark_output(last)
    return net

teach.draw_network(counter(count=5), title="counter(count=5): both limits");

# %% [markdown]
# ## `trip/count`
#
# With `COUNT(2)` there is nothing to decide: `n = 2` is read from the constant before anything
# inside the loop is forced. `LAST_VALUE(i)` is `i_2 = 2`. (`ev.trips` maps each loop to a list of
# `(activation, n)` pairs, one per run of the loop; a loop at the top level runs once, in the
# activation `()`.)

# %%
ev = ll.run(counter(count=2, use_while=False), {})
print("i_final =", ev.outputs["i_final"], "  n =", ev.trips["loop0"])
teach.plot_trace(ev);

# %% [markdown]
# ## `trip/while`: the condition is checked n + 1 times
#
# Streams by hand for `counter()` (limit 3):
#
# | i | 0 | 1 | 2 | 3 | 4 | … |
# |---|---|---|---|---|---|---|
# | `i` | 0 | 1 | 2 | 3 | 4 | |
# | `keep_going` | T | T | T | **F** | F | |
#
# The least index with `keep_going` false is 3, so `n = 3`. To find it, the evaluator forces
# `keep_going_0 … keep_going_3` — four checks for three trips, exactly like a `while` loop in C or
# Python checks its condition once more than it runs its body. `keep_going_4` is never forced.

# %%
ev = ll.run(counter(), {})
print("i_final =", ev.outputs["i_final"], "  n =", ev.trips["loop0"])
teach.plot_trace(ev);

# %% [markdown]
# The same count of checks in plain Python:

# %%
checks = []
def condition(i):
    checks.append(i)
    return i < 3

i = 0
while condition(i):
    i += 1
print("condition evaluated", len(checks), "times, for", i, "trips")
assert teach.forced(ev, "keep_going") == checks      # the same indices, in the same order


# %% [markdown]
# ### What does `X_n` read?
#
# The last check, `keep_going_3`, reads `i_3`, and `i_3 = i_next_2` was computed on trip 2, the
# last trip that ran. That is no accident. Under the TensorRT profile `structure/while-input`
# requires a WHILE input to be computed from recurrences (no iterators, no loop outputs), so
# element `n` of the condition only ever needs values that trip `n-1` produced. The check for the
# trip that does not happen never touches that trip's data.
#
# Lowered ONNX programs (profile `"onnx"`) are not held to that rule, and there you can see why it
# exists. Here the condition reads an iterator directly: "sum `x` while its elements are positive".

# %%
def sum_while_positive(profile, count=None):
    net = ll.Network(profile=profile)
    x = net.add_input("x", ll.float32, (4,))
    loop = net.add_loop()
    v = loop.add_iterator(x).get_output(0)
    v.name = "v"
    positive = net.add_elementwise(v, const(net, 0.0, np.float32), GREATER).get_output(0)
    positive.name = "positive"
    loop.add_trip_limit(positive, ll.TripLimit.WHILE)
    if count is not None:
        loop.add_trip_limit(const(net, count), ll.TripLimit.COUNT)
    acc = loop.add_recurrence(const(net, 0.0, np.float32))
    acc.get_output(0).name = "acc"
    acc.set_input(1, net.add_elementwise(acc.get_output(0), v, SUM).get_output(0))
    total = loop.add_loop_output(acc.get_output(0), ll.LoopOutput.LAST_VALUE).get_output(0)
    total.name = "total"
    net.mark_output(total)
    return net

try:
    sum_while_positive("tensorrt")
    ll.run(sum_while_positive("tensorrt"), {"x": np.ones(4, np.float32)})
except ll.StructureError as err:
    print("TensorRT profile:", err)

# %%
ev = ll.run(sum_while_positive("onnx"), {"x": np.array([1, 2, -1, 3], np.float32)})
print("x = [1, 2, -1, 3]: total =", ev.outputs["total"], " n =", ev.trips["loop0"][0][1])

try:
    ll.run(sum_while_positive("onnx"), {"x": np.array([1, 2, 3, 4], np.float32)})
except ll.IteratorOutOfBounds as err:
    print("x = [1, 2, 3, 4]:", err)

# %% [markdown]
# With `[1, 2, 3, 4]` every element is positive, so the loop only learns that it must stop by
# checking `positive_4`, which needs `v_4 = x[4]` — one past the end. This is the "one time too
# many": not a trip of the body, but the final check reaching into data that does not exist.
#
# ## `trip/both`: the count stops the loop before the check
#
# Adding `COUNT(4)` fixes it. When `j` reaches the count, the loop stops **without** forcing the
# condition at index 4:

# %%
ev = ll.run(sum_while_positive("onnx", count=4), {"x": np.array([1, 2, 3, 4], np.float32)})
print("total =", ev.outputs["total"], "  forced positive_j for j in", teach.forced(ev, "positive"))
teach.plot_trace(ev);

# %% [markdown]
# Under A40's other reading, `condition-first`, the same loop reads the condition at index 4
# too, before it looks at the count, and that check needs `x[4]`:

# %%
try:
    ll.run(sum_while_positive("onnx", count=4), {"x": np.array([1, 2, 3, 4], np.float32)},
           readings={"A40": "condition-first"})
except ll.IteratorOutOfBounds as err:
    print("A40 = condition-first:", err)
teach.show_ambiguity("A40")

# %% [markdown]
# Back to the counter. Whichever limit is reached first decides `n`:

# %%
for count in (2, 5, 0):
    ev = ll.run(counter(count=count), {})
    print(f"COUNT={count}, WHILE i<3: n = {ev.trips['loop0'][0][1]}, i_final = {ev.outputs['i_final']},"
          f" keep_going forced at {teach.forced(ev, 'keep_going')}")

# %% [markdown]
# ### Try it
#
# Move the sliders: `count` (`None`: no COUNT limit), the WHILE limit (`keep_going = i < limit`)
# and the trace step, to watch the elements being forced one by one. (The sliders need a live
# kernel with ipywidgets; a static view of this notebook shows the grid for a few settings.)

# %%
teach.explore(lambda count, limit: ll.run(counter(count=count, limit=limit), {}),
              {"count": [None, 0, 1, 2, 3, 4, 5], "limit": [3, 0, 1, 2, 4, 5]},
              streams=["i", "i_next", "keep_going"],
              static=[{"count": None, "limit": 3}, {"count": 2, "limit": 3},
                      {"count": 5, "limit": 1}, {"count": 0, "limit": 3}]);


# %% [markdown]
# ## The other "one too many": a condition carried from the body
#
# ONNX's `Loop` (and OpenVINO's `Loop-5`) compute the condition for the *next* trip inside the body.
# In stream terms the condition is a recurrence: `c = Recurrence(cond_in, cond_out)`, and the loop
# runs `WHILE(c)`. If the body computes `cond_out` from the value *before* the update, the loop
# runs once more than intended — the classic off-by-one. Compare the two choices with the
# TensorRT builder:

# %%
def carried_condition(from_updated, limit=3):
    net = ll.Network()
    loop = net.add_loop()
    i_layer = loop.add_recurrence(const(net, 0))
    i = i_layer.get_output(0)
    i.name = "i"
    i_next = net.add_elementwise(i, const(net, 1), SUM).get_output(0)
    i_next.name = "i_next"
    i_layer.set_input(1, i_next)
    c_layer = loop.add_recurrence(const(net, True, np.bool_))       # the first check: true
    c_layer.get_output(0).name = "c"
    tested = i_next if from_updated else i
    cond_out = net.add_elementwise(tested, const(net, limit), LESS).get_output(0)
    cond_out.name = "cond_out"
    c_layer.set_input(1, cond_out)
    loop.add_trip_limit(c_layer.get_output(0), ll.TripLimit.WHILE)
    last = loop.add_loop_output(i, ll.LoopOutput.LAST_VALUE).get_output(0)
    last.name = "i_final"
    net.mark_output(last)
    return net

for from_updated in (True, False):
    ev = ll.run(carried_condition(from_updated), {})
    print(f"cond_out = {'i_next' if from_updated else 'i'} < 3:  n = {ev.trips['loop0'][0][1]},"
          f"  i_final = {ev.outputs['i_final']},  c forced at {teach.forced(ev, 'c')}")

# %% [markdown]
# With `cond_out = i_next < 3` the streams are `c = ⟨T, T, T, F⟩` and `n = 3`; with
# `cond_out = i < 3` they are `c = ⟨T, T, T, T, F⟩` and `n = 4`: the condition lags one trip
# behind the value it tests.
#
# ## Fuel and negative counts
#
# A WHILE that never turns false would run forever. Every evaluation takes `max_trips` (default
# 10⁷ trips per loop run); past it, `FuelExhausted` names the loop. What a negative COUNT means
# is not settled by the TensorRT guide: it is ambiguity **A4** of the register, whose default
# readings are a runtime error under the TensorRT profile, zero trips for ONNX and "no count
# limit" for OpenVINO. The error below is lazyloop's default reading, not the guide's rule.

# %%
try:
    ll.run(counter(limit=10**9), {}, max_trips=1000)
except ll.FuelExhausted as err:
    print(err)

try:
    ll.run(counter(count=-1, use_while=False), {})
except ll.NegativeTripCount as err:
    print(err)

print(ll.AMBIGUITIES["A4"].readings)

# %% [markdown]
# ## Exercises: predict, then check
#
# Each ✎ cell ships as `answer = ...`: replace `...` with your prediction and run the check cell.
# A wrong answer gets a hint naming the rule; a right one shows what lazyloop did.
#
# **Exercise 2.1.** A loop starts with `x = 1`, multiplies `x` by 3 each trip, and has the single
# limit `WHILE(x < 100)`. Predict `(n, LAST_VALUE(x), how many elements of the condition are
# forced)`.

# %%
# ✎ Exercise 2.1: (n, last value, number of condition elements forced)
answer_1 = ...


# %%
def tripling(limit=100):
    net = ll.Network()
    loop = net.add_loop()
    x_layer = loop.add_recurrence(const(net, 1))
    x = x_layer.get_output(0)
    x.name = "x"
    x_layer.set_input(1, net.add_elementwise(x, const(net, 3), ll.ElementWiseOperation.PROD)
                      .get_output(0))
    small = net.add_elementwise(x, const(net, limit), LESS).get_output(0)
    small.name = "small"
    loop.add_trip_limit(small, ll.TripLimit.WHILE)
    last = loop.add_loop_output(x, ll.LoopOutput.LAST_VALUE).get_output(0)
    last.name = "x_final"
    net.mark_output(last)
    return net

if teach.exercise("02.1", answer_1):
    ev = ll.run(tripling(), {})
    print("n =", ev.trips["loop0"][0][1], " x_final =", ev.outputs["x_final"],
          " small forced at", teach.forced(ev, "small"))

# %% [markdown]
# **Exercise 2.2.** `counter(count=4, limit=6)` has both limits (COUNT 4, WHILE `i < 6`). Under
# the default reading of A40, at which indices is `keep_going` forced? A list of indices, in
# order.

# %%
# ✎ Exercise 2.2: a list of indices
answer_2 = ...

# %%
if teach.exercise("02.2", answer_2):
    print("keep_going forced at", teach.forced(ll.run(counter(count=4, limit=6), {}),
                                               "keep_going"))

# %% [markdown]
# **Exercise 2.3.** `carried_condition(from_updated=False, limit=5)`: the condition for the next
# trip is computed from `i` before its update. How many trips run?

# %%
# ✎ Exercise 2.3: n
answer_3 = ...

# %%
if teach.exercise("02.3", answer_3):
    ev = ll.run(carried_condition(False, limit=5), {})
    print("n =", ev.trips["loop0"][0][1], "  c forced at", teach.forced(ev, "c"))
