"""The sequence and optional kernels bound directly (`lazyloop/onnx/sequence_kernels.py`) give
what ONNX's reference kernel's `run` gives -- or lazyloop's own kernel, where the reference
is wrong (SequenceInsert, Optional: spec/30) -- on edge values of every dtype they accept:
the same lists of the same arrays (dtype, shape, bits), or a refusal where it refuses
(rules: onnx/node, onnx/sequences). Lists given are never changed; arrays put into a list
are the arrays given (stream/memo)."""
import numpy as np
import pytest

pytest.importorskip("onnx")

from kernel_checks import node_with, refusing_slow, same  # noqa: E402
from test_cell_kernels import NUMBERS, edge_values  # noqa: E402

from lazyloop.core.errors import EvaluationError  # noqa: E402
from lazyloop.onnx import kernels  # noqa: E402
from lazyloop.onnx.sequence_kernels import sequence_kernel  # noqa: E402

OPSET = 18
STRINGS = np.array(["", "a", "é", "\x00z", "long string", "b"], dtype=object)
DTYPES = NUMBERS + (np.bool_, object)


def values(dtype, shape, seed=0):
    """An array of `shape` in `dtype`: edge values for numbers, strings for `object`."""
    size = int(np.prod(shape))
    if dtype is object:
        return np.resize(np.roll(STRINGS, seed), size).reshape(shape)
    if dtype is np.bool_:
        return np.asarray(edge_values(np.int32, shape, seed) > 0)
    return edge_values(dtype, shape, seed)


def pair(op, arity, **attributes):
    """(the node's binding, the reference kernel's public `run` on the same node, the
    reference kernel as bound without the direct path)."""
    node = node_with(op, arity, **attributes)
    run_params = {"log": lambda *a, **k: None, "opsets": {"": OPSET}, "verbose": 0,
                  "new_ops": None, "existing_functions": {}, "evaluator_cls": None}
    reference = kernels.kernel_class("", op, OPSET)(node, run_params)
    bound = kernels.bind(node, {"": OPSET}, f"node {op}")
    assert bound.single is not None  # the direct binding, not the reference's call
    return bound, reference.run, kernels._bound_reference(reference, f"node {op}")


def same_value(got, want):
    """Lists element by element (`same`), None as None, arrays by `same`."""
    if want is None:
        assert got is None
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want)
        for g, w in zip(got, want):
            same(g, np.asarray(w))
    else:
        same(got, np.asarray(want))


def agree(bound, reference, slow, args):
    """The binding gives the reference's value, or refuses where the reference raises, with
    the error the node's slow call gives (an EvaluationError naming the node and quoting
    the reference); its value (None where refused)."""
    try:
        want = reference(*args)[0]
    except Exception:  # noqa: BLE001 -- whatever the reference raises is a refusal
        with pytest.raises(EvaluationError, match="node") as refused:
            bound(*args)
        with pytest.raises(EvaluationError) as slow_refused:
            slow(*args)
        assert str(refused.value) == str(slow_refused.value)
        return None
    got = bound(*args)[0]
    same_value(got, want)
    return got


CONCATS = [  # element shapes, axis, new_axis
    ([(2, 3)] * 3, 0, 1), ([(2, 3)] * 3, 1, 1), ([(2, 3)] * 3, 2, 1), ([(2, 3)] * 3, -1, 1),
    ([(2, 3)] * 3, -3, 1), ([(2, 3)] * 3, 3, 1), ([(2, 3)] * 3, -4, 1),  # out of range
    ([(4,)], 0, 1), ([(), (), ()], 0, 1), ([(), ()], -1, 1), ([(0, 3)] * 2, 0, 1),
    ([(2, 3), (2, 4)], 0, 1),  # shapes that do not stack: refused
    ([(2, 3), (2, 4)], 1, 0), ([(2, 3), (2, 4)], -1, 0), ([(2, 3), (2, 4)], 0, 0),
    ([(0, 3), (2, 3)], 0, 0), ([(2, 3)] * 2, 2, 0), ([(), ()], 0, 0),  # 0-D: refused
    ([], 0, 0), ([], 0, 1)]  # the empty sequence: refused


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", range(len(CONCATS)))
def test_concat_from_sequence_is_the_reference(case, dtype):
    # rule: onnx/node -- stacking is np.array / np.stack of the elements, concatenating the
    # reference's np.concatenate itself; what the reference refuses is refused
    shapes, axis, new_axis = CONCATS[case]
    seq = [values(dtype, shape, seed) for seed, shape in enumerate(shapes)]
    got = agree(*pair("ConcatFromSequence", 1, axis=axis, new_axis=new_axis), (seq,))
    if got is not None:
        assert not any(np.shares_memory(got, element) for element in seq)


@pytest.mark.parametrize("new_axis", [0, 1])
def test_concat_from_sequence_of_mixed_dtypes_is_the_reference(new_axis):
    # rule: onnx/node -- the reference concatenates what it is given, promoting dtypes
    seq = [np.arange(3, dtype=np.int32), np.linspace(0, 1, 3, dtype=np.float32)]
    got = agree(*pair("ConcatFromSequence", 1, axis=0, new_axis=new_axis), (seq,))
    assert got.dtype == np.float64


def test_stacking_one_shape_makes_no_reference_call():
    # rule: onnx/sequences -- by hand: three rows stacked along a new first axis
    fn = sequence_kernel("ConcatFromSequence", {"axis": 0, "new_axis": 1}, refusing_slow,
                         "node c").single
    seq = [np.full(2, k, np.float32) for k in range(3)]
    assert fn(seq).tolist() == [[0, 0], [1, 1], [2, 2]]
    assert fn([np.array(1.5), np.array(-2.0)]).tolist() == [1.5, -2.0]


SPLITS = [  # input shape, axis, split (None: no input), keepdims
    ((6, 2), 0, None, 1), ((6, 2), 0, None, 0), ((6, 2), 1, None, 0), ((6, 2), -1, None, 1),
    ((2, 3, 2), -2, None, 0), ((6, 2), 0, np.array(2), 1), ((5, 2), 0, np.array(2), 1),
    ((5, 2), 1, np.array(4, np.int32), 0), ((0, 2), 0, np.array(2), 1),
    ((6, 2), 0, np.array([1, 2, 3]), 1), ((6, 2), -2, np.array([6, 0]), 1),
    ((6, 2), 0, np.int64(3), 1), ((0, 2), 0, None, 0), ((6, 2), 0, np.array(2.0), 1),
    ((6, 2), 0, np.array([[3, 3]]), 1),
    ((6, 2), 2, None, 1), ((6, 2), -3, np.array(2), 1), ((), 0, None, 1)]  # no such axis


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", range(len(SPLITS)))
def test_split_to_sequence_is_the_reference(case, dtype):
    # rule: onnx/node -- the same pieces, lengths and order, or the reference's own reading
    shape, axis, split, keepdims = SPLITS[case]
    x = values(dtype, shape)
    args = (x,) if split is None else (x, split)
    agree(*pair("SplitToSequence", len(args), axis=axis, keepdims=keepdims), args)


TEXT_REFUSES = [np.array([1, 1]), np.array([7, -1]), np.array([4, 3]), np.array(0),
                np.array(-2)]


@pytest.mark.parametrize("split", TEXT_REFUSES, ids=repr)
def test_splits_the_operator_text_refuses_are_refused(split):
    # rule: onnx/sequences -- SplitToSequence's text: a scalar split positive, a 1-D split's
    # lengths >= 0 summing to the axis; ONNX's reference slices such splits anyway (a piece
    # of 2 for [1, 1] of 6), onnxruntime refuses them, and so does lazyloop
    x = np.arange(12, dtype=np.float32).reshape(6, 2)
    bound, _, _ = pair("SplitToSequence", 2, axis=0, keepdims=1)
    with pytest.raises(EvaluationError) as info:
        bound.function(x, split)
    assert info.value.rule == "onnx/sequences"
    ort = pytest.importorskip("onnxruntime")
    from onnx import TensorProto, helper
    nodes = [helper.make_node("SplitToSequence", ["x", "s"], ["q"]),
             helper.make_node("ConcatFromSequence", ["q"], ["y"], axis=0)]
    graph = helper.make_graph(nodes, "g", [
        helper.make_tensor_value_info("x", TensorProto.FLOAT, [6, 2]),
        helper.make_tensor_value_info("s", TensorProto.INT64, list(split.shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    session = ort.InferenceSession(model.SerializeToString(),
                                   providers=["CPUExecutionProvider"])
    with pytest.raises(Exception):  # onnxruntime refuses it as well
        session.run(None, {"x": x, "s": split.astype(np.int64)})


def test_pieces_of_a_read_only_input_stay_read_only():
    # rule: stream/memo -- the pieces are views of the input, as the reference's are
    x = np.arange(6, dtype=np.float32).reshape(3, 2)
    x.setflags(write=False)
    fn = sequence_kernel("SplitToSequence", {"axis": 0, "keepdims": 0}, refusing_slow,
                         "node s").single
    pieces = fn(x)
    assert [p.tolist() for p in pieces] == [[0, 1], [2, 3], [4, 5]]
    assert not any(p.flags.writeable for p in pieces)


def test_the_pieces_of_a_vector_without_its_axis_are_0d_arrays():
    # rule: onnx/sequences -- found by the kernel law (tests/test_sequence_kernel_law.py):
    # with keepdims = 0 and no split, a vector's pieces were numpy scalars (`x[k]`); the
    # reference's are 0-D arrays (its reshape of each length-1 slice), views of the input
    x = np.array([1.5, -0.0, np.nan], np.float32)
    bound, reference, _ = pair("SplitToSequence", 1, axis=-1, keepdims=0)
    for pieces in (bound.single(x), reference(x)[0]):
        assert [type(p) for p in pieces] == [np.ndarray] * 3
        assert [(p.dtype, p.shape) for p in pieces] == [(np.dtype(np.float32), ())] * 3
        assert [p.tobytes() for p in pieces] == [np.float32(v).tobytes() for v in x]
        assert all(p.base is not None for p in pieces)


POSITIONS = [np.array(k) for k in range(-4, 4)] + [
    np.array(1, np.int32), np.array(2, np.uint8), np.int64(-1), np.array([1]),
    np.array(1.0), np.array(True)]


@pytest.mark.parametrize("length", [0, 1, 3])
@pytest.mark.parametrize("dtype", DTYPES)
def test_sequence_at_and_length_are_the_reference(length, dtype):
    # rule: onnx/node -- seq[position] for every position Python's indexing takes, the same
    # element itself; the others refused as the reference refuses them
    seq = [values(dtype, (2, k)) for k in range(length)] if length != 1 else [
        values(dtype, ())]
    at = pair("SequenceAt", 2)
    for position in POSITIONS:
        got = agree(*at, (seq, position))
        if got is not None:
            assert got is seq[int(position)]
    agree(*pair("SequenceLength", 1), (seq,))


def test_sequence_length_of_a_tensor_is_refused():
    # rule: onnx/node -- the reference refuses anything but a list
    agree(*pair("SequenceLength", 1), (np.zeros(3),))


@pytest.mark.parametrize("dtype", DTYPES)
def test_sequence_construct_and_empty_are_the_reference(dtype):
    # rule: onnx/node -- a new list of the inputs themselves; a new empty list
    tensors = (values(dtype, (2,)), values(dtype, ()), values(dtype, (0, 3)))
    for arity in (1, 2, 3):
        got = agree(*pair("SequenceConstruct", arity), tensors[:arity])
        assert all(g is t for g, t in zip(got, tensors))
    empty = pair("SequenceEmpty", 0, dtype=1)
    assert agree(*empty, ()) == [] and empty[0]()[0] is not empty[0]()[0]


INSERT_POSITIONS = [None] + [np.array(k) for k in range(-4, 5)] + [
    np.array([0]), np.array(1, np.int32), np.int64(-1), np.array(1.0), np.array([[2]])]


@pytest.mark.parametrize("length", [0, 1, 3])
@pytest.mark.parametrize("dtype", DTYPES)
def test_sequence_insert_is_lazyloops_kernel(length, dtype):
    # rules: onnx/sequences, onnx/node -- lazyloop's own SequenceInsert (positions in [-n, n],
    # n appends; the reference takes them modulo n): a new list, the given one unchanged
    seq = [values(dtype, (2,), seed) for seed in range(length)]
    tensor = values(dtype, (2,), 9)
    bound = kernels.bind(node_with("SequenceInsert", 3), {"": OPSET}, "node i")
    own = kernels._bound_call(kernels.sequence_insert_kernel, {}, "node i")
    for position in INSERT_POSITIONS:
        before = list(seq)
        got = agree(bound, own, own, (seq, tensor, position))
        assert seq == before or all(a is b for a, b in zip(seq, before))
        if got is not None:
            assert got is not seq and sum(g is tensor for g in got) == 1
    assert agree(kernels.bind(node_with("SequenceInsert", 2), {"": OPSET}, "node i"), own,
                 own, (seq, tensor))[-1] is tensor


def test_inserting_in_range_makes_no_reference_call():
    # rule: onnx/sequences -- by hand: -1 inserts before the last element, n appends
    fn = sequence_kernel("SequenceInsert", {}, refusing_slow, "node i").single
    a, b, t = np.array(1), np.array(2), np.array(9)
    assert fn([a, b], t, np.array(-1)) == [a, t, b]
    assert fn([a, b], t, np.array([2])) == [a, b, t]
    assert fn([], t) == [t]


OPTIONALS = [None, np.array([1.5, -0.0], np.float32), np.array(3), [np.zeros(2)], [],
             np.float32(2.5)]


@pytest.mark.parametrize("held", range(len(OPTIONALS)))
def test_optionals_are_the_reference(held):
    # rules: onnx/node, onnx/sequences -- has-element: `x is not None`; get-element: x
    # itself, the empty optional refused; Optional: lazyloop's own kernel (x itself)
    x = OPTIONALS[held]
    agree(*pair("OptionalHasElement", 1), (x,))
    got = agree(*pair("OptionalGetElement", 1), (x,))
    if isinstance(x, (np.ndarray, list)):
        assert got is x
    bound = kernels.bind(node_with("Optional", 1), {"": OPSET}, "node o")
    own = kernels._bound_call(kernels.optional_kernel, {}, "node o")
    got = agree(bound, own, own, (x,))
    if isinstance(x, (np.ndarray, list)) or x is None:
        assert got is x


def test_an_optional_with_no_input_is_empty():
    # rule: onnx/sequences -- Optional<type>() is the empty optional; it holds nothing
    assert kernels.bind(node_with("Optional", 0), {"": OPSET}, "node o")() == (None,)
    agree(*pair("OptionalHasElement", 0), ())


def test_list_building_kernels_say_they_may_keep_what_they_read():
    # rule: stream/memo -- the engine marks the arrays a list will hold read-only
    facts = {op: sequence_kernel(op, {"axis": 0}, refusing_slow, "n")
             for op in ("SequenceInsert", "SequenceConstruct", "SplitToSequence",
                        "ConcatFromSequence", "OptionalGetElement")}
    assert not any(facts[op].reads_only for op in ("SequenceInsert", "SequenceConstruct",
                                                    "SplitToSequence"))
    assert facts["ConcatFromSequence"].reads_only
    assert facts["OptionalGetElement"].passes_input
