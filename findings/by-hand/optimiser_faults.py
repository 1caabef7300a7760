"""The distinct faults of onnxsim (spec/50, "Engines users deploy"), shown without
lazyloop: the model built by hand, simplified with `onnxsim.simplify`, run on onnxruntime
before and after. (onnxslim's: onnxslim_faults.py; onnxoptimizer showed none of its own.)
Needs numpy, onnx, onnxruntime and onnxsim."""
import numpy as np
import onnx
import onnxruntime as ort
import onnxsim
from onnx import TensorProto as T
from onnx import helper as h


def run(model, feeds):
    try:
        session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        return [r.tolist() for r in session.run(None, feeds)]
    except Exception as exc:
        return f"{type(exc).__name__}: {str(exc).splitlines()[0][:160]}"


def sim_1():
    """A Loop of zero trips (M a constant 0) whose body passes its carried value through:
    onnxsim folds the Loop away and renames the graph's input `v0` after the Loop's output
    `v0_final`, so a caller feeding `v0` is refused."""
    body = h.make_graph([], "body",
                        [h.make_tensor_value_info("i", T.INT64, []),
                         h.make_tensor_value_info("c", T.BOOL, []),
                         h.make_tensor_value_info("x", T.INT64, [])],
                        [h.make_tensor_value_info("c", T.BOOL, []),
                         h.make_tensor_value_info("x", T.INT64, [])])
    graph = h.make_graph(
        [h.make_node("Constant", [], ["M"], value=h.make_tensor("Mv", T.INT64, [], [0])),
         h.make_node("Loop", ["M", "", "v0"], ["v0_final"], body=body)], "g",
        [h.make_tensor_value_info("v0", T.INT64, [])],
        [h.make_tensor_value_info("v0_final", T.INT64, [])])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 16)])
    return model, {"v0": np.array(7, np.int64)}


if __name__ == "__main__":
    print("onnxsim", onnxsim.__version__, "onnxruntime", ort.__version__)
    model, feeds = sim_1()
    onnx.checker.check_model(model)
    simplified, _ = onnxsim.simplify(model)
    print("SIM-1: inputs", [i.name for i in model.graph.input], "->",
          [i.name for i in simplified.graph.input])
    print("SIM-1: original on onnxruntime:", run(model, feeds))
    print("SIM-1: simplified on onnxruntime:", run(simplified, feeds))
