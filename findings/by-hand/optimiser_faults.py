"""The distinct faults of the graph optimisers (spec/50, "Engines users deploy"), each shown
without lazyloop: the model built by hand, optimised with the tool's Python API and
defaults (`onnxslim.slim`, `onnxsim.simplify`), run on onnxruntime before and after.
onnxoptimizer showed no fault of its own. Needs numpy, onnx, onnxruntime, onnxslim and
onnxsim. Prints two lines per fault."""
import numpy as np
import onnx
import onnxslim
import onnxsim
from onnx import TensorProto as T
from onnx import helper as h

from common import on_ort, one_line, shown, value


def optimised(tool, model):
    try:
        return onnxslim.slim(model) if tool == "onnxslim" else onnxsim.simplify(model)[0]
    except Exception as exc:
        return f"{tool} raised {one_line(exc)}"


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


def slim_5():
    """The 29-node model lazyloop's reducer left (`slim5_model.onnx`, from onnxslim seed 7's
    `case_012`; no smaller model made by hand shows it): a Loop whose condition folds to
    false, its scan output read only by a Pad that onnxslim folds. The slimmed Loop node
    keeps one output where its body still gives a carried value and a scan output:
    onnxruntime refuses it ("returned type information for 3 outputs. Expected 2")."""
    import os
    model = onnx.load(os.path.join(os.path.dirname(os.path.abspath(__file__)), "slim5_model.onnx"))
    x = np.array([[[-1.9492873], [-0.6057677]], [[0.6397592], [-0.1773561]], [[-1.8639145], [0]]],
                 np.float32)
    return model, {"x0": x}


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


def sim_2():
    """A constant Loop of 300 trips adding 100 to a float16 counter from 0: every float16
    Add rounds its result, so the counter ends at 29136 (numpy float16 and onnxruntime
    agree); onnxsim folds the Loop into the constant 30000, the sum without a rounding on
    each trip."""
    body = h.make_graph([const("step", T.FLOAT16, [], [100.0]),
                         h.make_node("Add", ["c", "step"], ["c_next"])], "body",
                        [value("i", T.INT64, []), value("cond", T.BOOL, []),
                         value("c", T.FLOAT16, [])],
                        [value("cond", T.BOOL, []), value("c_next", T.FLOAT16, [])])
    graph = h.make_graph([const("M", T.INT64, [], [300]), const("c0", T.FLOAT16, [], [0.0]),
                          h.make_node("Loop", ["M", "", "c0"], ["c_final"], body=body)], "g",
                         [], [value("c_final", T.FLOAT16, [])])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 14)])
    counter = np.float16(0)
    for _ in range(300):
        counter = np.float16(counter + np.float16(100))
    print(f"SIM-2: by hand (numpy float16, one rounding per trip): {counter}")
    return model, {}


if __name__ == "__main__":
    from importlib.metadata import version
    print("onnxslim", version("onnxslim"), "onnxsim", version("onnxsim"),
          "onnxruntime", version("onnxruntime"))
    for name, tool, make in [("SLIM-1", "onnxslim", slim_1), ("SLIM-2", "onnxslim", slim_2),
                             ("SLIM-3", "onnxslim", slim_3), ("SLIM-4", "onnxslim", slim_4),
                             ("SLIM-5", "onnxslim", slim_5),
                             ("SIM-1", "onnxsim", sim_1), ("SIM-2", "onnxsim", sim_2)]:
        model, feeds = make()
        onnx.checker.check_model(model)
        after = optimised(tool, model)
        print(f"{name}: original on onnxruntime: {shown(on_ort(model, feeds))}")
        if not isinstance(after, str):
            print(f"{name}: inputs {[i.name for i in model.graph.input]} -> "
                  f"{[i.name for i in after.graph.input]}; optimised on onnxruntime: "
                  f"{shown(on_ort(after, feeds))}")
        else:
            print(f"{name}: {after}")
