"""One evaluation's fixed path outside loops (issue 25, third round): a prepared evaluation
keeps the machines of calls that answered and begins them again; a loop outside loops is
run by one runner bound once per plan and loop (`RootLoop`), which stores every output of
its run; the compiled walk stores a map's array without the dtype and shape test where the
kernel's given type settles it (`sure_roots`). Each test evaluates the same prepared plan
again and again with other feeds: an answer that kept anything of an earlier call, or a
path that computed otherwise, fails it. Expected values are computed here with numpy.
(rules: stream/memo, output/last, output/concat, structure/shapes, laziness/modes)"""
import numpy as np
import pytest

import lazyloop as ll
from lazyloop.core.ambiguity import resolve
from lazyloop.core.engine import EngineMachine, root, root_loop
from lazyloop.core.evaluate import plan_of, prepared
from lazyloop.core.kernel import Kernel
from nets import SUM, concat, const, counter, counting, last, padded_input_rows

X = np.arange(12, dtype=np.float32).reshape(4, 3)


def two_outputs():
    """for i in range(n): acc += x * i -- LAST_VALUE(acc) and the stacked i, n an input."""
    net = ll.Network("onnx")
    x = net.add_input("x", ll.float32, (3,))
    n = net.add_input("n", ll.int32, ())
    loop = net.add_loop()
    loop.add_trip_limit(n, ll.TripLimit.COUNT)
    i, _ = counter(net, loop)
    acc = loop.add_recurrence(const(net, np.zeros(3, np.float32)))
    scaled = net.add_elementwise(x, net.add_cast(i, ll.float32).get_output(0),
                                 ll.ElementWiseOperation.PROD).get_output(0)
    acc.set_input(1, net.add_elementwise(acc.get_output(0), scaled, SUM).get_output(0))
    total, counts = last(loop, acc.get_output(0)), loop.add_loop_output(
        i, ll.LoopOutput.CONCATENATE, 0).get_output(0)
    total.name, counts.name = "total", "counts"
    net.mark_output(total)
    net.mark_output(counts)
    return net


def test_a_loop_outside_loops_stores_every_output_of_one_run(monkeypatch):
    # output/last, output/concat -- one run per evaluation makes both outputs: the sum
    # x * (0 + 1 + ... + n-1) and the counts 0 .. n-1, for each n in turn, zero trips too
    plan = plan_of(two_outputs(), None)
    runs = counting(monkeypatch, root_loop.RootLoop, "__call__")
    x = np.array([1.0, -2.0, 0.5], np.float32)
    calls = [3, 0, 5, 1, 3] * 3
    for n in calls:
        got = ll.evaluate(plan, {"x": x, "n": np.array(n, np.int32)})
        np.testing.assert_allclose(got["total"], x * (n * (n - 1) // 2), rtol=1e-6)
        np.testing.assert_array_equal(got["counts"], np.arange(n, dtype=np.int32))
    assert len(runs) == len(calls)


def padding_read():
    """Loop 0 stacks t0 rows of x padded to 4 (p, t0 an input); loop 1 adds 1 to the first
    two rows of p (padding, undefined, where t0 < 2)."""
    net = ll.Network()
    p = padded_input_rows(net, "t0")
    second = net.add_loop()
    second.add_trip_limit(const(net, 2, np.int32), ll.TripLimit.COUNT)
    row = second.add_iterator(p).get_output(0)
    y = net.add_elementwise(row, const(net, np.ones(3, np.float32)), SUM).get_output(0)
    ys = concat(net, second, y, 2)
    ys.name = "ys"
    net.mark_output(ys)
    return net


def test_a_run_that_meets_padding_goes_masked_for_its_call_alone(monkeypatch):
    # output/concat, laziness/modes -- rows of p past t0 are padding (NaN, undefined): the
    # second loop's run reads p, so it goes masked unless t0 = 4 (no padding), for that
    # call alone; calls alternate on one prepared plan, each answer and mask is numpy's,
    # and no kept machine stays masked
    plan = plan_of(padding_read(), None)
    general = counting(monkeypatch, EngineMachine, "schedule_values")
    calls = [1, 3, 0, 2, 1, 4] * root.HOT_WALKS
    for t0 in calls:
        feeds = {"x": X, "t0": np.array(t0, np.int32)}
        read = np.arange(2)[:, None] < t0
        want = np.where(read, X[:2] + 1, np.nan)
        before = len(general)
        np.testing.assert_array_equal(ll.evaluate(plan, feeds)["ys"], want)
        assert len(general) - before == (t0 < 4)  # a masked run: the general path
        got = ll.run(plan, feeds, trace=False)
        np.testing.assert_array_equal(got.outputs["ys"], want)
        np.testing.assert_array_equal(got.defined["ys"], np.broadcast_to(read, (2, 3)))
        for machine in prepared(plan, resolve(None), "fast").spares:
            assert not machine.masked_loops and machine.root.memo == {}
    assert ll.run(plan, {"x": X, "t0": np.array(1, np.int32)}).paths == {
        "loop0": 'reference: mode "reference"', "loop1": 'reference: mode "reference"'}


def root_maps():
    """y = x + 1 (a kernel whose given type settles y's check) and z = a function layer
    that claims nothing and returns what `shape` says (its check is made)."""
    net = ll.Network("onnx")
    x = net.add_input("x", ll.float32, (3,))
    y = net.add_elementwise(x, const(net, np.ones(3, np.float32)), SUM).get_output(0)
    z = net.add_function(lambda v: (np.resize(v, SHAPE[0]),), [y],
                         [ll.TensorType(ll.float32, (3,))], op="Resize").get_output(0)
    y.name, z.name = "y", "z"
    net.mark_output(z)
    return net


SHAPE = [(3,)]


def test_the_compiled_walk_checks_what_no_kernel_settles():
    # structure/shapes -- once the walk is compiled, y (an Add of float32[3] arrays) is
    # stored without the test and z, whose kernel claims nothing, with it: the answers are
    # x + 1, and a z of another shape is refused as the reference refuses it
    plan = plan_of(root_maps(), None)
    (zid,) = (nid for _, nid in plan.outputs)
    assert "y" in root.sure_roots(plan) and zid not in root.sure_roots(plan)
    x = np.array([1.0, 2.0, -3.0], np.float32)
    for _ in range(root.HOT_WALKS + 2):
        np.testing.assert_array_equal(ll.evaluate(plan, {"x": x})["z"], x + 1)
    assert not isinstance(root.root_walks(plan)[zid], int)  # compiled by now
    text = root.walk_source(plan, zid)
    assert text.count("if v.__class__ is ND:") == 1 and "v.shape in S[" in text
    SHAPE[0] = (4,)
    try:
        for mode in ("fast", "reference"):
            with pytest.raises(ll.StreamShapeChanged) as info:
                ll.evaluate(plan, {"x": x}, mode=mode)
            assert info.value.rule == "structure/shapes"
    finally:
        SHAPE[0] = (3,)
    np.testing.assert_array_equal(ll.evaluate(plan, {"x": x})["z"], x + 1)


def carried_on(writes):
    """y = x + 1; p = pass(y), a kernel that says it may return its argument itself (as
    Identity does); z = kernel(p), a kernel that scribbles on its argument (`writes`) or one
    that says it only reads (both give 2 p); w = z + y."""
    def scribble(v):
        v[...] = 7
        return (v * 2,)
    kernel = scribble if writes else Kernel(lambda v: (v * 2,), reads_only=True)
    same = [ll.TensorType(ll.float32, (2,))]
    net = ll.Network("onnx")
    x = net.add_input("x", ll.float32, (2,))
    y = net.add_elementwise(x, const(net, np.ones(2, np.float32)), SUM).get_output(0)
    p = net.add_function(Kernel(lambda v: (v,), reads_only=True, passes_input=True), [y],
                         same, op="Pass").get_output(0)
    z = net.add_function(kernel, [p], same, op="K").get_output(0)
    w = net.add_elementwise(z, y, SUM).get_output(0)
    y.name, p.name, w.name = "y", "p", "w"
    net.mark_output(w)
    return net


@pytest.mark.parametrize("writes", [False, True])
def test_what_reaches_a_writing_kernel_as_it_is_stays_read_only(writes):
    # stream/memo -- y reaches z's kernel as itself, through a kernel that may pass it on:
    # marked read-only when z's kernel might write (and its writing is then refused, node by
    # node and by the compiled walk), left unmarked when it says it only reads (every
    # answer then 2 (x + 1) + (x + 1))
    plan = ll.compile_network(carried_on(writes))
    unmarked = root.unmarked_roots(plan)
    assert ("y" in unmarked, "p" in unmarked) == (not writes, not writes)
    x = np.array([1.0, -3.0], np.float32)
    for _ in range(root.HOT_WALKS + 2):
        if writes:
            with pytest.raises(ll.EvaluationError) as info:
                ll.evaluate(plan, {"x": x})
            assert info.value.rule == "stream/map"
        else:
            np.testing.assert_array_equal(ll.evaluate(plan, {"x": x})["w"], 3 * (x + 1))
    assert x.tolist() == [1.0, -3.0]  # the caller's array, never written


def chosen(reader):
    """ONNX: y = x + 1; q = If(c, then: Identity(y), else: Identity(x)); z = reader(q);
    w = z + y."""
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto as T, helper as h
    vec = [h.make_tensor_value_info(n, T.FLOAT, [2]) for n in ("t", "e")]
    then = h.make_graph([h.make_node("Identity", ["y"], ["t"])], "then", [], vec[:1])
    orelse = h.make_graph([h.make_node("Identity", ["x"], ["e"])], "else", [], vec[1:])
    nodes = [h.make_node("Add", ["x", "one"], ["y"]),
             h.make_node("If", ["c"], ["q"], then_branch=then, else_branch=orelse),
             h.make_node(reader, ["q"], ["z"]),
             h.make_node("Cast", ["z"], ["zf"], to=T.FLOAT),
             h.make_node("Add", ["zf", "y"], ["w"])]
    graph = h.make_graph(
        nodes, "chosen", [h.make_tensor_value_info("x", T.FLOAT, [2]),
                          h.make_tensor_value_info("c", T.BOOL, [])],
        [h.make_tensor_value_info("w", T.FLOAT, [2])],
        [h.make_tensor("one", T.FLOAT, [], [1.0])])
    return onnx, h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])


@pytest.mark.parametrize("reader", ["Neg", "Round"])
def test_a_branch_taken_as_it_is_is_marked_as_what_reads_the_conditional(reader):
    # stream/memo -- an If's element is its taken branch's, itself: y (through Identity and
    # the then-branch) is left unmarked when the If's one reader says it only reads (Neg, a
    # numpy ufunc), marked when it does not say so (Round, the reference kernel's); the
    # answers are the same, -q + y or round(q) + y, every call, as ONNX's reference
    # evaluator gives them
    onnx, model = chosen(reader)
    lo = pytest.importorskip("lazyloop.onnx")
    from onnx.reference import ReferenceEvaluator
    lowered = lo.lower(model)
    plan = plan_of(lowered.network, lowered.resolved)
    reads_only = reader == "Neg"
    assert ("y" in root.unmarked_roots(plan)) == reads_only
    x = np.array([1.0, -3.0], np.float32)
    for c in (True, False):
        feeds = {"x": x, "c": np.array(c)}
        q = x + 1 if c else x
        want = (-q if reads_only else np.round(q)) + (x + 1)  # q holds whole numbers
        np.testing.assert_array_equal(ReferenceEvaluator(model).run(None, feeds)[0], want)
        for _ in range(root.HOT_WALKS + 2):
            (got,) = lo.evaluate(lowered, feeds).values()
            np.testing.assert_array_equal(got, want)
