"""OpenVINO Loop-5 and TensorIterator-1 lowered onto lazyloop's core.

Every expectation is computed by hand from the model's description in
lazyloop/openvino/examples.py (never produced by lazyloop itself).
rules: openvino/model, openvino/node, openvino/loop5, openvino/tensor-iterator,
openvino/slice, openvino/concat
"""
import numpy as np
import pytest

ov = pytest.importorskip("openvino")

import lazyloop as ll  # noqa: E402
import lazyloop.openvino as llov  # noqa: E402
from lazyloop.openvino import examples as ex  # noqa: E402

X0 = np.array([[1, 2]], np.float32)
F = np.float32

# counter_loop, hand-run: x_{i+1} = x_i + i, y_i = 10 x_i, z_i = x_i, starting at x_0 = [1,2]:
#   trip 0: x=[1,2] -> [1,2];  trip 1: x=[1,2] -> [2,3];  trip 2: x=[2,3] -> [4,5]
THREE_TRIPS = {"x_last": [[4, 5]], "y_last": [[20, 30]], "zs": [[1, 2], [1, 2], [2, 3]]}


def check(got, want, order=None):
    assert list(got) == list(order or want)
    for name, value in want.items():
        value = np.asarray(value)
        assert got[name].shape == value.shape, (name, got[name].shape, value.shape)
        np.testing.assert_array_equal(got[name], value.astype(got[name].dtype), err_msg=name)


# -- trip count and execution condition (rule: openvino/loop5) -------------------------------

def test_counted_loop():
    # rule: openvino/loop5 -- trip count 3, condition constant true
    check(llov.evaluate(ex.counter_loop(trip=3), {"X": X0}), THREE_TRIPS)


def test_outputs_in_model_output_order_keyed_by_tensor_name():
    # rule: openvino/model
    got = llov.evaluate(ex.counter_loop(trip=3), {"X": X0})
    assert list(got) == ["x_last", "y_last", "zs"]
    assert got["x_last"].dtype == np.float32


def test_while_with_minus_one():
    # rule: openvino/loop5 -- -1 = no count limit; the body's condition i < 2 is false on
    # trip 2, which still runs (its values are the last ones): 3 trips
    check(llov.evaluate(ex.counter_loop(trip=-1, limit=2), {"X": X0}), THREE_TRIPS)


def test_any_negative_trip_count_means_no_limit():
    # rule: openvino/loop5 -- A4 by profile: openvino reads a negative count as no limit
    m = ex.counter_loop(limit=2, feed_limits=True)
    check(llov.evaluate(m, {"X": X0, "T": np.array(-7), "C": np.array(True)}), THREE_TRIPS)


def test_both_limits_condition_stops_first():
    # rule: openvino/loop5 -- for with condition: count 5, condition stops after trip 2
    check(llov.evaluate(ex.counter_loop(trip=5, limit=2), {"X": X0}), THREE_TRIPS)


def test_both_limits_count_stops_first():
    # rule: openvino/loop5 -- count 2 < the condition's 3 trips
    want = {"x_last": [[2, 3]], "y_last": [[10, 20]], "zs": [[1, 2], [1, 2]]}
    check(llov.evaluate(ex.counter_loop(trip=2, limit=5), {"X": X0}), want)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
@pytest.mark.parametrize("shape", [(), (1,)])
def test_trip_count_and_condition_scalar_or_one_element(dtype, shape):
    # rule: openvino/loop5 -- int32 or int64; scalar or 1-element, fed at run time
    m = ex.counter_loop(feed_limits=True, trip_dtype=dtype, limit_shape=shape)
    feeds = {"X": X0, "T": np.full(shape, 3, dtype), "C": np.full(shape, True)}
    check(llov.evaluate(m, feeds), THREE_TRIPS)


@pytest.mark.parametrize("feeds", [{"T": 0, "C": True}, {"T": 3, "C": False}],
                         ids=["zero-count", "false-first-condition"])
def test_zero_trips(feeds):
    # rule: openvino/loop5 -- zero trips run (A5 "execute"): the back-edged output is the
    # initial value, the concatenation is empty with the body's rank, and the output by last
    # iteration of a result without back edge is undefined (A3)
    m = ex.counter_loop(feed_limits=True)
    r = llov.run(m, {"X": X0, "T": np.array(feeds["T"]), "C": np.array(feeds["C"])})
    np.testing.assert_array_equal(r.outputs["x_last"], X0)
    assert r.outputs["zs"].shape == (0, 2) and r.outputs["zs"].dtype == np.float32
    assert r.outputs["y_last"].shape == (1, 2)
    assert not r.defined["y_last"].any()          # A3: undefined, not invented
    assert r.defined["x_last"].all() and r.defined["zs"].all()
    assert np.isnan(r.outputs["y_last"]).all()     # the documented fill for floats


def test_constant_false_condition_executes_by_default():
    # rule: openvino/loop5 -- A22 default "execution": the values zero trips produce
    r = llov.run(ex.counter_loop(trip=3, cond=False), {"X": X0})
    np.testing.assert_array_equal(r.outputs["x_last"], X0)
    assert r.outputs["zs"].shape == (0, 2)
    assert not r.defined["y_last"].any()


def test_constant_false_condition_inferred_shapes_reading():
    # rule: openvino/loop5 -- A22 "inference": the shapes OpenVINO's shape inference declares
    got = llov.evaluate(ex.counter_loop(trip=3, cond=False), {"X": X0},
                        readings={"A22": "inference"})
    assert [got[k].shape for k in ("x_last", "y_last", "zs")] == [(0, 2), (0, 2), (0,)]


def test_zero_trips_refused_under_reference_reading():
    # rule: openvino/loop5 -- A5 "refuse", as OpenVINO's reference implementation does
    m = ex.counter_loop(feed_limits=True)
    with pytest.raises(ll.EvaluationError) as err:
        llov.evaluate(m, {"X": X0, "T": np.array(0), "C": np.array(True)},
                      readings={"A5": "refuse"})
    assert err.value.rule == "openvino/loop5"


def test_undefined_last_value_refused_under_error_reading():
    # rule: openvino/loop5 -- A3 "error": reading y_last after zero trips
    m = ex.counter_loop(feed_limits=True)
    with pytest.raises(ll.EvaluationError) as err:
        llov.evaluate(m, {"X": X0, "T": np.array(3), "C": np.array(False)},
                      readings={"A3": "error"})
    assert err.value.rule == "openvino/loop5"


def test_while_loop_do_while_semantics():
    # rule: openvino/loop5 -- x doubles from 3 while 2x < 100: the trip that computes 192
    # (condition false) is the last one run
    m = ex.while_loop()
    got = llov.evaluate(m, {"X": np.array(3, F), "T": np.array(-1), "C": np.array(True)})
    check(got, {"x_last": 192, "xs": [6, 12, 24, 48, 96, 192]})
    got = llov.evaluate(m, {"X": np.array(3, F), "T": np.array(3), "C": np.array(True)})
    check(got, {"x_last": 24, "xs": [6, 12, 24]})
    got = llov.evaluate(m, {"X": np.array(3, F), "T": np.array(-1), "C": np.array(False)})
    check(got, {"x_last": 3, "xs": np.zeros(0)})


def test_infinite_loop_is_ended_by_fuel():
    # rule: openvino/loop5 -- (-1, true) with a body condition that is always true
    m = ex.counter_loop(feed_limits=True)
    with pytest.raises(ll.FuelExhausted):
        llov.evaluate(m, {"X": X0, "T": np.array(-1), "C": np.array(True)}, max_trips=50)


def test_mode_table_infinite_reading():
    # rule: openvino/loop5 -- A21 "infinite": with (-1, true) the body's condition is ignored
    m = ex.counter_loop(limit=2, feed_limits=True)
    with pytest.raises(ll.FuelExhausted):
        llov.evaluate(m, {"X": X0, "T": np.array(-1), "C": np.array(True)}, max_trips=40,
                      readings={"A21": "infinite"})
    # only the (-1, true) row is read as infinite: with a count of 5 the body's condition
    # (i < 2) still ends the loop after trip 2
    got = llov.evaluate(m, {"X": X0, "T": np.array(5), "C": np.array(True)},
                        readings={"A21": "infinite"})
    np.testing.assert_array_equal(got["x_last"], [[4, 5]])


# -- current_iteration (rule: openvino/loop5) -------------------------------------------------

@pytest.mark.parametrize("itype,ishape", [(ov.Type.i64, (1,)), (ov.Type.i64, ()),
                                           (ov.Type.i32, ()), (ov.Type.i32, (1,))])
def test_current_iteration_declared_dtype_and_shape(itype, ishape):
    # rule: openvino/loop5 -- current_iteration = 0, 1, 2 in the Parameter's dtype and shape
    m = ex.counter_loop(trip=3, iteration_type=itype, iteration_shape=ishape)
    check(llov.evaluate(m, {"X": X0}), THREE_TRIPS)


def test_scalar_loop_outputs_by_last_iteration():
    # rule: openvino/loop5 -- X=10, 4 trips, x_{i+1} = x_i + i: 10, 10, 11, 13 -> 16
    got = llov.evaluate(ex.scalar_loop(), {"X": np.array(10, F), "T": np.array(4)})
    check(got, {"xs": [10, 11, 13, 16],   # scalars concatenate into [n]
                "i_last": 3,              # i on the last trip (not the next value 4)
                "x_seen": 13,             # the merged Parameter's value on the last trip
                "x_last": 16})            # back edge: the recurrence's final value
    assert got["i_last"].dtype == np.int64 and got["i_last"].shape == ()


def test_scalar_loop_zero_trips():
    # rule: openvino/loop5 -- A3: last values of results without back edge are undefined
    r = llov.run(ex.scalar_loop(), {"X": np.array(10, F), "T": np.array(0)})
    assert r.outputs["xs"].shape == (0,)
    assert r.outputs["x_last"] == 10 and r.defined["x_last"].all()
    assert not r.defined["i_last"].any() and not r.defined["x_seen"].any()


# -- concatenated outputs (rule: openvino/concat) ---------------------------------------------

def test_concat_axis0_of_later_body_axis():
    # rule: openvino/concat -- [1,2] results on axis 1 give [1, 2n]
    got = llov.evaluate(ex.counter_loop(trip=3, concat_axis=1), {"X": X0})
    np.testing.assert_array_equal(got["zs"], [[1, 2, 1, 2, 2, 3]])


@pytest.mark.parametrize("z_shape,axis,want", [
    ([1, 2], 0, [[10, 20], [11, 21], [12, 22]]),
    ([1, 2], -2, [[10, 20], [11, 21], [12, 22]]),
    ([2, 1], 1, [[10, 11, 12], [20, 21, 22]]),
    ([2, 1], -1, [[10, 11, 12], [20, 21, 22]]),
    ([2, 1, 1], 1, [[[10], [11], [12]], [[20], [21], [22]]]),
    ([2, 1, 1], -2, [[[10], [11], [12]], [[20], [21], [22]]]),
])
def test_concat_on_existing_axis(z_shape, axis, want):
    # rule: openvino/concat -- z_i = X + i reshaped; concatenated along an existing axis,
    # negative axes counting from the end
    got = llov.evaluate(ex.scan_loop(z_shape, axis), {"X": np.array([10, 20], F),
                                                       "T": np.array(3)})
    np.testing.assert_array_equal(got["zs"], want)


def test_concat_zero_trips_later_axis():
    # rule: openvino/concat -- an empty concatenation keeps the body's other dimensions
    got = llov.evaluate(ex.scan_loop([2, 1], -1), {"X": np.array([10, 20], F),
                                                    "T": np.array(0)})
    assert got["zs"].shape == (2, 0)


# -- sliced and invariant inputs (rule: openvino/slice) ---------------------------------------

ROWS = np.arange(4, dtype=F).reshape(4, 1)  # [[0],[1],[2],[3]]


@pytest.mark.parametrize("kw,trips,cat,acc", [
    (dict(), 4, [0, 2, 4, 6], [6]),
    (dict(), 2, [0, 2], [1]),
    (dict(start=-1, stride=-1, end=0), 4, [6, 4, 2, 0], [6]),
    (dict(start=1), 3, [2, 4, 6], [6]),
    (dict(start=1, end=2), 2, [2, 4], [3]),            # A20 inclusive: chunks 1 and 2
    (dict(start=-2, stride=-1, end=0), 3, [4, 2, 0], [3]),
    (dict(stride=2, part=2), 2, [0, 2, 4, 6], [2, 4]),  # chunks [0,1], [2,3]
    (dict(stride=2, part=1), 2, [0, 4], [2]),           # A23 windows: chunks 0, 2
    (dict(stride=1, part=2), 3, [0, 2, 2, 4, 4, 6], [3, 6]),  # overlapping [0,1],[1,2],[2,3]
])
def test_sliced_input_chunks_keep_rank(kw, trips, cat, acc):
    # rule: openvino/slice -- chunks of part_size that keep the rank; start, stride, end
    # honoured; cat concatenates 2*chunk, acc sums the chunks
    got = llov.evaluate(ex.sliced_loop(**kw), {"X": ROWS, "T": np.array(trips)})
    np.testing.assert_array_equal(got["cat"], np.array(cat, F).reshape(-1, 1))
    np.testing.assert_array_equal(got["acc"], np.array(acc, F).reshape(-1, 1))


def test_sliced_input_exclusive_end_reading():
    # rule: openvino/slice -- A20 "exclusive": start=1, end=2 is the one chunk [1]
    m = ex.sliced_loop(start=1, end=2)
    got = llov.evaluate(m, {"X": ROWS, "T": np.array(1)}, readings={"A20": "exclusive"})
    np.testing.assert_array_equal(got["cat"], [[2]])
    with pytest.raises(ll.IteratorOutOfBounds):
        llov.evaluate(m, {"X": ROWS, "T": np.array(2)}, readings={"A20": "exclusive"})


def test_loop_runs_past_its_chunks():
    # rule: openvino/slice -- A24 "error": a trip past the last chunk fails (iterator/bounds)
    with pytest.raises(ll.IteratorOutOfBounds):
        llov.evaluate(ex.sliced_loop(), {"X": ROWS, "T": np.array(6)})
    # A24 "hold-last": OpenVINO's reference keeps feeding the last chunk: 0,1,2,3,3,3
    got = llov.evaluate(ex.sliced_loop(), {"X": ROWS, "T": np.array(6)},
                        readings={"A24": "hold-last"})
    np.testing.assert_array_equal(got["cat"].ravel(), [0, 2, 4, 6, 6, 6])
    np.testing.assert_array_equal(got["acc"], [[12]])


def test_loop_with_fewer_trips_than_chunks_reads_nothing_past_them():
    # rule: openvino/slice + laziness/dead -- only the chunks of trips that run are read
    r = llov.run(ex.sliced_loop(), {"X": ROWS, "T": np.array(1)})
    np.testing.assert_array_equal(r.outputs["cat"], [[0]])


# -- TensorIterator (rule: openvino/tensor-iterator) ------------------------------------------

TI_FEEDS = {"X": ROWS, "H0": np.zeros((1, 1), F), "B": np.full((1, 1), 10, F)}


def test_tensor_iterator_sliced_merged_invariant():
    # rule: openvino/tensor-iterator -- h_next = h + s + 10 over s = 0,1,2,3: 10, 21, 33, 46
    got = llov.evaluate(ex.tensor_iterator(), TI_FEEDS)
    check(got, {"h_last": [[46]], "ys": [[10], [21], [33], [46]]})


def test_tensor_iterator_reversed():
    # rule: openvino/tensor-iterator -- s = 3,2,1,0: h = 13, 25, 36, 46; the output's stride
    # -1 concatenates the trips in reverse order
    got = llov.evaluate(ex.tensor_iterator(start=-1, stride=-1, end=0), TI_FEEDS)
    check(got, {"h_last": [[46]], "ys": [[46], [36], [25], [13]]})


def test_tensor_iterator_start_honoured():
    # rule: openvino/slice -- start=1: s = 1,2,3: h = 11, 23, 36
    got = llov.evaluate(ex.tensor_iterator(start=1), TI_FEEDS)
    check(got, {"h_last": [[36]], "ys": [[11], [23], [36]]})


def test_tensor_iterator_start_and_positive_end():
    # rule: openvino/slice -- A20 inclusive: start=1, end=2 are chunks 1 and 2: h = 11, 23
    got = llov.evaluate(ex.tensor_iterator(start=1, end=2), TI_FEEDS)
    check(got, {"h_last": [[23]], "ys": [[11], [23]]})


def test_tensor_iterator_part_size_two():
    # rule: openvino/slice -- chunks [0,1],[2,3],[4,5] of [6,1]; h0 = [0,0]
    feeds = {"X": np.arange(6, dtype=F).reshape(6, 1), "H0": np.zeros((2, 1), F),
             "B": np.full((1, 1), 10, F)}
    got = llov.evaluate(ex.tensor_iterator(rows=6, stride=2, part=2), feeds)
    check(got, {"h_last": [[36], [39]], "ys": [[10], [11], [22], [24], [36], [39]]})


def test_tensor_iterator_zero_chunks():
    # rule: openvino/tensor-iterator -- a dynamic axis of extent 0: zero trips
    feeds = dict(TI_FEEDS, X=np.zeros((0, 1), F), H0=np.ones((1, 1), F))
    got = llov.evaluate(ex.tensor_iterator(dynamic_rows=True), feeds)
    check(got, {"h_last": [[1]], "ys": np.zeros((0, 1))})


def test_tensor_iterator_dynamic_extent():
    # rule: openvino/tensor-iterator -- the trip count comes from the runtime extent
    got = llov.evaluate(ex.tensor_iterator(dynamic_rows=True), dict(TI_FEEDS, X=ROWS[:2]))
    check(got, {"h_last": [[21]], "ys": [[10], [21]]})


# -- nesting ----------------------------------------------------------------------------------

def test_nested_loops():
    # rule: openvino/loop5 -- the inner loop runs j+1 trips summing row j: (j+1) * X[j]
    X = np.array([[1, 2], [3, 4], [5, 6]], F)
    check(llov.evaluate(ex.nested_loop(), {"X": X}),
          {"rows": [[1, 2], [6, 8], [15, 18]], "trips": 3})


def test_nested_inner_zero_trips():
    # rule: openvino/loop5 -- inner trips j: row 0 keeps the inner initial value (zeros)
    X = np.array([[1, 2], [3, 4], [5, 6]], F)
    check(llov.evaluate(ex.nested_loop(inner_extra=0), {"X": X}),
          {"rows": [[0, 0], [3, 4], [10, 12]], "trips": 3})


# -- models from IR, feeds by name ------------------------------------------------------------

def test_ir_path_read_with_openvinos_reader(tmp_path):
    # rule: openvino/model -- .xml + .bin, read by OpenVINO's own reader
    path = tmp_path / "counter.xml"
    ov.save_model(ex.counter_loop(trip=3), str(path), compress_to_fp16=False)
    check(llov.evaluate(str(path), {"X": X0}), THREE_TRIPS)
    check(llov.evaluate(path, {"X": X0}), THREE_TRIPS)


def test_lower_exposes_network_and_name_maps():
    # rule: openvino/model -- the CLI's entry point: lower + ll.evaluate + map
    lowered = llov.lower(ex.counter_loop(trip=3))
    assert lowered.network.profile == "openvino"
    core = ll.evaluate(lowered.network, lowered.core_feeds({"X": X0}))
    check(lowered.user_outputs(core), THREE_TRIPS)


def test_feed_by_python_list():
    # rule: openvino/model -- a list is read with the Parameter's dtype
    check(llov.evaluate(ex.counter_loop(trip=3), {"X": [[1, 2]]}), THREE_TRIPS)


def test_lowering_does_not_touch_the_model():
    m = ex.counter_loop(trip=3)
    before = [str(o.get_partial_shape()) for o in m.outputs]
    llov.evaluate(m, {"X": X0})
    assert [str(o.get_partial_shape()) for o in m.outputs] == before


def test_trace_shows_only_the_trips_run():
    # rule: laziness/dead via openvino/loop5 -- a count of 2 forces 2 elements of the body
    r = llov.run(ex.counter_loop(trip=2), {"X": X0}, trace=True)
    loops = {e.loop for e in r.evaluation.trace if e.loop is not None}
    assert len(loops) == 1
    (trips,) = r.evaluation.trips.values()
    assert trips == [((), 2)]


# -- a Loop as OpenVINO's ONNX reader produces it ---------------------------------------------

def test_loop_read_from_onnx_by_openvino(tmp_path):
    # rule: openvino/loop5, openvino/node -- an ONNX Loop (y_{i+1} = y_i + i, scan output y_i)
    # read by OpenVINO's ONNX frontend: its body holds Identity-16, which has no Node.evaluate
    # (hand kernel, spec/40-openvino-lowering.md)
    pytest.importorskip("onnx")
    model = ex.onnx_loop(tmp_path / "loop.onnx")
    feeds = {"M": np.array(4), "C": np.array(True), "Y": np.array([1, 2], F)}
    # y: [1,2] -> +0 -> +1 -> +2 -> +3
    check(llov.evaluate(model, feeds),
          {"y_final": [7, 8], "scans": [[1, 2], [1, 2], [2, 3], [4, 5]]})
    check(llov.evaluate(model, dict(feeds, M=np.array(0))),
          {"y_final": [1, 2], "scans": np.zeros((0, 2))})


def test_output_by_iteration():
    # rule: openvino/loop5 -- x = 2, 3, 4 on trips 0..2 (x_next = x + 1), y = 10 x: y by
    # iteration 1 is 30; trip 5 never runs, so y by iteration 5 is undefined. Only trip 1's
    # y is forced (lazy hold through an if-conditional).
    import openvino as ov
    import openvino.opset13 as ops
    x = ops.parameter([1], ov.Type.f32, name="x")
    xn = ops.add(x, ops.constant(np.array([1], np.float32)))
    y = ops.multiply(x, ops.constant(np.array([10], np.float32)))
    rx, ry, rc = ops.result(xn), ops.result(y), ops.result(ops.constant(np.array(True)))
    body = ov.Model([rx, ry, rc], [x], "body")
    X = ops.parameter([1], ov.Type.f32, name="X")
    T = ops.parameter([], ov.Type.i64, name="T")
    loop = ops.loop(T, ops.constant(np.array(True)))
    loop.set_function(body)
    loop.set_special_body_ports([-1, 2])
    loop.set_merged_input(x, X.output(0), rx.output(0))
    o1 = loop.get_iter_value(ry.output(0), 1)
    o1.get_tensor().set_names({"y1"})
    o5 = loop.get_iter_value(ry.output(0), 5)
    o5.get_tensor().set_names({"y5"})
    model = ov.Model([o1, o5], [X, T], "iterations")
    feeds = {"X": np.array([2], np.float32), "T": np.array(3)}
    result = llov.run(model, feeds)
    np.testing.assert_array_equal(result.outputs["y1"], [30])
    assert not result.defined["y5"].any() and np.isnan(result.outputs["y5"]).all()
    np.testing.assert_array_equal(llov.evaluate(model, feeds)["y1"], [30])
    traced = llov.run(model, feeds, trace=True).evaluation
    multiply = [k for k, n in traced.plan.nodes.items() if getattr(n, "op", "") == "Multiply"]
    assert sorted(e.index for e in traced.trace if e.stream in multiply) == [1]


def _if_model(inside_loop):
    import openvino as ov
    import openvino.opset13 as ops
    if not inside_loop:
        c = ops.parameter([], ov.Type.boolean, name="c")
        x = ops.parameter([2], ov.Type.f32, name="x")
        tp = ops.parameter([2], ov.Type.f32)
        ep = ops.parameter([2], ov.Type.f32)
        tr = ops.result(ops.multiply(tp, ops.constant(np.float32(2))))
        er = ops.result(ops.add(ep, ops.constant(np.float32(100))))
        node = ops.if_op(c)
        node.set_then_body(ov.Model([tr], [tp]))
        node.set_else_body(ov.Model([er], [ep]))
        node.set_input(x.output(0), tp, ep)
        out = node.set_output(tr, er)
        out.get_tensor().set_names({"y"})
        return ov.Model([out], [c, x], "if")
    # a Loop of 4 trips whose body picks x_next = x > 3 ? x - 3 : x + 2
    x = ops.parameter([], ov.Type.f32, name="x")
    tp, ep = ops.parameter([], ov.Type.f32), ops.parameter([], ov.Type.f32)
    tr = ops.result(ops.subtract(tp, ops.constant(np.float32(3))))
    er = ops.result(ops.add(ep, ops.constant(np.float32(2))))
    node = ops.if_op(ops.greater(x, ops.constant(np.float32(3))).output(0))
    node.set_then_body(ov.Model([tr], [tp]))
    node.set_else_body(ov.Model([er], [ep]))
    node.set_input(x.output(0), tp, ep)
    picked = node.set_output(tr, er)
    r_x, r_c = ops.result(picked), ops.result(ops.constant(np.array(True)))
    body = ov.Model([r_x, r_c], [x], "body")
    X = ops.parameter([], ov.Type.f32, name="X")
    loop = ops.loop(ops.constant(np.int64(4)), ops.constant(np.array(True)))
    loop.set_function(body)
    loop.set_special_body_ports([-1, 1])
    loop.set_merged_input(x, X.output(0), r_x.output(0))
    out = loop.get_iter_value(r_x.output(0), -1)
    out.get_tensor().set_names({"x_last"})
    return ov.Model([out], [X], "loop_if")


def test_if_forces_only_the_taken_branch():
    # rule: openvino/if -- y = c ? 2x : x + 100 with x = [1, 2]
    model = _if_model(False)
    for c, expected, forced_op in ((True, [2, 4], "Multiply"), (False, [101, 102], "Add")):
        run = llov.run(model, {"c": np.array(c), "x": np.array([1, 2], np.float32)}, trace=True)
        np.testing.assert_array_equal(run.outputs["y"], expected)
        ops_forced = {getattr(run.evaluation.plan.nodes[e.stream], "op", "")
                      for e in run.evaluation.trace}
        assert forced_op in ops_forced and ({"Multiply", "Add"} - {forced_op}).isdisjoint(ops_forced)


def test_if_inside_a_loop_picks_per_trip():
    # rule: openvino/if, openvino/loop5 -- x = 1 -> 3 -> 5 -> 2 -> 4 (x > 3 ? x - 3 : x + 2)
    out = llov.evaluate(_if_model(True), {"X": np.array(1, np.float32)})
    assert float(out["x_last"]) == 4.0
