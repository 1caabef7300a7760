"""The fast path with undefined values: the schedule's steps that carry masks.

A loop can meet an undefined value (spec/13-outputs.md): the CONCATENATE padding of an earlier
loop read as an iterated tensor or an invariant, a relaxed-profile last value after zero trips
(A3 "undefined"), a carried value or an ONNX condition that starts undefined. Such a value is
a `Partial` (a value and its `defined` mask), and the reference evaluator's rules carry the
masks along (`stream/map`, `iterator/forward`, `recurrence/def`, `trip/while`).

The schedule does the same, by the same functions (`element_rules.apply_map`,
`iterator_element`, `while_holds` and `undefined.mapped`), without slowing down the loops that
never meet one: a schedule starts *plain*, and the first `Partial` invariant it fetches
raises `MasksNeeded`. (Undefined values enter a loop only that way: what makes one -- the
plan's `Undefined` start of a relaxed LAST_VALUE, `Network.add_undefined`, ONNX's undefined
condition input -- has no inputs and sits outside every loop; every other kernel returns
plain values on plain arguments.) Nothing observable has happened by then (the schedule is
pure; the machine drops what it recorded for the tests), so the machine runs the loop again
with a *masked* schedule, whose map and iterator steps are the ones below; recurrences,
projections and the stores need no change, since they pass elements on whole. Later runs of
that loop (another outer element) start masked.
"""
from __future__ import annotations

from ..reference.rules import (apply_map, axis_extent, check_index, guarded_map_step,
                            iterator_element)
from ..undefined import Partial


class MasksNeeded(BaseException):
    """A plain schedule met an undefined value: the machine runs the loop again masked.
    Internal control flow (caught by `Machine.run_schedule`); a BaseException so that no
    kernel guard converts it."""

    def __init__(self, ref, loop):
        super().__init__(ref)
        self.ref, self.loop = ref, loop  # the loop whose schedule must run again


def masked_map_step(schedule, nid, node, finish):
    """Element k of a map whose arguments may be undefined somewhere (`stream/map`)."""
    readers = [schedule.reader(a) for a in node.args]
    return guarded_map_step(node, lambda k: apply_map(node, [r(k) for r in readers]), finish)


def masked_iterate(schedule, node, k):
    """`iterator/forward`, `iterator/reverse` (A2 "guide"), `iterator/bounds` over a tensor
    that may be undefined somewhere: the element carries the slice of the mask."""
    whole = schedule.invariant(node.source)
    if type(whole) is not Partial:
        return schedule.iterate(node, k)
    value, mask = whole.value, whole.mask
    extent = axis_extent(node, value)
    index = extent - 1 - k if node.reverse else k
    check_index(node, k, index, extent)
    return iterator_element(value, mask, index, node.axis)
