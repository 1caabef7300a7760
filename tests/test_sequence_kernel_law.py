"""The kernel law (rules: onnx/node, onnx/sequences) over the direct bindings the op
catalogue does not reach: the sequence and optional ops (lazyloop/onnx/sequence_kernels.py)
and ai.onnx.ml's ArrayFeatureExtractor (select_kernels.py).

The calls are made from the ops' schemas (tests/sequence_cases.py): every element type
their type constraints allow (strings and booleans among them), every attribute value the
law tries (negative and out-of-range axes, keepdims and new_axis 0 and 1, split given or
not, 0-D or 1-D), sequences of 0 to 4 elements of one shape and of several, empty and 0-D
tensors, the empty optional. On each, the binding gives what the reference kernel bound
alone gives -- lazyloop's own kernel for SequenceInsert and Optional (spec/30) -- value by
value: a list where it gives a list, new where its is new, each element the argument array
itself where its is, arrays of the same dtype, shape and bits; or both refuse, the binding
with a LazyLoopError. Arguments (lists and their members) are never changed. One binding
called in turn on its node's cases, its arguments read-only, keeps nothing into another
answer. The default profile checks seeds 0 to 2 (every element type) and a sample of drawn
seeds; the `campaign` profile many more.
"""
import attrs
import numpy as np
import pytest

pytest.importorskip("onnx")
pytest.importorskip("hypothesis")

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from kernel_law import outcome  # noqa: E402
from sequence_cases import calls, cases  # noqa: E402
from sequence_law import (ML_OPS, OPSETS, SEQUENCE_OPS, Call, binding_of,  # noqa: E402
                          element_types, law_holds, law_holds_in_turn, reference_of)

from lazyloop.onnx import kernels  # noqa: E402
from lazyloop.strategies.onnx_op_search import catalogue  # noqa: E402

OPS = SEQUENCE_OPS + ML_OPS
#: seeds 0..2 between them feed every element type of every op (`dtypes_for`)
SEEDS = (0, 1, 2)


def test_the_law_covers_the_kernels_the_catalogue_does_not_reach():
    # rule: onnx/node -- none of these ops is in the catalogue; each binds directly at
    # every opset where it is defined, and its cases span every element type allowed
    assert not set(OPS) & set(catalogue(21))
    for op in OPS:
        assert calls(op), op
        for call in calls(op):
            assert binding_of(call).single is not None, call
    fed = {op: {a.dtype for s in SEEDS for c in calls(op)[:1] for args in cases(c, s)
                for x in args for a in (x if isinstance(x, list) else [x])
                if isinstance(a, np.ndarray)} for op in OPS}
    assert len(element_types("SequenceAt", "S")) == 15
    for op, parameter in (("SequenceConstruct", "T"), ("SequenceAt", "S"),
                          ("SplitToSequence", "T"), ("ConcatFromSequence", "S"),
                          ("ArrayFeatureExtractor", "T")):
        assert set(element_types(op, parameter)) <= fed[op], op
    assert {np.dtype(bool), np.dtype(object)} <= fed["ConcatFromSequence"]


@pytest.mark.parametrize("op", OPS)
def test_every_case_of_a_sequence_kernel_is_the_reference(op):
    # rule: onnx/sequences (onnx/node) -- each node at each opset, each case of seeds 0..2;
    # the cases reach both answers and refusals where the op can refuse
    seen = set()
    for call in calls(op):
        bound, reference = binding_of(call), reference_of(call)
        for seed in SEEDS:
            for args in cases(call, seed):
                law_holds(call, args, bound, reference)
                seen.add(outcome(reference, args)[0])
    can_refuse = op not in ("SequenceEmpty", "SequenceConstruct", "OptionalHasElement",
                            "Optional")
    assert seen == ({"value", "refused"} if can_refuse else {"value"}), seen


ALL_CALLS = tuple(c for op in OPS for c in calls(op))


@settings(max_examples=settings().max_examples * 3)
@given(st.sampled_from(ALL_CALLS), st.integers(3, 200))
def test_sequence_kernels_are_the_reference_on_drawn_seeds(call, seed):
    # rule: onnx/sequences -- other element types first, other values, other shapes
    bound, reference = binding_of(call), reference_of(call)
    for args in cases(call, seed):
        law_holds(call, args, bound, reference)


@pytest.mark.parametrize("op", OPS)
def test_a_sequence_binding_called_in_turn_keeps_nothing(op):
    # rule: onnx/node -- one binding per node, its cases of two seeds forwards then back
    for call in calls(op):
        if call.opset == max(c.opset for c in calls(op)):
            steps = cases(call, 0) + cases(call, 1)
            law_holds_in_turn(call, steps + steps[::-1])


@settings(max_examples=settings().max_examples)
@given(st.data())
def test_a_sequence_binding_called_in_a_drawn_order(data):
    # rule: onnx/node -- any order of a node's cases, of any seeds
    call = data.draw(st.sampled_from(ALL_CALLS))
    seeds = data.draw(st.lists(st.integers(0, 40), min_size=1, max_size=3))
    pool = [args for s in seeds for args in cases(call, s)]
    order = data.draw(st.lists(st.integers(0, len(pool) - 1), min_size=2, max_size=24))
    law_holds_in_turn(call, [pool[k] for k in order])


# ------------------------------------------------------------------------------------------
# The law fails where a binding is not the reference
# ------------------------------------------------------------------------------------------

def planted(single):
    return kernels.kernel_of(lambda *a: (single(*a),))


def test_the_sequence_law_fails_on_a_binding_that_is_not_the_reference():
    # rule: onnx/sequences -- planted: an insert into the list given, an element copied
    # where the reference gives the array itself, a numpy scalar where it gives a 0-D array,
    # the list given handed back, a raw exception, an answer where the reference refuses
    x, y = np.array([1.0, np.nan], np.float32), np.array(2.0, np.float32)
    faults = [(Call("SequenceInsert", (), 2), lambda s, t: s.append(t) or s, [[x], y]),
              (Call("SequenceAt", (), 2), lambda s, i: s[i].copy(), [[x, y], np.array(0)]),
              (Call("SplitToSequence", (("keepdims", 0),), 1), lambda v: list(v), [x]),
              (Call("SequenceConstruct", (), 1), lambda *t: t[0], [[x]]),
              (Call("SequenceLength", (), 1), lambda s: s.missing, [[x]]),
              (Call("SequenceAt", (), 2), lambda s, i: s[int(i) % 2], [[x, y], np.array(5)]),
              (Call("ArrayFeatureExtractor", (), 2, 3), lambda d, i: d[..., i],
               [np.ones(3), np.array([0, 1])]),
              (Call("ConcatFromSequence", (("axis", 0), ("new_axis", 1)), 1),
               lambda s: np.stack(s).astype(np.float64), [[x, x]])]
    for call, fault, args in faults:
        with pytest.raises(AssertionError):
            law_holds(call, args, attrs_single(planted(fault)), reference_of(call))
        law_holds(call, args)


def attrs_single(kernel):
    """A planted kernel record given its one-value form (the law calls both)."""
    return attrs.evolve(kernel, single=lambda *a: kernel.function(*a)[0])


def test_the_sequence_law_in_turn_fails_on_a_kept_list():
    # rule: onnx/node -- planted: a SequenceEmpty that hands out one list it keeps (a
    # caller's append reaches the next answer)
    kept = []
    call = Call("SequenceEmpty", (), 0)
    with pytest.raises(AssertionError):
        law_holds_in_turn(call, [[], []], attrs_single(planted(lambda: kept)))
    law_holds_in_turn(call, [[], []])


@pytest.mark.parametrize("opset", OPSETS)
def test_every_opset_defines_its_calls(opset):
    # rule: onnx/node -- the ops the law makes at each opset are those onnx defines there
    made = {c.op for c in ALL_CALLS if c.opset == opset}
    assert {"SequenceAt", "SplitToSequence"} <= made
    assert ("Optional" in made) == (opset >= 15)
