"""The benchmark's building blocks: the run sizes (FULL, QUICK), `Row` (one line of the
table with its ratio and target), and timing, peak-memory and unit-formatting helpers."""
from __future__ import annotations

import gc
import time
import tracemalloc
from typing import Optional

import attrs

FULL = dict(counter_trips=100_000, counter_repeats=5, reference_trips=100_000,
            lstm_hidden=256, lstm_batch=16, lstm_steps=256, lstm_repeats=5,
            state_elements=16_384, memory_trips=(100_000, 10_000), reference_memory_trips=10_000,
            onnx_trips=10_000, onnx_repeats=3, big_state_elements=4 * 2**20, big_state_trips=200,
            versus_trips=10_000, versus_nested=(100, 100), versus_lstm_steps=1_000,
            versus_repeats=5, versus_reference_repeats=1, versus_programs=200,
            versus_heavy=(10_000, 256, (256, 16, 256)),  # cumsum rows, width; LSTM sizes
            versus_heavy_repeats=15,
            throughput_programs=100, throughput_judged_programs=300,
            throughput_backends=("lazyloop", "onnxruntime", "onnx-reference", "openvino",
                                 "tract"), throughput_workers=2,
            throughput_scale_backend="onnxruntime", throughput_scale_programs=1_000,
            corpus_budget=0.2, corpus_cases=None)
QUICK = dict(counter_trips=2_000, counter_repeats=1, reference_trips=2_000,
             lstm_hidden=16, lstm_batch=2, lstm_steps=8, lstm_repeats=1,
             state_elements=1_024, memory_trips=(2_000, 200), reference_memory_trips=200,
             onnx_trips=200, onnx_repeats=1, big_state_elements=2**18, big_state_trips=20,
             versus_trips=100, versus_nested=(6, 6), versus_lstm_steps=10,
             versus_repeats=1, versus_reference_repeats=1, versus_programs=10,
             versus_heavy=(50, 8, (4, 2, 8)), versus_heavy_repeats=1,
             throughput_programs=6, throughput_judged_programs=6, throughput_backends=("lazyloop",),
             throughput_workers=0, throughput_scale_backend="onnxruntime",
             throughput_scale_programs=20,
             corpus_budget=0.002, corpus_cases=("jax2onnx/top_cond", "jax2onnx/scan_cumsum",
                                                "onnxscript/for_sum",
                                                "torch_dynamo/while_nested"))


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
