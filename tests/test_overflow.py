"""Ambiguity A30: integer overflow in arithmetic kernels, `wrap` (default) or `saturate`, on
core networks, ONNX and OpenVINO models, and in the tester, which reports a saturating
backend's answers as explained by A30 and not as counted findings.

Expected values are computed with plain Python integers: `wrap8(v)` is v modulo 256 read as
int8, `sat8(v)` is v clamped to [-128, 127].

rules: stream/map, onnx/node, openvino/node
"""
import numpy as np
import pytest

import lazyloop as ll
import lazyloop.difftest as dt
from lazyloop.core.ambiguity import REGISTER

onnx = pytest.importorskip("onnx")
from onnx import TensorProto as T, helper as h  # noqa: E402

import lazyloop.onnx as llo  # noqa: E402

SATURATE = {"A30": "saturate"}


def wrap8(v):
    return (v + 128) % 256 - 128


def sat8(v):
    return max(-128, min(127, v))


def counter_by_hand(trips, start=0, step=1, fold=wrap8):
    c = start
    for _ in range(trips):
        c = fold(c + step)
    return c


# -- the register ----------------------------------------------------------------------------

def test_a30_is_registered_with_wrap_as_default():
    # rule: stream/map -- the register lists A30 with its two readings; wrap is the default
    a = ll.AMBIGUITIES["A30"]
    assert a is REGISTER["A30"]
    assert a.rule == "stream/map" and a.default == "wrap"
    assert sorted(a.readings) == ["saturate", "wrap"]
    assert ("A30", "saturate") in dt.alternative_readings("onnx")
    assert ("A30", "saturate") in dt.alternative_readings("openvino")


def test_an_unknown_a30_reading_is_refused():
    from lazyloop.core.ambiguity import UnknownReading
    with pytest.raises(UnknownReading, match="clamp"):
        ll.evaluate(core_counter("onnx", np.int8, 0, 3), {}, readings={"A30": "clamp"})


# -- core networks ---------------------------------------------------------------------------

def core_counter(profile, dtype, start, trips, step=1):
    net = ll.Network(profile=profile)
    count = net.add_constant((), np.array(trips, np.int32)).get_output(0)
    init = net.add_constant((), np.array(start, dtype)).get_output(0)
    inc = net.add_constant((), np.array(step, dtype)).get_output(0)
    loop = net.add_loop()
    loop.add_trip_limit(count, ll.TripLimit.COUNT)
    c = loop.add_recurrence(init)
    c.set_input(1, net.add_elementwise(c.get_output(0), inc,
                                       ll.ElementWiseOperation.SUM).get_output(0))
    out = loop.add_loop_output(c.get_output(0), ll.LoopOutput.LAST_VALUE).get_output(0)
    out.name = "c"
    net.mark_output(out)
    return net


def test_core_int8_counter_of_300_trips_wraps_to_44_or_saturates_at_127():
    # rule: stream/map -- 300 trips of c + 1 from 0 in int8: 300 - 256 = 44, or clamped 127
    net = core_counter("onnx", np.int8, 0, 300)
    assert counter_by_hand(300) == 44 and counter_by_hand(300, fold=sat8) == 127
    assert ll.evaluate(net, {})["c"] == 44
    got = ll.evaluate(net, {}, readings=SATURATE)["c"]
    assert got == 127 and got.dtype == np.int8
    assert ll.evaluate(net, {})["c"] == 44  # the plan compiled for wrap is not the saturating one


def test_core_tensorrt_int32_counter_saturates_at_the_int32_maximum():
    # rule: stream/map -- TensorRT profile (int32 loop values): 2**31 - 100 plus 300 ones
    net = core_counter("tensorrt", np.int32, 2**31 - 100, 300)
    top = 2**31 - 1
    wrapped = (2**31 - 100 + 300 + 2**31) % 2**32 - 2**31  # by hand: -2**31 + 200
    assert ll.evaluate(net, {})["c"] == wrapped == -2**31 + 200
    assert ll.evaluate(net, {}, readings=SATURATE)["c"] == top


def test_core_product_difference_negation_and_absolute_value():
    # rule: stream/map -- uint8 252 * 252 = 63504: 63504 % 256 = 16, or 255; int8 -(-128),
    # |-128|: -128 wrapped, 127 saturated; uint8 3 - 5: 254 wrapped, 0 saturated
    net = ll.Network(profile="onnx")
    x = net.add_input("x", ll.uint8, (2,))
    z = net.add_input("z", ll.int8, (2,))
    w = net.add_input("w", ll.uint8, (2,))
    outs = {"xx": net.add_elementwise(x, x, ll.ElementWiseOperation.PROD),
            "xw": net.add_elementwise(x, w, ll.ElementWiseOperation.SUB),
            "nz": net.add_unary(z, ll.UnaryOperation.NEG),
            "az": net.add_unary(z, ll.UnaryOperation.ABS)}
    for name, layer in outs.items():
        layer.get_output(0).name = name
        net.mark_output(layer.get_output(0))
    feeds = {"x": np.array([252, 3], np.uint8), "z": np.array([-128, 5], np.int8),
             "w": np.array([253, 1], np.uint8)}
    wrapped = ll.evaluate(net, feeds)
    assert wrapped["xx"].tolist() == [63504 % 256, 9] == [16, 9]
    assert wrapped["xw"].tolist() == [(252 - 253) % 256, 2]
    assert wrapped["nz"].tolist() == [-128, -5] and wrapped["az"].tolist() == [-128, 5]
    sat = ll.evaluate(net, feeds, readings=SATURATE)
    assert sat["xx"].tolist() == [min(255, 252 * 252), 9] == [255, 9]
    assert sat["xw"].tolist() == [max(0, 252 - 253), 2]
    assert sat["nz"].tolist() == [sat8(128), -5] and sat["az"].tolist() == [127, 5]
    assert {k: v.dtype for k, v in sat.items()} == {k: v.dtype for k, v in wrapped.items()}


def test_core_batched_map_over_an_iterator_saturates_like_each_element():
    # rule: stream/map -- rows of an int8 tensor plus 100 (a map the fast path batches):
    # every element clamped by hand
    rows = [[100, -100], [27, 28], [-128, 127], [5, -5]]
    net = ll.Network(profile="onnx")
    x = net.add_input("x", ll.int8, (4, 2))
    count = net.add_constant((), np.array(4, np.int32)).get_output(0)
    hundred = net.add_constant((2,), np.array([100, 100], np.int8)).get_output(0)
    loop = net.add_loop()
    loop.add_trip_limit(count, ll.TripLimit.COUNT)
    row = loop.add_iterator(x, axis=0).get_output(0)
    y = net.add_elementwise(row, hundred, ll.ElementWiseOperation.SUM).get_output(0)
    out = loop.add_loop_output(y, ll.LoopOutput.CONCATENATE, axis=0)
    out.set_input(1, count)
    out.get_output(0).name = "ys"
    net.mark_output(out.get_output(0))
    feeds = {"x": np.array(rows, np.int8)}
    assert ll.evaluate(net, feeds, readings=SATURATE)["ys"].tolist() == \
        [[sat8(v + 100) for v in r] for r in rows]
    assert ll.evaluate(net, feeds)["ys"].tolist() == [[wrap8(v + 100) for v in r] for r in rows]
    assert ll.run(net, feeds, readings=SATURATE).outputs["ys"].tolist() == \
        [[sat8(v + 100) for v in r] for r in rows]


def test_floats_are_the_same_under_both_readings():
    # rule: stream/map -- saturate changes integer arithmetic only: float32 overflow is inf
    net = ll.Network(profile="onnx")
    x = net.add_input("x", ll.float32, (1,))
    p = net.add_elementwise(x, x, ll.ElementWiseOperation.PROD).get_output(0)
    p.name = "p"
    net.mark_output(p)
    feeds = {"x": np.array([3e38], np.float32)}
    with np.errstate(over="ignore"):
        assert np.isinf(ll.evaluate(net, feeds, readings=SATURATE)["p"][0])


# -- ONNX models -----------------------------------------------------------------------------

def onnx_counter(trips=300, dtype=T.INT8):
    body = h.make_graph(
        [h.make_node("Constant", [], ["one"], value=h.make_tensor("one", dtype, [], [1])),
         h.make_node("Add", ["c_in", "one"], ["c_out"]),
         h.make_node("Identity", ["cond_in"], ["cond_out"])],
        "body",
        [h.make_tensor_value_info("i", T.INT64, []),
         h.make_tensor_value_info("cond_in", T.BOOL, []),
         h.make_tensor_value_info("c_in", dtype, [])],
        [h.make_tensor_value_info("cond_out", T.BOOL, []),
         h.make_tensor_value_info("c_out", dtype, [])])
    graph = h.make_graph([h.make_node("Loop", ["M", "", "c0"], ["c"], body=body)], "counter",
                         [h.make_tensor_value_info("c0", dtype, [])],
                         [h.make_tensor_value_info("c", dtype, [])],
                         [h.make_tensor("M", T.INT64, [], [trips])])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 16)])


def onnx_arithmetic():
    graph = h.make_graph(
        [h.make_node("Mul", ["x", "x"], ["xx"]), h.make_node("Sub", ["x", "w"], ["xw"]),
         h.make_node("Neg", ["z"], ["nz"]), h.make_node("Abs", ["z"], ["az"]),
         h.make_node("Add", ["z", "z"], ["zz"])], "arith",
        [h.make_tensor_value_info("x", T.UINT8, [2]), h.make_tensor_value_info("w", T.UINT8, [2]),
         h.make_tensor_value_info("z", T.INT8, [2])],
        [h.make_tensor_value_info(n, t, [2]) for n, t in
         (("xx", T.UINT8), ("xw", T.UINT8), ("nz", T.INT8), ("az", T.INT8), ("zz", T.INT8))])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 16)])


ARITH_FEEDS = {"x": np.array([252, 3], np.uint8), "w": np.array([253, 1], np.uint8),
               "z": np.array([-128, 100], np.int8)}


def test_onnx_int8_loop_counter_is_44_wrapped_and_127_saturated():
    # rule: onnx/node -- the Loop body's Add, bound once per reading
    model = onnx_counter()
    feeds = {"c0": np.array(0, np.int8)}
    assert llo.evaluate(model, feeds)["c"] == counter_by_hand(300) == 44
    assert llo.evaluate(model, feeds, readings=SATURATE)["c"] == 127
    assert llo.evaluate(model, feeds)["c"] == 44  # the kept lowering is per reading


def test_onnx_arithmetic_ops_under_both_readings():
    # rule: onnx/node -- Mul, Sub, Neg, Abs, Add on uint8/int8, values by hand
    wrapped = llo.evaluate(onnx_arithmetic(), ARITH_FEEDS)
    assert wrapped["xx"].tolist() == [16, 9] and wrapped["xw"].tolist() == [255, 2]
    assert wrapped["nz"].tolist() == [-128, -100] and wrapped["az"].tolist() == [-128, 100]
    assert wrapped["zz"].tolist() == [wrap8(-256), wrap8(200)] == [0, -56]
    sat = llo.evaluate(onnx_arithmetic(), ARITH_FEEDS, readings=SATURATE)
    assert sat["xx"].tolist() == [255, 9] and sat["xw"].tolist() == [0, 2]
    assert sat["nz"].tolist() == [127, -100] and sat["az"].tolist() == [127, 100]
    assert sat["zz"].tolist() == [sat8(-256), sat8(200)] == [-128, 127]
    assert all(v.dtype == wrapped[k].dtype for k, v in sat.items())


def test_onnx_int64_saturates_exactly_not_through_floats():
    # rule: onnx/node -- 2**63 - 2 + 1 fits; 2**63 - 2 + 3 clamps to 2**63 - 1 (a float64
    # detour would round both to 2**63)
    graph = h.make_graph([h.make_node("Add", ["a", "b"], ["y"])], "add64",
                         [h.make_tensor_value_info("a", T.INT64, [2]),
                          h.make_tensor_value_info("b", T.INT64, [2])],
                         [h.make_tensor_value_info("y", T.INT64, [2])])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 16)])
    feeds = {"a": np.array([2**63 - 2, 2**63 - 2], np.int64), "b": np.array([1, 3], np.int64)}
    assert llo.evaluate(model, feeds, readings=SATURATE)["y"].tolist() == [2**63 - 1] * 2
    assert llo.evaluate(model, feeds)["y"].tolist() == [2**63 - 1, -2**63 + 1]


# -- OpenVINO models -------------------------------------------------------------------------

def test_openvino_int8_counter_and_arithmetic_under_both_readings():
    # rule: openvino/node -- Node.evaluate wraps; saturate binds lazyloop's saturating kernels
    ov = pytest.importorskip("openvino")
    import lazyloop.openvino as llov
    core = ov.Core()
    counter = core.read_model(onnx_counter().SerializeToString(), b"")
    feeds = {"c0": np.array(0, np.int8)}
    assert llov.evaluate(counter, feeds)["c"] == 44
    assert llov.evaluate(counter, feeds, readings=SATURATE)["c"] == 127
    arith = core.read_model(onnx_arithmetic().SerializeToString(), b"")
    sat = llov.evaluate(arith, ARITH_FEEDS, readings=SATURATE)
    assert sat["xx"].tolist() == [255, 9] and sat["xw"].tolist() == [0, 2]
    assert sat["nz"].tolist() == [127, -100] and sat["az"].tolist() == [127, 100]
    assert sat["zz"].tolist() == [-128, 127]


# -- the tester ------------------------------------------------------------------------------

class SaturatingCounter:
    """A fake backend for the long-loop programs: it computes the counter and accumulator
    with plain Python integers, clamping each sum to the dtype's range."""

    name = "saturating-counter"
    format = "onnx"
    formats = ("onnx",)

    def __init__(self, recipe):
        self.recipe = recipe

    def run(self, model, feeds):
        r = self.recipe
        info = np.iinfo(r.dtype)
        clamp = lambda v: max(int(info.min), min(int(info.max), v))  # noqa: E731
        counter, acc, stacked = r.start, 0, []
        for _ in range(r.count):
            counter = clamp(counter + r.step)
            acc = clamp(acc + counter)
            stacked.append(counter)
        out = {"counter_final": np.array(counter, r.dtype), "acc_final": np.array(acc, r.dtype)}
        if r.scan_state:
            out["counter_stacked"] = np.array(stacked, r.dtype)
        return out


def long_loop(**kw):
    from lazyloop.strategies.dialects import OnnxLongLoopRecipe
    recipe = OnnxLongLoopRecipe(**kw)
    return recipe, dt.Subject("onnx-long-loop", "onnx", recipe.program())


def test_the_tester_explains_a_saturating_backend_by_a30():
    # rule: onnx/loop -- 300 trips of an int8 counter: the backend says 127, lazyloop 44
    recipe, subject = long_loop(dtype="int8", count=300, start=0, step=1)
    checker = dt.Checker(SaturatingCounter(recipe))
    out = checker.examine(subject)
    assert out.status == "disagree"
    assert out.actual["counter_final"] == 127
    checker.attribute(subject, out, out.actual)
    assert out.ambiguity == "A30"


def test_a_wrong_answer_saturation_does_not_explain_stays_unexplained():
    # rule: onnx/loop -- a backend that stops the counter at 100 is not explained by A30
    recipe, subject = long_loop(dtype="int8", count=300, start=0, step=1)

    class StuckAt100(SaturatingCounter):
        def run(self, model, feeds):
            out = super().run(model, feeds)
            out["counter_final"] = np.array(100, np.int8)
            return out

    checker = dt.Checker(StuckAt100(recipe))
    out = checker.examine(subject)
    checker.attribute(subject, out, out.actual)
    assert out.status == "disagree" and out.ambiguity is None


def test_a30_is_not_tried_on_models_without_integer_arithmetic():
    # rule: onnx/scan9 -- a float Scan cannot be explained by saturation: the reading is skipped
    from lazyloop.difftest.overflowing import worth_trying
    from lazyloop.strategies.dialects import OnnxScanRecipe
    scan = OnnxScanRecipe(opset=16, length=2, element=(2,), inputs=((0, 0),), states=0,
                          outputs=(("input", 0, 0),)).program()
    assert not worth_trying("A30", "onnx", scan.model)
    assert worth_trying("A30", "onnx", onnx_counter())
    assert worth_trying("A30", "onnx", onnx_arithmetic())
    assert worth_trying("A14", "onnx", scan.model)  # other entries are always tried


def test_a_saturating_backend_campaign_counts_no_finding():
    # rule: onnx/loop -- every disagreement of a saturating backend on long loops is A30's,
    # so the default --fail-on (unexplained) counts none of them
    from lazyloop.difftest.schema import check_document, judge

    class LazyloopSaturating:
        name, format, formats = "lazyloop-saturating", "onnx", ("onnx",)

        def run(self, model, feeds):
            with np.errstate(over="ignore"):  # float16 counters overflow to inf on purpose
                return llo.evaluate(model, feeds, readings=SATURATE)

    report = dt.check(LazyloopSaturating(), max_examples=20, seed=0, kinds=["onnx-long-loop"],
                      shrink=False, isolate=False)
    assert report.disagreements, report.summary()
    assert {d.ambiguity for d in report.disagreements} == {"A30"}
    doc = judge(check_document(report))
    assert doc["verdict"]["counted"] == 0 and doc["verdict"]["explained"] >= 1
    assert judge(check_document(report), "any")["verdict"]["counted"] >= 1


def test_openvino_cpu_plugin_int8_counter_is_explained_by_a30():
    # rule: openvino/node -- the CPU plugin saturates int8: 127, not 44 (spec/50 NARROW-1)
    pytest.importorskip("openvino")
    recipe, subject = long_loop(dtype="int8", count=300, start=0, step=1)
    checker = dt.Checker(dt.backend("openvino"))
    out = checker.examine(subject)
    if out.status == "unsupported":
        pytest.skip(f"the installed OpenVINO does not run this Loop: {out.error}")
    assert out.status == "disagree", out
    assert out.actual["counter_final"] == counter_by_hand(300, fold=sat8) == 127
    checker.attribute(subject, out, out.actual)
    assert out.ambiguity == "A30"


def test_the_register_listing_shows_both_readings(capsys):
    # rule: stream/map -- teach.show_ambiguity lists A30 with its default marked
    from lazyloop import teach
    teach.show_ambiguity("A30")
    text = capsys.readouterr().out
    assert text.startswith("A30 [stream/map]")
    assert "* wrap:" in text and "saturate:" in text and "* saturate" not in text
