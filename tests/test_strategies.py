"""The strategies of `lazyloop.strategies` draw what they promise: valid programs that
evaluate, as data that replays and prints, covering every rule they are meant to exercise;
and broken programs for every structure rule."""
from __future__ import annotations

import pickle

import numpy as np
from hypothesis import HealthCheck, find, given, settings

import lazyloop as ll
from lazyloop.strategies import (FAMILIES, STRUCTURE_RULES, Call, InvalidProgram, Program,
                                 SetAttr, invalid_programs, networks)

# every rule a valid program can exercise (rule: trip/count, trip/while, trip/both,
# iterator/forward, iterator/reverse, recurrence/def, output/last, output/concat,
# output/reverse, stream/invariant, stream/map, stream/order, structure/nesting,
# laziness/dead)
VALID_RULES = {
    "trip/count", "trip/while", "trip/both", "iterator/forward", "iterator/reverse",
    "recurrence/def", "output/last", "output/concat", "output/reverse", "stream/invariant",
    "stream/map", "stream/order", "structure/nesting", "laziness/dead",
}
FEATURES = {
    "zero-trips", "padding", "nested", "conditional", "select", "matmul", "unary",
    "activation", "binary", "counter-up", "counter-down", "counter-as-data",
    "varying-trips", "count-from-outer", "counter-from-outer", "iterates-outer-stream",
    "init-from-outer-stream", "invariant-from-outer-loop", "body-only-nesting",
    "sequential-loops", "iterates-loop-output", "dead-loop", "partly-needed-outputs",
    "inner-outputs-combined",
    "after-loop",
    "iterator-axis-0", "iterator-axis-1", "iterator-axis-2",
    "concatenate-axis-0", "concatenate-axis-1", "concatenate-axis-2",
    "reverse-axis-0", "reverse-axis-1", "reverse-axis-2",
    "recurrence-accumulate", "recurrence-scale", "recurrence-max", "recurrence-clip",
    "recurrence-shift", "recurrence-matmul", "recurrence-pair",
}
COLLECT = settings(max_examples=400, database=None, derandomize=True, deadline=None,
                   suppress_health_check=list(HealthCheck))


@given(networks())
def test_programs_build_and_evaluate(program):
    # rule: stream/shape -- every drawn program is a valid TensorRT-profile network
    net = program.net
    assert net.profile == "tensorrt"
    result = ll.run(net, program.feeds)
    assert set(result.outputs) == set(program.outputs)
    for name, value in result.outputs.items():
        finite = np.asarray(value)[result.defined[name]]
        assert np.all(np.isfinite(finite)) and np.all(np.abs(finite) <= 1e3), name


@given(networks())
def test_programs_are_data_that_replays(program):
    # the recipe is plain frozen data: it pickles, and replays to the same outputs, also
    # from its Python source with `lazyloop` in the role of `tensorrt`
    assert all(isinstance(step, (Call, SetAttr)) for step in program.steps)
    again = pickle.loads(pickle.dumps(program))
    assert again == program and hash(again) == hash(program)
    first = ll.evaluate(program.build(), program.feeds)
    second = ll.evaluate(again.build(), again.feeds)
    namespace = {"network": ll.Network(), "trt": ll, "np": np}
    exec(program.source("trt"), namespace)
    third = ll.evaluate(namespace["network"], program.feeds)
    for name in program.outputs:
        np.testing.assert_array_equal(first[name], second[name])
        np.testing.assert_array_equal(first[name], third[name])


@given(networks())
def test_feeds_are_fresh_arrays(program):
    a, b = program.feeds, program.feeds
    for name in a:
        assert a[name] is not b[name]
        np.testing.assert_array_equal(a[name], b[name])


def test_draws_cover_every_rule_and_feature():
    rules, features = set(), set()

    @COLLECT
    @given(networks(max_depth=2))
    def collect(program):
        rules.update(program.rules)
        features.update(program.features)

    collect()
    assert VALID_RULES <= rules, VALID_RULES - rules
    assert FEATURES <= features, FEATURES - features


def test_invalid_families_cover_every_structure_rule():
    # rule: structure/acyclic, structure/exit, structure/limits, structure/recurrence,
    # structure/while-input, structure/last-value, structure/length, structure/nesting,
    # recurrence/def, profile/tensorrt-dtypes
    assert set(STRUCTURE_RULES) <= set(FAMILIES)
    seen = set()

    @COLLECT
    @given(invalid_programs())
    def collect(case):
        assert isinstance(case, InvalidProgram)
        seen.add((case.rule, case.variant))

    collect()
    assert {rule for rule, _ in seen} == set(FAMILIES)
    assert len(seen) >= 2 * len(FAMILIES)  # several ways to break most rules


def test_programs_shrink_to_a_few_layers():
    # a nested loop whose output is padded shrinks to a short recipe
    def wanted(program):
        return {"nested", "padding"} <= program.features

    small = find(networks(), wanted, settings=settings(
        max_examples=1000, database=None, derandomize=True, deadline=None,
        suppress_health_check=list(HealthCheck)))
    assert isinstance(small, Program)
    assert len(small.steps) <= 60, small
    assert sum(1 for s in small.steps if getattr(s, "method", None) == "add_loop") == 2, small
