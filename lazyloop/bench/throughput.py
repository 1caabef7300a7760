"""Section (e): the differential tester's throughput — programs checked per second on each
installed backend (generation, lazyloop's expectation, export, the backend's run in its
isolated child process; no shrinking), sequentially and with Dask workers."""
from __future__ import annotations

import importlib.util
import time
from typing import List

from .measure import Row

# backend name -> the package it needs
THROUGHPUT_BACKENDS = {"lazyloop": None, "onnxruntime": "onnxruntime",
                       "onnx-reference": "onnx", "openvino": "openvino", "tract": "tract"}


def _installed(package) -> bool:
    return package is None or importlib.util.find_spec(package) is not None


def programs_per_second(backend, n: int, workers: int = 0) -> float:
    from ..difftest import check
    start = time.monotonic()
    report = check(backend, max_examples=n, seed=0, shrink=False, workers=workers)
    return report.generated / (time.monotonic() - start)


def bench_throughput(cfg) -> List[Row]:
    try:
        import hypothesis  # noqa: F401
    except ImportError:
        return [Row("e", "difftest throughput", "skipped", "hypothesis is not installed")]
    n = cfg["throughput_programs"]
    rows, sequential = [], {}
    for k, (name, package) in enumerate(THROUGHPUT_BACKENDS.items()):
        if name not in cfg["throughput_backends"] or not _installed(package):
            continue
        rate = sequential[name] = programs_per_second(name, n)
        rows.append(Row(f"e{k + 1}", f"difftest {name}: {n} programs, one process",
                        f"{rate:.1f} prog/s", "-", None, None,
                        values=dict(programs=n, per_second=rate)))
    workers = cfg["throughput_workers"]
    if workers and _installed("distributed"):
        name = cfg["throughput_backends"][0]
        rate = programs_per_second(name, n, workers)
        rows.append(Row("e9", f"difftest {name}: {n} programs, {workers} Dask workers",
                        f"{rate:.1f} prog/s", f"{sequential[name]:.1f} prog/s one process",
                        rate / sequential[name], None, higher=True,
                        note="includes starting the LocalCluster; speed-up over one process",
                        values=dict(programs=n, workers=workers, per_second=rate)))
    return rows
