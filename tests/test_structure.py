"""Invalid networks: one per structure rule at least, each a LazyLoopError naming the rule."""
import numpy as np
import pytest

import lazyloop as ll
from nets import LESS, SUM, concat, const, counter, last


def raises_rule(rule, build_and_run):
    with pytest.raises(ll.LazyLoopError) as info:
        build_and_run()
    assert info.value.rule == rule, str(info.value)
    return info.value


def basic(profile="tensorrt", trips=2):
    net = ll.Network(profile)
    x = net.add_input("x", ll.float32, (2, 3))
    loop = net.add_loop()
    loop.add_trip_limit(const(net, trips, np.int32), ll.TripLimit.COUNT)
    return net, x, loop


def test_acyclic():
    # rule: structure/acyclic -- a cycle that does not pass through a recurrence's input 1
    def build():
        net, x, loop = basic()
        a = net.add_elementwise(x, x, SUM)
        b = net.add_elementwise(a.get_output(0), x, SUM)
        a.set_input(1, b.get_output(0))
        net.mark_output(b.get_output(0))
        ll.evaluate(net, {"x": np.zeros((2, 3), np.float32)})
    raises_rule("structure/acyclic", build)


def test_exit():
    # rule: structure/exit -- a stream marked as a network output
    def build():
        net, x, loop = basic()
        net.mark_output(loop.add_iterator(x).get_output(0))
        ll.evaluate(net, {"x": np.zeros((2, 3), np.float32)})
    err = raises_rule("structure/exit", build)
    assert "loop output" in str(err)


def test_limits_none():
    # rule: structure/limits
    def build():
        net = ll.Network()
        loop = net.add_loop()
        c, _ = counter(net, loop)
        net.mark_output(last(loop, c))
        ll.evaluate(net, {})
    raises_rule("structure/limits", build)


def test_limits_two_counts():
    # rule: structure/limits
    def build():
        net, x, loop = basic()
        loop.add_trip_limit(const(net, 3, np.int32), ll.TripLimit.COUNT)
        c, _ = counter(net, loop)
        net.mark_output(last(loop, c))
        ll.evaluate(net, {"x": np.zeros((2, 3), np.float32)})
    raises_rule("structure/limits", build)


def test_recurrence_without_next():
    # rule: structure/recurrence
    def build():
        net, x, loop = basic()
        rec = loop.add_recurrence(const(net, 0, np.int32))
        net.mark_output(last(loop, rec.get_output(0)))
        ll.evaluate(net, {"x": np.zeros((2, 3), np.float32)})
    raises_rule("structure/recurrence", build)


def test_recurrence_initial_value_from_inside():
    # rule: structure/recurrence -- the first input must come from outside the loop
    def build():
        net, x, loop = basic()
        row = loop.add_iterator(x).get_output(0)
        rec = loop.add_recurrence(row)
        rec.set_input(1, row)
        net.mark_output(last(loop, rec.get_output(0)))
        ll.evaluate(net, {"x": np.zeros((2, 3), np.float32)})
    raises_rule("structure/recurrence", build)


def test_recurrence_next_must_match():
    # rule: recurrence/def -- X and Y have the same shape and dtype
    net, x, loop = basic()
    rec = loop.add_recurrence(const(net, [0.0, 0.0], np.float32))
    with pytest.raises(ll.ShapeError) as info:
        rec.set_input(1, loop.add_iterator(x).get_output(0))
    assert info.value.rule == "recurrence/def"


def test_while_input_from_an_iterator():
    # rule: structure/while-input
    def build():
        net = ll.Network()
        flags = net.add_input("flags", ll.bool, (4,))
        loop = net.add_loop()
        loop.add_trip_limit(loop.add_iterator(flags).get_output(0), ll.TripLimit.WHILE)
        c, _ = counter(net, loop)
        net.mark_output(last(loop, c))
        ll.evaluate(net, {"flags": np.ones(4, bool)})
    raises_rule("structure/while-input", build)


def test_while_input_fine_in_relaxed_profile():
    # rule: structure/while-input -- a TensorRT restriction only: ONNX-lowered loops may do it
    net = ll.Network("onnx")
    flags = net.add_input("flags", ll.bool, (4,))
    loop = net.add_loop()
    loop.add_trip_limit(loop.add_iterator(flags).get_output(0), ll.TripLimit.WHILE)
    c, _ = counter(net, loop)
    net.mark_output(last(loop, c))
    assert list(ll.evaluate(net, {"flags": np.array([1, 1, 0, 1], bool)}).values())[0] == 2


def test_last_value_of_a_non_recurrence():
    # rule: structure/last-value
    def build():
        net, x, loop = basic()
        net.mark_output(last(loop, loop.add_iterator(x).get_output(0)))
        ll.evaluate(net, {"x": np.zeros((2, 3), np.float32)})
    raises_rule("structure/last-value", build)


def test_length_unset():
    # rule: structure/length
    def build():
        net, x, loop = basic()
        out = loop.add_loop_output(loop.add_iterator(x).get_output(0), ll.LoopOutput.CONCATENATE)
        net.mark_output(out.get_output(0))
        ll.evaluate(net, {"x": np.zeros((2, 3), np.float32)})
    raises_rule("structure/length", build)


def test_length_not_a_build_time_constant():
    # rule: structure/length
    def build():
        net, x, loop = basic()
        n = net.add_input("n", ll.int32, ())
        out = loop.add_loop_output(loop.add_iterator(x).get_output(0), ll.LoopOutput.CONCATENATE)
        out.set_input(1, n)
        net.mark_output(out.get_output(0))
        ll.evaluate(net, {"x": np.zeros((2, 3), np.float32), "n": np.int32(2)})
    raises_rule("structure/length", build)


def test_nesting_unclean():
    # rule: structure/nesting -- loop A outputs a value read from B's interior and B one read
    # from A's: each uses values defined inside the other
    def build():
        net, x, loop_a = basic()
        loop_b = net.add_loop()
        loop_b.add_trip_limit(const(net, 2, np.int32), ll.TripLimit.COUNT)
        a = loop_a.add_iterator(x).get_output(0)
        b = loop_b.add_iterator(x).get_output(0)
        both = net.add_elementwise(a, b, SUM).get_output(0)
        net.mark_output(concat(net, loop_a, both, 2))
        net.mark_output(concat(net, loop_b, both, 2))
        ll.evaluate(net, {"x": np.zeros((2, 3), np.float32)})
    raises_rule("structure/nesting", build)


def test_stream_of_an_enclosing_loop_must_leave_through_its_outputs():
    # rule: structure/exit, structure/nesting -- A's output carries B's stream, so A is nested
    # in B, and marking A's output leaks a stream of B
    def build():
        net, x, loop_a = basic()
        loop_b = net.add_loop()
        loop_b.add_trip_limit(const(net, 2, np.int32), ll.TripLimit.COUNT)
        a = loop_a.add_iterator(x).get_output(0)
        b = loop_b.add_iterator(x).get_output(0)
        net.mark_output(concat(net, loop_a, net.add_elementwise(a, b, SUM).get_output(0), 2))
        ll.evaluate(net, {"x": np.zeros((2, 3), np.float32)})
    raises_rule("structure/exit", build)


def test_shapes_checked_at_runtime_in_relaxed_profiles():
    # rule: structure/shapes -- an element whose shape differs from the stream's
    def grow(v):
        return (np.concatenate([v, v]),)
    def build():
        net = ll.Network("onnx")
        loop = net.add_loop()
        loop.add_trip_limit(const(net, 3, np.int64), ll.TripLimit.COUNT)
        rec = loop.add_recurrence(const(net, [1.0], np.float32))
        nxt = net.add_function(grow, [rec.get_output(0)], [ll.TensorType(ll.float32, (None,))])
        rec.set_input(1, nxt.get_output(0))
        net.mark_output(last(loop, rec.get_output(0)))
        ll.evaluate(net, {})
    raises_rule("structure/shapes", build)


def test_tensorrt_dtypes():
    # rule: profile/tensorrt-dtypes -- float64 inside a TensorRT loop
    def build():
        net = ll.Network()
        loop = net.add_loop()
        loop.add_trip_limit(const(net, 2, np.int32), ll.TripLimit.COUNT)
        rec = loop.add_recurrence(const(net, 0.0, np.float64))
        rec.set_input(1, rec.get_output(0))
        net.mark_output(last(loop, rec.get_output(0)))
        ll.evaluate(net, {})
    raises_rule("profile/tensorrt-dtypes", build)


def test_a6_fp_only_reading_refuses_bool_conditions():
    # rule: profile/tensorrt-dtypes -- A6 read literally rejects the guide's own WHILE example
    net = ll.Network()
    loop = net.add_loop()
    c, _ = counter(net, loop)
    cond = net.add_elementwise(c, const(net, 3, np.int32), LESS).get_output(0)
    loop.add_trip_limit(cond, ll.TripLimit.WHILE)
    net.mark_output(last(loop, c))
    assert list(ll.evaluate(net, {}).values())[0] == 3
    with pytest.raises(ll.StructureError):
        ll.evaluate(net, {}, readings={"A6": "fp-only"})


def test_bad_layers_are_refused_when_added():
    # rule: stream/shape -- mismatched shapes, bad axes
    net = ll.Network()
    a = net.add_input("a", ll.float32, (2, 3))
    b = net.add_input("b", ll.float32, (3, 2))
    with pytest.raises(ll.ShapeError):
        net.add_elementwise(a, b, SUM)
    loop = net.add_loop()
    with pytest.raises(ll.ShapeError) as info:
        loop.add_iterator(a, axis=2)
    assert info.value.rule == "iterator/forward"
    with pytest.raises(ll.ShapeError) as info:
        loop.add_trip_limit(a, ll.TripLimit.COUNT)
    assert info.value.rule == "trip/count"


def test_length_must_be_0d_under_tensorrt():
    # rule: structure/length -- a [1]-shaped length is accepted only in relaxed profiles
    def build():
        net, x, loop = basic()
        out = loop.add_loop_output(loop.add_iterator(x).get_output(0), ll.LoopOutput.CONCATENATE)
        out.set_input(1, const(net, [2], np.int32))
        net.mark_output(out.get_output(0))
        ll.evaluate(net, {"x": np.zeros((2, 3), np.float32)})
    raises_rule("structure/length", build)


def test_concatenation_axis_is_set_after_add():
    # rule: stream/shape -- as in TensorRT, `.axis` follows add_concatenation
    net = ll.Network()
    a = net.add_input("a", ll.float32, (2, 3))
    b = net.add_input("b", ll.float32, (2, 1))
    layer = net.add_concatenation([a, b])
    layer.axis = 1
    assert layer.get_output(0).shape == (2, 4)
    net.mark_output(layer.get_output(0))
    out = ll.evaluate(net, {"a": np.ones((2, 3), np.float32), "b": np.zeros((2, 1), np.float32)})
    np.testing.assert_array_equal(list(out.values())[0], [[1, 1, 1, 0], [1, 1, 1, 0]])
    bad = net.add_concatenation([a, b])  # left on axis 0: refused when its type is needed
    with pytest.raises(ll.ShapeError):
        bad.get_output(0).shape


def test_plans_are_cached_until_the_network_changes():
    net, x, loop = basic()
    c, _ = counter(net, loop)
    net.mark_output(last(loop, c))
    first = ll.compile_network(net)
    assert ll.compile_network(net) is first
    net.get_output(0).name = "renamed"
    second = ll.compile_network(net)
    assert second is not first and second.outputs[0][0] == "renamed"
