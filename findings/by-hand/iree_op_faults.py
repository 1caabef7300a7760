"""Two loop findings of IREE's seed-0 campaign that are op faults (spec/50, "IREE 3.13.0"):
the op alone, outside any loop, fails the same way. Each model built by hand, run on IREE
(`iree_run.py`), onnxruntime and ONNX's reference evaluator, beside the answer computed by
hand with numpy. Needs numpy, onnx, onnxruntime, iree-base-compiler and iree-base-runtime.

    python findings/by-hand/iree_op_faults.py"""
import numpy as np
import onnxruntime as ort
from onnx import TensorProto as T
from onnx import helper as h

from common import model, on_ort, on_reference, shown
from common import value as v
from iree_run import iree_run


def max_pool(dtype=np.uint8, indices=True):
    """MaxPool (kernel 2) over [3, 1, 4, 1] of an integer type, its Indices output asked for
    (read or not): the compile fails ("'arith.cmpf' op operand #0 must be floating-point-like,
    but got 'i8'"); without Indices, or on float, it compiles (case_010 of seed 0, and the
    MaxPool op fault of seed 7, case_018)."""
    elem = h.np_dtype_to_tensor_dtype(np.dtype(dtype))
    x = np.array([[[3, 1, 4, 1]]], dtype)
    node = h.make_node("MaxPool", ["x"], ["y", "i"] if indices else ["y"], kernel_shape=[2])
    m = model([node], [v("x", elem, [1, 1, 4])], [v("y", elem, [1, 1, 3])], 21)
    return m, [x], [np.array([[[3, 4, 4]]], dtype)]


def einsum(dtype=np.uint8, dead=False):
    """Einsum "ij,jk->ik" on uint8 (or int8): iree-compile dies (SIGSEGV, after "for
    conversion to byte or char type dstOriginalDtype has to be passed"), even when no output
    reads the Einsum (`dead`: the graph's output is another input passed through; case_021
    of seed 0, and case_009 of seed 7, an Einsum in an If in a Scan)."""
    elem = h.np_dtype_to_tensor_dtype(np.dtype(dtype))
    a = np.array([[1, 2, 3], [4, 5, 6]], dtype)
    b = np.array([[1, 0], [0, 1], [1, 1]], dtype)
    inputs = [v("a", elem, [2, 3]), v("b", elem, [3, 2])]
    product = h.make_node("Einsum", ["a", "b"], ["p"], equation="ij,jk->ik")
    if dead:
        c = np.array([5, 6], np.int64)
        m = model([product, h.make_node("Identity", ["c"], ["y"])],
                  inputs + [v("c", T.INT64, [2])], [v("y", T.INT64, [2])], 21)
        return m, [a, b, c], [c]
    m = model([product], inputs, [v("p", elem, [2, 2])], 21)
    return m, [a, b], [(a.astype(np.int64) @ b.astype(np.int64)).astype(dtype)]


if __name__ == "__main__":
    from importlib.metadata import version
    print("iree-base-compiler", version("iree-base-compiler"), "onnxruntime", ort.__version__)
    ort.set_default_logger_severity(4)  # its errors come back as one line each
    for name, make in [("MaxPool uint8 with Indices", max_pool),
                       ("MaxPool int8 with Indices", lambda: max_pool(np.int8)),
                       ("MaxPool uint8 without Indices (compiles)",
                        lambda: max_pool(indices=False)),
                       ("MaxPool float with Indices (compiles)", lambda: max_pool(np.float32)),
                       ("Einsum uint8", einsum), ("Einsum int8", lambda: einsum(np.int8)),
                       ("Einsum uint8, read by no output", lambda: einsum(dead=True)),
                       ("Einsum float (compiles)", lambda: einsum(np.float32))]:
        m, feeds, expected = make()
        print(f"{name}: by hand {shown(expected)}; onnxruntime {shown(on_ort(m, feeds))}; "
              f"onnx.reference {shown(on_reference(m, feeds))}; "
              f"iree {shown(iree_run(m, feeds))}", flush=True)
