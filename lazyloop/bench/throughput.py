"""Section (e): the differential tester's throughput and what it spends its time on.

Per installed backend, a campaign of `throughput_programs` programs (`throughput_judged_
programs` for a backend with an overhead target; seed 0, no shrinking,
the backend isolated in its child process): programs per second, the split of the campaign's
time into parts (generation, export, lowering, expectation, serialisation, transfer, the
backend's own run, comparison, ...; `difftest/costs.py`; lazyloop prepares the next program
while the backend runs, so the backend's share overlaps lazyloop's) and the tester overhead
-- the campaign's wall time over the backend's own run time (hangs left out) -- as the
row's ratio.
Then the scale-out row (e9): a campaign of `throughput_scale_programs` programs against
`throughput_scale_backend`, in one process and on `throughput_workers` Dask workers (the
LocalCluster's start counted), as a speed-up, with whether both found the same root causes
and the CPU seconds each took."""
from __future__ import annotations

import importlib.util
import os
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
    """(the report, its wall seconds, the CPU seconds it took) of `n` programs of seed 0
    against `backend`, no shrinking; with `workers`, the LocalCluster's start is inside the
    time. CPU: "parent" (this process) and "children" (its child processes and theirs, once
    waited for: the workers, their backend children, the isolated backend child)."""
    from ..difftest import check
    before = _cpu()
    start = time.monotonic()
    report = check(backend, max_examples=n, seed=0, shrink=False, workers=workers)
    seconds = time.monotonic() - start
    after = _cpu()
    return report, seconds, {k: after[k] - before[k] for k in after}


def _cpu() -> dict:
    import resource
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {"parent": own.ru_utime + own.ru_stime,
            "children": children.ru_utime + children.ru_stime}


def split_text(costs: dict) -> str:
    """The parts of a `costs` document as shares of the wall time (process-seconds over
    wall x processes), largest first, parts under 0.5% left out; then how much of the
    backend's run overlapped lazyloop's work (the shares add up to 100% plus that)."""
    budget = costs["wall"] * costs["processes"] or 1.0
    parts = dict(costs["parts"], other=costs["other"])
    shares = sorted(((s / budget, p) for p, s in parts.items()), reverse=True)
    text = ", ".join(f"{p} {100 * share:.0f}%" for share, p in shares if share >= 0.005)
    overlapped = costs.get("overlapped", 0.0) / budget
    return text + (f" (backend overlapping lazyloop's work {100 * overlapped:.0f}%)"
                   if overlapped >= 0.005 else "")


def overhead_row(key: str, name: str, n: int) -> Row:
    report, seconds, _ = campaign(name, n)
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
    """One process, then `workers` Dask workers, on the same `n` programs: the speed-up (the
    LocalCluster's start and close counted), whether the root causes found are the same, and
    the CPU seconds each run took (with the load average: on a shared machine the wall-time
    ratio follows the load)."""
    load = os.getloadavg()[0]
    one, one_seconds, one_cpu = campaign(name, n)
    many, many_seconds, many_cpu = campaign(name, n, workers)
    only_one, only_many = _root_causes(one) - _root_causes(many), \
        _root_causes(many) - _root_causes(one)
    same = not only_one and not only_many
    varying = unsettled(name, [d for d in one.disagreements if d.root_cause in only_one] +
                        [d for d in many.disagreements if d.root_cause in only_many])
    same_text = "yes" if same else (
        f"yes but for {len(varying)} whose program answers otherwise when run again"
        if len(varying) == len(only_one) + len(only_many) else "NO")
    cpu = f"CPU {_cpu_text(one_cpu)} one process, {_cpu_text(many_cpu)} on workers"
    return Row("e9", f"difftest {name}: {n} programs, {workers} Dask workers",
               f"{n / many_seconds:.1f} prog/s", f"{n / one_seconds:.1f} prog/s one process",
               one_seconds / many_seconds, SCALE_OUT_TARGET, higher=True,
               note=("LocalCluster start and close counted; speed-up over one process; same "
                     f"findings (root causes): {same_text} "
                     f"({len(_root_causes(one))} and {len(_root_causes(many))}); {cpu}; "
                     f"load {load:.1f} before, {os.getloadavg()[0]:.1f} after"),
               values=dict(programs=n, workers=workers, seconds=many_seconds,
                           one_process_seconds=one_seconds, same_findings=same,
                           only_one_process=sorted(map(str, only_one)),
                           only_workers=sorted(map(str, only_many)),
                           answer_otherwise_when_run_again=sorted(map(str, varying)),
                           one_process_cpu=one_cpu, workers_cpu=many_cpu,
                           load=[load, os.getloadavg()[0]],
                           costs=many.costs.document(many_seconds, many.processes)))


RUNS_AGAIN = 3


def unsettled(name, disagreements) -> set:
    """The root causes of `disagreements` whose program answers otherwise when checked again
    on `name` (RUNS_AGAIN times, each in a fresh child): not the same symptom every time.
    A finding only one of two campaigns met is one of these when the backend answers with
    memory it never wrote (onnxruntime's ORT-6, spec/50): then the answer depends on what
    the backend's process ran before, which differs between one process and workers."""
    from ..difftest.checking import Checker
    from ..difftest.isolation import Isolated
    found = set()
    for d in disagreements:
        for _ in range(RUNS_AGAIN):
            runner = Isolated(name)
            try:
                out = Checker(runner).outcome(d.subject)
            finally:
                runner.close()
            if out.status != "disagree" or str(out.symptom) != str(d.symptom):
                found.add(d.root_cause)
                break
    return found


def _root_causes(report) -> set:
    return {d.root_cause for d in report.disagreements}


def _cpu_text(cpu: dict) -> str:
    return f"{cpu['parent'] + cpu['children']:.1f} s (parent {cpu['parent']:.1f})"


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
