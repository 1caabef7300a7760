"""What one evaluation pays besides its trips, made cheaper (issue 25, second round): the
values are still the ones the rules give. A value a kernel passes through outside loops is
read-only without being marked again; a run reads its COUNT as `count_limit` reads it (the
first element), whatever its shape; a declared carried value is checked by the one-value
form of its kernel. Expected values are computed here by hand or by numpy."""
import numpy as np
import pytest

import lazyloop as ll
from lazyloop.core.engine import EngineMachine
from lazyloop.core.engine.root import HOT_WALKS, unmarked_roots, walk_source
from lazyloop.core.evaluate import check_feeds, plan_of
from nets import SUM, const, counter, last


def passed_through():
    """y = pass(x), z = pass(y) (kernels that return their argument itself, with no flags:
    they might write to it too), w = y + 1: outputs z and w."""
    net = ll.Network("onnx")
    x = net.add_input("x", ll.float32, (2,))
    kind = [ll.TensorType(ll.float32, (2,))]
    y = net.add_function(lambda v: (v,), [x], kind, op="Pass").get_output(0)
    z = net.add_function(lambda v: (v,), [y], kind, op="Pass").get_output(0)
    w = net.add_elementwise(y, const(net, np.ones(2, np.float32)), SUM).get_output(0)
    z.name, w.name = "z", "w"
    net.mark_output(z)
    net.mark_output(w)
    return net


def test_a_value_passed_through_outside_loops_stays_read_only():
    # rule: stream/memo -- every array the root memo keeps is read-only but those only
    # kernels that read alone read (`unmarked_roots`), node by node and by the compiled walk
    # (which does not mark a value that is its read-only argument itself); the caller's
    # array is neither marked nor changed, the answers are z = x and w = x + 1
    plan = plan_of(passed_through(), None)
    x = np.array([1.5, -2.0], np.float32)
    unmarked = unmarked_roots(plan)
    for _ in range(HOT_WALKS + 2):
        machine = EngineMachine(plan, check_feeds(plan, {"x": x}))
        got = {name: machine.demand(nid) for name, nid in plan.outputs}
        np.testing.assert_array_equal(got["z"], [1.5, -2.0])
        np.testing.assert_array_equal(got["w"], [2.5, -1.0])
        for k, memo in machine.root.memo.items():
            if isinstance(memo[0], np.ndarray) and k not in unmarked:
                assert not memo[0].flags.writeable, k
    assert x.flags.writeable and x.tolist() == [1.5, -2.0]
    assert "if v is not a0:" in walk_source(plan, dict(plan.outputs)["z"])  # the path taken
    answer = ll.evaluate(plan, {"x": x})
    answer["z"][0] = 7.0  # an answer is the caller's own copy
    np.testing.assert_array_equal(ll.evaluate(plan, {"x": x})["z"], [1.5, -2.0])


def counted_by(shape):
    """acc = 0.5; acc += 2 for COUNT trips, the COUNT an input `n` of int64 `shape`."""
    net = ll.Network("onnx")
    n = net.add_input("n", ll.int64, shape)
    loop = net.add_loop()
    loop.add_trip_limit(n, ll.TripLimit.COUNT)
    acc = loop.add_recurrence(const(net, 0.5, np.float32))
    acc.set_input(1, net.add_elementwise(acc.get_output(0), const(net, 2.0, np.float32),
                                         SUM).get_output(0))
    i, _ = counter(net, loop)
    out, trips = last(loop, acc.get_output(0)), last(loop, i)
    out.name, trips.name = "acc", "trips"
    net.mark_output(out)
    net.mark_output(trips)
    return net


@pytest.mark.parametrize("shape", [(), (1,)])
@pytest.mark.parametrize("mode", ["fast", "reference"])
def test_a_count_of_any_shape_is_read_by_its_first_element(shape, mode):
    # rule: trip/count -- COUNT n runs n trips: acc = 0.5 + 2 n, the counter n; zero trips
    # leave the initial value; a negative count is read by A4 (the onnx profile: zero trips)
    plan = plan_of(counted_by(shape), None)
    for n in (3, 0, 5, -2):
        got = ll.evaluate(plan, {"n": np.full(shape, n, np.int64)}, mode=mode)
        trips = max(n, 0)
        assert float(got["acc"]) == 0.5 + 2.0 * trips and int(got["trips"]) == trips


def test_a_count_above_the_fuel_is_refused_before_any_trip():
    # rule: trip/count -- a COUNT alone above max_trips is refused at once, naming the loop
    plan = plan_of(counted_by(()), None)
    for _ in range(2):
        with pytest.raises(ll.FuelExhausted) as info:
            ll.evaluate(plan, {"n": np.array(9, np.int64)}, max_trips=4)
        assert info.value.rule == "trip/count" and "max_trips=4" in str(info.value)
    assert float(ll.evaluate(plan, {"n": np.array(4, np.int64)}, max_trips=4)["acc"]) == 8.5


def casts_outside_loops():
    """y = Identity(x); a = Cast(y, float32); b = Cast(y, int64); c = CastLike(y, k) with
    k an int32 input; z = a + 1; w = Where(x < 1, x, a) (three arguments): outputs a, b,
    c, z, w."""
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto as T, helper as h
    nodes = [h.make_node("Identity", ["x"], ["y"]),
             h.make_node("Cast", ["y"], ["a"], to=T.FLOAT),
             h.make_node("Cast", ["y"], ["b"], to=T.INT64),
             h.make_node("CastLike", ["y", "k"], ["c"]),
             h.make_node("Add", ["a", "one"], ["z"]),
             h.make_node("Less", ["x", "one"], ["small"]),
             h.make_node("Where", ["small", "x", "a"], ["w"])]
    graph = h.make_graph(
        nodes, "casts", [h.make_tensor_value_info("x", T.FLOAT, [2]),
                         h.make_tensor_value_info("k", T.INT32, [])],
        [h.make_tensor_value_info(n, t, [2]) for n, t in
         (("a", T.FLOAT), ("b", T.INT64), ("c", T.INT32), ("z", T.FLOAT), ("w", T.FLOAT))],
        [h.make_tensor("one", T.FLOAT, [], [1.0])])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])


def test_a_kernel_that_passes_its_array_is_not_called_by_the_compiled_walk():
    # rule: stream/map, stream/memo -- Identity and a Cast to the dtype x has give x itself,
    # read-only; a Cast to int64 and CastLike to int32 truncate (numpy's astype); z = x + 1;
    # the same every evaluation, the compiled walk's too, and as the reference gives them
    lo = pytest.importorskip("lazyloop.onnx")
    lowered = lo.lower(casts_outside_loops())
    x = np.array([2.75, -1.5], np.float32)
    feeds = {"x": x, "k": np.array(0, np.int32)}
    want = {"a": x, "b": x.astype(np.int64), "c": x.astype(np.int32), "z": x + 1, "w": x}
    for mode in ["reference"] + ["fast"] * (HOT_WALKS + 2):
        got = lo.evaluate(lowered, feeds, mode=mode)
        for name, value in want.items():
            assert got[name].dtype == value.dtype, name
            np.testing.assert_array_equal(got[name], value)
    plan = plan_of(lowered.network, lowered.resolved)
    a = dict(plan.outputs)["a"]
    source = walk_source(plan, a)  # Identity's test, then the Cast's to the dtype x has
    assert "elif a0.__class__ is ND:" in source and "(a0.dtype is d" in source
