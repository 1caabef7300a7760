"""`stream/memo` on the fast path: an element a possibly-writing kernel reads is read-only
there; an element only numpy ufuncs (and kernels that say they only read) read is left
unmarked, which saves the marking and cannot be observed."""
import numpy as np
import pytest

import lazyloop as ll
from lazyloop.core.engine import EngineMachine
from lazyloop.core.evaluate import check_feeds
from lazyloop.core.kernel import Kernel
from lazyloop.core.plan import compile_network
from lazyloop.core.engine.readonly import unmarked_streams
from lazyloop.core.engine.schedule import Demand
from nets import SUM, const, last

F = ll.TensorType(ll.float32, (2,))


def loop_with(kernel, reads_only=False):
    """acc = [0, 0]; per trip acc = kernel(acc + 1) (a function layer); LAST_VALUE(acc)."""
    if reads_only:
        kernel = Kernel(kernel, reads_only=True)
    net = ll.Network("onnx")
    loop = net.add_loop()
    loop.add_trip_limit(const(net, 3, np.int32), ll.TripLimit.COUNT)
    acc = loop.add_recurrence(const(net, np.zeros(2, np.float32)))
    plus = net.add_elementwise(acc.get_output(0), const(net, np.ones(2, np.float32)), SUM)
    out = net.add_function(kernel, [plus.get_output(0)], [F], op="K").get_output(0)
    acc.set_input(1, out)
    net.mark_output(last(loop, acc.get_output(0)))
    return net, plus.get_output(0).name, out.name


def test_an_element_a_writing_kernel_reads_stays_read_only():
    # rule: stream/memo -- a kernel that scribbles on its input is refused on the fast path
    def scribble(v):
        v[...] = 7
        return (v,)
    net, plus, _ = loop_with(scribble)
    plan = compile_network(net)
    assert plus not in unmarked_streams(Demand(plan, next(iter(plan.loops))))
    for evaluate in (ll.evaluate, ll.run):
        with pytest.raises(ll.EvaluationError) as info:
            evaluate(net, {})
        assert info.value.rule == "stream/map"


def test_elements_only_reading_kernels_see_are_left_unmarked():
    # rule: stream/memo -- acc + 1 is read only by a kernel that declares it only reads
    def double(v):
        return (v * 2,)
    net, plus, out = loop_with(double, reads_only=True)
    plan = compile_network(net)
    unmarked = unmarked_streams(Demand(plan, next(iter(plan.loops))))
    assert plus in unmarked
    assert out in unmarked  # read by np.add (a ufunc) through the recurrence
    # by hand: 0 -> (0+1)*2 = 2 -> 6 -> 14
    np.testing.assert_array_equal(ll.evaluate(net, {})[net._outputs[0].name], [14, 14])


def test_what_reaches_a_writer_through_a_recurrence_is_marked():
    # rule: stream/memo, recurrence/def -- the recurrence's elements are its next value's
    # elements: a writing kernel reading the recurrence makes the next value marked
    def scribble(v):
        v[...] = 7
        return (v,)
    net = ll.Network("onnx")
    loop = net.add_loop()
    loop.add_trip_limit(const(net, 3, np.int32), ll.TripLimit.COUNT)
    acc = loop.add_recurrence(const(net, np.zeros(2, np.float32)))
    nxt = net.add_elementwise(acc.get_output(0), const(net, np.ones(2, np.float32)), SUM)
    acc.set_input(1, nxt.get_output(0))
    bad = net.add_function(scribble, [acc.get_output(0)], [F], op="Scribble").get_output(0)
    net.mark_output(last(loop, acc.get_output(0)))
    net.mark_output(concat_of(net, loop, bad))
    plan = compile_network(net)
    demand = Demand(plan, next(iter(plan.loops)))
    assert nxt.get_output(0).name not in unmarked_streams(demand)
    machine = EngineMachine(plan, check_feeds(plan, {}))
    with pytest.raises(ll.EvaluationError):
        machine.demand(plan.outputs[1][1])


def concat_of(net, loop, t):
    out = loop.add_loop_output(t, ll.LoopOutput.CONCATENATE, 0)
    out.set_input(1, const(net, 3, np.int32))
    return out.get_output(0)


def root_chain(kernel, reads_only=False):
    """Outside loops: y = x + 1, z = kernel(y) (a function layer), w = y + z."""
    if reads_only:
        kernel = Kernel(kernel, reads_only=True)
    net = ll.Network("onnx")
    x = net.add_input("x", ll.float32, (2,))
    y = net.add_elementwise(x, const(net, np.ones(2, np.float32)), SUM).get_output(0)
    z = net.add_function(kernel, [y], [F], op="K").get_output(0)
    w = net.add_elementwise(y, z, SUM).get_output(0)
    w.name = "w"
    net.mark_output(w)
    return net, y.name, z.name


def test_outside_loops_an_element_a_writing_kernel_reads_stays_read_only():
    # rule: stream/memo -- y = x + 1 is read by a kernel that scribbles on it: refused by the
    # walk node by node and by the compiled walk alike, evaluation after evaluation
    from lazyloop.core.engine import root

    def scribble(v):
        v[...] = 7
        return (v * 2,)
    net, y, z = root_chain(scribble)
    plan = compile_network(net)
    assert y not in root.unmarked_roots(plan)
    for _ in range(root.HOT_WALKS + 2):
        with pytest.raises(ll.EvaluationError) as info:
            ll.evaluate(plan, {"x": np.zeros(2, np.float32)})
        assert info.value.rule == "stream/map"


def test_outside_loops_elements_only_reading_kernels_see_are_left_unmarked():
    # rule: stream/memo -- y = x + 1 is read by ufuncs and a kernel that says it only reads:
    # left writeable by the compiled walk, and every answer is w = y + 2y = 3 (x + 1)
    from lazyloop.core.engine import root
    from lazyloop.core.engine.machine import EngineMachine as Engine
    net, y, z = root_chain(lambda v: (v * 2,), reads_only=True)
    plan = compile_network(net)
    assert y in root.unmarked_roots(plan) and z in root.unmarked_roots(plan)
    x = np.array([1.0, -3.0], np.float32)
    for _ in range(root.HOT_WALKS + 2):
        np.testing.assert_array_equal(ll.evaluate(plan, {"x": x})["w"], 3 * (x + 1))
    machine = Engine(plan, check_feeds(plan, {"x": x}))
    machine.demand(dict(plan.outputs)["w"])
    assert machine.root.memo[y][0].flags.writeable  # compiled by now: y left unmarked
    assert not machine.root.memo["x"][0].flags.writeable  # a fed array is always read-only
