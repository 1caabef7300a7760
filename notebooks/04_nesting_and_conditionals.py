# %% [markdown]
# # 4 · Nesting and conditionals
#
# **You will be able to:** tell from a network's data flow which loop is nested in which, and
# count the activations and forced elements of an inner loop; recognise the tangled networks
# that are rejected; predict which branch elements an if-conditional forces, trip by trip; say
# where the lazy and the eager readings of A10 part. Terms: see the
# [glossary](README.md#glossary).
#
# Nobody declares that one loop is inside another. TensorRT **infers** nesting from data flow:
# if loop B uses a value defined inside loop A, B is nested in A, and runs once per trip of A.
# Each of those runs is an **activation** of B, with its own streams, its own `n` and its own
# memo. Networks where the inference gives no clean answer — A uses B's values *and* B uses A's —
# are rejected.
#
# Conditionals inside a loop are streams too: element *i* of an if-output is element *i* of the
# branch the condition picks, and only that branch's element is forced.
#
# Rules: `structure/nesting`, `structure/exit`, `stream/invariant`, `laziness/dead` (spec:
# `spec/16-nesting.md`, `spec/17-conditionals.md`), ambiguity A10.

# %%
# %matplotlib inline
import numpy as np
import lazyloop as ll
from lazyloop import teach

E = ll.ElementWiseOperation

def const(net, value, dtype=np.int32):
    a = np.array(value, dtype)
    return net.add_constant(a.shape, a).get_output(0)


# %% [markdown]
# ## Inferred nesting: row sums
#
# An outer loop iterates over the rows of `m`; an inner loop iterates over the elements of the
# current `row`. The inner iterator reads `row`, a stream of the outer loop, so the inner loop is
# nested in the outer one. The running sum `acc` starts from a constant, yet it belongs to both
# loops: every activation of the inner loop starts its own `acc` from zero.

# %%
def row_sums(rows=3, cols=4):
    net = ll.Network()
    m = net.add_input("m", ll.float32, (rows, cols))
    outer = net.add_loop()
    outer.add_trip_limit(const(net, rows), ll.TripLimit.COUNT)
    row = outer.add_iterator(m).get_output(0)
    row.name = "row"

    inner = net.add_loop()
    inner.add_trip_limit(const(net, cols), ll.TripLimit.COUNT)
    v = inner.add_iterator(row).get_output(0)
    v.name = "v"
    acc = inner.add_recurrence(const(net, 0.0, np.float32))
    acc.get_output(0).name = "acc"
    acc_next = net.add_elementwise(acc.get_output(0), v, E.SUM).get_output(0)
    acc_next.name = "acc_next"
    acc.set_input(1, acc_next)
    row_sum = inner.add_loop_output(acc.get_output(0), ll.LoopOutput.LAST_VALUE).get_output(0)
    row_sum.name = "row_sum"

    sums = outer.add_loop_output(row_sum, ll.LoopOutput.CONCATENATE)
    sums.set_input(1, const(net, rows))
    sums.get_output(0).name = "sums"
    net.mark_output(sums.get_output(0))
    return net

net = row_sums()
teach.draw_network(net, title="row_sums(): loop1 is nested in loop0 because its iterator reads row");

# %%
M = np.arange(12, dtype=np.float32).reshape(3, 4)
ev = ll.run(net, {"m": M})
print("sums =", ev.outputs["sums"], "  numpy:", M.sum(axis=1))
print("loops:", list(ev.plan.loops.values()))
print("trips:", ev.trips)

# %% [markdown]
# `ev.trips` has one entry for `loop0` (activation `()`, n = 3) and three for `loop1`, one per trip
# of `loop0`: activations `(0,)`, `(1,)`, `(2,)`. The trace shows each activation's streams
# separately; `row_sum`, the inner loop's output, is a stream of the outer loop.

# %%
teach.plot_trace(ev);


# %% [markdown]
# ## Built inside, but not nested
#
# Nesting follows data, not the order of builder calls. Here a loop computing `2³` is added
# *after* the outer loop, and its result is used inside the outer loop — but it reads only
# constants, so it is a top-level loop. It runs once; inside the outer loop its value is an
# invariant, ⟨8, 8, …⟩ (`stream/invariant`).

# %%
def scaled_rows():
    net = ll.Network()
    m = net.add_input("m", ll.float32, (2, 3))
    outer = net.add_loop()
    two = const(net, 2)
    outer.add_trip_limit(two, ll.TripLimit.COUNT)
    row = outer.add_iterator(m).get_output(0)
    row.name = "row"

    power = net.add_loop()
    power.add_trip_limit(const(net, 3), ll.TripLimit.COUNT)
    p = power.add_recurrence(const(net, [1.0], np.float32))
    p.get_output(0).name = "p"
    p.set_input(1, net.add_elementwise(p.get_output(0), const(net, [2.0], np.float32),
                                       E.PROD).get_output(0))
    eight = power.add_loop_output(p.get_output(0), ll.LoopOutput.LAST_VALUE).get_output(0)
    eight.name = "eight"

    scaled = net.add_elementwise(row, eight, E.PROD).get_output(0)
    scaled.name = "scaled"
    out = outer.add_loop_output(scaled, ll.LoopOutput.CONCATENATE)
    out.set_input(1, two)
    out.get_output(0).name = "out"
    net.mark_output(out.get_output(0))
    return net

ev = ll.run(scaled_rows(), {"m": M[:2, :3]})
print(ev.outputs["out"])
print(list(ev.plan.loops.values()))
print("activations of loop1:", [a for a, _ in ev.trips["loop1"]])


# %% [markdown]
# ## Rejected: loops that are not cleanly nested
#
# Two loops, each adding the other's recurrence to its own. `loop0` reads `rb`, inside `loop1`, so
# `loop0` would be nested in `loop1`; `loop1` reads `ra`, so `loop1` would be nested in `loop0`.
# There is no answer, and the network is rejected before anything is forced. The drawing shows
# the two `sum` layers belonging to neither box: each is inside both loops at once.

# %%
def tangled():
    net = ll.Network()
    zero, two = const(net, 0.0, np.float32), const(net, 2)
    a, b = net.add_loop(), net.add_loop()
    a.add_trip_limit(two, ll.TripLimit.COUNT)
    b.add_trip_limit(two, ll.TripLimit.COUNT)
    ra, rb = a.add_recurrence(zero), b.add_recurrence(zero)
    ra.get_output(0).name, rb.get_output(0).name = "ra", "rb"
    ra.set_input(1, net.add_elementwise(ra.get_output(0), rb.get_output(0), E.SUM).get_output(0))
    rb.set_input(1, net.add_elementwise(rb.get_output(0), ra.get_output(0), E.SUM).get_output(0))
    net.mark_output(a.add_loop_output(ra.get_output(0), ll.LoopOutput.LAST_VALUE).get_output(0))
    return net

try:
    ll.run(tangled(), {})
except ll.StructureError as err:
    print(err)
teach.draw_network(tangled(), title="tangled(): loop0 reads rb, loop1 reads ra");

# %% [markdown]
# A related rule, `structure/exit`: a value leaves a loop only through a loop-output layer.
# Marking a stream itself as a network output has no meaning (which element?), and is refused:

# %%
net = ll.Network()
loop = net.add_loop()
loop.add_trip_limit(const(net, 2), ll.TripLimit.COUNT)
r = loop.add_recurrence(const(net, 0))
r.set_input(1, net.add_elementwise(r.get_output(0), const(net, 1), E.SUM).get_output(0))
net.mark_output(r.get_output(0))
try:
    ll.run(net, {})
except ll.StructureError as err:
    print(err)


# %% [markdown]
# ## Conditionals: only the taken branch is forced
#
# The Collatz map: halve `x` when it is even, else `3x + 1`; stop at 1. The if-conditional picks,
# per trip, between two streams `halved` and `tripled`. Element *i* of `x_next` forces element *i*
# of exactly one of them. The WHILE input `not_one` reads only the recurrence `x`, as
# `structure/while-input` asks.

# %%
def collatz():
    net = ll.Network()
    start = net.add_input("start", ll.int32, ())
    loop = net.add_loop()
    x_layer = loop.add_recurrence(start)
    x = x_layer.get_output(0)
    x.name = "x"
    half = net.add_elementwise(x, const(net, 2), E.FLOOR_DIV).get_output(0)
    even = net.add_elementwise(net.add_elementwise(half, const(net, 2), E.PROD).get_output(0),
                               x, E.EQUAL).get_output(0)
    even.name = "even"

    cond = net.add_if_conditional()
    cond.set_condition(even)
    x_in = cond.add_input(x).get_output(0)
    halved = net.add_elementwise(x_in, const(net, 2), E.FLOOR_DIV).get_output(0)
    halved.name = "halved"
    tripled = net.add_elementwise(net.add_elementwise(x_in, const(net, 3), E.PROD).get_output(0),
                                  const(net, 1), E.SUM).get_output(0)
    tripled.name = "tripled"
    x_next = cond.add_output(halved, tripled).get_output(0)
    x_next.name = "x_next"
    x_layer.set_input(1, x_next)

    is_one = net.add_elementwise(x, const(net, 1), E.EQUAL).get_output(0)
    not_one = net.add_unary(is_one, ll.UnaryOperation.NOT).get_output(0)
    not_one.name = "not_one"
    loop.add_trip_limit(not_one, ll.TripLimit.WHILE)
    steps = loop.add_loop_output(x, ll.LoopOutput.LAST_VALUE).get_output(0)
    steps.name = "final"
    net.mark_output(steps)
    return net

net = collatz()
teach.draw_network(net, title="collatz(): an if-conditional inside a WHILE loop");

# %%
ev = ll.run(net, {"start": np.array(6, np.int32)})
print("6 reaches", ev.outputs["final"], "after n =", ev.trips["loop0"][0][1], "steps")
print("halved  forced at", teach.forced(ev, "halved"))
print("tripled forced at", teach.forced(ev, "tripled"))
teach.plot_trace(ev, streams=["x", "even", "halved", "tripled", "x_next", "not_one"]);


# %% [markdown]
# ## A branch that would fail is harmless if it is not taken
#
# Look-ups in a table of two rows, in a loop of four trips: on trips 0 and 1 the true branch reads
# the table's row `i`; later trips take the false branch, zeros. The iterator over the table would
# fail on trip 2 (`iterator/bounds`) — but nothing forces that element. ONNX's and OpenVINO's `If`
# run only the taken branch too (`onnx/if`, `openvino/if`); the difference lies elsewhere. In
# this program the iterator is not inside a branch: lowered to ONNX or OpenVINO, the slice of the
# table becomes a node of the loop body, and those runtimes execute every body node outside an
# `If` on every trip. On that reading the same program fails on trip 2. The ambiguity register
# keeps both readings as **A10**, lazy by default; below, the two side by side.

# %%
def lookup(rows=2):
    net = ll.Network()
    table = net.add_input("table", ll.float32, (rows, 3))
    loop = net.add_loop()
    four = const(net, 4)
    loop.add_trip_limit(four, ll.TripLimit.COUNT)
    i_layer = loop.add_recurrence(const(net, 0))
    i = i_layer.get_output(0)
    i.name = "i"
    i_layer.set_input(1, net.add_elementwise(i, const(net, 1), E.SUM).get_output(0))
    row = loop.add_iterator(table).get_output(0)
    row.name = "row"
    in_table = net.add_elementwise(i, const(net, 2), E.LESS).get_output(0)
    in_table.name = "in_table"
    cond = net.add_if_conditional()
    cond.set_condition(in_table)
    picked = cond.add_output(row, const(net, np.zeros(3), np.float32)).get_output(0)
    picked.name = "picked"
    out = loop.add_loop_output(picked, ll.LoopOutput.CONCATENATE)
    out.set_input(1, four)
    out.get_output(0).name = "rows"
    net.mark_output(out.get_output(0))
    return net

T = np.arange(1, 7, dtype=np.float32).reshape(2, 3)
ev = ll.run(lookup(), {"table": T})
print(ev.outputs["rows"])
print("row forced at", teach.forced(ev, "row"))
try:
    ll.run(lookup(), {"table": T}, readings={"A10": "eager"})
except ll.IteratorOutOfBounds as err:
    print("\nA10 = eager:", err)

# %% [markdown]
# The two readings side by side, with a table of four rows so that both run: lazily, `row` is
# forced only on the trips whose taken branch reads it; eagerly, on every trip.

# %%
import matplotlib.pyplot as plt
T4 = np.arange(12, dtype=np.float32).reshape(4, 3)
fig, axes = plt.subplots(1, 2, figsize=(12, 2.6))
for ax, reading in zip(axes, ("lazy", "eager")):
    ev = ll.run(lookup(rows=4), {"table": T4}, readings={"A10": reading})
    teach.plot_trace(ev, ax=ax, streams=["i", "in_table", "row", "picked"],
                     title=f"A10 = {reading}")
fig.tight_layout()

# %% [markdown]
# ## Exercises: predict, then check
#
# Each ✎ cell ships as `answer = ...`: replace `...` with your prediction and run the check cell.
# A wrong answer gets a hint naming the rule; a right one shows what lazyloop did.
#
# **Exercise 4.1.** In `row_sums(rows=4, cols=2)` — four rows of two — how many elements of the
# stream `acc` are forced, counting every activation of the inner loop?

# %%
# ✎ Exercise 4.1: a count
answer_1 = ...

# %%
if teach.exercise("04.1", answer_1):
    ev = ll.run(row_sums(rows=4, cols=2), {"m": np.arange(8, dtype=np.float32).reshape(4, 2)})
    print({act: ix for act, ix in teach.forced(ev, "acc", activation=None).items()})

# %% [markdown]
# **Exercise 4.2.** `collatz()` from `start = 5`: how many elements of the WHILE input `not_one`
# are forced?

# %%
# ✎ Exercise 4.2: a count
answer_2 = ...

# %%
if teach.exercise("04.2", answer_2):
    ev = ll.run(collatz(), {"start": np.array(5, np.int32)})
    print("n =", ev.trips["loop0"][0][1], "  not_one forced at", teach.forced(ev, "not_one"))

# %% [markdown]
# **Exercise 4.3.** `lookup(rows=3)` with a table of three rows (four trips, the condition is
# still `i < 2`). At which trips is the iterator's stream `row` forced under the lazy reading of
# A10? And does the eager reading run, or fail? A dict `{"lazy": [...], "eager": "runs" or
# "error"}`.

# %%
# ✎ Exercise 4.3: {"lazy": trips, "eager": "runs" or "error"}
answer_3 = ...

# %%
if teach.exercise("04.3", answer_3):
    T3 = np.arange(9, dtype=np.float32).reshape(3, 3)
    print(" lazy: row forced at", teach.forced(ll.run(lookup(rows=3), {"table": T3}), "row"))
    try:
        ll.run(lookup(rows=3), {"table": T3}, readings={"A10": "eager"})
    except ll.IteratorOutOfBounds as err:
        print("eager:", err)
