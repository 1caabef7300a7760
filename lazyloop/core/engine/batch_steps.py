"""One stream's batch in a run, made (`stream/map`, `iterator/forward`, `recurrence/def`):
an iterator's stacked elements, a map's batched kernel on its arguments' batches, a
recurrence's shifted or accumulated rows; `batch.py` says which streams batch and installs
what is made here."""
from __future__ import annotations

import attrs
import numpy as np

from ..reference.rules import iterator_elements, map_element
from ..kernel import Elementwise, NotBatchable, aligned, same_values
from ..plan import Iterator, Map, Recurrence
from ..undefined import Partial, full_mask, join, mapped, split
from ..types import TensorType
from .accumulate import FEWEST_TRIPS, NotAccumulable, accumulate

# A batch larger than this many bytes per stream is not made: memory stays bounded.
MAX_BATCH_BYTES = 1 << 27


@attrs.frozen(repr=False)
class IteratedBatch:
    """An iterator's batch (`iterator/forward`): its first n + `offset` elements; `typed`:
    a tensor stream, whose element 0 a checking profile checks (`structure/shapes`)."""

    node: Iterator
    offset: int
    typed: bool

    def make(self, schedule, batches, n, max_bytes):
        length = n + self.offset
        if length > 0:
            batch = iterated(self.node, schedule.invariant(self.node.source), length)
            keep(schedule, batches, self.node, batch, self.typed)

    def __repr__(self):
        return f"IteratedBatch({self.node.id!r}, offset={self.offset})"


@attrs.frozen(repr=False)
class MappedBatch:
    """A map's batch (`stream/map`): its batched kernel on the first n + `offset` elements
    of its `arguments` ((reference, whether stacked) each: the loop's streams are, the
    invariants are not), made once every stream in `inside` is batched; `exact`: its form
    is an exact `Elementwise` one, whose batch needs no element checked (`exact_batch`)."""

    node: Map
    offset: int
    arguments: tuple
    inside: frozenset
    flags: tuple
    exact: bool
    typed: bool

    def make(self, schedule, batches, n, max_bytes):
        length = n + self.offset
        node = self.node
        if length <= 0 or node.id in batches or not batches.keys() >= self.inside:
            return  # in batches already: a next-value map, made with its recurrence
        args, masked = map_arguments(schedule, batches, self.arguments, length)
        if args is None:
            return
        try:
            if masked:
                batch = masked_batch(node, args, self.flags, length, max_bytes)
            elif self.exact:
                batch = exact_batch(node, args, self.flags, length, max_bytes)
            else:
                batch = plain_batch(node, args, self.flags, length, max_bytes)
        except NotBatchable:  # this stream (and what reads it) runs element by element
            return
        keep(schedule, batches, node, batch, self.typed)

    def __repr__(self):
        return (f"MappedBatch({self.node.id!r}, offset={self.offset}, "
                f"stacked={sorted(self.inside)!r}{', exact' if self.exact else ''})")


@attrs.frozen(repr=False)
class CarriedBatch:
    """A recurrence's batch (`recurrence/def`): its next value's batch shifted one place
    on, or the rows of its accumulation with its next-value map's (`accumulate.py`);
    `typed`: (stream, whether a tensor) for each stream it may give."""

    node: Recurrence
    offset: int
    typed: tuple

    def make(self, schedule, batches, n, max_bytes):
        node = self.node
        if n + self.offset <= 0:
            return
        made = (shift(schedule, node, batches[node.next], n) if node.next in batches
                else accumulation(schedule, node, batches, n, max_bytes))
        if made:
            for member, tensor in self.typed:
                if member.id in made:
                    keep(schedule, batches, member, made[member.id], tensor)

    def __repr__(self):
        return f"CarriedBatch({self.node.id!r})"


def batch_step(demand, node):
    """The step that makes the batch of candidate `node` (batch.candidates), decided once
    per demand: what `make_batches` reads of it in each run."""
    members, offset = demand.members, demand.certain[node.id]
    typed = isinstance(node.type, TensorType)
    if isinstance(node, Iterator):
        return IteratedBatch(node, offset, typed)
    if isinstance(node, Recurrence):
        step = members[node.next]
        return CarriedBatch(node, offset, tuple((m, isinstance(m.type, TensorType))
                                        for m in (node, step)))
    arguments = tuple((a, a in members) for a in node.args)
    form = node.kernel.batched
    return MappedBatch(node, offset, arguments, frozenset(a for a in node.args if a in members),
                       tuple(stacked for _, stacked in arguments),
                       isinstance(form, Elementwise) and form.exact, typed)


def head(batch, length):
    """The first `length` stacked elements of a batch, with their masks."""
    if type(batch) is Partial:
        return Partial(batch.value[:length], batch.mask[:length])
    return batch[:length]


def keep(schedule, batches, node, batch, typed):
    """A batch made: read-only from now on (`stream/memo`), its element 0 checked where it
    is a tensor stream in a profile that checks (`structure/shapes`: one element's shape is
    all of theirs) and the stream has not admitted its shape in this dtype already."""
    values = batch.value if type(batch) is Partial else batch
    values.setflags(write=False)
    if typed and schedule.check and not (values.dtype == node.type.dtype
                                         and values.shape[1:] in schedule.shapes[node.id]):
        schedule.check_element(node, values[0, ...])
    batches[node.id] = batch


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


def map_arguments(schedule, batches, arguments, length):
    """The arguments of a map's batch (`stream/map`): the first `length` elements of each
    batched argument, each invariant as it is; and whether any is undefined somewhere. None
    where an invariant is not an array."""
    args, masked = [], False
    for ref, stacked in arguments:
        if stacked:
            value = batches[ref]
            if type(value) is Partial:
                masked, value = True, head(value, length)
            elif len(value) != length:
                value = value[:length]
        else:
            value = schedule.invariant(ref)
            if type(value) is Partial:
                masked = True
                if not isinstance(value.value, np.ndarray):
                    return None, masked
            elif not isinstance(value, np.ndarray):
                return None, masked
        args.append(value)
    return args, masked


def exact_batch(node, args, flags, length, max_bytes=MAX_BATCH_BYTES):
    """`stream/map` through an exact elementwise form (`Elementwise.exact`) on wholly
    defined arguments of one dtype: each element of the batch is the kernel's value on that
    element's arguments, bit for bit, in its dtype and shape, so no element is computed
    again to check it. Its size is bounded before it is made: the arguments, stacked ones
    `length` long each, broadcast to its shape."""
    dtype = args[0].dtype
    widest = 0
    for value, stacked in zip(args, flags):
        if value.dtype != dtype or stacked and len(value) != length:
            return plain_batch(node, args, flags, length, max_bytes)
        widest = max(widest, value.itemsize)
    form = node.kernel.batched
    fct = form.fct
    if fct is same_values:  # the stacked elements themselves, no copy (`stream/memo`)
        return args[0]
    stand_ins = aligned(args, flags)
    if np.broadcast(*stand_ins).size * widest > max_bytes:
        raise NotBatchable(f"{node.id}: {length} elements over {max_bytes} bytes")
    result = np.asarray(fct(*stand_ins))
    if result.nbytes > max_bytes:  # a wider dtype than its arguments' (int8 / int8)
        raise NotBatchable(f"{node.id}: {length} elements over {max_bytes} bytes")
    return result if form.finish is None else form.finish(result, args[0])


def plain_batch(node, args, flags, length, max_bytes=MAX_BATCH_BYTES):
    """`stream/map` on wholly defined arguments: the batched kernel's value, whose element 0
    and last element must equal the kernel's own on the arguments' elements 0 and last, in
    dtype, shape and bytes (`kernel_agrees`); the size is bounded before the batch is made."""
    firsts, lasts = [], []
    for value, stacked in zip(args, flags):
        firsts.append(value[0, ...] if stacked else value)
        lasts.append(value[-1, ...] if stacked else value)
    one = np.asarray(node.fn(*firsts))
    if length * one.nbytes > max_bytes:
        raise NotBatchable(f"{node.id}: {length} elements of {one.nbytes} bytes")
    result = np.asarray(node.kernel.batched(args, flags))
    if not kernel_agrees(node, lasts, result, one, length):
        raise NotBatchable(f"{node.id}: the batched form differs from the kernel")
    return result


def kernel_agrees(node, lasts, result, one, length) -> bool:
    """The batched result holds `length` elements of the dtype and shape of `one` (the
    kernel's element 0), its element 0 is `one` byte for byte, and its last is the kernel's
    own on the arguments' last elements `lasts` (`same_last`)."""
    return (result.shape[:1] == (length,) and result.dtype == one.dtype
            and result.shape[1:] == one.shape and result[0, ...].tobytes() == one.tobytes()
            and same_last(node, lasts, result))


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
    lasts = [v[-1, ...] if stacked else v for v, stacked in zip(values, flags)]
    if not kernel_agrees(node, lasts, result, one, length):
        raise NotBatchable(f"{node.id}: the batched form differs from the kernel")
    stand_ins = aligned([v if m is None else m for v, m in zip(values, masks)], flags)
    batch = mapped(result, [s for s, m in zip(stand_ins, masks) if m is not None],
                   node.positionwise, False)
    mask = split(batch)[1]
    if not np.array_equal(full_mask(one, one_mask),
                          full_mask(one, None if mask is None else mask[0, ...])):
        raise NotBatchable(f"{node.id}: the batched mask differs from the element rule's")
    return batch


def same_last(node, lasts, result) -> bool:
    """The last element too equals the kernel's own (its bytes sit elsewhere in memory than
    element 0's, which a reduction's order of summing could notice); a kernel that refuses
    it leaves the stream to the per-element path, which reports that element's error."""
    if len(result) < 2:
        return True
    try:
        last = np.asarray(node.fn(*lasts))
    except Exception:  # noqa: BLE001 -- reported by the per-element path
        return False
    return last.dtype == result.dtype and last.tobytes() == result[-1, ...].tobytes()
