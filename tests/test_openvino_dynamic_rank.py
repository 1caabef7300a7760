"""OpenVINO Parameters of dynamic rank feeding Loop-5 and TensorIterator (issue 11, class 3).

rule: structure/shapes -- a value of dynamic rank is a stream of unknown rank whose rank
comes from the fed value; a back edge takes its body Parameter's declared type, so a carried
value declared [?] may grow. Expected values are computed by hand or with numpy.
"""
from __future__ import annotations

import numpy as np
import openvino as ov
import openvino.opset13 as ops
import pytest

import lazyloop.openvino as llov

F = np.float32


def test_a_dynamic_rank_parameter_is_a_stream_of_unknown_rank():
    # rule: openvino/model -- its rank comes from the fed value
    p = ops.parameter(ov.PartialShape.dynamic(), ov.Type.f32, name="P")
    model = ov.Model([ops.relu(p)], [p])
    llov.lower(model)   # lowering needs no feeds
    (out,) = llov.evaluate(model, {"P": np.array([[-1, 2]], F)}).values()
    np.testing.assert_array_equal(out, [[0, 2]])


def doubling_loop(declared):
    """Loop-5, 3 trips: x (declared `declared`) merged with x + x from a dynamic-rank X."""
    x = ops.parameter(declared, ov.Type.f32, name="x")
    nxt = ops.add(x, x)
    body = ov.Model([ops.result(nxt), ops.result(ops.constant(np.array(True)))], [x])
    X = ops.parameter(ov.PartialShape.dynamic(), ov.Type.f32, name="X")
    loop = ops.loop(ops.constant(np.array(3, np.int64)), ops.constant(np.array(True)))
    loop.set_friendly_name("doubling")
    loop.set_function(body)
    loop.set_special_body_ports([-1, 1])
    loop.set_merged_input(x, X.output(0), body.get_results()[0].output(0))
    return ov.Model([loop.get_iter_value(body.get_results()[0].output(0), -1)], [X])


@pytest.mark.parametrize("shape", [(2,), (2, 3), ()])
def test_loop5_carried_value_of_dynamic_rank(shape):
    # rule: openvino/loop5 -- x doubled 3 times: 8 x, whatever the rank
    x = np.arange(int(np.prod(shape)), dtype=F).reshape(shape)
    (out,) = llov.evaluate(doubling_loop(ov.PartialShape.dynamic()), {"X": x}).values()
    np.testing.assert_array_equal(out, 8 * x)


def test_a_carried_value_entering_static_may_grow():
    # rule: openvino/loop5 -- X is [1] but the body Parameter is [?]: the back edge follows
    # the Parameter, so x grows by one element a trip (the CPU plugin gives the same)
    x = ops.parameter([-1], ov.Type.f32, name="x")
    grown = ops.concat([x, ops.constant(np.full(1, 2, F))], 0)
    body = ov.Model([ops.result(grown), ops.result(ops.constant(np.array(True)))], [x])
    X = ops.parameter([1], ov.Type.f32, name="X")
    loop = ops.loop(ops.constant(np.array(3, np.int64)), ops.constant(np.array(True)))
    loop.set_function(body)
    loop.set_special_body_ports([-1, 1])
    loop.set_merged_input(x, X.output(0), body.get_results()[0].output(0))
    model = ov.Model([loop.get_iter_value(body.get_results()[0].output(0), -1)], [X])
    (out,) = llov.evaluate(model, {"X": np.ones(1, F)}).values()
    np.testing.assert_array_equal(out, [1, 2, 2, 2])


def test_tensor_iterator_slicing_an_input_of_dynamic_rank():
    # rule: openvino/slice -- rows of a dynamic-rank X summed into a carried accumulator
    acc = ops.parameter(ov.PartialShape.dynamic(), ov.Type.f32, name="acc")
    row = ops.parameter(ov.PartialShape.dynamic(), ov.Type.f32, name="row")
    total = ops.add(acc, row)
    body = ov.Model([ops.result(total)], [acc, row])
    X = ops.parameter(ov.PartialShape.dynamic(), ov.Type.f32, name="X")
    A = ops.parameter(ov.PartialShape.dynamic(), ov.Type.f32, name="A")
    ti = ops.tensor_iterator()
    ti.set_friendly_name("ti")
    ti.set_body(body)
    ti.set_sliced_input(row, X.output(0), 0, 1, 1, -1, 0)
    ti.set_merged_input(acc, A.output(0), body.get_results()[0].output(0))
    last = ti.get_iter_value(body.get_results()[0].output(0), -1)
    stacked = ti.get_concatenated_slices(body.get_results()[0].output(0), 0, 1, 1, -1, 0)
    model = ov.Model([last, stacked], [X, A])
    x = np.arange(6, dtype=F).reshape(3, 2)
    out = list(llov.evaluate(model, {"X": x, "A": np.zeros((1, 2), F)}).values())
    # each chunk is a [1, 2] row; the accumulator after trip k is the sum of rows 0..k
    np.testing.assert_array_equal(out[0], x.sum(axis=0, keepdims=True))
    np.testing.assert_array_equal(out[1], np.cumsum(x, axis=0))
