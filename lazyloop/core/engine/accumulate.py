"""Recurrences batched as accumulations: a running sum (product, maximum, minimum) of a
batched stream made by one numpy call.

A recurrence s whose next value is a map m = f(s, x) -- f a binary numpy ufunc, s its first
argument, x a stream the schedule batches (`batch.py`) -- has the elements
(`recurrence/def`, `stream/map`)

    s_0 = init,   m_k = f(s_k, x_k),   s_{k+1} = m_k

which is what `f.accumulate` computes over the stack [init, x_0, x_1, ...]: row k + 1 is
f(row k, x_k), each element of it made by the same scalar operation of the ufunc the kernel
applies per element (numpy's accumulation applies the ufunc's loop to the previous row and
the next one); for wide rows, `f(row k, x_k, out=row k + 1)`, one call per row into a
preallocated block, which is the kernel's own call without a new array per trip. So where
the trip count is known before the first trip and every element below n + p is demanded
whatever happens (`certain`), the rows of one accumulation are the elements of both
streams, and no trip needs to run for them.

It is made only where it cannot differ from the elements one by one:

* f is one of `ACCUMULATING` (add, multiply, maximum, minimum: correctly rounded or exact
  scalar operations, the same whichever loop numpy runs) and is the kernel's whole function
  (`Kernel.ufunc`);
* the initial value and every x_k are arrays of one dtype and of one shape, so that f keeps
  that dtype and shape and no element broadcasts into another shape;
* the first and last rows equal, in bytes, the kernel applied to their own operands (the
  same check `batch.map_batch` makes).

Anything else leaves the two streams to the per-element steps, which report what the
reference reports.
"""
from __future__ import annotations

import sys

import numpy as np

from ..plan import Map, Recurrence

#: the ufuncs whose accumulation is their elements, one scalar operation each
ACCUMULATING = (np.add, np.multiply, np.maximum, np.minimum)
#: elements of at most this many values are accumulated by one call of `ufunc.accumulate`;
#: larger ones row by row into their place (numpy's accumulation walks a column at a time,
#: which for wide rows costs more than one call per row: measured, 10^4 rows of 256 floats
#: 25 ms against 4 ms)
SMALL = 64
#: a run of fewer trips is left to its steps: setting the accumulation up costs about what
#: 16 trips of a running sum cost (measured on cumulative-sum Scans of 4 and 64 columns)
FEWEST_TRIPS = 16


class NotAccumulable(Exception):
    """These operands have no accumulation equal to the elements one by one."""


def accumulated_pairs(demand, chosen) -> list:
    """(recurrence id, next-value map id, element stream id) for each recurrence whose next
    value is an accumulating map of itself and of a stream in `chosen` (batchable) or of an
    invariant (every x_k the same value: a counter's `+ 1`), both needed at every index below
    n + p."""
    pairs = []
    for rid, node in demand.members.items():
        if not isinstance(node, Recurrence) or demand.certain[rid] is None:
            continue
        step = demand.members.get(node.next)
        if (not isinstance(step, Map) or step.multi or len(step.args) != 2
                or demand.certain[node.next] is None):
            continue
        if step.kernel.ufunc not in ACCUMULATING or step.args[0] != rid:
            continue
        x = step.args[1]
        if x is not None and (x in chosen or x not in demand.members):
            pairs.append((rid, node.next, x))
    return pairs


def accumulate(step, init, elements, length, blocks=None):
    """The rows 0 .. length of the accumulation of `elements` (the first `length` of them,
    stacked) from `init` by the map `step`'s ufunc: row k is s_k, rows 1.. are m_0, m_1, ...
    `blocks` (step id -> block) keeps the block for a later run, which writes into it again
    when nothing holds it or a view of it any more (`dead`)."""
    f = step.kernel.ufunc
    xs = elements[:length]
    if (type(init) is not np.ndarray or type(xs) is not np.ndarray or init.dtype != xs.dtype
            or init.shape != xs.shape[1:] or len(xs) < length):
        raise NotAccumulable(f"{step.id}: operands of different dtypes or shapes")
    shape = (length + 1,) + init.shape
    rows = None if blocks is None else blocks.pop(step.id, None)
    if rows is None or rows.shape != shape or rows.dtype != init.dtype or not dead(rows):
        rows = np.empty(shape, init.dtype)  # (a new block costs a page fault per 4 KiB)
    if blocks is not None:
        blocks[step.id] = rows
    if init.size <= SMALL:
        f.accumulate(np.concatenate([init[None], xs]), axis=0, dtype=init.dtype, out=rows)
    else:  # numpy accumulates across rows slowly: row by row, each written in its place
        rows[0] = init
        for prev, x, row in zip(rows, xs, rows[1:]):
            f(prev, x, out=row)
    for k in {0, length - 1} if length else ():  # the kernel's own value at both ends
        one = np.asarray(step.fn(rows[k], xs[k]))
        if one.dtype != rows.dtype or one.tobytes() != rows[k + 1].tobytes():
            raise NotAccumulable(f"{step.id}: the accumulation differs from the kernel")
    return rows


def dead(block) -> bool:
    """Nothing but the caller's name holds `block`: every view of an array holds the array
    (its `base`), so no element, batch or output of an earlier run can still see it. The
    count is the caller's name and this function's argument and `getrefcount`'s."""
    return sys.getrefcount(block) <= 3
