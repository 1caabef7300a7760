"""Errors are part of the interface: typed, naming the layer, the rule and the fix."""
import numpy as np
import pytest

import lazyloop as ll
from nets import concat, const, counter, last


def simple():
    net = ll.Network()
    x = net.add_input("x", ll.float32, (3,))
    loop = net.add_loop()
    loop.add_trip_limit(const(net, 3, np.int32), ll.TripLimit.COUNT)
    net.mark_output(concat(net, loop, loop.add_iterator(x).get_output(0), 3))
    return net


@pytest.mark.parametrize("feeds, words", [
    ({}, "no value was fed"),
    ({"x": np.zeros(3, np.float32), "y": 1}, "not inputs"),
    ({"x": np.zeros(3, np.float64)}, "declared float32"),
    ({"x": np.zeros(4, np.float32)}, "shape [4]"),
    ({"x": "not a number"}, "cannot be read"),
])
def test_bad_feeds(feeds, words):
    # rule: stream/shape -- feeds must match the declared inputs
    with pytest.raises(ll.InputError) as info:
        ll.evaluate(simple(), feeds)
    assert words in str(info.value) and "[stream/shape]" in str(info.value)


def test_lists_are_read_with_the_declared_dtype():
    # rule: stream/shape
    (out,) = ll.evaluate(simple(), {"x": [1, 2, 3]}).values()
    np.testing.assert_array_equal(out, [1, 2, 3])


def test_message_names_layer_rule_and_fix():
    # rule: structure/last-value
    net = ll.Network()
    x = net.add_input("x", ll.float32, (3,))
    loop = net.add_loop()
    loop.add_trip_limit(const(net, 3, np.int32), ll.TripLimit.COUNT)
    out = loop.add_loop_output(loop.add_iterator(x).get_output(0), ll.LoopOutput.LAST_VALUE)
    net.mark_output(out.get_output(0))
    with pytest.raises(ll.StructureError) as info:
        ll.evaluate(net, {"x": np.zeros(3, np.float32)})
    text = str(info.value)
    assert out.name in text and "[structure/last-value]" in text and "--" in text


def test_every_deliberate_error_is_a_lazyloop_error():
    for cls in (ll.StructureError, ll.ShapeError, ll.EvaluationError, ll.IteratorOutOfBounds,
                ll.LengthTooShort, ll.FuelExhausted, ll.NegativeTripCount, ll.InputError,
                ll.ModelError, ll.UnsupportedError, ll.StreamShapeChanged):
        assert issubclass(cls, ll.LazyLoopError)


def test_bad_builder_arguments():
    # rule: stream/shape -- foreign objects and tensors of other networks are refused
    net, other = ll.Network(), ll.Network()
    x = net.add_input("x", ll.float32, (2,))
    y = other.add_input("y", ll.float32, (2,))
    with pytest.raises(ll.StructureError):
        net.add_elementwise(x, y, ll.ElementWiseOperation.SUM)
    with pytest.raises(ll.StructureError):
        net.add_elementwise(x, np.zeros(2), ll.ElementWiseOperation.SUM)
    with pytest.raises(ll.ShapeError):
        net.add_constant((2, 2), np.zeros(3, np.float32))
    with pytest.raises(ll.InputError):
        net.add_input("x", ll.float32, (2,))
    shuffle = net.add_shuffle(x)
    with pytest.raises(ll.ShapeError):
        shuffle.reshape_dims = (3,)
    with pytest.raises(ll.StructureError):
        ll.Network(profile="cuda")
    with pytest.raises(ll.LazyLoopError):
        ll.evaluate(simple(), {"x": np.zeros(3, np.float32)}, readings={"A1": "sideways"})


def test_reverse_iterator_readings():
    # rule: iterator/reverse -- A2: the guide's X[L-1-i] vs the API reference's M-1-i
    net = ll.Network()
    x = net.add_input("x", ll.float32, (4,))
    loop = net.add_loop()
    loop.add_trip_limit(const(net, 2, np.int32), ll.TripLimit.COUNT)
    e = loop.add_iterator(x, 0, reverse=True).get_output(0)
    net.mark_output(concat(net, loop, e, 2))
    xs = np.array([10, 20, 30, 40], np.float32)
    (guide,) = ll.evaluate(net, {"x": xs}).values()
    np.testing.assert_array_equal(guide, [40, 30])       # L = 4: x[3], x[2]
    (api,) = ll.run(net, {"x": xs}, readings={"A2": "api-reference"}).outputs.values()
    np.testing.assert_array_equal(api, [20, 10])         # M = 2: x[1], x[0]


def test_out_of_range_lookups_and_wrong_argument_kinds():
    # rule: stream/shape -- lookups past the end give None (TensorRT's null); feeds and
    # readings that are not mappings are refused as lazyloop errors
    net = simple()
    assert net.get_layer(99) is None and net.get_input(5) is None and net.get_output(5) is None
    with pytest.raises(ll.InputError):
        ll.evaluate(net, [np.zeros(3, np.float32)])
    with pytest.raises(ll.LazyLoopError):
        ll.evaluate(net, {"x": np.zeros(3, np.float32)}, readings=["A1"])
