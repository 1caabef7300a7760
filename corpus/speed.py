"""lazyloop against onnxruntime on the exporter corpus (issue 25): for every committed model,
the ratio of `lazyloop.onnx.evaluate`'s time to onnxruntime's, and whether its loops ran on
the fast path or fell back to the reference machine.

    OPENBLAS_NUM_THREADS=1 python corpus/speed.py                 # every model of tests/corpus
    python corpus/speed.py tests/corpus/jax2onnx/*.onnx           # some of them
    python corpus/speed.py --budget 0.1                           # seconds per model and side

Each model is lowered once (`lazyloop.onnx.lower`) and its onnxruntime session built once (one
intra-op and one inter-op thread); then `lazyloop.onnx.evaluate(lowered, feeds)` and
`session.run` are timed in turns, one call each per round, and each side's figure is the
median of its rounds. The feeds are the corpus case's own (`<case>.npz`). The ratio is
lazyloop's median over onnxruntime's. A model either side cannot run has no ratio and says why.

"Fell back" is read from the machine, as the issue counts it: the elements of loop streams
that `evaluate`'s machine (`lazyloop.core.engine.EngineMachine`) forces through the reference
steps (the step table's `force`) instead of a loop's schedule; more than FELL_BACK of them
means the model's loops ran on the reference machine. The first loop whose demand is not
static (`lazyloop.core.engine.demand`, what `EngineMachine.static_demand` asks) gives the
reason. Both read
lazyloop's core, whose shape may change: when they cannot be read the column says "?".

The core is `corpus_ratios(paths) -> rows`, which a `lazyloop bench` section can call (set
OPENBLAS_NUM_THREADS=1 before numpy is imported there; run as a script, this file does); it
imports only lazyloop, onnx, onnxruntime and numpy. Speed is reported, never asserted.
"""
from __future__ import annotations

import os

if __name__ == "__main__":  # one BLAS thread, set before numpy is imported
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import glob  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from typing import List, Optional  # noqa: E402

import numpy as np  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "tests", "corpus")
FELL_BACK = 50  # reference-forced loop elements above which a model "fell back" (the issue's)


@dataclass(frozen=True)
class Ratio:
    """One model: medians in seconds (None where a side cannot run it), lazyloop over
    onnxruntime, the loop-element count forced by the reference rules, and the first reason
    a loop's demand is not static."""
    case: str
    lazyloop_s: Optional[float]
    onnxruntime_s: Optional[float]
    rounds: int
    reference_elements: Optional[int]
    not_static: str
    error: str = ""

    @property
    def ratio(self) -> Optional[float]:
        if self.lazyloop_s is None or self.onnxruntime_s is None:
            return None
        return self.lazyloop_s / self.onnxruntime_s

    @property
    def fell_back(self) -> Optional[bool]:
        if self.reference_elements is None:
            return None
        return self.reference_elements > FELL_BACK


# ---- one corpus case --------------------------------------------------------------------------

def case_of(path: str) -> str:
    """'exporter/case' for a model of tests/corpus, else the path as given."""
    rel = os.path.relpath(os.path.abspath(path), CORPUS)
    return path if rel.startswith(os.pardir) else rel[:-len(".onnx")].replace(os.sep, "/")


def feeds_and_readings(path: str):
    """The case's feeds (tensors keyed by input name, lists for sequences, None for empty
    optionals) and the readings it is checked under, from `<case>.npz` beside the model, read
    as the corpus test reads them (`tests/corpus_data.py`, which imports numpy only)."""
    if ROOT not in sys.path:
        sys.path.insert(0, ROOT)
    from tests.corpus_data import unpack
    with np.load(path[:-len(".onnx")] + ".npz", allow_pickle=False) as entries:
        meta = json.loads(str(entries["meta"]))
        feeds = unpack(entries, "in", meta["inputs"])
    return feeds, meta["readings"] or None


def session_of(path: str):
    """An onnxruntime session of one intra-op and one inter-op thread, quiet (a model it
    refuses is reported in the row)."""
    import onnxruntime as ort
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.log_severity_level = 4
    return ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])


def interleaved(first, second, budget: float, most: int = 500):
    """Median seconds of `first` and of `second` over rounds that call each once in turn,
    as many rounds as fit in `budget` seconds per side (at least 5, at most `most`)."""
    times = ([], [])
    spent = 0.0
    while len(times[0]) < 5 or (spent < budget and len(times[0]) < most):
        for fn, kept in zip((first, second), times):
            start = time.perf_counter()
            fn()
            kept.append(time.perf_counter() - start)
        spent = max(sum(times[0]), sum(times[1]))
    return statistics.median(times[0]), statistics.median(times[1]), len(times[0])


def measure(path: str, budget: float) -> Ratio:
    """Lower once, build the session once, warm both, then time them interleaved."""
    import lazyloop.onnx as lo

    case = case_of(path)
    feeds, readings = feeds_and_readings(path)
    try:
        lowered = lo.lower(path, readings)
        lo.evaluate(lowered, feeds)
    except Exception as exc:  # noqa: BLE001 -- a refused model is a row, not a crash
        return Ratio(case, None, None, 0, None, "", f"lazyloop: {first_line(exc)}")
    elements, reason = fast_path_of(lowered, feeds)
    try:
        session = session_of(path)
        ort_feeds = {k: np.asarray(v) for k, v in feeds.items()}
        session.run(None, ort_feeds)
    except Exception as exc:  # noqa: BLE001
        t_ll = statistics.median(timed(lambda: lo.evaluate(lowered, feeds)) for _ in range(5))
        return Ratio(case, t_ll, None, 5, elements, reason, f"onnxruntime: {first_line(exc)}")
    t_ll, t_ort, rounds = interleaved(lambda: lo.evaluate(lowered, feeds),
                                      lambda: session.run(None, ort_feeds), budget)
    return Ratio(case, t_ll, t_ort, rounds, elements, reason)


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def first_line(exc) -> str:
    return f"{type(exc).__name__}: {str(exc).splitlines()[0][:90]}" if str(exc) else \
        type(exc).__name__


# ---- which path the loops took ----------------------------------------------------------------

def fast_path_of(lowered, feeds):
    """(loop elements the reference rules forced in one `evaluate`-like run, the first loop
    the schedule does not take and why -- "" when it takes every one), or (None, "?") when
    lazyloop's core cannot be read this way."""
    try:
        machine = core_machine(lowered, feeds)
        return reference_elements(machine), first_not_scheduled(machine)
    except (ImportError, AttributeError, TypeError) as exc:
        return None, f"? ({type(exc).__name__})"


def core_machine(lowered, feeds):
    """The machine `lazyloop.onnx.evaluate` would make for these feeds (mode "fast")."""
    from lazyloop.core.ambiguity import resolve
    from lazyloop.core.engine import EngineMachine
    from lazyloop.core.evaluate import check_feeds, plan_of
    readings = resolve(lowered.readings)
    plan = plan_of(lowered.network, readings)
    return EngineMachine(plan, check_feeds(plan, lowered.core_feeds(feeds)), readings=readings,
                         keep_trips=False)


def reference_elements(machine) -> int:
    """Demand the outputs as `evaluate` does, counting the elements of streams inside loops
    that go through the machine's reference rules (the schedule's are not counted)."""
    forced = [0]
    start = machine.start

    def counting(nid, act, i):
        if machine.nodes[nid].scope is not None:
            forced[0] += 1
        return start(nid, act, i)

    machine.start = counting
    for _, nid in machine.plan.outputs:
        machine.demand(nid)
    return forced[0]


def first_not_scheduled(machine) -> str:
    """'<loop>: <why>' for the first loop (in plan order) whose `static_demand` is None: the
    demand analysis' own reason (`NotStatic`), or that not all its outputs are needed in
    every run; "" when every loop has one."""
    from lazyloop.core.engine.demand import Demand, NotStatic
    for name in machine.plan.loops:
        if machine.static_demand(name) is not None:
            continue
        try:
            Demand(machine.plan, name)
        except NotStatic as why:
            return f"{name}: {why}"[:110]
        if not machine.all_outputs_needed(name):
            return f"{name}: not all its outputs are needed in every run"
        return f"{name}: the readings (A10 lazy, A2 guide and A40 count-first are scheduled)"
    return ""


# ---- the corpus --------------------------------------------------------------------------------

def corpus_paths() -> List[str]:
    return sorted(glob.glob(os.path.join(CORPUS, "*", "*.onnx")))


def corpus_ratios(paths, budget: float = 0.2) -> List[Ratio]:
    """One Ratio per model path, in the order given."""
    return [measure(p, budget) for p in paths]


def geometric_mean(values) -> float:
    return float(np.exp(np.mean(np.log(values))))


def summary(rows: List[Ratio]) -> dict:
    """Geometric mean, median and the five worst ratios over the models both sides ran; how
    many fell back, and how many have no ratio."""
    ratios = [r for r in rows if r.ratio is not None]
    values = [r.ratio for r in ratios]
    return {"models": len(rows), "timed": len(ratios),
            "geomean": geometric_mean(values) if values else None,
            "median": statistics.median(values) if values else None,
            "worst": sorted(ratios, key=lambda r: -r.ratio)[:5],
            "fell_back": sum(bool(r.fell_back) for r in rows),
            "unknown_path": sum(r.fell_back is None for r in rows),
            "untimed": [r for r in rows if r.ratio is None]}


def ms(seconds) -> str:
    return "-" if seconds is None else f"{seconds * 1e3:.3f}"


def report(rows: List[Ratio]) -> str:
    lines = [f"{'case':42} {'lazyloop ms':>11} {'ort ms':>9} {'ratio':>7} {'rounds':>6} "
             f"{'ref elems':>9} {'fell back':>9}  first loop without static demand"]
    for r in rows:
        ratio = "-" if r.ratio is None else f"{r.ratio:.2f}"
        fell = "?" if r.fell_back is None else ("yes" if r.fell_back else "no")
        elems = "?" if r.reference_elements is None else str(r.reference_elements)
        lines.append(f"{r.case:42} {ms(r.lazyloop_s):>11} {ms(r.onnxruntime_s):>9} {ratio:>7} "
                     f"{r.rounds:>6} {elems:>9} {fell:>9}  {r.error or r.not_static}")
    s = summary(rows)
    lines.append("")
    if s["geomean"] is not None:
        lines.append(f"lazyloop / onnxruntime over {s['timed']} of {s['models']} models: "
                     f"geometric mean {s['geomean']:.2f}x, median {s['median']:.2f}x")
        lines.append("worst: " + ", ".join(f"{r.case} {r.ratio:.1f}x" for r in s["worst"]))
    lines.append(f"fell back to the reference machine (> {FELL_BACK} loop elements through "
                 f"its rules): {s['fell_back']} of {s['models']}"
                 + (f" ({s['unknown_path']} unknown)" if s["unknown_path"] else ""))
    for r in s["untimed"]:
        lines.append(f"no ratio: {r.case}: {r.error}")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="lazyloop vs onnxruntime on the corpus")
    parser.add_argument("paths", nargs="*", help="models (default: every one of tests/corpus)")
    parser.add_argument("--budget", type=float, default=0.2,
                        help="seconds of timed calls per model and side (default 0.2)")
    args = parser.parse_args(argv)
    print(report(corpus_ratios(args.paths or corpus_paths(), args.budget)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
