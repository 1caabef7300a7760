# %% [markdown]
# # 7 · Differential testing
#
# An executable specification earns its keep by checking real implementations. `lazyloop.difftest`
# generates random loop programs with hypothesis — core networks exported to ONNX or OpenVINO,
# and programs written directly in each dialect (ONNX `Loop` in all its modes, `Scan` 8 and 9+,
# OpenVINO `Loop-5` with every kind of port) — and runs each on a backend. lazyloop is the
# **oracle**: its answer, with the masks of defined positions, is what the backend must return.
#
# * Values are compared only where lazyloop says they are **defined**: CONCATENATE padding and
#   last values of loops that never ran can hold anything (notebook 3).
# * Dtypes and shapes must match exactly; floats within `rtol=1e-4, atol=1e-5`.
# * A backend that refuses to load a model is *unsupported*; one that accepts it and then fails,
#   or returns something else, *disagrees*.
# * Each distinct disagreement is **shrunk** by hypothesis to a minimal program, and if one of the
#   ambiguity register's other readings makes lazyloop agree with the backend, the disagreement is
#   tagged with that register ID: a documented difference between sources, not a bug.
#
# This notebook runs three small campaigns (a few seconds each): against a backend with a fault
# planted on purpose, against onnxruntime, and against OpenVINO's CPU plugin. Each disagreement
# is decided by a rule; we read it in `spec/`. Rules: `onnx/loop`, `onnx/scan9`, `trip/count`,
# `output/last`, `openvino/loop5`, and whatever the campaigns find.

# %%
# %matplotlib inline
import numpy as np
import onnx, onnx.parser, onnx.printer
import onnxruntime
import openvino
import lazyloop as ll
import lazyloop.onnx
import lazyloop.difftest as dt
from lazyloop import teach

print("onnxruntime", onnxruntime.__version__, "| openvino", openvino.__version__.split("-")[0])

def show(d):
    """A disagreement: the program, the feeds, lazyloop's answer and the backend's."""
    print(d.describe().split("\nrules:")[0])
    print("\nminimal program:" if d.shrunk else "\nprogram:")
    if isinstance(d.model, onnx.ModelProto):
        print(onnx.printer.to_text(d.model.graph))
    else:
        print(teach.openvino_outline(d.model))
    print("feeds:")
    for k, v in d.feeds.items():
        print(f"  {k} = {np.asarray(v).tolist()}")
    print("expected (lazyloop; ? = undefined):")
    for k, v in d.expected.items():
        print(f"  {k} = {teach.masked(v, d.defined.get(k, True))}")
    print("actual (backend):", "no values" if d.actual is None else "")
    for k, v in (d.actual or {}).items():
        print(f"  {k} = {np.asarray(v).tolist()}")


# %% [markdown]
# ## 1. A planted fault
#
# To see the machinery work on a bug we know, wrap onnxruntime in a backend that runs every ONNX
# `Loop` with one trip too many (it rewrites the trip count `M` to `M + 1`). A backend is just an
# object with a `name`, a `format` and `run(model, feeds)`.
#
# onnxruntime itself runs in a child process (`dt.Isolated`): some generated programs make a
# backend's process die with a signal, and that must be a finding, not the end of this notebook.

# %%
ort = dt.Isolated("onnxruntime")          # closed at the end of section 2
faulty = dt.TripCountPlusOne(ort)
report = dt.check(faulty, max_examples=25, seed=0, kinds=("onnx-loop",), shrink_seconds=4)
print(report.summary())

# %%
planted = report.disagreements[0]
show(planted)

# %% [markdown]
# The shrunk program is about as small as an ONNX `Loop` gets: a constant trip count, an
# iteration number turned into a float and returned as a scan output (or carried). Which rule
# decides who is right? The `onnx/loop` lowering feeds `M` to a `COUNT` limit, and `trip/count`
# says `n = M`:

# %%
print(teach.rule_text("onnx/loop", max_lines=22))
print()
print(teach.rule_text("trip/count", max_lines=6))

# %% [markdown]
# ## 2. onnxruntime
#
# Now the real thing, with every kind of program onnxruntime accepts.

# %%
ort_report = dt.check(ort, max_examples=60, seed=0, shrink_seconds=4)
print(ort_report.summary())

# %%
real = [d for d in ort_report.disagreements if d.ambiguity is None]
for d in real:
    print("-", d.signature[1], "|", d.kind[:100])
if real:
    show(real[0])

# %% [markdown]
# In the run saved with this notebook (onnxruntime 1.31.1) every finding is a scan over a
# sequence of length **zero**: lazyloop returns the initial state; onnxruntime fails while
# slicing the empty input when the scan axis is 0, its process dies of a floating point exception
# (`SIGFPE`) when the scan axis is 1, and Scan 8 rejects a `sequence_lens` entry of 0. Zero trips
# are not a corner the specification forgot — the rules say exactly what happens: `trip/count`
# allows `n = 0`, `output/last` says a recurrence's last value after zero trips is its initial
# value, and `onnx/scan9` spells it out for `Scan`:

# %%
print(teach.rule_text("onnx/scan9", max_lines=18))
print()
print(teach.rule_text("output/last", max_lines=6))

# %% [markdown]
# The shrunk case can be replayed by hand in a few lines — this is what would go into a bug
# report (or, in lazyloop's repository, into the conformance cases):

# %%
zero_length_scan = onnx.parser.parse_model("""
<ir_version: 8, opset_import: ["" : 17]>
scan_zero (float[2] s, float[0,2] x) => (float[2] s_final) {
   s_final = Scan <num_scan_inputs = 1,
                   body = body (float[2] s_in, float[2] e) => (float[2] s_out) {
      t = Add (s_in, e)
      s_out = Tanh (t)
   }> (s, x)
}
""")
feeds = {"s": np.array([1.25, 2.0], np.float32), "x": np.zeros((0, 2), np.float32)}
print("lazyloop:   ", lazyloop.onnx.evaluate(zero_length_scan, feeds))
try:
    print("onnxruntime:", ort.run(zero_length_scan, feeds))
except Exception as err:
    print("onnxruntime:", type(err).__name__, str(err).split("Status Message:")[-1].strip()[:110])
finally:
    ort.close()

# %% [markdown]
# ## 3. OpenVINO's CPU plugin
#
# OpenVINO runs isolated too (notebook 6 met a `SIGFPE` in its CPU plugin). Here the programs
# are OpenVINO `Loop-5` models.

# %%
ov_backend = dt.Isolated("openvino")
try:
    ov_report = dt.check(ov_backend, max_examples=12, seed=1, formats=("openvino",),
                         shrink_seconds=3)
finally:
    ov_backend.close()
print(ov_report.summary())

# %% [markdown]
# Some disagreements carry a register ID: an alternative reading of that entry makes lazyloop
# agree with the plugin. Those are places where OpenVINO's own documents, its reference
# implementation and its CPU plugin do not say the same thing — the register records both
# readings and which one lazyloop takes by default. The others are candidates for bug reports.

# %%
explained = sorted({d.ambiguity for d in ov_report.disagreements if d.ambiguity})
for d in ov_report.disagreements:
    print(f"- {d.ambiguity or 'no ambiguity':<13} {d.signature[1]:<14} {d.kind[:90]}")
print()
teach.show_ambiguity(*explained)

# %%
unexplained = [d for d in ov_report.disagreements if d.ambiguity is None]
if unexplained:
    show(unexplained[0])
    print("\ngenerated from:", unexplained[0].subject)

# %% [markdown]
# In the run saved here, the disagreement no register entry explains is a concatenated output:
# the chunks of a sliced input (each `[1, 2]`) joined on axis −1 over two trips. The rule that
# decides is `openvino/concat`: negative axes count from the Result's rank, and every trip's whole
# value is joined, so the answer is `[1, 4]`; the plugin returns `[1, 2]`. An unexplained
# disagreement is where the work starts: either the backend is wrong, or a source says something
# the specification has not recorded yet — and then it becomes a new register entry.

# %%
print(teach.rule_text("openvino/concat", max_lines=14))

# %% [markdown]
# To run a longer campaign from the command line, with minimal cases written to disk:
#
#     lazyloop check --backend onnxruntime --examples 200 --seed 0 --out out/onnxruntime
#
# ## Exercises
#
# Replace the worked answers with your own (or `...`); the checks use plain numpy.
#
# **Exercise 1.** For the zero-length `Scan` above (`s = [1.25, 2.0]`, `x` with no rows), what
# must `s_final` be?

# %%
# ✎ Exercise 1: a list of two numbers
answer_1 = [1.25, 2.0]

# %%
state = feeds["s"].copy()
for e in feeds["x"]:                 # the Scan body as a numpy loop: no rows, no trips
    state = np.tanh(state + e)
teach.check(answer_1, state, "exercise 1")

# %% [markdown]
# **Exercise 2.** An ONNX `Loop` with `M = 3` returns its iteration number (as a float) as a scan
# output. What does a correct backend return, and what does the faulty backend of section 1 return?

# %%
# ✎ Exercise 2: (correct, faulty)
answer_2 = ([0.0, 1.0, 2.0], [0.0, 1.0, 2.0, 3.0])

# %%
expected_2 = (np.arange(3, dtype=np.float32).tolist(), np.arange(3 + 1, dtype=np.float32).tolist())
teach.check(answer_2, expected_2, "exercise 2")

# %% [markdown]
# **Exercise 3.** lazyloop expects `[1, 2, ?]` (the last position is CONCATENATE padding, undefined)
# and a backend returns `[1, 2, 7]`. Do they agree under the comparison rules above? And for
# `[1, 3, 7]`?

# %%
# ✎ Exercise 3: (agree for [1, 2, 7], agree for [1, 3, 7])
answer_3 = (True, False)

# %%
expected = np.array([1, 2, np.nan], np.float32)
defined = np.array([True, True, False])
def agree(actual):
    actual = np.asarray(actual, np.float32)
    return bool(np.allclose(actual[defined], expected[defined], rtol=1e-4, atol=1e-5))
teach.check(answer_3, (agree([1, 2, 7]), agree([1, 3, 7])), "exercise 3")
assert not dt.compare({"y": expected}, {"y": defined}, {"y": np.array([1, 2, 7], np.float32)})
