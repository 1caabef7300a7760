"""Benchmark section (d): an ONNX Loop through lazyloop.onnx, onnx's ReferenceEvaluator and
onnxruntime, each measured only when it is installed."""
from __future__ import annotations

from typing import List

import numpy as np

from .measure import Row, best_time, us

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
        from .. import onnx as ll_onnx
    except ImportError:
        ll_onnx = None
    if ll_onnx is not None:
        from ..models import bench_feeds, bench_loop_model
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
