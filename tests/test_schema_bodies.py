"""Loop bodies of any ONNX op, drawn from the operator schemas (issue 22 point 1): the
catalogue of ops and their calls, the programs around them (Loop, Scan, If inside, nested
Loops) and the op types a model's bodies hold.

rules: onnx/node, onnx/loop, onnx/scan9, onnx/if
"""
import pickle

import numpy as np
import pytest

pytest.importorskip("onnx")
pytest.importorskip("hypothesis")

import onnx  # noqa: E402
from onnx import TensorProto, helper  # noqa: E402

import lazyloop.difftest as dt  # noqa: E402
from lazyloop.difftest.op_types import body_op_types  # noqa: E402
from lazyloop.difftest.shrinking import draw_program  # noqa: E402
from lazyloop.difftest.subject import subjects  # noqa: E402
from lazyloop.strategies import onnx_op_search as search  # noqa: E402
from lazyloop.strategies.onnx_ops import OpCall, Port  # noqa: E402
from lazyloop.strategies.onnx_schema import BodyCall, OnnxSchemaRecipe  # noqa: E402

OPSET = 21
SCHEMA_KINDS = ("onnx-schema-loop", "onnx-schema-scan")


def test_the_catalogue_holds_every_op_with_a_reference_kernel_but_those_left_out():
    # rule: onnx/node -- nondeterministic ops are never drawn; every other op with a kernel
    # either has calls or is named with a reason
    ops = set(search.catalogue(OPSET))
    left = search.left_out(OPSET)
    assert len(ops) >= 150
    assert {"Bernoulli", "RandomNormal", "RandomUniformLike"} <= set(left)
    assert not ops & {"Bernoulli", "RandomNormal", "RandomNormalLike", "RandomUniform",
                      "RandomUniformLike", "Multinomial", "Loop", "Scan", "If"}
    assert set(search.defined_ops(OPSET)) == ops | set(left)
    assert {"Gather", "ScatterND", "NonZero", "Unique", "LSTM", "Resize", "TopK",
            "CumSum", "Einsum", "Range"} <= ops


def test_calls_come_from_the_schema_and_are_kept_only_where_the_reference_accepts_them():
    # rule: onnx/node -- REF-6: the reference Softsign fails on a 0-D value, so no 0-D call
    softsign = search.signatures("Softsign", OPSET)
    assert softsign and all(c.inputs[0].shape != () for c in softsign)
    # a float Mod needs fmod=1 (the operator's text), which neither inference nor the kernel
    # checks; the int calls may leave it out
    mods = search.signatures("Mod", OPSET)
    assert all(dict(c.attributes).get("fmod") == 1 for c in mods
               if c.inputs[0].dtype.startswith("float"))
    # LL-3 (spec/50): "reduction" means different things to the Scatter ops and the losses;
    # a Scatter op is drawn only with a reduction its text lists
    for op in ("ScatterND", "ScatterElements"):
        reductions = {dict(c.attributes).get("reduction", "none")
                      for c in search.signatures(op, OPSET)}
        assert reductions and reductions <= {"none", "add", "mul", "max", "min"}, op
    # types come from the constraints: Add is drawn in float16 and in int8 as well
    dtypes = {c.inputs[0].dtype for c in search.signatures("Add", OPSET)}
    assert {"float32", "float16", "int64", "int8"} <= dtypes
    # a value-dependent extent is not known: NonZero's second dimension
    assert all(c.outputs[0][1][1] is None for c in search.signatures("NonZero", OPSET))


def test_a_call_runs_alone_outside_any_loop():
    # rule: onnx/node -- Gather of rows [1, 0] of a (2, 3) value, fed by hand
    call = OpCall("Gather", OPSET, (Port("data", "float32", (2, 3)),
                                    Port("const", "int64", (2,), value=(1, 0))),
                  outputs=(("float32", (2, 3)),))
    model, feeds = call.alone({"x0": np.arange(6, dtype=np.float32).reshape(2, 3)})
    onnx.checker.check_model(model, full_check=True)
    import lazyloop.onnx as lo
    out = lo.evaluate(model, feeds)["y0"]
    assert np.array_equal(out, [[3, 4, 5], [0, 1, 2]])
    _, default = call.alone()  # the values a program feeds it first
    assert default["x0"].dtype == np.float32 and default["x0"].shape == (2, 3)


def test_a_recipe_is_plain_data_that_rebuilds_the_same_program():
    from lazyloop.strategies import onnx_schema_draw  # noqa: F401 -- the names repr uses
    strategy = subjects(("onnx",), ["onnx-schema-scan"])
    program = draw_program(strategy, 0, 4)[0].program
    recipe = program.recipe
    namespace = {"OnnxSchemaRecipe": OnnxSchemaRecipe, "BodyCall": BodyCall,
                 "OpCall": OpCall, "Port": Port}
    assert eval(repr(recipe), namespace) == recipe
    assert pickle.loads(pickle.dumps(recipe)) == recipe
    assert recipe.kind == "onnx-schema-scan" and recipe.op_types()


def test_an_add_fed_by_a_carried_value_and_an_outer_value_by_hand():
    # rule: onnx/loop -- 3 trips; a = a0 + 0.25 t moves on each trip, b is outer (fixed);
    # the sum is a scan output and a carried value (its last trip); a0 = [-2, -1.75] and
    # b = [1.75, 2] are the values of seed 0 (port 1's pattern is shifted by 15 places)
    add = OpCall("Add", OPSET, (Port("data", "float32", (2,)), Port("data", "float32", (2,))),
                 outputs=(("float32", (2,)),))
    r = OnnxSchemaRecipe("loop", (BodyCall(add, ("step", "fixed"), ("both",)),), trips=3)
    p = r.program()
    assert np.array_equal(p.feeds["v0_0"], [-2, -1.75])
    assert np.array_equal(p.feeds["w0_1"], [1.75, 2])
    outputs, _, rules = dt.Subject(r.kind, "onnx", p).expectation()
    stacked = np.array([[-0.25, 0.25], [0, 0.5], [0.25, 0.75]], np.float32)
    assert np.array_equal(outputs["b_y0_0_stacked"], stacked)
    assert np.array_equal(outputs["b_y0_0_final"], stacked[-1])
    assert np.array_equal(outputs["b_v0_0_next_final"], [-1.25, -1.0])
    assert {"onnx/loop", "onnx/node"} <= rules


def test_a_zero_trip_nested_scan_output_keeps_its_declared_element_shape():
    # rule: onnx/loop -- an outer Loop of zero trips stacking an inner Loop's [2] stack: the
    # element shape is the body's declared [2] (onnxruntime: (0, 2)), not (0, 0)
    c = OpCall("Constant", OPSET, (), (("value_float", 0.5),), (("float32", ()),))
    r = OnnxSchemaRecipe("loop-loop", (BodyCall(c, (), ("scan",)),), trips=0, inner=2)
    outputs, _, _ = dt.Subject(r.kind, "onnx", r.program()).expectation()
    assert outputs["b_y0_0_stack_stacked"].shape == (0, 2)


@pytest.mark.parametrize("kind", SCHEMA_KINDS)
def test_every_drawn_program_is_valid_onnx_and_lazyloop_evaluates_it(kind):
    # rule: onnx/node -- strict shape inference accepts it, the values stay finite
    strategy = subjects(("onnx",), [kind])
    for i in range(30):
        subject = draw_program(strategy, 5, i)[0]
        model = subject.model()
        onnx.checker.check_model(model, full_check=True)
        onnx.shape_inference.infer_shapes(model, strict_mode=True)
        outputs, _, _ = subject.expectation()
        for v in outputs.values():
            assert v.dtype.kind not in "fc" or np.all(np.isfinite(v)), subject
    assert subject.kind == kind


def test_a_thousand_programs_of_the_default_mix_meet_at_least_sixty_op_types():
    # rule: onnx/node -- the coverage target of issue 22, drawn without running a backend
    strategy = subjects(("onnx",))
    met = set()
    for i in range(1000):
        met |= set(body_op_types(draw_program(strategy, 0, i)[0].model()))
    assert len(met) >= 60, sorted(met)


def test_body_op_types_reads_every_body_at_any_depth():
    # rule: onnx/if -- Loop body holding an If whose branch holds a Neg; the main graph's
    # Add is not inside a body
    neg = helper.make_graph([helper.make_node("Neg", ["x"], ["y"])], "then", [],
                            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [])])
    one = helper.make_graph([helper.make_node("Identity", ["x"], ["z"])], "else", [],
                            [helper.make_tensor_value_info("z", TensorProto.FLOAT, [])])
    body = helper.make_graph(
        [helper.make_node("If", ["c"], ["o"], then_branch=neg, else_branch=one)], "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("c", TensorProto.BOOL, [])],
        [helper.make_tensor_value_info("c", TensorProto.BOOL, []),
         helper.make_tensor_value_info("o", TensorProto.FLOAT, [])])
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "x"], ["x2"]),
         helper.make_node("Loop", ["m", "c0"], ["os"], body=body)], "g",
        [helper.make_tensor_value_info(n, t, []) for n, t in
         (("x", TensorProto.FLOAT), ("m", TensorProto.INT64), ("c0", TensorProto.BOOL))],
        [helper.make_tensor_value_info("os", TensorProto.FLOAT, [None])])
    assert body_op_types(helper.make_model(graph)) == ["Identity", "If", "Neg"]


def test_a_body_call_runs_alone_on_the_values_it_reads_on_a_trip():
    # rule: onnx/node -- Neg of a moving value a (a0 = -2, then -1.75 on trip 1), then Add of
    # that and a fixed b = 1.75: on trip 1 the Add reads 1.75 and 1.75
    neg = OpCall("Neg", OPSET, (Port("data", "float32", ()),), outputs=(("float32", ()),))
    add = OpCall("Add", OPSET, (Port("data", "float32", ()), Port("data", "float32", ())),
                 outputs=(("float32", ()),))
    r = OnnxSchemaRecipe("loop", (BodyCall(neg, ("step",), ("none",)),
                                  BodyCall(add, ("prev:0:0", "fixed"), ("scan",))), trips=2)
    model, feeds = r.alone(1, trip=1)
    assert [n.op_type for n in model.graph.node] == ["Add"]
    assert feeds == {"x0": 1.75, "x1": 1.75}
    import lazyloop.onnx as lo
    assert lo.evaluate(model, feeds)["y0"] == 3.5
    outputs, _, _ = dt.Subject(r.kind, "onnx", r.program()).expectation()
    assert np.array_equal(outputs["b_y1_0_stacked"], [3.75, 3.5])  # 2 + 1.75, 1.75 + 1.75


def test_a_fault_in_a_schema_body_shrinks_to_one_call():
    # rule: onnx/loop -- every Loop runs one trip too many: found in the schema kinds and
    # shrunk to one call of one op in one Loop
    report = dt.check(dt.TripCountPlusOne(dt.backend("lazyloop")), max_examples=30, seed=0,
                      kinds=["onnx-schema-loop"], isolate=False, shrink_steps=100)
    assert report.disagreements, report.summary()
    for d in report.disagreements:
        recipe = d.subject.program.recipe
        assert len(recipe.calls) == 1 and recipe.trips <= 2, recipe


def test_the_saved_catalogue_is_the_search_s_own_answer(tmp_path, monkeypatch):
    # rule: onnx/node -- the calls saved with the package (op_catalogue.json) are exactly
    # what searching again gives, reprs included (a subject's key is its repr); regenerate
    # with `python -m lazyloop.strategies.save_catalogue` when this fails
    from lazyloop.strategies import op_catalogue
    from lazyloop.strategies.save_catalogue import searched
    table = op_catalogue.saved(OPSET)
    assert table is not None, "op_catalogue.json is stale: python -m " \
                              "lazyloop.strategies.save_catalogue writes it again"
    fresh = searched(OPSET)
    assert repr(table) == repr(fresh) and table == fresh
    assert set(search.catalogue(OPSET)) == set(fresh)
    # a saved answer for another search (another onnx, other sources) is never used
    path = tmp_path / "c.json"
    op_catalogue.write(OPSET, {"Abs": fresh["Abs"]}, path)
    text = path.read_text().replace('"onnx": "', '"onnx": "0.')
    path.write_text(text)
    monkeypatch.setattr(op_catalogue, "SAVED", path)
    op_catalogue.saved.cache_clear()
    try:
        assert op_catalogue.saved(OPSET) is None
    finally:
        op_catalogue.saved.cache_clear()
