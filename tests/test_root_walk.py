"""Values outside loops on the engine: walked in the reference's order without its driver,
node by node, then -- once walked HOT_WALKS times -- by a generated function (rules:
laziness/dead, stream/map, structure/shapes). Both give the reference's values and errors."""
import numpy as np
import pytest
from hypothesis import given

import lazyloop as ll
from lazyloop.core.engine import root
from lazyloop.strategies import networks
from nets import SUM, const
from test_modes import outcome, same_values


@given(networks())
def test_walks_node_by_node_and_compiled_equal_the_reference(program):
    # rule: laziness/dead, stream/map -- every evaluation, the compiled walks from the
    # HOT_WALKS-th on, gives the reference's outputs, masks or error (class and rule)
    plan = ll.compile_network(program.net)
    reference = outcome(lambda: ll.run(plan, program.feeds, mode="reference", trace=False))
    for _ in range(root.HOT_WALKS + 1):
        fast = outcome(lambda: ll.run(plan, program.feeds, trace=False))
        assert fast[0] == reference[0]
        if fast[0] == "answer":
            assert same_values(fast[1], reference[1]) and same_values(fast[2], reference[2])
        else:
            assert fast[1:3] == reference[1:3]


def refusing_kernel():
    """y = x + 1, then a kernel that refuses element 0 unless x is positive, outside loops."""
    net = ll.Network("onnx")
    x = net.add_input("x", ll.float32, (2,))
    y = net.add_elementwise(x, const(net, np.ones(2, np.float32)), SUM).get_output(0)

    def positive(v):
        if (v <= 0).any():
            raise ValueError("not positive")
        return (np.sqrt(v),)
    z = net.add_function(positive, [y], [ll.TensorType(ll.float32, (2,))], op="Positive")
    z.get_output(0).name = "z"
    net.mark_output(z.get_output(0))
    return net


def test_a_refusing_kernel_is_named_by_both_walks():
    # rule: stream/map -- sqrt(x + 1) = [1, 2] for x = [0, 3]; x = [-2, 0] is refused, the
    # error naming the stream and citing stream/map, by the walk node by node and compiled
    plan = ll.compile_network(refusing_kernel())
    for _ in range(root.HOT_WALKS + 2):
        np.testing.assert_array_equal(ll.evaluate(plan, {"x": np.array([0, 3], np.float32)})["z"],
                                      [1, 2])
        with pytest.raises(ll.EvaluationError) as info:
            ll.evaluate(plan, {"x": np.array([-2, 0], np.float32)})
        assert info.value.rule == "stream/map" and "Positive" in str(info.value)
    z = dict(plan.outputs)["z"]
    assert not isinstance(root.root_walks(plan)[z], int)  # compiled by now
    assert "v = F[" in root.walk_source(plan, z)
