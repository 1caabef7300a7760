"""Benchmark section (v): lazyloop side by side with onnxruntime and onnx's ReferenceEvaluator,
in one run, on the loops of `versus_models` -- a scalar counter, a 10-op body, a cumulative
sum Scan, a map-like Scan (per row Tanh(MatMul(x_t, W))), an elementwise map over an
iterator, nested Loops, an LSTM-like Scan, a Loop of M = 2^63-1 that reaches a fixed
point (`laziness/fixed-point`), generated core programs evaluated per second (the work a
differential campaign asks of its oracle), and the two heavy bodies of the throughput issue
at its sizes (v10, v11: a cumulative sum of 10^4 rows of 256, an LSTM-like Scan of 256
steps, batch 16, hidden 256; target 1.5x onnxruntime per trip).

Each model is lowered once (as an onnxruntime session is built once) and then evaluated;
lazyloop and onnxruntime (one thread) are timed interleaved by the process's CPU time, and
the figure is the median of the repeats; the reference evaluator, which is slow, runs fewer
times. Every result is checked against onnxruntime's before a row is written. The targets
are the issue's; they are printed, never asserted.
"""
from __future__ import annotations

import statistics
import time
from typing import List

import numpy as np

from . import versus_models as vm
from .measure import Row, best_time, ms, us

# (key, case, builder of (model, feeds) from the config, trips per run, target over ORT)
def cases(cfg):
    t, (o, i), steps = cfg["versus_trips"], cfg["versus_nested"], cfg["versus_lstm_steps"]
    return [
        ("v1", f"scalar counter Loop, {t:,} trips", lambda: vm.counter(t), t, 3.0),
        ("v2", f"10-op body Loop, {t:,} trips", lambda: vm.ten_ops(t), t, None),
        ("v3", f"cumulative-sum Scan, {t:,} rows", lambda: vm.cumsum(t), t, None),
        ("v4", f"map-like Scan tanh(x_t W), {t:,} rows", lambda: vm.map_like(t), t, 1.0),
        ("v5", f"elementwise map over an iterator, {t:,} rows", lambda: vm.elementwise_map(t),
         t, 1.0),
        ("v6", f"nested Loops {o} x {i}", lambda: vm.nested(o, i), o * i, 3.0),
        ("v7", f"LSTM-like Scan, {steps:,} steps", lambda: vm.lstm_like(steps), steps, None),
    ]


def heavy_cases(cfg):
    """The heavy bodies of the throughput issue (#24), at its sizes: per-trip cost within
    1.5x of onnxruntime's."""
    rows, width, (steps, batch, hidden) = cfg["versus_heavy"]
    return [
        ("v10", f"cumulative-sum Scan, {rows:,} rows of {width}",
         lambda: vm.cumsum(rows, width), rows, 1.5),
        ("v11", f"LSTM-like Scan, {steps:,} steps, batch {batch}, hidden {hidden}",
         lambda: vm.lstm_like(steps, batch, hidden), steps, 1.5),
    ]


#: what a call costs: the process's CPU time (as section r measures, `corpus.CLOCK`): every
#: side runs on the calling thread, and on a shared machine wall time also counts the other
#: processes that ran meanwhile, more often during a long call than a short one
CLOCK = time.process_time


def _timed(fn):
    start = CLOCK()
    value = fn()
    return CLOCK() - start, value


def _agree(a, b):
    return all(np.allclose(np.asarray(x), np.asarray(y), rtol=1e-4, atol=1e-5)
               for x, y in zip(a, b))


def _session(model):
    try:
        import onnxruntime as ort
    except ImportError:
        return None
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    return ort.InferenceSession(model.SerializeToString(), options,
                                providers=["CPUExecutionProvider"])


def measure_case(model, feeds, repeats, reference_repeats):
    """Median seconds of lazyloop, onnxruntime (None if absent) and the reference evaluator,
    and whether their results agree."""
    from onnx.reference import ReferenceEvaluator

    from .. import onnx as ll_onnx
    lowered = ll_onnx.lower(model)
    session = _session(model)
    t_ll, t_ort = [], []
    got = want = None
    ll_onnx.evaluate(lowered, feeds)  # warm, as section r warms both sides: the first
    if session is not None:  # evaluation plans and compiles, a session's first run sets up
        session.run(None, feeds)
    for _ in range(repeats):
        dt, out = _timed(lambda: ll_onnx.evaluate(lowered, feeds))
        t_ll.append(dt)
        got = list(out.values())
        if session is not None:
            dt, want = _timed(lambda: session.run(None, feeds))
            t_ort.append(dt)
    reference = ReferenceEvaluator(model)
    t_ref = []
    for _ in range(reference_repeats):
        dt, ref_out = _timed(lambda: reference.run(None, feeds))
        t_ref.append(dt)
    agree = _agree(got, ref_out) and (want is None or _agree(got, want))
    med = statistics.median
    return med(t_ll), (med(t_ort) if t_ort else None), med(t_ref), agree


def how_much_faster(speedup: float) -> str:
    """A speed-up in words: "14.3x faster", or for less than 1, "2.5x slower"."""
    return f"{speedup:.1f}x faster" if speedup >= 1 else f"{1 / speedup:.1f}x slower"


def bench_versus(cfg) -> List[Row]:
    try:
        import onnx  # noqa: F401
    except ImportError:
        return [Row("v", "lazyloop vs onnxruntime", "skipped", "onnx is not installed")]
    rows = [case_row(cfg, *case) for case in cases(cfg)]
    rows.append(bench_fixed_point())
    rows.append(bench_programs(cfg.get("versus_programs", 100)))
    heavy = dict(cfg, versus_repeats=cfg.get("versus_heavy_repeats", cfg["versus_repeats"]))
    rows += [case_row(heavy, *case) for case in heavy_cases(cfg)]  # short runs: more of them
    rows.append(lstm_floor(heavy))
    return rows


def lstm_floor(cfg) -> Row:
    """v12: v11's trips written straight in numpy (no lazyloop at all; input products batched
    as the engine batches them) against onnxruntime: how near 1.5x any evaluator whose matrix
    products are numpy's can come. Informational: it says what v11's target asks of the
    products, not how lazyloop does."""
    _, _, (steps, batch, hidden) = cfg["versus_heavy"]
    model, feeds = vm.lstm_like(steps, batch, hidden)
    trips = vm.numpy_lstm_like(model, feeds)
    session = _session(model)
    case = f"v11's trips in plain numpy, {steps:,} steps"
    if session is None:
        return Row("v12", case, "skipped", "onnxruntime is not installed")
    session.run(None, feeds)
    t_np, t_ort = [], []
    for _ in range(cfg["versus_repeats"]):
        dt, got = _timed(trips)
        t_np.append(dt)
        dt, want = _timed(lambda: session.run(None, feeds))
        t_ort.append(dt)
    t_np, t_ort = statistics.median(t_np), statistics.median(t_ort)
    agree = _agree(got, want)
    return Row("v12", case, f"{us(t_np / steps)}/trip", f"{us(t_ort / steps)}/trip onnxruntime",
               t_np / t_ort, None, note=("" if agree else "RESULTS DIFFER; ") +
               "numpy's products alone: the floor of v11 for lazyloop's kernels",
               values=dict(numpy_s=t_np, onnxruntime_s=t_ort, trips=steps, agree=bool(agree)))


def case_row(cfg, key, case, build, trips, target) -> Row:
    """One side-by-side row: lazyloop's time per trip over onnxruntime's."""
    model, feeds = build()
    t_ll, t_ort, t_ref, agree = measure_case(model, feeds, cfg["versus_repeats"],
                                             cfg["versus_reference_repeats"])
    note = ("" if agree else "RESULTS DIFFER; ") + (
        f"{how_much_faster(t_ref / t_ll)} than the ReferenceEvaluator "
        f"({us(t_ref / trips)}/trip)")
    if t_ort is None:
        return Row(key, case, f"{us(t_ll / trips)}/trip",
                   f"{us(t_ref / trips)}/trip ReferenceEvaluator", t_ll / t_ref, None,
                   note="onnxruntime is not installed")
    return Row(key, case, f"{us(t_ll / trips)}/trip", f"{us(t_ort / trips)}/trip onnxruntime",
               t_ll / t_ort, target, note=note,
               values=dict(lazyloop_s=t_ll, onnxruntime_s=t_ort, reference_s=t_ref,
                           trips=trips, agree=bool(agree)))


def bench_programs(count: int) -> Row:
    """Generated core programs (the campaigns' oracle work) evaluated per second: the fast
    path against the reference evaluator, on the same `count` programs."""
    try:
        from hypothesis import HealthCheck, given, settings

        from ..strategies import networks
    except ImportError:
        return Row("v9", "generated programs per second", "skipped", "hypothesis is not installed")
    from ..core.errors import LazyLoopError
    from ..core.evaluate import evaluate, run
    programs = []

    @settings(max_examples=count, database=None, derandomize=True, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(networks())
    def collect(program):
        programs.append(program)

    from ..difftest.campaign import hypothesis_files_in_temp
    with hypothesis_files_in_temp():  # nothing left in the current folder
        collect()

    def through(fn):
        def all_programs():
            for program in programs:
                try:
                    fn(program.net, program.feeds)
                except LazyLoopError:
                    pass
        return best_time(all_programs, 3)  # garbage collection off, as for every timing

    through(evaluate)  # compiles every plan once (cached on the network), for both sides
    t_ref = through(lambda net, feeds: run(net, feeds, trace=1))  # the reference evaluator
    t_fast = through(evaluate)
    n = len(programs)
    return Row("v9", f"{n} generated core programs (campaign oracle work)",
               f"{n / t_fast:,.0f} programs/s", f"{n / t_ref:,.0f} programs/s reference (ll.run)",
               t_ref / t_fast, None, higher=True,
               values=dict(programs=n, evaluate_s=t_fast, run_s=t_ref))


def bench_fixed_point() -> Row:
    """A Loop of M = 2^63-1 trips whose carried value is a fixed point after ten trips:
    answered at once (`laziness/fixed-point`); no trip-by-trip runtime can run it."""
    from .. import onnx as ll_onnx
    model, feeds = vm.fixed_point()
    lowered = ll_onnx.lower(model)
    times = []
    for _ in range(3):
        dt, out = _timed(lambda: ll_onnx.evaluate(lowered, feeds))
        times.append(dt)
    t = statistics.median(times)
    value = float(np.asarray(list(out.values())[0]))
    return Row("v8", "Loop M=2^63-1 reaching a fixed point", ms(t), "1.0 ms", t / 1e-3, 10.0,
               note=f"y = {value:g} (expected 10); onnxruntime and the ReferenceEvaluator "
                    "would run 2^63-1 trips (not run)",
               values=dict(lazyloop_s=t, y=value))
