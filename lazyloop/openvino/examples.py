"""Small OpenVINO loop models built with `openvino.opset*`, one per input and output kind of
`openvino/loop5` and `openvino/tensor-iterator`. The tests hand-compute their outputs; the
differential tests run them on OpenVINO's CPU plugin; spec/40-openvino-lowering.md names them
as the minimal models of each disagreement.

Every builder returns an `openvino.Model` whose outputs carry tensor names.
"""
from __future__ import annotations

from typing import Optional, Sequence

import numpy as np
import openvino as ov
import openvino.opset15 as ops


def _named(output, name):
    output.get_tensor().set_names({name})
    return output


def _scalar(value, dtype, shape=()):
    return ops.constant(np.array(value, dtype).reshape(shape))


def counter_loop(trip: int = 3, cond: bool = True, limit: Optional[int] = None,
                 feed_limits: bool = False, iteration_type=ov.Type.i64,
                 iteration_shape: Sequence[int] = (1,), trip_dtype=np.int64,
                 limit_shape: Sequence[int] = (), concat_axis: int = 0):
    """Loop-5 with every kind of input and output on a [1,2] float carried value.

    Body (i = current_iteration, x = merged input X with a back edge):
        x_next = x + float(i)                 back edge, output "x_last" by last iteration
        y      = x * 10                       no back edge, output "y_last" by last iteration
        z      = x                            output "zs" concatenated on `concat_axis`
        cond   = i < limit (or constant true) the body's execution_condition
    Trip count and execution condition are constants, or Parameters "T" and "C" when
    `feed_limits` (shaped `limit_shape`: () or (1,)).
    """
    i = ops.parameter(list(iteration_shape), iteration_type, name="i")
    x = ops.parameter([1, 2], ov.Type.f32, name="x")
    x_next = ops.add(x, ops.convert(i, ov.Type.f32))
    y = ops.multiply(x, _scalar(10, np.float32))
    if limit is None:
        keep = _scalar(True, np.bool_)
    else:
        keep = ops.less(ops.convert(i, ov.Type.i64), _scalar(limit, np.int64))
    r_x, r_y, r_c, r_z = ops.result(x_next), ops.result(y), ops.result(keep), ops.result(x)
    body = ov.Model([r_x, r_y, r_c, r_z], [i, x], "body")

    X = ops.parameter([1, 2], ov.Type.f32, name="X")
    params = [X]
    if feed_limits:
        T = ops.parameter(list(limit_shape), ov.Type(trip_dtype), name="T")
        C = ops.parameter(list(limit_shape), ov.Type.boolean, name="C")
        params += [T, C]
    else:
        T, C = _scalar(trip, trip_dtype, limit_shape), _scalar(cond, np.bool_, limit_shape)
    loop = ops.loop(T, C)
    loop.set_friendly_name("counter_loop")
    loop.set_function(body)
    loop.set_special_body_ports([0, 2])
    loop.set_merged_input(x, X.output(0), r_x.output(0))
    outs = [_named(loop.get_iter_value(r_x.output(0), -1), "x_last"),
            _named(loop.get_iter_value(r_y.output(0), -1), "y_last"),
            _named(loop.get_concatenated_slices(r_z.output(0), 0, 1, 1, -1, concat_axis), "zs")]
    return ov.Model(outs, params, "counter_loop")


def scan_loop(z_shape: Sequence[int], axis: int, feed_trip: bool = True, trip: int = 3):
    """Loop-5 with an invariant input X[2] and one concatenated output "zs":
    z_i = reshape(X + i, z_shape) concatenated on `axis`; trip count Parameter "T" (or a
    constant), execution condition constant true, body condition constant true."""
    i = ops.parameter([1], ov.Type.i64, name="i")
    x = ops.parameter([2], ov.Type.f32, name="x")
    z = ops.reshape(ops.add(x, ops.convert(i, ov.Type.f32)),
                    ops.constant(np.array(z_shape, np.int64)), False)
    r_c, r_z = ops.result(_scalar(True, np.bool_)), ops.result(z)
    body = ov.Model([r_c, r_z], [i, x], "body")
    X = ops.parameter([2], ov.Type.f32, name="X")
    params = [X]
    if feed_trip:
        T = ops.parameter([], ov.Type.i64, name="T")
        params.append(T)
    else:
        T = _scalar(trip, np.int64)
    loop = ops.loop(T, _scalar(True, np.bool_))
    loop.set_friendly_name("scan_loop")
    loop.set_function(body)
    loop.set_special_body_ports([0, 0])
    loop.set_invariant_input(x, X.output(0))
    out = _named(loop.get_concatenated_slices(r_z.output(0), 0, 1, 1, -1, axis), "zs")
    return ov.Model([out], params, "scan_loop")


def scalar_loop():
    """Loop-5 on scalars: trip count Parameter "T", X scalar f32, i scalar i64.
    Body: x_next = x + float(i) (back edge). Outputs:
      "xs"     concatenated x_next (scalars stack into [n])
      "i_last" i by last iteration (no back edge: i of the last trip, n - 1)
      "x_seen" x (the merged Parameter itself, no back edge) by last iteration: its value on
               the last trip
      "x_last" x_next by last iteration (back edge)"""
    i = ops.parameter([], ov.Type.i64, name="i")
    x = ops.parameter([], ov.Type.f32, name="x")
    x_next = ops.add(x, ops.convert(i, ov.Type.f32))
    r_x, r_c, r_i, r_p = (ops.result(x_next), ops.result(_scalar(True, np.bool_)),
                          ops.result(i), ops.result(x))
    body = ov.Model([r_x, r_c, r_i, r_p], [i, x], "body")
    X = ops.parameter([], ov.Type.f32, name="X")
    T = ops.parameter([], ov.Type.i64, name="T")
    loop = ops.loop(T, _scalar(True, np.bool_))
    loop.set_friendly_name("scalar_loop")
    loop.set_function(body)
    loop.set_special_body_ports([0, 1])
    loop.set_merged_input(x, X.output(0), r_x.output(0))
    outs = [_named(loop.get_concatenated_slices(r_x.output(0), 0, 1, 1, -1, 0), "xs"),
            _named(loop.get_iter_value(r_i.output(0), -1), "i_last"),
            _named(loop.get_iter_value(r_p.output(0), -1), "x_seen"),
            _named(loop.get_iter_value(r_x.output(0), -1), "x_last")]
    return ov.Model(outs, [X, T], "scalar_loop")


def sliced_loop(rows: int = 4, start: int = 0, stride: int = 1, part: int = 1, end: int = -1,
                trip: Optional[int] = None, with_cat: bool = True):
    """Loop-5 slicing X[rows,1] on axis 0 into chunks S of [part,1]; body s2 = S * 2,
    output "cat" concatenates s2 on axis 0 (left out unless `with_cat`), output "acc" sums
    the chunks (merged A with a back edge, initial value zeros [part,1]). Trip count
    Parameter "T" unless `trip` is given; body condition constant true."""
    s = ops.parameter([part, 1], ov.Type.f32, name="s")
    a = ops.parameter([part, 1], ov.Type.f32, name="a")
    r_c = ops.result(_scalar(True, np.bool_))
    r_y = ops.result(ops.multiply(s, _scalar(2, np.float32)))
    r_a = ops.result(ops.add(a, s))
    body = ov.Model([r_c, r_y, r_a], [s, a], "body")
    X = ops.parameter([rows, 1], ov.Type.f32, name="X")
    params = [X]
    if trip is None:
        T = ops.parameter([], ov.Type.i64, name="T")
        params.append(T)
    else:
        T = _scalar(trip, np.int64)
    loop = ops.loop(T, _scalar(True, np.bool_))
    loop.set_friendly_name("sliced_loop")
    loop.set_function(body)
    loop.set_special_body_ports([-1, 0])
    loop.set_sliced_input(s, X.output(0), start, stride, part, end, 0)
    loop.set_merged_input(a, ops.constant(np.zeros((part, 1), np.float32)).output(0),
                          r_a.output(0))
    outs = [_named(loop.get_iter_value(r_a.output(0), -1), "acc")]
    if with_cat:
        outs.insert(0, _named(loop.get_concatenated_slices(r_y.output(0), 0, 1, 1, -1, 0), "cat"))
    return ov.Model(outs, params, "sliced_loop")


def tensor_iterator(rows: int = 4, start: int = 0, stride: int = 1, part: int = 1,
                    end: int = -1, out_stride: Optional[int] = None, dynamic_rows=False):
    """TensorIterator-1 slicing X[rows,1] on axis 0 into chunks S of [part,1], with a
    carried H (merged, initial value Parameter "H0" [part,1]) and an invariant "B" [1,1]:
        h_next = h + S + B      back edge; output "h_last" by last iteration
        y      = h_next         output "ys" concatenated on axis 0 with stride `out_stride`
    The output rule's start/end are the ones OpenVINO's CPU plugin wants for the stride's
    sign (0..-1 forwards, -1..0 backwards)."""
    s = ops.parameter([part, 1], ov.Type.f32, name="s")
    h = ops.parameter([part, 1], ov.Type.f32, name="h")
    b = ops.parameter([1, 1], ov.Type.f32, name="b")
    h_next = ops.add(ops.add(h, s), b)
    r_h, r_y = ops.result(h_next), ops.result(ops.multiply(h_next, _scalar(1, np.float32)))
    body = ov.Model([r_h, r_y], [s, h, b], "body")
    X = ops.parameter([-1 if dynamic_rows else rows, 1], ov.Type.f32, name="X")
    H0 = ops.parameter([part, 1], ov.Type.f32, name="H0")
    B = ops.parameter([1, 1], ov.Type.f32, name="B")
    ti = ops.tensor_iterator()
    ti.set_friendly_name("tensor_iterator")
    ti.set_body(body)
    ti.set_sliced_input(s, X.output(0), start, stride, part, end, 0)
    ti.set_merged_input(h, H0.output(0), r_h.output(0))
    ti.set_invariant_input(b, B.output(0))
    ostride = stride if out_stride is None else out_stride
    ostart, oend = (0, -1) if ostride > 0 else (-1, 0)
    outs = [_named(ti.get_iter_value(r_h.output(0), -1), "h_last"),
            _named(ti.get_concatenated_slices(r_y.output(0), ostart, ostride, part, oend, 0), "ys")]
    return ov.Model(outs, [X, H0, B], "tensor_iterator")


def nested_loop(inner_extra: int = 1):
    """An outer Loop over the rows of X[3,2] (sliced, chunks [1,2]) whose body holds an inner
    Loop: the inner one runs j + inner_extra trips (j = the outer current_iteration, an i64
    scalar) and sums the row: acc_{k+1} = acc_k + row, acc_0 = zeros [1,2] (a constant of
    the outer body). The outer Loop concatenates the inner "acc" on axis 0 into "rows"
    ([3,2]: row j times (j + inner_extra)) and counts its trips in "trips" (merged c_{j+1} =
    c_j + 1)."""
    # inner body: acc, row
    acc = ops.parameter([1, 2], ov.Type.f32, name="acc")
    row_in = ops.parameter([1, 2], ov.Type.f32, name="row_in")
    r_acc = ops.result(ops.add(acc, row_in))
    r_ic = ops.result(_scalar(True, np.bool_))
    inner_body = ov.Model([r_acc, r_ic], [acc, row_in], "inner_body")
    # outer body: j, row, c
    j = ops.parameter([], ov.Type.i64, name="j")
    row = ops.parameter([1, 2], ov.Type.f32, name="row")
    c = ops.parameter([], ov.Type.i64, name="c")
    inner = ops.loop(ops.add(j, _scalar(inner_extra, np.int64)), _scalar(True, np.bool_))
    inner.set_friendly_name("inner_loop")
    inner.set_function(inner_body)
    inner.set_special_body_ports([-1, 1])
    inner.set_merged_input(acc, ops.constant(np.zeros((1, 2), np.float32)).output(0),
                           r_acc.output(0))
    inner.set_invariant_input(row_in, row.output(0))
    total = inner.get_iter_value(r_acc.output(0), -1)
    r_total = ops.result(total)
    r_c = ops.result(ops.add(c, _scalar(1, np.int64)))
    r_oc = ops.result(_scalar(True, np.bool_))
    outer_body = ov.Model([r_total, r_c, r_oc], [j, row, c], "outer_body")
    X = ops.parameter([3, 2], ov.Type.f32, name="X")
    outer = ops.loop(_scalar(3, np.int64), _scalar(True, np.bool_))
    outer.set_friendly_name("outer_loop")
    outer.set_function(outer_body)
    outer.set_special_body_ports([0, 2])
    outer.set_sliced_input(row, X.output(0), 0, 1, 1, -1, 0)
    outer.set_merged_input(c, _scalar(0, np.int64).output(0), r_c.output(0))
    outs = [_named(outer.get_concatenated_slices(r_total.output(0), 0, 1, 1, -1, 0), "rows"),
            _named(outer.get_iter_value(r_c.output(0), -1), "trips")]
    return ov.Model(outs, [X], "nested_loop")


def while_loop(feed_limits=True):
    """Loop-5 "while": trip count -1, x_{k+1} = x_k * 2 while x_k * 2 < 100 (the body's
    condition looks at the value it just computed). Parameters "X" (f32 scalar), "T", "C"."""
    x = ops.parameter([], ov.Type.f32, name="x")
    doubled = ops.multiply(x, _scalar(2, np.float32))
    r_x = ops.result(doubled)
    r_c = ops.result(ops.less(doubled, _scalar(100, np.float32)))
    body = ov.Model([r_x, r_c], [x], "body")
    X = ops.parameter([], ov.Type.f32, name="X")
    T = ops.parameter([], ov.Type.i64, name="T")
    C = ops.parameter([], ov.Type.boolean, name="C")
    loop = ops.loop(T, C)
    loop.set_friendly_name("while_loop")
    loop.set_function(body)
    loop.set_special_body_ports([-1, 1])
    loop.set_merged_input(x, X.output(0), r_x.output(0))
    outs = [_named(loop.get_iter_value(r_x.output(0), -1), "x_last"),
            _named(loop.get_concatenated_slices(r_x.output(0), 0, 1, 1, -1, 0), "xs")]
    return ov.Model(outs, [X, T, C], "while_loop")




def onnx_loop(path):
    """An ONNX Loop read by OpenVINO's ONNX frontend (needs the `onnx` package): inputs M
    (i64 trip count), C (bool), Y (f32[2]); body y_{i+1} = y_i + i, scan output y_i; outputs
    "y_final" and "scans". The ONNX file is written to `path`."""
    import onnx
    h, TP = onnx.helper, onnx.TensorProto
    body = h.make_graph(
        [h.make_node("Identity", ["cond_in"], ["cond_out"]),
         h.make_node("Cast", ["i"], ["fi"], to=TP.FLOAT),
         h.make_node("Add", ["y_in", "fi"], ["y_out"]),
         h.make_node("Identity", ["y_in"], ["scan"])], "body",
        [h.make_tensor_value_info("i", TP.INT64, []),
         h.make_tensor_value_info("cond_in", TP.BOOL, []),
         h.make_tensor_value_info("y_in", TP.FLOAT, [2])],
        [h.make_tensor_value_info("cond_out", TP.BOOL, []),
         h.make_tensor_value_info("y_out", TP.FLOAT, [2]),
         h.make_tensor_value_info("scan", TP.FLOAT, [2])])
    graph = h.make_graph(
        [h.make_node("Loop", ["M", "C", "Y"], ["y_final", "scans"], body=body)], "g",
        [h.make_tensor_value_info("M", TP.INT64, []), h.make_tensor_value_info("C", TP.BOOL, []),
         h.make_tensor_value_info("Y", TP.FLOAT, [2])],
        [h.make_tensor_value_info("y_final", TP.FLOAT, [2]),
         h.make_tensor_value_info("scans", TP.FLOAT, [None, 2])])
    onnx.save(h.make_model(graph, opset_imports=[h.make_opsetid("", 13)]), str(path))
    return ov.Core().read_model(str(path))


__all__ = ["counter_loop", "scan_loop", "scalar_loop", "sliced_loop", "tensor_iterator",
           "nested_loop", "while_loop", "onnx_loop"]
