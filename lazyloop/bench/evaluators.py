"""Benchmark sections (a)-(c) on the core evaluators: the scalar counter loop, the LSTM built
from loop layers, and peak memory against trip count."""
from __future__ import annotations

from typing import List

import numpy as np

from ..core.enums import ElementWiseOperation, LoopOutput, TripLimit
from ..core.evaluate import compile_network, evaluate as ll_eval, run as ll_run
from ..core.network import Network
from ..models import LSTMWeights, lstm_network, numpy_lstm
from .measure import Row, best_time, kib, ms, peak_memory, us

# ------------------------------------------------------------------------------------------
# (a) the scalar counter
# ------------------------------------------------------------------------------------------

def counter_network(trips: int) -> Network:
    """i = 0; repeat `trips` times: i = i + 1; output LAST_VALUE(i) (= trips)."""
    net = Network()
    count = net.add_constant((), np.array(trips, np.int32)).get_output(0)
    zero = net.add_constant((), np.array(0, np.int32)).get_output(0)
    one = net.add_constant((), np.array(1, np.int32)).get_output(0)
    loop = net.add_loop()
    loop.add_trip_limit(count, TripLimit.COUNT)
    i = loop.add_recurrence(zero)
    i_next = net.add_elementwise(i.get_output(0), one, ElementWiseOperation.SUM).get_output(0)
    i.set_input(1, i_next)
    out = loop.add_loop_output(i.get_output(0), LoopOutput.LAST_VALUE)
    out.get_output(0).name = "i"
    net.mark_output(out.get_output(0))
    return net


def numpy_counter(trips: int):
    """The same work by hand: one np.add per trip on int32 values."""
    i = np.array(0, np.int32)
    one = np.array(1, np.int32)
    for _ in range(trips):
        i = np.add(i, one)
    return i


def bench_counter(cfg) -> List[Row]:
    trips = cfg["counter_trips"]
    net = counter_network(trips)
    results = {}

    def fast():
        results["fast"] = ll_eval(net, {})["i"]

    def by_hand():
        results["numpy"] = numpy_counter(trips)

    t_numpy = t_fast = float("inf")
    for _ in range(cfg["counter_repeats"]):  # interleaved, so drift hits both alike
        t_numpy = min(t_numpy, best_time(by_hand, 1))
        t_fast = min(t_fast, best_time(fast, 1))
    ref_trips = cfg["reference_trips"]
    ref_net = counter_network(ref_trips)
    t_ref = best_time(lambda: results.__setitem__(
        "ref", ll_run(ref_net, {}, trace=1).outputs["i"]), 1)
    assert int(results["fast"]) == int(results["numpy"]) == trips
    assert int(results["ref"]) == ref_trips
    per_numpy, per_fast, per_ref = t_numpy / trips, t_fast / trips, t_ref / ref_trips
    case = f"counter, {trips:,} trips, per trip"
    return [
        Row("a1", f"{case}: ll.evaluate", us(per_fast), f"{us(per_numpy)} numpy for",
            per_fast / per_numpy, 2.0,
            values=dict(trips=trips, evaluate_s=t_fast, numpy_s=t_numpy)),
        Row("a2", f"counter, {ref_trips:,} trips, per trip: ll.run", us(per_ref),
            f"{us(per_numpy)} numpy for", per_ref / per_numpy, None,
            note="reference evaluator (trace=1: the last event only)",
            values=dict(trips=ref_trips, run_s=t_ref)),
    ]


# ------------------------------------------------------------------------------------------
# (b) the LSTM
# ------------------------------------------------------------------------------------------

def bench_lstm(cfg) -> List[Row]:
    hidden, batch, steps = cfg["lstm_hidden"], cfg["lstm_batch"], cfg["lstm_steps"]
    weights = LSTMWeights.random(hidden, hidden, seed=0, scale=0.1)
    rng = np.random.default_rng(1)
    feeds = {"x": rng.standard_normal((steps, batch, hidden)).astype(np.float32),
             "h0": np.zeros((batch, hidden), np.float32),
             "c0": np.zeros((batch, hidden), np.float32)}
    net = lstm_network(steps, batch, weights)
    results = {}

    def fast():
        results["fast"] = ll_eval(net, feeds)

    def by_hand():
        results["numpy"] = numpy_lstm(feeds["x"], weights, feeds["h0"], feeds["c0"])

    t_numpy = t_fast = float("inf")
    for _ in range(cfg["lstm_repeats"]):
        t_numpy = min(t_numpy, best_time(by_hand, 1))
        t_fast = min(t_fast, best_time(fast, 1))
    np.testing.assert_allclose(results["fast"]["sequence"], results["numpy"][0],
                               rtol=1e-4, atol=1e-4)
    return [Row("b1", f"LSTM hidden {hidden}, batch {batch}, {steps} steps: ll.evaluate",
                ms(t_fast), f"{ms(t_numpy)} numpy_lstm", t_fast / t_numpy, 1.2,
                values=dict(evaluate_s=t_fast, numpy_s=t_numpy,
                            per_step_overhead_us=(t_fast - t_numpy) / steps * 1e6))]


# ------------------------------------------------------------------------------------------
# (c) memory against trip count
# ------------------------------------------------------------------------------------------

def state_network(trips: int, elements: int) -> Network:
    """s = zeros(elements) float32; repeat `trips` times: s = s + 1; output LAST_VALUE(s)."""
    net = Network()
    count = net.add_constant((), np.array(trips, np.int32)).get_output(0)
    start = net.add_constant((elements,), np.zeros(elements, np.float32)).get_output(0)
    ones = net.add_constant((elements,), np.ones(elements, np.float32)).get_output(0)
    loop = net.add_loop()
    loop.add_trip_limit(count, TripLimit.COUNT)
    s = loop.add_recurrence(start)
    s.set_input(1, net.add_elementwise(s.get_output(0), ones,
                                       ElementWiseOperation.SUM).get_output(0))
    out = loop.add_loop_output(s.get_output(0), LoopOutput.LAST_VALUE)
    out.get_output(0).name = "s"
    net.mark_output(out.get_output(0))
    return net


def evaluate_peaks(network_of, trip_counts, expected) -> dict:
    """{n: the peak memory of `ll.evaluate` on network_of(n)}, each output "s" checked to be
    expected(n) everywhere; after a warm-up run (one-time costs are not the loop's)."""
    ll_eval(network_of(2), {})
    peaks = {}
    for n in trip_counts:
        net = network_of(n)
        box = {}
        peaks[n] = peak_memory(lambda: box.__setitem__("s", ll_eval(net, {})["s"]))
        assert float(box["s"][0]) == expected(n)
    return peaks


def bench_memory(cfg) -> List[Row]:
    elements = cfg["state_elements"]
    state = elements * 4
    many, few = cfg["memory_trips"]
    peaks = evaluate_peaks(lambda n: state_network(n, elements), (many, few), lambda n: n)
    ref_trips = cfg["reference_memory_trips"]
    ref_net = state_network(ref_trips, elements)
    box = {}
    ref_peak = peak_memory(lambda: box.__setitem__(
        "s", ll_run(ref_net, {}, trace=1).outputs["s"]))
    assert float(box["s"][0]) == ref_trips
    fast_at_ref = peaks.get(ref_trips) or peaks[few]
    what = f"{kib(state)} state"
    return [
        Row("c1", f"{what}, peak at {many:,} trips: ll.evaluate", kib(peaks[many]),
            f"{kib(peaks[few])} at {few:,} trips", peaks[many] / peaks[few], 1.25,
            note=f"{peaks[many] / state:.1f} states live at the peak",
            values=dict(state_bytes=state, peak_many=peaks[many], peak_few=peaks[few])),
        Row("c2", f"{what}, peak at {ref_trips:,} trips: ll.run", kib(ref_peak),
            f"{kib(fast_at_ref)} ll.evaluate", ref_peak / fast_at_ref, None,
            note="the reference (a traced run) keeps every element",
            values=dict(reference_peak=ref_peak)),
    ] + nested_state_rows(cfg) + big_state_rows(cfg)


def nested_state_network(outer: int, inner: int, elements: int) -> Network:
    """s = zeros(elements); `outer` times: s = (the inner loop: `inner` times z = z + 1,
    from z = s); output LAST_VALUE(s) = outer * inner everywhere."""
    net = Network()
    start = net.add_constant((elements,), np.zeros(elements, np.float32)).get_output(0)
    ones = net.add_constant((elements,), np.ones(elements, np.float32)).get_output(0)
    out_loop = net.add_loop()
    out_loop.add_trip_limit(net.add_constant((), np.array(outer, np.int32)).get_output(0),
                            TripLimit.COUNT)
    s = out_loop.add_recurrence(start)
    in_loop = net.add_loop()
    in_loop.add_trip_limit(net.add_constant((), np.array(inner, np.int32)).get_output(0),
                           TripLimit.COUNT)
    z = in_loop.add_recurrence(s.get_output(0))
    z.set_input(1, net.add_elementwise(z.get_output(0), ones,
                                       ElementWiseOperation.SUM).get_output(0))
    s.set_input(1, in_loop.add_loop_output(z.get_output(0),
                                           LoopOutput.LAST_VALUE).get_output(0))
    out = out_loop.add_loop_output(s.get_output(0), LoopOutput.LAST_VALUE)
    out.get_output(0).name = "s"
    net.mark_output(out.get_output(0))
    return net


def nested_state_rows(cfg) -> List[Row]:
    """A state carried through an inner loop of 10 trips: the enclosing loop runs on its
    schedule too (spec/14), so its peak does not grow with its trips either."""
    elements, inner = cfg["state_elements"], 10
    many, few = (t // inner for t in cfg["memory_trips"])
    peaks = evaluate_peaks(lambda n: nested_state_network(n, inner, elements), (many, few),
                           lambda n: n * inner)
    return [Row("c5", f"{kib(elements * 4)} state through an inner loop, peak at {many:,} "
                f"outer trips: ll.evaluate", kib(peaks[many]),
                f"{kib(peaks[few])} at {few:,} outer trips", peaks[many] / peaks[few], 1.25,
                note=f"{inner} inner trips per outer trip; "
                     f"{peaks[many] / (elements * 4):.1f} states live at the peak",
                values=dict(peak_many=peaks[many], peak_few=peaks[few]))]


def big_state_rows(cfg) -> List[Row]:
    """A big carried state: the peak growth of a LAST_VALUE loop, in states (target <= 4
    states: 64 MiB for a 16 MiB state), for `ll.evaluate` and for `ll.run` without a trace."""
    elements, trips = cfg["big_state_elements"], cfg["big_state_trips"]
    state = elements * 4
    net = state_network(trips, elements)
    compile_network(net)  # the plan is made once and cached: the loop's memory is measured
    box = {}
    fast = peak_memory(lambda: box.__setitem__("s", ll_eval(net, {})["s"]))
    assert float(box["s"][0]) == trips
    untraced = peak_memory(lambda: box.__setitem__("s", ll_run(net, {}, trace=False).outputs["s"]))
    assert float(box["s"][0]) == trips
    what = f"{kib(state)} state x {trips} trips, LAST_VALUE, peak growth"
    return [
        Row("c3", f"{what}: ll.evaluate", kib(fast), f"{kib(state)} state", fast / state, 4.0,
            note=f"{fast / state:.1f} states live at the peak (returned value included)",
            values=dict(state_bytes=state, peak=fast, trips=trips)),
        Row("c4", f"{what}: ll.run(trace=False)", kib(untraced), f"{kib(state)} state",
            untraced / state, 4.0, note="fast path, nothing traced",
            values=dict(peak=untraced)),
    ]
