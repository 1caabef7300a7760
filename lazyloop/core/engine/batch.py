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

* its kernel has a batched form (`Kernel.batched(args, flags)`, flags: which arguments are
  stacked; a numpy ufunc's is itself, each output element computed alone by the same loop
  whatever the array's length), which raises `NotBatchable` where it cannot promise equal
  values (MatMul batches a vector times a matrix as a stack of vector
  products, not as one matrix product, which sums in another order);
* the iterated extent covers every demanded index (else the per-element path reports
  `iterator/bounds` at the element the reference reports it);
* n is within the fuel, and the batched result's first and last elements equal, in dtype,
  shape and bytes, the per-element kernel applied to the inputs' first and last elements
  (a batched form is the kernel's promise for every element; these two catch a form that
  breaks it at the edges, or sums in another order where memory alignment differs) --
  except where the form is an exact `Elementwise` one on arguments of one dtype (an
  IEEE-exact ufunc, Identity: `kernel.EXACT`), whose every element has the kernel's bits
  whichever loop computes it; no element is computed again for it (`exact_batch`).

Which streams batch, how (their steps: batch_steps.py) and which streams every trip forces
is decided once per demand (`batch_plan`, a `BatchPlan` kept in the plan's derived facts);
a run follows the steps and installs what they made.

Batching pays only where the trips it saves cost more than the batches (the measured
bounds below): a run of `FEWEST_WHOLE` trips or more whose batches may take all of its work
(every stream a trip forces is a candidate, a recurrence only where the run is long enough
to accumulate or shift one), or any run of `FEWEST_BATCHED` trips or more, whose batches may
take part of it (its trips then run, reading the batched elements).

Anything else -- a kernel raising -- abandons batching for that run of the loop, and the
per-element schedule runs as before, reporting what the reference reports. The batched
elements are recorded as forced once, in full, when the batches are made.

Undefined values batch too (on a masked schedule, masked_steps.py): an iterator over a
tensor undefined somewhere batches its mask beside its values (`iterator/forward`); a map
batches its values as above and its mask by the rule its elements follow
(`undefined.mapped`, `stream/map`: a position-wise kernel's masks aligned as its values
are, any other kernel's result wholly undefined), and element 0's mask must equal the
element rule's too. Each element read from such a batch is a `Partial` where its row of the
mask is not all True (`undefined.join`), as the reference's element is. A map none of whose
arguments is undefined anywhere makes a plain array and no mask (`plain_batch`).
"""
from __future__ import annotations

import attrs

from ..plan import Iterator, Map, Recurrence
from ..undefined import Partial
from .accumulate import FEWEST_TRIPS, accumulated_pairs
from .batch_steps import MAX_BATCH_BYTES, batch_step, head


#: a run of fewer trips is batched only where the batches take all of its work: batches
#: made beside trips that run anyway save those trips little (measured, CPU time per call:
#: a Scan whose two maps batch beside a carried sum, 64 trips 198 us batched against 191 us
#: trip by trip, 96 trips 258 against 269, 256 trips 566 against 656; an LSTM-like Scan
#: whose input products batch, 64 trips 1855 against 1800, 96 trips 2657 against 2660)
FEWEST_BATCHED = 96
#: a run whose batches take all of its work is batched from this many trips: making the
#: batches (a kernel call a map whose form is exact, three where its first and last
#: elements are checked) costs more than fewer trips (measured, CPU time per call of
#: skl2onnx's squared-distance Scan -- an exact Sub, a checked reduction, an Identity --
#: 1 trip 44 us batched against 24 us trip by trip, 8 trips 47 against 44, 10 trips 46
#: against 50, 12 trips 47 against 56)
FEWEST_WHOLE = 10


def candidates(demand):
    """Streams that may be batched, in an order where inputs come first (derived once)."""
    key = ("batchable", demand.key)
    derived = demand.plan.derived
    if key not in derived:
        derived[key] = batchable(demand)
    return derived[key]


def batchable(demand) -> tuple:
    """Iterators and maps with a batched kernel, needed at every index below n + p, that
    read only batchable streams and invariants (and at least one batchable stream); and
    recurrences that accumulate a batchable stream (`accumulate.py`), each followed by its
    next-value map."""
    found = []
    chosen = set()
    grew = True
    while grew:
        grew = False
        for nid, node in demand.members.items():
            if nid in chosen or demand.certain[nid] is None:
                continue
            if isinstance(node, Iterator):
                ok = True
            elif isinstance(node, Map) and not node.multi and node.kernel.batched:
                ok = all(a is not None and (a in chosen or a not in demand.members)
                         for a in node.args) and any(a in chosen for a in node.args)
            else:
                ok = False
            if ok:
                found.append(nid)
                chosen.add(nid)
        for rid, mid, _ in accumulated_pairs(demand, chosen):
            if rid not in chosen:
                found += [rid, mid]
                chosen |= {rid, mid}
                grew = True
        for rid in shifted(demand, chosen):
            found.append(rid)
            chosen.add(rid)
            grew = True
    return tuple(found)


def shifted(demand, chosen) -> list:
    """Recurrences, needed at every index below n + p, whose next value is a stream in
    `chosen` that does not read them (it reads only batchable streams and invariants):
    `recurrence/def` makes their elements init, x_0, x_1, ... -- the batch of x one place on."""
    return [rid for rid, node in demand.members.items()
            if rid not in chosen and isinstance(node, Recurrence)
            and demand.certain[rid] is not None and node.next in chosen]


def per_trip(demand) -> tuple:
    """The streams every trip forces whatever happens (the `certain` demand; derived once)."""
    key = ("forced every trip", demand.key)
    derived = demand.plan.derived
    found = derived.get(key)
    if found is None:
        found = derived[key] = tuple(k for k in demand.members
                                     if demand.certain[k] is not None)
    return found


def wholly_batchable(demand, collected, n) -> bool:
    """Whether the batches of a run of n trips may hold all of its work: every stream forced
    each trip and every collected one is a candidate, and none of them a recurrence unless
    the run is long enough for one to accumulate or shift (`FEWEST_TRIPS`; derived once)."""
    long = n >= FEWEST_TRIPS
    key = ("wholly batchable", demand.key, tuple(collected), long)
    derived = demand.plan.derived
    if key not in derived:
        streams, forced = set(candidates(demand)), per_trip(demand)
        derived[key] = (all(k in streams for k in forced) and set(collected) <= streams
                        and (long or not any(isinstance(demand.members[k], Recurrence)
                                             for k in forced)))
    return derived[key]


def worth_batching(schedule, n) -> bool:
    """`stream/map` on the fast path: batch a run of n trips where it pays -- a run of
    `FEWEST_BATCHED` trips or more, or one of `FEWEST_WHOLE` or more whose batches may take
    all of its work."""
    return n >= FEWEST_BATCHED or (n >= FEWEST_WHOLE
                                   and wholly_batchable(schedule.d, schedule.collected, n))


def batch_maps(schedule, n, max_bytes=MAX_BATCH_BYTES) -> int:
    """Make the batches of one run of n trips and let the schedule read its elements from
    them. Returns the trip the schedule starts at: n when the batches hold all the work of
    every trip (what each trip forces, and what CONCATENATE/REVERSE collect, which then take
    the batch itself), else 0; nothing changes where batching does not apply."""
    plan = batch_plan(schedule.d)
    if not plan.steps or n > schedule.m.max_trips or not worth_batching(schedule, n):
        return 0
    try:
        batches = make_batches(schedule, plan.steps, n, max_bytes)
    except Exception:  # noqa: BLE001 -- any failure: the per-element path reports it
        return 0
    if not batches:
        return 0
    install(schedule, batches)
    for k, offset in plan.every:  # does every trip's work lie in the batches?
        batch = batches.get(k)
        if batch is None or extent(batch) != n + offset:
            return 0
    collected = schedule.collected
    if not all(src in batches for src in collected):
        return 0
    for src in collected:
        collected[src] = head(batches[src], n)
    return n


@attrs.frozen
class BatchPlan:
    """What a run's batches are made of (`stream/map`), decided once per demand: `steps`,
    one per candidate in `candidates`' order (batch_steps.py), and `every`, each stream
    every trip forces with its `certain` offset (a run is wholly batched when each has a
    batch n + offset long)."""

    steps: tuple
    every: tuple


def batch_plan(demand) -> BatchPlan:
    """The demand's `BatchPlan` (derived once per plan)."""
    key = ("batch plan", demand.key)
    derived = demand.plan.derived
    found = derived.get(key)
    if found is None:
        members = demand.members
        found = derived[key] = BatchPlan(
            tuple(batch_step(demand, members[k]) for k in candidates(demand)),
            tuple((k, demand.certain[k]) for k in per_trip(demand)))
    return found


# A batch is an array of stacked elements, or, where some are undefined somewhere, a
# `Partial` of that array and a bool array of the same shape: the elements' masks stacked.

def extent(batch) -> int:
    return len(batch.value if type(batch) is Partial else batch)


def make_batches(schedule, steps, n, max_bytes=MAX_BATCH_BYTES) -> dict:
    """The batches of one run of n trips, step by step (`BatchPlan.steps`): each iterator's
    elements, each map's whose streams are batched, each recurrence's that shifts or
    accumulates a batch; a stream whose batch cannot be made is left out (it and what reads
    it run element by element)."""
    batches = {}
    for step in steps:
        step.make(schedule, batches, n, max_bytes)
    return batches


def install(schedule, batches):
    """Elements below each batch's length are views of it; others are computed as before."""
    schedule.batched = frozenset(batches)
    steps, memo, record, masked = schedule.steps, schedule.memo, schedule.record, []
    for nid, batch in batches.items():
        if type(batch) is Partial:
            masked.append(nid)
        if record is not None:
            record.extend((nid, k) for k in range(extent(batch)))
        steps[nid] = batched_step(memo[nid], batch, steps[nid])
    if masked:
        schedule.masked_batches = frozenset(masked)


def batched_step(memo, batch, per_element):
    length = extent(batch)
    if type(batch) is Partial:  # each element with its row of the mask, as `undefined.join`
        values, masks = batch.value, batch.mask  # makes it: Partial where not all defined
        whole = masks.reshape(length, -1).all(axis=1) if length else ()

        def masked_step(k):
            if k >= length:
                return per_element(k)
            value = values[k, ...] if whole[k] else Partial(values[k, ...], masks[k, ...])
            memo[k] = value
            return value
        return masked_step

    def step(k):
        if k >= length:
            return per_element(k)
        value = memo[k] = batch[k, ...]
        return value
    return step
