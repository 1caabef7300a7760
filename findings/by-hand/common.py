"""What the by-hand scripts share: building a checked model and running it on onnxruntime
or ONNX's reference evaluator, with an error shown in one line."""
import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper as h
from onnx.reference import ReferenceEvaluator


def value(name, elem, shape):
    return h.make_tensor_value_info(name, elem, shape)


def model(nodes, inputs, outputs, opset, inits=(), ir_version=None):
    """A checked model of one graph `main`."""
    m = h.make_model(h.make_graph(nodes, "main", inputs, outputs, initializer=list(inits)),
                     opset_imports=[h.make_opsetid("", opset)])
    if ir_version is not None:
        m.ir_version = ir_version
    onnx.checker.check_model(m)
    return m


def one_line(exc) -> str:
    return f"{type(exc).__name__}: {str(exc).splitlines()[0][:160]}"


def on_ort(m, feeds):
    """onnxruntime's outputs (CPU), or its error in one line; feeds a dict by name or a
    list by the graph's input order."""
    if not isinstance(feeds, dict):
        feeds = dict(zip([i.name for i in m.graph.input], feeds))
    try:
        session = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
        return session.run(None, feeds)
    except Exception as exc:
        return one_line(exc)


def on_reference(m, feeds):
    """ONNX's reference evaluator's outputs, or its error in one line; feeds as `on_ort`."""
    if not isinstance(feeds, dict):
        feeds = dict(zip([i.name for i in m.graph.input], feeds))
    try:
        return ReferenceEvaluator(m).run(None, feeds)
    except Exception as exc:  # noqa: BLE001 -- the engine's error is the answer
        return one_line(exc)


def shown(result):
    """Outputs as dtype[shape] values, or an error line as it is."""
    if isinstance(result, str):
        return result
    return [f"{np.asarray(r).dtype}{list(np.shape(r))} {np.asarray(r).tolist()}"
            for r in result]


def integer_gemm(dtype, alpha):
    """Gemm(A, B, alpha) of an integer numpy `dtype`, A [2, 3] and B [3, 2] graph inputs, with
    its feeds and the answer by hand: alpha * (A @ B) truncated to the type (A @ B =
    [[10, 4], [55, 31]])."""
    elem = h.np_dtype_to_tensor_dtype(np.dtype(dtype))
    a = np.array([[0, 1, 2], [3, 4, 5]], dtype)
    b = np.array([[6, 7], [8, 0], [1, 2]], dtype)
    m = model([h.make_node("Gemm", ["a", "b"], ["y"], alpha=alpha)],
              [value("a", elem, [2, 3]), value("b", elem, [3, 2])], [value("y", elem, [2, 2])],
              13)
    return m, [a, b], [(alpha * (a @ b)).astype(dtype)]
