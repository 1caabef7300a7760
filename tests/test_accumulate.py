"""Recurrences batched as accumulations (lazyloop/core/engine/accumulate.py): a recurrence
s = f(s, x_t), f add / multiply / maximum / minimum of a batchable stream, is made by one
accumulation on the fast path, and still gives the reference's values bit for bit, forces
exactly its elements, and leaves everything else to the per-element steps (rules:
recurrence/def, stream/map, laziness/modes)."""
import numpy as np
import pytest

import lazyloop as ll
from lazyloop.core.plan import Recurrence
from nets import SUM, batched_runs, concat, const, last
from test_batch import agree

PROD, MAX, MIN = (ll.ElementWiseOperation.PROD, ll.ElementWiseOperation.MAX,
                  ll.ElementWiseOperation.MIN)
rng = np.random.default_rng(7)


def running(x, init, op=SUM, state_first=True, dtype=ll.float32):
    """s = init; s = op(s, x_t) over the rows of x (COUNT rows): LAST_VALUE(s) and the
    CONCATENATE of the next values."""
    net = ll.Network("onnx")
    xs = net.add_input("x", dtype, x.shape)
    loop = net.add_loop()
    loop.add_trip_limit(const(net, x.shape[0], np.int32), ll.TripLimit.COUNT)
    e = loop.add_iterator(xs).get_output(0)
    s = loop.add_recurrence(const(net, init))
    args = (s.get_output(0), e) if state_first else (e, s.get_output(0))
    nxt = net.add_elementwise(*args, op).get_output(0)
    s.set_input(1, nxt)
    net.mark_output(last(loop, s.get_output(0)))
    net.mark_output(concat(net, loop, nxt, x.shape[0]))
    return net


def by_hand(x, init, fn):
    """The running values, one numpy call per row (independent of lazyloop)."""
    s, rows = init, []
    for row in x:
        s = fn(s, row)
        rows.append(s)
    return s, np.stack(rows)


def accumulated(machine) -> bool:
    """Some run of a schedule took a recurrence from its batches."""
    return any(isinstance(machine.plan.nodes[k], Recurrence) for run in batched_runs(machine)
               for k in run)


@pytest.mark.parametrize("width", [4, 256])  # one ufunc.accumulate; row by row in place
@pytest.mark.parametrize("op,fn", [(SUM, np.add), (PROD, np.multiply), (MAX, np.maximum),
                                   (MIN, np.minimum)])
def test_a_running_value_is_one_accumulation_equal_to_the_reference(width, op, fn):
    # rule: recurrence/def, stream/map -- values, forced elements, and by hand
    x = rng.standard_normal((40, width)).astype(np.float32)
    x[3, 0], x[5, 1] = np.nan, -0.0  # NaN propagates and signed zeros stay as per element
    init = np.full(width, -0.0, np.float32)
    reference, machine = agree(running(x, init, op), {"x": x})
    assert accumulated(machine), "the recurrence was not accumulated"
    want_last, want_rows = by_hand(x, init, fn)
    got_last, got_rows = reference.outputs.values()
    assert got_last.tobytes() == want_last.tobytes()
    assert got_rows.tobytes() == want_rows.tobytes()


def test_integers_wrap_as_one_by_one():
    # rule: recurrence/def -- int32 sums past 2^31 wrap element by element, accumulated too
    x = np.full((20, 3), 2 ** 30, np.int32)
    init = np.zeros(3, np.int32)
    reference, machine = agree(running(x, init, dtype=ll.int32), {"x": x})
    assert accumulated(machine)
    with np.errstate(over="ignore"):
        want_last, _ = by_hand(x, init, np.add)
    np.testing.assert_array_equal(list(reference.outputs.values())[0], want_last)


def test_a_short_run_is_left_to_the_steps():
    # rule: recurrence/def -- below FEWEST_TRIPS trips the steps make the elements (they
    # cost less than the accumulation's set-up), with the same values
    from lazyloop.core.engine.accumulate import FEWEST_TRIPS
    x = rng.standard_normal((FEWEST_TRIPS - 1, 4)).astype(np.float32)
    init = np.zeros(4, np.float32)
    reference, machine = agree(running(x, init), {"x": x})
    assert not accumulated(machine)
    np.testing.assert_array_equal(list(reference.outputs.values())[0],
                                  by_hand(x, init, np.add)[0])


def test_the_state_second_is_left_to_the_steps():
    # rule: recurrence/def -- x_t + s is not accumulated (the operand order is f's), and the
    # values are still the reference's
    x = rng.standard_normal((30, 4)).astype(np.float32)
    init = np.zeros(4, np.float32)
    reference, machine = agree(running(x, init, state_first=False), {"x": x})
    assert not accumulated(machine)
    np.testing.assert_array_equal(list(reference.outputs.values())[0],
                                  by_hand(x, init, lambda s, r: r + s)[0])


def test_the_cumulative_sum_scan_of_the_bench_accumulates_exactly():
    # rule: onnx/scan9, recurrence/def, laziness/modes -- the bench's cumulative-sum Scan at
    # width 256: every mode gives the reference's bits, and numpy's running sum
    pytest.importorskip("onnx")
    import lazyloop.onnx as lo
    from lazyloop.bench.versus_models import cumsum
    from nets import onnx_on_engine
    model, feeds = cumsum(300, 256)
    want = lo.run(model, feeds, mode="reference").outputs
    for mode in ("fast", "schedule", "compiled"):
        got = lo.evaluate(model, feeds, mode=mode)
        assert all(got[k].tobytes() == want[k].tobytes() for k in want), mode
    _, machine = onnx_on_engine(model, feeds)
    assert accumulated(machine)
    _, rows = by_hand(feeds["x"], feeds["s0"], np.add)
    assert want["y"].tobytes() == rows.tobytes()


def raw_values(plan, feeds):
    """The outputs as the engine's machine returns them (views of its batches, not the
    copies `evaluate` hands out), on a machine that keeps its schedules for later runs."""
    from lazyloop.core.engine import OPTIONS, EngineMachine
    from lazyloop.core.evaluate import check_feeds
    machine = EngineMachine(plan, check_feeds(plan, feeds), options=OPTIONS["fast"])
    return [machine.demand(nid) for _, nid in plan.outputs]


def blocks(plan):
    """The accumulation blocks the plan's kept schedules hold, by identity."""
    return [id(b) for k, pool in plan.derived.items() if k[0] == "schedules"
            for schedule in pool for b in schedule.blocks.values()]


@pytest.mark.parametrize("width", [4, 256])
def test_a_block_still_seen_is_not_written_again(width):
    # rule: stream/memo, recurrence/def -- a later run writes its accumulation into the
    # earlier run's block only when nothing sees that block any more: values an earlier run
    # handed out (views of its block, as the engine's machine returns them) keep their values
    from lazyloop.core.plan import compile_network
    x1, x2 = (rng.standard_normal((20, width)).astype(np.float32) for _ in range(2))
    init = np.zeros(width, np.float32)
    plan = compile_network(running(x1, init))
    first = raw_values(plan, {"x": x1})
    kept = blocks(plan)
    second = raw_values(plan, {"x": x2})
    assert len(kept) == 1 and blocks(plan) != kept  # the first block is still seen
    for got, x in ((first, x1), (second, x2)):
        want_last, want_rows = by_hand(x, init, np.add)
        assert got[0].tobytes() == want_last.tobytes() and got[1].tobytes() == want_rows.tobytes()
    del first, second, got
    kept = blocks(plan)
    third = raw_values(plan, {"x": x1})  # nothing sees the block now: written in place
    assert blocks(plan) == kept
    assert third[1].tobytes() == by_hand(x1, init, np.add)[1].tobytes()


def counter(trips, init, step, dtype=ll.int64):
    """A loop of COUNT `trips` whose recurrence s adds the invariant `step` each trip (an
    ONNX Loop's iteration number is this one with step 1): LAST_VALUE(s), CONCATENATE(s)."""
    net = ll.Network("onnx")
    loop = net.add_loop()
    loop.add_trip_limit(const(net, trips, np.int32), ll.TripLimit.COUNT)
    s = loop.add_recurrence(const(net, init))
    nxt = net.add_elementwise(s.get_output(0), const(net, step), SUM).get_output(0)
    s.set_input(1, nxt)
    net.mark_output(last(loop, s.get_output(0)))
    net.mark_output(concat(net, loop, s.get_output(0), trips))
    return net


@pytest.mark.parametrize("init,step", [(np.array(0, np.int64), np.array(1, np.int64)),
                                       (np.array(2 ** 62, np.int64), np.array(2 ** 60, np.int64)),
                                       (np.zeros(3, np.float32), np.float32([0.1, -0.3, 1e-8]))])
def test_a_counter_of_an_invariant_step_is_one_accumulation(init, step):
    # rule: recurrence/def, stream/invariant -- s + c with c the same every trip is the
    # accumulation of c repeated: the reference's bits (integers wrapping, float sums
    # rounded trip by trip), and numpy's one-by-one sums
    trips = 40
    reference, machine = agree(counter(trips, init, step), {})
    assert accumulated(machine), "the counter was not accumulated"
    rows, s = [], init
    with np.errstate(over="ignore"):
        for _ in range(trips):
            rows.append(s)
            s = s + step
    got_last, got_rows = reference.outputs.values()
    assert got_rows.tobytes() == np.stack(rows).tobytes()
    assert got_last.tobytes() == np.asarray(s).tobytes()  # LAST_VALUE: after the last trip


def carried_copy(x, init):
    """r_0 = init, r_{t+1} = x_t * 2 (a carried value the body overwrites from an iterator,
    never reading it): LAST_VALUE(r) and CONCATENATE(r)."""
    net = ll.Network("onnx")
    xs = net.add_input("x", ll.float32, x.shape)
    loop = net.add_loop()
    loop.add_trip_limit(const(net, x.shape[0], np.int32), ll.TripLimit.COUNT)
    e = loop.add_iterator(xs).get_output(0)
    r = loop.add_recurrence(const(net, init))
    doubled = net.add_elementwise(e, const(net, np.float32(2)), PROD).get_output(0)
    r.set_input(1, doubled)
    net.mark_output(last(loop, r.get_output(0)))
    net.mark_output(concat(net, loop, r.get_output(0), x.shape[0]))
    return net


def test_a_recurrence_the_body_overwrites_is_its_next_values_one_place_on():
    # rule: recurrence/def -- r_0 = init, r_{t+1} = x_t * 2: a batch of init and the doubled
    # rows, made without any trip; values by hand
    x = rng.standard_normal((30, 4)).astype(np.float32)
    init = np.full(4, -0.0, np.float32)
    reference, machine = agree(carried_copy(x, init), {"x": x})
    assert accumulated(machine), "the overwritten recurrence was not batched"
    want_rows = np.concatenate([init[None], x[:-1] * np.float32(2)])
    got_last, got_rows = reference.outputs.values()
    assert got_rows.tobytes() == want_rows.tobytes()
    assert got_last.tobytes() == (x[-1] * np.float32(2)).tobytes()  # after the last trip


def test_an_onnx_count_loop_runs_as_batches():
    # rule: onnx/loop, recurrence/def -- M trips, no condition: the iteration number is a
    # counter (accumulated), what reads it maps over it, a sum of it accumulates and a carried
    # copy of it shifts; 40,000 trips give arange, its float copy, its sum and M - 1
    pytest.importorskip("onnx")
    from onnx import TensorProto, helper
    import lazyloop.onnx as lo
    from nets import onnx_on_engine
    body = helper.make_graph(
        [helper.make_node("Identity", ["c"], ["c_out"]),
         helper.make_node("Identity", ["i"], ["last_out"]),
         helper.make_node("Identity", ["i"], ["i_copy"]),
         helper.make_node("Cast", ["i"], ["i_float"], to=TensorProto.FLOAT),
         helper.make_node("Add", ["s", "i"], ["s_out"])], "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("c", TensorProto.BOOL, []),
         helper.make_tensor_value_info("last", TensorProto.INT64, []),
         helper.make_tensor_value_info("s", TensorProto.INT64, [])],
        [helper.make_tensor_value_info(n, t, []) for n, t in
         [("c_out", TensorProto.BOOL), ("last_out", TensorProto.INT64),
          ("s_out", TensorProto.INT64), ("i_copy", TensorProto.INT64),
          ("i_float", TensorProto.FLOAT)]])
    graph = helper.make_graph(
        [helper.make_node("Loop", ["M", "", "last0", "s0"],
                          ["last", "s", "i_copies", "i_floats"], body=body)], "g",
        [helper.make_tensor_value_info(n, TensorProto.INT64, []) for n in ("M", "last0", "s0")],
        [helper.make_tensor_value_info(n, t, None) for n, t in
         [("last", TensorProto.INT64), ("s", TensorProto.INT64),
          ("i_copies", TensorProto.INT64), ("i_floats", TensorProto.FLOAT)]])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    m = 40_000
    feeds = {"M": np.array(m), "last0": np.array(-1), "s0": np.array(0)}
    got = lo.evaluate(model, feeds)
    assert got["last"] == m - 1 and got["s"] == m * (m - 1) // 2
    np.testing.assert_array_equal(got["i_copies"], np.arange(m))
    assert got["i_floats"].dtype == np.float32
    np.testing.assert_array_equal(got["i_floats"], np.arange(m, dtype=np.float32))
    _, machine = onnx_on_engine(model, feeds)
    assert accumulated(machine)
