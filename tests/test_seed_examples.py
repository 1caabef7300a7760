"""The worked examples of the TensorRT loop guide, with expectations computed by hand."""
import numpy as np
import pytest

import lazyloop as ll
from nets import concat, const, counter, forced, last

MATRIX = np.array([[2, 3, 5], [4, 6, 8]], np.float32)


@pytest.mark.parametrize("axis, expected", [
    (0, [[2, 3, 5], [4, 6, 8]]),   # rows {2,3,5} then {4,6,8}
    (1, [[2, 4], [3, 6], [5, 8]]),  # columns, one per trip
])
def test_iterator_yields_subtensors(axis, expected):
    # rule: iterator/forward
    net = ll.Network()
    x = net.add_input("x", ll.float32, (2, 3))
    loop = net.add_loop()
    trips = MATRIX.shape[axis]
    loop.add_trip_limit(const(net, trips, np.int32), ll.TripLimit.COUNT)
    element = loop.add_iterator(x, axis=axis).get_output(0)
    assert element.shape == (3,) if axis == 0 else (2,)
    net.mark_output(concat(net, loop, element, trips, axis=0))
    (result,) = ll.evaluate(net, {"x": MATRIX}).values()
    np.testing.assert_array_equal(result, np.array(expected, np.float32))


@pytest.mark.parametrize("axis, expected", [
    (0, [[1, 2, 3], [4, 5, 6]]),   # [[a,b,c],[d,e,f]]
    (1, [[1, 4], [2, 5], [3, 6]]),  # [[a,d],[b,e],[c,f]]
])
def test_concatenate_on_new_axis(axis, expected):
    # rule: output/concat -- {a,b,c} on trip 0 and {d,e,f} on trip 1
    net = ll.Network()
    rows = const(net, [[1, 2, 3], [4, 5, 6]], np.float32)
    loop = net.add_loop()
    loop.add_trip_limit(const(net, 2, np.int32), ll.TripLimit.COUNT)
    value = loop.add_iterator(rows, 0).get_output(0)
    out = concat(net, loop, value, 2, axis=axis)
    assert out.shape == np.array(expected).shape  # rule: stream/shape
    net.mark_output(out)
    (result,) = ll.evaluate(net, {}).values()
    np.testing.assert_array_equal(result, np.array(expected, np.float32))


def test_for_loop_recurrence():
    # rule: recurrence/def -- for (i = j; ...; i += k) with j = 5, k = 3, four trips
    net = ll.Network()
    loop = net.add_loop()
    loop.add_trip_limit(const(net, 4, np.int32), ll.TripLimit.COUNT)
    i, _ = counter(net, loop, start=5, step=3)
    net.mark_output(concat(net, loop, i, 4))
    net.mark_output(last(loop, i))
    values, final = ll.evaluate(net, {}).values()
    np.testing.assert_array_equal(values, [5, 8, 11, 14])  # X0..X3
    assert final == 17 and final.shape == ()  # rule: output/last -- X_n = X_4


def onnx_sample_with_loop_layers(profile="tensorrt"):
    """The ONNX Loop sample (a = 3, b = 6, keepgoing = true, max_trip_count = 10) written with
    TensorRT loop layers: b_out = a - b_in, keepgoing_out = (a + b_in) > b_out,
    user_defined_val = b_in + b_in."""
    E = ll.ElementWiseOperation
    net = ll.Network(profile)
    a = const(net, 3, np.int32)
    loop = net.add_loop()
    loop.add_trip_limit(const(net, 10, np.int32), ll.TripLimit.COUNT)
    keepgoing = loop.add_recurrence(const(net, True, np.bool_))
    b = loop.add_recurrence(const(net, 6, np.int32))
    b_in = b.get_output(0)
    my_local = net.add_elementwise(a, b_in, E.SUM).get_output(0)
    b_out = net.add_elementwise(a, b_in, E.SUB).get_output(0)
    keep_out = net.add_elementwise(my_local, b_out, E.GREATER).get_output(0)
    user_val = net.add_elementwise(b_in, b_in, E.SUM).get_output(0)
    b.set_input(1, b_out)
    keepgoing.set_input(1, keep_out)
    loop.add_trip_limit(keepgoing.get_output(0), ll.TripLimit.WHILE)
    net.mark_output(last(loop, b_in))
    net.mark_output(last(loop, keepgoing.get_output(0)))
    out = loop.add_loop_output(user_val, ll.LoopOutput.CONCATENATE, 0)
    if profile == "tensorrt":
        out.set_input(1, const(net, 10, np.int32))
    net.mark_output(out.get_output(0))
    return net, keep_out.name


def test_onnx_sample_as_loop_layers():
    # rule: trip/both -- trip 0: b_in = 6, local = 9, b_out = -3, 9 > -3 keeps going, val = 12
    #                    trip 1: b_in = -3, local = 0, b_out = 6, 0 > 6 stops,       val = -6
    net, keep_name = onnx_sample_with_loop_layers()
    result = ll.run(net, {})
    b_final, keep_final, vals = result.outputs.values()
    assert b_final == 6 and keep_final == np.False_
    np.testing.assert_array_equal(vals[:2], [12, -6])
    assert not result.defined[list(result.outputs)[2]][2:].any()  # padding to 10 is undefined
    assert result.trips["loop0"] == [((), 2)]
    assert forced(result, keep_name) == [0, 1]  # computed on the two trips that ran


def test_onnx_sample_in_relaxed_profile_has_no_padding():
    # rule: output/concat -- relaxed profiles: length unset means n
    net, _ = onnx_sample_with_loop_layers("onnx")
    *_, vals = ll.evaluate(net, {}).values()
    np.testing.assert_array_equal(vals, [12, -6])
