"""Small builders for the core conformance cases, written only with TensorRT's network
calls (so they work on a lazyloop `Network` and on a TensorRT one), plus shared input data."""
from __future__ import annotations

import numpy as np

def const(net, value, dtype=np.float32):
    value = np.asarray(value, dtype=dtype)
    return net.add_constant(value.shape, value).get_output(0)


def count_loop(net, api, n):
    loop = net.add_loop()
    loop.add_trip_limit(const(net, n, np.int32), api.TripLimit.COUNT)
    return loop


def counter(net, api, loop, start=0):
    """c = start, start+1, ... (int32)."""
    rec = loop.add_recurrence(const(net, start, np.int32))
    nxt = net.add_elementwise(rec.get_output(0), const(net, 1, np.int32),
                              api.ElementWiseOperation.SUM).get_output(0)
    rec.set_input(1, nxt)
    return rec.get_output(0)


def stacked(net, api, loop, t, length, axis=0, kind="CONCATENATE"):
    out = loop.add_loop_output(t, getattr(api.LoopOutput, kind), axis)
    out.set_input(1, const(net, length, np.int32))
    return out.get_output(0)


def last(api, loop, t):
    return loop.add_loop_output(t, api.LoopOutput.LAST_VALUE).get_output(0)


def mark(net, t, name):
    t.name = name
    net.mark_output(t)


def add(net, api, a, b):
    return net.add_elementwise(a, b, api.ElementWiseOperation.SUM).get_output(0)


X32 = [[1, 2], [3, 4], [5, 6]]
