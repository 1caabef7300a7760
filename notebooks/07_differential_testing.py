# %% [markdown]
# # 7 · Differential testing
#
# **You will be able to:** read the report `lazyloop check` writes — outcomes, the distinct
# findings and their root-cause keys, their minimal programs in the case folders; tell a
# backend bug from a documented ambiguity; name the rules that decide each finding; and spot,
# from expected and actual values alone, what a faulty backend did. Terms: see the
# [glossary](README.md#glossary).
#
# An executable specification earns its keep by checking real implementations. `lazyloop check`
# generates random loop programs with hypothesis — core networks exported to ONNX or OpenVINO,
# and programs written directly in each dialect (ONNX `Loop` in all its modes, `Scan` 8 and 9+,
# OpenVINO `Loop-5` with every kind of port) — and runs each on a backend. lazyloop is the
# **oracle**: its answer, with the masks of defined positions, is what the backend must return.
#
# * Values are compared only where lazyloop says they are **defined**: CONCATENATE padding and
#   last values of loops that never ran can hold anything (notebook 3).
# * Dtypes and shapes must match exactly; floats within `rtol=1e-4, atol=1e-5`.
# * A program is *unsupported* only when the backend says that it does not support something
#   in it: its `run` raises `dt.Unsupported` — the built-in backends do so when loading fails
#   with a message that names an unimplemented or unsupported op, type or attribute, or when
#   OpenVINO refuses to construct one of the model's nodes. Any other failure to load a valid
#   model (an internal error, an assertion: `LoadFailed`) is a disagreement, and so is a
#   backend that accepts the model and then fails, crashes, hangs, or returns something else
#   (spec/51-difftest.md, step 5 "Classify"; the table below lists `error:LoadFailed` findings).
# * Each disagreement is **shrunk** by hypothesis to a minimal program; minimal programs are
#   grouped by their **root cause** (format, loop constructs, the rules that decide the trips,
#   what went wrong), one finding per root cause. If one of the ambiguity register's other
#   readings makes lazyloop agree with the backend, the finding is tagged with that register
#   ID: a documented difference between sources, not a bug.
#
# A campaign depends on the installed backend, so this notebook does not run one: it
# **replays what the command line left behind**. `notebooks/data/make_campaign.py` ran
# `lazyloop check ... --out data/NAME` three times with fixed seeds: against a backend with
# two faults planted on purpose, against onnxruntime, and against OpenVINO's CPU plugin. Each
# `data/NAME/report.json` is the versioned JSON report (spec/52-report-schema.md); beside it are
# the case folders of the findings this notebook opens (minimal model, feeds, lazyloop's
# expected outputs with their masks). Every minimal program is evaluated again by today's
# lazyloop, and what this text says about the findings is asserted from the reports. Rules:
# `onnx/loop`, `onnx/scan9`, `onnx/scan8`, `iterator/reverse`, `trip/count`, `output/last`,
# `openvino/loop5`.

# %%
# %matplotlib inline
import pathlib
import numpy as np
import matplotlib.pyplot as plt
import onnx, onnx.parser, onnx.printer
import onnxruntime                       # section 2 replays one case on it, in a child process
import openvino                          # section 3 runs one case on it, in a child process
import lazyloop as ll
import lazyloop.onnx
import lazyloop.difftest as dt
from lazyloop import teach
from lazyloop.teach import campaign, planted

DATA = pathlib.Path("data")
reports = {name: campaign.load_report(DATA / name / "report.json")
           for name in ("planted", "onnxruntime", "openvino")}
for name, r in reports.items():
    p, b = r["programs"], r["backend"]
    version = f" {b['version']}" if b["version"] else ""
    print(f"{name:<12} {b['name']}{version}, seed {r['seed']}: {p['generated']} "
          f"programs, {p['run']} run, {p['agreed']} agree; {len(r.findings)} findings")
    print(f"{'':<12} `{r['invocation']}`")


def show(f, actual=None):
    """A finding: its root cause, what differs, the minimal program, the feeds, expected and
    (when given) actual values."""
    print("root cause:", f["root_cause"])
    print("difference:", "; ".join(f["differences"]))
    if f["error"]:
        print("backend error:", f["error"].split("Status Message:")[-1].strip()[:160])
    print("explained by ambiguity:", f["ambiguity"] or "none")
    model = campaign.load_model(f)
    print("\nminimal program:")
    print(onnx.printer.to_text(model.graph) if isinstance(model, onnx.ModelProto)
          else teach.openvino_outline(model))
    print("feeds:")
    for k, v in f.feeds.items():
        print(f"  {k} = {v.tolist()}")
    print("expected (lazyloop; ? = undefined):")
    for k, v in f.expected.items():
        print(f"  {k} = {teach.masked(v, f.defined[k])}")
    if actual is not None:
        print("actual (backend, run again on the case):")
        for k, v in actual.items():
            print(f"  {k} = {v.tolist()}")


# %% [markdown]
# ## The outcomes at a glance
#
# Every generated program ends in one way on the backend: it agrees with lazyloop, it
# disagrees (other values or an error), the backend's process crashes or hangs, or the
# backend refuses it as unsupported. The report counts these per campaign (`outcomes`); it
# does not break them down by kind of program.

# %%
campaign.plot_outcomes(reports);

# %% [markdown]
# ## 1. Planted faults
#
# To see the machinery work on bugs we know, the first campaign ran a **plug-in backend**:
# `lazyloop check --backend lazyloop.teach.planted:two_faults` names a factory as
# `module:factory`. A backend is just an object with a `name`, a `format` and
# `run(model, feeds)`; this one is lazyloop's own ONNX frontend (correct by construction)
# behind two rewrites of the model: every ONNX `Loop` with a trip count `M` runs `M + 1` trips
# (`dt.TripCountPlusOne`), and every `Scan` reads its scan inputs front to back, whatever
# `scan_input_directions` says. The campaign generated `Loop` and `Scan` programs only
# (`--kind onnx-loop --kind onnx-scan9`).
#
# Two faults, two findings: their root-cause keys differ in the loop construct and in the
# rules that decide the trips and what each reads.

# %%
two_faults = planted.two_faults()
by_construct = {f.key[1]: f for f in reports["planted"].findings}
assert set(by_construct) == {("Loop",), ("Scan",)}   # two findings, told apart
loop_f, scan_f = by_construct[("Loop",)], by_construct[("Scan",)]
for f in (loop_f, scan_f):
    print(f"{f['root_cause']}\n   {f['occurrences']} programs, first after {f['found_after']}; "
          f"differences: {f['differences']}")

# %%
loop_actual = campaign.actual(loop_f, two_faults)
show(loop_f, loop_actual)
(out,) = loop_f.expected
assert len(loop_actual[out]) == len(loop_f.expected[out]) + 1   # one element per trip, one more

# %% [markdown]
# The minimal program is about as small as an ONNX `Loop` gets: a constant trip count `M`, a
# condition that stays true, and the iteration number, as a float, returned as a scan output.
# lazyloop stacks one element per trip; the backend returns one more. Expected against actual,
# with lazyloop's undefined positions (none here) hatched:

# %%
campaign.plot_expected_actual(loop_f, loop_actual, title="planted fault: a scan output",
                              xlabel="trip (axis 0 of the scan output)");

# %% [markdown]
# The same fault also changes carried values, in programs without a scan output (exercise 7.2
# shows one). It is still one finding: the root-cause key says *wrong result* for any
# difference in values, shapes or dtypes, so the programs that showed a longer scan output and
# those that showed another final value count together in the finding's `occurrences`.
#
# lazyloop's side of a finding can be replayed at any time: the case folder holds the minimal
# program, its feeds and lazyloop's expected outputs, and today's lazyloop must still give
# them. Its lowering and its forcing trace show where the answer comes from: the `COUNT` limit
# is fed by `M`, and the stacked output has one element per trip.

# %%
run = campaign.replay(loop_f)
assert campaign.still_expected(loop_f, run)
ev = run.evaluation
teach.draw_plan(ev.plan, title="the minimal program, lowered");
teach.plot_trace(ev, title=f"its forcing trace: n = {len(loop_f.expected[out])}");

# %% [markdown]
# ### The rules that decide
#
# A minimal program still exercises a dozen rules (the finding's `rules`); most of them cannot
# tell the two answers apart. The root-cause key keeps only those that decide how many trips
# run and what each trip reads. For the `Loop` they are `onnx/loop` — its lowering feeds `M` to
# a `COUNT` limit and the carried condition to a `WHILE` limit — and `trip/both`:
# `n = min(M, first false)`; the condition stays true, so `n = M`.

# %%
assert loop_f.key[2] == ("onnx/loop", "trip/both")
print(teach.rule_text("trip/both", max_lines=8))

# %% [markdown]
# The `Scan` finding is the other fault. Its key names `iterator/reverse`: the minimal program
# scans its input in reverse (`scan_input_directions: ints = [1]`) and stacks each element,
# doubled. lazyloop reads the rows last to first; the backend read them first to last, so its
# output holds the same rows in the opposite order.

# %%
scan_actual = campaign.actual(scan_f, two_faults)
show(scan_f, scan_actual)
(out_s,) = scan_f.expected
assert "iterator/reverse" in scan_f.key[2]
assert np.array_equal(scan_actual[out_s], scan_f.expected[out_s][::-1])
campaign.plot_expected_actual(scan_f, scan_actual, title="planted fault: a reversed scan input",
                              ylabel="trip (axis 0 of the scan output)",
                              xlabel="position in the element (axis 1)");

# %%
print(teach.rule_text("iterator/reverse", max_lines=14))

# %% [markdown]
# ## 2. onnxruntime
#
# The real thing, with every kind of program onnxruntime accepts. The table lists every
# finding of the three campaigns as its report states it: what went wrong, the control rules
# of its root-cause key — the rules that decide the trips and what each reads, the ones to
# read first when judging who is right — and the register entry (with its rule) that
# explains it, if one does.

# %%
campaign.print_rule_table(reports)

# %%
ort = reports["onnxruntime"]
zero_length = [f for f in ort.findings if f["kind"] == "onnx-scan9"]
assert len(zero_length) == 2 and all(0 in f.feeds["x0"].shape for f in zero_length)
axes_of = {f["crash_signal"] or "error": campaign.load_model(f).graph.node[0] for f in zero_length}
scan_axes = {k: [a.ints[0] for a in node.attribute if a.name == "scan_input_axes"]
             for k, node in axes_of.items()}
assert scan_axes == {"SIGFPE": [1], "error": [0]}
scan8 = [f for f in ort.findings if f["kind"] == "onnx-scan8"]
assert len(scan8) == 1 and scan8[0]["ambiguity"] == "A14"
scan_if = [f for f in ort.findings if f["kind"] == "onnx-scan-if"]
slicer = "ort_value_tensor_slicer"
assert len(scan_if) == 1 and slicer in scan_if[0]["error"] and scan_if[0].key[1] == ("If", "Scan")
first = min(zero_length, key=lambda f: f["crash_signal"] is not None)
show(first)

# %% [markdown]
# Replayed on lazyloop, with its trace: the `Scan` lowers to a loop with `COUNT(L)`, `L = 0` the
# extent of the scan axis, so no trip runs; the state's only forced element is element 0, its
# initial value, which `LAST_VALUE` returns (`output/last`).

# %%
run0 = campaign.replay(first)
assert campaign.still_expected(first, run0)
teach.print_trace(run0.evaluation)
teach.plot_trace(run0.evaluation, title="a Scan over zero rows: n = 0");

# %% [markdown]
# Two of the findings are a `Scan` over a sequence of length **zero**: lazyloop returns the
# initial state; onnxruntime fails while slicing the empty input when the scan axis is 0, and
# its process dies of a floating point exception (`SIGFPE`, the report's `crash_signal`) when
# the scan axis is 1. A third shows the same slicing error from a `Scan` whose body holds an
# `If`: the key keeps it apart, since its loop constructs differ — the key errs on the side of
# two findings where a reader may see one. The fourth, a Scan 8 `sequence_lens` entry of 0, is
# refused by onnxruntime and explained by register entry A14. Zero trips are not a corner the
# specification forgot: `trip/count` allows `n = 0`, `output/last` says a recurrence's last
# value after zero trips is its initial value, and `onnx/scan9` spells it out for `Scan`:

# %%
print(teach.rule_text("onnx/scan9", max_lines=18))

# %% [markdown]
# The minimal case, replayed by hand on the onnxruntime installed here, in a child process
# (`dt.Isolated`) so that a crash is a result and not the end of this notebook. This is what
# would go into a bug report (each case folder also holds a `repro.py` that needs only numpy,
# onnx and onnxruntime):

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
ort_backend = dt.Isolated("onnxruntime")
try:
    print("onnxruntime:", ort_backend.run(zero_length_scan, feeds))
except Exception as err:
    print("onnxruntime:", type(err).__name__, str(err).split("Status Message:")[-1].strip()[:110])
finally:
    ort_backend.close()

# %% [markdown]
# ## 3. OpenVINO's CPU plugin
#
# The third campaign ran OpenVINO `Loop-5` programs and core programs exported to `Loop-5`.
# Most of its findings are errors while loading or running valid models, and crashes of the
# plugin's process; one carries a register ID: an alternative reading of that entry makes
# lazyloop agree with the plugin. That is a place where OpenVINO's own sources do not say the
# same thing — here a loop whose execution condition is a constant false runs zero trips, and
# the plugin returns the shape its shape inference declares rather than what zero trips produce.

# %%
ov = reports["openvino"]
assert {f["kind"] for f in ov.findings} <= {"openvino-loop", "core"}
errors = [f for f in ov.findings if f.key[3].startswith("error:")]
assert len(errors) > len(ov.findings) / 2
print(f"{len(errors)} of {len(ov.findings)} findings are errors, crashes among them")
print("crash signals:", sorted({f["crash_signal"] for f in ov.findings if f["crash_signal"]}))
(ov_finding,) = [f for f in ov.findings if f["ambiguity"]]
assert ov_finding["ambiguity"] == "A22"
condition = [op for op in campaign.load_model(ov_finding).get_ordered_ops()
             if op.get_type_name() == "Constant"]
assert [bool(op.get_data()) for op in condition] == [False]   # the execution condition
ov_backend = dt.Isolated("openvino")
try:
    ov_actual = campaign.actual(ov_finding, ov_backend)
finally:
    ov_backend.close()
show(ov_finding, ov_actual)
print()
teach.show_ambiguity("A22")

# %%
campaign.plot_expected_actual(ov_finding, ov_actual,
                              title="OpenVINO: an undefined value against an empty one");

# %% [markdown]
# ## How far the shrinker got
#
# Each finding was first met in a larger program, `found_after` programs into the campaign;
# hypothesis then tried smaller variants, keeping those that still fail the same way, within a
# budget of steps (`shrinking` says why it stopped: `complete`, or a budget spent). The report
# records where shrinking ended, not the programs it met on the way; the minimal program's size
# (its nodes, nested graphs included) is counted here from the case folder.


# %%
def size(model):
    if not isinstance(model, onnx.ModelProto):
        return len(model.get_ordered_ops())
    count = lambda g: sum(1 + sum(count(a.g) for a in n.attribute if a.HasField("g"))
                          for n in g.node)
    return count(model.graph)


print(f"{'campaign':<12} {'kind':<14} {'found after':>11} {'occurrences':>11}  "
      f"{'shrinking':<9} minimal size")
for name, r in reports.items():
    for f in r.findings:
        nodes = size(campaign.load_model(f)) if f.case else "(case not kept)"
        print(f"{name:<12} {f['kind']:<14} {f['found_after']:>11} {f['occurrences']:>11}  "
              f"{f['shrinking']:<9} {nodes}")

# %% [markdown]
# To run a campaign of your own from the command line, with the report and the minimal cases
# written to disk (`lazyloop run CASE_DIR --backend onnxruntime` re-runs one case):
#
#     lazyloop check --backend onnxruntime --examples 200 --seed 0 --out out/onnxruntime
#
# ## Exercises: predict, then check
#
# Each ✎ cell ships as `answer = ...`: replace `...` with your prediction and run the check cell.
# A wrong answer gets a hint naming the rule; a right one shows the evidence.
#
# **Exercise 7.1.** The zero-length `Scan` above, fed `s = [-0.5, 3.0]` and an `x` that still has
# no rows: what must `s_final` be? A list of two numbers.

# %%
# ✎ Exercise 7.1: a list of two numbers
answer_1 = ...

# %%
if teach.exercise("07.1", answer_1):
    feeds_1 = {"s": np.array([-0.5, 3.0], np.float32), "x": np.zeros((0, 2), np.float32)}
    print("lazyloop:", lazyloop.onnx.evaluate(zero_length_scan, feeds_1)["s_final"])

# %% [markdown]
# **Exercise 7.2 — spot the bug.** Here is a program run on the planted-fault backend, as a
# reviewer would receive it, with no word about the fault: a `Loop` with a carried value and
# no scan output. Which side is right, and how many trips did the backend's answer take?
# Answer with a dict `{"right": "lazyloop" or "backend", "backend_trips": n}`.

# %%
carried = onnx.parser.parse_model("""
<ir_version: 8, opset_import: ["" : 17]>
carried (int64 M, bool cond, float v0) => (float c_final) {
   c_final = Loop (M, cond, v0) <body = body (int64 i, bool cond_in, float c_in)
                                            => (bool cond_out, float c_out) {
      cond_out = Identity (cond_in)
      i_f = Cast <to = 1> (i)
      t = Add (c_in, i_f)
      c_out = Tanh (t)
   }>
}
""")
carried_feeds = {"M": np.array(2, np.int64), "cond": np.array(True), "v0": np.array(-1.0, np.float32)}
print("feeds:", {k: v.tolist() for k, v in carried_feeds.items()})
print("expected (lazyloop):", lazyloop.onnx.evaluate(carried, carried_feeds))
carried_actual = two_faults.run(carried, carried_feeds)
print("actual (backend):   ", carried_actual)

# %%
# ✎ Exercise 7.2: {"right": ..., "backend_trips": ...}
answer_2 = ...

# %%
if teach.exercise("07.2", answer_2):
    c = carried_feeds["v0"]
    for i in range(3):                    # the body, c <- tanh(c + i), trip by trip
        c = np.tanh(c + np.float32(i))
        print(f"after trip {i}: c = {c:.7f}")
    assert np.isclose(carried_actual["c_final"], c)   # the backend's value: three trips
    print("trip count M =", int(carried_feeds["M"]), "and the condition stays true: `trip/both`")

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
