"""The kernels of recurrent cells and of skl2onnx's neighbour searches -- Einsum's products
with their steps kept per shape, Gemm's bias added as a row, Sigmoid's constants in the
input's dtype -- give exactly what ONNX's reference kernel gives (rule: onnx/node): the same
dtype, shape and bits, or the same refusal, on edge values (NaN, infinities, -0.0, extremes),
empty shapes and broadcast shapes, in every dtype the ops accept."""
import warnings

import numpy as np
import pytest

pytest.importorskip("onnx")

from kernel_checks import (agrees_with_the_reference, all_outputs_agree, bound_pair,  # noqa: E402
                           refusing_slow)

FLOATS = (np.float16, np.float32, np.float64)
NUMBERS = FLOATS + (np.int32, np.int64, np.uint8)


def edge_values(dtype, shape, seed=0):
    """An array of `shape` in `dtype` holding its edge values among ordinary ones."""
    dtype = np.dtype(dtype)
    rng = np.random.default_rng(seed)
    size = int(np.prod(shape))
    if dtype.kind == "f":
        info = np.finfo(dtype)
        edges = [np.nan, np.inf, -np.inf, -0.0, 0.0, info.max, -info.max, info.tiny,
                 info.smallest_subnormal]
        values = (rng.standard_normal(size) * 3).astype(dtype)
    else:
        info = np.iinfo(dtype)
        edges = [info.min, info.max, 0, 1]
        values = rng.integers(max(info.min, -9), 10, size).astype(dtype)
    for k, edge in enumerate(edges[:size]):
        values[(k * 7) % size] = edge
    return values.reshape(shape)


def answers(fn, slow, args):
    """Both answers, agreeing (value, dtype, shape, or the refusal), with the same kinds of
    warning."""
    def caught(call):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            try:
                call()
            except Exception:  # noqa: BLE001 -- compared by agrees_with_the_reference
                pass
        return sorted({type(w.message).__name__ for w in seen})
    assert caught(lambda: fn(*args)) == caught(lambda: slow(*args))
    return agrees_with_the_reference(fn, slow, args)


EINSUMS = [  # equation, shapes: what exporters write, and the shapes numpy parses its own way
    ("a,ab->b", [(4,), (4, 16)]), ("ab,b->a", [(3, 5), (5,)]), ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]), ("i,i->", [(5,), (5,)]),
    ("i,j->ij", [(3,), (4,)]), ("...i,ij->...j", [(2, 3, 4), (4, 2)]),
    ("ij,ij->ij", [(3, 4), (1, 4)]), ("a,ab->b", [(0,), (0, 3)]), ("ab,bc->ac", [(2, 0), (0, 3)]),
    ("ii->i", [(3, 3)]), ("ij->ji", [(2, 3)]), ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
    ("ij,jk->ik", [(2, 3), (4, 2)])]  # 3 against 4: numpy (and the reference) refuse


@pytest.mark.parametrize("dtype", NUMBERS)
@pytest.mark.parametrize("case", range(len(EINSUMS)))
def test_einsum_with_its_steps_kept_is_the_reference(case, dtype):
    # rule: onnx/node -- the steps np.einsum_path chose for these shapes, replayed (the
    # pairwise product parsed once), give numpy's einsum's bits, twice in a row
    equation, shapes = EINSUMS[case]
    fn, slow = bound_pair("Einsum", len(shapes), equation=equation)
    args = [edge_values(dtype, shape, seed) for seed, shape in enumerate(shapes)]
    for _ in range(2):
        answers(fn, slow, args)


def test_einsum_keeps_one_plan_per_shape():
    # rule: onnx/node -- a second shape gets its own steps: a (4,) by (4, 16) product, then a
    # (2,) by (2, 3) one, then the first again, each numpy's own value
    fn, slow = bound_pair("Einsum", 2, equation="a,ab->b")
    for shapes in ([(4,), (4, 16)], [(2,), (2, 3)], [(4,), (4, 16)]):
        args = [edge_values(np.float32, s, k + 3) for k, s in enumerate(shapes)]
        got = answers(fn, slow, args)
        assert got.shape == shapes[1][1:]


GEMM_BIASES = [  # (a, b, c) shapes with transB=1: the bias a row, a column, a scalar, refused
    ((1, 4), (16, 4), (16,)), ((3, 4), (16, 4), (16,)), ((1, 4), (16, 4), (1, 16)),
    ((3, 4), (5, 4), (3, 1)), ((3, 4), (5, 4), ()), ((3, 4), (5, 4), (1,)),
    ((0, 4), (5, 4), (5,)), ((1, 4), (16, 4), (15,)), ((1, 0), (3, 0), (3,))]


@pytest.mark.parametrize("dtype", FLOATS + (np.int64,))
@pytest.mark.parametrize("case", range(len(GEMM_BIASES)))
def test_gemm_adds_a_1d_bias_as_the_reference_broadcasts_it(case, dtype):
    # rule: onnx/node -- A B' + C with a 1-D C added as a one-row matrix gives the
    # reference's broadcast sum bit for bit (NaN, infinities, -0.0 among the values), or its
    # refusal where C fits no row
    shapes = GEMM_BIASES[case]
    fn, slow = bound_pair("Gemm", 3, transB=1)
    answers(fn, slow, [edge_values(dtype, s, k) for k, s in enumerate(shapes)])


def test_gemm_with_a_1d_bias_adds_it_to_every_row():
    # rule: onnx/node -- by hand: [[1, 2], [3, 4]] times the identity plus [10, -0.0]
    from lazyloop.onnx.array_kernels import gemm
    one = np.float32(1.0)
    product = gemm({"alpha": one, "beta": one, "transA": 0, "transB": 1}, refusing_slow)
    got = product(np.array([[1, 2], [3, 4]], np.float32), np.eye(2, dtype=np.float32),
                  np.array([10, -0.0], np.float32))
    assert got.tolist() == [[11, 2], [13, 4]] and got.dtype == np.float32


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(1, 4), (4,), (), (0, 3), (2, 300)])
def test_sigmoid_of_cell_shapes_is_the_reference(dtype, shape):
    # rule: onnx/node -- the one-exponential Sigmoid with its constants in x's dtype, on
    # edge values, small and larger arrays, 0-D and empty ones; a NaN is a NaN (its sign
    # bit is not the reference's: the one exponential is of -|x|, and -|NaN| is a -NaN)
    fn, slow = bound_pair("Sigmoid", 1)
    x = edge_values(dtype, shape)
    if x.size > 1:
        x.reshape(-1)[-1] = -np.array(np.nan, dtype)  # a NaN with its sign bit set
    with np.errstate(all="ignore"):
        want = slow(x)[0]
    got = fn.single(x)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert (np.isnan(got) == np.isnan(want)).all()
    assert got[~np.isnan(got)].tobytes() == want[~np.isnan(want)].tobytes()
    if dtype is np.float32:  # numpy's float32 exp makes every NaN positive: all the bits
        assert got.tobytes() == want.tobytes()


def i64(*values):
    return np.array(values, np.int64)


SLICES_IN_TURN = [  # one node called with these in turn: its kept index must follow them
    (i64(4), i64(8), i64(0)), (i64(4), i64(8), i64(0)), (i64(0), i64(4), i64(0)),
    (i64(4), i64(8), i64(-1)), (i64(-3), i64(-100), i64(0), i64(-1)),
    (i64(0), i64(2), i64(0), i64(0)),  # a zero step: the reference refuses
    (i64(1), i64(3), i64(5)),  # an axis out of range: the reference refuses
    (i64(4), i64(8), i64(0))]


@pytest.mark.parametrize("shape", [(16,), (2, 16), (0, 16)])
def test_slice_keeps_its_index_only_while_its_lists_are_the_same(shape):
    # rule: onnx/node -- the node's kept index is rebuilt when starts, ends, axes, steps or
    # x's rank change: each call is the reference's value (a view) or its refusal
    fn4, slow4 = bound_pair("Slice", 4)
    fn5, slow5 = bound_pair("Slice", 5)
    x = edge_values(np.float32, shape)
    for lists in SLICES_IN_TURN:
        fn, slow = (fn4, slow4) if len(lists) == 3 else (fn5, slow5)
        answers(fn, slow, (x,) + lists)
        answers(fn, slow, (x[None],) + lists)  # another rank: another index


SPLITS_IN_TURN = [((1, 16), None), ((1, 16), None), ((1, 12), None), ((2, 16), None),
                  ((1, 10), None), ((1, 16), i64(4, 4, 8, 0)), ((1, 16), i64(2, 2, 2, 10)),
                  ((1, 16), i64(2, 2, 2, 2)),  # sizes that do not sum to 16: refused
                  ((16,), None)]  # no axis 1: refused


def test_split_keeps_its_indexes_only_while_shape_and_sizes_are_the_same():
    # rule: onnx/node -- Split into 4 along axis 1, its kept indexes rebuilt when the length
    # along the axis, the rank or the sizes change; each call gives the reference's parts
    for sized in (False, True):
        fn, slow = bound_pair("Split", 2 if sized else 1, opset=18, outputs=4, axis=1,
                              **({} if sized else {"num_outputs": 4}))
        for shape, sizes in SPLITS_IN_TURN:
            if (sizes is None) == sized:
                continue
            args = (edge_values(np.float32, shape),) + (() if sizes is None else (sizes,))
            all_outputs_agree(fn, slow, args, 4)
