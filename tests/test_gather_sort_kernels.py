"""The kernels skl2onnx's neighbour searches spend their time in -- GatherElements by
`np.take_along_axis`, GatherND by one indexing, TopK by a stable argsort, Shape with a start
or an end -- give exactly what ONNX's reference kernel gives (rule: onnx/node): the same
dtype, shape and bits, or the same refusal, on edge values of every dtype they accept,
empty shapes, negative indices and indices out of range."""
import numpy as np
import pytest

pytest.importorskip("onnx")

from kernel_checks import agrees_with_the_reference, all_outputs_agree, bound_pair  # noqa: E402
from test_cell_kernels import NUMBERS, answers, edge_values, i64  # noqa: E402

GATHER_ELEMENTS = [  # axis, data shape, indices
    (1, (1, 22), i64(3, 0, 21)[None]), (1, (2, 5), np.array([[0, -1], [4, -5]], np.int64)),
    (0, (3, 2), np.array([[2, 0], [1, 1]], np.int32)), (-1, (2, 3, 4), None),
    (1, (2, 5), np.array([[5, 0], [0, 0]], np.int64)),  # 5 is past the end: wrapped
    (1, (2, 5), np.array([[-6, 0], [0, 0]], np.int64)),  # -6 too
    (1, (2, 5), np.zeros((2, 0), np.int64)),  # no indices
    (1, (2, 5), np.zeros((3, 1), np.int64)),  # rows that do not match: refused
    (0, (70, 2), np.zeros((1, 2), np.int64)),  # more slices than np.choose takes
    (1, (2, 5), np.zeros((2, 1), np.uint8))]  # unsigned indices


@pytest.mark.parametrize("dtype", NUMBERS + (np.bool_,))
@pytest.mark.parametrize("case", range(len(GATHER_ELEMENTS)))
def test_gather_elements_is_the_reference(case, dtype):
    # rule: onnx/node -- the elements take_along_axis picks are the ones np.choose picks,
    # in range; out of range, and the shapes np.choose cannot take, the reference's own
    axis, shape, indices = GATHER_ELEMENTS[case]
    data = edge_values(dtype, shape) if dtype is not np.bool_ else edge_values(
        np.int32, shape) > 0
    if indices is None:
        indices = np.random.default_rng(1).integers(-4, 4, (2, 3, 2))
    answers(*bound_pair("GatherElements", 2, axis=axis), (data, indices))


GATHER_ND = [  # data shape, indices
    ((1, 22), i64(0)[None]), ((1, 22), i64(0, 21)[None]), ((3, 4), np.array([[2], [-1]])),
    ((3, 4, 2), np.array([[[0, 1], [2, 3]]])), ((3, 4), np.zeros((0, 1), np.int64)),
    ((3, 4), i64(3)[None]),  # past the end: refused
    ((3, 4), np.zeros((2, 0), np.int64)),  # no columns: the reference's own reading
    ((3, 4), np.zeros((1, 3), np.int64)),  # more columns than the data's rank: refused
    ((3, 4), np.array([[1]], np.int32))]


@pytest.mark.parametrize("dtype", NUMBERS)
@pytest.mark.parametrize("case", range(len(GATHER_ND)))
def test_gather_nd_is_the_reference(case, dtype):
    # rule: onnx/node -- one indexing by the index columns picks the reference's elements
    shape, indices = GATHER_ND[case]
    answers(*bound_pair("GatherND", 2, opset=13), (edge_values(dtype, shape), indices))


def test_gather_nd_with_batch_dimensions_is_left_to_the_reference():
    # rule: onnx/node -- batch_dims 1: by hand, row b of the data at index[b]
    fn, slow = bound_pair("GatherND", 2, opset=13, batch_dims=1)
    data = np.arange(6, dtype=np.float32).reshape(2, 3)
    got = agrees_with_the_reference(fn, slow, (data, np.array([[2], [0]])))
    assert got.tolist() == [2.0, 3.0]


TOPK = [  # data shape, k, attributes
    ((1, 22), 3, {"largest": 0}), ((1, 22), 3, {}), ((3, 7), 7, {"axis": 0}),
    ((3, 7), 2, {"axis": 0, "largest": 0}), ((2, 3, 5), 0, {"axis": 1}),
    ((2, 3, 5), 5, {"axis": -1, "largest": 1, "sorted": 0}), ((4,), 4, {"largest": 0}),
    ((0, 3), 0, {"axis": 0}), ((3, 7), 8, {}),  # more than the axis holds: refused
    ((3, 7), -1, {})]


def tied(dtype, shape):
    """Edge values with ties: every value taken twice or more, -0.0 beside 0.0."""
    values = edge_values(dtype, shape)
    flat = values.reshape(-1)
    flat[1::3] = flat[::3][:len(flat[1::3])]
    return values


@pytest.mark.parametrize("dtype", NUMBERS)
@pytest.mark.parametrize("case", range(len(TOPK)))
def test_topk_by_a_stable_sort_is_the_reference(case, dtype):
    # rule: onnx/node -- values and indices, smallest or largest first, equal values (NaNs
    # among them) by ascending index, as the reference's lexsort orders them
    shape, k, attributes = TOPK[case]
    fn, slow = bound_pair("TopK", 2, opset=11, outputs=2, **attributes)
    all_outputs_agree(fn, slow, (tied(dtype, shape), i64(k)), 2)


def test_topk_by_hand():
    # rule: onnx/node -- [3, 1, NaN, 1, -0.0, 0.0]: the 3 smallest are -0.0 (index 4),
    # 0.0 (5) and 1 (1)... no: 1, 1, -0.0, 0.0 sort as -0.0 = 0.0 < 1 = 1 < 3 < NaN, equal
    # ones by index: -0.0 (4), 0.0 (5), 1 (1); the 3 largest: NaN (2), 3 (0), 1 (1)
    fn, _ = bound_pair("TopK", 2, opset=11, outputs=2, largest=0)
    x = np.array([3, 1, np.nan, 1, -0.0, 0.0], np.float32)
    values, indices = fn(x, i64(3))
    assert indices.tolist() == [4, 5, 1] and indices.dtype == np.int64
    assert values.tobytes() == np.array([-0.0, 0.0, 1], np.float32).tobytes()
    fn, _ = bound_pair("TopK", 2, opset=11, outputs=2)
    values, indices = fn(x, i64(3))
    assert indices.tolist() == [2, 0, 1]


@pytest.mark.parametrize("attributes", [{"start": 0, "end": 1}, {"start": 1, "end": 2},
                                        {"start": -1}, {"end": -1}, {"start": 5},
                                        {"start": -9, "end": 9}, {"start": 2, "end": 1}])
def test_shape_with_a_start_or_an_end_is_the_reference(attributes):
    # rule: onnx/node -- the dimensions between start and end as the reference's own
    # _interval reads them, for inputs of several ranks (its interval kept per rank)
    fn, slow = bound_pair("Shape", 1, opset=15, **attributes)
    for x in (np.zeros((2, 3, 4)), np.zeros((5,)), np.zeros(()), np.zeros((2, 3, 4))):
        agrees_with_the_reference(fn, slow, (x,))


def test_the_ordinary_cases_take_the_direct_path():
    # rule: onnx/node -- with a reference kernel that fails when called, the bindings still
    # answer the ordinary cases (by hand): so they are numpy's calls, not the reference's
    from kernel_checks import refusing_slow
    from lazyloop.onnx.gather_kernels import gather_elements, gather_nd
    from lazyloop.onnx.sort_kernels import top_k
    data = np.array([[5.0, 7.0, 6.0, 7.0]], np.float32)
    picked = gather_elements({"axis": 1}, refusing_slow)(data, i64(3, 0, -2)[None])
    assert picked.tolist() == [[7.0, 5.0, 6.0]]
    assert gather_nd({}, refusing_slow)(data, i64(0, 2)[None]).tolist() == [6.0]
    values, indices = top_k({"axis": -1, "largest": 1}, refusing_slow, "w").function(
        data, i64(3))
    assert indices.tolist() == [[1, 3, 2]] and values.tolist() == [[7.0, 7.0, 6.0]]
    values, indices = top_k({"axis": 1, "largest": 0}, refusing_slow, "w").function(
        data, i64(2))
    assert indices.tolist() == [[0, 2]] and values.tolist() == [[5.0, 6.0]]


@pytest.mark.parametrize("dtype", NUMBERS + (np.bool_,))
@pytest.mark.parametrize("shape", [(24,), (3, 8), (2, 3, 4), (0,), (2, 0), (1,)])
def test_nonzero_is_the_reference(shape, dtype):
    # rule: onnx/node -- the index arrays as the rows of one int64 array: NaN counts as
    # non-zero, -0.0 as zero; all zeros and empty inputs give no columns
    x = edge_values(np.float64, shape)
    x = x > 0 if dtype is np.bool_ else x.astype(dtype) if np.dtype(dtype).kind == "f" \
        else np.nan_to_num(x).astype(dtype)
    fn, slow = bound_pair("NonZero", 1)
    agrees_with_the_reference(fn, slow, (x,))
    agrees_with_the_reference(fn, slow, (np.zeros_like(x),))


SCATTER_ELEMENTS = [  # axis, data shape, indices, attributes
    (1, (5, 3), np.array([[0], [2], [1], [-1], [-3]]), {}),
    (0, (3, 4), np.array([[2, 0, 1, -1]]), {}), (1, (2, 3, 4), np.zeros((2, 1, 4), int), {}),
    (2, (2, 3, 4), np.ones((1, 2, 1), np.int32), {}),  # fewer positions than the data has
    (1, (5, 3), np.array([[0, 0], [1, 2], [2, 2], [0, 1], [1, 1]]), {}),  # repeated: in order
    (1, (5, 3), np.array([[3], [0], [0], [0], [0]]), {}),  # past the end: refused
    (-1, (5, 3), np.zeros((5, 1), int), {}),  # a negative axis: the reference's own reading
    (1, (5, 3), np.zeros((5, 1), int), {"reduction": "add"}),
    (1, (5, 0), np.zeros((5, 0), int), {}), (0, (0, 3), np.zeros((0, 3), int), {})]


@pytest.mark.parametrize("dtype", NUMBERS)
@pytest.mark.parametrize("case", range(len(SCATTER_ELEMENTS)))
def test_scatter_elements_is_the_reference(case, dtype):
    # rule: onnx/node -- one assignment at the positions' own coordinates, the indices
    # along the axis, is the reference's assignments one by one where no two share a target
    axis, shape, indices, attributes = SCATTER_ELEMENTS[case]
    fn, slow = bound_pair("ScatterElements", 3, opset=18, axis=axis, **attributes)
    data = edge_values(dtype, shape)
    updates = edge_values(dtype, indices.shape, seed=2)
    answers(fn, slow, (data, indices, updates))
    answers(fn, slow, (data, indices, updates.astype(np.float64)))  # another dtype


def test_scatter_elements_of_one_column_by_hand():
    # rule: onnx/node -- rows 0 and 1 of [[0, 0, 0], [0, 0, 0]] get 5 at column 2 and 7 at
    # column -3 (the first), with a reference that must not be called
    from kernel_checks import refusing_slow
    from lazyloop.onnx.scatter_kernels import scatter_elements
    data = np.zeros((2, 3), np.float32)
    got = scatter_elements({"axis": 1}, refusing_slow)(data, np.array([[2], [-3]]),
                                                       np.array([[5], [7]], np.float32))
    assert got.tolist() == [[0, 0, 5], [7, 0, 0]] and data.tolist() == [[0, 0, 0], [0, 0, 0]]


@pytest.mark.parametrize("dtype", NUMBERS)
@pytest.mark.parametrize("index", [np.int64(0), np.int64(2), np.int64(-1), np.int64(-3),
                                   np.int64(3), np.int64(-4), np.int32(1), np.int8(-2),
                                   np.array(2), np.array(-1, np.int32), np.array(3)])
def test_gather_of_a_numpy_integer_is_the_reference(index, dtype):
    # rule: onnx/node -- a Loop's iteration number, or a 0-D index, picks row i of x (a
    # view), counted from the end where negative; past either end refused; a 1-D x gives a
    # 0-D array; a 0-D x has no row to pick
    fn, slow = bound_pair("Gather", 2)
    for shape in ((3, 4), (3,), (3, 0, 2), ()):
        agrees_with_the_reference(fn, slow, (edge_values(dtype, shape), index))
