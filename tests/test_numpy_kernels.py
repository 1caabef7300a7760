"""ONNX kernels bound straight to numpy give exactly what ONNX's reference kernel gives
(rule: onnx/node): same values, same dtype, and the same error where the reference refuses."""
import numpy as np
import pytest

pytest.importorskip("onnx")
from onnx import helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

from lazyloop.core.errors import EvaluationError  # noqa: E402
from lazyloop.onnx import kernels  # noqa: E402
import lazyloop.onnx as lo  # noqa: E402
from kernel_checks import (F, N, X, agrees_with_the_reference, bound_pair, i64,  # noqa: E402
                           refusing_slow, same)

UNARY = ["Abs", "Neg", "Tanh", "Floor", "Ceil", "Sin", "Cos", "Sign", "Exp", "Relu",
         "Sigmoid", "Identity"]
BINARY = ["Max", "Min", "MatMul", "Equal", "Less", "Greater", "LessOrEqual",
          "GreaterOrEqual", "Add", "Sub", "Mul"]
LOGICAL = ["And", "Or", "Xor"]


def node(op, arity):
    return helper.make_node(op, [f"x{k}" for k in range(arity)], ["y"])


def reference(op, *args):
    """The op on `args` through onnx's ReferenceEvaluator (a one-node model)."""
    from onnx import TensorProto  # noqa: F401
    from onnx.helper import make_graph, make_model, make_opsetid, make_tensor_value_info
    elem = helper.np_dtype_to_tensor_dtype
    graph = make_graph([node(op, len(args))], "g",
                       [make_tensor_value_info(f"x{k}", elem(a.dtype), a.shape)
                        for k, a in enumerate(args)],
                       [make_tensor_value_info("y", 0, None)])
    model = make_model(graph, opset_imports=[make_opsetid("", 17)])
    return ReferenceEvaluator(model).run(None, {f"x{k}": a for k, a in enumerate(args)})[0]


def bound(op, arity):
    return kernels.bind(node(op, arity), {"": 17}, f"node {op}")


def reference_kernel(op, arity):
    """The reference kernel bound without the direct numpy path."""
    cls = kernels.kernel_class("", op, 17)
    run_params = {"log": lambda *a, **k: None, "opsets": {"": 17}, "verbose": 0,
                  "new_ops": None, "existing_functions": {}, "evaluator_cls": None}
    return kernels._bound_reference(cls(node(op, arity), run_params), f"node {op}")


rng = np.random.default_rng(0)
VALUES = [np.float32(rng.standard_normal()) * np.ones((), np.float32),
          rng.standard_normal((3, 4)).astype(np.float32),
          rng.integers(-5, 5, (4,)).astype(np.int32),
          np.array([np.nan, -0.0, 0.0, np.inf], np.float32)]


@pytest.mark.parametrize("op", UNARY)
@pytest.mark.parametrize("k", range(len(VALUES)))
def test_unary_kernels_match_the_reference(op, k):
    # rule: onnx/node
    x = VALUES[k]
    fn = bound(op, 1)
    try:
        want = reference(op, x)
    except Exception:  # noqa: BLE001 -- the model is refused (Tanh of int32, ...):
        # then the direct binding behaves as the reference kernel bound alone
        want = None
    slow = reference_kernel(op, 1)
    try:
        expected = slow(x)[0]
    except EvaluationError:
        with pytest.raises(EvaluationError):
            fn(x)
        return
    same(fn(x)[0], expected)
    same(fn.single(x), expected)
    if want is not None:
        same(fn.single(x), want)


@pytest.mark.parametrize("op", BINARY)
def test_binary_kernels_match_the_reference(op):
    # rule: onnx/node
    a = rng.standard_normal((3, 3)).astype(np.float32)
    b = rng.standard_normal((3, 3)).astype(np.float32)
    for x, y in [(a, b), (a, b[0]), (a[0, 0] * np.ones((), np.float32), b)]:
        same(bound(op, 2)(x, y)[0], reference(op, x, y))


@pytest.mark.parametrize("op", LOGICAL)
def test_logical_kernels_match_the_reference(op):
    # rule: onnx/node
    a, b = np.array([True, False, True]), np.array([True, True, False])
    same(bound(op, 2)(a, b)[0], reference(op, a, b))


def test_refusals_are_the_reference_kernels_own():
    # rule: onnx/node -- Max of float32 and int32 is refused by the reference's dtype check;
    # the direct binding hands it to the reference kernel, which says so
    fn = bound("Max", 2)
    with pytest.raises(EvaluationError) as info:
        fn(np.zeros(2, np.float32), np.zeros(2, np.int32))
    assert info.value.rule == "onnx/node" and "mismatch" in str(info.value)
    with pytest.raises(EvaluationError):  # shapes that do not broadcast
        bound("MatMul", 2)(np.zeros((2, 3), np.float32), np.zeros((2, 3), np.float32))


def test_a_reference_kernel_answering_no_tuple_is_refused_not_read():
    # rule: onnx/node -- GridSample of an empty batch: the reference's _run answers a bare
    # array, which its own run refuses; lazyloop refuses it too (never its first row as
    # the value), naming the node and the rule
    from onnx import TensorProto
    g = helper.make_graph([helper.make_node("GridSample", ["x", "grid"], ["y"])], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [0, 1, 3, 3]),
                           helper.make_tensor_value_info("grid", TensorProto.FLOAT,
                                                         [0, 2, 2, 2])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)])
    feeds = {"x": np.zeros((0, 1, 3, 3), np.float32),
             "grid": np.zeros((0, 2, 2, 2), np.float32)}
    with pytest.raises(TypeError, match="does not return a tuple"):
        ReferenceEvaluator(model).run(None, feeds)
    with pytest.raises(EvaluationError) as info:
        lo.evaluate(model, feeds)
    assert info.value.rule == "onnx/node" and "not a tuple" in str(info.value)


def test_identity_shares_the_element():
    # rule: onnx/node, stream/memo -- elements are read-only, so Identity need not copy
    x = np.arange(3, dtype=np.float32)
    x.flags.writeable = False
    assert bound("Identity", 1).single(x) is x


@pytest.mark.parametrize("scalar", [np.int64(7), np.float32(-0.0), np.bool_(True),
                                    np.uint8(255), np.float64(np.nan)])
def test_identity_of_a_numpy_scalar_is_the_reference_kernels_0d_array(scalar):
    # rule: onnx/node -- the reference kernel copies it; the bound call makes that a 0-D array
    want = reference_kernel("Identity", 1)(scalar)[0]
    got = bound("Identity", 1).single(scalar)
    assert type(got) is np.ndarray and type(want) is np.ndarray
    same(got, want)
    assert np.signbit(got) == np.signbit(scalar)


def test_a_cast_to_the_same_dtype_shares_the_element():
    # rule: onnx/node, stream/memo -- jax2onnx casts float32 to float32: the element itself,
    # as Identity gives it (the record says it may pass its input on); another dtype a copy
    from onnx import TensorProto
    fn = kernels.bind(helper.make_node("Cast", ["x0"], ["y"], to=TensorProto.FLOAT),
                      {"": 19}, "node Cast")
    x = np.arange(3, dtype=np.float32)
    assert fn.single(x) is x and fn.passes_input
    y = fn.single(x.astype(np.float64))
    assert y.dtype == np.float32 and y.tolist() == [0.0, 1.0, 2.0]


CAST_TO = ["FLOAT", "DOUBLE", "FLOAT16", "INT8", "INT32", "INT64", "UINT8", "BOOL", "STRING",
           "BFLOAT16", "FLOAT8E4M3FN"]


@pytest.mark.parametrize("to", CAST_TO)
@pytest.mark.parametrize("value", VALUES + [np.array([True, False]),
                                            np.array([300, -1], np.int64), np.int64(-3)])
def test_cast_is_the_reference_cast(to, value):
    # rule: onnx/node -- plain dtypes by astype, the others by the reference kernel: the
    # same values (bit for bit where floats), dtype and shape as ONNX's ReferenceEvaluator
    from onnx import TensorProto
    code = getattr(TensorProto, to)
    n = helper.make_node("Cast", ["x0"], ["y"], to=code)
    fn = kernels.bind(n, {"": 19}, "node Cast")
    from onnx.helper import make_graph, make_model, make_opsetid, make_tensor_value_info
    graph = make_graph([n], "g", [make_tensor_value_info(
        "x0", helper.np_dtype_to_tensor_dtype(value.dtype), np.shape(value))],
        [make_tensor_value_info("y", code, None)])
    want = ReferenceEvaluator(make_model(graph, opset_imports=[make_opsetid("", 19)])).run(
        None, {"x0": np.asarray(value)})[0]  # a numpy scalar: how the bound kernel gets
    # the iteration number of a Loop, whose counter adds 0-D arrays
    with np.errstate(all="ignore"):
        got = np.asarray(fn(value)[0])
    want = np.asarray(want)
    assert got.shape == want.shape
    if to == "STRING":  # the width of a unicode dtype may differ: streams hold objects
        assert list(got.astype(object).ravel()) == list(want.astype(object).ravel())
    else:
        assert got.dtype == want.dtype and got.tobytes() == want.tobytes()
    if to in ("FLOAT", "INT32", "BOOL"):  # bound straight to numpy
        assert fn.single.__doc__.startswith("Cast:")


ARRAY_CASES = [  # (op, attributes, inputs): common cases, and ones the reference refuses
    ("Reshape", {}, (X, i64(4, -1))), ("Reshape", {}, (X, i64(0, 12))),
    ("Reshape", {"allowzero": 1}, (X, i64(6, 4))), ("Reshape", {}, (X, i64(5, 5))),
    ("Unsqueeze", {}, (X, i64(0, -1))), ("Unsqueeze", {}, (X, i64(9))),
    ("Unsqueeze", {}, (X, np.array(1, np.int64))), ("Unsqueeze", {}, (X, i64(1, 1))),
    ("Unsqueeze", {}, (X, i64(-1, -5, 2))), ("Unsqueeze", {}, (X, i64(-6))),
    ("Unsqueeze", {}, (np.float32(2) * np.ones(()), i64(0))),
    ("Reshape", {}, (X, i64(-1))), ("Reshape", {}, (X, i64(-1, -1))),
    ("Expand", {}, (X[0, :, :1], i64(2, 3, 4))), ("Expand", {}, (X, i64(5, 1, 1))),
    ("Range", {}, (np.array(1, np.int64), np.array(9, np.int64), np.array(3, np.int64))),
    ("Range", {}, (np.array(0.5, np.float32), np.array(2, np.float32),
                   np.array(0.25, np.float32))),
    ("Range", {}, (np.array(0, np.int32), np.array(4, np.int32), np.array(0, np.int32))),
    ("Squeeze", {}, (X[:1], i64(0))), ("Squeeze", {}, (X, i64(1))),
    ("Gather", {"axis": 1}, (X, i64(2, -1, 0))), ("Gather", {}, (X, i64(7))),
    ("Gather", {}, (X, np.array([[1, 0]], np.int32))), ("Gather", {}, (X, np.int64(1))),
    ("Gather", {}, (X[0, 0], np.int64(-1))), ("Gather", {}, (X[0, 0], np.array(2))),
    ("Gather", {}, (X, np.int64(5))),
    ("CastLike", {}, (X, np.ones((), np.int32))), ("CastLike", {}, (np.int64(3), X)),
    ("CastLike", {}, (i64(300, -1), np.ones((), np.uint8))),
    ("CastLike", {}, (X > 3, np.ones(1, np.float16))),
    ("CastLike", {}, (X[0], np.array(["a"], object))),
    ("Concat", {"axis": -1}, (X, X)), ("Concat", {"axis": 0}, (np.float32(1) * np.ones(()),
                                                              np.ones(()))),
    ("Concat", {"axis": 3}, (X, X)),
    ("Where", {}, (X > 5, X, -X)), ("Where", {}, (X > 5, X, X.astype(np.float64))),
    ("ReduceSum", {}, (X, i64(1))), ("ReduceSum", {"keepdims": 0}, (X, i64(0, 2))),
    ("ReduceSum", {}, (X,)), ("ReduceSum", {"noop_with_empty_axes": 1}, (X, i64())),
    ("ReduceSum", {"keepdims": 0}, (X.astype(np.int32),)), ("ReduceSum", {}, (X, i64(3))),
    ("ReduceSumSquare", {"axes": [1]}, (X,)), ("ReduceSumSquare", {"keepdims": 0}, (X,)),
    ("ReduceSumSquare", {"axes": [0, -1], "keepdims": 0}, (X.astype(np.int32),)),
    ("ReduceSumSquare", {"axes": [3]}, (X,)),
    ("Gemm", {}, (X[0], X[1].T)), ("Gemm", {"alpha": 0.5, "beta": 2.0}, (X[0], X[1].T, X[0, 0])),
    ("Gemm", {"transA": 1, "transB": 1}, (X[0].T, X[1], X[0])), ("Gemm", {}, (X[0], X[1])),
    ("Gemm", {"transB": 1, "beta": 0.0}, (X[0].astype(np.float64), X[1].astype(np.float64),
                                          np.ones(1))),
    ("Gemm", {}, (X[0], X[1].T, X[0, :, :3])),
    ("Gemm", {"transA": 1}, (X[0].T, X[1].T, X[0, 0, :3])),
    ("Gemm", {"beta": 1.0}, (X[0].astype(np.float64), X[1].T.astype(np.float64),
                             np.array(-0.0))),
    ("Gemm", {"transB": 1}, (X[0].astype(np.float16), X[1].astype(np.float16),
                             X[0, 0, :3].astype(np.float16))),
    ("Gemm", {}, (X[0], X[1].T, X[0, :, :3].astype(np.float64))),
    ("Gemm", {}, (X[0].astype(np.int64), X[1].T.astype(np.int64), i64(2**53 + 1))),
    ("Gemm", {}, (X[0], X[1].T, X[0])),  # a C that does not broadcast: the reference refuses
    ("Gemm", {}, (X[0, 0], X[1, 0])), ("Gemm", {}, (X[0, :0], X[1, :, :0].T, X[0, 0, :3])),
    ("Transpose", {}, (X,)), ("Transpose", {"perm": [1, 0, 2]}, (X,)),
    ("Transpose", {"perm": [1, 0]}, (X,)), ("Transpose", {"perm": [0, 0, 1]}, (X,)),
    ("Transpose", {"perm": [2, 0, -2]}, (X,)), ("Transpose", {}, (X[0, 0, 0],)),
    ("Flatten", {}, (X,)), ("Flatten", {"axis": 0}, (X,)), ("Flatten", {"axis": -1}, (X,)),
    ("Flatten", {"axis": 3}, (X,)), ("Flatten", {"axis": 2}, (X[:, :0],)),
    ("Flatten", {"axis": 1}, (X[:, :0],)), ("Flatten", {"axis": 0}, (X[0, 0, 0],)),
    ("Unsqueeze", {}, (X[0, 0, 0], i64(-1))), ("Unsqueeze", {}, (X, np.array([3], np.uint8))),
    ("Unsqueeze", {}, (X, i64(4))), ("Unsqueeze", {}, (X, i64(-5))),
    ("ConstantOfShape", {}, (i64(2, 3),)), ("ConstantOfShape", {}, (i64(),)),
    ("ConstantOfShape", {"value": helper.make_tensor("v", 7, [1], [-3])}, (i64(0, 2),)),
    ("ConstantOfShape", {"value": helper.make_tensor("v", 11, [1], [0.1])}, (i64(4),)),
    ("ConstantOfShape", {"value": helper.make_tensor("v", 9, [1], [True])},
     (np.array([2], np.int32),)),
    ("ConstantOfShape", {}, (i64(-1),)), ("ConstantOfShape", {}, (np.array([2.0]),)),
    ("NonZero", {}, (X - 5,)), ("NonZero", {}, (X[0, 0] > 1,)), ("NonZero", {}, (X[:0],)),
    ("NonZero", {}, (np.array(3.0),)), ("NonZero", {}, (np.array(0),)),
    ("NonZero", {}, (F,)),
    ("Squeeze", {}, (X[:1, :, :1], i64(-1, 0))), ("Squeeze", {}, (X[:1], i64(-4))),
    ("Shape", {}, (X,)), ("Shape", {"start": 1}, (X,)),
    ("Einsum", {"equation": "a,ab->b"}, (X[0, 0], X[0].T)),
    ("Einsum", {"equation": "a,ab->b"}, (X[1, 1], X[1].T)),  # the same shapes again
    ("Einsum", {"equation": "bij,bjk->bik"}, (X, X.transpose(0, 2, 1))),
    ("Einsum", {"equation": "ij,jk,kl->il"}, (X[0], X[1].T, X[0])),
    ("Einsum", {"equation": " ii -> i"}, (X[0, :, :3],)),
    ("Einsum", {"equation": "...i,ij->...j"}, (X.astype(np.int64), X[0].T.astype(np.int64))),
    ("Einsum", {"equation": "ij,jk->ik"}, (X[0], X[1])),  # 4 against 3: the reference refuses
    ("Einsum", {"equation": "ij,jk->ik"}, (X[0], X[1].T.astype(np.float64))),
    ("Div", {}, (X, X + 1)), ("Div", {}, (i64(-7, 7), i64(2, -2))),
    ("Div", {}, (X, np.ones((), np.float64))), ("Not", {}, (X > 3,)),
    ("Div", {}, (np.array([-7, 7, -8, 0], np.int32), np.array([2, -2, 3, 5], np.int32))),
    ("Div", {}, (np.array(9, np.int32), np.array(-4, np.int32))),
    ("Div", {}, (i64(5), np.array([2], np.int32))),
    ("Slice", {}, (X, i64(0, 1), i64(1, 3))), ("Slice", {}, (X, i64(-1), i64(-100), i64(2),
                                                            i64(-1))),
    ("Slice", {}, (X, i64(1, 9), i64(2**62, -1), i64(-1, 1))),
    ("Slice", {}, (X, i64(3, 0), i64(0, 2), i64(1, 0), i64(-2, 1))),
    ("Slice", {}, (X, i64(0), i64(2), i64(1), i64(0))),  # a zero step: the reference refuses
    ("Slice", {}, (X, i64(0), i64(2), i64(3))),  # an axis out of range
    ("Slice", {}, (X, np.array([0, 1], np.int32), np.array([2, 2], np.int32))),
    ("Slice", {}, (X, i64(0, 0), i64(1))),  # pairs cut to the shortest list
]


POW_CASES = [  # base, exponent: ordinary values and the edges numpy handles its own way
    (F, np.float32(0.5) * np.ones((), np.float32)), (F, F[:, None]), (F, np.float32(2) * F),
    (F.astype(np.float64), F), (F, N[:, None].astype(np.int64)), (F.astype(np.float16), F),
    (N, np.array(2, np.int32)), (N, N[::-1].copy()), (N, np.array(-1, np.int32)),
    (N.astype(np.int64), np.array(70, np.int64)), (N, np.array([0.5], np.float32)),
    (N, np.array([np.nan, 1e10], np.float64)[:, None]), (F[:0], F[:1]),
    (np.array(-8.0, np.float32), np.array(1 / 3, np.float32)), (F, N[:2])]


SQRT_CASES = [F, F.astype(np.float64), F.astype(np.float16), N, N.astype(np.uint8), F[:0],
              np.array(-4.0, np.float32), np.array(9, np.int64), F.reshape(3, 3)[:, ::2]]
QUIET_CASES = [("Pow", args) for args in POW_CASES] + [("Sqrt", (x,)) for x in SQRT_CASES]


@pytest.mark.parametrize("case", range(len(QUIET_CASES)))
def test_pow_and_sqrt_are_the_reference_kernels_bit_for_bit(case):
    # rule: onnx/node -- Pow and Sqrt made by numpy directly (np.power, np.sqrt, then the
    # first input's dtype) give the reference kernel's bytes, dtype and shape -- NaN from a
    # negative base to a fractional power or from a negative square root, -0.0 kept,
    # overflow to inf, integers through float64 and back, integer wrap-around -- or its
    # refusal (an integer to a negative integer power; shapes that do not broadcast), and no
    # warning
    import warnings
    op, args = QUIET_CASES[case]
    fn, slow = bound_pair(op, len(args), opset=15)
    assert fn.single.__doc__.startswith(op) and fn.batched is not None
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a warning the reference silences is a failure here
        got = agrees_with_the_reference(fn, slow, args)
    assert got is None or type(got) is np.ndarray


def test_pow_under_a_raising_error_state_is_the_reference_kernels():
    # rule: onnx/node -- numpy's error state set to raise: the reference kernel raises on the
    # NaN of (-8) ** (1/3) (silencing warnings does not silence errors), and so does the
    # node; 2 ** 3 is still 8
    fn, _ = bound_pair("Pow", 2, opset=15)
    with np.errstate(all="raise"):
        with pytest.raises(EvaluationError, match="FloatingPointError"):
            fn(np.array([-8.0], np.float32), np.array(1 / 3, np.float32))
        assert fn.single(np.array([2.0], np.float32), np.array(3, np.int64)).tolist() == [8.0]
    assert fn.single(np.array([-8.0]), np.array(0.5)).tolist() != [-2.0]  # NaN, quietly


@pytest.mark.parametrize("case", range(len(ARRAY_CASES)))
def test_array_kernels_match_the_reference(case):
    # rule: onnx/node -- the direct numpy call, or the reference kernel's own, gives the
    # reference's value, dtype and shape, or refuses where it refuses
    op, attributes, args = ARRAY_CASES[case]
    agrees_with_the_reference(*bound_pair(op, len(args), **attributes), args)


SUM_SQUARE_18 = [  # ReduceSumSquare 18: the axes an input
    ({}, (X, i64(1))), ({"keepdims": 0}, (X, i64(0, 2))), ({}, (X,)),
    ({"noop_with_empty_axes": 1}, (X, i64())), ({"keepdims": 0}, (X.astype(np.int64),)),
    ({}, (X, i64(3))), ({}, (X > 3,))]


@pytest.mark.parametrize("case", range(len(SUM_SQUARE_18)))
def test_sum_square_with_axes_as_an_input_matches_the_reference(case):
    # rule: onnx/node -- np.sum(np.square(x)) over the axes the reference reads, or the
    # reference's own refusal (an axis out of range, a bool input)
    attributes, args = SUM_SQUARE_18[case]
    fn, slow = bound_pair("ReduceSumSquare", len(args), opset=18, **attributes)
    assert fn.reads_only
    agrees_with_the_reference(fn, slow, args)


def test_a_loops_iteration_number_takes_the_direct_path():
    # rule: onnx/node -- a Loop's iteration number is a numpy integer (its counter adds 0-D
    # arrays): Gather by it and CastLike of it are made by numpy directly, and give 0-D
    # arrays where numpy gives a scalar, as the bound reference kernel does (np.take and
    # astype computed here by hand)
    from lazyloop.onnx.array_kernels import gather
    from lazyloop.onnx.numpy_kernels import cast_like
    take = gather({"axis": 0}, refusing_slow)
    row = take(X, np.int64(1))
    assert type(row) is np.ndarray and row.tolist() == X[1].tolist()
    element = take(X[0, 0], np.int64(-1))
    assert type(element) is np.ndarray and element.shape == () and element == 3.0
    cast = cast_like(refusing_slow)(np.int64(4), np.ones(2, np.float32))
    assert type(cast) is np.ndarray and cast.dtype == np.float32 and cast.shape == () and cast == 4
    assert bound_pair("CastLike", 2)[0].single.__doc__.startswith("CastLike:")


def test_slice_takes_the_direct_path_and_gives_a_view():
    # rule: onnx/node -- an LSTM cell's gate slices (constant 1-D starts, ends, axes) are cut
    # by numpy directly: columns 4..8 of a 2 x 12 matrix, and the rows backwards (an end
    # of -3 lies before the first row: both rows are taken)
    from lazyloop.onnx.array_kernels import slice_
    cut = slice_({}, refusing_slow)
    z = np.arange(24, dtype=np.float32).reshape(2, 12)
    gate = cut(z, i64(4), i64(8), i64(1))
    assert gate.tolist() == [[4, 5, 6, 7], [16, 17, 18, 19]] and gate.base is not None
    assert cut(z, i64(-1), i64(-3), i64(0), i64(-1)).tolist() == [list(range(12, 24)),
                                                                 list(range(12))]


def test_the_array_kernels_are_bound_directly():
    # the common cases take the direct path (its records read only; ReduceSum 11, whose
    # axes are an attribute, keeps the reference's)
    for op, arity in (("Reshape", 2), ("Gather", 2), ("ReduceSum", 2), ("Expand", 2),
                      ("Range", 3), ("Unsqueeze", 2), ("Transpose", 1), ("Flatten", 1),
                      ("ConstantOfShape", 1), ("NonZero", 1),
                      ("Pow", 2), ("Sqrt", 1),
                      ("Where", 3), ("Div", 2), ("Not", 1), ("Shape", 1), ("Slice", 3),
                      ("Slice", 5)):
        assert bound_pair(op, arity)[0].reads_only, op
    assert bound_pair("Concat", 2, axis=0)[0].reads_only
    assert bound_pair("ReduceSumSquare", 1, axes=[1])[0].reads_only
    assert bound_pair("Gemm", 3)[0].reads_only
    assert bound_pair("Einsum", 2, equation="ij,jk->ik")[0].reads_only
    assert not bound_pair("ReduceSum", 1, opset=11, axes=[0])[0].reads_only


def test_integer_division_truncates_without_the_reference_layers():
    # rule: onnx/node -- Div of integers is the reference kernel's own function (toward
    # zero, by hand: -7/2 = -3, 7/-2 = -3, -8/3 = -2), called directly
    fn, _ = bound_pair("Div", 2)
    got = fn(np.array([-7, 7, -8, 9], np.int32), np.array([2, -2, 3, 3], np.int32))[0]
    assert got.dtype == np.int32 and got.tolist() == [-3, -3, -2, 3]
    from lazyloop.onnx.numpy_kernels import divide
    direct = divide(lambda a, b: np.trunc(a / b).astype(a.dtype), refusing_slow)
    assert direct(np.array([-7], np.int64), np.array([2], np.int64)).tolist() == [-3]


@pytest.mark.parametrize("case", ["jax2onnx/lstm_scan", "jax2onnx/gru_scan"])
def test_einsum_cells_equal_onnx_reference_evaluator(case):
    # rule: onnx/node -- jax2onnx's LSTM/GRU scans make their products with Einsum: the
    # engine's answer (Einsum's steps chosen once per shapes) is ONNX's own evaluator's, byte
    # for byte, evaluated twice (the second time with the kept steps)
    from corpus_data import load
    path, feeds, _, meta = load(case)
    want = ReferenceEvaluator(path).run(None, {k: np.asarray(v) for k, v in feeds.items()})
    for _ in range(2):
        got = lo.evaluate(path, feeds, readings=meta["readings"] or None)
        assert [np.asarray(g).tobytes() for g in got.values()] == [w.tobytes() for w in want]


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_sigmoid_with_one_exponential_is_the_reference_bit_for_bit(dtype):
    # rule: onnx/node -- the bound Sigmoid computes exp(-|x|) once where the reference kernel
    # computes exp(x) and exp(-x) everywhere; the values must still be the reference's bits
    info = np.finfo(dtype)
    edges = [0.0, -0.0, np.inf, -np.inf, info.max, -info.max, info.tiny, -info.tiny,
             info.smallest_subnormal, -info.smallest_subnormal, 88.7, -88.7, -103.9, 17.0,
             -17.0, 1e-8, -1e-8]
    values = np.concatenate([np.array(edges, dtype),
                             (np.random.default_rng(5).standard_normal(4000) * 30).astype(dtype)])
    with np.errstate(all="ignore"):
        want = reference_kernel("Sigmoid", 1)(values)[0]
    got = bound("Sigmoid", 1).single(values)
    assert got.dtype == want.dtype == dtype
    assert got.tobytes() == want.tobytes()
    # a NaN keeps the bits exp(x) gives it on the reference's side, its sign included (the
    # binding's exp(-|x|) made every float16 and float64 NaN negative: found by the kernel law)
    nans = np.array([np.nan, -np.nan] * 150, dtype)  # both forms: at most FEW_VALUES and more
    for n in (2, 300):
        with np.errstate(all="ignore"):
            want = reference_kernel("Sigmoid", 1)(nans[:n])[0]
        got = bound("Sigmoid", 1).single(nans[:n])
        assert np.isnan(got).all() and got.tobytes() == want.tobytes()
        # by hand: numpy's exp keeps a NaN's sign in float16 and float64, clears it in float32
        assert list(np.signbit(got[:2])) == [False, dtype != np.float32]
    # arrays of at most FEW_VALUES values, of a few and of nearly that many
    for small in np.array_split(values[:200], 8) + np.array_split(values[:1000], 4):
        with np.errstate(all="ignore"):
            want = reference_kernel("Sigmoid", 1)(small)[0]
        assert bound("Sigmoid", 1).single(small).tobytes() == want.tobytes()


def test_gemm_with_unit_scales_is_the_plain_product():
    # rule: onnx/node -- alpha 1 and beta 1 (as float32, how the reference kernel holds
    # them): A B' + C, by numpy's matmul here, in A's dtype
    from lazyloop.onnx.array_kernels import gemm
    one = np.float32(1.0)
    product = gemm({"alpha": one, "beta": one, "transA": 0, "transB": 1}, refusing_slow)
    a, b, c = X[0], X[1], X[0, 0, :3]
    got = product(a, b, c)
    assert got.dtype == np.float32 and got.tolist() == (a @ b.T + c).tolist()
    assert product(a, b).tolist() == (a @ b.T).tolist()
