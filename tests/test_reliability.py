"""Reliability: misuse is answered with LazyLoopError (never a raw Python exception or a hang),
every error says where, which rule and what to do, fuel errors come at once or in seconds, and
the fast path keeps a few elements of a carried state.

The families replay what a fuzz campaign found (issue 15). Under the default Hypothesis
profile the module runs a few hundred cases; HYPOTHESIS_PROFILE=campaign runs thousands.
"""
from __future__ import annotations

import ast
import inspect
import os
import subprocess
import sys
import weakref
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import lazyloop as ll
from lazyloop.core.errors import FuelExhausted, LazyLoopError
from lazyloop.core.evaluate import ForceEvent
from lazyloop.strategies import invalid_networks
from nets import LESS, SUM, concat, const, counter, last

ROOT = Path(__file__).resolve().parents[1]
# a few hundred cases in the default profile, the profile's own count under "campaign"
MANY = settings(max_examples=max(100, settings.default.max_examples))
ENV = dict(os.environ, PYTHONPATH=str(ROOT))


# ------------------------------------------------------------------------------------------
# A network with one layer of every builder kind, and random misuse of its public surface
# ------------------------------------------------------------------------------------------

def every_layer_network():
    """x: float32[4]; a loop summing x's elements (COUNT 4) and stacking them, with one layer
    of each kind beside it. Returns (network, feeds, {name: builder object})."""
    net = ll.Network()
    x = net.add_input("x", ll.float32, (4,))
    m = net.add_input("m", ll.float32, (2, 2))
    objs = {"network": net}
    loop = net.add_loop()
    objs["loop"] = loop
    objs["trip_limit"] = loop.add_trip_limit(const(net, 4, np.int32), ll.TripLimit.COUNT)
    it = loop.add_iterator(x)
    acc = loop.add_recurrence(const(net, 0.0, np.float32))
    add = net.add_elementwise(acc.get_output(0), it.get_output(0), SUM)
    acc.set_input(1, add.get_output(0))
    objs.update(iterator=it, recurrence=acc, elementwise=add)
    objs["last"] = loop.add_loop_output(acc.get_output(0), ll.LoopOutput.LAST_VALUE)
    stacked = loop.add_loop_output(it.get_output(0), ll.LoopOutput.CONCATENATE, 0)
    stacked.set_input(1, const(net, 4, np.int32))
    objs["stacked"] = stacked
    objs["unary"] = net.add_unary(x, ll.UnaryOperation.ABS)
    objs["activation"] = net.add_activation(objs["unary"].get_output(0), ll.ActivationType.RELU)
    objs["matmul"] = net.add_matrix_multiply(m, ll.MatrixOperation.NONE, m,
                                             ll.MatrixOperation.TRANSPOSE)
    objs["reduce"] = net.add_reduce(m, ll.ReduceOperation.SUM, 1, False)
    objs["shuffle"] = net.add_shuffle(m)
    objs["shuffle"].reshape_dims = (4,)
    objs["slice"] = net.add_slice(x, (0,), (2,), (1,))
    objs["concatenation"] = net.add_concatenation([x, objs["shuffle"].get_output(0)])
    objs["gather"] = net.add_gather(x, const(net, [1, 0], np.int32), 0)
    objs["cast"] = net.add_cast(x, ll.int32)
    objs["identity"] = net.add_identity(x)
    objs["select"] = net.add_select(net.add_elementwise(x, x, ll.ElementWiseOperation.EQUAL)
                                    .get_output(0), x, x)
    cond = net.add_if_conditional()
    objs["conditional"] = cond
    cond.set_condition(const(net, True, np.bool_))
    inside = cond.add_input(x)
    objs["if_output"] = cond.add_output(inside.get_output(0), x)
    objs["input_tensor"], objs["output_tensor"] = x, add.get_output(0)
    for key in ("last", "stacked", "activation", "matmul", "reduce", "slice", "concatenation",
                "gather", "cast", "identity", "if_output"):
        net.mark_output(objs[key].get_output(0))
    feeds = {"x": np.arange(4, dtype=np.float32), "m": np.ones((2, 2), np.float32)}
    return net, feeds, objs


FOREIGN = ll.Network().add_input("foreign", ll.float32, (1,))
MISUSE = [None, "0", "x", "", 1.5, float("nan"), -9, 5, 2**40, -2**40, True, object(), [],
          (1, "a"), {"a": 1}, FOREIGN, np.float32(1.0), b"1", ll.float32, ll.TripLimit.WHILE,
          ll.ElementWiseOperation.SUM, len, 0, 1, 2, -1, 3, (2,), (0,), (1, 0), (4, 1), (-1,),
          np.int64(1), ll.MatrixOperation.VECTOR, ll.LoopOutput.REVERSE, ll.int32]


def public_methods(obj):
    """The builder surface: public methods, less the core's own typing hooks of layers."""
    hooks = getattr(obj, "EVALUATOR_HOOKS", frozenset())
    return sorted(n for n, v in inspect.getmembers(type(obj)) if not n.startswith("_")
                  and n not in hooks and n.isidentifier() and n != "EVALUATOR_HOOKS"
                  and callable(v) and not isinstance(inspect.getattr_static(type(obj), n),
                                                     (property, type)))


def public_attributes(obj):
    if isinstance(obj, ll.Network):
        return []
    return sorted({"name"} | {k for k in vars(obj) if not k.startswith("_")})


@st.composite
def misuses(draw):
    """(target key, method or attribute, args): a call with some args drawn from MISUSE and
    some valid tensors of the network, or an attribute assignment."""
    key = draw(st.sampled_from(sorted(every_layer_network()[2])))
    return key, draw(st.integers(0, 10**6)), draw(st.lists(st.integers(0, 10**6), min_size=1,
                                                          max_size=4)), draw(st.booleans())


def apply_misuse(objs, net, key, pick, arg_picks, as_attribute):
    obj = objs[key]
    tensors = [net.get_input(0), net.get_input(1), objs["elementwise"].get_output(0)]
    pool = MISUSE + tensors
    args = [pool[p % len(pool)] for p in arg_picks]
    attrs = public_attributes(obj)
    methods = public_methods(obj)
    if (as_attribute or not methods) and attrs:
        setattr(obj, attrs[pick % len(attrs)], args[0])
        return
    method = getattr(obj, methods[pick % len(methods)])
    params = [p for p in inspect.signature(method).parameters.values()
              if p.kind is p.POSITIONAL_OR_KEYWORD]
    required = len([p for p in params if p.default is p.empty])
    arity = required + pick % (len(params) - required + 1)  # some optional ones too
    method(*(args * 6)[:arity])


@MANY
@given(misuses(), st.lists(misuses(), max_size=3))
def test_random_misuse_raises_only_lazyloop_errors(first, more):
    # rule: structure/builder-args -- every public builder method and layer attribute,
    # driven with None, strings, floats, foreign tensors and out-of-range ints
    net, feeds, objs = every_layer_network()
    for key, pick, arg_picks, as_attribute in [first] + more:
        try:
            apply_misuse(objs, net, key, pick, arg_picks, as_attribute)
        except LazyLoopError:
            pass
    for evaluator in (lambda: ll.evaluate(net, feeds, max_trips=50),
                      lambda: ll.run(net, feeds, max_trips=50),
                      lambda: ll.run(net, feeds, max_trips=50, trace=False)):
        try:
            evaluator()
        except LazyLoopError:
            pass


def test_the_misuse_network_evaluates_when_untouched():
    net, feeds, _ = every_layer_network()
    out = ll.evaluate(net, feeds)
    values = list(out.values())
    assert float(values[0]) == 0 + 1 + 2 + 3  # LAST_VALUE of the running sum
    np.testing.assert_array_equal(values[1], np.arange(4, dtype=np.float32))  # stacked x


def test_the_introspection_reaches_every_builder_surface():
    _, _, objs = every_layer_network()
    assert {"add_recurrence", "add_loop_output", "add_trip_limit"} <= set(public_methods(objs["loop"]))
    assert {"get_input", "get_layer", "add_concatenation"} <= set(public_methods(objs["network"]))
    assert {"set_input", "get_input", "get_output"} <= set(public_methods(objs["elementwise"]))
    assert {"op", "name"} <= set(public_attributes(objs["elementwise"]))
    assert {"reshape_dims", "first_transpose"} <= set(public_attributes(objs["shuffle"]))


# the calls the fuzz campaign saw escape as AttributeError, TypeError, ValueError, KeyError
CAMPAIGN_MISUSES = [
    lambda o: o["loop"].add_recurrence(None),
    lambda o: o["loop"].add_loop_output(None, ll.LoopOutput.LAST_VALUE),
    lambda o: o["elementwise"].set_input(None, o["network"].get_input(0)),
    lambda o: o["elementwise"].set_input("1", o["network"].get_input(0)),
    lambda o: o["network"].get_input("0"),
    lambda o: o["network"].get_layer(None),
    lambda o: o["network"].get_layer(1.5),
    lambda o: setattr(o["elementwise"], "op", -9),
    lambda o: setattr(o["reduce"], "op", 5),
    lambda o: setattr(o["shuffle"], "reshape_dims", ("a", "b")),
    lambda o: setattr(o["concatenation"], "axis", "0"),
    lambda o: setattr(o["iterator"], "axis", 2.0),
    lambda o: setattr(o["stacked"], "kind", ll.LoopOutput.REVERSE),
    lambda o: o["loop"].add_iterator(o["network"].get_input(0), "0"),
    lambda o: o["network"].add_input("y", "not a dtype", (1,)),
    lambda o: o["network"].add_constant((2,), ["a", "b"]),
]


@pytest.mark.parametrize("misuse", range(len(CAMPAIGN_MISUSES)))
def test_campaign_misuses_are_structure_errors_and_change_nothing(misuse):
    # rule: structure/builder-args
    net, feeds, objs = every_layer_network()
    before = ll.evaluate(net, feeds)
    with pytest.raises(ll.StructureError) as info:
        CAMPAIGN_MISUSES[misuse](objs)
    assert info.value.rule in ("structure/builder-args", "stream/shape", "iterator/forward")
    assert info.value.fix
    after = ll.evaluate(net, feeds)  # the refused change left the network as it was
    for k in before:
        np.testing.assert_array_equal(before[k], after[k])


def test_a_refused_attribute_keeps_the_old_value():
    _, _, objs = every_layer_network()
    with pytest.raises(ll.StructureError):
        objs["reduce"].axes = 8  # bit 3: m has rank 2
    assert objs["reduce"].axes == 1
    objs["elementwise"].op = 4  # TensorRT's integer value of SUB is accepted
    assert objs["elementwise"].op is ll.ElementWiseOperation.SUB


@pytest.mark.parametrize("call", [
    lambda net, feeds: ll.evaluate("net", {}),
    lambda net, feeds: ll.run(42, {}),
    lambda net, feeds: ll.evaluate(net, feeds, max_trips=None),
    lambda net, feeds: ll.evaluate(net, feeds, max_trips="5"),
    lambda net, feeds: ll.evaluate(net, feeds, max_trips=2.5),
    lambda net, feeds: ll.evaluate(net, feeds, max_trips=-1),
    lambda net, feeds: ll.evaluate(net, feeds, max_trips=True),
    lambda net, feeds: ll.evaluate(net, feeds, max_seconds=-1),
    lambda net, feeds: ll.run(net, feeds, max_seconds="1"),
    lambda net, feeds: ll.run(net, feeds, trace="all"),
    lambda net, feeds: ll.evaluate(net, [1, 2]),
])
def test_bad_options_are_input_errors(call):
    net, feeds, _ = every_layer_network()
    with pytest.raises(ll.LazyLoopError) as info:
        call(net, feeds)
    assert info.value.fix


# ------------------------------------------------------------------------------------------
# Every LazyLoopError has where, rule and what to do
# ------------------------------------------------------------------------------------------

# fix texts that say nothing about what to do (the last three were in lazyloop before issue 15)
GENERIC_FIXES = {"", "fix it", "fix the network", "fix the model", "see the docs", "check it",
                 "check the inputs reaching this layer", "check the node's attributes",
                 "check the node against its operator's definition"}


def assert_three_parts(error: LazyLoopError):
    assert error.where and error.where.strip(), error
    assert error.rule and "/" in error.rule, error
    fix = (error.fix or "").strip()
    assert fix.lower() not in GENERIC_FIXES and len(fix) >= 8, f"no real fix: {error}"


@MANY
@given(invalid_networks())
def test_invalid_programs_errors_have_where_rule_and_fix(case):
    build, _ = case
    with pytest.raises(LazyLoopError) as info:
        net, feeds = build()
        ll.run(net, feeds)
    assert_three_parts(info.value)


def error_classes():
    import lazyloop.core.errors as errors
    names = {n for n, v in vars(errors).items() if isinstance(v, type)
             and issubclass(v, LazyLoopError)}
    return names | {"UnknownReading", "ExportError"}


def test_every_error_site_passes_a_fix():
    """The static walk: every construction of a LazyLoopError (and every layer `refuse`) in
    lazyloop/ passes a what-to-do text."""
    names = error_classes()
    missing = []
    for path in (ROOT / "lazyloop").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call):
                continue
            f = node.func
            name = f.id if isinstance(f, ast.Name) else getattr(f, "attr", None)
            given_fix = any(k.arg == "fix" for k in node.keywords)
            starred = any(isinstance(a, ast.Starred) for a in node.args)
            if name in names and len(node.args) < 4 and not given_fix and not starred:
                missing.append(f"{path.relative_to(ROOT)}:{node.lineno}")
            if name == "refuse" and isinstance(f, ast.Attribute) and len(node.args) < 2 \
                    and not given_fix:
                missing.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not missing, f"error sites without a fix: {missing}"


# ------------------------------------------------------------------------------------------
# Mutated ONNX models: only LazyLoopError escapes, and each has its three parts
# ------------------------------------------------------------------------------------------

def all_nodes(graph):
    for node in graph.node:
        yield graph, node
        for a in node.attribute:
            for g in ([a.g] if a.HasField("g") else []) + list(a.graphs):
                yield from all_nodes(g)


def mutate(model, rng):
    """One random damage to a copy of `model`: an attribute dropped, retyped or emptied, an
    input renamed, an op or dtype changed, an opset or a dimension made absurd, an output or a
    body output removed."""
    import onnx
    from onnx import AttributeProto, TensorProto

    m = onnx.ModelProto()
    m.CopyFrom(model)
    places = list(all_nodes(m.graph))
    graph, node = places[rng.integers(len(places))]
    kind = rng.integers(10)
    if kind == 0 and node.attribute:
        del node.attribute[rng.integers(len(node.attribute))]
    elif kind == 1 and node.attribute:
        a = node.attribute[rng.integers(len(node.attribute))]
        name = a.name
        a.Clear()
        a.name, a.type, a.i = name, AttributeProto.INT, int(rng.integers(-3, 3))
    elif kind == 2 and node.input:
        node.input[rng.integers(len(node.input))] = rng.choice(["", "nowhere", node.output[0]])
    elif kind == 3:
        node.op_type = rng.choice(["Frobnicate", "Loop", "Scan", "If", "Add"])
    elif kind == 4 and graph.input:
        vi = graph.input[rng.integers(len(graph.input))]
        vi.type.tensor_type.elem_type = int(rng.choice([0, TensorProto.STRING, TensorProto.BOOL,
                                                         TensorProto.INT8, 99]))
    elif kind == 5:
        m.opset_import[0].version = int(rng.choice([1, 7, 99]))
    elif kind == 6 and graph.input:
        vi = graph.input[rng.integers(len(graph.input))]
        shape = vi.type.tensor_type.shape
        dim = shape.dim.add() if not shape.dim else shape.dim[rng.integers(len(shape.dim))]
        dim.dim_value = int(rng.choice([2**62, -5, 0, 7]))
    elif kind == 7 and graph.output:
        del graph.output[rng.integers(len(graph.output))]
    elif kind == 8 and node.output:
        node.output[rng.integers(len(node.output))] = rng.choice(["", node.input[0] if node.input
                                                                  else "z"])
    else:
        node.ClearField("input")
    return m


@MANY
@given(st.data(), st.integers(0, 2**32 - 1))
def test_mutated_onnx_models_raise_lazyloop_errors_with_a_fix(data, seed):
    import lazyloop.onnx as lo
    from lazyloop.strategies import onnx_loops
    program = data.draw(onnx_loops())
    rng = np.random.default_rng(seed)
    model = program.model
    for _ in range(1 + rng.integers(2)):
        model = mutate(model, rng)
    feeds = program.feeds
    try:
        lo.evaluate(model, feeds, max_trips=100)
    except LazyLoopError as error:
        assert_three_parts(error)


# ------------------------------------------------------------------------------------------
# Fuel: refused at once when known, in seconds otherwise; the message names the right limit
# ------------------------------------------------------------------------------------------

def stacked_counter(count, with_while=False):
    net = ll.Network()
    loop = net.add_loop()
    loop.add_trip_limit(const(net, count, np.int64 if count > 2**31 else np.int32),
                        ll.TripLimit.COUNT)
    c, nxt = counter(net, loop, dtype=np.float32)
    if with_while:
        loop.add_trip_limit(net.add_elementwise(c, c, ll.ElementWiseOperation.EQUAL)
                            .get_output(0), ll.TripLimit.WHILE)
    out = loop.add_loop_output(c, ll.LoopOutput.CONCATENATE)
    if count < 2**31:
        out.set_input(1, const(net, count, np.int32))
    else:
        out.set_input(1, const(net, count, np.int64))
    net.mark_output(out.get_output(0))
    return net


@pytest.mark.parametrize("evaluator", ["evaluate", "run", "run-untraced"])
def test_a_count_above_the_fuel_is_refused_before_the_first_trip(evaluator):
    # rule: trip/count -- 2**62 trips kept by CONCATENATE: refused at once (not after the fuel)
    net = ll.Network(profile="onnx")
    loop = net.add_loop()
    loop.add_trip_limit(const(net, 2**62, np.int64), ll.TripLimit.COUNT)
    c, _ = counter(net, loop, dtype=np.float32)
    net.mark_output(loop.add_loop_output(c, ll.LoopOutput.CONCATENATE).get_output(0))
    call = {"evaluate": lambda: ll.evaluate(net, {}),
            "run": lambda: ll.run(net, {}),
            "run-untraced": lambda: ll.run(net, {}, trace=False)}[evaluator]
    with pytest.raises(FuelExhausted) as info:
        call()
    assert info.value.rule == "trip/count"
    assert "2" in info.value.problem and "max_trips" in info.value.problem
    assert info.value.where == loop.name


def runaway_counter():
    """A float counter whose WHILE input, x == x, holds for ever (never a fixed point)."""
    net = ll.Network()
    loop = net.add_loop()
    c, _ = counter(net, loop, dtype=np.float32)
    loop.add_trip_limit(net.add_elementwise(c, c, ll.ElementWiseOperation.EQUAL).get_output(0),
                        ll.TripLimit.WHILE)
    net.mark_output(last(loop, c))
    return net


@pytest.mark.parametrize("fast", [True, False])
def test_a_runaway_while_loop_cites_trip_while(fast):
    # rule: trip/while -- x == x holds forever: fuel stops it after max_trips trips
    net = runaway_counter()
    with pytest.raises(FuelExhausted) as info:
        (ll.evaluate if fast else ll.run)(net, {}, max_trips=1000)
    assert info.value.rule == "trip/while" and "1000" in info.value.problem


def test_a_count_above_the_fuel_with_a_while_cites_the_count():
    # rule: trip/count -- COUNT 10**9 and an always-true WHILE: the count let it run on
    with pytest.raises(FuelExhausted) as info:
        ll.evaluate(stacked_counter(10**9, with_while=True), {}, max_trips=50)
    assert info.value.rule == "trip/count" and "50" in info.value.problem


@pytest.mark.parametrize("fast", [True, False])
def test_the_wall_time_budget_stops_a_runaway_loop(fast):
    # rule: trip/while -- fuel of 10**12 trips, but a budget of 0.2 s: it stops (no timing
    # is asserted: only that the budget, not the trip fuel, ended it)
    net = runaway_counter()
    with pytest.raises(FuelExhausted) as info:
        (ll.evaluate if fast else ll.run)(net, {}, max_trips=10**12, max_seconds=0.2)
    assert "max_seconds=0.2" in info.value.problem


def test_a_budget_does_not_change_a_loop_that_finishes():
    net = stacked_counter(5)
    out = list(ll.evaluate(net, {}, max_seconds=60).values())[0]
    np.testing.assert_array_equal(out, np.arange(5, dtype=np.float32))  # counter 0..4


def test_a_count_within_the_fuel_runs():
    # rule: trip/count -- exactly max_trips trips is fine
    out = list(ll.evaluate(stacked_counter(7), {}, max_trips=7).values())[0]
    np.testing.assert_array_equal(out, np.arange(7, dtype=np.float32))
    with pytest.raises(FuelExhausted) as info:
        ll.evaluate(stacked_counter(8), {}, max_trips=7)
    assert info.value.rule == "trip/count"


def onnx_runaway(name):
    """ONNX Loop "name": no M, cond true, the body passes cond through and counts: runs
    forever (and never reaches a fixed point, which would end it at once)."""
    import onnx
    from onnx import TensorProto as T, helper
    body = helper.make_graph(
        [helper.make_node("Identity", ["c_in"], ["c_out"]),
         helper.make_node("Add", ["x_in", "x_in"], ["x_out"])], "body",
        [helper.make_tensor_value_info("i", T.INT64, []),
         helper.make_tensor_value_info("c_in", T.BOOL, []),
         helper.make_tensor_value_info("x_in", T.FLOAT, [])],
        [helper.make_tensor_value_info("c_out", T.BOOL, []),
         helper.make_tensor_value_info("x_out", T.FLOAT, [])])
    graph = helper.make_graph(
        [helper.make_node("Loop", ["", "c", "x"], ["y"], name=name, body=body)], "g",
        [helper.make_tensor_value_info("c", T.BOOL, []),
         helper.make_tensor_value_info("x", T.FLOAT, [])],
        [helper.make_tensor_value_info("y", T.FLOAT, [])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_onnx_fuel_errors_name_the_models_loop_node():
    import lazyloop.onnx as lo
    with pytest.raises(FuelExhausted) as info:
        lo.evaluate(onnx_runaway("my_runaway"), {"c": np.array(True), "x": np.float32(1)},
                    max_trips=100)
    assert "my_runaway" in info.value.where and info.value.rule == "trip/while"


def test_openvino_fuel_errors_name_the_models_loop_node():
    pytest.importorskip("openvino")
    import lazyloop.openvino as lov
    from lazyloop.openvino.examples import counter_loop
    model = counter_loop(trip=2**62, cond=True)
    with pytest.raises(FuelExhausted) as info:
        lov.evaluate(model, {"X": np.zeros((1, 2), np.float32)}, max_trips=100)
    assert "counter_loop" in info.value.where and "loop0" not in str(info.value)
    assert info.value.rule == "trip/count"  # M = 2**62 let it run past the fuel


# ------------------------------------------------------------------------------------------
# Memory: the fast path keeps a few elements of a carried state; traces hold small events
# ------------------------------------------------------------------------------------------

def test_the_fast_path_keeps_at_most_four_elements_of_a_carried_state():
    # rule: stream/memo -- count the live results of the body's function with weak references
    live, peak = set(), [0]

    class Element(np.ndarray):
        pass

    def step(s):
        out = (np.asarray(s) + 1).view(Element)
        key = id(out)
        live.add(key)
        weakref.finalize(out, live.discard, key)
        peak[0] = max(peak[0], len(live))
        return out

    net = ll.Network()
    loop = net.add_loop()
    loop.add_trip_limit(const(net, 200, np.int32), ll.TripLimit.COUNT)
    s = loop.add_recurrence(const(net, np.zeros(8), np.float32))
    nxt = net.add_function(lambda v: (step(v),), [s.get_output(0)],
                           [ll.TensorType(ll.float32, (8,))])
    s.set_input(1, nxt.get_output(0))
    net.mark_output(last(loop, s.get_output(0)))
    out = list(ll.evaluate(net, {}).values())[0]
    np.testing.assert_array_equal(out, np.full(8, 200, np.float32))  # 200 times +1
    assert 1 <= peak[0] <= 4, peak[0]
    peak[0] = 0
    live.clear()
    ll.run(net, {}, trace=False)
    assert 1 <= peak[0] <= 4, peak[0]


def test_traces_hold_small_events_and_can_be_bounded():
    # rule: stream/order
    net = stacked_counter(6)
    full = ll.run(net, {})
    assert full.trace and all(type(e) is ForceEvent for e in full.trace)
    assert all(not isinstance(getattr(e, f), np.ndarray) for e in full.trace
               for f in ("loop", "stream", "index", "activation", "by"))
    bounded = ll.run(net, {}, trace=5)
    assert bounded.trace == full.trace[-5:]
    sink = []  # any object with append is handed every event, in order
    assert ll.run(net, {}, trace=sink).trace == full.trace and sink == full.trace
    assert ll.run(net, {}, trace=False).trace is None  # no trace, not an empty one
    for run in (bounded, ll.run(net, {}, trace=False)):
        np.testing.assert_array_equal(list(run.outputs.values())[0], np.arange(6, dtype=np.float32))


# ------------------------------------------------------------------------------------------
# No hang on absurd declared shapes
# ------------------------------------------------------------------------------------------

ABSURD = r'''
import numpy as np
from onnx import TensorProto as T, helper
import lazyloop.onnx as lo
from lazyloop.core.errors import LazyLoopError
x = helper.make_tensor_value_info("x", T.FLOAT, [2**62])
i = helper.make_tensor("i", T.INT64, [1], [0])
nodes = [helper.make_node("Gather", ["x", "i"], ["g"], axis=0),
         helper.make_node("Slice", ["x", "i", "e"], ["s"])]
e = helper.make_tensor("e", T.INT64, [1], [2])
g = helper.make_graph(nodes, "g", [x], [helper.make_tensor_value_info("g", T.FLOAT, None),
                      helper.make_tensor_value_info("s", T.FLOAT, None)], initializer=[i, e])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
try:
    lo.evaluate(m, {"x": np.zeros(3, np.float32)})
except LazyLoopError as err:
    print("refused", err.rule)
'''


def test_absurd_declared_dimensions_do_not_hang_shape_inference():
    # rule: stream/shape -- a 2**62 dimension read by Gather and Slice; the generous timeout
    # only guards the suite against the old hang
    done = subprocess.run([sys.executable, "-c", ABSURD], env=ENV, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "refused stream/shape"  # x is fed [3], declared [2**62]


def test_a_frontends_function_layer_may_leave_an_optional_input_absent():
    # rule: structure/builder-args -- None is an absent optional input of add_function, not
    # a misuse (the ONNX lowering passes it for an omitted input "")
    net = ll.Network(profile="onnx")
    x = net.add_input("x", ll.float32, (2,))
    f = net.add_function(lambda a, b: (a * 2 if b is None else a + b,), [x, None],
                         [ll.TensorType(ll.float32, (2,))])
    f.name = ""  # an ONNX value may be unnamed
    net.mark_output(f.get_output(0))
    out = list(ll.evaluate(net, {"x": np.array([1, 2], np.float32)}).values())[0]
    np.testing.assert_array_equal(out, [2, 4])  # b absent: a * 2


def test_a_chain_of_recurrences_is_kept_as_deep_as_it_is_read():
    # rule: stream/memo -- CONCATENATE(r3), r3 <- r2 <- r1 <- r1 + 1: r1 is computed on trip i
    # at index i - 2 reading r1 at i - 3; the schedule must still hold what that reads, and
    # force every element once, as the reference does
    from lazyloop.core.engine import EngineMachine
    from lazyloop.core.evaluate import check_feeds
    from lazyloop.core.plan import compile_network
    from lazyloop.core.undefined import split
    net = ll.Network()
    loop = net.add_loop()
    loop.add_trip_limit(const(net, 40, np.int32), ll.TripLimit.COUNT)
    r1 = loop.add_recurrence(const(net, 0.0, np.float32))
    r2 = loop.add_recurrence(const(net, -1.0, np.float32))
    r3 = loop.add_recurrence(const(net, -2.0, np.float32))
    r1.set_input(1, net.add_elementwise(r1.get_output(0), const(net, 1.0, np.float32), SUM)
                 .get_output(0))
    r2.set_input(1, r1.get_output(0))
    r3.set_input(1, r2.get_output(0))
    net.mark_output(concat(net, loop, r3.get_output(0), 40))
    plan = compile_network(net)
    machine = EngineMachine(plan, check_feeds(plan, {}))
    machine.record = []
    out = split(machine.demand(plan.outputs[0][1]))[0]
    # r3_k = r1_{k-2} = k - 2 for k >= 2; r3_0 = -2, r3_1 = r2_0 = -1
    np.testing.assert_array_equal(out, np.arange(-2, 38, dtype=np.float32))
    assert len(machine.record) == len(set(machine.record))
    reference = ll.run(plan, {})
    assert set(machine.record) == {(e.stream, e.index) for e in reference.trace
                                        if e.loop is not None}


def test_the_budget_also_stops_the_reference_while_it_forces_a_chain():
    # rule: trip/count -- 5000 trips are counted at once; forcing the chain of slow elements
    # behind LAST_VALUE is what takes time, and the budget stops it there
    import time as clock
    net = ll.Network()
    loop = net.add_loop()
    loop.add_trip_limit(const(net, 5000, np.int32), ll.TripLimit.COUNT)
    s = loop.add_recurrence(const(net, 0.0, np.float32))
    slow = net.add_function(lambda v: (clock.sleep(0.001) or v + 1,), [s.get_output(0)],
                            [ll.TensorType(ll.float32, ())])
    s.set_input(1, slow.get_output(0))
    net.mark_output(last(loop, s.get_output(0)))
    with pytest.raises(FuelExhausted) as info:
        ll.run(net, {}, max_seconds=0.2)
    assert "forcing element" in info.value.problem and info.value.rule == "trip/count"
    assert info.value.where == loop.name


def test_eight_threads_on_one_network_agree():
    # rule: stream/memo -- evaluations share the network and its cached plan, not elements
    from concurrent.futures import ThreadPoolExecutor
    net, feeds, _ = every_layer_network()
    expected = ll.evaluate(net, feeds)

    def one(k):
        out = ll.evaluate(net, feeds) if k % 2 else ll.run(net, feeds, trace=k % 3 == 0).outputs
        return all(np.array_equal(out[name], expected[name]) for name in expected)
    with ThreadPoolExecutor(8) as pool:
        assert all(pool.map(one, range(32)))
    np.testing.assert_array_equal(feeds["x"], np.arange(4, dtype=np.float32))  # untouched
