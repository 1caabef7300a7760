"""One stream's batch in a run, made (`stream/map`, `iterator/forward`, `recurrence/def`):
an iterator's stacked elements, a map's batched kernel on its arguments' batches, a
recurrence's shifted or accumulated rows; `batch.py` says which streams batch and installs
what is made here."""
from __future__ import annotations

import numpy as np

from ..reference.rules import iterator_elements, map_element
from ..kernel import NotBatchable, aligned
from ..undefined import Partial, full_mask, join, mapped, split
from .accumulate import FEWEST_TRIPS, NotAccumulable, accumulate

# A batch larger than this many bytes per stream is not made: memory stays bounded.
MAX_BATCH_BYTES = 1 << 27


def head(batch, length):
    """The first `length` stacked elements of a batch, with their masks."""
    if type(batch) is Partial:
        return Partial(batch.value[:length], batch.mask[:length])
    return batch[:length]


def keep(schedule, batches, nid, batch, check):
    """A batch made: read-only from now on (`stream/memo`), its element 0 checked where
    `check` says (a tensor stream in a profile that checks, `structure/shapes`: one
    element's shape is all of theirs)."""
    values = split(batch)[0]
    values.setflags(write=False)
    if check:
        schedule.check_element(schedule.d.members[nid], values[0, ...])
    batches[nid] = batch


def iterated(node, whole, length):
    """An iterator's first `length` elements stacked (`iterator/forward`, `iterator/reverse`,
    A2 "guide"): a wholly defined tensor iterated along its first axis is sliced as it is
    (no axis to move); any other as `iterator_elements` makes them."""
    if (node.axis == 0 and type(whole) is np.ndarray and whole.ndim
            and length <= whole.shape[0]):
        return whole[::-1][:length] if node.reverse else whole[:length]
    return iterator_elements(node, whole, length)


def accumulation(schedule, node, batches, n, max_bytes=MAX_BATCH_BYTES) -> dict:
    """The batches of a recurrence and of its next-value map, rows of one accumulation
    (`recurrence/def`, accumulate.py); none where it does not apply."""
    d = schedule.d
    step = d.members[node.next]
    length = max(n + d.certain[step.id], n + d.certain[node.id] - 1)
    x = step.args[1]
    elements = batches.get(x) if x in d.members else repeated(schedule.invariant(x), length)
    if (type(elements) is not np.ndarray or n < FEWEST_TRIPS
            or (length + 1) * elements[0].nbytes > max_bytes):
        return {}  # masked elements, a short run or too large a batch: element by element
    try:
        rows = accumulate(step, schedule.invariant(node.init), elements, length,
                          schedule.blocks)
    except NotAccumulable:
        return {}
    return {node.id: rows[:n + d.certain[node.id]], step.id: rows[1:1 + n + d.certain[step.id]]}


def repeated(value, length):
    """An invariant as the stack of its `length` elements (`stream/invariant`: every one is
    the value itself), a read-only view that copies nothing; None for a masked value."""
    if type(value) is not np.ndarray:
        return None
    return np.broadcast_to(value, (length,) + value.shape)


def shift(schedule, node, next_batch, n) -> dict:
    """The batch of a recurrence whose next value is batched (`shifted`): element 0 its
    initial value, element k + 1 the next value's element k (`recurrence/def`), where the
    initial value is an array of the elements' dtype and shape; none elsewhere (a masked
    batch, a short run, a carried value that changes shape, A11)."""
    d = schedule.d
    init = schedule.invariant(node.init)
    length = n + d.certain[node.id]
    if (type(next_batch) is not np.ndarray or type(init) is not np.ndarray or n < FEWEST_TRIPS
            or init.dtype != next_batch.dtype or init.shape != next_batch.shape[1:]
            or len(next_batch) < length - 1):
        return {}
    rows = np.concatenate([init[None], next_batch[:length - 1]])
    return {node.id: rows}


def map_batch(schedule, node, batches, length, max_bytes=MAX_BATCH_BYTES):
    """`stream/map` over stacked elements: the batched kernel on the first `length`
    elements of the batched arguments and the invariants as they are; None where an
    invariant is not an array. A batch of wholly defined arguments is a plain array and
    pays no mask work (`plain_batch`); masks are made only where some argument is undefined
    somewhere (`masked_batch`)."""
    args, flags, masked = [], [], False
    for a in node.args:
        stacked = a in batches
        value = head(batches[a], length) if stacked else schedule.invariant(a)
        if not stacked and not isinstance(split(value)[0], np.ndarray):
            return None
        masked = masked or type(value) is Partial
        args.append(value)
        flags.append(stacked)
    if masked:
        return masked_batch(node, args, tuple(flags), length, max_bytes)
    return plain_batch(node, args, tuple(flags), length, max_bytes)


def plain_batch(node, args, flags, length, max_bytes=MAX_BATCH_BYTES):
    """`stream/map` on wholly defined arguments: the batched kernel's value, whose element 0
    and last element must equal the kernel's own on the arguments' elements 0 and last, in
    dtype, shape and bytes (`kernel_agrees`); the size is bounded before the batch is made."""
    one = np.asarray(node.fn(*[v[0, ...] if f else v for v, f in zip(args, flags)]))
    if length * one.nbytes > max_bytes:
        raise NotBatchable(f"{node.id}: {length} elements of {one.nbytes} bytes")
    result = np.asarray(node.kernel.batched(args, flags))
    if not kernel_agrees(node, args, flags, result, one, length):
        raise NotBatchable(f"{node.id}: the batched form differs from the kernel")
    return result


def kernel_agrees(node, args, flags, result, one, length) -> bool:
    """The batched result holds `length` elements of the dtype and shape of `one` (the
    kernel's element 0), its element 0 is `one` byte for byte, and its last is the kernel's
    own (`same_last`)."""
    return (result.shape[:1] == (length,) and result.dtype == one.dtype
            and result.shape[1:] == one.shape and result[0, ...].tobytes() == one.tobytes()
            and same_last(node, args, flags, result))


def masked_batch(node, args, flags, length, max_bytes=MAX_BATCH_BYTES):
    """`stream/map` where some argument is undefined somewhere: the values batch as
    `plain_batch` makes them, checked against the element rule on elements 0 (`map_element`
    on `Partial` elements); the masks of undefined arguments make the batch's mask by the
    rule elements follow (`undefined.mapped`, a position-wise kernel's masks aligned as its
    values are), and its row 0 must be element 0's mask."""
    values, masks, firsts = [], [], []
    for arg, stacked in zip(args, flags):
        value, mask = split(arg)
        if stacked:
            firsts.append(value[0, ...] if mask is None else join(value[0, ...], mask[0, ...]))
        else:
            firsts.append(arg)
            mask = None if mask is None else full_mask(value, mask)
        values.append(value)
        masks.append(mask)
    one, one_mask = split(map_element(node, firsts))
    one = np.asarray(one)
    if length * one.nbytes > max_bytes:  # decided before the batch is made
        raise NotBatchable(f"{node.id}: {length} elements of {one.nbytes} bytes")
    result = np.asarray(node.kernel.batched(values, flags))
    if not kernel_agrees(node, values, flags, result, one, length):
        raise NotBatchable(f"{node.id}: the batched form differs from the kernel")
    stand_ins = aligned([v if m is None else m for v, m in zip(values, masks)], flags)
    batch = mapped(result, [s for s, m in zip(stand_ins, masks) if m is not None],
                   node.positionwise, False)
    mask = split(batch)[1]
    if not np.array_equal(full_mask(one, one_mask),
                          full_mask(one, None if mask is None else mask[0, ...])):
        raise NotBatchable(f"{node.id}: the batched mask differs from the element rule's")
    return batch


def same_last(node, args, flags, result) -> bool:
    """The last element too equals the kernel's own (its bytes sit elsewhere in memory than
    element 0's, which a reduction's order of summing could notice); a kernel that refuses
    it leaves the stream to the per-element path, which reports that element's error."""
    if len(result) < 2:
        return True
    try:
        last = np.asarray(node.fn(*[v[-1, ...] if f else v for v, f in zip(args, flags)]))
    except Exception:  # noqa: BLE001 -- reported by the per-element path
        return False
    return last.dtype == result.dtype and last.tobytes() == result[-1, ...].tobytes()
