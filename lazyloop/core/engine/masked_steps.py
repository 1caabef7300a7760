"""The fast path with undefined values: the schedule's steps that carry masks.

A loop can meet an undefined value (spec/13-outputs.md): the CONCATENATE padding of an earlier
loop read as an iterated tensor or an invariant, a relaxed-profile last value after zero trips
(A3 "undefined"), a carried value or an ONNX condition that starts undefined. Such a value is
a `Partial` (a value and its `defined` mask), and the reference evaluator's rules carry the
masks along (`stream/map`, `iterator/forward`, `recurrence/def`, `trip/while`).

The schedule does the same, by the same steps (the step table's map and iterator steps on a
masked schedule, `lazyloop.core.reference.steps`, calling `rules.map_element`,
`rules.iterator_element`; `rules.while_holds`), without slowing down the loops that never meet
one: a schedule starts *plain*, and the first `Partial` invariant it fetches raises
`MasksNeeded`. (Undefined values enter a loop only that way: what makes one -- the
plan's `Undefined` start of a relaxed LAST_VALUE, `Network.add_undefined`, ONNX's undefined
condition input -- has no inputs and sits outside every loop; every other kernel returns
plain values on plain arguments.) Nothing observable has happened by then (the schedule is
pure; the machine drops what it recorded for the tests), so the machine runs the loop again
with a *masked* schedule, whose map steps apply the rule's masks (its iterator steps carry
the slices of the mask whenever the tensor has one); recurrences, projections and the stores
need no change, since they pass elements on whole. Later runs of that loop (another outer
element) start masked.
"""
from __future__ import annotations


class MasksNeeded(BaseException):
    """A plain schedule met an undefined value: the machine runs the loop again masked.
    Internal control flow (caught by `Machine.run_schedule`); a BaseException so that no
    kernel guard converts it."""

    def __init__(self, ref, loop):
        super().__init__(ref)
        self.ref, self.loop = ref, loop  # the loop whose schedule must run again

