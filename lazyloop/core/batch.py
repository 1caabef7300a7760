"""Batched map streams on the fast path: all demanded elements of a stream in one kernel call.

A stream that reads only iterators and invariants -- no recurrence upstream -- is a map over
the iterated axis (`stream/map`, `iterator/forward`): element k needs nothing but index k of
the iterated tensors. When the trip count n is known before the first trip (a COUNT and no
WHILE) and the stream is needed at every index below n + p whatever happens (the schedule's
`certain` demand), the elements the reference evaluator forces are exactly indices
0 .. n + p - 1, known in advance. Then the schedule computes them at once: an iterator's
elements are a view of its tensor with the iterated axis first, and a map whose kernel has a
batched form applies it once to the stacked elements of its inputs.

The values must be the per-element kernel's, bit for bit, and the errors the reference
evaluator's. So a stream is batched only when

* its kernel has a batched form: a numpy ufunc (each output element is computed alone, by the
  same loop, whatever the array's length), or a kernel that supplies `fn.batched(args,
  flags)` (flags: which arguments are stacked) and raises `NotBatchable` where it cannot
  promise equal values (MatMul batches a vector times a matrix as a stack of vector
  products, not as one matrix product, which sums in another order);
* the iterated extent covers every demanded index (else the per-element path reports
  `iterator/bounds` at the element the reference reports it);
* n is within the fuel, and the batched result's element 0 equals, in dtype, shape and
  bytes, the per-element kernel applied to the inputs' elements 0.

Anything else -- a kernel raising, an undefined invariant -- abandons batching for that run of
the loop, and the per-element schedule runs as before, reporting what the reference reports.
The batched elements are recorded as forced once, in full, when the batches are made.
"""
from __future__ import annotations

import numpy as np

from .plan import Iterator, Map
from .types import TensorType

# A batch larger than this many bytes per stream is not made: memory stays bounded.
MAX_BATCH_BYTES = 1 << 27


class NotBatchable(Exception):
    """This kernel, on these arguments, has no batched form that equals its elements."""


def elementwise(fct, finish=None):
    """The batched form of an elementwise kernel: stacked arguments get singleton axes after
    the batch axis, so that their elements broadcast against the invariants as they do one
    by one; `finish(result, first_arg)` adjusts the result as the kernel does."""
    def batched(args, flags):
        ranks = [a.ndim - 1 if f else a.ndim for a, f in zip(args, flags)]
        top = max(ranks)
        aligned = [a.reshape((a.shape[0],) + (1,) * (top - r) + a.shape[1:]) if f else a
                   for a, f, r in zip(args, flags, ranks)]
        result = np.asarray(fct(*aligned))
        return result if finish is None else finish(result, args[0])
    return batched


def batched_form(fn):
    if isinstance(fn, np.ufunc) and fn.nout == 1:
        return elementwise(fn)
    return getattr(fn, "batched", None)


def candidates(demand):
    """Streams that may be batched, in an order where inputs come first (derived once)."""
    key = ("batchable", demand.loop.name)
    derived = demand.plan.derived
    if key not in derived:
        found = []
        chosen = set()
        for nid, node in demand.members.items():
            if demand.certain[nid] is None:
                continue
            if isinstance(node, Iterator):
                ok = True
            elif isinstance(node, Map) and not node.multi and batched_form(node.fn):
                ok = all(a is not None and (a in chosen or a not in demand.members)
                         for a in node.args) and any(a in chosen for a in node.args)
            else:
                ok = False
            if ok:
                found.append(nid)
                chosen.add(nid)
        derived[key] = tuple(found)
    return derived[key]


def batch_maps(schedule, n) -> int:
    """Make the batches of one run of n trips and let the schedule read its elements from
    them. Returns the trip the schedule starts at: n when the batches hold all the work of
    every trip (what each trip forces, and what CONCATENATE/REVERSE collect, which then take
    the batch itself), else 0; nothing changes where batching does not apply."""
    d = schedule.d
    streams = candidates(d)
    if not streams or n > schedule.m.max_trips:
        return 0
    try:
        batches = make_batches(schedule, streams, n)
    except Exception:  # noqa: BLE001 -- any failure: the per-element path reports it
        return 0
    if not batches:
        return 0
    install(schedule, batches)
    per_trip = [k for k in d.members if d.certain[k] is not None]
    if not all(k in batches and len(batches[k]) == n + d.certain[k] for k in per_trip):
        return 0
    if not all(src in batches for src in schedule.collected):
        return 0
    for src in schedule.collected:
        schedule.collected[src] = batches[src][:n]
    return n


def make_batches(schedule, streams, n):
    d, batches = schedule.d, {}
    for nid in streams:
        length = n + d.certain[nid]
        if length <= 0:
            continue
        node = d.members[nid]
        if isinstance(node, Iterator):
            batch = iterator_batch(schedule, node, length)
        else:
            if not all(a in batches or a not in d.members for a in node.args):
                continue
            try:
                batch = map_batch(schedule, node, batches, length)
            except NotBatchable:  # this stream (and what reads it) runs element by element
                continue
        if batch is None:
            continue
        batch.flags.writeable = False
        ty = node.type
        if schedule.check and isinstance(ty, TensorType):
            schedule.check_element(node, batch[0, ...])  # one element's type is all of theirs
        batches[nid] = batch
    return batches


def iterator_batch(schedule, node, length):
    """`iterator/forward`, `iterator/reverse` (A2 "guide"): indices 0..length-1 as a view."""
    whole = schedule.invariant(node.source)
    if not isinstance(whole, np.ndarray):
        return None
    extent = whole.shape[node.axis]
    if length > extent:
        return None  # a demanded index is out of bounds: the per-element path says where
    stacked = np.moveaxis(whole, node.axis, 0)
    return stacked[::-1][:length] if node.reverse else stacked[:length]


def map_batch(schedule, node, batches, length):
    """`stream/map` over stacked elements, checked against the kernel on elements 0."""
    args, flags, firsts = [], [], []
    for a in node.args:
        if a in batches:
            stacked = batches[a][:length]
            args.append(stacked)
            flags.append(True)
            firsts.append(stacked[0, ...])
        else:
            value = schedule.invariant(a)
            if not isinstance(value, np.ndarray):
                return None
            args.append(value)
            flags.append(False)
            firsts.append(value)
    one = np.asarray(node.fn(*firsts))
    if length * one.nbytes > MAX_BATCH_BYTES:  # decided before the batch is made
        raise NotBatchable(f"{node.id}: {length} elements of {one.nbytes} bytes")
    result = np.asarray(batched_form(node.fn)(args, tuple(flags)))
    if (result.shape[:1] != (length,) or result.dtype != one.dtype
            or result.shape[1:] != one.shape or result[0, ...].tobytes() != one.tobytes()):
        raise NotBatchable(f"{node.id}: the batched form differs from the kernel")
    return result


def install(schedule, batches):
    """Elements below each batch's length are views of it; others are computed as before."""
    schedule.batched = frozenset(batches)
    record = schedule.record
    if record is not None:
        for nid, batch in batches.items():
            record.extend((nid, k) for k in range(len(batch)))
    for nid, batch in batches.items():
        schedule.steps[nid] = batched_step(schedule.memo[nid], batch, schedule.steps[nid])


def batched_step(memo, batch, per_element):
    length = len(batch)

    def step(k):
        if k >= length:
            return per_element(k)
        value = memo[k] = batch[k, ...]
        return value
    return step
