"""Nothing that is not needed is forced."""
import numpy as np
import pytest

import lazyloop as ll
from nets import SUM, concat, const, forced, last


def iterator_past_its_end(read_it):
    """A loop of 5 trips over a 3-element tensor; the iterator is read only if `read_it`."""
    net = ll.Network()
    x = net.add_input("x", ll.float32, (3,))
    loop = net.add_loop()
    loop.add_trip_limit(const(net, 5, np.int32), ll.TripLimit.COUNT)
    e = loop.add_iterator(x).get_output(0)
    rec = loop.add_recurrence(const(net, 0.0, np.float32))
    one = const(net, 1.0, np.float32)
    rec.set_input(1, net.add_elementwise(rec.get_output(0), e if read_it else one, SUM).get_output(0))
    net.mark_output(last(loop, rec.get_output(0)))
    return net, e.name


def test_out_of_bounds_iterator_nobody_reads_is_no_error():
    # rule: laziness/dead, iterator/bounds
    net, e = iterator_past_its_end(read_it=False)
    result = ll.run(net, {"x": np.ones(3, np.float32)})
    assert list(result.outputs.values())[0] == 5.0 and forced(result, e) == []
    assert list(ll.evaluate(net, {"x": np.ones(3, np.float32)}).values())[0] == 5.0


def test_out_of_bounds_iterator_fails_when_forced():
    # rule: iterator/bounds -- element 3 of a 3-element axis
    net, _ = iterator_past_its_end(read_it=True)
    for evaluate in (ll.evaluate, ll.run):
        with pytest.raises(ll.IteratorOutOfBounds) as info:
            evaluate(net, {"x": np.ones(3, np.float32)})
        assert info.value.rule == "iterator/bounds" and "index 3" in str(info.value)


def test_loop_without_outputs_does_no_work():
    # rule: laziness/dead -- no output layer: no element of the loop is forced
    net = ll.Network()
    x = net.add_input("x", ll.float32, (2,))
    loop = net.add_loop()
    loop.add_trip_limit(const(net, 9, np.int32), ll.TripLimit.COUNT)
    loop.add_iterator(x)  # would fail from trip 2 on
    y = net.add_elementwise(x, x, SUM).get_output(0)
    net.mark_output(y)
    result = ll.run(net, {"x": np.ones(2, np.float32)})
    assert all(e.loop is None for e in result.trace)
    np.testing.assert_array_equal(result.outputs[y.name], [2, 2])


def test_unread_output_is_not_computed():
    # rule: laziness/dead -- a loop output that is not marked is never forced
    net = ll.Network()
    x = net.add_input("x", ll.float32, (3,))
    loop = net.add_loop()
    loop.add_trip_limit(const(net, 3, np.int32), ll.TripLimit.COUNT)
    e = loop.add_iterator(x).get_output(0)
    concat(net, loop, e, 3)  # not marked
    net.mark_output(x)
    result = ll.run(net, {"x": np.ones(3, np.float32)})
    assert forced(result, e.name) == []


def test_a10_eager_reading_forces_everything():
    # rule: laziness/dead -- A10: an eager runtime would fail where lazy evaluation does not
    net, _ = iterator_past_its_end(read_it=False)
    with pytest.raises(ll.IteratorOutOfBounds):
        ll.run(net, {"x": np.ones(3, np.float32)}, readings={"A10": "eager"})
