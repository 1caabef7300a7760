"""Benchmark section (r): lazyloop against onnxruntime on the exporter corpus -- ONNX loop
models written by real exporters (`tests/corpus/`, a clone's; issue 25).

Each model is lowered once (`lazyloop.onnx.lower`) and its onnxruntime session built once
(one intra-op and one inter-op thread); then `lazyloop.onnx.evaluate(lowered, feeds)` and
`session.run` are timed in turns, one call each per round, and each side's figure is the
median of its rounds. Time is the process's CPU time (`CLOCK`): both sides run on the
calling thread (one BLAS thread, onnxruntime's one intra-op thread), so a call's CPU time is
its work, while its wall time on a shared machine also counts the other processes that ran
meanwhile -- more often during a long call than a short one, which skews the ratio. The feeds are the case's own (`<case>.npz`). The ratio is lazyloop's
median over onnxruntime's; a model either side cannot run has no ratio and says why. Which
evaluator ran each loop is `run`'s `paths` ("engine", or "reference: <why>").

`corpus_ratios(paths) -> rows` measures; `summary` and `report` read the rows; `bench_corpus`
makes the bench's rows: the geometric mean, the median and the worst ratio over the models
both sides ran, and how many ran every loop on the engine -- all from one run. An installed
package without the clone's `tests/corpus` skips the section, saying so. Speed is reported,
never asserted.
"""
from __future__ import annotations

import glob
import json
import os
import statistics
import time
from dataclasses import dataclass, field
from typing import List, Optional

import numpy as np

from .measure import Row, ms, us

#: the committed corpus of a clone: tests/corpus beside the package
CORPUS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "tests", "corpus")

#: the targets of issue 25: geometric mean and worst ratio over onnxruntime
GEOMEAN_TARGET, WORST_TARGET = 2.0, 5.0

#: what a call costs: CPU seconds of this process (see the module's docstring)
CLOCK = time.process_time


@dataclass(frozen=True)
class Ratio:
    """One model: medians in seconds (None where a side cannot run it), the rounds timed,
    which evaluator ran each loop (`paths`), and why a side could not run it (`error`)."""
    case: str
    lazyloop_s: Optional[float]
    onnxruntime_s: Optional[float]
    rounds: int
    paths: dict = field(default_factory=dict)
    error: str = ""

    @property
    def ratio(self) -> Optional[float]:
        if self.lazyloop_s is None or self.onnxruntime_s is None:
            return None
        return self.lazyloop_s / self.onnxruntime_s

    @property
    def on_engine(self) -> Optional[bool]:
        """Every loop that ran, ran on the engine (None: lazyloop refused the model)."""
        if self.lazyloop_s is None:
            return None
        return all(p == "engine" for p in self.paths.values())

    @property
    def reason(self) -> str:
        """'<loop>: <why>' for the first loop the reference ran, else ""."""
        for loop, path in self.paths.items():
            if path != "engine":
                return f"{loop}: {path}"
        return ""


# ---- one corpus case --------------------------------------------------------------------------

def case_of(path: str, corpus: str = CORPUS) -> str:
    """'exporter/case' for a model of the corpus, else the path as given."""
    rel = os.path.relpath(os.path.abspath(path), corpus)
    return path if rel.startswith(os.pardir) else rel[:-len(".onnx")].replace(os.sep, "/")


def unpack(entries, prefix: str, names) -> dict:
    """The feeds ('in') or outputs ('out') of a case, keyed by name in saved order: arrays,
    lists (sequences), None (empty optionals) -- the `.npz` format of corpus/README.md."""
    values = {}
    for k, name in enumerate(names):
        key = f"{prefix}{k}"
        if key in entries.files:
            values[name] = entries[key]
        elif key + ".none" in entries.files:
            values[name] = None
        else:
            n = int(entries[key + ".len"])
            values[name] = [entries[f"{key}.{j}"] for j in range(n)]
    return values


def feeds_and_readings(path: str):
    """The case's feeds and the readings it is checked under, from `<case>.npz`."""
    with np.load(path[:-len(".onnx")] + ".npz", allow_pickle=False) as entries:
        meta = json.loads(str(entries["meta"]))
        feeds = unpack(entries, "in", meta["inputs"])
    return feeds, meta["readings"] or None


def session_of(path: str):
    """An onnxruntime session of one intra-op and one inter-op thread, quiet."""
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
            start = CLOCK()
            fn()
            kept.append(CLOCK() - start)
        spent = max(sum(times[0]), sum(times[1]))
    return statistics.median(times[0]), statistics.median(times[1]), len(times[0])


def first_line(exc) -> str:
    text = str(exc).splitlines()[0][:90] if str(exc) else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def measure(path: str, budget: float, corpus: str = CORPUS) -> Ratio:
    """Lower once, build the session once, warm both, then time them interleaved."""
    import lazyloop.onnx as lo

    case = case_of(path, corpus)
    feeds, readings = feeds_and_readings(path)
    try:
        lowered = lo.lower(path, readings)
        paths = lowered.run(feeds).paths
        lo.evaluate(lowered, feeds)
    except Exception as exc:  # noqa: BLE001 -- a refused model is a row, not a crash
        return Ratio(case, None, None, 0, {}, f"lazyloop: {first_line(exc)}")
    try:
        session = session_of(path)
        ort_feeds = {k: np.asarray(v) for k, v in feeds.items()}
        session.run(None, ort_feeds)
    except Exception as exc:  # noqa: BLE001
        t_ll = statistics.median(timed(lambda: lo.evaluate(lowered, feeds)) for _ in range(5))
        return Ratio(case, t_ll, None, 5, paths, f"onnxruntime: {first_line(exc)}")
    t_ll, t_ort, rounds = interleaved(lambda: lo.evaluate(lowered, feeds),
                                      lambda: session.run(None, ort_feeds), budget)
    return Ratio(case, t_ll, t_ort, rounds, paths)


def timed(fn) -> float:
    start = CLOCK()
    fn()
    return CLOCK() - start


# ---- the corpus --------------------------------------------------------------------------------

def corpus_paths(corpus: str = CORPUS) -> List[str]:
    return sorted(glob.glob(os.path.join(corpus, "*", "*.onnx")))


def corpus_ratios(paths, budget: float = 0.2, corpus: str = CORPUS) -> List[Ratio]:
    """One Ratio per model path, in the order given."""
    return [measure(p, budget, corpus) for p in paths]


def geometric_mean(values) -> float:
    return float(np.exp(np.mean(np.log(values))))


def summary(rows: List[Ratio]) -> dict:
    """Geometric mean, median and the five worst ratios over the models both sides ran; how
    many models ran every loop on the engine, and which have no ratio."""
    timed_rows = [r for r in rows if r.ratio is not None]
    values = [r.ratio for r in timed_rows]
    return {"models": len(rows), "timed": len(timed_rows),
            "geomean": geometric_mean(values) if values else None,
            "median": statistics.median(values) if values else None,
            "worst": sorted(timed_rows, key=lambda r: -r.ratio)[:5],
            "on_engine": sum(bool(r.on_engine) for r in rows),
            "ran": sum(r.on_engine is not None for r in rows),
            "reasons": [f"{r.case} {r.reason}" for r in rows if r.reason],
            "untimed": [r for r in rows if r.ratio is None]}


def report(rows: List[Ratio]) -> str:
    lines = [f"{'case':42} {'lazyloop ms':>11} {'ort ms':>9} {'ratio':>7} {'rounds':>6}  "
             "loops (engine, or the first on the reference and why)"]
    for r in rows:
        ratio = "-" if r.ratio is None else f"{r.ratio:.2f}"
        where = r.error or r.reason or f"{len(r.paths)} on the engine"
        lines.append(f"{r.case:42} {ms_or_dash(r.lazyloop_s):>11} "
                     f"{ms_or_dash(r.onnxruntime_s):>9} {ratio:>7} {r.rounds:>6}  {where}")
    s = summary(rows)
    lines.append("")
    if s["geomean"] is not None:
        lines.append(f"lazyloop / onnxruntime over {s['timed']} of {s['models']} models: "
                     f"geometric mean {s['geomean']:.2f}x, median {s['median']:.2f}x")
        lines.append("worst: " + ", ".join(f"{r.case} {r.ratio:.1f}x" for r in s["worst"]))
    lines.append(f"every loop on the engine: {s['on_engine']} of the {s['ran']} models "
                 "lazyloop ran")
    for r in s["untimed"]:
        lines.append(f"no ratio: {r.case}: {r.error}")
    return "\n".join(lines)


def short(seconds) -> str:
    return us(seconds) if seconds < 1e-3 else ms(seconds)


def ms_or_dash(seconds) -> str:
    return "-" if seconds is None else f"{seconds * 1e3:.3f}"


# ---- the bench's rows --------------------------------------------------------------------------

def bench_corpus(cfg) -> List[Row]:
    """Rows r1-r4: over the corpus, the geometric mean, median and worst ratio against
    onnxruntime (one thread), and the models whose loops all ran on the engine."""
    paths = corpus_paths()
    if not paths:
        return [Row("r", "exporter corpus vs onnxruntime", "skipped",
                    "needs a clone of lazyloop (tests/corpus is not installed)")]
    try:
        import onnxruntime  # noqa: F401
    except ImportError:
        return [Row("r", "exporter corpus vs onnxruntime", "skipped",
                    "onnxruntime is not installed")]
    if cfg.get("corpus_cases"):
        paths = [p for p in paths if case_of(p) in cfg["corpus_cases"]]
    rows = corpus_ratios(paths, cfg["corpus_budget"])
    s = summary(rows)
    if s["geomean"] is None:
        return [Row("r", "exporter corpus vs onnxruntime", "skipped", "no model ran on both")]
    worst = s["worst"][0]
    n = f"{s['timed']} exporter models"
    notes = dict(values={"rows": [r.__dict__ | {"ratio": r.ratio} for r in rows]})
    return [
        Row("r1", f"{n}: geometric mean over onnxruntime", "-", "-", s["geomean"],
            GEOMEAN_TARGET, **notes),
        Row("r2", f"{n}: median over onnxruntime", "-", "-", s["median"], None),
        Row("r3", f"{n}: worst, {worst.case}", short(worst.lazyloop_s),
            f"{short(worst.onnxruntime_s)} onnxruntime", worst.ratio, WORST_TARGET,
            note="next worst: " + ", ".join(f"{r.case} {r.ratio:.1f}x" for r in s["worst"][1:])),
        Row("r4", "corpus models whose loops all ran on the engine",
            f"{s['on_engine']} of {s['ran']}", "-", None, None,
            note="; ".join(s["reasons"][:3])),
    ]
