"""One evaluation of a lowered model, taken again and again (issue 25, the fixed cost per
call): the usual feeds go straight to the checked feeds (`Lowered.feeds_as_given`), a loop
run again reuses its schedule, an inner loop's schedule is reused across the outer loop's
elements, and stacked outputs are stacked at once. What the short cuts skip must not change
an answer, a mask or an error: each test takes the short path first, then asks again with
other feeds, shapes or mistakes. Expected values are computed here with numpy.
(rules: stream/shape, onnx/graph, structure/nesting, structure/shapes, output/concat,
output/reverse, laziness/modes)"""
import os

import numpy as np
import pytest

import lazyloop as ll
from lazyloop.core import evaluate as core_evaluate, feeds as core_feeds
from nets import SUM, const, counter, counting, last

#: onnxscript's `for i in range(n): acc = acc + x * i`, x float32[?] (tests/corpus)
FOR_SUM = os.path.join(os.path.dirname(__file__), "corpus", "onnxscript", "for_sum.onnx")


def for_sum_answer(x, n):
    acc = np.array(x, np.float32)
    for i in range(n):
        acc = acc + np.asarray(x, np.float32) * np.float32(i)
    return acc


@pytest.fixture
def for_sum():
    lo = pytest.importorskip("lazyloop.onnx")
    return lo, lo.lower(FOR_SUM)


def test_the_usual_feeds_take_the_short_path_with_any_admitted_shape(for_sum, monkeypatch):
    # rule: stream/shape -- arrays of the inputs' dtypes, fed by name: no full check; other
    # lengths of x (its dim is symbolic) answer right once checked, then take it too
    lo, lowered = for_sum
    checks = counting(monkeypatch, core_feeds, "check_feeds")
    monkeypatch.setattr(core_evaluate, "check_feeds", core_feeds.check_feeds)
    for x, n in [([1.5, -2.0], 4), ([1.5, -2.0], 0), ([1.0, 2.0, 3.0], 3), ([7.0], 5),
                 ([1.0, 2.0, 3.0], 2), ([], 3)]:
        x = np.array(x, np.float32)
        (got,) = lo.evaluate(lowered, {"x": x, "n": np.array(n, np.int64)}).values()
        np.testing.assert_allclose(got, for_sum_answer(x, n), rtol=1e-6)
    # the first evaluation of each new length was checked in full (then admitted)
    assert len(checks) == 4


def test_the_callers_arrays_are_read_not_frozen(for_sum):
    # stream/memo -- the evaluation reads the caller's arrays through read-only views: the
    # caller's array stays writeable, and changing it afterwards changes only the next answer
    lo, lowered = for_sum
    x, n = np.array([1.0, 2.0], np.float32), np.array(3, np.int64)
    first = lo.evaluate(lowered, {"x": x, "n": n})["acc_3"]
    assert x.flags.writeable and n.flags.writeable
    x[:] = [10.0, 20.0]
    second = lo.evaluate(lowered, {"x": x, "n": n})["acc_3"]
    np.testing.assert_allclose(first, [4.0, 8.0])  # x * (1 + 0 + 1 + 2)
    np.testing.assert_allclose(second, [40.0, 80.0])


def test_nothing_holds_the_callers_arrays_after_the_call(for_sum):
    # stream/memo -- the views of the caller's arrays live for the call only: after 300
    # evaluations (walks and trips compiled, schedules kept for later runs) no reference to
    # x or n is left with the lowered model, its plan or its kept schedules
    import gc
    import sys
    lo, lowered = for_sum
    x, n = np.array([1.0, 2.0], np.float32), np.array(3, np.int64)
    before = sys.getrefcount(x), sys.getrefcount(n)
    for _ in range(300):
        (got,) = lo.evaluate(lowered, {"x": x, "n": n}).values()
    gc.collect()
    assert (sys.getrefcount(x), sys.getrefcount(n)) == before
    np.testing.assert_allclose(got, [4.0, 8.0])  # x * (1 + 0 + 1 + 2)


def test_feeds_off_the_short_path_err_or_answer_as_the_full_path(for_sum):
    # rule: stream/shape, onnx/graph -- after the short path was taken, a wrong dtype, a
    # missing or unknown input and a wrong rank are refused naming the input and the rule;
    # a list is converted; given readings take the full path: same answers
    lo, lowered = for_sum
    x, n = np.array([1.0, 2.0], np.float32), np.array(2, np.int64)
    np.testing.assert_allclose(lo.evaluate(lowered, {"x": x, "n": n})["acc_3"], [2.0, 4.0])
    with pytest.raises(ll.InputError) as wrong_dtype:
        lo.evaluate(lowered, {"x": x.astype(np.float64), "n": n})
    assert wrong_dtype.value.rule == "stream/shape" and "float64" in str(wrong_dtype.value)
    assert "'x'" in str(wrong_dtype.value)
    with pytest.raises(ll.InputError) as missing:
        lo.evaluate(lowered, {"x": x})
    assert missing.value.rule == "onnx/graph" and "'n'" in str(missing.value)
    with pytest.raises(ll.InputError) as unknown:
        lo.evaluate(lowered, {"x": x, "n": n, "y": x})
    assert unknown.value.rule == "onnx/graph" and "'y'" in str(unknown.value)
    with pytest.raises(ll.InputError) as rank:
        lo.evaluate(lowered, {"x": x.reshape(1, 2), "n": n})
    assert rank.value.rule == "stream/shape" and "[1, 2]" in str(rank.value)
    with pytest.raises(ll.InputError):
        lo.evaluate(lowered, [x, n])
    np.testing.assert_allclose(lo.evaluate(lowered, {"x": [1.0, 2.0], "n": 2})["acc_3"],
                               [2.0, 4.0])
    np.testing.assert_allclose(
        lo.evaluate(lowered, {"x": x, "n": n}, readings={"A4": "error"})["acc_3"], [2.0, 4.0])
    np.testing.assert_allclose(lo.evaluate(lowered, {"x": x, "n": n})["acc_3"], [2.0, 4.0])


def test_a_bad_mode_is_refused_on_the_short_path(for_sum):
    # rule: laziness/modes -- the mode is checked whatever path the feeds take
    lo, lowered = for_sum
    feeds = {"x": np.ones(2, np.float32), "n": np.array(1, np.int64)}
    lo.evaluate(lowered, feeds)
    with pytest.raises(ll.InputError) as info:
        lo.evaluate(lowered, feeds, mode="quick")
    assert info.value.rule == "laziness/modes"
    for mode in ("reference", "schedule", "compiled"):
        np.testing.assert_allclose(lo.evaluate(lowered, feeds, mode=mode)["acc_3"], [1.0, 1.0])


def over_a_vector(name, size):
    """A network with an int32 input `name` of `size` elements and a loop over them: (net,
    the loop, its element of the input, its float32 counter 0, 1, ...)."""
    net = ll.Network("onnx")
    vector = net.add_input(name, ll.int32, (size,))
    loop = net.add_loop()
    loop.add_trip_limit(const(net, size, np.int32), ll.TripLimit.COUNT)
    element = loop.add_iterator(vector).get_output(0)
    k, _ = counter(net, loop, dtype=np.float32)
    return net, loop, element, k


def varying_inner_counts(counts):
    """for k in range(len(counts)): the inner loop runs counts[k] trips and stacks k + j for
    j < counts[k] (a CONCATENATE of its own length each run); the outer loop sums the
    stacked values: s += sum(inner output)."""
    net, outer, c, k = over_a_vector("counts", len(counts))
    inner = net.add_loop()
    inner.add_trip_limit(c, ll.TripLimit.COUNT)
    j, _ = counter(net, inner, dtype=np.float32)
    kj = net.add_elementwise(k, j, SUM).get_output(0)
    stacked = inner.add_loop_output(kj, ll.LoopOutput.CONCATENATE, 0).get_output(0)
    total = net.add_reduce(stacked, ll.ReduceOperation.SUM, 1, False).get_output(0)
    s = outer.add_recurrence(const(net, 0.0, np.float32))
    s.set_input(1, net.add_elementwise(s.get_output(0), total, SUM).get_output(0))
    out = last(outer, s.get_output(0))
    out.name = "s"
    net.mark_output(out)
    return net


def test_an_inner_schedule_reused_across_outer_elements_of_other_trip_counts(monkeypatch):
    # rule: structure/nesting, output/concat -- one schedule of the inner loop serves every
    # outer element, whatever its trip count (0 included); the sums are numpy's, in every
    # mode, over evaluations with other counts
    from lazyloop.core.engine import schedule as sched
    made = counting(monkeypatch, sched.Schedule, "__init__")
    net = varying_inner_counts([3, 0, 1, 4])
    plan = ll.compile_network(net)
    for counts in ([3, 0, 1, 4], [1, 1, 1, 1], [0, 5, 2, 0], [3, 0, 1, 4]):
        want = sum(float(np.sum(k + np.arange(n, dtype=np.float32)))
                   for k, n in enumerate(counts))
        feeds = {"counts": np.array(counts, np.int32)}
        for mode in ("fast", "schedule", "compiled", "reference"):
            got = ll.evaluate(plan, feeds, mode=mode)["s"]
            assert float(got) == want, (counts, mode)
    assert len(made) == 2  # one schedule per loop, kept for every later run


def growing_elements(lengths):
    """One loop of len(lengths) trips stacking zeros(lengths[j]) + j: a stream the
    CONCATENATE output makes of one shape (`structure/shapes`)."""
    net, loop, size, j = over_a_vector("lengths", len(lengths))
    row = net.add_function(lambda n, v: (np.zeros(int(n), np.float32) + v,), [size, j],
                           [ll.TensorType(ll.float32, (None,))], op="Row").get_output(0)
    out = loop.add_loop_output(row, ll.LoopOutput.CONCATENATE, 0).get_output(0)
    out.name = "rows"
    net.mark_output(out)
    return net


def test_a_stacked_element_of_another_shape_is_refused_after_runs_that_were_not():
    # rule: structure/shapes -- runs whose rows share a shape (2, then 3) answer; a run whose
    # first row has a shape seen before and whose second row has another is refused as the
    # reference refuses it, every time
    plan = ll.compile_network(growing_elements([2, 2, 2]))
    for lengths in ([2, 2, 2], [3, 3, 3]):
        got = ll.evaluate(plan, {"lengths": np.array(lengths, np.int32)})["rows"]
        want = np.stack([np.zeros(n, np.float32) + j for j, n in enumerate(lengths)])
        np.testing.assert_array_equal(got, want)
    for mode in ("fast", "schedule", "compiled", "fast", "reference"):
        with pytest.raises(ll.StreamShapeChanged) as info:
            ll.evaluate(plan, {"lengths": np.array([2, 3, 2], np.int32)}, mode=mode)
        assert info.value.rule == "structure/shapes" and "[2] to [3]" in str(info.value)
    got = ll.evaluate(plan, {"lengths": np.array([3, 3, 3], np.int32)})["rows"]
    np.testing.assert_array_equal(got, np.stack([np.zeros(3, np.float32) + j for j in range(3)]))


def stacked_three_ways():
    """x * i for i < 3, x of shape (2,): stacked on axis 0, on axis 1, and reversed."""
    net = ll.Network("onnx")
    x = net.add_input("x", ll.float32, (2,))
    loop = net.add_loop()
    loop.add_trip_limit(const(net, 3, np.int32), ll.TripLimit.COUNT)
    i, _ = counter(net, loop, dtype=np.float32)
    xi = net.add_elementwise(x, i, ll.ElementWiseOperation.PROD).get_output(0)
    for name, kind, axis in (("rows", ll.LoopOutput.CONCATENATE, 0),
                             ("columns", ll.LoopOutput.CONCATENATE, 1),
                             ("reversed", ll.LoopOutput.REVERSE, 0)):
        out = loop.add_loop_output(xi, kind, axis).get_output(0)
        out.name = name
        net.mark_output(out)
    return net


def test_stacked_outputs_are_numpys_stacks():
    # rule: output/concat, output/reverse -- rows [0x, 1x, 2x], their transpose, and the rows
    # reversed; fresh arrays each time, in every mode
    plan = ll.compile_network(stacked_three_ways())
    x = np.array([1.5, -2.0], np.float32)
    rows = np.stack([x * np.float32(i) for i in range(3)])
    for mode in ("fast", "schedule", "compiled", "reference", "fast"):
        got = ll.evaluate(plan, {"x": x}, mode=mode)
        np.testing.assert_array_equal(got["rows"], rows)
        np.testing.assert_array_equal(got["columns"], rows.T)
        np.testing.assert_array_equal(got["reversed"], rows[::-1])
        assert got["columns"].flags.c_contiguous and got["rows"].flags.writeable


def constants_then_input(calls, refuse=False):
    """y = x + (a + b) * b, with a = [1, 2], b = [3, 4] constants: the function of constants
    alone (counting its calls in `calls`; raising when `refuse`) and its product are the same
    in every evaluation."""
    net = ll.Network("onnx")
    x = net.add_input("x", ll.float32, (2,))
    a, b = (const(net, np.array(v, np.float32)) for v in ([1, 2], [3, 4]))

    def plus(u, v):
        calls.append(1)
        if refuse:
            raise ValueError("refused on purpose")
        return (u + v,)
    from lazyloop.core.kernel import Kernel
    s = net.add_function(Kernel(plus, pure=True), [a, b], [ll.TensorType(ll.float32, (2,))],
                         op="Plus")
    p = net.add_elementwise(s.get_output(0), b, ll.ElementWiseOperation.PROD).get_output(0)
    net.mark_output(net.add_elementwise(x, p, SUM).get_output(0))
    return net


def test_a_map_of_constants_alone_is_made_once_per_plan():
    # rule: stream/map, stream/memo -- (a + b) * b reads constants alone: once the walk is
    # compiled, the first evaluation that makes it keeps it with the plan's constants, and
    # later ones start with it; the answers stay x + (a + b) * b, read-only inside
    calls = []
    net = constants_then_input(calls)
    plan = ll.compile_network(net)
    want = lambda x: x + (np.float32([1, 2]) + np.float32([3, 4])) * np.float32([3, 4])  # noqa: E731
    for k in range(30):
        x = np.float32([k, -k])
        got = ll.evaluate(plan, {"x": x})
        assert list(got.values())[0].tolist() == want(x).tolist()
    assert 1 <= len(calls) < 30  # made by the walks before one was compiled, then kept


def test_a_map_of_constants_its_kernel_refuses_is_refused_every_time():
    # rule: stream/map -- nothing is kept of a refusal: every evaluation is refused alike
    calls = []
    plan = ll.compile_network(constants_then_input(calls, refuse=True))
    for k in range(20):
        with pytest.raises(ll.LazyLoopError, match="refused on purpose"):
            ll.evaluate(plan, {"x": np.float32([k, k])})
    assert len(calls) == 20
