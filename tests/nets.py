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


def forced(evaluation, stream):
    """Indices of `stream` the evaluation forced, in order."""
    return [e.index for e in evaluation.trace if e.stream == stream]
