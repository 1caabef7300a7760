"""Streams: memoised, invariant outside values, sequence-wise layers, iterative forcing."""
import sys
from collections import Counter

import numpy as np
import pytest

import lazyloop as ll
from nets import SUM, concat, const, counted, counter, forced, last


def test_each_element_is_computed_once():
    # rule: stream/memo -- a stream read by two layers is forced once per index
    net = ll.Network()
    x = net.add_input("x", ll.float32, (3,))
    loop = net.add_loop()
    loop.add_trip_limit(const(net, 3, np.int32), ll.TripLimit.COUNT)
    e = loop.add_iterator(x).get_output(0)
    sq = net.add_elementwise(e, e, ll.ElementWiseOperation.PROD).get_output(0)
    twice = net.add_elementwise(sq, sq, SUM).get_output(0)
    both = net.add_elementwise(twice, sq, SUM).get_output(0)
    net.mark_output(concat(net, loop, both, 3))
    result = ll.run(net, {"x": np.array([1, 2, 3], np.float32)})
    np.testing.assert_array_equal(list(result.outputs.values())[0], [3, 12, 27])
    counts = Counter((ev.stream, ev.index) for ev in result.trace)
    assert max(counts.values()) == 1
    assert forced(result, sq.name) == [0, 1, 2]


def test_outside_value_is_the_same_on_every_trip():
    # rule: stream/invariant -- T used inside is <T, T, ...>, computed once
    net = ll.Network()
    t = net.add_elementwise(const(net, 1.5, np.float32), const(net, 1.0, np.float32), SUM).get_output(0)
    loop = net.add_loop()
    loop.add_trip_limit(const(net, 4, np.int32), ll.TripLimit.COUNT)
    i, _ = counter(net, loop)
    f = net.add_cast(i, ll.float32).get_output(0)
    y = net.add_elementwise(f, t, SUM).get_output(0)
    net.mark_output(concat(net, loop, y, 4))
    result = ll.run(net, {})
    np.testing.assert_array_equal(list(result.outputs.values())[0], [2.5, 3.5, 4.5, 5.5])
    assert forced(result, t.name) == [0]


def test_sequence_wise_layer_needs_no_earlier_element():
    # rule: stream/map -- LAST_VALUE of a recurrence fed by a map of an iterator forces only
    # the map's element n-1, not its earlier ones
    net = ll.Network()
    x = net.add_input("x", ll.float32, (5,))
    loop = net.add_loop()
    loop.add_trip_limit(const(net, 5, np.int32), ll.TripLimit.COUNT)
    e = loop.add_iterator(x).get_output(0)
    doubled = net.add_elementwise(e, e, SUM).get_output(0)
    rec = loop.add_recurrence(const(net, 0.0, np.float32))
    rec.set_input(1, doubled)
    net.mark_output(last(loop, rec.get_output(0)))
    xs = np.arange(5, dtype=np.float32)
    for result in (ll.run(net, {"x": xs}),):
        assert list(result.outputs.values())[0] == 8.0
        assert forced(result, doubled.name) == [4]
        assert forced(result, e.name) == [4]
    assert list(ll.evaluate(net, {"x": xs}).values())[0] == 8.0


def test_deep_chains_never_recurse():
    # rule: stream/order -- far deeper than Python's recursion limit, on both evaluators
    depth = 20 * sys.getrecursionlimit()
    net = counted(depth)
    assert list(ll.run(net, {}, trace=1).outputs.values())[0] == depth  # the reference
    assert list(ll.evaluate(net, {}).values())[0] == depth


def test_million_trip_loop_on_the_fast_path():
    # rule: stream/order -- a 10^6-trip loop
    assert list(ll.evaluate(counted(10**6), {}).values())[0] == 10**6


def test_shapes_are_static():
    # rule: stream/shape -- types are known when layers are added, nothing is forced
    net = ll.Network()
    x = net.add_input("x", ll.float32, (4, 2, 3))
    loop = net.add_loop()
    loop.add_trip_limit(const(net, 2, np.int32), ll.TripLimit.COUNT)
    e = loop.add_iterator(x, axis=1).get_output(0)
    assert e.shape == (4, 3) and e.dtype == ll.float32
    out = concat(net, loop, e, 5, axis=2)
    assert out.shape == (4, 3, 5)
    rev = concat(net, loop, e, 2, axis=0, kind=ll.LoopOutput.REVERSE)
    assert rev.shape == (2, 4, 3)


def test_memoised_elements_and_feeds_are_read_only():
    # rule: stream/memo -- a layer cannot corrupt a memoised element
    def scribble(v):
        v[...] = 0  # refused: the element is read-only
        return (v,)
    net = ll.Network("onnx")
    x = net.add_input("x", ll.float32, (2,))
    y = net.add_function(scribble, [x], [ll.TensorType(ll.float32, (2,))], op="Scribble")
    net.mark_output(y.get_output(0))
    feed = np.array([1, 2], np.float32)
    with pytest.raises(ll.EvaluationError) as info:
        ll.evaluate(net, {"x": feed})
    assert info.value.rule == "stream/map"
    np.testing.assert_array_equal(feed, [1, 2])
