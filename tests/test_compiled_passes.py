"""Maps whose kernel computes nothing on a plain array (rules stream/map, stream/memo,
onnx/node): Identity, a Cast or CastLike to the dtype the array has. Their kernels state it
(`Kernel.returns_plain`) and the compiled trips then make no call: the claim is tested
against the kernels, and a loop of such maps gives numpy's values in every mode."""
import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402

import lazyloop.onnx as lo  # noqa: E402
from lazyloop.onnx.kernels import bind  # noqa: E402
from nets import ENGINE_MODES  # noqa: E402
from test_compiled_checks import trip_source  # noqa: E402


def kernel(op, arity, **attributes):
    node = helper.make_node(op, ["a", "b"][:arity], ["y"], **attributes)
    return bind(node, {"": 17}, op).first_value(arity)


def test_what_a_kernel_says_it_returns_as_it_is_it_returns_as_it_is():
    # rule: stream/memo, onnx/node -- a plain array of the stated dtype comes back itself;
    # of another dtype, or a numpy scalar, a new value (numpy's cast)
    f32 = np.array([1.5, -2.0], np.float32)
    identity = kernel("Identity", 1)
    assert identity.returns_plain == "any" and identity.function(f32) is f32
    cast = kernel("Cast", 1, to=TensorProto.FLOAT)
    assert cast.returns_plain == np.float32 and cast.function(f32) is f32
    to_int = kernel("Cast", 1, to=TensorProto.INT32)
    assert to_int.returns_plain == np.int32 and to_int.function(f32) is not f32
    np.testing.assert_array_equal(to_int.function(f32), np.array([1, -2], np.int32))
    like = kernel("CastLike", 2)
    assert like.returns_plain == "like"
    assert like.function(f32, np.zeros(1, np.float32)) is f32
    got = like.function(f32, np.zeros(1, np.int64))
    assert got.dtype == np.int64 and list(got) == [1, -2]
    scalar = like.function(np.float32(2.5), np.zeros(1, np.float32))
    assert type(scalar) is np.ndarray and scalar.dtype == np.float32 and scalar == 2.5
    assert kernel("Abs", 1).returns_plain is None  # it computes


def passing_loop(trips=4):
    """ONNX: y = Identity(CastLike(Cast(y, FLOAT), x)) + x carried; z = CastLike(y_out, k)
    with k an int64: int64(y_out), stacked."""
    f, i64, b = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL
    body = helper.make_graph(
        [helper.make_node("Identity", ["c"], ["c_out"]),
         helper.make_node("Cast", ["y"], ["a"], to=f),
         helper.make_node("CastLike", ["a", "x"], ["b2"]),
         helper.make_node("Identity", ["b2"], ["c2"]),
         helper.make_node("Add", ["c2", "x"], ["y_out"]),
         helper.make_node("CastLike", ["y_out", "k"], ["z"])], "body",
        [helper.make_tensor_value_info("i", i64, []), helper.make_tensor_value_info("c", b, []),
         helper.make_tensor_value_info("y", f, [2])],
        [helper.make_tensor_value_info("c_out", b, []),
         helper.make_tensor_value_info("y_out", f, [2]),
         helper.make_tensor_value_info("z", i64, [2])])
    graph = helper.make_graph(
        [helper.make_node("Loop", ["M", "", "y0"], ["y", "zs"], body=body)], "g",
        [helper.make_tensor_value_info("x", f, [2]),
         helper.make_tensor_value_info("y0", f, [2])],
        [helper.make_tensor_value_info("y", f, [2]),
         helper.make_tensor_value_info("zs", i64, [trips, 2])],
        [helper.make_tensor("M", i64, [], [trips]), helper.make_tensor("k", i64, [], [0])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize("mode", ENGINE_MODES + ("reference",))
def test_a_loop_of_maps_that_pass_their_argument(mode):
    # rule: stream/map -- y_k = y0 + (k + 1) x; z_k = int64(y_k) (truncated), by numpy
    x, y0 = np.array([1.5, -2.25], np.float32), np.array([0.25, 1.0], np.float32)
    got = lo.evaluate(passing_loop(), {"x": x, "y0": y0}, mode=mode)
    k = np.arange(1, 5, dtype=np.float32)[:, None]
    np.testing.assert_array_equal(got["y"], y0 + 4 * x)
    np.testing.assert_array_equal(got["zs"], (y0 + k * x).astype(np.int64))
    assert got["zs"].dtype == np.int64


def test_the_compiled_trips_call_no_kernel_that_passes_its_argument():
    # rule: stream/map -- the two Identities, the Cast and the first CastLike are written
    # as their argument itself where it is a plain array of that dtype
    x, y0 = np.ones(2, np.float32), np.zeros(2, np.float32)
    lines = [line.strip() for line in trip_source(passing_loop(), {"x": x, "y0": y0})
             .splitlines()]
    passed = [test for test, then in zip(lines, lines[1:])
              if test.startswith("if a0_0.__class__ is ND") and then == "v0 = a0_0"]
    assert sum(test == "if a0_0.__class__ is ND:" for test in passed) >= 2  # Identities
    assert any("a0_0.dtype is d" in test for test in passed)  # the Cast to float32
    assert any("dtype.kind in 'biuf'" in test for test in passed)  # CastLike like x
