"""Symptoms, skeletons and the model-level minimiser (spec/51-difftest.md, "Symptoms",
"Grouping findings", "Minimal cases"): what a finding shows without the names and numbers of
its program, a model compared up to names and constants, and a model reduced edit by edit.

rules: onnx/loop, onnx/scan8, onnx/scan9
"""
import numpy as np
import pytest

from lazyloop.difftest.symptom import Symptom, error_symptom, normalised_error, value_symptom

onnx = pytest.importorskip("onnx")


# -- symptoms ----------------------------------------------------------------------------------

OPENVINO_CHECK = (
    "LoadFailed: RuntimeError: Exception from src/inference/src/cpp/core.cpp:117:\n"
    "Exception from src/inference/src/dev/plugin.cpp:54:\nCheck 'full_dims == part_dims' "
    "failed at src/plugins/intel_cpu/src/nodes/tensoriterator.cpp:{line}:\nShape mismatch for "
    "tensor iterator port")


def test_an_openvino_error_keeps_its_check_and_file_and_drops_lines_and_paths():
    # rule: onnx/loop -- the part that tells faults apart is the checked condition and the
    # file, after a chain of wrappers whose lines change between versions
    a = normalised_error(OPENVINO_CHECK.format(line=132))
    b = normalised_error(OPENVINO_CHECK.format(line=140))
    assert a == b == ("LoadFailed: RuntimeError: Check 'full_dims == part_dims' failed at "
                      "tensoriterator.cpp: Shape mismatch for tensor iterator port")


def test_names_addresses_and_numbers_are_dropped_operators_are_kept():
    # rule: onnx/scan8 -- two programs meeting one fault of ONNX's reference Scan
    a = ("RuntimeTypeError: Input type mismatch: int64 != float32 (operator ''Add'', "
         "shapes (3,), (3, 2)). (in the reference's op_scan kernel)")
    b = ("RuntimeTypeError: Input type mismatch: int64 != float32 (operator ''Add'', "
         "shapes (2,), (2,)). (in the reference's op_scan kernel)")
    assert normalised_error(a) == normalised_error(b)
    assert "'Add'" in normalised_error(a) and "op_scan" in normalised_error(a)
    mul = a.replace("Add", "Mul")
    assert normalised_error(mul) != normalised_error(a)
    assert normalised_error("RuntimeError: Node v0_final of type Loop object at 0x7f3a9c") == \
        normalised_error("RuntimeError: Node Loop_162366 of type Loop object at 0x55e0")


def test_deaths_hangs_memory_and_lost_inputs_are_symptoms_of_their_own():
    assert error_symptom("BackendCrashed: the backend's process died (signal SIGFPE)") == \
        Symptom("crash", "SIGFPE")
    assert error_symptom("BackendCrashed: no answer within 6 s while running (killed)") == \
        Symptom("hang")
    assert error_symptom("BackendCrashed: the backend's process passed its memory limit of "
                         "4096 MiB while running (killed)") == Symptom("oom")
    assert error_symptom("InputLost: the engine lost input `v0`") == Symptom("lost-input")


def f32(*values):
    return np.array(values, np.float32)


@pytest.mark.parametrize("want, got, kind", [
    (f32(1, 2, 3), f32(2, 3, 4), "offset"),               # every position plus one
    (np.int8([127, -128]), np.int8([-128, -127]), "offset"),  # + 1 wrapping in int8
    (f32(1, 2, 3), f32(1, 2), "rows"),                    # a trailing row missing
    (f32(0, 1), f32(0, 1).reshape(2, 1), "rank"),          # stacked to [n, 1]
    (f32(1, 2, 3, 4).reshape(2, 2), f32(1, 2, 3, 4), "rank"),
    (f32(1, 2), np.array([1, 2], np.float64), "dtype"),
    (f32(1, 2, 3), f32(1, 5, 3), "values"),
    (f32(1, 2, 3), f32(0, 0, 0), "values: zeros"),
    (np.uint8([248, 250]), np.uint8([255, 255]), "values: bounds"),
])
def test_value_differences_by_kind(want, got, kind):
    # rule: onnx/loop -- the kind of difference, without the values themselves
    assert str(value_symptom({"y": want}, {}, {"y": got})) == kind


def test_undefined_positions_and_the_most_telling_output_decide():
    # rule: onnx/scan8 -- padding may hold anything; a missing output outranks a value
    assert value_symptom({"y": f32(1, 2)}, {"y": np.array([True, False])},
                         {"y": f32(2, 9)}) == Symptom("offset")
    assert value_symptom({"y": f32(1), "z": f32(1)}, {}, {"y": f32(5)}) == \
        Symptom("missing-output")


# -- skeletons: models compared up to names and constants -------------------------------------

def scan_model(axis=0, name="x", value=2.0):
    from onnx import TensorProto as T
    from onnx import helper as h
    body = h.make_graph(
        [h.make_node("Constant", [], ["k"], value=h.make_tensor("kv", T.FLOAT, [], [value])),
         h.make_node("Mul", ["e", "k"], ["o"])],
        "body", [h.make_tensor_value_info("e", T.FLOAT, [2])],
        [h.make_tensor_value_info("o", T.FLOAT, [2])])
    graph = h.make_graph(
        [h.make_node("Scan", [name], [f"{name}_out"], body=body, num_scan_inputs=1,
                     scan_input_axes=[axis])],
        "g", [h.make_tensor_value_info(name, T.FLOAT, [3, 2])],
        [h.make_tensor_value_info(f"{name}_out", T.FLOAT, [3, 2])])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 16)])


def test_a_skeleton_ignores_names_and_constants_but_not_attributes():
    # rule: onnx/scan9 -- renamed values and another constant: one case; another scan axis:
    # another case
    from lazyloop.difftest.skeleton import digest
    assert digest(scan_model()) == digest(scan_model(name="v", value=-7.5))
    assert digest(scan_model()) != digest(scan_model(axis=1))


# -- the model-level minimiser ----------------------------------------------------------------

def test_the_minimiser_drops_dead_nodes_and_rewires_only_values_of_one_type():
    # rule: onnx/loop -- a "backend" that fails on every model with a Mul: the minimal
    # case keeps the Mul and drops what it need not (the dead Neg, the Cast before it only
    # where the Mul still types)
    from onnx import TensorProto as T
    from onnx import helper as h

    from lazyloop.difftest.minimize import minimise, node_count, one_minimal_violations
    graph = h.make_graph(
        [h.make_node("Neg", ["x"], ["dead"]),
         h.make_node("Abs", ["x"], ["a"]),
         h.make_node("Mul", ["a", "a"], ["y"]),
         h.make_node("Cast", ["y"], ["z"], to=T.INT32)],
        "g", [h.make_tensor_value_info("x", T.FLOAT, [2])],
        [h.make_tensor_value_info("z", T.INT32, [2])])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 16)])

    def keeps(case):
        return any(n.op_type == "Mul" for n in case[0].graph.node)

    (small, feeds), ended = minimise((model, {"x": f32(1, 2)}), keeps)
    assert ended == "complete"
    assert [n.op_type for n in small.graph.node] == ["Mul", "Cast"]  # Cast: int32 output
    assert node_count(model) == 4 and node_count(small) == 2
    assert one_minimal_violations((small, feeds), keeps) == []
    assert one_minimal_violations((model, {"x": f32(1, 2)}), keeps) == ["Neg __m0", "Abs __m1"]
