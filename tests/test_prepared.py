"""What an evaluation of a lowered model makes once and what it makes every time (issue 25,
the fixed cost of one call): the evaluator's tables, its outputs and its default fuel are
set up when a mode is first asked for (`lazyloop.core.evaluate.Prepared`, the machine's
`prepare`); the feeds, the fuel, the memo and the trip counts are each evaluation's own
(`begin`). Each test evaluates once, then again with other feeds, fuel, modes or mistakes:
the second answer, or refusal, must be the one a fresh model gives. Expected values are
computed here with numpy. (rules: laziness/modes, stream/shape, stream/memo, trip/count,
laziness/dead)"""
import os
import sys

import numpy as np
import pytest

import lazyloop as ll
from lazyloop.core import evaluate as core_evaluate
from lazyloop.core.engine import machine as engine_machine, root
from lazyloop.core.reference.machine import Machine
from nets import SUM, const, counting

lo = pytest.importorskip("lazyloop.onnx")

#: onnxscript's `for i in range(n): acc = acc + x * i`, x float32[?] (tests/corpus)
FOR_SUM = os.path.join(os.path.dirname(__file__), "corpus", "onnxscript", "for_sum.onnx")
#: jax2onnx's `lax.cond(sum(x) > 0, cumsum, x * x)` outside loops, x float32[3]
TOP_COND = os.path.join(os.path.dirname(__file__), "corpus", "jax2onnx", "top_cond.onnx")


def for_sum(x, n):
    x = np.asarray(x, np.float32)
    acc = x.copy()
    for i in range(n):
        acc = acc + x * np.float32(i)
    return {"x": x, "n": np.array(n, np.int64)}, acc


def only(outputs):
    (value,) = outputs.values()
    return value


def refusal(call):
    """(class, rule, message) of the LazyLoopError `call` raises."""
    with pytest.raises(ll.LazyLoopError) as info:
        call()
    return type(info.value), info.value.rule, str(info.value)


def test_the_set_up_is_made_once_per_mode(monkeypatch):
    # laziness/modes -- the engine's tables are prepared once for "fast" and once for
    # "schedule"; every evaluation begins its own state (`again`) on a machine made once
    # per mode (`begin`) and kept, and the answers are x * (1 + sum i)
    lowered = lo.lower(FOR_SUM)
    prepared = counting(monkeypatch, engine_machine.EngineMachine, "prepare")
    made = counting(monkeypatch, engine_machine.EngineMachine, "begin")
    begun = counting(monkeypatch, engine_machine.EngineMachine, "again")
    for n in (3, 0, 5, 3):
        for mode in ("fast", "schedule"):
            feeds, want = for_sum([1.5, -2.0], n)
            np.testing.assert_allclose(only(lo.evaluate(lowered, feeds, mode=mode)), want,
                                       rtol=1e-6)
    assert len(prepared) == 2 and len(begun) == 8 and len(made) == 2
    assert set(lowered.runs) == {"fast", "schedule"}


def test_a_second_evaluation_answers_other_shapes_and_refuses_a_wrong_dtype_alike():
    # stream/shape -- x's dim is symbolic: lengths 2, then 3, then 1 answer right; a float64
    # x on the fourth call is refused with the error a fresh lowering of the model gives
    lowered = lo.lower(FOR_SUM)
    for x, n in (([1.0, 2.0], 2), ([1.0, 2.0, 3.0], 4), ([7.0], 1)):
        feeds, want = for_sum(x, n)
        np.testing.assert_allclose(only(lo.evaluate(lowered, feeds)), want, rtol=1e-6)
    wrong = {"x": np.array([1.0, 2.0]), "n": np.array(2, np.int64)}
    again = refusal(lambda: lo.evaluate(lowered, wrong))
    fresh = refusal(lambda: lo.evaluate(lo.lower(FOR_SUM), wrong))
    assert again == fresh and again[:2] == (ll.InputError, "stream/shape")
    assert "float64" in again[2] and "'x'" in again[2]
    feeds, want = for_sum([2.0, 4.0], 3)  # and the next usual call still answers
    np.testing.assert_allclose(only(lo.evaluate(lowered, feeds)), want, rtol=1e-6)


def test_each_evaluation_has_its_own_fuel():
    # trip/count -- after evaluations with the default fuel (shared: it holds no state), a
    # fuel of 2 trips refuses a count of 5 before any trip, a bad fuel is refused as a
    # fresh model refuses it, and the default fuel answers again
    lowered = lo.lower(FOR_SUM)
    feeds, want = for_sum([1.0, -1.0], 5)
    np.testing.assert_allclose(only(lo.evaluate(lowered, feeds)), want, rtol=1e-6)
    short = refusal(lambda: lo.evaluate(lowered, feeds, max_trips=2))
    assert short[:2] == (ll.FuelExhausted, "trip/count") and "max_trips=2" in short[2]
    for bad in (-1, True, 2.5):
        assert refusal(lambda: lo.evaluate(lowered, feeds, max_trips=bad)) == refusal(
            lambda: lo.evaluate(lo.lower(FOR_SUM), feeds, max_trips=bad))
    assert refusal(lambda: lo.evaluate(lowered, feeds, max_seconds=-1.0))[1] == "trip/while"
    np.testing.assert_allclose(only(lo.evaluate(lowered, feeds, max_trips=5)), want,
                               rtol=1e-6)
    np.testing.assert_allclose(only(lo.evaluate(lowered, feeds)), want, rtol=1e-6)


def test_a_kept_machine_holds_nothing_of_the_last_call():
    # stream/memo -- a prepared evaluation keeps the machines of calls that answered for
    # later calls, emptied: no feeds, fuel, memo, activations or paths are left in them;
    # a call an error stopped keeps nothing (its machine is dropped), and the next answers
    lowered = lo.lower(FOR_SUM)
    for n in (3, 1):
        feeds, want = for_sum([1.0, -1.0], n)
        np.testing.assert_allclose(only(lo.evaluate(lowered, feeds)), want, rtol=1e-6)
    spares = lowered.ready("fast").spares
    assert spares
    for machine in spares:
        assert machine.feeds is None and machine.fuel is None and machine.root.memo == {}
        assert not machine.root.children and not machine.paths
        assert not machine.scheduled_loops and not machine.masked_loops
    kept = list(spares)
    feeds, want = for_sum([1.0, -1.0], 5)
    assert refusal(lambda: lo.evaluate(lowered, feeds, max_trips=2))[1] == "trip/count"
    assert len(spares) == len(kept) - 1 and all(m in kept for m in spares)
    np.testing.assert_allclose(only(lo.evaluate(lowered, feeds)), want, rtol=1e-6)


def test_calls_from_threads_each_answer_their_own_feeds():
    # stream/memo -- calls of one lowered model from two threads at once each take a
    # machine of their own (a kept one or a new one): every answer is its feeds' own
    import threading
    lowered = lo.lower(FOR_SUM)
    wrong = []

    def calls(x, n):
        feeds, want = for_sum(x, n)
        for _ in range(200):
            got = only(lo.evaluate(lowered, feeds))
            if not np.allclose(got, want, rtol=1e-6):
                wrong.append((x, n, got))
    threads = [threading.Thread(target=calls, args=args)
               for args in (([1.0, 2.0], 3), ([5.0, -1.0, 0.5], 6), ([2.0], 0))]
    switching = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads take turns often, mid-call
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(switching)
    assert wrong == []


def test_modes_are_checked_on_every_call():
    # laziness/modes -- a mode that is not one (a name, a list) is refused with the
    # InputError naming "mode", before and after modes were prepared
    lowered = lo.lower(FOR_SUM)
    feeds, want = for_sum([1.0, 2.0], 3)
    for _ in range(2):
        for mode in ("quick", ["fast"], None):
            kind, rule, text = refusal(lambda: lo.evaluate(lowered, feeds, mode=mode))
            assert (kind, rule) == (ll.InputError, "laziness/modes") and "mode" in text
        for mode in core_evaluate.MODES:
            np.testing.assert_allclose(only(lo.evaluate(lowered, feeds, mode=mode)), want,
                                       rtol=1e-6)


def test_a_prepared_evaluation_shares_tables_not_state():
    # stream/memo -- two evaluations made from one prepared machine share its tables (the
    # plan, the readings, the constants) and hold their own memo, feeds and trip counts
    lowered = lo.lower(FOR_SUM)
    plan = core_evaluate.plan_of(lowered.network, lowered.resolved)
    prepared = core_evaluate.prepared(plan, lowered.resolved, "fast")
    assert core_evaluate.prepared(plan, lowered.resolved, "fast") is prepared
    first, second = (prepared.template.for_feeds(core_evaluate.check_feeds(
        plan, lowered.core_feeds(for_sum([1.0, 2.0], n)[0])), prepared.fuel) for n in (2, 4))
    assert first.plan is second.plan and first.constants is second.constants
    assert first.root is not second.root and first.feeds is not second.feeds
    assert first.trips is not second.trips and first.paths is not second.paths
    (nid,) = (nid for _, nid in plan.outputs)
    np.testing.assert_allclose(second.demand(nid), for_sum([1.0, 2.0], 4)[1])
    np.testing.assert_allclose(first.demand(nid), for_sum([1.0, 2.0], 2)[1])
    assert Machine.prepared(plan, lowered.resolved).for_feeds(
        first.feeds, prepared.fuel).demand(nid).tolist() == [2.0, 4.0]  # the reference's


def test_the_compiled_walk_takes_the_branch_its_condition_picks():
    # laziness/dead -- jax's cond outside loops: sum(x) > 0 takes cumsum(x), else x * x;
    # once the walk of the If is compiled, each call forces the branch its condition picks
    lowered = lo.lower(TOP_COND)
    for _ in range(root.HOT_WALKS + 2):
        for x in ([1.0, 2.0, -0.5], [-1.0, 0.5, 0.25], [0.0, 0.0, 0.0]):
            x = np.array(x, np.float32)
            want = np.cumsum(x) if x.sum() > 0 else x * x
            np.testing.assert_allclose(only(lo.evaluate(lowered, {"x": x})), want, rtol=1e-6)
    plan = core_evaluate.plan_of(lowered.network, lowered.resolved)
    (nid,) = (nid for _, nid in plan.outputs)
    assert not isinstance(root.root_walks(plan)[nid], int)  # compiled by now
    assert "w.reshape(-1)[0]" in root.walk_source(plan, nid)


def test_an_undefined_condition_outside_loops_is_left_to_the_rule():
    # laziness/dead -- an If outside loops whose condition no source
    # defines takes neither branch: its element is wholly undefined (the static type's
    # fill, mask False), by the compiled walk as by the reference
    net = ll.Network("onnx")
    x = net.add_input("x", ll.float32, (2,))
    flag = net.add_undefined(ll.TensorType(ll.bool, ()))
    pick = net.add_if_conditional()
    pick.set_condition(flag.get_output(0))
    then = pick.add_input(x).get_output(0)
    other = pick.add_input(const(net, np.zeros(2, np.float32))).get_output(0)
    out = pick.add_output(then, other).get_output(0)
    out.name = "y"
    net.mark_output(out)
    plan = ll.compile_network(net)
    feeds = {"x": np.array([1.0, 2.0], np.float32)}
    reference = ll.run(plan, feeds, mode="reference", trace=False)
    assert reference.defined["y"].tolist() == [False, False]
    for _ in range(root.HOT_WALKS + 2):
        fast = ll.run(plan, feeds, trace=False)
        assert fast.defined["y"].tolist() == [False, False]
        np.testing.assert_array_equal(fast.outputs["y"], reference.outputs["y"])
    assert not isinstance(root.root_walks(plan)[plan.outputs[0][1]], int)


def nested_choices():
    """y = c1 ? (c2 ? (c3 ? x + 1 : x + 2) : x + 3) : x + 4, three if-conditionals outside
    loops nested in each other's then-branches; c1..c3 are the feeds c0..c2."""
    net = ll.Network("onnx")
    x = net.add_input("x", ll.float32, (2,))
    flags = [net.add_input(f"c{k}", ll.bool, ()) for k in range(3)]

    def plus(v):
        return net.add_elementwise(x, const(net, np.full(2, v, np.float32)), SUM).get_output(0)

    inner = plus(1)
    for k, other in ((2, plus(2)), (1, plus(3)), (0, plus(4))):
        choice = net.add_if_conditional()
        choice.set_condition(flags[k])
        then = choice.add_input(inner).get_output(0)
        orelse = choice.add_input(other).get_output(0)
        inner = choice.add_output(then, orelse).get_output(0)
    inner.name = "y"
    net.mark_output(inner)
    return net


def test_nested_conditionals_outside_loops_walk_their_taken_branches():
    # laziness/dead -- three nested if-conditionals outside loops (two of them written in
    # line in the compiled walk, the third by its own walk): every choice of conditions
    # gives x + 1, 2, 3 or 4, as the reference gives it, before and after compiling
    plan = ll.compile_network(nested_choices())
    x = np.array([1.0, -2.0], np.float32)
    for _ in range(root.HOT_WALKS + 2):
        for bits in range(8):
            c = [bool(bits & 1), bool(bits & 2), bool(bits & 4)]
            feeds = {"x": x, **{f"c{k}": np.array(c[k]) for k in range(3)}}
            want = x + (4 if not c[0] else 3 if not c[1] else 2 if not c[2] else 1)
            np.testing.assert_array_equal(ll.evaluate(plan, feeds)["y"], want)
            np.testing.assert_array_equal(ll.evaluate(plan, feeds, mode="reference")["y"],
                                          want)
    walked = root.root_walks(plan)[plan.outputs[0][1]]
    assert not isinstance(walked, int)
    assert root.walk_source(plan, plan.outputs[0][1]).count("if w.reshape(-1)[0]:") == 2


def test_a_walk_writes_few_branch_nodes_in_line():
    # laziness/dead -- skl2onnx's knn_imputer holds a dozen if-conditionals outside loops
    # whose branches share large cones: each output's compiled walk writes its own order
    # and at most INLINE_NODES branch nodes in line (their other nodes go by their walks)
    path = os.path.join(os.path.dirname(__file__), "corpus", "skl2onnx", "knn_imputer.onnx")
    lowered = lo.lower(path)
    plan = core_evaluate.plan_of(lowered.network, lowered.resolved)
    for _, nid in plan.outputs:
        text = root.walk_source(plan, nid)
        written = sum(1 for line in text.splitlines() if line.strip().startswith("if k")
                      and line.rstrip().split("#")[0].rstrip().endswith("not in M:"))
        assert written <= len(root.root_order(plan, nid)) + root.INLINE_NODES
