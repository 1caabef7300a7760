"""Small builders shared by the core tests (TensorRT-style calls only)."""
import numpy as np

import lazyloop as ll

SUM = ll.ElementWiseOperation.SUM
LESS = ll.ElementWiseOperation.LESS


def const(net, value, dtype=None):
    value = np.asarray(value, dtype=dtype)
    return net.add_constant(value.shape, value).get_output(0)


def counter(net, loop, start=0, step=1, dtype=np.int32):
    """i = start; i += step: the recurrence of `for (i = j; ...; i += k)`."""
    rec = loop.add_recurrence(const(net, start, dtype))
    nxt = net.add_elementwise(rec.get_output(0), const(net, step, dtype), SUM).get_output(0)
    rec.set_input(1, nxt)
    return rec.get_output(0), nxt


def concat(net, loop, tensor, length, axis=0, kind=ll.LoopOutput.CONCATENATE):
    out = loop.add_loop_output(tensor, kind, axis)
    out.set_input(1, const(net, length, np.int32))
    return out.get_output(0)


def last(loop, tensor):
    return loop.add_loop_output(tensor, ll.LoopOutput.LAST_VALUE).get_output(0)


def sums_of_rows(net, p, rows):
    """An outer loop of `rows` COUNT trips over the rows r (of 3 items) of p; per row an
    inner loop of 3 trips sums r (acc = 0; acc += r): 3 * r; the outer loop stacks those
    sums (CONCATENATE, length `rows`). Returns (the inner loop, the stacked sums)."""
    outer = net.add_loop()
    outer.add_trip_limit(const(net, rows, np.int32), ll.TripLimit.COUNT)
    row = outer.add_iterator(p).get_output(0)
    inner = net.add_loop()
    inner.add_trip_limit(const(net, 3, np.int32), ll.TripLimit.COUNT)
    acc = inner.add_recurrence(const(net, np.zeros(3, np.float32)))
    acc.set_input(1, net.add_elementwise(acc.get_output(0), row, SUM).get_output(0))
    return inner, concat(net, outer, last(inner, acc.get_output(0)), rows)


def padded_input_rows(net, count="k"):
    """Inputs x float32[4, 3] and `count` int32[]: loop 0 stacks the first `count` rows of
    x, padded to 4 (CONCATENATE, length 4; the padding undefined). Returns the stack p."""
    x = net.add_input("x", ll.float32, (4, 3))
    k = net.add_input(count, ll.int32, ())
    first = net.add_loop()
    first.add_trip_limit(k, ll.TripLimit.COUNT)
    return concat(net, first, first.add_iterator(x).get_output(0), 4)


def counted(trips):
    """A network of one loop of `trips` COUNT trips whose one output is a counter's
    LAST_VALUE (`counter` from 0 by 1): i = 0; i += 1 for `trips` trips; LAST_VALUE(i) =
    trips."""
    net = ll.Network()
    loop = net.add_loop()
    loop.add_trip_limit(const(net, trips, np.int32), ll.TripLimit.COUNT)
    i, _ = counter(net, loop)
    net.mark_output(last(loop, i))
    return net


def forced(evaluation, stream):
    """Indices of `stream` the evaluation forced, in order."""
    return [e.index for e in evaluation.trace if e.stream == stream]


def on_engine(net, feeds, readings=None, mode="fast"):
    """Evaluate a network (or its plan) on the engine in `mode`, keeping what the schedules
    forced (`machine.record`) and what each run of one did (`machine.log`): (outputs as
    evaluate returns them, the machine)."""
    from lazyloop.core.engine import OPTIONS, EngineMachine
    from lazyloop.core.evaluate import check_feeds, plan_of
    from lazyloop.core.undefined import split
    plan = plan_of(net, readings)
    machine = EngineMachine(plan, check_feeds(plan, feeds), readings=readings,
                            options=OPTIONS[mode], record=[], log=[])
    values = {name: split(machine.demand(nid))[0] for name, nid in plan.outputs}
    return values, machine


def onnx_on_engine(model, feeds, mode="fast"):
    """`on_engine` for an ONNX model, lowered first: (outputs by graph output name, machine)."""
    import lazyloop.onnx as lo
    lowered = lo.lower(model)
    values, machine = on_engine(lowered.network, lowered.core_feeds(feeds), mode=mode)
    return lowered.user_outputs(values), machine


def batched_runs(machine):
    """The streams each run of a schedule took from batches, per run that made any."""
    return [sorted(run.batched) for run in machine.log if run.batched]


#: the engine's modes (every mode but "reference"), which the laws compare with the reference
ENGINE_MODES = ("fast", "schedule", "compiled")


def kernel_over_rows(kernel, rows: int, width: int, op: str = "K"):
    """ONNX profile: y_t = kernel(x_t) (a function layer of one [width] output) over the rows
    of an input x [rows, width], COUNT rows, CONCATENATE of the y_t."""
    net = ll.Network("onnx")
    x = net.add_input("x", ll.float32, (rows, width))
    loop = net.add_loop()
    loop.add_trip_limit(const(net, rows, np.int32), ll.TripLimit.COUNT)
    e = loop.add_iterator(x).get_output(0)
    y = net.add_function(kernel, [e], [ll.TensorType(ll.float32, (width,))], op=op)
    net.mark_output(concat(net, loop, y.get_output(0), rows))
    return net


def counting(monkeypatch, owner, name):
    """Spy on `owner.name` (calling through): the list of the argument tuples of its calls."""
    calls = []
    real = getattr(owner, name)

    def counted(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)
    monkeypatch.setattr(owner, name, counted)
    return calls


def refused_as_the_reference(model, feeds, mode):
    """Evaluate the ONNX `model` in `mode`: it must raise the reference's kind of
    LazyLoopError citing the same rule; returns (the reference's error, the mode's)."""
    import pytest
    import lazyloop.onnx as lo
    with pytest.raises(ll.LazyLoopError) as ref:
        lo.run(model, feeds, mode="reference")
    with pytest.raises(ll.LazyLoopError) as got:
        lo.evaluate(model, feeds, mode=mode)
    assert type(got.value) is type(ref.value) and got.value.rule == ref.value.rule
    return ref.value, got.value
