"""Batched map streams (lazyloop/core/batch.py): the fast path computes the demanded elements
of iterator-only streams in one kernel call, and still returns the reference evaluator's
values bit for bit, forces exactly its elements, and reports its errors (rules: stream/map,
iterator/forward, iterator/bounds, laziness/dead)."""
import numpy as np
import pytest
from hypothesis import given, settings

import lazyloop as ll
from lazyloop.core.kernel import Kernel
from lazyloop.core.engine import EngineMachine
from lazyloop.core.evaluate import check_feeds
from lazyloop.core.plan import compile_network
from lazyloop.core.undefined import split
from lazyloop.strategies import networks
from lazyloop.core.engine import Options
from lazyloop.core.engine.batch import FEWEST_BATCHED, FEWEST_WHOLE
from nets import (SUM, batched_runs, concat, const, kernel_over_rows, last, on_engine,
                  onnx_on_engine)

PROD, MAX = ll.ElementWiseOperation.PROD, ll.ElementWiseOperation.MAX


def both(net, feeds, mode="fast"):
    """(reference Evaluation, the engine's values in `mode`, the (stream, index) pairs the
    schedule forced, {loop: its demand analysis} for the loops the schedule ran, the
    engine's machine)."""
    plan = compile_network(net)
    reference = ll.run(plan, feeds)
    values, machine = on_engine(plan, feeds, mode=mode)
    ran = dict(machine.scheduled_loops)
    return reference, values, machine.record, ran, machine


def agree(net, feeds, mode="fast"):
    """The law on one program: the engine in `mode` gives the reference's values and masks
    and forces its elements. Returns (the reference's Evaluation, the engine's runs of a
    engine's machine, whose `log` says what each run of a schedule did)."""
    reference, values, record, ran, machine = both(net, feeds, mode)
    untraced = ll.run(net, feeds, trace=False, mode=mode)  # with the defined masks
    for name, want in reference.outputs.items():
        got = np.asarray(values[name])
        assert got.dtype == want.dtype and got.tobytes() == np.ascontiguousarray(want).tobytes()
        np.testing.assert_array_equal(untraced.defined[name], reference.defined[name])
    assert len(record) == len(set(record))  # stream/memo
    for loop in ran:  # the loops the schedule ran (nested ones: per outer element)
        forced = {r if len(r) == 3 else r + ((),) for r in record if r[0] in ran[loop].members}
        assert forced == {(e.stream, e.index, e.activation) for e in reference.trace
                          if e.loop == loop}
    return reference, machine


def map_loop(x_shape, axis=0, reverse=False, trips=None, kind=ll.LoopOutput.CONCATENATE,
             pad=0, invariant=None):
    """y_t = max(x_t * w, x_t + w) over an iterator of x; CONCATENATE (or REVERSE) of y."""
    net = ll.Network("onnx")  # numpy broadcasting between ranks
    x = net.add_input("x", ll.float32, x_shape)
    extent = x_shape[axis]
    trips = extent if trips is None else trips
    loop = net.add_loop()
    loop.add_trip_limit(const(net, trips, np.int32), ll.TripLimit.COUNT)
    e = loop.add_iterator(x, axis=axis, reverse=reverse).get_output(0)
    w = const(net, np.float32(1.5) if invariant is None else invariant)
    a = net.add_elementwise(e, w, PROD).get_output(0)
    b = net.add_elementwise(e, w, SUM).get_output(0)
    y = net.add_elementwise(a, b, MAX).get_output(0)
    net.mark_output(concat(net, loop, y, trips + pad, kind=kind))
    return net


rng = np.random.default_rng(0)


@pytest.mark.parametrize("axis,reverse,kind,pad", [
    (0, False, ll.LoopOutput.CONCATENATE, 0), (1, False, ll.LoopOutput.CONCATENATE, 2),
    (0, True, ll.LoopOutput.REVERSE, 1), (2, True, ll.LoopOutput.CONCATENATE, 0)])
def test_batched_maps_equal_the_reference(axis, reverse, kind, pad):
    # rule: stream/map, iterator/forward, iterator/reverse, output/concat, output/reverse
    shape = [5, 4, 3]
    shape[axis] = FEWEST_WHOLE + 1  # a run long enough to batch
    x = rng.standard_normal(shape).astype(np.float32)
    net = map_loop(x.shape, axis, reverse, kind=kind, pad=pad)
    reference, machine = agree(net, {"x": x})
    assert batched_runs(machine), "the loop was not batched"
    # by hand, for the defined part: y_t = max(1.5 x_t, x_t + 1.5), stacked on a new axis 0
    rows = np.flip(x, axis) if reverse else x
    want = np.stack([np.maximum(r * 1.5, r + 1.5) for r in np.moveaxis(rows, axis, 0)])
    if kind is ll.LoopOutput.REVERSE:
        want = want[::-1]
    got = list(reference.outputs.values())[0]
    np.testing.assert_array_equal(got[:len(want)], want)


def decaying_sum_loop(trips):
    """y_t = 1.5 x_t over x [trips, 3] beside s_{t+1} = 0.5 s_t + y_t (a recurrence no
    accumulation makes); outputs the y_t and the last s."""
    net = ll.Network("onnx")
    x = net.add_input("x", ll.float32, (trips, 3))
    loop = net.add_loop()
    loop.add_trip_limit(const(net, trips, np.int32), ll.TripLimit.COUNT)
    e = loop.add_iterator(x).get_output(0)
    y = net.add_elementwise(e, const(net, np.float32(1.5)), PROD).get_output(0)
    rec = loop.add_recurrence(const(net, np.zeros(3, np.float32)))
    half = net.add_elementwise(rec.get_output(0), const(net, np.float32(0.5)), PROD)
    rec.set_input(1, net.add_elementwise(half.get_output(0), y, SUM).get_output(0))
    net.mark_output(concat(net, loop, y, trips))
    net.mark_output(last(loop, rec.get_output(0)))
    return net


@pytest.mark.parametrize("trips", [5, FEWEST_BATCHED + 4])
def test_a_short_run_batches_only_all_of_its_work(trips):
    # rule: stream/map -- a run of fewer than FEWEST_BATCHED trips whose recurrence runs trip
    # by trip is not batched (the batches would be extra work beside the trips); a longer
    # one batches its maps; both are the reference's, and s by hand
    x = rng.standard_normal((trips, 3)).astype(np.float32)
    reference, machine = agree(decaying_sum_loop(trips), {"x": x})
    maps = {k for b in batched_runs(machine) for k in b if not k.startswith("iterator")}
    assert bool(maps) == (trips >= FEWEST_BATCHED)
    s = np.zeros(3, np.float32)
    for row in x:
        s = s * np.float32(0.5) + row * np.float32(1.5)
    np.testing.assert_array_equal(list(reference.outputs.values())[-1], s)


def test_invariants_of_higher_rank_broadcast_as_one_by_one():
    # rule: stream/map -- scalar elements against a [3] invariant give [3] elements
    x = rng.standard_normal(FEWEST_WHOLE).astype(np.float32)
    net = map_loop(x.shape, invariant=np.array([1.0, -2.0, 0.5], np.float32))
    reference, machine = agree(net, {"x": x})
    assert batched_runs(machine)
    w = np.array([1.0, -2.0, 0.5], np.float32)
    want = np.stack([np.maximum(v * w, v + w) for v in x])  # by hand
    np.testing.assert_array_equal(list(reference.outputs.values())[0], want)


def test_out_of_bounds_demand_is_not_batched_and_reported():
    # rule: iterator/bounds -- 6 trips over 5 rows: element 5 fails, as in the reference
    net = map_loop((5, 2), trips=6)
    x = {"x": np.zeros((5, 2), np.float32)}
    for evaluate in (ll.evaluate, ll.run):
        with pytest.raises(ll.IteratorOutOfBounds):
            evaluate(net, x)


def test_a_failing_kernel_is_reported_as_the_reference_reports_it():
    # rule: stream/map -- a kernel that refuses element 2 fails both paths alike
    def picky(v):
        if float(v[0]) == 2.0:
            raise ValueError("two")
        return (v * 2,)

    def picky_stack(args, flags):  # the batched form refuses the stack as the kernel would
        if (args[0][:, 0] == 2.0).any():
            raise ValueError("two")
        return args[0] * 2
    net = kernel_over_rows(Kernel(picky, batched=picky_stack), 4, 1, "Picky")
    for evaluate in (ll.evaluate, ll.run):
        with pytest.raises(ll.EvaluationError) as info:
            evaluate(net, {"x": np.arange(4, dtype=np.float32).reshape(4, 1)})
        assert info.value.rule == "stream/map"


def test_a_batched_form_wrong_past_element_zero_is_not_used():
    # rule: stream/map -- a batched form that agrees on element 0 but not on the last is
    # refused (a kernel record whose form is wrong in its last row); the values are the
    # kernel's own, x_t * 1.5
    def wrong_at_the_end(args, flags):
        out = np.array(args[0] * np.float32(1.5))
        out[-1] += 1
        return out
    triple_half = Kernel(lambda v: (v * np.float32(1.5),), batched=wrong_at_the_end)
    net = kernel_over_rows(triple_half, FEWEST_WHOLE, 2, "Half")
    xs = np.arange(2 * FEWEST_WHOLE, dtype=np.float32).reshape(FEWEST_WHOLE, 2)
    reference, machine = agree(net, {"x": xs})
    (got,), installs = reference.outputs.values(), batched_runs(machine)
    np.testing.assert_array_equal(got, xs * 1.5)
    assert installs and all(all(k.startswith("iterator") or "Iterator" in k for k in b)
                            for b in installs)


def test_matmul_batches_as_vector_products():
    # rule: onnx/node, stream/map -- per row tanh(x_t W) as a Scan, batched and not
    pytest.importorskip("onnx")
    import lazyloop.onnx as lo
    from lazyloop.bench.versus_models import map_like
    model, feeds = map_like(50)
    got = lo.evaluate(model, feeds)["y"]
    ref = lo.run(model, feeds, mode="reference").outputs["y"]
    assert got.tobytes() == ref.tobytes()
    w = np.asarray([t for t in model.graph.initializer if t.name == "W"][0].float_data or
                   np.frombuffer(model.graph.initializer[0].raw_data, np.float32)).reshape(16, 16)
    np.testing.assert_allclose(got, np.tanh(feeds["x"] @ w), rtol=1e-5, atol=1e-6)


@given(networks())
def test_fast_path_with_batches_equals_the_reference(program):
    # rule: stream/map, laziness/dead -- on generated programs (batched where they can be)
    agree(program.net, program.feeds)


def test_batched_onnx_scans_equal_the_reference():
    # rule: onnx/scan9, stream/map -- generated ONNX Scans, fast path against reference
    pytest.importorskip("onnx")
    import lazyloop.onnx as lo
    from lazyloop.strategies.onnx_scan import onnx_scans

    @settings(max_examples=25, database=None, deadline=None)
    @given(onnx_scans())
    def check(program):
        try:
            ref = lo.run(program.model, program.feeds, mode="reference")
        except ll.LazyLoopError as error:
            with pytest.raises(type(error)):
                lo.evaluate(program.model, program.feeds)
            return
        got = lo.evaluate(program.model, program.feeds)
        for name, want in ref.outputs.items():
            value = np.asarray(got[name])
            assert value.dtype == want.dtype and value.shape == want.shape
            assert np.array_equal(value, want, equal_nan=True), name

    check()


# -- generated map programs: chains of elementwise and unary layers over iterators -----------

from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra import numpy as hnp  # noqa: E402

BINARY = [ll.ElementWiseOperation.SUM, ll.ElementWiseOperation.SUB, PROD, MAX,
          ll.ElementWiseOperation.MIN, ll.ElementWiseOperation.DIV, ll.ElementWiseOperation.LESS]
UNARY = [ll.UnaryOperation.ABS, ll.UnaryOperation.NEG, ll.UnaryOperation.EXP,
         ll.UnaryOperation.SIN, ll.UnaryOperation.FLOOR]


#: the extents of the iterated axis: short runs (trip by trip), longer ones (batched only
#: where the batches take all their work) and long ones (batched also in part)
SHORT = [1, 2, 3, 4]
LONG = [FEWEST_WHOLE + 1, FEWEST_WHOLE + 3, FEWEST_BATCHED + 4]


@st.composite
def map_programs(draw, extents=tuple(SHORT + LONG)):
    """A COUNT loop (0-5 trips, or `FEWEST_WHOLE` or `FEWEST_BATCHED` and a few more) over
    1-2 iterators of float32 inputs, a chain of 1-5 elementwise/unary
    layers mixing them with invariants, some streams stacked, one read as LAST_VALUE of a
    recurrence (so that some loops batch wholly and some only in part)."""
    elem = draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=1, max_side=4))
    axis = draw(st.integers(0, len(elem)))
    extent = draw(st.sampled_from(extents))
    shape = elem[:axis] + (extent,) + elem[axis:]
    # 0 to one past the extent (iterator/bounds); a long loop's count stays long
    trips = extent + draw(st.integers(-min(extent, 4), 1))
    net = ll.Network()
    floats = st.floats(-3, 3, width=32)
    feeds, streams = {}, []
    loop = net.add_loop()
    loop.add_trip_limit(const(net, trips, np.int32), ll.TripLimit.COUNT)
    for j in range(draw(st.integers(1, 2))):
        x = net.add_input(f"x{j}", ll.float32, shape)
        feeds[f"x{j}"] = draw(hnp.arrays(np.float32, shape, elements=floats))
        streams.append(loop.add_iterator(x, axis=axis, reverse=draw(st.booleans())).get_output(0))
    for _ in range(draw(st.integers(1, 5))):
        a = draw(st.sampled_from(streams))
        if draw(st.booleans()):
            b = draw(st.sampled_from(streams + [None]))
            if b is None:
                b = const(net, draw(hnp.arrays(np.float32, elem, elements=floats)))
            op = draw(st.sampled_from(BINARY))
            if op is ll.ElementWiseOperation.LESS:
                continue  # bool elements: kept out of the chain
            t = net.add_elementwise(a, b, op).get_output(0)
        else:
            t = net.add_unary(a, draw(st.sampled_from(UNARY))).get_output(0)
        streams.append(t)
    for t in draw(st.lists(st.sampled_from(streams), min_size=1, max_size=2, unique=True)):
        net.mark_output(concat(net, loop, t, trips + draw(st.integers(0, 1)),
                               kind=draw(st.sampled_from(list(ll.LoopOutput)[1:]))))
    if draw(st.booleans()):
        rec = loop.add_recurrence(const(net, np.zeros(elem, np.float32)))
        rec.set_input(1, net.add_elementwise(rec.get_output(0), streams[-1], SUM).get_output(0))
        net.mark_output(last(loop, rec.get_output(0)))
    return net, feeds


@given(map_programs())
def test_generated_map_programs_batch_exactly(program):
    # rule: stream/map, iterator/forward, iterator/reverse, iterator/bounds, laziness/dead --
    # same values bit for bit, same forced elements, same errors as the reference evaluator
    net, feeds = program
    try:
        ll.run(net, feeds)
    except ll.LazyLoopError as error:
        with pytest.raises(type(error)):
            ll.evaluate(net, feeds)
        return
    with np.errstate(all="ignore"):
        agree(net, feeds)


def test_generated_map_programs_do_batch():
    # rule: stream/map -- the law above is not vacuous: most of these programs batch
    installs = []

    @settings(max_examples=200, database=None, derandomize=True, deadline=None)
    @given(map_programs(extents=LONG))  # runs long enough to batch (short ones never do)
    def run(program):
        net, feeds = program
        plan = compile_network(net)
        machine = EngineMachine(plan, check_feeds(plan, feeds), log=[])
        try:
            for _, nid in plan.outputs:
                machine.demand(nid)
        except ll.LazyLoopError:
            pass
        installs.extend(batched_runs(machine))  # the runs that erred too

    with np.errstate(all="ignore"):
        run()
    # (which programs are drawn varies with the hypothesis release and with its pool of
    # constants, read from the modules loaded before; a handful of the 200 shows the law is
    # not vacuous)
    assert sum(any(not k.startswith("iterator") for k in b) for b in installs) >= 5


def test_an_lstm_like_scan_batches_its_input_products_exactly():
    # rule: onnx/scan9, stream/map -- x_t @ Wx ([4, 32] elements by a matrix) is batched as
    # stacked products; the recurrent part runs trip by trip; bit for bit the reference's
    pytest.importorskip("onnx")
    import lazyloop.onnx as lo
    from lazyloop.bench.versus_models import lstm_like
    model, feeds = lstm_like(FEWEST_BATCHED + 4)  # a run long enough to batch in part
    got, machine = onnx_on_engine(model, feeds)
    ref = lo.run(model, feeds, mode="reference").outputs
    assert any(len(b) >= 2 for b in batched_runs(machine))  # the iterator and the product at least
    for name, want in ref.items():
        assert np.asarray(got[name]).tobytes() == want.tobytes(), name


def test_a_batch_over_the_memory_bound_is_not_made():
    # rule: stream/map -- with the bound at 64 bytes, 12 or more elements of 4 x 3 float32
    # (48 bytes each) are computed one by one; the iterator (a view, no memory) still batches
    x = rng.standard_normal((FEWEST_WHOLE, 4, 3)).astype(np.float32)
    plan = compile_network(map_loop(x.shape))
    machine = EngineMachine(plan, check_feeds(plan, {"x": x}), log=[],
                            options=Options(max_batch_bytes=64))
    got = {name: split(machine.demand(nid))[0] for name, nid in plan.outputs}
    for name, want in ll.run(plan, {"x": x}).outputs.items():
        assert got[name].tobytes() == want.tobytes()
    installs = batched_runs(machine)
    assert installs and all(k.startswith("iterator") for b in installs for k in b)
