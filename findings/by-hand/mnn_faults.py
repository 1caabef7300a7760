"""The distinct faults of MNN (spec/50, "Engines users deploy"), each shown without
lazyloop: a model built by hand, run on MNN (`mnn_run.py`: its converter, then its Module
API) and on onnxruntime, beside the answer computed by hand.
Needs numpy, onnx, onnxruntime and mnn."""
import numpy as np
import onnxruntime as ort
from onnx import TensorProto as T
from onnx import helper as h

from common import model, on_ort, one_line, shown
from common import value as v
from mnn_run import mnn_run

F = T.FLOAT


def on_mnn(m, feeds):
    try:
        return mnn_run(m, feeds)
    except Exception as exc:
        return one_line(exc)


def counted_loop(body_nodes, body_outputs, outputs, m=2):
    """Loop(M = m, cond omitted) carrying one float c (0 on entry), the body's nodes and
    extra outputs given; the graph's outputs named."""
    body = h.make_graph(body_nodes, "body",
                        [v("i", T.INT64, []), v("c_in", T.BOOL, []), v("c0", F, [])],
                        [v("c_in", T.BOOL, []), v("c0", F, [])] + body_outputs)
    return model([h.make_node("Constant", [], ["M"], value=h.make_tensor("Mv", T.INT64, [], [m])),
                  h.make_node("Loop", ["M", "", "c"], ["c_final"] + [o.name + "_stacked"
                                                                    for o in body_outputs],
                              body=body)],
                 [], outputs, 16, inits=[h.make_tensor("c", F, [], [0.0])])


def mnn_1():
    """A scalar scan output of a Loop (its condition input cast to float, two trips) is
    stacked as [2]; MNN gives [2, 1]. (The iteration number cast to float instead comes
    out as [2].)"""
    m = counted_loop([h.make_node("Cast", ["c_in"], ["s"], to=F)], [v("s", F, [])],
                     [v("s_stacked", F, [None])])
    return m, [], [np.array([1, 1], np.float32)]


def mnn_2():
    """A scan output that is empty on every trip (Shape with end = -1 of a [2] value: []),
    one trip: the stacked output is int64 of shape [1, 0]. MNN's Python binding raises
    SystemError ("returned a result with an exception set")."""
    body = h.make_graph([h.make_node("Shape", ["c0"], ["y"], end=-1)], "body",
                        [v("i", T.INT64, []), v("c_in", T.BOOL, []), v("c0", F, [2])],
                        [v("c_in", T.BOOL, []), v("c0", F, [2]), v("y", T.INT64, [0])])
    m = model([h.make_node("Constant", [], ["M"], value=h.make_tensor("Mv", T.INT64, [], [1])),
               h.make_node("Loop", ["M", "", "c"], ["c_final", "y_stacked"], body=body)],
              [], [v("y_stacked", T.INT64, [None, 0])], 21,
              inits=[h.make_tensor("c", F, [2], [0.0, 0.0])])
    return m, [], [np.zeros([1, 0], np.int64)]


if __name__ == "__main__":
    from importlib.metadata import version
    print("mnn", version("mnn"), "onnxruntime", ort.__version__)
    for name, make in [("MNN-1", mnn_1), ("MNN-2", mnn_2)]:
        m, feeds, expected = make()
        print(f"{name}: by hand {shown(expected)}; onnxruntime {shown(on_ort(m, feeds))}; "
              f"mnn {shown(on_mnn(m, feeds))}")
