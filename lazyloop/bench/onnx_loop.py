"""Benchmark section (d): an ONNX Loop through lazyloop.onnx, onnx's ReferenceEvaluator and
onnxruntime, each measured only when it is installed."""
from __future__ import annotations

from typing import List

import numpy as np

from .measure import Row, best_time, us

# ------------------------------------------------------------------------------------------
# (d) ONNX Loop
# ------------------------------------------------------------------------------------------

def onnx_case(trips):
    """(model, feeds, the lazyloop.onnx module, where the model came from); needs onnx."""
    from .. import onnx as ll_onnx
    from ..models import bench_feeds, bench_loop_model
    return bench_loop_model(trips), bench_feeds(), ll_onnx, "lazyloop.models.bench_loop_model"


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
