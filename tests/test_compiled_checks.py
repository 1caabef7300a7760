"""Which elements the compiled trips check (rule structure/shapes), and the binary ufunc
kernels they call without a layer (rules stream/map, onnx/node).

`Kernel.gives` (lazyloop/core/result_types.py) says what type a kernel's value has from
its arguments' types; the compiled trips leave out the check of a map whose type contains
it. The claims are tested here against the kernels themselves (a claim that a value did not
keep would fail), and the checks that can fail are shown still to refuse, as the reference
refuses. Expected values by hand or by numpy."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lazyloop as ll
from lazyloop.core.kernel import ELLIPSIS_OUT
from lazyloop.core.result_types import broadcast, contains
from lazyloop.core.types import TensorType
from nets import ENGINE_MODES, refused_as_the_reference

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402

import lazyloop.onnx as lo  # noqa: E402
from lazyloop.core.engine import compiled  # noqa: E402
from lazyloop.onnx.kernels import bind  # noqa: E402


def test_broadcast_bounds_by_hand():
    # rule: structure/shapes -- what numpy's broadcasting gives, as far as shapes know it
    assert broadcast([(), ()]) == ()
    assert broadcast([(None, 3), (1,)]) == (None, 3)
    assert broadcast([(None,), (4,)]) == (4,)  # None is 1 or 4, else numpy raises
    assert broadcast([(2,), (3,)]) == (None,)  # numpy raises: no size is promised
    assert broadcast([(2, 1), (5,)]) == (2, 5)
    assert broadcast([None, (2,)]) is None


def test_contains_by_hand():
    # rule: structure/shapes -- a type contains another when each of its values agrees
    f32 = np.dtype(np.float32)
    assert contains(TensorType(f32, (None, 3)), TensorType(f32, (2, 3)))
    assert not contains(TensorType(f32, (2, 3)), TensorType(f32, (None, 3)))
    assert not contains(TensorType(f32, (2,)), TensorType(np.float64, (2,)))
    assert contains(TensorType(f32, None), TensorType(f32, None))
    assert not contains(TensorType(f32, (2,)), TensorType(f32, None))


UNARY = ["Identity", "Abs", "Neg", "Exp", "Relu", "Sigmoid", "Sqrt", "Tanh", "Floor"]
BINARY = ["Add", "Sub", "Mul", "Div", "Max", "Min", "Less", "Equal", "Greater", "MatMul",
          "Gemm"]
DTYPES = [np.float16, np.float32, np.float64, np.int32, np.int64, np.uint8, np.bool_]
SHAPES = [(), (1,), (3,), (2, 3), (1, 3), (2, 1), (3, 2), (2, 2, 3)]


def node_kernel(op, arity, **attributes):
    node = helper.make_node(op, ["a", "b", "c"][:arity], ["y"], **attributes)
    return bind(node, {"": 17}, op).first_value(arity)


def element(draw, dtype, shape):
    values = np.arange(1, 1 + int(np.prod(shape)), dtype=np.int64).reshape(shape) % 5 - 2
    value = values.astype(dtype)
    if shape == () and draw(st.booleans()):
        return value[()]  # a numpy scalar, as a Loop's iteration number is
    return value


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_what_a_kernel_says_it_gives_is_what_it_gives(data):
    # rule: structure/shapes -- for arguments that agree with their types (some dimensions
    # unknown), a kernel's value agrees with the type `gives` states, whenever it gives one
    arity = data.draw(st.sampled_from([1, 2]))
    op = data.draw(st.sampled_from(UNARY if arity == 1 else BINARY))
    flags = {name: data.draw(st.sampled_from([0, 1])) for name in ("transA", "transB")}
    kernel = node_kernel(op, arity, **(flags if op == "Gemm" else {}))
    dtype = np.dtype(data.draw(st.sampled_from(DTYPES)))
    shapes = [data.draw(st.sampled_from(SHAPES)) for _ in range(arity)]
    args = [element(data.draw, dtype, s) for s in shapes]
    types = [TensorType(dtype, tuple(None if data.draw(st.booleans()) else d for d in s))
             for s in shapes]
    given_type = kernel.gives(types)
    try:
        with np.errstate(all="ignore"):
            value = kernel.function(*args)
    except ll.LazyLoopError:
        return  # refused: no element to check
    if op in ("MatMul", "Gemm"):
        assert given_type is None or all(len(s) >= 2 for s in shapes)
    if given_type is not None:
        assert isinstance(value, (np.ndarray, np.generic)), (op, value)
        assert value.dtype == given_type.dtype and given_type.admits(np.shape(value)), (
            op, dtype, shapes, value.dtype, np.shape(value), given_type)


def agrees_with_its_claim(kernel, args, types, case):
    """The kernel's value on `args` (of `types`) is an array of the type it says it gives,
    where it says one (a value refused is no element to check)."""
    given_type = kernel.gives(types)
    try:
        with np.errstate(all="ignore"):
            value = kernel.function(*args)
    except ll.LazyLoopError:
        return
    if given_type is not None:
        assert isinstance(value, np.ndarray), (case, value)
        assert value.dtype == given_type.dtype and given_type.admits(value.shape), (
            case, value.dtype, value.shape, given_type)


def loosened(data, dtype, shape):
    """The type of an argument of `dtype` and `shape`, some dimensions drawn unknown."""
    return TensorType(np.dtype(dtype), tuple(None if data.draw(st.booleans()) else d
                                             for d in shape))


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_what_a_shape_or_indexing_kernel_says_it_gives_is_what_it_gives(data):
    # rule: structure/shapes -- Where, Concat, Gather, Not, CastLike and Shape: for
    # arguments that agree with their types, the value agrees with the type `gives` states
    op = data.draw(st.sampled_from(["Where", "Concat", "Gather", "Not", "CastLike", "Shape"]))
    dtype = np.dtype(data.draw(st.sampled_from(DTYPES)))
    shape = data.draw(st.sampled_from(SHAPES))
    attributes, dtypes, shapes = {}, [dtype], [shape]
    if op == "Where":
        dtypes = [np.bool_, dtype, dtype]
        shapes = [data.draw(st.sampled_from(SHAPES)) for _ in range(3)]
    elif op == "Concat":
        other = data.draw(st.sampled_from(SHAPES))  # often of another rank or size
        attributes["axis"] = data.draw(st.integers(-3, 2))
        dtypes, shapes = [dtype, data.draw(st.sampled_from([dtype, np.dtype(np.int64)]))], [
            shape, other]
    elif op == "Gather":
        attributes["axis"] = data.draw(st.integers(-3, 2))
        dtypes = [dtype, np.dtype(data.draw(st.sampled_from([np.int32, np.int64])))]
        shapes = [shape, data.draw(st.sampled_from([(), (1,), (2,), (2, 1)]))]
    elif op == "Not":
        dtypes = [np.dtype(np.bool_)]
    elif op == "CastLike":
        dtypes = [dtype, np.dtype(data.draw(st.sampled_from(DTYPES)))]
        shapes = [shape, data.draw(st.sampled_from(SHAPES))]
    kernel = node_kernel(op, len(shapes), **attributes)
    args = [element(data.draw, t, s) for t, s in zip(dtypes, shapes)]
    if op == "Gather":
        args[1] = np.zeros(shapes[1], dtypes[1]) if shapes[1] else dtypes[1].type(0)
    types = [loosened(data, t, s) for t, s in zip(dtypes, shapes)]
    agrees_with_its_claim(kernel, args, types, (op, dtypes, shapes, attributes))


RANKED = {  # op -> attribute choices, the vectors its other arguments are drawn from
    "Reshape": ({}, [[[-1]], [[1, -1]], [[-1, 1]], [[2, -1]], [[6]]]),
    "Expand": ({}, [[[1]], [[2, 1]], [[2, 3]], [[1, 1, 1]], [[3]]]),
    "Unsqueeze": ({}, [[[0]], [[-1]], [[0, 1]], [0]]),
    "Slice": ({}, [[[0], [1]], [[1], [5], [0]], [[0], [-1], [-1]], [[0], [2], [0], [2]]]),
    "ReduceSum": ({"keepdims": [0, 1], "noop_with_empty_axes": [0, 1]},
                  [[], [[0]], [[-1]], [[0, 1]]]),
}


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_what_a_reshaping_kernel_says_it_gives_is_what_it_gives(data):
    # rule: structure/shapes -- Reshape, Expand, Unsqueeze, Slice and ReduceSum: the rank
    # their shape or axes vectors decide (by their lengths alone), the data's dtype
    op = data.draw(st.sampled_from(sorted(RANKED)))
    choices, vectors = RANKED[op]
    attributes = {name: data.draw(st.sampled_from(values)) for name, values in choices.items()}
    others = [np.array(v, np.int64) for v in data.draw(st.sampled_from(vectors))]
    dtype = np.dtype(data.draw(st.sampled_from(
        [np.float32, np.float64] if op == "ReduceSum" else DTYPES)))
    shape = data.draw(st.sampled_from(SHAPES))
    kernel = node_kernel(op, 1 + len(others), **attributes)
    args = [element(data.draw, dtype, shape)] + others
    types = [loosened(data, dtype, shape)] + [loosened(data, np.int64, o.shape) for o in others]
    agrees_with_its_claim(kernel, args, types, (op, dtype, shape, others, attributes))


def test_shape_and_indexing_types_by_hand():
    # rule: structure/shapes -- what each of these kernels' values is, from types alone
    f32, i64 = np.dtype(np.float32), np.dtype(np.int64)
    concat = node_kernel("Concat", 2, axis=-1).gives
    assert concat([TensorType(f32, (2, 3)), TensorType(f32, (None, 4))]) == TensorType(
        f32, (2, 7))
    assert concat([TensorType(f32, (2, None)), TensorType(f32, (2, 4))]) == TensorType(
        f32, (2, None))
    assert concat([TensorType(f32, (2,)), TensorType(f32, (2, 4))]) is None  # ranks differ
    gather = node_kernel("Gather", 2, axis=1).gives
    assert gather([TensorType(f32, (5, 6, 7)), TensorType(i64, (2, 3))]) == TensorType(
        f32, (5, 2, 3, 7))
    assert gather([TensorType(f32, (5, 6)), TensorType(i64, ())]) == TensorType(f32, (5,))
    where = node_kernel("Where", 3).gives
    assert where([TensorType(np.bool_, (3, 1)), TensorType(i64, (4,)),
                  TensorType(i64, ())]) == TensorType(i64, (3, 4))
    assert where([TensorType(f32, (3,))] * 3) is None  # the condition is not boolean
    assert node_kernel("Shape", 1).gives([TensorType(f32, (None, 2, 3))]) == TensorType(
        i64, (3,))
    assert node_kernel("CastLike", 2).gives([TensorType(f32, (None, 2)),
                                             TensorType(i64, ())]) == TensorType(i64, (None, 2))
    assert node_kernel("Not", 1).gives([TensorType(np.bool_, (2,))]) == TensorType(
        np.bool_, (2,))
    assert node_kernel("Reshape", 2).gives([TensorType(f32, (6,)), TensorType(
        i64, (3,))]) == TensorType(f32, (None, None, None))
    assert node_kernel("Unsqueeze", 2).gives([TensorType(f32, (2,)), TensorType(
        i64, (2,))]) == TensorType(f32, (None, None, None))
    assert node_kernel("ReduceSum", 2, keepdims=0).gives(
        [TensorType(f32, (2, 3)), TensorType(i64, (1,))]) == TensorType(f32, (None,))
    assert node_kernel("ReduceSum", 1, keepdims=0).gives([TensorType(f32, (2, 3))]) == \
        TensorType(f32, ())
    assert node_kernel("ReduceSum", 2, keepdims=0).gives(  # [0, 0] may repeat an axis
        [TensorType(f32, (2, 3)), TensorType(i64, (2,))]) is None


@pytest.mark.parametrize("to, dtype", [(TensorProto.INT32, np.int32),
                                       (TensorProto.DOUBLE, np.float64),
                                       (TensorProto.BOOL, np.bool_)])
def test_a_cast_gives_its_dtype_in_its_arguments_shape(to, dtype):
    # rule: structure/shapes -- Cast(x) has the dtype cast to and x's shape
    kernel = node_kernel("Cast", 1, to=to)
    ty = kernel.gives([TensorType(np.float32, (None, 2))])
    assert ty == TensorType(dtype, (None, 2))
    value = kernel.function(np.array([[1.5, -2.0]], np.float32))
    assert value.dtype == dtype and value.shape == (1, 2)
    assert kernel.gives([TensorType(object, (2,))]) is None  # strings: not described


def add_loop(declared, trips=3, op="Add"):
    """ONNX: y = op(y, x) `trips` times from y0; y's body output declared `declared` (a
    shape list) while x and y0 are float32[?]."""
    f, i64, b = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL
    body = helper.make_graph(
        [helper.make_node("Identity", ["c"], ["c_out"]),
         helper.make_node(op, ["y", "x"], ["y_out"])], "body",
        [helper.make_tensor_value_info("i", i64, []), helper.make_tensor_value_info("c", b, []),
         helper.make_tensor_value_info("y", f, [None])],
        [helper.make_tensor_value_info("c_out", b, []),
         helper.make_tensor_value_info("y_out", f, declared)])
    graph = helper.make_graph(
        [helper.make_node("Loop", ["M", "", "y0"], ["y"], body=body)], "g",
        [helper.make_tensor_value_info("x", f, [None]),
         helper.make_tensor_value_info("y0", f, [None])],
        [helper.make_tensor_value_info("y", f, [None])],
        [helper.make_tensor("M", i64, [], [trips])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def trip_source(model, feeds):
    """The generated trips of the model's loop, as text."""
    texts = []
    original = compiled.source

    def keep(*args, **kwargs):
        texts.append(original(*args, **kwargs))
        return texts[-1]
    compiled.source = keep
    try:
        lo.evaluate(lo.lower(model), feeds, mode="compiled")
    finally:
        compiled.source = original
    return "\n".join(texts)


def test_a_sure_map_is_not_checked_and_another_is():
    # rule: structure/shapes -- Add of float32[?] values is float32[?]: its trips leave the
    # check out; declared float32[2], the same Add may break it: checked
    feeds = {"x": np.ones(2, np.float32), "y0": np.zeros(2, np.float32)}
    sure = trip_source(add_loop([None]), feeds)
    kept = trip_source(add_loop([2]), feeds)
    y_out = [line for line in kept.splitlines() if "CHECK(" in line]
    assert len(y_out) > len([line for line in sure.splitlines() if "CHECK(" in line])


@pytest.mark.parametrize("mode", ENGINE_MODES)
def test_an_element_its_type_refuses_is_still_refused(mode):
    # rule: structure/shapes -- y_out is declared float32[2]; x of 3 values makes it [3]:
    # refused with the reference's error in every mode; x of 2 values: 3 * x
    model = add_loop([2])
    bad = {"x": np.ones(3, np.float32), "y0": np.zeros(3, np.float32)}
    ref, _ = refused_as_the_reference(model, bad, mode)
    assert ref.rule == "structure/shapes"
    ok = {"x": np.array([1.5, -2.0], np.float32), "y0": np.zeros(2, np.float32)}
    np.testing.assert_array_equal(lo.evaluate(model, ok, mode=mode)["y"],
                                  np.array([4.5, -6.0], np.float32))


@pytest.mark.parametrize("mode", ENGINE_MODES)
def test_a_ufunc_that_raises_is_named_as_the_node(mode):
    # rule: onnx/node, stream/map -- Sub of float32[3] and float32[2] cannot broadcast:
    # numpy raises in the compiled trips, the trip is handed back, and the error is the
    # reference's, naming the node
    model = add_loop([None], op="Sub")
    bad = {"x": np.ones(2, np.float32), "y0": np.zeros(3, np.float32)}
    ref, got = refused_as_the_reference(model, bad, mode)
    assert ref.rule == "onnx/node" and "Sub" in str(got)


@pytest.mark.parametrize("mode", ENGINE_MODES)
def test_scalar_sums_are_arrays_of_their_dtype(mode):
    # rule: onnx/node -- y = y + x on 0-D float32 values, 5 trips: 5 * 1.25 = 6.25, a 0-D
    # float32 array (the ufunc's scalar made an array, with `out=...` where numpy has it)
    model = add_loop([None], trips=5)
    model.graph.input[0].type.tensor_type.shape.ClearField("dim")
    model.graph.input[1].type.tensor_type.shape.ClearField("dim")
    body = model.graph.node[0].attribute[0].g
    for vi in list(body.input[2:]) + list(body.output[1:]):
        vi.type.tensor_type.shape.ClearField("dim")
    model.graph.output[0].type.tensor_type.shape.ClearField("dim")
    y = lo.evaluate(model, {"x": np.array(1.25, np.float32), "y0": np.array(0, np.float32)},
                    mode=mode)["y"]
    assert type(y) is np.ndarray and y.dtype == np.float32 and y.shape == () and y == 6.25


def test_ellipsis_out_is_what_numpy_takes():
    # rule: onnx/node -- where numpy takes out=..., a 0-D sum is an array
    a = np.array(1.0, np.float32)
    if ELLIPSIS_OUT:
        assert type(np.add(a, a, out=...)) is np.ndarray
    else:
        with pytest.raises(TypeError):
            np.add(a, a, out=...)


def scan_loop(dims, trips=3):
    """ONNX: y = y + x carried, z = y * x stacked (a scan output), `trips` times; x and y0
    are float32 of shape `dims` (None: unknown)."""
    f, i64, b = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL
    body = helper.make_graph(
        [helper.make_node("Identity", ["c"], ["c_out"]),
         helper.make_node("Add", ["y", "x"], ["y_out"]),
         helper.make_node("Mul", ["y_out", "x"], ["z"])], "body",
        [helper.make_tensor_value_info("i", i64, []), helper.make_tensor_value_info("c", b, []),
         helper.make_tensor_value_info("y", f, dims)],
        [helper.make_tensor_value_info("c_out", b, []),
         helper.make_tensor_value_info("y_out", f, dims),
         helper.make_tensor_value_info("z", f, dims)])
    graph = helper.make_graph(
        [helper.make_node("Loop", ["M", "", "y0"], ["y", "zs"], body=body)], "g",
        [helper.make_tensor_value_info("x", f, dims),
         helper.make_tensor_value_info("y0", f, dims)],
        [helper.make_tensor_value_info("y", f, dims),
         helper.make_tensor_value_info("zs", f, [trips] + dims)],
        [helper.make_tensor("M", i64, [], [trips])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_a_stacked_map_of_one_known_shape_is_not_checked():
    # rule: structure/shapes -- z is stacked: its elements keep one shape. Mul of
    # float32[2] values is float32[2], one shape always: its trips leave the check out;
    # of float32[?] values it may change shape from trip to trip as far as types say:
    # checked. The values by numpy: y_k = y0 + (k + 1) x, z_k = y_k * x
    x, y0 = np.array([1.5, -2.0], np.float32), np.array([0.5, 1.0], np.float32)
    feeds = {"x": x, "y0": y0}
    known = trip_source(scan_loop([2]), feeds)
    unknown = trip_source(scan_loop([None]), feeds)
    assert known.count("CHECK(") < unknown.count("CHECK(")
    k = np.arange(1, 4, dtype=np.float32)[:, None]
    for model in (scan_loop([2]), scan_loop([None])):
        got = lo.evaluate(model, feeds, mode="compiled")
        np.testing.assert_array_equal(got["zs"], (y0 + k * x) * x)
        np.testing.assert_array_equal(got["y"], y0 + 3 * x)


def test_a_raw_binary_ufunc_as_a_function_layer_gives_its_first_item_in_every_mode():
    # rule: stream/map, structure/shapes -- a function layer's kernel returns a tuple whose
    # first item is the value: np.add given as one gives row 0 of x_t + x_t, a [2] element of
    # a [2, 2] x_t. The compiled trips call the layer's function, not the ufunc itself, and
    # its value is checked (it once failed there with "element shape changed")
    from nets import concat, const
    rows = 40  # long enough for the compiled trips to run
    net = ll.Network("onnx")
    x = net.add_input("x", ll.float32, (rows, 2, 2))
    loop = net.add_loop()
    loop.add_trip_limit(const(net, rows, np.int32), ll.TripLimit.COUNT)
    e = loop.add_iterator(x).get_output(0)
    y = net.add_function(np.add, [e, e], [ll.TensorType(ll.float32, (2,))], op="AddFirst")
    net.mark_output(concat(net, loop, y.get_output(0), rows))
    values = np.arange(rows * 4, dtype=np.float32).reshape(rows, 2, 2)
    want = values[:, 0, :] * 2  # row 0 of each x_t + x_t, by numpy
    for mode in ("reference",) + ENGINE_MODES:
        (got,) = ll.evaluate(net, {"x": values}, mode=mode).values()
        assert np.asarray(got).tolist() == want.tolist(), mode


def claimed(kernel, types):
    return None if kernel.gives is None else kernel.gives(types)


def test_shape_with_an_end_and_cumsum_of_a_scalar_claim_no_type_they_do_not_give():
    # rule: structure/shapes (onnx/node) -- found by the kernel law (tests/test_kernel_law.py):
    # Shape with end -1 of a (2, 3) value is [2], one entry, where its record claimed the
    # whole shape's two; CumSum of a 0-D value is the reference's np.cumsum of it, a vector
    # of one, where its record claimed the 0-D type
    f32, i64 = np.dtype(np.float32), np.dtype(np.int64)
    shape = bind(helper.make_node("Shape", ["x"], ["y"], end=-1), {"": 21}, "node Shape")
    x = np.zeros((2, 3), np.float32)
    assert shape.function(x)[0].tolist() == [2]
    said = claimed(shape, [TensorType(f32, (2, 3))])
    assert said is None or said == TensorType(i64, (1,))
    cumsum = bind(helper.make_node("CumSum", ["x", "axis"], ["y"]), {"": 21}, "node CumSum")
    value = cumsum.function(np.array(1.5, np.float32), np.array(0))[0]
    assert value.shape == (1,) and value.tolist() == [1.5]
    said = claimed(cumsum, [TensorType(f32, ()), TensorType(i64, ())])
    assert said is None or said == TensorType(f32, (1,))
    # where the rank is at least 1 the claims stand: the whole shape, the data's own type
    whole = bind(helper.make_node("Shape", ["x"], ["y"]), {"": 21}, "node Shape")
    assert whole.gives([TensorType(f32, (2, 3))]) == TensorType(i64, (2,))
    assert cumsum.gives([TensorType(f32, (4,)), TensorType(i64, ())]) == TensorType(f32, (4,))
