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
    onnxruntime, when those are available;
(e) the differential tester's throughput and costs: per installed backend, programs checked
    per second, the split of the campaign's time (generation, export, lowering, expectation,
    serialisation, transfer, the backend's own run, comparison, ...) and the tester overhead
    (wall time over the backend's own run time, as the ratio; target <= 4x on onnxruntime);
    then 1,000 programs against onnxruntime in one process and on 2 Dask workers
    (`throughput`; target >= 1.6x);
(v) lazyloop side by side with onnxruntime (one thread) and the ReferenceEvaluator on seven
    ONNX loops -- a scalar counter, a 10-op body, a cumulative-sum Scan, a map-like Scan
    (per row tanh(x_t W)), an elementwise map over an iterator, nested 100 x 100 Loops, an
    LSTM-like Scan -- and a Loop of M = 2^63-1 that reaches a fixed point. Targets (the
    speed issue's): map-like Scans and elementwise maps faster than onnxruntime, the scalar
    Loop and nested Loops within 3x of it, the fixed point answered in milliseconds; and
    the throughput issue's heavy bodies at its sizes, a cumulative sum of 10^4 rows of 256
    and an LSTM-like Scan of 256 steps, batch 16, hidden 256 (v10, v11: within 1.5x),
    and v11's trips written straight in numpy (v12: the floor numpy's products set);
(r) lazyloop side by side with onnxruntime (one thread) on every model of the exporter
    corpus (a clone's `tests/corpus`): the geometric mean, median and worst ratio, and how
    many models ran every loop on the engine (`corpus`; targets, issue 25's: geometric mean
    at most 2x, no model worse than 5x).

Options: --quick (small sizes, for tests), --json FILE (the rows as JSON), --only SECTION.
Nothing here asserts a timing; the table says which targets were met. The LSTM ratio depends
on how the BLAS library threads its matrix products, and swings widely on a busy machine;
`OPENBLAS_NUM_THREADS=1 python -m lazyloop.bench` measures both sides on one core (the
setting of DESIGN §7).

The sections live in submodules (`measure`: sizes, rows and measuring helpers; `evaluators`:
sections a-c; `onnx_loop`: section d; `throughput`: section e; `versus` and `versus_models`:
section v; `corpus`: section r); this module holds the table and the command.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
from typing import List

import numpy as np

from .corpus import bench_corpus
from .evaluators import (bench_counter, bench_lstm, bench_memory, counter_network,
                         numpy_counter, state_network)
from .measure import FULL, QUICK, Row, best_time, kib, ms, peak_memory, us
from .onnx_loop import bench_onnx, onnx_case
from .throughput import bench_throughput
from .versus import bench_versus

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
            "onnx": bench_onnx, "throughput": bench_throughput, "versus": bench_versus,
            "corpus": bench_corpus}


def main(argv=None, parser_class=argparse.ArgumentParser) -> int:
    """Run the sections `argv` asks for and print the rows. `parser_class`: the command
    line's parser (`lazyloop bench` hands its own, which answers a mistake with one line)."""
    parser = parser_class(prog="lazyloop bench", description=__doc__.split("\n")[0])
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


__all__ = ["FULL", "QUICK", "Row", "best_time", "peak_memory", "us", "ms", "kib",
           "counter_network", "numpy_counter", "bench_counter", "bench_lstm", "state_network",
           "bench_memory", "onnx_case", "bench_onnx", "bench_throughput", "bench_versus",
           "render",
           "machine_load", "SECTIONS", "main"]
