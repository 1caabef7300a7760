"""The direct kernels of CumSum, Mod, Clip, IsNaN, ArgMax, ArgMin, Compress, Squeeze without
axes, Size and ai.onnx.ml's ArrayFeatureExtractor give exactly what ONNX's reference kernel
gives (rule: onnx/node): the same dtype, shape and bits, or the same refusal, with the same
kinds of warning, on edge values (NaN, infinities, -0.0, integer extremes, negative
operands) of every dtype they accept, empty and 0-D shapes, negative and out-of-range axes."""
import itertools

import numpy as np
import pytest

pytest.importorskip("onnx")

from kernel_checks import bound_pair, i64, refusing_slow  # noqa: E402
from test_cell_kernels import NUMBERS, answers, edge_values  # noqa: E402

SHAPES = [(5,), (2, 3), (3, 1, 4), (2, 0), (0,), (1,), ()]


def tied(dtype, shape, seed=0):
    """Edge values with ties (every value taken twice or more), booleans as such."""
    if dtype is np.bool_:
        return edge_values(np.int32, shape, seed) > 0
    values = edge_values(dtype, shape, seed)
    flat = values.reshape(-1)
    flat[1::3] = flat[::3][:len(flat[1::3])]
    return values


@pytest.mark.parametrize("dtype", NUMBERS + (np.int8, np.bool_))
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("exclusive,reverse", list(itertools.product((0, 1), (0, 1))))
def test_cumsum_is_the_reference(exclusive, reverse, shape, dtype):
    # rule: onnx/node -- the running sums along each axis, counted from either end, the
    # axis a 0-D int32 or int64 (out of range, or 1-D: refused as the reference refuses)
    fn, slow = bound_pair("CumSum", 2, exclusive=exclusive, reverse=reverse)
    x = tied(dtype, shape)
    for axis in range(-len(shape) - 1, len(shape) + 1):
        answers(fn, slow, (x, np.array(axis, np.int64)))
    answers(fn, slow, (x, np.array(0, np.int32)))
    answers(fn, slow, (x, i64(0)))


def test_cumsum_by_hand():
    # rule: onnx/node -- [1, 2, 3, 4]: 1 3 6 10; exclusive 0 1 3 6; reverse 10 9 7 4;
    # both 9 7 4 0; int8 overflow wraps (100 + 100 = -56), as numpy's accumulation in int8
    x = np.array([1, 2, 3, 4], np.float32)
    for (exclusive, reverse), want in {(0, 0): [1, 3, 6, 10], (1, 0): [0, 1, 3, 6],
                                       (0, 1): [10, 9, 7, 4], (1, 1): [9, 7, 4, 0]}.items():
        fn, _ = bound_pair("CumSum", 2, exclusive=exclusive, reverse=reverse)
        assert fn(x, np.array(0))[0].tolist() == want
    fn, _ = bound_pair("CumSum", 2)
    assert fn(np.array([100, 100], np.int8), np.array(-1))[0].tolist() == [100, -56]


MOD_PAIRS = [((6,), (6,)), ((2, 3), (3,)), ((), ()), ((0,), (1,)), ((2, 3), (4,))]


@pytest.mark.parametrize("dtype", NUMBERS + (np.int8,))
@pytest.mark.parametrize("fmod", [0, 1])
@pytest.mark.parametrize("shapes", MOD_PAIRS)
def test_mod_is_the_reference(shapes, fmod, dtype):
    # rule: onnx/node -- numpy's mod (the divisor's sign) or fmod (the dividend's), zero
    # divisors warned of as the reference warns, NaN and infinities as numpy gives them;
    # operands of two dtypes, and shapes that do not broadcast, the reference's own
    fn, slow = bound_pair("Mod", 2, fmod=fmod)
    a, b = edge_values(dtype, shapes[0], seed=1), edge_values(dtype, shapes[1], seed=2)
    answers(fn, slow, (a, b))
    answers(fn, slow, (b, a) if shapes[0] == shapes[1] else (a, a))
    answers(fn, slow, (a, b.astype(np.float64)))


def test_mod_of_negative_operands_by_hand():
    # rule: onnx/node -- -7 mod 3 is 2 (the divisor's sign), fmod -1 (the dividend's);
    # 7 mod -3 is -2, fmod 1
    a, b = np.array([-7, 7], np.int64), np.array([3, -3], np.int64)
    assert bound_pair("Mod", 2)[0](a, b)[0].tolist() == [2, -2]
    assert bound_pair("Mod", 2, fmod=1)[0](a, b)[0].tolist() == [-1, 1]
    assert bound_pair("Mod", 2, fmod=1)[0](a.astype(np.float32), b.astype(np.float32))[
        0].tolist() == [-1.0, 1.0]


CLIP_BOUNDS = [(None, None), (-1.0, 2.0), (None, 0.5), (0.0, None), (3.0, -3.0),
               (np.nan, 1.0), (-np.inf, np.inf)]


@pytest.mark.parametrize("dtype", NUMBERS)
@pytest.mark.parametrize("bounds", CLIP_BOUNDS)
@pytest.mark.parametrize("shape", [(9,), (2, 3), (), (0,)])
def test_clip_is_the_reference(shape, bounds, dtype):
    # rule: onnx/node -- clipped in data's dtype, a missing bound not applied, min above max
    # giving max, NaN bounds as numpy takes them; bounds of another dtype, the reference's
    x = edge_values(dtype, shape)
    low, high = bounds
    if np.dtype(dtype).kind != "f" and any(b is not None and not np.isfinite(b)
                                           for b in bounds):
        return  # no NaN or infinite bound in an integer dtype
    as_bound = (lambda b: None if b is None else np.array(  # unsigned: no negative bound
        abs(b) if np.dtype(dtype).kind == "u" else b, dtype))
    for arity in (1, 2, 3):
        fn, slow = bound_pair("Clip", arity, opset=13)
        args = (x, as_bound(low), as_bound(high))[:arity]
        if arity == 1 and bounds != (None, None):
            continue
        if arity == 2 and high is not None:
            continue
        answers(fn, slow, args)
    fn, slow = bound_pair("Clip", 3, opset=13)
    answers(fn, slow, (x, None if low is None else np.array(low, np.float64),
                       None if high is None else np.array(high, np.float64)))


def test_clip_without_bounds_passes_its_input_on():
    # rule: onnx/node -- no bounds: the data itself, as the reference returns it; the
    # record says so (the engine then leaves the input's memo marking to the input)
    fn, _ = bound_pair("Clip", 1, opset=13)
    x = np.arange(3.0)
    assert fn(x)[0] is x and fn.passes_input and fn.reads_only


@pytest.mark.parametrize("dtype", NUMBERS + (np.bool_,))
@pytest.mark.parametrize("shape", SHAPES)
def test_isnan_is_the_reference(shape, dtype):
    # rule: onnx/node -- True at NaNs only (not at infinities); integers and booleans by
    # the reference kernel itself
    x = tied(dtype, shape)
    answers(*bound_pair("IsNaN", 1), (x,))


POSITION_CASES = [  # axis, keepdims, select_last_index
    (a, k, s) for a in (0, 1, -1, -2, 2) for k in (0, 1) for s in (0, 1)]


@pytest.mark.parametrize("op", ["ArgMax", "ArgMin"])
@pytest.mark.parametrize("dtype", NUMBERS + (np.bool_,))
@pytest.mark.parametrize("case", POSITION_CASES)
def test_argmax_argmin_are_the_reference(case, dtype, op):
    # rule: onnx/node -- the first (or, select_last_index, the last) position of the
    # extreme, a NaN the extreme, ties among -0.0 and 0.0; keepdims keeping the axis as 1;
    # an empty axis, an axis out of range and a 0-D input refused as the reference refuses
    axis, keepdims, last = case
    fn, slow = bound_pair(op, 1, opset=13, axis=axis, keepdims=keepdims,
                          select_last_index=last)
    for shape in ((3, 4), (5,), (2, 0), (0, 3), ()):
        answers(fn, slow, (tied(dtype, shape),))
    if not last:  # ArgMax 11: no select_last_index
        fn, slow = bound_pair(op, 1, opset=11, axis=axis, keepdims=keepdims)
        answers(fn, slow, (tied(dtype, (3, 4)),))


def test_argmax_by_hand():
    # rule: onnx/node -- [[1, 5, 5], [NaN, 0, NaN]] along axis 1: first 5 at 1, last at 2;
    # the first NaN at 0, the last at 2
    x = np.array([[1, 5, 5], [np.nan, 0, np.nan]], np.float32)
    first, _ = bound_pair("ArgMax", 1, opset=13, axis=1, keepdims=0)
    last, _ = bound_pair("ArgMax", 1, opset=13, axis=1, select_last_index=1)
    assert first(x)[0].tolist() == [1, 0] and first(x)[0].dtype == np.int64
    assert last(x)[0].tolist() == [[2], [2]]


COMPRESS_CONDITIONS = [np.array([True, False, True]), np.array([False, True]),
                       np.array([True, False, True, True]), np.array([], bool),
                       np.array([0, 2, 0]), np.array(True), np.array([1.5, 0.0, -1.0])]


@pytest.mark.parametrize("dtype", NUMBERS + (np.bool_,))
@pytest.mark.parametrize("axis", [None, 0, 1, -1, 2])
@pytest.mark.parametrize("condition", range(len(COMPRESS_CONDITIONS)))
def test_compress_is_the_reference(condition, axis, dtype):
    # rule: onnx/node -- the slices where the condition holds, shorter conditions reading
    # as False past their end, longer ones refused; no axis: the flattened input
    fn, slow = bound_pair("Compress", 2, **({} if axis is None else {"axis": axis}))
    for shape in ((3, 3), (3,), (0, 3)):
        answers(fn, slow, (tied(dtype, shape), COMPRESS_CONDITIONS[condition]))


@pytest.mark.parametrize("dtype", NUMBERS + (np.bool_,))
@pytest.mark.parametrize("shape", [(1, 3, 1), (1,), (), (0, 1), (2, 3), (1, 1, 1)])
def test_squeeze_without_axes_and_size_are_the_reference(shape, dtype):
    # rule: onnx/node -- every axis of length 1 dropped; the element count in int64
    x = tied(dtype, shape)
    answers(*bound_pair("Squeeze", 1, opset=13), (x,))
    answers(*bound_pair("Size", 1), (x,))


def feature_pair():
    """ArrayFeatureExtractor's binding and its reference kernel (ai.onnx.ml)."""
    from onnx import helper

    from lazyloop.onnx import kernels
    node = helper.make_node("ArrayFeatureExtractor", ["x", "i"], ["y"], domain="ai.onnx.ml")
    opsets = {"": 17, "ai.onnx.ml": 3}
    cls = kernels.kernel_class("ai.onnx.ml", "ArrayFeatureExtractor", 3)
    run_params = {"log": lambda *a, **k: None, "opsets": opsets, "verbose": 0,
                  "new_ops": None, "existing_functions": {}, "evaluator_cls": None}
    return (kernels.bind(node, opsets, "node f"),
            kernels._bound_reference(cls(node, run_params), "node f"))


FEATURE_INDICES = [i64(0, 2), i64(-1), i64(2, 2, 0)[None], np.array([[0, 1], [2, 0]]),
                   np.array(1), np.array([1], np.int32), i64(), i64(3), i64(-4)]


@pytest.mark.parametrize("dtype", NUMBERS + (np.bool_,))
@pytest.mark.parametrize("indices", range(len(FEATURE_INDICES)))
def test_array_feature_extractor_is_the_reference(indices, dtype):
    # rule: onnx/node -- the elements at the indices along the last axis, a vector's as one
    # row; negative ones from the end; past either end refused as the reference refuses
    fn, slow = feature_pair()
    for shape in ((2, 3), (3,), (2, 2, 3), (0, 3)):
        answers(fn, slow, (tied(dtype, shape), FEATURE_INDICES[indices]))


def test_the_ordinary_cases_take_the_direct_path():
    # rule: onnx/node -- with a reference kernel that fails when called, the bindings
    # answer the ordinary cases (by hand): numpy's calls, not the reference's
    from lazyloop.onnx.arithmetic_kernels import clip, cum_sum, is_nan, mod
    from lazyloop.onnx.select_kernels import array_feature_extractor, compress, position_of
    x = np.array([[3.0, -1.0, np.nan], [0.5, 2.0, -4.0]], np.float32)
    assert cum_sum({"reverse": 1}, refusing_slow)(x, np.array(1))[:, 0].tolist()[1] == -1.5
    assert mod({}, refusing_slow)(i64(-7), i64(3)).tolist() == [2]
    assert clip({}, refusing_slow)(x, np.zeros((), np.float32), None)[
        1].tolist() == [0.5, 2.0, 0.0]
    assert is_nan({}, refusing_slow)(x).tolist() == [[False, False, True]] + [[False] * 3]
    assert position_of("argmin")({"axis": 1, "keepdims": 0}, refusing_slow)(x).tolist() \
        == [2, 2]  # the NaN counts as the least
    assert compress({"axis": 1}, refusing_slow)(x, np.array([False, True]))[:, 0].tolist() \
        == [-1.0, 2.0]
    assert array_feature_extractor({}, refusing_slow)(x, i64(2, 0))[1].tolist() == [-4.0, 0.5]


@pytest.mark.parametrize("op,arity,attributes", [
    ("CumSum", 2, {}), ("Mod", 2, {}), ("IsNaN", 1, {}), ("Clip", 3, {}), ("ArgMax", 1, {}),
    ("ArgMin", 1, {}), ("Compress", 2, {}), ("Squeeze", 1, {}), ("Size", 1, {})])
def test_the_bindings_say_they_only_read(op, arity, attributes):
    # rule: onnx/node -- the direct records are pure and read their arguments only (what
    # lets the engine leave their inputs unmarked); the reference's records are not
    fn, _ = bound_pair(op, arity, opset=13, **attributes)
    assert fn.reads_only and fn.pure and fn.single is not None
    assert feature_pair()[0].reads_only


@pytest.mark.parametrize("dtype", NUMBERS + (np.bool_,))
def test_expand_keeps_its_last_ones_per_shape_and_dtype(dtype):
    # rule: onnx/node -- data times ones of the shape, the ones kept while the shape and
    # dtype stay: shapes and dtypes in turn, each the reference's value (NaN, -0.0 kept)
    fn, slow = bound_pair("Expand", 2)
    x = tied(dtype, (3, 1))
    for shape in (i64(3, 4), i64(3, 4), i64(2, 1, 5), i64(3, 4), i64(1), i64(3, 0)):
        answers(fn, slow, (x, shape))
        answers(fn, slow, (x.astype(np.float64), shape))
    answers(fn, slow, (x, i64(-1, 4)))  # refused by both


@pytest.mark.parametrize("dtype", NUMBERS)
def test_scatter_elements_keeps_its_coordinates_per_shape(dtype):
    # rule: onnx/node -- the positions' own coordinates kept while the indices' shape
    # stays: shapes in turn, each the reference's value
    fn, slow = bound_pair("ScatterElements", 3, opset=18, axis=1)
    for rows in (5, 5, 2, 5):
        data = edge_values(dtype, (rows, 3))
        indices = (np.arange(rows) % 3 - 1).reshape(rows, 1)
        answers(fn, slow, (data, indices, edge_values(dtype, (rows, 1), seed=3)))


@pytest.mark.parametrize("dtype", NUMBERS + (np.bool_,))
@pytest.mark.parametrize("shape", [(1, 23), (3,), (2, 0), (1,), ()])
def test_where_of_a_0d_choice_is_the_reference(shape, dtype):
    # rule: onnx/node -- an x of one element beside y of the condition's shape: y with x
    # where the condition holds (NaN, -0.0 and extremes kept bit for bit); an x of higher
    # rank than y broadcast as np.where does; the condition all true, all false, or of ints
    # (the reference's own reading: not a mask)
    fn, slow = bound_pair("Where", 3)
    y = tied(dtype, shape)
    ones = [(), (1,), (1, 1), (1, 1, 1)]  # x of one element, of rank up to y's and one more
    for x in (tied(dtype, (5,))[k:k + 1].reshape(ones[k % 4]) for k in range(5)):
        for condition in (edge_values(np.int32, shape) > 0, np.ones(shape, bool),
                          np.zeros(shape, bool), edge_values(np.int32, shape)):
            answers(fn, slow, (condition, x, y))
            answers(fn, slow, (condition, y, x))


@pytest.mark.parametrize("dtype", NUMBERS)
def test_gather_of_int64_indices_is_the_reference(dtype):
    # rule: onnx/node -- rows (or columns) at int64 indices, negative from the end, past the
    # end refused, along each axis
    x = edge_values(dtype, (5, 3))
    for axis in (0, 1, -1, 2):
        fn, slow = bound_pair("Gather", 2, axis=axis)
        for indices in (i64(0, 2, -1), i64(), i64(4, 4)[None], i64(5), i64(-6), i64(1)):
            answers(fn, slow, (x, indices))


@pytest.mark.parametrize("dtype", NUMBERS + (np.bool_,))
@pytest.mark.parametrize("axis", [0, 1, -1, -2, 2])
def test_concat_is_the_reference(axis, dtype):
    # rule: onnx/node -- joined along the axis, counted from the end where negative; an
    # axis outside an input's rank, 0-D inputs and shapes that do not fit refused as the
    # reference refuses; inputs of two dtypes as the reference joins them
    fn, slow = bound_pair("Concat", 2, axis=axis)
    for shapes in (((2, 3), (2, 3)), ((1, 3), (4, 3)), ((2,), (3,)), ((), ()), ((2, 3), (3,)),
                   ((0, 3), (2, 3))):
        a, b = tied(dtype, shapes[0]), tied(dtype, shapes[1], seed=1)
        answers(fn, slow, (a, b))
        answers(fn, slow, (a, b.astype(np.float64)))
    fn, slow = bound_pair("Concat", 3, axis=axis)
    answers(fn, slow, (tied(dtype, (2, 2)),) * 3)


@pytest.mark.parametrize("dtype", NUMBERS)
@pytest.mark.parametrize("axis", [0, 1, 2])
def test_gather_elements_along_every_axis_of_3d_data_is_the_reference(axis, dtype):
    # rule: onnx/node -- the one indexing by the positions' own coordinates (kept per
    # shape) and the indices along the axis picks np.choose's elements, negative indices
    # from the end; shapes in turn, so the kept coordinates are checked to follow them
    fn, slow = bound_pair("GatherElements", 2, axis=axis)
    rng = np.random.default_rng(axis)
    for shape in ((2, 3, 4), (3, 3, 3), (2, 3, 4), (1, 5, 2)):
        data = edge_values(dtype, shape)
        lookup = list(shape)
        lookup[axis] = 2
        n = shape[axis]
        answers(fn, slow, (data, rng.integers(-n, n, lookup)))


def test_shape_keeps_its_last_value_read_only_while_the_shape_stays():
    # rule: onnx/node -- the reference's int64 dimensions for shapes in turn (the kept one
    # given again only for the same shape), each value read-only as stream elements are
    from kernel_checks import agrees_with_the_reference
    fn, slow = bound_pair("Shape", 1)
    seen = []
    for shape in ((2, 3), (2, 3), (3, 2), (), (0, 4), (2, 3)):
        got = agrees_with_the_reference(fn, slow, (np.zeros(shape, np.float32),))
        assert not got.flags.writeable
        seen.append(got)
    assert seen[0] is seen[1] and seen[1] is not seen[5] and seen[5].tolist() == [2, 3]
    with pytest.raises(ValueError):  # nobody holding one answer may make it writable and
        seen[5].setflags(write=True)  # change the next: numpy refuses it for this view
    assert fn(np.zeros((2, 3), np.float32))[0].tolist() == [2, 3]


MATMUL_SHAPES = [((1, 4), (4, 4)), ((4,), (4,)), ((4,), (4, 3)), ((2, 4), (4,)), ((), ()),
                 ((2, 1, 4), (4, 3)), ((2, 3, 4), (2, 4, 5)), ((0, 4), (4, 2)), ((2, 3), (4, 2))]


@pytest.mark.parametrize("dtype", NUMBERS + (np.int8,))
@pytest.mark.parametrize("shapes", MATMUL_SHAPES)
def test_matmul_is_the_reference(shapes, dtype):
    # rule: onnx/node -- a's dot method is np.dot's product (rank 2 or less), np.matmul
    # above; the value in a's dtype (int8 products wrap as numpy's do); shapes that do not
    # fit, and operands of two dtypes, refused or joined as the reference does
    fn, slow = bound_pair("MatMul", 2)
    a, b = edge_values(dtype, shapes[0]), edge_values(dtype, shapes[1], seed=1)
    answers(fn, slow, (a, b))
    answers(fn, slow, (a, b.astype(np.float64)))


@pytest.mark.parametrize("dtype", (np.float32, np.float64))
@pytest.mark.parametrize("trans", list(itertools.product((0, 1), (0, 1))))
def test_gemm_by_the_dot_method_is_the_reference(trans, dtype):
    # rule: onnx/node -- alpha 1, beta 0 or 1: A'.dot(B') plus C as the reference's np.dot
    # and sum give it, on edge values (NaN, infinities, -0.0, extremes)
    trans_a, trans_b = trans
    for beta in (0.0, 1.0):
        fn, slow = bound_pair("Gemm", 3, transA=trans_a, transB=trans_b, beta=beta)
        a = edge_values(dtype, (4, 1) if trans_a else (1, 4))
        b = edge_values(dtype, (3, 4) if trans_b else (4, 3), seed=1)
        for c in (edge_values(dtype, (3,), seed=2), edge_values(dtype, (1, 3), seed=3)):
            answers(fn, slow, (a, b, c))


@pytest.mark.parametrize("op", ["ReduceSum", "ReduceProd", "ReduceMax", "ReduceMin",
                                "ReduceSumSquare"])
@pytest.mark.parametrize("dtype", NUMBERS + (np.int8,))
@pytest.mark.parametrize("keepdims", [0, 1])
def test_reductions_to_one_value_are_the_reference(keepdims, dtype, op):
    # rule: onnx/node -- over every axis (no axes, or an empty list), or one axis: a 0-D
    # value is an array of x's dtype (numpy's out=... where it takes it), as the reference's
    # numpy scalar made an array; sums and products wrap in small integer dtypes
    for shape in ((3,), (1, 3), (2, 3, 2), ()):
        x = tied(dtype, shape)
        fn, slow = bound_pair(op, 1, opset=18, keepdims=keepdims)
        answers(fn, slow, (x,))
        fn, slow = bound_pair(op, 2, opset=18, keepdims=keepdims)
        answers(fn, slow, (x, i64()))
        answers(fn, slow, (x, i64(-1)))


@pytest.mark.parametrize("op,ufunc", [("Less", np.less), ("Greater", np.greater),
                                      ("Equal", np.equal), ("LessOrEqual", np.less_equal),
                                      ("GreaterOrEqual", np.greater_equal),
                                      ("And", np.logical_and), ("Or", np.logical_or),
                                      ("Xor", np.logical_xor)])
def test_comparisons_say_they_are_their_ufunc(op, ufunc):
    # rule: onnx/node -- the record's ufunc (which compiled trips call without the function's
    # layer) gives the binding's value, and the reference's, for one dtype and for two
    fn, slow = bound_pair(op, 2)
    assert fn.ufunc is ufunc
    for a, b in ((tied(np.float32, (2, 3)), tied(np.float32, (3,), seed=1)),
                 (tied(np.int32, (4,)), tied(np.int64, (4,), seed=2)),
                 (np.array(1.5), np.array(2.0, np.float32))):
        want = answers(fn, slow, (a, b))
        assert np.asarray(ufunc(a, b)).tobytes() == want.tobytes()


@pytest.mark.parametrize("dtype", NUMBERS)
def test_gather_nd_of_one_column_is_the_reference(dtype):
    # rule: onnx/node -- one index column picks along the data's leading axis (take's
    # elements): a vector of indices on a vector gives a 0-D array, negative indices count
    # from the end, past either end refused
    fn, slow = bound_pair("GatherND", 2, opset=13)
    for shape in ((5,), (1, 23), (3, 2, 2)):
        data = edge_values(dtype, shape)
        for indices in (i64(0), i64(-1), i64(2, 0, -2)[:, None], np.array([[[1]], [[0]]]),
                        i64(5), i64(-6), np.zeros((0, 1), np.int64)):
            answers(fn, slow, (data, indices if indices.ndim else indices[None]))


@pytest.mark.parametrize("dtype", NUMBERS + (np.bool_,))
@pytest.mark.parametrize("shape", [(5,), (0,), (1,), (2, 3), (2, 0, 3)])
def test_nonzero_of_a_vector_is_the_reference(shape, dtype):
    # rule: onnx/node -- a vector's non-zero positions as the one row of an int64 matrix
    # (NaN non-zero, -0.0 zero), none at all giving (1, 0); matrices by np.array as before
    fn, slow = bound_pair("NonZero", 1)
    answers(fn, slow, (tied(dtype, shape),))
    answers(fn, slow, (np.zeros(shape, dtype),))
