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
from hypothesis import given, strategies as st

import lazyloop as ll
from lazyloop.core.errors import FuelExhausted, LazyLoopError
from lazyloop.core.evaluate import ForceEvent
from lazyloop.strategies import invalid_networks
from nets import LESS, SUM, concat, const, counter, last

ROOT = Path(__file__).resolve().parents[1]
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
    for key in ("last", "stacked", "activation", "matmul", "reduce", "slice", "concatenation",
                "gather", "cast", "identity", "if_output"):
        net.mark_output(objs[key].get_output(0))
    feeds = {"x": np.arange(4, dtype=np.float32), "m": np.ones((2, 2), np.float32)}
    return net, feeds, objs


FOREIGN = ll.Network().add_input("foreign", ll.float32, (1,))
MISUSE = [None, "0", "x", "", 1.5, float("nan"), -9, 5, 2**40, -2**40, True, object(), [],
          (1, "a"), {"a": 1}, FOREIGN, np.float32(1.0), b"1", ll.float32, ll.TripLimit.WHILE,
          ll.ElementWiseOperation.SUM, len]


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
    if as_attribute and attrs:
        setattr(obj, attrs[pick % len(attrs)], args[0])
        return
    methods = public_methods(obj)
    method = getattr(obj, methods[pick % len(methods)])
    try:
        arity = len([p for p in inspect.signature(method).parameters.values()
                     if p.default is p.empty and p.kind is p.POSITIONAL_OR_KEYWORD])
    except (TypeError, ValueError):
        arity = 1
    method(*(args * 4)[:arity])


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

GENERIC_FIXES = {"", "fix it", "fix the network", "fix the model", "see the docs", "check it"}


def assert_three_parts(error: LazyLoopError):
    assert error.where and error.where.strip(), error
    assert error.rule and "/" in error.rule, error
    fix = (error.fix or "").strip()
    assert fix.lower() not in GENERIC_FIXES and len(fix) >= 8, f"no real fix: {error}"


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
