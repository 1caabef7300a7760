"""The faults of OpenVINO's CPU plugin first met with seed 7, and two faults met before
still there (spec/50, OpenVINO), each shown without lazyloop: a model built by
hand (ONNX, or Loop-5 with openvino's opset API), compiled with INFERENCE_PRECISION_HINT f32,
every input fed, beside the answer computed by hand (and onnxruntime's, for ONNX models).
Needs numpy, onnx, onnxruntime and openvino."""
import multiprocessing
import signal

import numpy as np
from onnx import TensorProto as T
from onnx import helper as h

from common import integer_gemm, model, on_ort, shown
from common import value as v

F = T.FLOAT


def _compile_and_run(built, feeds, answer):
    import openvino as ov
    core = ov.Core()
    try:
        m = core.read_model(built.SerializeToString()) if hasattr(built, "SerializeToString") \
            else built()
        compiled = core.compile_model(m, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
        result = compiled([np.array(f, copy=True) for f in feeds])
        answer.put([np.array(result[port]) for port in compiled.outputs])
    except Exception as exc:  # noqa: BLE001 -- the engine's error is its answer
        answer.put(f"{type(exc).__name__}: ..." + " ".join(str(exc).split())[-220:])


def on_openvino(built, feeds):
    """OpenVINO's outputs, its error in one line, or the signal that killed it (run in a
    child process: some of these models crash it). `built` is ONNX bytes' model or a
    function returning an ov.Model."""
    answer = multiprocessing.get_context("fork").Queue()
    child = multiprocessing.get_context("fork").Process(target=_compile_and_run,
                                                        args=(built, feeds, answer))
    child.start()
    child.join(120)
    if child.exitcode is not None and child.exitcode < 0:
        return f"crash: {signal.Signals(-child.exitcode).name}"
    return answer.get(timeout=5)


def zero_length_scan(body):
    """Scan over xs = [] (zero trips) with no scan output, carrying y (0.0) and, for the If
    bodies, a flag (true): "if-same": y's next value is If(flag, then 0.5, else y) and the flag
    passes through; "if-not": the same with the flag negated each trip; "add": y + 0.5, no
    flag. Zero trips: y stays 0.0."""
    branch = {b: h.make_graph([node], b, [], [v(f"y_{b}", F, [])]) for b, node in [
        ("then", h.make_node("Constant", [], ["y_then"], value_float=0.5)),
        ("else", h.make_node("Identity", ["y_in"], ["y_else"]))]}
    half = h.make_tensor("half", F, [], [0.5])
    if body == "add":
        nodes, ins, outs, inits = [h.make_node("Add", ["y_in", "half"], ["y_next"])], [], [], [half]
    else:
        nodes = [h.make_node("If", ["flag_in"], ["y_next"], then_branch=branch["then"],
                             else_branch=branch["else"])]
        flag_out = "flag_in"
        if body == "if-not":
            nodes.append(h.make_node("Not", ["flag_in"], ["flag_next"]))
            flag_out = "flag_next"
        ins, outs = [v("flag_in", T.BOOL, [])], [v(flag_out, T.BOOL, [])]
        inits = [h.make_tensor("flag", T.BOOL, [], [True])]
    graph = h.make_graph(nodes, "body", ins + [v("y_in", F, []), v("e", F, [])],
                         outs + [v("y_next", F, [])],
                         initializer=[half] if body == "add" else [])
    states = ([] if body == "add" else ["flag"]) + ["y0"]
    m = model([h.make_node("Scan", states + ["xs"], [s + "_final" for s in states], body=graph,
                           num_scan_inputs=1)],
              [v("xs", F, [0])], [v("y0_final", F, [])], 16,
              inits=[i for i in inits if i.name == "flag"] + [h.make_tensor("y0", F, [], [0.0])])
    return m, [np.zeros([0], np.float32)], [np.float32(0.0)]


def loop5_concat(trips, axis, chunk_width, fed_false=False):
    """A function building Loop-5 of `trips` trips (a constant; execution condition true, or
    a Parameter `c` fed false: then zero trips) whose body result, a [1, chunk_width] zero
    constant, is concatenated on `axis` (stride 1, part size 1): by hand
    [1, trips * chunk_width] on axis 1 or -1, [trips, chunk_width] on axis 0."""
    def build():
        import openvino as ov
        from openvino import opset13 as ops
        x = ops.parameter([1], np.float32, name="x")
        c = ops.parameter([], np.bool_, name="c")
        body_x = ops.parameter([1], np.float32, name="bx")
        chunk = ops.result(ops.constant(np.zeros([1, chunk_width], np.float32)))
        results = [ops.result(ops.constant(True)), chunk,
                   ops.result(ops.add(body_x, ops.constant(np.float32([1]))))]
        loop = ops.loop(ops.constant(np.int64(trips)), c if fed_false else ops.constant(True))
        loop.set_function(ov.Model(results, [body_x]))
        loop.set_special_body_ports([-1, 0])
        loop.set_merged_input(body_x, x.output(0), results[2].output(0))
        out = loop.get_concatenated_slices(chunk.output(0), 0, 1, 1, -1, axis)
        return ov.Model([ops.result(out)], [x, c] if fed_false else [x])
    made = 0 if fed_false else trips
    return build, [np.float32([0])] + ([np.bool_(False)] if fed_false else []), [
        np.zeros([1, made * chunk_width] if axis else [made, chunk_width], np.float32)]


ONNX_CASES = [
    ("OV-23 Gemm of int64, alpha 0.5", lambda: integer_gemm(np.int64, 0.5)),
    ("OV-23 Gemm of int64, alpha 1.5", lambda: integer_gemm(np.int64, 1.5)),
    ("OV-23 control: Gemm of int64, alpha 2", lambda: integer_gemm(np.int64, 2.0)),
    ("OV-24 a zero-length Scan, no scan output: If on a flag passed through",
     lambda: zero_length_scan("if-same")),
    ("OV-24 the same, the flag negated each trip", lambda: zero_length_scan("if-not")),
    ("OV-24 the same, y + 0.5 each trip", lambda: zero_length_scan("add")),
]
LOOP5_CASES = [
    ("OV-8 condition fed false, trip count 2, axis 0", lambda: loop5_concat(2, 0, 2, True)),
    ("OV-3 trip count 0, a [1, 2] result on axis 0", lambda: loop5_concat(0, 0, 2)),
]

if __name__ == "__main__":
    from importlib.metadata import version
    import onnxruntime as ort
    ort.set_default_logger_severity(4)
    print("openvino", version("openvino"), "onnxruntime", ort.__version__)
    for name, make in ONNX_CASES:
        m, feeds, expected = make()
        print(f"{name}:\n  by hand {shown(expected)}\n  openvino {shown(on_openvino(m, feeds))}"
              f"\n  onnxruntime {shown(on_ort(m, feeds))}")
    for name, make in LOOP5_CASES:
        build, feeds, expected = make()
        print(f"{name}:\n  by hand {shown(expected)}\n"
              f"  openvino {shown(on_openvino(build, feeds))}")
