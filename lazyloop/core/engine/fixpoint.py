"""`laziness/fixed-point`: a loop whose state stops changing ends early, soundly.

When every stream of a loop that is forced reads only carried values (recurrences) and
invariants -- no iterator, and no kernel that draws random numbers -- element k of every
stream is a function of the carried values at index k alone. If on some index m every
carried value the loop forces equals, exactly (same dtype, shape and bytes), its value at
m - 1, then by induction every later index repeats index m: the state is a *fixed point*.
(An ONNX or OpenVINO iteration number is a recurrence i + 1: a body that reads it never
reaches one.)

Then:

* with a COUNT, the trip count n is the count, and LAST_VALUE outputs at n equal those of a
  run that stops at any trip past the fixed point (plus the depth of the point demands):
  the schedule stops there, and the trips it skips are not forced (nor charged to the fuel);
* with no COUNT, the WHILE input -- true on every trip so far, and a function of the state --
  is true for ever: the loop never ends, and `NeverEnds` (a `FuelExhausted`) says so at once
  instead of after `max_trips` trips;
* CONCATENATE and REVERSE outputs keep every trip: with a COUNT, their loop runs all trips.

`FixedPointWatch` is the static half (which carried values to compare, derived once per
loop from the schedule's demand analysis); `Schedule.run` calls `settle` after the trips
`first_check` and `next_check` name.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from ..enums import LoopOutput
from ..errors import NeverEnds
from ..fuel import CLOCK_EVERY
from ..plan import Map, Recurrence
from ..reference.steps import entry

RULE = "laziness/fixed-point"

# Kernels that do not give the same value for the same inputs (ONNX's random generators).
NONDETERMINISTIC = ("Random", "Bernoulli", "Multinomial")

# With no COUNT, the state is compared after trip CHECK_EVERY and every CHECK_EVERY trips
# after (a loop that ends sooner is not slowed by the watch): a fixed point reached at m is
# seen by trip m + CHECK_EVERY at the latest. With a COUNT (which only a long loop makes
# worth cutting short), after trip FIRST_COUNTED, then each time the trips have doubled: by
# trip 2m at the latest.
CHECK_EVERY, FIRST_COUNTED = 64, 16

# With a COUNT, the schedule stops early only when that saves more than this many trips:
# a short loop simply runs (and forces exactly what the reference evaluator forces).
WORTH_SKIPPING = 64


def nondeterministic(node) -> bool:
    return isinstance(node, Map) and str(node.op).startswith(NONDETERMINISTIC)


def _plain(value) -> bool:
    return value.__class__ is np.ndarray or isinstance(value, np.generic)


def same_value(a, b) -> bool:
    """Exactly equal: plain arrays of one dtype and shape with the same bytes (so NaN equals
    NaN and -0.0 differs from 0.0: a deterministic kernel cannot tell equal bytes apart).
    Anything else (sequences, optionals, undefined masks, object arrays) is not compared."""
    if not (_plain(a) and _plain(b)):
        return False
    return (a.dtype == b.dtype and a.dtype != object and a.shape == b.shape
            and same_bytes(a, b))


CHUNK = 2**16  # bytes compared at a time: no copy of a whole (possibly big) state is made
SMALL = 2**10  # a state this small is compared by copies of its bytes


def same_bytes(a, b) -> bool:
    """Byte-for-byte equality of two arrays of one dtype and shape, a chunk at a time."""
    if a.nbytes <= SMALL:  # a copy of each costs less than comparing chunk by chunk
        return a.tobytes() == b.tobytes()
    if not (a.flags.c_contiguous and b.flags.c_contiguous):
        a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    x, y = a.reshape(-1).view(np.uint8), b.reshape(-1).view(np.uint8)
    return all(np.array_equal(x[k:k + CHUNK], y[k:k + CHUNK]) for k in range(0, x.size, CHUNK))


def known_after_trip(demand, k) -> int:
    """The offset of the last element of stream k the schedule has computed once trip i ran:
    i + certain[k] for what the outputs need (phase B); i for the WHILE input's cone
    (phase A), less what that cone reads one trip back on demand."""
    if demand.certain[k] is not None:
        return demand.certain[k]
    return min(demand.prefix[k] - 1, 0)


def watch_for(demand) -> Optional["FixedPointWatch"]:
    """The loop's watch, derived once per plan."""
    key = ("fixed-point", demand.key)
    derived = demand.plan.derived
    if key not in derived:
        derived[key] = FixedPointWatch.of(demand)
    return derived[key]


def first_check(watch, count) -> int:
    """The trip count after which the schedule first compares states; -1: never."""
    if watch is None or watch.stacked and count is not None:
        return -1
    if count is None:
        return CHECK_EVERY
    return FIRST_COUNTED if count > 2 * WORTH_SKIPPING else -1


def ordinary_until(i: int, stop, check_at: int, max_trips: int) -> int:
    """The first trip from i on after which something is due: the stop, the fuel
    (`max_trips`), the fixed-point watch (`check_at`) or the clock. The trips before it are
    ordinary (compiled trips may run them)."""
    until = (i // CLOCK_EVERY + 1) * CLOCK_EVERY - 1  # the clock's next reading
    if max_trips < until:
        until = max_trips
    if stop is not None and stop < until:
        until = stop
    if i < check_at <= until:
        until = check_at - 1
    return until


def settle(watch, memo, trips: int, count):
    """After `trips` trips: (the trip count to stop at, the watch to keep using, the trip
    count to look again after; -1: never). A fixed point seen lowers the stop (or raises
    `NeverEnds`) and ends the watching."""
    m = watch.settled_at(memo, trips - 1)
    if m is None:
        return count, watch, watch.next_check(trips, count)
    stop = watch.stop_at(m, count, watch.loop.name, trips)
    return (count if stop is None else stop), None, -1


class FixedPointWatch:
    """The static half of `laziness/fixed-point` for one loop: the forced carried values and
    the trip index at which each is known after a trip (`offset`: element i + offset of
    recurrence r is in the schedule's memo once trip i ran)."""

    def __init__(self, demand, tracked, depth, stacked):
        self.loop = demand.loop
        self.tracked = tracked      # ((recurrence id, offset), ...)
        self.depth = depth          # how far below n the point demands reach
        self.stacked = stacked      # the loop has CONCATENATE/REVERSE outputs

    @classmethod
    def of(cls, demand) -> Optional["FixedPointWatch"]:
        """The watch for a loop the rule applies to, else None: a forced stream that is an
        iterator or a nondeterministic kernel rules it out."""
        if demand.inner or any(isinstance(demand.members[k], Recurrence)
                               for k in demand.conditional):
            return None  # a loop inside, or a value carried only in some trips: not compared
        forced = demand.forced()
        nodes = demand.members
        if any(entry(nodes[k]).indexed or nondeterministic(nodes[k]) for k in forced):
            return None
        tracked = tuple((k, known_after_trip(demand, k)) for k in forced
                        if isinstance(nodes[k], Recurrence) and demand.prefix[k] is not None)
        stacked = any(demand.plan.nodes[o].kind is not LoopOutput.LAST_VALUE
                      for o in demand.outputs)
        return cls(demand, tracked, demand.window, stacked)

    @staticmethod
    def next_check(trips: int, count) -> int:
        return 2 * trips if count is not None else trips + CHECK_EVERY

    def settled_at(self, memo, last_trip: int) -> Optional[int]:
        """After trip `last_trip` ran: the index m >= 1 whose state equals index m - 1's,
        if the memo shows one, else None."""
        if not self.tracked:
            return last_trip + 1  # nothing is carried: every trip is the same trip
        m = last_trip + min(off for _, off in self.tracked)
        if m < 1:
            return None
        for rec, _ in self.tracked:
            elements = memo[rec]
            if m not in elements or m - 1 not in elements:
                return None
            if not same_value(elements[m], elements[m - 1]):
                return None
        return m

    def stop_at(self, m: int, count, where: str, trips: int):
        """Where the schedule may stop, once the state is fixed from index m on: a trip
        index past which nothing differs (COUNT), None to run on (it would save too little, or
        stacked outputs need every trip); with no COUNT, the loop never ends."""
        if count is None:
            raise NeverEnds(where, RULE,
                            f"after {trips} trips its carried values are a fixed point (index "
                            f"{m} repeats index {m - 1} exactly) and its WHILE input is true: "
                            "it would run for ever",
                            "give the loop a condition that its carried values can turn false")
        if self.stacked:
            return None
        stop = max(m + self.depth, trips)
        return stop if count - stop > WORTH_SKIPPING else None
