"""Loop outputs: LAST_VALUE, CONCATENATE, REVERSE, padding and undefined values."""
import numpy as np
import pytest

import lazyloop as ll
from nets import concat, const, counter, last

ROWS = np.array([[1, 2], [3, 4], [5, 6]], np.float32)


def rows_loop(trips, length, kind, axis=0, readings=None, dtype=np.float32):
    net = ll.Network()
    x = net.add_input("x", dtype, (3, 2))
    loop = net.add_loop()
    loop.add_trip_limit(const(net, trips, np.int32), ll.TripLimit.COUNT)
    row = loop.add_iterator(x, 0).get_output(0)
    out = concat(net, loop, row, length, axis, kind)
    out.name = "out"
    net.mark_output(out)
    result = ll.run(net, {"x": ROWS.astype(dtype)}, readings=readings)
    return result.outputs["out"], result.defined["out"]


def test_last_value_after_zero_trips_is_the_initial_value():
    # rule: output/last -- X_n with n = 0 is X_0, the recurrence's initial value
    net = ll.Network()
    loop = net.add_loop()
    loop.add_trip_limit(const(net, 0, np.int32), ll.TripLimit.COUNT)
    c, _ = counter(net, loop, start=7)
    net.mark_output(last(loop, c))
    assert list(ll.evaluate(net, {}).values())[0] == 7


def test_concatenate_pads_with_undefined_values():
    # rule: output/concat -- Y = 4 > n = 2: post-padding, undefined (NaN fill, masked)
    value, defined = rows_loop(2, 4, ll.LoopOutput.CONCATENATE)
    np.testing.assert_array_equal(value[:2], [[1, 2], [3, 4]])
    assert np.isnan(value[2:]).all()
    np.testing.assert_array_equal(defined, [[True, True]] * 2 + [[False, False]] * 2)


def test_concatenate_on_last_axis_with_padding():
    # rule: output/concat -- axis 1 of a [2]-element stream: output [2, Y]
    value, defined = rows_loop(2, 3, ll.LoopOutput.CONCATENATE, axis=1)
    assert value.shape == (2, 3)
    np.testing.assert_array_equal(value[:, :2], [[1, 3], [2, 4]])
    np.testing.assert_array_equal(defined, [[True, True, False]] * 2)


def test_integer_padding_fill_is_the_minimum():
    # rule: output/concat -- the fill for signed integers is their minimum
    value, defined = rows_loop(1, 2, ll.LoopOutput.CONCATENATE, dtype=np.int32)
    assert (value[1] == np.iinfo(np.int32).min).all() and not defined[1].any()


def test_reverse_without_padding():
    # rule: output/reverse
    value, _ = rows_loop(3, 3, ll.LoopOutput.REVERSE)
    np.testing.assert_array_equal(value, [[5, 6], [3, 4], [1, 2]])


@pytest.mark.parametrize("reading, expected_defined", [
    ("padding-after", [True, True, False, False]),
    ("reverse-all", [False, False, True, True]),
])
def test_reverse_with_padding_follows_a1(reading, expected_defined):
    # rule: output/reverse -- A1: where REVERSE puts the padding when Y > n
    value, defined = rows_loop(2, 4, ll.LoopOutput.REVERSE, readings={"A1": reading})
    np.testing.assert_array_equal(defined.all(axis=1), expected_defined)
    np.testing.assert_array_equal(value[defined.all(axis=1)], [[3, 4], [1, 2]])


def test_length_below_trips_is_a_runtime_error():
    # rule: output/concat -- Y < n
    with pytest.raises(ll.LengthTooShort) as info:
        rows_loop(3, 2, ll.LoopOutput.CONCATENATE)
    assert info.value.rule == "output/concat"


def test_zero_trip_concatenation_keeps_its_element_shape():
    # rule: stream/shape -- shape known without forcing: [Y, 2] with Y = 2, all undefined
    value, defined = rows_loop(0, 2, ll.LoopOutput.CONCATENATE)
    assert value.shape == (2, 2) and not defined.any()


def test_relaxed_last_value_of_a_non_recurrence_is_the_last_trip():
    # rule: output/last -- relaxed profiles: LAST_VALUE(Y) means Y_{n-1}, undefined after 0 trips
    for trips, expected in ((3, [5, 6]), (0, None)):
        net = ll.Network("openvino")
        x = net.add_input("x", ll.float32, (3, 2))
        loop = net.add_loop()
        loop.add_trip_limit(const(net, trips, np.int32), ll.TripLimit.COUNT)
        row = loop.add_iterator(x, 0).get_output(0)
        out = last(loop, row)
        net.mark_output(out)
        result = ll.run(net, {"x": ROWS})
        if expected is None:
            assert not result.defined[out.name].any() and np.isnan(result.outputs[out.name]).all()
            with pytest.raises(ll.EvaluationError):  # A3 reading "error"
                ll.run(net, {"x": ROWS}, readings={"A3": "error"})
        else:
            np.testing.assert_array_equal(result.outputs[out.name], expected)


def test_wholly_undefined_results_hold_the_fill():
    # rule: output/concat -- a reduce over padding is undefined, and holds the fill, not a sum
    net = ll.Network()
    x = net.add_input("x", ll.int32, (3, 2))
    loop = net.add_loop()
    loop.add_trip_limit(const(net, 2, np.int32), ll.TripLimit.COUNT)
    padded = concat(net, loop, loop.add_iterator(x, 0).get_output(0), 3)   # [3, 2], row 2 padding
    plus = net.add_elementwise(padded, const(net, np.ones((3, 2), np.int32)), ll.ElementWiseOperation.SUM)
    total = net.add_reduce(padded, ll.ReduceOperation.SUM, 1 << 0, False)   # sums rows: wholly undefined
    net.mark_output(plus.get_output(0))
    net.mark_output(total.get_output(0))
    result = ll.run(net, {"x": np.arange(6, dtype=np.int32).reshape(3, 2)})
    low = np.iinfo(np.int32).min
    np.testing.assert_array_equal(result.outputs[plus.get_output(0).name], [[1, 2], [3, 4], [low, low]])
    np.testing.assert_array_equal(result.outputs[total.get_output(0).name], [low, low])
    assert not result.defined[total.get_output(0).name].any()
