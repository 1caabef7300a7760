"""The distinct faults of onnxslim (spec/50, "Engines users deploy"), each shown without
lazyloop: the model built by hand, slimmed with `onnxslim.slim`, run on onnxruntime before
and after. Needs numpy, onnx, onnxruntime and onnxslim. Prints one line per fault."""
import numpy as np
import onnx
import onnxruntime as ort
import onnxslim
from onnx import TensorProto as T
from onnx import helper as h


def run(model, feeds):
    try:
        session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        return session.run(None, feeds)
    except Exception as exc:  # the error, in one line
        return f"{type(exc).__name__}: {str(exc).splitlines()[0][:160]}"


def slimmed(model):
    try:
        return onnxslim.slim(model)
    except Exception as exc:
        return f"onnxslim.slim raised {type(exc).__name__}: {exc}"


def value(name, elem, shape):
    return h.make_tensor_value_info(name, elem, shape)


def const(name, elem, shape, vals):
    return h.make_node("Constant", [], [name], value=h.make_tensor(name + "_v", elem, shape, vals))


def slim_1():
    """A declared input no node reads is removed: a caller feeding the model as declared is
    refused ("Invalid input name")."""
    body = h.make_graph([h.make_node("Cast", ["i"], ["i_f"], to=T.FLOAT)], "body",
                        [value("i", T.INT64, []), value("c", T.BOOL, [])],
                        [value("c", T.BOOL, []), value("i_f", T.FLOAT, [])])
    graph = h.make_graph([const("M", T.INT64, [], [0]),
                          h.make_node("Loop", ["M", ""], ["s"], body=body)], "g",
                         [value("w", T.FLOAT, [])], [value("s", T.FLOAT, [None])])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 16)])
    feeds = {"w": np.array(1, np.float32)}
    return model, feeds


def slim_2():
    """IR version 3, a Scan 8 body's Constant becomes a body initializer that is not also a
    body input, as IR versions below 4 require: the checker and onnxruntime refuse it."""
    body = h.make_graph([const("two", T.FLOAT, [], [2.0]), h.make_node("Mul", ["e", "two"], ["o"])],
                        "body", [value("e", T.FLOAT, [2])], [value("o", T.FLOAT, [2])])
    graph = h.make_graph([h.make_node("Scan", ["", "x"], ["y"], body=body, num_scan_inputs=1)],
                         "g", [value("x", T.FLOAT, [1, 1, 2])], [value("y", T.FLOAT, [1, 1, 2])])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 8)], ir_version=3)
    return model, {"x": np.array([[[1, 2]]], np.float32)}


def slim_3():
    """A Loop carrying an optional: onnxslim's exporter raises UnboundLocalError."""
    opt = h.make_optional_type_proto(h.make_tensor_type_proto(T.FLOAT, []))
    body = h.make_graph([h.make_node("Identity", ["o_in"], ["o_out"])], "body",
                        [value("i", T.INT64, []), value("c", T.BOOL, []),
                         h.make_value_info("o_in", opt)],
                        [value("c", T.BOOL, []), h.make_value_info("o_out", opt)])
    graph = h.make_graph([const("M", T.INT64, [], [0]),
                          h.make_node("Optional", [], ["o0"],
                                      type=h.make_tensor_type_proto(T.FLOAT, [])),
                          h.make_node("Loop", ["M", "", "o0"], ["o"], body=body),
                          h.make_node("OptionalHasElement", ["o"], ["has"])], "g",
                         [], [value("has", T.BOOL, [])])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 16)]), {}


def slim_4():
    """An If branch's `Constant value_float` becomes a float64 initializer: the branch's
    float output turns double and onnxruntime refuses the model (type inference)."""
    then = h.make_graph([h.make_node("Constant", [], ["t"], value_float=0.5),
                         h.make_node("Identity", ["t"], ["y_then"])], "then", [],
                        [value("y_then", T.FLOAT, [])])
    other = h.make_graph([const("y_else", T.FLOAT, [], [0.0])], "else", [],
                         [value("y_else", T.FLOAT, [])])
    graph = h.make_graph([h.make_node("If", ["flag"], ["y"], then_branch=then, else_branch=other)],
                         "g", [value("flag", T.BOOL, [])], [value("y", T.FLOAT, [])])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 21)])
    return model, {"flag": np.array(True)}


if __name__ == "__main__":
    print("onnxslim", onnxslim.__version__, "onnxruntime", ort.__version__)
    for name, make in [("SLIM-1", slim_1), ("SLIM-2", slim_2), ("SLIM-3", slim_3),
                       ("SLIM-4", slim_4)]:
        model, feeds = make()
        onnx.checker.check_model(model)
        after = slimmed(model)
        print(f"{name}: original on onnxruntime: {run(model, feeds)}")
        print(f"{name}: slimmed on onnxruntime:  "
              f"{after if isinstance(after, str) else run(after, feeds)}")
