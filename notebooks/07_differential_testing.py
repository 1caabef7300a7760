# %% [markdown]
# # 7 · Differential testing
#
# **You will be able to:** read a differential-testing report — outcomes per program kind, the
# distinct disagreements, their minimal programs; tell a backend bug from a documented
# ambiguity; name the rule that decides each disagreement; and spot, from expected and actual
# values alone, what a faulty backend did. Terms: see the [glossary](README.md#glossary).
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
# A campaign depends on the installed backend and on time-bounded shrinking, so this notebook
# does not run one: it **replays saved reports** (`notebooks/data/campaign_*.json`, written by
# `notebooks/data/make_campaign.py` with fixed seeds): one against onnxruntime with a fault
# planted on purpose, one against onnxruntime itself, one against OpenVINO's CPU plugin. Every
# minimal ONNX program is evaluated again by today's lazyloop, and the findings this text
# describes are asserted to be in the reports. Rules: `onnx/loop`, `onnx/scan9`, `onnx/scan8`,
# `trip/count`, `output/last`, `openvino/loop5`.

# %%
# %matplotlib inline
import pathlib
import numpy as np
import matplotlib.pyplot as plt
import onnx, onnx.parser, onnx.printer
import onnxruntime                       # section 2 replays one case on it, in a child process
import lazyloop as ll
import lazyloop.onnx
import lazyloop.difftest as dt
from lazyloop import teach
from lazyloop.teach import campaign

DATA = pathlib.Path("data")
reports = {
    "planted fault": campaign.load_report(DATA / "campaign_planted_fault_seed0.json"),
    "onnxruntime": campaign.load_report(DATA / "campaign_onnxruntime_seed0.json"),
    "openvino": campaign.load_report(DATA / "campaign_openvino_seed1.json"),
}
for name, r in reports.items():
    print(f"{name:<14} {r['backend']:<48} seed {r['seed']}: {r['generated']} programs, "
          f"{r['agreements']} agree, {r['instances']} disagree ({len(r['findings'])} distinct), "
          f"{r['unsupported']} refused")


def show(f):
    """A finding: what differs, the minimal program, the feeds, expected and actual values."""
    print("difference:", "; ".join(f"{d['output']}: {d['kind']}: {d['detail']}"
                                   for d in f["differences"]))
    if f["error"]:
        print("backend error:", f["error"].split("Status Message:")[-1].strip()[:160])
    print("explained by ambiguity:", f["ambiguity"] or "none")
    print("\nminimal program:")
    print(f["program"]["text"])
    print("feeds:")
    for k, v in f["feeds"].items():
        print(f"  {k} = {v.tolist()}")
    print("expected (lazyloop; ? = undefined):")
    for k, v in f["expected"].items():
        print(f"  {k} = {teach.masked(v, f['defined'].get(k, True))}")
    print("actual (backend):", "no values" if f["actual"] is None else "")
    for k, v in (f["actual"] or {}).items():
        print(f"  {k} = {v.tolist()}")


# %% [markdown]
# ## The outcomes at a glance
#
# Every generated program ends in one of three ways on the backend: it agrees with lazyloop, it
# disagrees, or the backend refuses it. Per backend and kind of program:

# %%
campaign.plot_outcomes(reports);

# %% [markdown]
# ## 1. A planted fault
#
# To see the machinery work on a bug we know, the first campaign wraps onnxruntime in a backend
# that runs every ONNX `Loop` with one trip too many (`dt.TripCountPlusOne` rewrites the trip count
# `M` to `M + 1`). A backend is just an object with a `name`, a `format` and `run(model, feeds)`.
# The campaign found two distinct disagreements: a scan output of the wrong length, and a carried
# value that differs.

# %%
planted = {f["signature"][2]: f for f in reports["planted fault"]["findings"]}
assert set(planted) == {"shape", "values"}          # what this text describes is in the report
show(planted["shape"])

# %% [markdown]
# The minimal program is about as small as an ONNX `Loop` gets: a constant trip count `M = 2` and
# the iteration number, as a float, returned as a scan output. lazyloop stacks one element per
# trip, `[0, 1]`; the backend returns three. Expected against actual, with lazyloop's undefined
# positions (none here) hatched:

# %%
campaign.plot_expected_actual(planted["shape"], title="planted fault: a scan output");

# %% [markdown]
# lazyloop's side of a finding can be replayed at any time: the minimal program is saved, and
# today's lazyloop must still give the saved expected values. Its lowering and its forcing trace
# show where the answer comes from: the `COUNT` limit is fed by `M`, and the stacked output has one
# element per trip.

# %%
run = campaign.replay(planted["shape"])
assert campaign.still_expected(planted["shape"], run)
ev = run.evaluation
teach.draw_plan(ev.plan, title="the minimal program, lowered");
teach.plot_trace(ev, title="its forcing trace: n = 2");

# %% [markdown]
# ### The rule that decides
#
# A minimal program still exercises a dozen rules; most of them cannot tell the two answers apart.
# The one that decides is the rule the two answers read differently — here the number of trips:
# the `onnx/loop` lowering feeds `M` to a `COUNT` limit and the carried condition to a `WHILE`
# limit, and `trip/both` says `n = min(M, first false)`; the condition stays true, so `n = M = 2`.

# %%
print(teach.rule_text("trip/both", max_lines=8))

# %% [markdown]
# ## 2. onnxruntime
#
# The real thing, with every kind of program onnxruntime accepts. Each finding below is listed
# with the rule that decides it — a judgement made by reading the minimal program, checked
# against the rules that program exercises.

# %%
DECIDING = {   # (subject kind, kind of difference) -> (deciding rule, why)
    ("onnx-loop", "shape"): ("trip/both", "n = M trips (cond stays true): M elements stacked"),
    ("onnx-loop", "values"): ("trip/both", "n = M trips of the body (cond stays true), not M + 1"),
    ("onnx-scan9", "error"): ("onnx/scan9", "a scan over a length-0 axis runs 0 trips; "
                                            "the final state is the initial one"),
    ("onnx-scan8", "error"): ("onnx/scan8", "a sequence_lens entry of 0 means 0 trips for "
                                            "that batch item (A14)"),
    ("openvino-loop", "shape"): ("openvino/loop5", "what zero trips produce (A22)"),
}


def deciding(f):
    key = (f["subject_kind"], f["signature"][2].split(":")[0])
    rule, why = DECIDING[key]
    assert rule in f["rules"], (rule, f["rules"])    # the program does exercise that rule
    return rule, why


for name, r in reports.items():
    for f in r["findings"]:
        rule, why = deciding(f)
        print(f"{name:<14} {f['subject_kind']:<14} {f['signature'][2][:38]:<40}"
              f" {f['ambiguity'] or '-':<5} {rule:<15} {why}")

# %%
ort_findings = reports["onnxruntime"]["findings"]
zero_length = [f for f in ort_findings if f["subject_kind"] == "onnx-scan9"]
assert len(zero_length) == 2 and all(0 in f["feeds"]["x0"].shape for f in zero_length)
assert {f["program"]["text"].count("scan_input_axes: ints = [1]") for f in zero_length} == {0, 1}
assert any("SIGFPE" in (f["error"] or "") for f in zero_length)
scan8 = [f for f in ort_findings if f["subject_kind"] == "onnx-scan8"]
assert len(scan8) == 1 and scan8[0]["ambiguity"] == "A14"
show(zero_length[0])

# %% [markdown]
# Replayed on lazyloop, with its trace: the `Scan` lowers to a loop with `COUNT(L)`, `L = 0` the
# extent of the scan axis, so no trip runs; the state's only forced element is element 0, its
# initial value, which `LAST_VALUE` returns (`output/last`).

# %%
run0 = campaign.replay(zero_length[0])
assert campaign.still_expected(zero_length[0], run0)
teach.print_trace(run0.evaluation)
teach.plot_trace(run0.evaluation, title="a Scan over zero rows: n = 0");

# %% [markdown]
# In the saved run two findings are a `Scan` over a sequence of length **zero**: lazyloop returns
# the initial state; onnxruntime fails while slicing the empty input when the scan axis is 0,
# and its process dies of a floating point exception (`SIGFPE`) when the scan axis is 1. The third,
# a Scan 8 `sequence_lens` entry of 0, is refused by onnxruntime and explained by register entry
# A14. Zero trips are not a corner the specification forgot: `trip/count` allows `n = 0`,
# `output/last` says a recurrence's last value after zero trips is its initial value, and
# `onnx/scan9` spells it out for `Scan`:

# %%
print(teach.rule_text("onnx/scan9", max_lines=18))

# %% [markdown]
# The minimal case, replayed by hand on the onnxruntime installed here, in a child process
# (`dt.Isolated`) so that a crash is a result and not the end of this notebook. This is what
# would go into a bug report:

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
ort = dt.Isolated("onnxruntime")
try:
    print("onnxruntime:", ort.run(zero_length_scan, feeds))
except Exception as err:
    print("onnxruntime:", type(err).__name__, str(err).split("Status Message:")[-1].strip()[:110])
finally:
    ort.close()

# %% [markdown]
# ## 3. OpenVINO's CPU plugin
#
# The third campaign ran OpenVINO `Loop-5` programs (and exported core programs, which this
# version of the plugin refused). Its one distinct disagreement carries a register ID: an
# alternative reading of that entry makes lazyloop agree with the plugin. That is a place where
# OpenVINO's own sources do not say the same thing — here a loop whose execution condition is a
# constant false runs zero trips, and the plugin returns the shape its shape inference declares
# rather than what zero trips produce.

# %%
(ov_finding,) = reports["openvino"]["findings"]
assert ov_finding["ambiguity"] == "A22"
show(ov_finding)
print()
teach.show_ambiguity("A22")

# %%
campaign.plot_expected_actual(ov_finding, title="OpenVINO: an undefined value against an empty one");

# %% [markdown]
# ## How the shrinker got there
#
# Each finding was first met in a larger program; hypothesis then tried smaller and smaller
# variants, keeping those that still fail the same way. The size of each failing program the
# shrinker met (its nodes, nested graphs included), in order:

# %%
campaign.plot_shrinking({f"{name}: {f['subject_kind']} {f['signature'][2][:20]}": f
                         for name, r in reports.items() for f in r["findings"]});

# %% [markdown]
# To run a campaign of your own from the command line, with minimal cases written to disk:
#
#     lazyloop check --backend onnxruntime --examples 200 --seed 0 --out out/onnxruntime
#
# ## Exercises: predict, then check
#
# Each ✎ cell ships as `answer = ...`: replace `...` with your prediction and run the check cell.
# A wrong answer gets a hint naming the rule; a right one shows the evidence.
#
# **Exercise 7.1.** For the zero-length `Scan` above (`s = [1.25, 2.0]`, `x` with no rows), what
# must `s_final` be? A list of two numbers.

# %%
# ✎ Exercise 7.1: a list of two numbers
answer_1 = ...

# %%
if teach.exercise("07.1", answer_1):
    print("lazyloop:", lazyloop.onnx.evaluate(zero_length_scan, feeds)["s_final"])

# %% [markdown]
# **Exercise 7.2 — spot the bug.** Here is the planted campaign's other finding, as a reviewer
# would receive it: no word about the planted fault. Which side is right, and how many trips did
# the backend's answer take? Answer with a dict `{"right": "lazyloop" or "backend",
# "backend_trips": n}`.

# %%
show(planted["values"])

# %%
# ✎ Exercise 7.2: {"right": ..., "backend_trips": ...}
answer_2 = ...

# %%
if teach.exercise("07.2", answer_2):
    c = planted["values"]["feeds"]["v0"].astype(np.float32)
    for i in range(3):                    # the body, c <- tanh(c + i), trip by trip
        c = np.tanh(c + np.float32(i))
        print(f"after trip {i}: c = {c:.7f}")
    print("deciding rule:", deciding(planted["values"]))

# %% [markdown]
# **Exercise 7.3.** lazyloop expects `[1, 2, ?]` (the last position is CONCATENATE padding,
# undefined) and a backend returns `[1, 2, 7]`. Do they agree under the comparison rules above?
# And for `[1, 3, 7]`? A pair of booleans.

# %%
# ✎ Exercise 7.3: (agree for [1, 2, 7], agree for [1, 3, 7])
answer_3 = ...

# %%
if teach.exercise("07.3", answer_3):
    expected = {"y": np.array([1, 2, np.nan], np.float32)}
    defined = {"y": np.array([True, True, False])}
    for actual in ([1, 2, 7], [1, 3, 7]):
        found = dt.compare(expected, defined, {"y": np.array(actual, np.float32)})
        print(actual, "agree" if not found else f"differ: {found[0].detail}")
