"""A harness that never invents a symptom: every built-in adapter feeds every input the model
declares to the engine's input that names it; an engine that lost (renamed or dropped) one
is a finding of its own kind, never a value computed from an unfed input; what the adapter
hands over is a writable copy; an adapter's own failure is reported apart, as lazyloop's
(spec/51-difftest.md, "The harness").

rules: onnx/loop, openvino/loop5
"""
import numpy as np
import pytest

import lazyloop.difftest as dt
from lazyloop.difftest import backends
from lazyloop.difftest.checking import Checker
from lazyloop.difftest.reducing import ReducedModel
from lazyloop.difftest.subject import Subject

onnx = pytest.importorskip("onnx")


def constant_false_loop():
    """Loop("", cond = Constant false, v0): zero trips, v0_final = v0. Its body reads v0
    through the carried value (Tanh(c + i))."""
    from onnx import TensorProto as T
    from onnx import helper as h
    body = h.make_graph(
        [h.make_node("Constant", [], ["one"], value=h.make_tensor("o", T.INT64, [], [1])),
         h.make_node("Constant", [], ["stop"], value=h.make_tensor("s", T.INT64, [], [0])),
         h.make_node("Add", ["i", "one"], ["i_next"]),
         h.make_node("Less", ["i_next", "stop"], ["cond_out"]),
         h.make_node("Cast", ["i"], ["i_f"], to=T.FLOAT),
         h.make_node("Add", ["c", "i_f"], ["sum"]),
         h.make_node("Tanh", ["sum"], ["c_next"])],
        "body", [h.make_tensor_value_info("i", T.INT64, []),
                 h.make_tensor_value_info("cond_in", T.BOOL, []),
                 h.make_tensor_value_info("c", T.FLOAT, [])],
        [h.make_tensor_value_info("cond_out", T.BOOL, []),
         h.make_tensor_value_info("c_next", T.FLOAT, [])])
    graph = h.make_graph(
        [h.make_node("Constant", [], ["cond"], value=h.make_tensor("c", T.BOOL, [], [False])),
         h.make_node("Loop", ["", "cond", "v0"], ["v0_final"], body=body)],
        "g", [h.make_tensor_value_info("v0", T.FLOAT, [])],
        [h.make_tensor_value_info("v0_final", T.FLOAT, [])])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 16)])


FEEDS = {"v0": np.array(-1.0, np.float32)}


def outcome(backend, model=None, feeds=FEEDS):
    model = constant_false_loop() if model is None else model
    subject = Subject("reduced", "onnx", ReducedModel.of("onnx", model, feeds))
    return Checker(backend).outcome(subject)


def test_openvino_renames_the_input_of_a_loop_it_folds_and_that_is_the_finding():
    # rule: onnx/loop -- zero trips: v0_final is v0 (-1.0). Outside lazyloop, OpenVINO's
    # ONNX reader folds the loop and names the model's only Parameter after the output
    ov = pytest.importorskip("openvino")
    model = constant_false_loop()
    read = ov.Core().read_model(model.SerializeToString())
    names = [sorted(p.output(0).get_names()) for p in read.get_parameters()]
    assert names == [["v0_final"]]
    with pytest.raises(dt.InputLost, match="lost input `v0`.*v0_final"):
        dt.backend("openvino").run(model, FEEDS)
    out = outcome(dt.backend("openvino"))
    assert out.status == "disagree" and str(out.symptom) == "lost-input"
    assert out.actual is None and [d.kind for d in out.differences] == ["lost-input"]


class Renaming:
    """Wraps an engine object so that its input `name` is known as `name_renamed`."""

    def __init__(self, inner, attribute):
        self.inner, self.attribute = inner, attribute

    def __getattr__(self, item):
        value = getattr(self.inner, item)
        if item == self.attribute:
            if callable(value):
                return lambda *a: [Renamed(v) for v in value(*a)]
            return [f"{v}_renamed" for v in value]
        return value


class Renamed:
    def __init__(self, arg):
        self.arg = arg

    @property
    def name(self):
        return f"{self.arg.name}_renamed"


@pytest.mark.parametrize("name, attribute", [("onnxruntime", "get_inputs"),
                                             ("onnx-reference", "input_names")])
def test_onnx_engine_adapters_find_a_renamed_input(name, attribute, monkeypatch):
    # rule: onnx/loop -- neither engine renames: its session (onnxruntime) or evaluator
    # (ONNX's reference) is made to report the input renamed
    pytest.importorskip({"onnxruntime": "onnxruntime", "onnx-reference": "onnx"}[name])
    b = dt.backend(name)
    load = b.load
    monkeypatch.setattr(b, "load", lambda model: Renaming(load(model), attribute))
    with pytest.raises(dt.InputLost, match="lost input `v0`.*v0_renamed"):
        b.run(constant_false_loop(), FEEDS)


def test_tract_adapter_finds_a_dropped_input(monkeypatch):
    # rule: onnx/scan9 -- tract's loaded model reports no input at all (tract refuses Loop,
    # so a Scan model: its input x0 is read by the Scan)
    pytest.importorskip("tract")
    from lazyloop.strategies.dialects import OnnxScanRecipe
    p = OnnxScanRecipe(opset=16, length=2, element=(2,), inputs=((0, 0),), states=0,
                       outputs=(("input", 0, 0),)).program()
    b = dt.backend("tract")

    class NoInputs:
        def __init__(self, inner):
            self.inner = inner

        def load(self, path):
            model = self.inner.load(path)

            class Dropped:
                def input_count(self):
                    return 0

                def __getattr__(self, item):
                    return getattr(model, item)
            return Dropped()

    real = b._tract.onnx
    monkeypatch.setattr(b, "_tract", type("T", (), {"onnx": lambda self: NoInputs(real())})())
    with pytest.raises(dt.InputLost, match="lost input `x0`.*no input of that name"):
        b.run(p.model, p.feeds)


def test_lazyloop_adapter_finds_a_renamed_input(monkeypatch):
    # rule: onnx/loop -- lazyloop's own frontend, its lowered model's inputs renamed
    import attrs
    b = dt.backend("lazyloop")
    frontend = backends._frontend("onnx")

    class Renames:
        @staticmethod
        def lower(model):
            lowered = frontend.lower(model)
            return attrs.evolve(lowered, inputs=tuple(
                attrs.evolve(b, name=f"{b.name}_renamed") for b in lowered.inputs))
    monkeypatch.setattr(backends, "_frontend", lambda fmt: Renames)
    with pytest.raises(dt.InputLost, match="lost input `v0`.*v0_renamed"):
        b.run(constant_false_loop(), FEEDS)


def test_an_engine_may_leave_out_an_input_nothing_reads():
    # rule: onnx/loop -- declared inputs w (read by nothing) and v0; an engine asking only
    # for v0 lost nothing, one asking for neither lost v0
    values = backends.port_values(["w", "v0"], [{"v0"}], {"w": 1.0, "v0": 2.0},
                                  unread={"w"})
    assert values == {0: 2.0}
    with pytest.raises(dt.InputLost, match="lost input `v0`"):
        backends.port_values(["w", "v0"], [], {"w": 1.0, "v0": 2.0}, unread={"w"})
    with pytest.raises(dt.InputLost, match="asks for input \\['z'\\]"):
        backends.port_values(["v0"], [{"v0"}, {"z"}], {"v0": 2.0})


def test_what_an_engine_is_handed_is_a_writable_copy():
    # rule: onnx/loop -- a read-only feed (as numpy_helper reads .pb files) reaches the
    # engine as a writable array of its own
    feed = np.array([1.0, 2.0], np.float32)
    feed.flags.writeable = False
    [value] = backends.port_values(["x"], [{"x"}], {"x": feed}).values()
    assert value.flags.writeable and not np.shares_memory(value, feed)
    assert np.array_equal(value, feed) and value.dtype == feed.dtype


def test_an_adapter_that_fails_is_a_harness_error_counted_apart(monkeypatch):
    # rule: onnx/loop -- lazyloop's own step of the adapter fails: not a finding of the
    # engine; the campaign reports it apart and lazyloop failed (exit status 3)
    from lazyloop.difftest.schema import check_document, judge

    def broken(model):
        raise KeyError("planted: the adapter cannot read the model's inputs")
    monkeypatch.setattr(backends, "onnx_inputs", broken)
    out = outcome(dt.backend("onnx-reference"))
    assert out.status == "harness-error" and "HarnessError" in out.error
    report = dt.check(dt.backend("onnx-reference"), max_examples=5, seed=0,
                      kinds=["onnx-loop"], isolate=False)
    assert not report.disagreements and len(report.harness_errors) == report.generated
    document = judge(check_document(report))
    assert document["harness_errors"][0]["program"] == 0
    assert "planted" in document["harness_errors"][0]["error"]
    assert document["verdict"]["exit_status"] == 3


class DropsEveryFeed:
    """A plug-in wrapping lazyloop's adapter that hands it no feed: the engine (the plug-in)
    lost its input, whatever adapter it wraps."""

    name, format, formats = "drops-every-feed", "onnx", ("onnx",)

    def run(self, model, feeds):
        return dt.backend("lazyloop").run(model, {})


def test_an_input_lost_inside_a_plugin_is_the_engines_finding_not_the_harness():
    # rule: onnx/loop -- the harness fed v0; the plug-in dropped it on the way
    out = outcome(DropsEveryFeed())
    assert out.status == "disagree" and str(out.symptom) == "lost-input", out
    assert "`v0`" in out.error


def test_a_model_the_harness_cannot_feed_is_a_harness_error(monkeypatch):
    # rule: onnx/loop -- the model handed on declares (and reads) w, which the harness has
    # no value for: the harness's own failure, never handed to the engine
    from onnx import TensorProto as T
    from onnx import helper as h
    model = constant_false_loop()
    model.graph.input.append(h.make_tensor_value_info("w", T.FLOAT, []))
    model.graph.node.append(h.make_node("Identity", ["w"], ["w_out"]))
    model.graph.output.append(h.make_tensor_value_info("w_out", T.FLOAT, []))
    plain = Subject("reduced", "onnx", ReducedModel.of("onnx", constant_false_loop(), FEEDS))
    subject = Subject("reduced", "onnx", ReducedModel.of("onnx", model, FEEDS))
    answer = plain.expectation()  # lazyloop's answer needs no w: only the model handed on does
    monkeypatch.setattr(Subject, "expectation", lambda self: answer)
    out = Checker(dt.backend("lazyloop")).outcome(subject)
    assert out.status == "harness-error" and "'w'" in out.error


def test_tract_adapter_feeds_unsigned_integers():
    # rule: onnx/node -- LL-2 (spec/50): the adapter's type table had no uint32, so its own
    # KeyError was reported as tract's finding; now the value reaches tract, which answers
    # for itself (Identity of uint16/uint32/uint64 gives the input back)
    pytest.importorskip("tract")
    from onnx import TensorProto, helper
    for dtype, proto in ((np.uint16, TensorProto.UINT16), (np.uint32, TensorProto.UINT32),
                         (np.uint64, TensorProto.UINT64)):
        graph = helper.make_graph(
            [helper.make_node("Identity", ["x"], ["y"])], "g",
            [helper.make_tensor_value_info("x", proto, [2, 3])],
            [helper.make_tensor_value_info("y", proto, [2, 3])])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
        x = np.arange(6, dtype=dtype).reshape(2, 3)
        got = dt.backend("tract").run(model, {"x": x})
        np.testing.assert_array_equal(got["y"], x)


def test_a_campaign_says_nothing_of_the_overflows_its_programs_make_on_purpose():
    # seed 5's first 15 programs carry a float state past float32's range (an accumulation
    # overflowing to inf): numpy warned about it from inside lazyloop's generated trips
    # before; the answers are the same either way (the error state decides only the warning)
    import warnings
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        report = dt.check("lazyloop", max_examples=15, seed=5, shrink=False, isolate=False)
    assert report.generated == 15
    assert [str(w.message) for w in said if issubclass(w.category, RuntimeWarning)] == []
    assert np.geterr()["over"] == "warn"  # the caller's error state is left as it was
