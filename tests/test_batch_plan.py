"""A batched run's plan (lazyloop/core/engine/batch.py `BatchPlan`, batch_steps.py): what the
batches of a run are made of is decided once per demand, and a map whose batched form is an
exact elementwise one (`Elementwise.exact`) computes no element again to check it -- its
values are still each element's, bit for bit (rules: stream/map, iterator/forward,
stream/memo). Expected values come from numpy, row by row."""
import types

import numpy as np
import pytest

import lazyloop as ll
from lazyloop.core.engine import EngineMachine, Options, batch
from lazyloop.core.engine.batch import FEWEST_WHOLE
from lazyloop.core.engine.batch_steps import exact_batch
from lazyloop.core.evaluate import check_feeds
from lazyloop.core.kernel import Elementwise, Kernel, elementwise, kernel_of, same_values
from lazyloop.core.plan import compile_network
from lazyloop.core.undefined import split
from nets import batched_runs, concat, const, kernel_over_rows, on_engine

ROWS = FEWEST_WHOLE + 5  # a run the engine batches wholly
rng = np.random.default_rng(7)


def counted_sqrt(form):
    """A kernel y = sqrt(x) whose per-element calls are counted, with batched form `form`."""
    calls = []

    def function(v):
        calls.append(1)
        return (np.sqrt(v),)
    return Kernel(function, batched=form), calls


def test_exact_forms_are_the_ieee_exact_ufuncs_and_the_identity():
    # rule: stream/map -- one rounding per element, whichever loop: exact; anything after
    # the ufunc (a cast back) or a function computed another way in SIMD (exp): not
    assert elementwise(np.subtract).exact and elementwise(same_values).exact
    assert elementwise(np.sqrt).exact
    assert not elementwise(np.exp).exact
    assert not elementwise(np.subtract, lambda r, a: r).exact
    assert repr(elementwise(np.subtract)) == "elementwise(subtract)"
    assert isinstance(elementwise(np.add), Elementwise)

    class Unhashable:
        __hash__ = None

        def __call__(self, x):
            return x
    assert not elementwise(Unhashable()).exact


def test_an_exact_batch_computes_no_element_again_and_equals_numpy():
    # rule: stream/map -- sqrt batched exactly: the kernel never runs per element, and each
    # row is numpy's sqrt of that row alone
    x = rng.uniform(0, 9, (ROWS, 3)).astype(np.float32)
    kernel, calls = counted_sqrt(elementwise(np.sqrt))
    values, machine = on_engine(kernel_over_rows(kernel, ROWS, 3, "Sqrt"), {"x": x})
    (got,) = values.values()
    want = np.stack([np.sqrt(row) for row in x])
    assert got.dtype == np.float32 and got.tobytes() == want.tobytes()
    assert calls == []
    assert any(len(run) == 2 for run in batched_runs(machine))  # the iterator and the map


def test_a_form_not_known_exact_is_checked_at_its_first_and_last_elements():
    # rule: stream/map -- the same kernel whose form does something after the ufunc: the
    # kernel runs on elements 0 and last to check the batch, and the values are the same
    x = rng.uniform(0, 9, (ROWS, 3)).astype(np.float32)
    kernel, calls = counted_sqrt(elementwise(np.sqrt, lambda result, first: result))
    values, _ = on_engine(kernel_over_rows(kernel, ROWS, 3, "Sqrt"), {"x": x})
    (got,) = values.values()
    assert got.tobytes() == np.stack([np.sqrt(row) for row in x]).tobytes()
    assert len(calls) == 2


def test_an_exact_form_on_arguments_of_two_dtypes_is_checked():
    # rule: stream/map -- numpy before 2 types a 0-D element by its value, a stack by its
    # dtype: arguments of two dtypes take the checked path (element 0 and last computed
    # again), which gives numpy's row-by-row values
    calls = []

    def add(a, b):
        calls.append(1)
        return np.add(a, b)
    node = types.SimpleNamespace(id="y", fn=add, kernel=Kernel(add, batched=elementwise(np.add)))
    rows = rng.standard_normal((ROWS, 3)).astype(np.float32)
    w = rng.standard_normal(3)  # float64
    got = exact_batch(node, [rows, w], (True, False), ROWS)
    want = np.stack([np.add(row, w) for row in rows])
    assert got.dtype == want.dtype == np.float64 and got.tobytes() == want.tobytes()
    assert len(calls) == 2


def broadcast_difference(rows):
    """y_t = x_t - w over the rows of x [rows, 3], w [5, 3] (numpy broadcasting, ONNX
    profile): each element [5, 3]; CONCATENATE of the y_t."""
    net = ll.Network("onnx")
    x = net.add_input("x", ll.float32, (rows, 3))
    w = net.add_input("w", ll.float32, (5, 3))
    loop = net.add_loop()
    loop.add_trip_limit(const(net, rows, np.int32), ll.TripLimit.COUNT)
    e = loop.add_iterator(x).get_output(0)
    y = net.add_elementwise(e, w, ll.ElementWiseOperation.SUB).get_output(0)
    net.mark_output(concat(net, loop, y, rows))
    return net


@pytest.mark.parametrize("bound", [1 << 20, 400])
def test_an_exact_batch_broadcast_past_the_memory_bound_is_not_made(bound):
    # rule: stream/map -- the batch of x_t - w is ROWS x 5 x 3 float32 (1020 bytes) from
    # arguments of 204 and 60 bytes: its size is bounded before it is made, so with a bound
    # of 400 bytes only the iterator batches; the values are numpy's either way
    x = rng.standard_normal((ROWS, 3)).astype(np.float32)
    w = rng.standard_normal((5, 3)).astype(np.float32)
    plan = compile_network(broadcast_difference(ROWS))
    machine = EngineMachine(plan, check_feeds(plan, {"x": x, "w": w}), log=[],
                            options=Options(max_batch_bytes=bound))
    (got,) = [split(machine.demand(nid))[0] for _, nid in plan.outputs]
    want = np.stack([row - w for row in x])
    assert got.shape == (ROWS, 5, 3) and got.tobytes() == want.tobytes()
    streams = {k for run in batched_runs(machine) for k in run}
    assert streams and any("Iterator" in k or k.startswith("iterator") for k in streams)
    assert (len(streams) == 1) == (bound == 400), streams


def test_the_batch_plan_is_made_once_and_reads_as_its_steps(monkeypatch):
    # rule: stream/map -- a second evaluation of the same plan makes no step again; the plan
    # names each step's stream, and the exact map says so
    x = rng.standard_normal((ROWS, 3)).astype(np.float32)
    w = rng.standard_normal((5, 3)).astype(np.float32)
    plan = compile_network(broadcast_difference(ROWS))
    made = []
    real = batch.batch_step
    monkeypatch.setattr(batch, "batch_step", lambda d, node: made.append(node.id) or real(d, node))
    for _ in range(2):
        got = ll.evaluate(plan, {"x": x, "w": w})
        (value,) = got.values()
        assert np.asarray(value).tobytes() == np.stack([row - w for row in x]).tobytes()
    assert len(made) == len(set(made)) == 2  # the iterator and the map, once each
    (found,) = [v for k, v in plan.derived.items() if k[0] == "batch plan"]
    text = repr(found)
    assert text.startswith("BatchPlan(steps=(IteratedBatch(") and "exact)" in text


def test_a_raw_ufunc_as_a_one_output_function_is_not_batched_as_exact():
    # rule: stream/map -- a function layer's kernel returns a tuple whose first item is its
    # value; a raw ufunc given as one gives the first item of its array (the first value of
    # sqrt(x_t)), which its own elementwise form does not compute: the engine does exactly
    # what the reference does, value or error
    assert kernel_of(np.sqrt).first_value(1).batched is None
    x = rng.uniform(0, 9, (ROWS, 1)).astype(np.float32)
    net = kernel_over_rows(np.sqrt, ROWS, 1, "Sqrt")
    outcomes = []
    for mode in ("reference", "fast"):
        try:
            outcomes.append(np.asarray(ll.evaluate(net, {"x": x}, mode=mode)["y"]).tobytes())
        except ll.LazyLoopError as error:
            outcomes.append((type(error), error.rule))
    assert outcomes[0] == outcomes[1]
