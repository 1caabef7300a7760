"""Reductions, ScatterND and Split bound straight to numpy give exactly what ONNX's
reference kernel gives (rule: onnx/node): same bytes, dtype and shape, and the same error
where the reference refuses."""
import numpy as np
import pytest

pytest.importorskip("onnx")

from kernel_checks import (F, X, agrees_with_the_reference, all_outputs_agree,  # noqa: E402
                           bound_pair, i64, refusing_slow)


D = np.arange(12, dtype=np.float32).reshape(3, 4)
SCATTER_ND_CASES = [  # (attributes, data, indices, updates)
    ({}, D, i64(1)[:, None], -D[:1]), ({}, D, np.array([[2, 3], [0, -1]], np.int64), F[:2]),
    ({}, D, np.array([[1, 1], [1, 1]], np.int32), F[:2]),  # repeated: the last one wins
    ({}, D, i64(-1, 0), np.array(7.5, np.float32)), ({}, D.T, i64(0, 2)[:, None], -D[:2, :3]),
    ({}, D, np.array([[[0], [2]]], np.int64), -D[None, :2]),  # two levels of update rows
    ({}, D, i64(3)[:, None], -D[:1]), ({}, D, i64(1)[:, None], -D[:1, :2]),  # refused
    ({}, D, i64(1)[:, None], -D[0]),  # updates the reference broadcasts: its own kernel
    ({}, D.astype(np.int64), i64(0)[:, None], -D[:1]),  # float updates cast by numpy
    ({}, D, np.zeros((0, 1), np.int64), D[:0]), ({}, D, np.zeros((2, 0), np.int64), D[:2]),
    ({"reduction": "add"}, D, np.array([[1], [1]], np.int64), D[:2]),
    ({}, D, np.array([[1.0]], np.float32), D[:1])]


@pytest.mark.parametrize("case", range(len(SCATTER_ND_CASES)))
def test_scatter_nd_is_the_reference_scatter_nd(case):
    # rule: onnx/node -- ScatterND by the reference's own assignments, in its order, or its
    # refusal; the data input is never written (a copy is)
    attributes, data, indices, updates = SCATTER_ND_CASES[case]
    before = data.copy()
    fn, slow = bound_pair("ScatterND", 3, opset=18, **attributes)
    agrees_with_the_reference(fn, slow, (data, indices, updates))
    assert data.tobytes() == before.tobytes()
    assert fn.reads_only == (not attributes)  # bound directly without a reduction


def test_scatter_nd_writes_rows_in_order():
    # rule: onnx/node -- by hand: rows 2 and 0 of a 3 x 4 zero matrix set to 1s and 2s, then
    # row 2 again to 3s (the later tuple wins)
    from lazyloop.onnx.scatter_kernels import scatter_nd
    put = scatter_nd({}, refusing_slow)
    got = put(np.zeros((3, 4), np.float32), i64(2, 0, 2)[:, None],
              np.repeat(np.array([1, 2, 3], np.float32)[:, None], 4, axis=1))
    assert got.tolist() == [[2] * 4, [0] * 4, [3] * 4]


SPLIT_CASES = [  # (opset, outputs, attributes, inputs)
    (13, 2, {}, (D,)), (13, 2, {"axis": 1}, (D,)), (13, 3, {"axis": -1}, (D,)),
    (18, 3, {"axis": 1, "num_outputs": 3}, (D,)), (13, 3, {"axis": 1}, (D, i64(1, 2, 1))),
    (13, 2, {"axis": -2}, (D, np.array([1, 2], np.int32))), (13, 2, {}, (D, i64(1, 1))),
    (13, 2, {"axis": 1}, (D, i64(5, -1))), (13, 2, {"axis": 2}, (D,)),
    (18, 2, {"axis": 0}, (D[:0],)), (13, 1, {}, (D, i64(3))),
    (11, 2, {"axis": 1, "split": [1, 3]}, (D,)), (13, 2, {}, (D, np.array([1.0, 2.0])))]


@pytest.mark.parametrize("case", range(len(SPLIT_CASES)))
def test_split_is_the_reference_split(case):
    # rule: onnx/node -- every part, its dtype and shape, as the reference kernel cuts them
    # (equal parts with the rest in the last, given sizes, negative axes), or its refusal
    opset, outputs, attributes, args = SPLIT_CASES[case]
    fn, slow = bound_pair("Split", len(args), opset, outputs, **attributes)
    assert fn.reads_only == (opset >= 13)  # bound directly from opset 13 on
    all_outputs_agree(fn, slow, args, outputs)


def test_split_cuts_views_in_order():
    # rule: onnx/node -- by hand: 5 columns in 2 equal parts are 3 and 2 columns, views of
    # the input
    from lazyloop.onnx.split_kernels import split
    cut = split({"axis": 1}, 2, refusing_slow, "node Split")
    z = np.arange(10).reshape(2, 5)
    left, right = cut(z)
    assert left.tolist() == [[0, 1, 2], [5, 6, 7]] and right.tolist() == [[3, 4], [8, 9]]
    assert left.base is not None and right.base is not None


REDUCE_MEAN_18 = [({}, (X, i64(1))), ({"keepdims": 0}, (X, i64(0, -1))), ({}, (X,)),
                  ({"keepdims": 0}, (X,)), ({"noop_with_empty_axes": 1}, (X, i64())),
                  ({}, (X.astype(np.int32), i64(2))), ({}, (X.astype(np.float16), i64(1))),
                  ({}, (X[:, :0], i64(1))), ({}, (X, i64(3))), ({}, (X > 3, i64(0))),
                  ({}, (X, i64(1, 1)))]


REDUCE_18 = REDUCE_MEAN_18 + [({}, (X[:0], i64(1))), ({"keepdims": 0}, (X[:, :0],)),
                              ({}, (F, i64(0))), ({}, (X.astype(np.uint8) * 20, i64(-1)))]


@pytest.mark.parametrize("op", ["ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd"])
@pytest.mark.parametrize("case", range(len(REDUCE_18)))
def test_reductions_with_axes_as_an_input_match_the_reference(op, case):
    # rule: onnx/node -- np.mean / np.maximum.reduce / np.minimum.reduce / np.prod over the
    # axes the reference reads (none: all; an empty list with noop_with_empty_axes: none),
    # in x's dtype where the reference asks it (mean, prod: uint8 wraps around), NaN
    # propagated, the reference's own result for an empty x, or its refusal
    import warnings
    attributes, args = REDUCE_18[case]
    fn, slow = bound_pair(op, len(args), opset=18, **attributes)
    assert fn.reads_only
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the mean of nothing: NaN, with numpy's warning
        agrees_with_the_reference(fn, slow, args)
