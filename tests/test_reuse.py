"""Shape computations made once while the shapes stay the same (lazyloop/core/engine/reuse.py):
the compiled trips give a shape-only map's previous element again while its argument keeps
its shape, and a pure map's while it reads the same objects -- with the reference's values,
also when the shape changes (rules: stream/map, stream/memo, laziness/modes)."""
import numpy as np
import pytest

import lazyloop as ll
from lazyloop.core.engine import HOT_TRIPS
from lazyloop.core.kernel import Kernel
from nets import SUM, concat, const, last

TRIPS = 100


def counting(fn, **facts):
    """A kernel record of `fn` (one output) that counts its calls in `.calls`."""
    def call(*args):
        call.calls += 1
        return (fn(*args),)
    call.calls = 0
    return Kernel(call, **facts), call


def shape_chain(shape_facts, plus_facts):
    """s = s + 1 ([3] floats); n = shape(s) (int64[1]); y = n + 1; CONCATENATE of y and
    LAST_VALUE of s, over TRIPS trips; with counting kernels for shape and plus."""
    net = ll.Network("onnx")
    loop = net.add_loop()
    loop.add_trip_limit(const(net, TRIPS, np.int32), ll.TripLimit.COUNT)
    s = loop.add_recurrence(const(net, np.zeros(3, np.float32)))
    nxt = net.add_elementwise(s.get_output(0), const(net, np.float32(1)), SUM).get_output(0)
    s.set_input(1, nxt)
    shape, shapes = counting(lambda v: np.array(v.shape, np.int64), **shape_facts)
    plus, pluses = counting(lambda n: n + 1, **plus_facts)
    n = net.add_function(shape, [s.get_output(0)], [ll.TensorType(ll.int64, (1,))], op="Sh")
    y = net.add_function(plus, [n.get_output(0)], [ll.TensorType(ll.int64, (1,))], op="P")
    net.mark_output(concat(net, loop, y.get_output(0), TRIPS))
    net.mark_output(last(loop, s.get_output(0)))
    return net, shapes, pluses


@pytest.mark.parametrize("mode", ["fast", "compiled", "schedule"])
def test_a_shape_computation_is_made_once_while_the_shape_stays(mode):
    # rule: stream/map, stream/memo -- compiled trips call the shape-only and the pure
    # kernel once; the values are the reference's and by hand (4 for every trip)
    net, shapes, pluses = shape_chain(dict(shape_only=True, pure=True), dict(pure=True))
    want = ll.run(net, {}, mode="reference", trace=False).outputs
    shapes.calls = pluses.calls = 0
    got = ll.evaluate(net, {}, mode=mode)
    for k in want:
        assert got[k].tobytes() == want[k].tobytes()
    ys, s = got.values()
    np.testing.assert_array_equal(ys, np.full((TRIPS, 1), 4))
    np.testing.assert_array_equal(s, np.full(3, TRIPS, np.float32))
    if mode == "schedule":  # step by step: no compiled trips, every element made
        assert shapes.calls == pluses.calls == TRIPS
    else:  # compiled (from trip 0, or once hot): made again only where a run of compiled
        # trips starts (after a fixed-point check or the clock), a handful of times
        limit = 10 if mode == "compiled" else HOT_TRIPS + 10
        assert shapes.calls <= limit and pluses.calls <= limit


def test_a_kernel_not_pure_is_called_every_trip():
    # rule: stream/map -- a kernel that does not say it is pure (a random op, say) is
    # called for every element, compiled or not
    net, shapes, pluses = shape_chain(dict(shape_only=True, pure=True), {})
    ll.evaluate(net, {}, mode="compiled")
    assert shapes.calls <= 10 and pluses.calls == TRIPS


def test_a_growing_buffer_gets_every_new_shape():
    # rule: onnx/loop, stream/map -- an ONNX Loop whose carried buffer grows by one each
    # trip: Shape -> Gather -> Add, computed anew whenever the shape changed; every mode
    # the reference's answer, and 1, 2, ..., TRIPS by hand
    pytest.importorskip("onnx")
    from onnx import helper

    import lazyloop.onnx as lo
    from lazyloop.bench.versus_models import FLOAT, INT64, _array, _info, _model, loop_body
    body = loop_body([
        helper.make_node("Concat", ["b_in", "one_f"], ["b_out"], axis=0),
        helper.make_node("Shape", ["b_out"], ["sh"]),
        helper.make_node("Gather", ["sh", "zero"], ["len"], axis=0),
        helper.make_node("Add", ["len", "zero"], ["n"])],
        [("b", FLOAT, ["k"])], [_info("n", INT64, [])])
    model = _model([helper.make_node("Loop", ["M", "", "b0"], ["b", "ns"], body=body)],
                   [_info("b0", FLOAT, [0]), _info("M", INT64, [])],
                   [_info("b", FLOAT, ["m"]), _info("ns", INT64, ["t"])],
                   [_array("one_f", np.ones(1, np.float32)), _array("zero", np.int64(0))])
    feeds = {"b0": np.zeros(0, np.float32), "M": np.array(TRIPS, np.int64)}
    want = lo.run(model, feeds, mode="reference").outputs
    np.testing.assert_array_equal(want["ns"], np.arange(1, TRIPS + 1))
    for mode in ("fast", "compiled"):
        got = lo.evaluate(model, feeds, mode=mode)
        assert all(got[k].tobytes() == want[k].tobytes() for k in want), mode
