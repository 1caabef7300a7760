# %% [markdown]
# # 6 · One semantics, four dialects
#
# **You will be able to:** read an ONNX `Loop`, an ONNX `Scan` and an OpenVINO `Loop-5` as the
# same core of iterators, recurrences, loop outputs and trip limits; compare their lowerings; and
# look up, in the ambiguity register, the places where the dialects mean different things. Terms:
# see the [glossary](README.md#glossary).
#
# The same small program — a running sum over the rows of a matrix — written four times: with the
# TensorRT-style builder, as an ONNX `Loop`, as an ONNX `Scan` and as an OpenVINO `Loop-5`. Each
# dialect has its own vocabulary (iteration numbers, carried values, scan inputs, sliced inputs,
# back edges, "output by last iteration"…), but lazyloop **lowers** each of them onto the same
# core: iterators, recurrences, loop outputs and trip limits over memoised streams. Where the
# dialects really mean different things, the difference is not hidden in the lowering: it is an
# entry of the **ambiguity register**, with a default reading and a switch.
#
# Rules: `onnx/loop`, `onnx/scan9`, `openvino/loop5`, and the core rules they lower onto (spec:
# `spec/30-onnx-lowering.md`, `spec/40-openvino-lowering.md`, `spec/ambiguities.md`).
#
# The program:  `acc_0 = 0`, `acc_{t+1} = acc_t + x[t]`; return `total = acc_n` and
# `partial = [acc_1, …, acc_n]`.

# %%
# %matplotlib inline
import subprocess, sys, tempfile, os
import numpy as np
import onnx, onnx.parser, onnx.printer
import onnxruntime as ort
import openvino as ov
import openvino.opset15 as ops
import lazyloop as ll
import lazyloop.onnx
import lazyloop.openvino
from lazyloop import teach

X = np.arange(12, dtype=np.float32).reshape(4, 3)
expected_total, expected_partial = X.sum(axis=0), np.cumsum(X, axis=0)   # numpy


# %% [markdown]
# ## 1. TensorRT-style network
#
# Iterator over `x`, a recurrence for `acc`, `COUNT(4)`, `LAST_VALUE(acc)` and
# `CONCATENATE(acc_next)` — notebook 1 without the scale.

# %%
def trt_running_sum(count=4):
    net = ll.Network()
    x = net.add_input("x", ll.float32, (4, 3))
    c = net.add_constant((), np.array(count, np.int32)).get_output(0)
    loop = net.add_loop()
    loop.add_trip_limit(c, ll.TripLimit.COUNT)
    row = loop.add_iterator(x).get_output(0)
    row.name = "row"
    acc = loop.add_recurrence(net.add_constant((3,), np.zeros(3, np.float32)).get_output(0))
    acc.get_output(0).name = "acc"
    acc_next = net.add_elementwise(acc.get_output(0), row, ll.ElementWiseOperation.SUM).get_output(0)
    acc_next.name = "acc_next"
    acc.set_input(1, acc_next)
    total = loop.add_loop_output(acc.get_output(0), ll.LoopOutput.LAST_VALUE).get_output(0)
    total.name = "total"
    partial = loop.add_loop_output(acc_next, ll.LoopOutput.CONCATENATE)
    partial.set_input(1, net.add_constant((), np.array(4, np.int32)).get_output(0))
    partial.get_output(0).name = "partial"
    net.mark_output(total)
    net.mark_output(partial.get_output(0))
    return net

trt_net = trt_running_sum()
print(ll.evaluate(trt_net, {"x": X}))

# %% [markdown]
# ## 2. ONNX `Loop`
#
# ONNX's `Loop` does not iterate over a tensor. Its body receives the iteration number `i`, a
# condition and the carried values; it reads row `i` itself with `Gather`, from `x` in the
# enclosing scope. It returns the next condition, the next carried values and per-trip *scan
# outputs*. The trip count `M` is a graph input here, and the condition input is omitted (`""`,
# written as an empty slot). ONNX's text syntax makes the model readable:

# %%
onnx_loop = onnx.parser.parse_model("""
<ir_version: 8, opset_import: ["" : 17]>
running_sum_loop (float[4,3] x, int64 M) => (float[3] total, float[?,3] partial) {
   zeros = Constant <value = float[3] {0, 0, 0}> ()
   total, partial = Loop (M, , zeros) <body = body (int64 i, bool cond_in, float[3] acc_in)
                                                => (bool cond_out, float[3] acc_out, float[3] acc_t) {
      row = Gather <axis = 0> (x, i)
      acc_out = Add (acc_in, row)
      cond_out = Identity (cond_in)
      acc_t = Identity (acc_out)
   }>
}
""")
onnx.checker.check_model(onnx_loop)
M4 = np.array(4, np.int64)
print(lazyloop.onnx.evaluate(onnx_loop, {"x": X, "M": M4}))

# %% [markdown]
# ## 3. ONNX `Scan`
#
# `Scan` is the iterating kind: its body receives the states and one slice of each scan input;
# the number of trips is the length of the scanned axis.

# %%
onnx_scan = onnx.parser.parse_model("""
<ir_version: 8, opset_import: ["" : 17]>
running_sum_scan (float[4,3] x) => (float[3] total, float[4,3] partial) {
   zeros = Constant <value = float[3] {0, 0, 0}> ()
   total, partial = Scan <num_scan_inputs = 1,
                          body = body (float[3] acc_in, float[3] row) => (float[3] acc_out, float[3] acc_t) {
      acc_out = Add (acc_in, row)
      acc_t = Identity (acc_out)
   }> (zeros, x)
}
""")
onnx.checker.check_model(onnx_scan)
print(lazyloop.onnx.evaluate(onnx_scan, {"x": X}))


# %% [markdown]
# ## 4. OpenVINO `Loop-5`
#
# OpenVINO's `Loop` takes a trip count and an execution condition; the body is a `Model` of its
# own. Its ports say how values cross the boundary: a *merged* input with a back edge (the
# carried `acc`), a *sliced* input (chunks of `x` along axis 0 — each chunk keeps its rank, a
# `[1, 3]` slice, hence the `Squeeze`), an output "by last iteration" and a *concatenated* output
# (joined along an **existing** axis — hence the `Unsqueeze`). The body also returns its
# execution condition, a constant true here.

# %%
def openvino_running_sum(count=None):
    """Trip count: a Parameter "M" (count None) or a constant."""
    acc = ops.parameter([3], ov.Type.f32, name="acc")
    chunk = ops.parameter([1, 3], ov.Type.f32, name="chunk")
    row = ops.squeeze(chunk, ops.constant(np.array([0], np.int64)))
    acc_out = ops.add(acc, row)
    acc_out.set_friendly_name("acc_out")
    acc_t = ops.unsqueeze(acc_out, ops.constant(np.array([0], np.int64)))
    acc_t.set_friendly_name("acc_t")
    r_acc, r_cond, r_t = ops.result(acc_out), ops.result(ops.constant(np.array(True))), ops.result(acc_t)
    body = ov.Model([r_acc, r_cond, r_t], [acc, chunk], "body")

    x = ops.parameter([4, 3], ov.Type.f32, name="x")
    M = ops.parameter([], ov.Type.i64, name="M")
    trips = M if count is None else ops.constant(np.array(count, np.int64))
    loop = ops.loop(trips, ops.constant(np.array(True)))
    loop.set_friendly_name("running_sum")
    loop.set_function(body)
    loop.set_special_body_ports([-1, 1])          # no iteration-number input; result 1 = condition
    loop.set_merged_input(acc, ops.constant(np.zeros(3, np.float32)).output(0), r_acc.output(0))
    loop.set_sliced_input(chunk, x.output(0), 0, 1, 1, -1, 0)   # start, stride, part, end, axis
    total = loop.get_iter_value(r_acc.output(0), -1)
    partial = loop.get_concatenated_slices(r_t.output(0), 0, 1, 1, -1, 0)
    total.get_tensor().set_names({"total"})
    partial.get_tensor().set_names({"partial"})
    return ov.Model([total, partial], [x, M] if count is None else [x], "running_sum_openvino")

ov_model = openvino_running_sum()
print(teach.openvino_outline(ov_model))
print(lazyloop.openvino.evaluate(ov_model, {"x": X, "M": M4}))

# %% [markdown]
# ## Four programs, one answer — and the real runtimes agree

# %%
quiet = ort.SessionOptions()
quiet.log_severity_level = 3

def onnxruntime_run(model, feeds):
    session = ort.InferenceSession(model.SerializeToString(), quiet,
                                   providers=["CPUExecutionProvider"])
    return dict(zip([o.name for o in session.get_outputs()], session.run(None, feeds)))

def openvino_cpu_run(model, feeds):
    compiled = ov.Core().compile_model(model, "CPU")
    result = compiled(feeds)
    return {out.get_any_name(): result[out] for out in compiled.outputs}

answers = {
    "TensorRT-style (lazyloop)": ll.evaluate(trt_net, {"x": X}),
    "ONNX Loop (lazyloop)": lazyloop.onnx.evaluate(onnx_loop, {"x": X, "M": M4}),
    "ONNX Loop (onnxruntime)": onnxruntime_run(onnx_loop, {"x": X, "M": M4}),
    "ONNX Scan (lazyloop)": lazyloop.onnx.evaluate(onnx_scan, {"x": X}),
    "ONNX Scan (onnxruntime)": onnxruntime_run(onnx_scan, {"x": X}),
    "OpenVINO Loop (lazyloop)": lazyloop.openvino.evaluate(ov_model, {"x": X, "M": M4}),
    "OpenVINO Loop (CPU plugin)": openvino_cpu_run(ov_model, {"x": X, "M": M4}),
}
for who, out in answers.items():
    ok = np.allclose(out["total"], expected_total) and np.allclose(out["partial"], expected_partial)
    print(f"{who:<28} total={out['total']}  partial matches numpy: {ok}")
    assert ok

# %% [markdown]
# ## The lowerings side by side
#
# `lazyloop.onnx.lower` and `lazyloop.openvino.lower` return the core network a model becomes.
# `teach.outline` prints a compiled plan loop by loop (frontend prefixes dropped). Reading across:
#
# | | TensorRT-style | ONNX Loop | ONNX Scan | OpenVINO Loop |
# |---|---|---|---|---|
# | n | `COUNT(4)` | `COUNT(M)`; the omitted condition becomes true (A9) | `COUNT(sequence_length(x))` | `COUNT(M)` and `WHILE` over a recurrence of the body's condition |
# | row *t* | `Iterator(x)` | `Gather(x, iteration)`, with `iteration = Recurrence(0, iteration+1)` | `Iterator(x)` | `Iterator` over `[1,3]` chunks, then `Squeeze` |
# | `acc` | `Recurrence(zeros, acc_next)` | carried value → `Recurrence` | state → `Recurrence` | merged input with back edge → `Recurrence` |
# | `total` | `LastValue(acc)` | final carried value → `LastValue` | final state → `LastValue` | last iteration of a back-edged result → `LastValue` of the recurrence |
# | `partial` | `Concatenate(acc_next, 4)` | scan output → `Concatenate(n)`, stacked (A8) | `Concatenate(n)` | `Concatenate(n)` on a new axis, then joined on the existing one |

# %%
lowered = {
    "TensorRT-style": ll.compile_network(trt_net),
    "ONNX Loop": ll.compile_network(lazyloop.onnx.lower(onnx_loop).network),
    "ONNX Scan": ll.compile_network(lazyloop.onnx.lower(onnx_scan).network),
    "OpenVINO Loop": ll.compile_network(lazyloop.openvino.lower(ov_model).network),
}
names = list(lowered)
print(teach.side_by_side({k: teach.outline(lowered[k]) for k in names[:2]}))
print()
print(teach.side_by_side({k: teach.outline(lowered[k]) for k in names[2:]}))

# %% [markdown]
# The four lowerings drawn, one figure each (the shaded box is the loop, the dashed red wires
# its back edges, as in notebook 1):

# %%
for title, plan in lowered.items():
    teach.draw_plan(plan, title=f"{title}, lowered")


# %% [markdown]
# ### Same streams
#
# Whatever the dialect, the carried value is the stream ⟨0, x₀, x₀+x₁, …⟩ and `total` reads its
# element `n = 4`. Each frontend's `run` records the forcing trace when asked (`trace=True`), and
# the four traces agree on which elements of that recurrence were forced: 0 to 4.

# %%
def carried_stream(plan):
    """The id of the recurrence that carries acc (initial value: the zeros constant)."""
    return next(nid for nid, node in plan.nodes.items()
                if type(node).__name__ == "Recurrence" and "acc" in nid)

runs = {
    "TensorRT-style": ll.run(trt_net, {"x": X}),
    "ONNX Loop": lazyloop.onnx.run(onnx_loop, {"x": X, "M": M4}, trace=True).evaluation,
    "ONNX Scan": lazyloop.onnx.run(onnx_scan, {"x": X}, trace=True).evaluation,
    "OpenVINO Loop": lazyloop.openvino.run(ov_model, {"x": X, "M": M4}, trace=True).evaluation,
}
forced_at = {}
for who, ev in runs.items():
    stream = carried_stream(ev.plan)
    forced_at[who] = teach.forced(ev, stream)
    print(f"{who:<15} {stream:<28} forced at {forced_at[who]}")
assert all(f == [0, 1, 2, 3, 4] for f in forced_at.values())

# %% [markdown]
# ## Where the dialects part
#
# ### A negative trip count (A4)
#
# Give each program a trip count of −1. The TensorRT guide does not say what a negative count
# means; lazyloop's TensorRT profile reads it as a runtime error — that is A4's default reading
# for this profile, not a rule of the guide. ONNX's reference
# semantics run zero trips (and onnxruntime agrees). In OpenVINO, −1 means *no* count limit: the
# loop runs until its condition turns false — here it never does, so it runs out of chunks of `x`
# and fails (A24 covers that case; the CPU plugin fails too). One program text, three meanings:
# this is not a bug of any of them, it is an ambiguity, and the register says so.

# %%
teach.show_ambiguity("A4", "A24")
print()
minus_one = np.array(-1, np.int64)
try:
    ll.evaluate(trt_running_sum(count=-1), {"x": X})
except ll.NegativeTripCount as err:
    print("TensorRT-style:", err)
print("ONNX Loop (lazyloop):   ", lazyloop.onnx.evaluate(onnx_loop, {"x": X, "M": minus_one}))
print("ONNX Loop (onnxruntime):", onnxruntime_run(onnx_loop, {"x": X, "M": minus_one}))
try:
    lazyloop.openvino.evaluate(ov_model, {"x": X, "M": minus_one})
except ll.LazyLoopError as err:
    print("OpenVINO (lazyloop):", type(err).__name__, err)
try:
    openvino_cpu_run(ov_model, {"x": X, "M": minus_one})
except RuntimeError as err:
    print("OpenVINO (CPU plugin):", str(err).strip().splitlines()[-1][:120])

# %% [markdown]
# ### Zero trips (A5, A3)
#
# With `M = 0`, ONNX returns the initial carried value and an empty scan output. OpenVINO's
# `Loop-5` specification allows the body to run zero times (seed `001`), but OpenVINO's
# reference implementation refuses such a loop: register entry A5, default "execute". What the
# CPU plugin does depends on where the 0 comes from — see below. An output *by last iteration*
# of a result without a back edge has no value after zero trips (A3): lazyloop marks it
# undefined instead of inventing one.

# %%
teach.show_ambiguity("A5", "A3")
M0 = np.array(0, np.int64)
print("\nONNX Loop, M=0:    ", lazyloop.onnx.evaluate(onnx_loop, {"x": X, "M": M0}))
print("OpenVINO Loop, M=0:", lazyloop.openvino.evaluate(ov_model, {"x": X, "M": M0}))
try:
    lazyloop.openvino.run(ov_model, {"x": X, "M": M0}, readings={"A5": "refuse"})
except ll.LazyLoopError as err:
    print("with readings A5=refuse:", err)


# %% [markdown]
# What does the real CPU plugin do with zero trips? Each case runs in a separate process, so
# that whatever happens cannot take this notebook's kernel down: the trip count fed as a
# Parameter `M = 0`, and the same loop with a *constant* trip count of 0.

# %%
def cpu_plugin_in_subprocess(model, feeds):
    """Compile and run `model` on OpenVINO's CPU plugin in a child process: (exit code, text)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "model.xml")
        ov.save_model(model, path)
        np.savez(os.path.join(tmp, "feeds.npz"), **feeds)
        script = (
            "import numpy as np, openvino as ov\n"
            f"m = ov.Core().compile_model({path!r}, 'CPU')\n"
            f"feeds = dict(np.load({os.path.join(tmp, 'feeds.npz')!r}))\n"
            "r = m(feeds)\n"
            "print([r[o].tolist() for o in m.outputs])\n")
        proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                              timeout=60)
    return proc.returncode, (proc.stdout.strip() or proc.stderr.strip()[-200:] or "(no output)")

print("openvino", ov.__version__.split("-")[0])
print("M = 0 as a Parameter:", cpu_plugin_in_subprocess(ov_model, {"x": X, "M": M0}))
print("constant trip count 0:", cpu_plugin_in_subprocess(openvino_running_sum(count=0), {"x": X}))
print("lazyloop, constant 0: ", lazyloop.openvino.evaluate(openvino_running_sum(count=0), {"x": X}))

# %% [markdown]
# A negative exit code is the signal that ended the child process (−8 is `SIGFPE`, a floating
# point exception). So, with the OpenVINO version printed above, exactly this works and this
# does not:
#
# * **works** — the trip count 0 given at run time (the Parameter `M = 0`): the CPU plugin runs
#   zero trips and returns what lazyloop returns, the initial value and an empty concatenation;
# * **crashes** — the same loop with a *constant* trip count of 0, known when the model is
#   compiled: the plugin's process dies with `SIGFPE` (spec/50-findings.md, OV-3).
#
# A crash on a legal model is not an ambiguity: it is the kind of finding the differential
# testing of the next notebook is for.

# %% [markdown]
# ### The other entries that separate the dialects

# %%
teach.show_ambiguity("A7", "A8", "A9", "A1", "A2")

# %% [markdown]
# ## Exercises: predict, then check
#
# Each ✎ cell ships as `answer = ...`: replace `...` with your prediction and run the check cell.
# A wrong answer gets a hint naming the rule; a right one shows what lazyloop did.
#
# **Exercise 6.1.** Run the ONNX Loop with `M = 2`. What is `partial`? A 2 × 3 array.

# %%
# ✎ Exercise 6.1: the 2 × 3 array `partial`
answer_1 = ...

# %%
if teach.exercise("06.1", answer_1):
    print(lazyloop.onnx.evaluate(onnx_loop, {"x": X, "M": np.array(2, np.int64)})["partial"])

# %% [markdown]
# **Exercise 6.2.** Under the default readings of A4, how many trips does each program make with
# a trip count of −3? Answer with `"error"` where evaluation fails, otherwise the number of
# trips: a dict `{"TensorRT": ..., "ONNX Loop": ..., "OpenVINO Loop": ...}`.

# %%
# ✎ Exercise 6.2: {dialect: trips or "error"}
answer_2 = ...

# %%
if teach.exercise("06.2", answer_2):
    minus_three = np.array(-3, np.int64)
    for dialect, run in (("TensorRT", lambda: ll.run(trt_running_sum(count=-3), {"x": X})),
                         ("ONNX Loop", lambda: lazyloop.onnx.run(
                             onnx_loop, {"x": X, "M": minus_three}, trace=True).evaluation),
                         ("OpenVINO Loop", lambda: lazyloop.openvino.evaluate(
                             ov_model, {"x": X, "M": minus_three}))):
        try:
            result = run()
            print(f"{dialect:<14} trips: {[n for t in result.trips.values() for _, n in t]}")
        except ll.LazyLoopError as err:
            print(f"{dialect:<14} error: {type(err).__name__}")

# %% [markdown]
# **Exercise 6.3.** In the ONNX Loop, the carried value's stream is ⟨acc_0, acc_1, …⟩. With
# `M = 3`, which indices of it are forced? A list; ask yourself why one more than the number of
# trips.

# %%
# ✎ Exercise 6.3: a list of indices
answer_3 = ...

# %%
if teach.exercise("06.3", answer_3):
    ev = lazyloop.onnx.run(onnx_loop, {"x": X, "M": np.array(3, np.int64)}, trace=True).evaluation
    print("forced:", teach.forced(ev, carried_stream(ev.plan)))
