"""`python -m lazyloop.bench` (and `lazyloop bench`): how fast and how lean the evaluators are.

Every figure is measured side by side with its baseline in the same run and quoted as a
ratio, since absolute times drift on shared machines (DESIGN §7):

(a) a scalar counter loop (int32 recurrence + add, COUNT limit, LAST_VALUE) per trip, through
    `ll.evaluate` (the per-trip schedule) and `ll.run` (the reference evaluator), against a
    hand-written numpy `for` loop calling the same kernel (np.add) per trip;
(b) an LSTM built with loop layers (`lazyloop.models`) through `ll.evaluate`, against
    `numpy_lstm`, the same LSTM as a numpy `for` loop;
(c) the peak memory (tracemalloc) of a loop carrying a 64 KiB float32 state with a
    LAST_VALUE output, at two trip counts ten times apart: the fast path keeps a fixed window
    of elements, so its peak does not grow with the trip count; the reference evaluator
    keeps every element (shown for contrast);
(d) an ONNX Loop through `lazyloop.onnx.evaluate`, onnx's ReferenceEvaluator and
    onnxruntime, when those are available.

Options: --quick (small sizes, for tests), --json FILE (the rows as JSON), --only SECTION.
Nothing here asserts a timing; the table says which targets were met. The LSTM ratio depends
on how the BLAS library threads its matrix products, and swings widely on a busy machine;
`OPENBLAS_NUM_THREADS=1 python -m lazyloop.bench` measures both sides on one core (the
setting of DESIGN §7).
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import sys
import time
import tracemalloc
from typing import List, Optional

import attrs
import numpy as np


from .core.enums import ElementWiseOperation, LoopOutput, TripLimit
from .core.evaluate import evaluate as ll_eval, run as ll_run
from .models import LSTMWeights, lstm_network, numpy_lstm
from .core.network import Network

FULL = dict(counter_trips=100_000, counter_repeats=5, reference_trips=100_000,
            lstm_hidden=256, lstm_batch=16, lstm_steps=256, lstm_repeats=5,
            state_elements=16_384, memory_trips=(100_000, 10_000), reference_memory_trips=10_000,
            onnx_trips=10_000, onnx_repeats=3)
QUICK = dict(counter_trips=2_000, counter_repeats=1, reference_trips=2_000,
             lstm_hidden=16, lstm_batch=2, lstm_steps=8, lstm_repeats=1,
             state_elements=1_024, memory_trips=(2_000, 200), reference_memory_trips=200,
             onnx_trips=200, onnx_repeats=1)


@attrs.define
class Row:
    """One line of the table. `ratio` is lazyloop over the baseline for times and memory
    (lower is better), the baseline over lazyloop for speed-ups (`higher` = True)."""
    key: str
    case: str
    measured: str
    baseline: str
    ratio: Optional[float] = None
    target: Optional[float] = None
    higher: bool = False
    note: str = ""
    values: dict = attrs.field(factory=dict)
    judged: bool = True  # False in --quick runs: sizes too small for the targets to mean much

    @property
    def met(self) -> Optional[bool]:
        if self.ratio is None or self.target is None or not self.judged:
            return None
        return self.ratio >= self.target if self.higher else self.ratio <= self.target

    def target_text(self) -> str:
        if self.target is None:
            return "(info)"
        return f"{'>=' if self.higher else '<='} {self.target:g}x"

    def as_dict(self):
        d = attrs.asdict(self)
        d["met"] = self.met
        d["target_text"] = self.target_text()
        return d


# ------------------------------------------------------------------------------------------
# Measuring
# ------------------------------------------------------------------------------------------

def best_time(fn, repeats: int) -> float:
    """The best of `repeats` wall-clock times of fn() (garbage collection off while timing)."""
    best = float("inf")
    for _ in range(max(1, repeats)):
        gc.collect()
        was = gc.isenabled()
        gc.disable()
        try:
            start = time.perf_counter()
            fn()
            best = min(best, time.perf_counter() - start)
        finally:
            if was:
                gc.enable()
    return best


def peak_memory(fn) -> int:
    """Peak bytes traced by tracemalloc while fn() runs, above what was live before it."""
    gc.collect()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        fn()
        return tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()


def us(seconds: float) -> str:
    return f"{seconds * 1e6:.2f} us"


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:.1f} ms"


def kib(nbytes: int) -> str:
    return f"{nbytes / 1024:,.0f} KiB" if nbytes < 10 * 2 ** 20 else f"{nbytes / 2 ** 20:,.0f} MiB"


# ------------------------------------------------------------------------------------------
# (a) the scalar counter
# ------------------------------------------------------------------------------------------

def counter_network(trips: int) -> Network:
    """i = 0; repeat `trips` times: i = i + 1; output LAST_VALUE(i) (= trips)."""
    net = Network()
    count = net.add_constant((), np.array(trips, np.int32)).get_output(0)
    zero = net.add_constant((), np.array(0, np.int32)).get_output(0)
    one = net.add_constant((), np.array(1, np.int32)).get_output(0)
    loop = net.add_loop()
    loop.add_trip_limit(count, TripLimit.COUNT)
    i = loop.add_recurrence(zero)
    i_next = net.add_elementwise(i.get_output(0), one, ElementWiseOperation.SUM).get_output(0)
    i.set_input(1, i_next)
    out = loop.add_loop_output(i.get_output(0), LoopOutput.LAST_VALUE)
    out.get_output(0).name = "i"
    net.mark_output(out.get_output(0))
    return net


def numpy_counter(trips: int):
    """The same work by hand: one np.add per trip on int32 values."""
    i = np.array(0, np.int32)
    one = np.array(1, np.int32)
    for _ in range(trips):
        i = np.add(i, one)
    return i


def bench_counter(cfg) -> List[Row]:
    trips = cfg["counter_trips"]
    net = counter_network(trips)
    results = {}

    def fast():
        results["fast"] = ll_eval(net, {})["i"]

    def by_hand():
        results["numpy"] = numpy_counter(trips)

    t_numpy = t_fast = float("inf")
    for _ in range(cfg["counter_repeats"]):  # interleaved, so drift hits both alike
        t_numpy = min(t_numpy, best_time(by_hand, 1))
        t_fast = min(t_fast, best_time(fast, 1))
    ref_trips = cfg["reference_trips"]
    ref_net = counter_network(ref_trips)
    t_ref = best_time(lambda: results.__setitem__(
        "ref", ll_run(ref_net, {}, trace=False).outputs["i"]), 1)
    assert int(results["fast"]) == int(results["numpy"]) == trips
    assert int(results["ref"]) == ref_trips
    per_numpy, per_fast, per_ref = t_numpy / trips, t_fast / trips, t_ref / ref_trips
    case = f"counter, {trips:,} trips, per trip"
    return [
        Row("a1", f"{case}: ll.evaluate", us(per_fast), f"{us(per_numpy)} numpy for",
            per_fast / per_numpy, 4.0,
            values=dict(trips=trips, evaluate_s=t_fast, numpy_s=t_numpy)),
        Row("a2", f"counter, {ref_trips:,} trips, per trip: ll.run", us(per_ref),
            f"{us(per_numpy)} numpy for", per_ref / per_numpy, None,
            note="reference evaluator, trace=False",
            values=dict(trips=ref_trips, run_s=t_ref)),
    ]


# ------------------------------------------------------------------------------------------
# (b) the LSTM
# ------------------------------------------------------------------------------------------

def bench_lstm(cfg) -> List[Row]:
    hidden, batch, steps = cfg["lstm_hidden"], cfg["lstm_batch"], cfg["lstm_steps"]
    weights = LSTMWeights.random(hidden, hidden, seed=0, scale=0.1)
    rng = np.random.default_rng(1)
    feeds = {"x": rng.standard_normal((steps, batch, hidden)).astype(np.float32),
             "h0": np.zeros((batch, hidden), np.float32),
             "c0": np.zeros((batch, hidden), np.float32)}
    net = lstm_network(steps, batch, weights)
    results = {}

    def fast():
        results["fast"] = ll_eval(net, feeds)

    def by_hand():
        results["numpy"] = numpy_lstm(feeds["x"], weights, feeds["h0"], feeds["c0"])

    t_numpy = t_fast = float("inf")
    for _ in range(cfg["lstm_repeats"]):
        t_numpy = min(t_numpy, best_time(by_hand, 1))
        t_fast = min(t_fast, best_time(fast, 1))
    np.testing.assert_allclose(results["fast"]["sequence"], results["numpy"][0],
                               rtol=1e-4, atol=1e-4)
    return [Row("b1", f"LSTM hidden {hidden}, batch {batch}, {steps} steps: ll.evaluate",
                ms(t_fast), f"{ms(t_numpy)} numpy_lstm", t_fast / t_numpy, 1.5,
                values=dict(evaluate_s=t_fast, numpy_s=t_numpy,
                            per_step_overhead_us=(t_fast - t_numpy) / steps * 1e6))]


# ------------------------------------------------------------------------------------------
# (c) memory against trip count
# ------------------------------------------------------------------------------------------

def state_network(trips: int, elements: int) -> Network:
    """s = zeros(elements) float32; repeat `trips` times: s = s + 1; output LAST_VALUE(s)."""
    net = Network()
    count = net.add_constant((), np.array(trips, np.int32)).get_output(0)
    start = net.add_constant((elements,), np.zeros(elements, np.float32)).get_output(0)
    ones = net.add_constant((elements,), np.ones(elements, np.float32)).get_output(0)
    loop = net.add_loop()
    loop.add_trip_limit(count, TripLimit.COUNT)
    s = loop.add_recurrence(start)
    s.set_input(1, net.add_elementwise(s.get_output(0), ones,
                                       ElementWiseOperation.SUM).get_output(0))
    out = loop.add_loop_output(s.get_output(0), LoopOutput.LAST_VALUE)
    out.get_output(0).name = "s"
    net.mark_output(out.get_output(0))
    return net


def bench_memory(cfg) -> List[Row]:
    elements = cfg["state_elements"]
    state = elements * 4
    many, few = cfg["memory_trips"]
    peaks = {}
    for trips in (many, few):
        net = state_network(trips, elements)
        box = {}
        peaks[trips] = peak_memory(lambda: box.__setitem__("s", ll_eval(net, {})["s"]))
        assert float(box["s"][0]) == trips
    ref_trips = cfg["reference_memory_trips"]
    ref_net = state_network(ref_trips, elements)
    box = {}
    ref_peak = peak_memory(lambda: box.__setitem__(
        "s", ll_run(ref_net, {}, trace=False).outputs["s"]))
    assert float(box["s"][0]) == ref_trips
    fast_at_ref = peaks.get(ref_trips) or peaks[few]
    what = f"{kib(state)} state"
    return [
        Row("c1", f"{what}, peak at {many:,} trips: ll.evaluate", kib(peaks[many]),
            f"{kib(peaks[few])} at {few:,} trips", peaks[many] / peaks[few], 1.25,
            note=f"{peaks[many] / state:.1f} states live at the peak",
            values=dict(state_bytes=state, peak_many=peaks[many], peak_few=peaks[few])),
        Row("c2", f"{what}, peak at {ref_trips:,} trips: ll.run", kib(ref_peak),
            f"{kib(fast_at_ref)} ll.evaluate", ref_peak / fast_at_ref, None,
            note="the reference keeps every element",
            values=dict(reference_peak=ref_peak)),
    ]


# ------------------------------------------------------------------------------------------
# (d) ONNX Loop
# ------------------------------------------------------------------------------------------

def counter_onnx_model(trips: int):
    """An ONNX Loop of `trips` trips carrying an int32 counter (v = v + 1), and its feeds."""
    from onnx import TensorProto, helper
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Constant", [], ["one"], value=helper.make_tensor(
             "one_value", TensorProto.INT32, [], [1])),
         helper.make_node("Add", ["v_in", "one"], ["v_out"])],
        "body",
        [helper.make_tensor_value_info("iter", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v_in", TensorProto.INT32, [])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v_out", TensorProto.INT32, [])])
    graph = helper.make_graph(
        [helper.make_node("Loop", ["M", "cond", "v0"], ["v"], body=body)],
        "counter",
        [helper.make_tensor_value_info("M", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v0", TensorProto.INT32, [])],
        [helper.make_tensor_value_info("v", TensorProto.INT32, [])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    model.ir_version = 10
    feeds = {"M": np.array(trips, np.int64), "cond": np.array(True), "v0": np.array(0, np.int32)}
    return model, feeds


def onnx_case(trips):
    """(model, feeds, lazyloop.onnx module or None, where the model came from)."""
    try:
        from . import onnx as ll_onnx
    except ImportError:
        ll_onnx = None
    if ll_onnx is not None:
        from .models import bench_feeds, bench_loop_model
        return bench_loop_model(trips), bench_feeds(), ll_onnx, "lazyloop.models.bench_loop_model"
    model, feeds = counter_onnx_model(trips)
    return model, feeds, ll_onnx, "lazyloop.bench.counter_onnx_model"


def bench_onnx(cfg) -> List[Row]:
    trips = cfg["onnx_trips"]
    try:
        import onnx  # noqa: F401
        from onnx.reference import ReferenceEvaluator
    except ImportError:
        return [Row("d", f"ONNX Loop, {trips:,} trips", "skipped", "onnx is not installed")]
    model, feeds, ll_onnx, origin = onnx_case(trips)
    repeats = cfg["onnx_repeats"]
    reference = ReferenceEvaluator(model)
    results = {}
    t_ref = best_time(lambda: results.__setitem__("reference", reference.run(None, feeds)), repeats)
    t_ort = None
    try:
        import onnxruntime as ort
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        session = ort.InferenceSession(model.SerializeToString(), options,
                                       providers=["CPUExecutionProvider"])
        t_ort = best_time(lambda: results.__setitem__("ort", session.run(None, feeds)), repeats)
    except ImportError:
        pass
    rows = []
    name = f"ONNX Loop, {trips:,} trips"
    if ll_onnx is None or not hasattr(ll_onnx, "evaluate"):
        rows.append(Row("d1", f"{name}: lazyloop.onnx", "skipped",
                        f"{us(t_ref / trips)}/trip ReferenceEvaluator",
                        note="lazyloop.onnx is not available yet"))
    else:
        t_ll = best_time(lambda: results.__setitem__("lazyloop", ll_onnx.evaluate(model, feeds)),
                         repeats)
        expected = results["reference"][0]
        got = list(results["lazyloop"].values())[0]
        agree = np.array_equal(np.asarray(got), np.asarray(expected))
        rows.append(Row("d1", f"{name}: lazyloop.onnx.evaluate", f"{us(t_ll / trips)}/trip",
                        f"{us(t_ref / trips)}/trip ReferenceEvaluator", t_ref / t_ll, 5.0,
                        higher=True, note=("" if agree else "RESULTS DIFFER ") + f"model: {origin}",
                        values=dict(lazyloop_s=t_ll, reference_s=t_ref, agree=bool(agree))))
        if t_ort is not None:
            rows.append(Row("d2", f"{name}: lazyloop.onnx vs onnxruntime",
                            f"{us(t_ll / trips)}/trip", f"{us(t_ort / trips)}/trip onnxruntime",
                            t_ll / t_ort, None, values=dict(onnxruntime_s=t_ort)))
    if t_ort is not None and "lazyloop" not in results:
        rows.append(Row("d2", f"{name}: onnxruntime (for scale)", f"{us(t_ort / trips)}/trip",
                        f"{us(t_ref / trips)}/trip ReferenceEvaluator", t_ref / t_ort, None,
                        higher=True, values=dict(onnxruntime_s=t_ort, reference_s=t_ref)))
    return rows


# ------------------------------------------------------------------------------------------
# The table and the command
# ------------------------------------------------------------------------------------------

def render(rows: List[Row], title: str) -> str:
    header = ("", "case", "lazyloop", "baseline", "ratio", "target", "met")
    def verdict(r):
        if r.target is not None and r.ratio is not None and not r.judged:
            return "n/a (quick)"
        return {True: "yes", False: "NO", None: "-"}[r.met]
    lines = [[r.key, r.case, r.measured, r.baseline,
              "-" if r.ratio is None else f"{r.ratio:.2f}x", r.target_text(), verdict(r)]
             for r in rows]
    widths = [max(len(str(x)) for x in col) for col in zip(header, *lines)]

    def fmt(cells):
        return "  ".join(str(c).ljust(w) for c, w in zip(cells, widths)).rstrip()
    out = [title, fmt(header), fmt(["-" * w for w in widths])]
    out += [fmt(line) for line in lines]
    notes = [f"  {r.key}: {r.note}" for r in rows if r.note]
    if notes:
        out += ["notes:"] + notes
    out.append("ratios: time or memory of lazyloop over the baseline (lower is better), except "
               "'>=' targets, which are speed-ups (baseline time over lazyloop time).")
    return "\n".join(out)


def machine_load():
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):  # not available on every platform
        return None


SECTIONS = {"counter": bench_counter, "lstm": bench_lstm, "memory": bench_memory,
            "onnx": bench_onnx}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="lazyloop bench", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (seconds, for tests)")
    parser.add_argument("--json", metavar="FILE", help="also write the rows as JSON")
    parser.add_argument("--only", choices=sorted(SECTIONS), action="append",
                        help="run only these sections (repeatable)")
    args = parser.parse_args(argv)
    cfg = QUICK if args.quick else FULL
    load_before = machine_load()
    rows: List[Row] = []
    for name, section in SECTIONS.items():
        if args.only and name not in args.only:
            continue
        rows.extend(section(cfg))
    for row in rows:
        row.judged = not args.quick
    load = (load_before, machine_load())
    mode = "quick" if args.quick else "full"
    title = (f"lazyloop bench ({mode}) -- Python {platform.python_version()}, numpy "
             f"{np.__version__}; times are the best of repeated runs measured side by side")
    text = render(rows, title)
    if load[0] is not None:
        cores = os.cpu_count() or 1
        text += (f"\nmachine: {cores} cores, 1-minute load average {load[0]:.1f} before and "
                 f"{load[1]:.1f} after the run")
        if max(load) > cores / 2:
            text += ("\nWARNING: the machine was busy; ratios that involve BLAS (the LSTM) "
                     "swing widely under load -- run again on a quiet machine")
    print(text)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"mode": mode, "config": cfg, "python": platform.python_version(),
                       "load_average": load, "cpu_count": os.cpu_count(),
                       "numpy": np.__version__, "rows": [r.as_dict() for r in rows]},
                      fh, indent=2, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
