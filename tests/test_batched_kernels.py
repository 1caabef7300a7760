"""Batched forms of ONNX reference kernels (lazyloop/onnx/batched_kernels.py): a Scan whose
body applies them to its scanned element is computed in one call over the stacked axis,
with the reference evaluator's values bit for bit (rules: stream/map, onnx/scan9)."""
import numpy as np
import pytest

import lazyloop as ll
from nets import batched_runs, onnx_on_engine

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402

import lazyloop.onnx as lo  # noqa: E402

F = TensorProto.FLOAT


def batched_streams(machine):
    """The streams the runs of the engine's schedules computed in one call."""
    return {k for b in batched_runs(machine) for k in b}


def scan_model(nodes, out_shape, out_type=F, initializers=(), opset=18, element=(3, 4)):
    """Scan over x [T, *element]: the body maps its element `e` to `y` (nodes), stacked."""
    body = helper.make_graph(
        nodes, "body", [helper.make_tensor_value_info("e", F, list(element))],
        [helper.make_tensor_value_info("y", out_type, list(out_shape))], list(initializers))
    graph = helper.make_graph(
        [helper.make_node("Scan", ["x"], ["ys"], body=body, num_scan_inputs=1)], "g",
        [helper.make_tensor_value_info("x", F, [None] + list(element))],
        [helper.make_tensor_value_info("ys", out_type, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def ints(name, values):
    return helper.make_tensor(name, TensorProto.INT64, [len(values)], values)


X = np.random.default_rng(7).uniform(-2, 2, (50, 3, 4)).astype(np.float32)

CASES = {
    # name: (body nodes, element result shape, result dtype, initializers, expected from x)
    "Transpose": ([helper.make_node("Transpose", ["e"], ["y"], perm=[1, 0])], (4, 3), F, (),
                  lambda x: np.transpose(x, (0, 2, 1))),
    "Reshape": ([helper.make_node("Reshape", ["e", "s"], ["y"])], (2, 6), F,
                (ints("s", [2, -1]),), lambda x: x.reshape(50, 2, 6)),
    "Flatten": ([helper.make_node("Flatten", ["e"], ["y"], axis=0)], (1, 12), F, (),
                lambda x: x.reshape(50, 1, 12)),
    "Unsqueeze": ([helper.make_node("Unsqueeze", ["e", "a"], ["y"])], (3, 1, 4), F,
                  (ints("a", [1]),), lambda x: x[:, :, None, :]),
    "ReduceSum": ([helper.make_node("ReduceSum", ["e", "a"], ["y"], keepdims=0)], (3,), F,
                  (ints("a", [-1]),), None),
    "ReduceMax": ([helper.make_node("ReduceMax", ["e", "a"], ["y"], keepdims=1)], (1, 4), F,
                  (ints("a", [0]),), lambda x: x.max(axis=1, keepdims=True)),
    "Cast": ([helper.make_node("Cast", ["e"], ["y"], to=TensorProto.INT32)], (3, 4),
             TensorProto.INT32, (), lambda x: x.astype(np.int32)),
    "Where": ([helper.make_node("Greater", ["e", "zero"], ["pos"]),
               helper.make_node("Where", ["pos", "e", "zero"], ["y"])], (3, 4), F,
              (helper.make_tensor("zero", F, [], [0.0]),), lambda x: np.maximum(x, 0)),
    "Pow": ([helper.make_node("Abs", ["e"], ["a"]), helper.make_node("Pow", ["a", "k"], ["y"])],
            (3, 4), F, (helper.make_tensor("k", F, [], [3.0]),),
            lambda x: np.power(np.abs(x), np.float32(3))),
    "Sqrt": ([helper.make_node("Abs", ["e"], ["a"]), helper.make_node("Sqrt", ["a"], ["y"])],
             (3, 4), F, (), lambda x: np.sqrt(np.abs(x))),
    "ReduceMean": ([helper.make_node("ReduceMean", ["e", "a"], ["y"], keepdims=0)], (3,), F,
                   (ints("a", [-1]),), None),
    "ReduceSumSquare": ([helper.make_node("ReduceSumSquare", ["e", "a"], ["y"], keepdims=0)],
                        (4,), F, (ints("a", [0]),),  # numpy's own sum, element by element
                        lambda x: np.stack([np.add.reduce(np.square(e), axis=0) for e in x])),
    "ReduceMin": ([helper.make_node("ReduceMin", ["e", "a"], ["y"], keepdims=0)], (), F,
                  (ints("a", [1, 0]),), lambda x: x.min(axis=(1, 2))),
    "Clip": ([helper.make_node("Clip", ["e", "lo", "hi"], ["y"])], (3, 4), F,
             (helper.make_tensor("lo", F, [], [-1.0]), helper.make_tensor("hi", F, [], [0.5])),
             lambda x: np.clip(x, np.float32(-1), np.float32(0.5))),
}


@pytest.mark.parametrize("op", sorted(CASES))
def test_a_scan_over_the_op_is_batched_and_exact(op):
    # rule: stream/map, onnx/scan9 -- one call over the stacked elements, the reference's
    # values bit for bit, and (where a numpy expression says it) the expected values
    nodes, shape, dtype, inits, expected = CASES[op]
    model = scan_model(nodes, shape, dtype, inits)
    got, machine = onnx_on_engine(model, {"x": X})
    got = got["ys"]
    ref = lo.run(model, {"x": X}, mode="reference").outputs["ys"]
    assert got.dtype == ref.dtype and got.shape == ref.shape == (50,) + shape
    assert got.tobytes() == ref.tobytes()
    if expected is not None:
        np.testing.assert_array_equal(got, expected(X))
    assert "Scan(ys)/y" in batched_streams(machine)  # the body's output, in one call


def test_a_reduction_over_every_axis_is_not_batched_but_exact():
    # rule: stream/map -- no axes: the reduction takes every axis of an element, which is
    # not a reduction of the stack; per element it is the sum of the 12 values
    model = scan_model([helper.make_node("ReduceSum", ["e", "a"], ["y"], keepdims=0)], (), F,
                       (helper.make_tensor("a", TensorProto.INT64, [0], []),))
    got, machine = onnx_on_engine(model, {"x": X})
    got = got["ys"]
    assert got.tobytes() == lo.run(model, {"x": X}, mode="reference").outputs["ys"].tobytes()
    np.testing.assert_allclose(got, X.reshape(50, 12).sum(axis=1), rtol=1e-5)
    assert "Scan(ys)/y" not in batched_streams(machine)


def test_a_kernel_refusing_the_stack_leaves_that_stream_alone():
    # rule: stream/map -- Reshape to a shape that fits no element: the reference's error
    model = scan_model([helper.make_node("Reshape", ["e", "s"], ["y"])], (5,), F,
                       (ints("s", [5]),))
    with pytest.raises(ll.LazyLoopError) as ref:
        lo.run(model, {"x": X}, mode="reference")
    with pytest.raises(ll.LazyLoopError) as fast:
        lo.evaluate(model, {"x": X})
    assert type(fast.value) is type(ref.value) and fast.value.rule == ref.value.rule


def cdist_scan(rows: int):
    """skl2onnx's squared distances as it writes them: a Scan carrying X [5, 3] unchanged
    (Identity) over the rows t of T [rows, 3]: d = ReduceSumSquare(X - t, axes [1]),
    stacked."""
    body = helper.make_graph(
        [helper.make_node("Identity", ["x_in"], ["x_out"]),
         helper.make_node("Sub", ["x_in", "t"], ["diff"]),
         helper.make_node("ReduceSumSquare", ["diff", "axes"], ["sq"], keepdims=0),
         helper.make_node("Identity", ["sq"], ["d"])], "body",
        [helper.make_tensor_value_info("x_in", F, [5, 3]),
         helper.make_tensor_value_info("t", F, [3])],
        [helper.make_tensor_value_info("x_out", F, [5, 3]),
         helper.make_tensor_value_info("d", F, [5])], [ints("axes", [1])])
    graph = helper.make_graph(
        [helper.make_node("Scan", ["X", "T"], ["x_last", "D"], body=body, num_scan_inputs=1)],
        "g", [helper.make_tensor_value_info("X", F, [5, 3]),
              helper.make_tensor_value_info("T", F, [rows, 3])],
        [helper.make_tensor_value_info("D", F, [rows, 5])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def test_squared_distances_batch_as_numpy_computes_them_row_by_row():
    # rule: stream/map, onnx/scan9 -- the Sub, the reduction over the element's axis 1 (the
    # stack's axis 2, by the reduction numpy makes) and the Identity are each one call over
    # the 24 rows; each row is numpy's sum of squares for that row alone, bit for bit
    rng = np.random.default_rng(3)
    x = rng.uniform(-2, 2, (5, 3)).astype(np.float32)
    t = rng.uniform(-2, 2, (24, 3)).astype(np.float32)
    got, machine = onnx_on_engine(cdist_scan(24), {"X": x, "T": t})
    want = np.stack([np.add.reduce(np.square(x - row), axis=1) for row in t])
    assert got["D"].dtype == np.float32 and got["D"].shape == (24, 5)
    assert got["D"].tobytes() == want.tobytes()
    batched = batched_streams(machine)
    assert {"Scan(x_last)/diff", "Scan(x_last)/sq", "Scan(x_last)/d"} <= batched, batched


@pytest.mark.parametrize("op", ["Acos", "Asin"])
@pytest.mark.parametrize("mode", ["fast", "compiled"])
def test_float16_scalars_out_of_the_domain_keep_the_reference_s_nan(op, mode):
    # rule: stream/map (onnx/node) -- found by the kernel law: numpy's float16 arccos and
    # arcsin of a value out of [-1, 1] are a positive NaN for a 0-D value and a negative one
    # in an array, so a Scan of 0-D float16 elements batched as one array gave -NaN where
    # the reference evaluator, element by element, gives +NaN; such elements are not batched
    from onnx.reference import ReferenceEvaluator
    h = TensorProto.FLOAT16
    body = helper.make_graph([helper.make_node(op, ["e"], ["y"])], "body",
                             [helper.make_tensor_value_info("e", h, [])],
                             [helper.make_tensor_value_info("y", h, [])])
    graph = helper.make_graph(
        [helper.make_node("Scan", ["x"], ["ys"], body=body, num_scan_inputs=1)], "g",
        [helper.make_tensor_value_info("x", h, [None])],
        [helper.make_tensor_value_info("ys", h, [None])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    x = np.array([0.5] + [2.0, 0.25, -3.0] * 30 + [0.5], np.float16)
    with np.errstate(all="ignore"):
        want = ReferenceEvaluator(model).run(None, {"x": x})[0]
        got = lo.evaluate(model, {"x": x}, mode=mode)["ys"]
    assert np.isnan(got[1]) and not np.signbit(want[1])  # by hand: the 0-D value's NaN
    assert got.dtype == want.dtype and got.tobytes() == want.tobytes()
