"""The kernel law (rule: onnx/node): every direct kernel binding is ONNX's reference kernel.

lazyloop binds many ops "directly" (numpy_kernels.direct and the array, gather, sort,
scatter, reduce, einsum, gemm, arithmetic and select kernels behind it) to skip the reference
kernel's layers, each claiming to give the reference's value or to leave the case to the
reference. One law checks every such claim over the schema-driven op catalogue (the valid
calls of each op at opset 21: signatures, attributes, dtypes): for every call of an op whose
binding is not the reference kernel's own bound call, on ordinary values, on the edge values
of each dtype (NaN, infinities, -0.0, the extremes, subnormals) and on empty shapes, the
binding (`kernels.bind`) and the reference kernel bound alone (`kernels._bound_reference`)
give the same dtype, shape and bits for every output -- or both refuse, the binding with a
LazyLoopError. The binding never writes its arguments.

A binding's batched form (`Kernel.batched`, the fast path's map over stacked elements) gives
each stacked element the binding's own value for it, bit for bit, or says `NotBatchable`.

A second law is for the kernels that keep what they derived (their last value, an index or
a plan per shape): one binding called again and again with the arguments of the op's other
calls -- alternating shapes, dtypes and constant inputs, its arguments read-only as the
engine's stream elements are -- gives each call the reference's answer, and writing into a
value it returned (where that value is writable) changes no later answer.

The default hypothesis profile checks a sample of seeds; the `campaign` profile many more.
"""
import numpy as np
import pytest

pytest.importorskip("onnx")
pytest.importorskip("hypothesis")

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from kernel_law import (VARIANTS, arguments, batch_law_holds, batched_calls,  # noqa: E402
                        binding_of, direct_calls, in_turn, law_holds, law_holds_in_turn,
                        reference_of, servings)

from lazyloop.core.errors import LazyLoopError  # noqa: E402
from lazyloop.onnx import kernels  # noqa: E402


# ------------------------------------------------------------------------------------------
# The law over every direct binding
# ------------------------------------------------------------------------------------------

DIRECT_OPS = tuple(direct_calls())


def test_the_law_covers_the_direct_bindings():
    # rule: onnx/node -- the ops bound directly are found by binding, not listed by hand:
    # the elementwise, array, gather, sort, scatter, reduce, einsum and gemm kernels
    assert len(DIRECT_OPS) >= 60
    assert {"Add", "Sigmoid", "Cast", "Slice", "Shape", "Expand", "Einsum", "TopK", "Split",
            "GatherElements", "ScatterElements", "ReduceSum", "Gemm", "CumSum", "Where",
            "ArgMax", "Mod"} <= set(DIRECT_OPS)
    assert not set(DIRECT_OPS) & {"Softmax", "Conv", "LSTM"}  # the reference's own


@pytest.mark.parametrize("op", DIRECT_OPS)
def test_every_call_of_a_direct_binding_is_the_reference(op):
    # rule: onnx/node -- each catalogue call, on ordinary, edge and empty values
    for call in direct_calls()[op]:
        bound, reference = binding_of(call), reference_of(call)
        for variant in VARIANTS:
            law_holds(call, arguments(call, variant, 0), bound, reference)


#: the opsets exporters write most (the law at OPSET checks every variant and more seeds)
OLDER_OPSETS = (11, 13, 17)


@pytest.mark.parametrize("opset", OLDER_OPSETS)
def test_the_direct_bindings_at_older_opsets_are_the_reference(opset):
    # rule: onnx/node -- the catalogue's calls made at an older opset, where the same node
    # may bind other kernels (Split 13, Reshape 5, the reductions with axes attributes) or
    # be refused by the reference kernel on every call
    table = direct_calls(opset)
    assert len(table) >= 50
    for op, calls in table.items():
        for call in calls:
            bound, reference = binding_of(call), reference_of(call)
            for variant in VARIANTS:
                law_holds(call, arguments(call, variant, 1), bound, reference)


def test_an_attribute_the_opset_does_not_define_is_refused_as_the_reference_refuses():
    # rule: onnx/node -- found by the law: Split's num_outputs (opset 18), Reshape's
    # allowzero (14), Shape's end (15), ReduceSumSquare's noop_with_empty_axes (18) at
    # opsets before theirs; the reference kernel refuses every call (its `_run` takes no
    # such keyword), the direct bindings answered (a Split into [[0, 1]] and [[2, 3]])
    from onnx import TensorProto, helper
    from onnx.reference import ReferenceEvaluator

    import lazyloop.onnx as lo
    cases = [(17, helper.make_node("Split", ["x"], ["y", "z"], num_outputs=2)),
             (13, helper.make_node("Reshape", ["x", "s"], ["y"], allowzero=1)),
             (13, helper.make_node("Shape", ["x"], ["y"], end=-1)),
             (17, helper.make_node("ReduceSumSquare", ["x"], ["y"], noop_with_empty_axes=1))]
    feeds = {"x": np.arange(4, dtype=np.float32).reshape(2, 2), "s": np.array([-1])}
    for opset, node in cases:
        inputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT if n == "x" else
                                                TensorProto.INT64, None) for n in node.input]
        outputs = [helper.make_value_info(o, helper.TypeProto()) for o in node.output]
        model = helper.make_model(helper.make_graph([node], "g", inputs, outputs),
                                  opset_imports=[helper.make_opsetid("", opset)])
        mine = {n: feeds[n] for n in node.input}
        with pytest.raises(TypeError):
            ReferenceEvaluator(model).run(None, mine)
        with pytest.raises(LazyLoopError, match=r"onnx/node"):
            lo.evaluate(model, mine)


ALL_CALLS = tuple(c for op in DIRECT_OPS for c in direct_calls()[op])


@settings(max_examples=settings().max_examples * 10)
@given(st.integers(0, len(ALL_CALLS) - 1), st.sampled_from(VARIANTS), st.integers(1, 40))
def test_direct_bindings_are_the_reference_on_drawn_seeds(which, variant, seed):
    # rule: onnx/node -- other values for the same calls: the seed shifts the ordinary
    # pattern and which edge value lands where
    call = ALL_CALLS[which]
    law_holds(call, arguments(call, variant, seed))


def test_the_law_fails_on_a_binding_that_is_not_the_reference():
    # rule: onnx/node -- a planted fault in each way a binding may differ: one bit of a value
    # (a NaN of the other sign), a dtype, a raw exception, writing an argument
    call = direct_calls()["Neg"][0]
    x = np.array([np.nan], np.float32)
    faults = [lambda a: (np.copysign(np.negative(a), 1.0),),
              lambda a: (np.negative(a).astype(np.float64),),
              lambda a: (a[5],), lambda a: (np.negative(a, out=a),)]
    for fault in faults:
        with pytest.raises(AssertionError):
            law_holds(call, [x], kernels.kernel_of(fault), reference_of(call))

# ------------------------------------------------------------------------------------------
# The law over calls in turn
# ------------------------------------------------------------------------------------------

KEEPING = ("Shape", "Expand", "Slice", "Split", "Einsum", "ScatterElements",
           "GatherElements", "TopK", "Sigmoid")


def test_the_keeping_kernels_are_served_in_turn():
    # rule: onnx/node -- every keeping kernel has several calls of one node to alternate
    for op in KEEPING:
        assert sum(len(g) for g in servings(op)) >= 4, op


@pytest.mark.parametrize("op", [op for op in DIRECT_OPS if servings(op)])
def test_a_binding_called_in_turn_keeps_nothing_into_another_call(op):
    # rule: onnx/node -- alternating shapes, dtypes, constants and kinds of values
    for calls in servings(op):
        law_holds_in_turn(in_turn(calls), binding_of(calls[0]), reference_of(calls[0]))


@settings(max_examples=settings().max_examples * 2)
@given(st.data())
def test_a_keeping_binding_called_in_a_drawn_order(data):
    # rule: onnx/node -- any order of its node's calls, values and seeds
    calls = data.draw(st.sampled_from([g for op in KEEPING for g in servings(op)]))
    steps = data.draw(st.lists(st.tuples(st.sampled_from(calls), st.sampled_from(VARIANTS),
                                         st.integers(0, 12)), min_size=2, max_size=16))
    law_holds_in_turn(steps, binding_of(calls[0]), reference_of(calls[0]))


def test_the_law_in_turn_fails_on_a_kept_value_that_leaks():
    # rule: onnx/node -- planted: a Shape that keeps its value per shape and hands it out
    # writable (a caller's write reaches the next answer), and an Abs that keeps its last
    # value per shape (another dtype's, other values)
    def leaking_shape():
        kept = {}

        def shape(x):
            if x.shape not in kept:
                kept[x.shape] = np.array(x.shape, np.int64)
            return (kept[x.shape],)
        return kernels.kernel_of(shape)

    def stale_abs():
        kept = {}

        def absolute(x):
            return (kept.setdefault(x.shape, np.absolute(x)),)
        return kernels.kernel_of(absolute)

    for op, faulty in (("Shape", leaking_shape), ("Abs", stale_abs)):
        calls = max(servings(op), key=len)
        with pytest.raises(AssertionError):
            law_holds_in_turn(in_turn(calls), faulty(), reference_of(calls[0]))
        law_holds_in_turn(in_turn(calls), binding_of(calls[0]), reference_of(calls[0]))

# ------------------------------------------------------------------------------------------
# The batched law
# ------------------------------------------------------------------------------------------

BATCHED = batched_calls()


def test_the_batched_law_covers_the_batched_forms():
    # rule: stream/map -- elementwise, layout and MatMul forms among them
    ops = {c.op for c in BATCHED}
    assert len(ops) >= 60 and {"Add", "Acos", "Reshape", "Transpose", "Squeeze",
                               "MatMul", "Cast", "Where"} <= ops


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_batched_form_gives_each_element_the_binding_s_value(variant):
    # rule: stream/map (onnx/node) -- every call with a batched form, all data stacked and
    # the first alone
    for call in BATCHED:
        for only_first in (False, True):
            batch_law_holds(call, variant, 0, only_first)


@settings(max_examples=settings().max_examples * 5)
@given(st.integers(0, len(BATCHED) - 1), st.sampled_from(VARIANTS), st.integers(1, 40),
       st.booleans())
def test_batched_forms_on_drawn_seeds(which, variant, seed, only_first):
    # rule: stream/map -- other values for the same calls
    batch_law_holds(BATCHED[which], variant, seed, only_first)
