"""Trip limits decide n, and how far the WHILE input is forced."""
import numpy as np
import pytest

import lazyloop as ll
from nets import LESS, concat, const, counter, forced, last


def while_loop(bound, count=None, profile="tensorrt"):
    """c = 0; while (c < bound) c += 1 -- optionally also COUNT(count)."""
    net = ll.Network(profile)
    loop = net.add_loop()
    c, _ = counter(net, loop)
    cond = net.add_elementwise(c, const(net, bound, np.int32), LESS).get_output(0)
    loop.add_trip_limit(cond, ll.TripLimit.WHILE)
    if count is not None:
        loop.add_trip_limit(const(net, count, np.int32), ll.TripLimit.COUNT)
    net.mark_output(last(loop, c))
    return net, cond.name


def test_count_sets_n():
    # rule: trip/count
    net = ll.Network()
    loop = net.add_loop()
    loop.add_trip_limit(const(net, 3, np.int32), ll.TripLimit.COUNT)
    i, _ = counter(net, loop)
    net.mark_output(concat(net, loop, i, 3))
    (values,) = ll.evaluate(net, {}).values()
    np.testing.assert_array_equal(values, [0, 1, 2])


def test_while_forces_through_x_n_and_no_further():
    # rule: trip/while -- c < 3 holds for c = 0, 1, 2 and fails at c = 3: n = 3, X_0..X_3 forced
    net, cond = while_loop(3)
    result = ll.run(net, {})
    assert list(result.outputs.values())[0] == 3
    assert result.trips["loop0"] == [((), 3)]
    assert forced(result, cond) == [0, 1, 2, 3]


def test_while_false_at_once_runs_zero_trips():
    # rule: trip/while -- X_0 is false: n = 0 and LAST_VALUE is the initial value
    net, cond = while_loop(0)
    result = ll.run(net, {})
    assert list(result.outputs.values())[0] == 0
    assert forced(result, cond) == [0]


def test_both_limits_count_first_never_forces_x_count():
    # rule: trip/both -- COUNT 2 stops before the WHILE input's element 2 is forced
    net, cond = while_loop(10, count=2)
    result = ll.run(net, {})
    assert list(result.outputs.values())[0] == 2
    assert forced(result, cond) == [0, 1]


def test_both_limits_while_first():
    # rule: trip/both
    net, cond = while_loop(3, count=10)
    result = ll.run(net, {})
    assert list(result.outputs.values())[0] == 3
    assert forced(result, cond) == [0, 1, 2, 3]


def test_a40_condition_first_also_forces_x_count():
    # rule: trip/both -- A40: both readings give n = min(2, 10) = 2; "condition-first" also
    # forces the WHILE input's element 2 (c_2 = 2 < 10: true), then stops at the count
    net, cond = while_loop(10, count=2)
    result = ll.run(net, {}, readings={"A40": "condition-first"})
    assert list(result.outputs.values())[0] == 2 and result.trips["loop0"] == [((), 2)]
    assert forced(result, cond) == [0, 1, 2]
    assert ll.evaluate(net, {}, readings={"A40": "condition-first"}) == \
        ll.evaluate(net, {})
    # the WHILE stops first: both readings force X_0 .. X_3 (c_3 = 3 < 3 is false), n = 3
    net, cond = while_loop(3, count=10)
    assert forced(ll.run(net, {}, readings={"A40": "condition-first"}), cond) == [0, 1, 2, 3]


def test_a40_condition_first_reaches_past_the_count():
    # rule: iterator/bounds -- A40: a relaxed-profile WHILE input that reads an iterator over
    # 3 rows, with COUNT 3: "count-first" stops at j = 3 without reading row 3 (sum 1+2+3 = 6);
    # "condition-first" reads the condition at j = 3, which asks for row 3 of 3
    net = ll.Network("onnx")
    x = net.add_input("x", ll.float32, (3,))
    loop = net.add_loop()
    v = loop.add_iterator(x).get_output(0)
    positive = net.add_elementwise(v, const(net, 0.0, np.float32),
                                   ll.ElementWiseOperation.GREATER).get_output(0)
    loop.add_trip_limit(positive, ll.TripLimit.WHILE)
    loop.add_trip_limit(const(net, 3, np.int32), ll.TripLimit.COUNT)
    acc = loop.add_recurrence(const(net, 0.0, np.float32))
    acc.set_input(1, net.add_elementwise(acc.get_output(0), v,
                                         ll.ElementWiseOperation.SUM).get_output(0))
    net.mark_output(last(loop, acc.get_output(0)))
    feeds = {"x": np.array([1, 2, 3], np.float32)}
    (total,) = ll.evaluate(net, feeds).values()
    assert total == 6.0
    with pytest.raises(ll.IteratorOutOfBounds):
        ll.run(net, feeds, readings={"A40": "condition-first"})
    with pytest.raises(ll.IteratorOutOfBounds):
        ll.evaluate(net, feeds, readings={"A40": "condition-first"})


def counted(count, profile, with_while=None):
    net = ll.Network(profile)
    loop = net.add_loop()
    loop.add_trip_limit(const(net, count, np.int32), ll.TripLimit.COUNT)
    c, _ = counter(net, loop)
    if with_while is not None:
        cond = net.add_elementwise(c, const(net, with_while, np.int32), LESS).get_output(0)
        loop.add_trip_limit(cond, ll.TripLimit.WHILE)
    net.mark_output(last(loop, c))
    return net


def test_negative_count_by_profile():
    # rule: trip/count -- A4: TensorRT refuses, ONNX runs zero trips, OpenVINO has no count limit
    with pytest.raises(ll.NegativeTripCount) as info:
        ll.evaluate(counted(-1, "tensorrt"), {})
    assert info.value.rule == "trip/count"
    assert list(ll.evaluate(counted(-1, "onnx"), {}).values())[0] == 0
    assert list(ll.evaluate(counted(-1, "openvino", with_while=4), {}).values())[0] == 4


def test_negative_count_reading_switch():
    # rule: trip/count -- A4 readings select one behaviour for every profile
    net = counted(-5, "tensorrt")
    assert list(ll.evaluate(net, {}, readings={"A4": "zero-trips"}).values())[0] == 0
    with pytest.raises(ll.NegativeTripCount):
        ll.evaluate(counted(-5, "onnx"), {}, readings={"A4": "error"})


def test_fuel_ends_an_endless_loop():
    # rule: trip/while -- a WHILE input that never turns false runs into max_trips
    net, _ = while_loop(10**9)
    for evaluate in (ll.evaluate, ll.run):
        with pytest.raises(ll.FuelExhausted) as info:
            evaluate(net, {}, max_trips=50)
        assert "max_trips=50" in str(info.value)


def test_relaxed_loop_without_limit_is_stopped_by_fuel():
    # rule: structure/limits -- relaxed profiles allow no limit; only fuel stops the loop
    net = ll.Network("onnx")
    loop = net.add_loop()
    c, _ = counter(net, loop)
    net.mark_output(last(loop, c))
    with pytest.raises(ll.FuelExhausted):
        ll.evaluate(net, {}, max_trips=20)


def test_count_is_read_once_and_before_the_loop():
    # rule: trip/count -- the count comes from outside the loop: an int64 0-D tensor works too
    net = ll.Network()
    loop = net.add_loop()
    loop.add_trip_limit(const(net, 4, np.int64), ll.TripLimit.COUNT)
    c, _ = counter(net, loop, dtype=np.int64)
    net.mark_output(last(loop, c))
    assert list(ll.evaluate(net, {}).values())[0] == 4


def test_a5_refuse_applies_on_both_evaluators():
    # rule: openvino/loop5 -- A5 "refuse": a zero-trip OpenVINO-profile loop is an error
    net = counted(0, "openvino")
    assert list(ll.evaluate(net, {}).values())[0] == 0
    for evaluate in (ll.evaluate, ll.run):
        with pytest.raises(ll.EvaluationError) as info:
            evaluate(net, {}, readings={"A5": "refuse"})
        assert info.value.rule == "openvino/loop5"
