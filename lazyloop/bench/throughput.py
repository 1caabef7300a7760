"""Section (e): the differential tester's throughput and what it spends its time on.

Per installed backend, a campaign of `throughput_programs` programs (`throughput_judged_
programs` for a backend with an overhead target; seed 0, no shrinking,
the backend isolated in its child process): programs per second, the split of the campaign's
time into parts (generation, export, lowering, expectation, serialisation, transfer, the
backend's own run, comparison, ...; `difftest/costs.py`) and the tester overhead -- the
campaign's wall time over the backend's own run time (hangs left out) -- as the row's ratio.
Then the scale-out row: a campaign of `throughput_scale_programs` programs against
`throughput_scale_backend`, in one process and on `throughput_workers` Dask workers (the
LocalCluster's start counted), as a speed-up."""
from __future__ import annotations

import importlib.util
import time
from typing import List

from .measure import Row

# backend name -> the package it needs
THROUGHPUT_BACKENDS = {"lazyloop": None, "onnxruntime": "onnxruntime",
                       "onnx-reference": "onnx", "openvino": "openvino", "tract": "tract"}
# the tester overhead targets (the throughput issue's): campaign wall / the backend's own time
OVERHEAD_TARGETS = {"onnxruntime": 4.0}
SCALE_OUT_TARGET = 1.6  # speed-up of `throughput_workers` workers over one process


def _installed(package) -> bool:
    return package is None or importlib.util.find_spec(package) is not None


def campaign(backend, n: int, workers: int = 0):
    """(the report, its wall seconds) of `n` programs of seed 0 against `backend`, no
    shrinking; with `workers`, the LocalCluster's start is inside the time."""
    from ..difftest import check
    start = time.monotonic()
    report = check(backend, max_examples=n, seed=0, shrink=False, workers=workers)
    return report, time.monotonic() - start


def split_text(costs: dict) -> str:
    """The parts of a `costs` document as shares of the wall time (process-seconds over
    wall x processes), largest first, parts under 0.5% left out."""
    budget = costs["wall"] * costs["processes"] or 1.0
    parts = dict(costs["parts"], other=costs["other"])
    shares = sorted(((s / budget, p) for p, s in parts.items()), reverse=True)
    return ", ".join(f"{p} {100 * share:.0f}%" for share, p in shares if share >= 0.005)


def overhead_row(key: str, name: str, n: int) -> Row:
    report, seconds = campaign(name, n)
    costs = report.costs.document(seconds, report.processes)
    own = costs["parts"]["backend"]
    ratio = costs["overhead"]
    return Row(key, f"difftest {name}: {n} programs, one process (tester overhead)",
               f"{report.generated / seconds:.1f} prog/s",
               f"backend's own run {1e3 * own / max(1, report.examples):.2f} ms/program",
               ratio, OVERHEAD_TARGETS.get(name),
               note=f"{name}: {split_text(costs)}",
               values=dict(programs=n, per_second=report.generated / seconds, costs=costs,
                           findings=len(report.disagreements)))


def scale_out_row(name: str, n: int, workers: int) -> Row:
    one, one_seconds = campaign(name, n)
    many, many_seconds = campaign(name, n, workers)
    same = _findings(one) == _findings(many)
    return Row("e9", f"difftest {name}: {n} programs, {workers} Dask workers",
               f"{n / many_seconds:.1f} prog/s", f"{n / one_seconds:.1f} prog/s one process",
               one_seconds / many_seconds, SCALE_OUT_TARGET, higher=True,
               note=("includes starting the LocalCluster; speed-up over one process; same "
                     f"findings: {'yes' if same else 'NO'}"),
               values=dict(programs=n, workers=workers, seconds=many_seconds,
                           one_process_seconds=one_seconds, same_findings=same,
                           costs=many.costs.document(many_seconds, many.processes)))


def _findings(report) -> list:
    return sorted(d.signature for d in report.disagreements)


def bench_throughput(cfg) -> List[Row]:
    try:
        import hypothesis  # noqa: F401
    except ImportError:
        return [Row("e", "difftest throughput", "skipped", "hypothesis is not installed")]
    rows = [overhead_row(f"e{k + 1}", name, cfg["throughput_judged_programs"]
                         if name in OVERHEAD_TARGETS else cfg["throughput_programs"])
            for k, (name, package) in enumerate(THROUGHPUT_BACKENDS.items())
            if name in cfg["throughput_backends"] and _installed(package)]
    workers, name = cfg["throughput_workers"], cfg["throughput_scale_backend"]
    if workers and _installed("distributed") and _installed(THROUGHPUT_BACKENDS[name]):
        rows.append(scale_out_row(name, cfg["throughput_scale_programs"], workers))
    return rows
