"""One run of a schedule (`Schedule.run`): the COUNT limit read (`trip/count`), the fuel
asked (`trip/count`), the map streams batched where it pays (`stream/map`, batch.py), then
trip by trip -- phase A, the WHILE test (`trip/while`), phase B, the elements collected for
CONCATENATE/REVERSE -- the ordinary trips on the compiled trip function once the loop is hot
(compiled.py), the window of each memo sliding behind the trips, a fixed point ending it early
where one may (`laziness/fixed-point`, fixpoint.py), until the loop stops.
"""
from __future__ import annotations

import numpy as np

from ..errors import LazyLoopError
from ..fuel import CLOCK_EVERY
from ..reference.rules import count_limit, while_holds
from ..undefined import Partial
from .batch import FEWEST_WHOLE, batch_maps
from .compiled import trip_function
from .fixpoint import first_check, ordinary_until, settle
from .masked_steps import MasksNeeded

_MISSING = object()


def plain_run(schedule, machine, loop, read):
    """An evaluation's run of `loop` on `schedule`, a plain one just begun: (n, read(schedule,
    n)) -- what the caller reads of it once it stopped -- or None when it met an undefined
    value of `loop` (`MasksNeeded`: the loop is marked to run masked from now on in this
    evaluation; an enclosing loop's goes up). The schedule is released either way."""
    try:
        n = schedule.run()
        return n, read(schedule, n)
    except MasksNeeded as need:
        if need.loop != loop:  # an enclosing loop's: it runs again
            raise
        machine.masked_loops.add(loop)
        return None
    finally:
        schedule.release()


def run(schedule) -> int:
    """Run the loop until it stops; its trip count n. A run too short to batch whose
    compiled trips are bound already (a loop run again, on a plan where it is hot) runs them
    at once from trip 0, without the setup of the trip loop (`trips`), which takes over only
    where they did not stop the loop: a trip handed back, the fuel, the clock or the
    fixed-point watch due."""
    loop, m = schedule.d.loop, schedule.m
    count = None if loop.count is None else count_of(schedule, loop, m)
    if count is not None and count > m.max_trips:  # what the fuel refuses, if anything
        m.fuel.before_first_trip(loop, count, may_settle=schedule.may_settle)
    options = m.options
    if count is not None:
        if count >= FEWEST_WHOLE and loop.while_ is None and options.batch \
                and schedule.batchable:  # stream/map (batch.py): never below FEWEST_WHOLE
            return trips(schedule, count, batch_maps(schedule, count, options.max_batch_bytes))
        if not count:
            return stopped_at(schedule, 0)
    hot = options.compile_after
    if schedule.bound is None or hot is None:
        return trips(schedule, count, 0)
    bound = trip_function(schedule, 0, hot)  # the bound trips (compiled.py)
    watch = schedule.watch
    check_at = -1 if watch is None else first_check(watch, count)
    schedule.compiled = True
    until = ordinary_until(0, count, check_at, m.max_trips)  # as `trips` asks first
    i = bound(0, until, until == count)  # the last trip asked for: the loop stops there
    if count is not None and i >= count or stopped_by_while(schedule, i):
        return stopped_at(schedule, i)
    return trips(schedule, count, i, bound)


def stopped_by_while(schedule, i) -> bool:
    """`trip/while`, as `trips` finds it at trip i: phase A's elements of trip i made, and
    the WHILE input's, a defined element the loop makes, false."""
    memo = schedule.cond_memo
    if memo is None:
        return False
    c = memo.get(i, _MISSING)
    if c is _MISSING or c.__class__ is Partial:
        return False
    for made, _ in (schedule.parts or trip_parts(schedule))[0]:  # not batched: kept parts
        if i not in made:
            return False
    return not c


def count_of(schedule, loop, m) -> int:
    """`trip/count`: the COUNT limit's value -- a defined array whose count is >= 0 read
    at once, any other by `count_limit` (an undefined count, a negative one by A4)."""
    c = schedule.invariants.get(loop.count, _MISSING)  # held from the start, usually
    if c is _MISSING:
        c = schedule.invariant(loop.count)
    if c.__class__ is np.ndarray and c.size:
        count = int(c.item(0))  # its first element, as `count_limit` reads it
        if count >= 0:
            return count
    return count_limit(loop, c, m.readings["A4"], m.plan.profile)


def stopped_at(schedule, i) -> int:
    """The run stopped after trip i - 1 of its count, no fixed point cutting it short."""
    runs = schedule.d.plan.derived  # how many trips the loop ran on this plan (compiled.py)
    runs[schedule.trips_key] = runs.get(schedule.trips_key, 0) + i
    schedule.stopped = i
    schedule.settled = False
    return i


def trips(schedule, count, start, handed_back=None) -> int:
    """Trip by trip from `start` (past the trips batches made) until the loop stops: the
    compiled trips where the loop is hot; `handed_back`: the compiled trips, which handed
    trip `start` back (it is run step by step first)."""
    loop, m = schedule.d.loop, schedule.m
    fuel = m.fuel
    watch = schedule.watch  # laziness/fixed-point: may end the loop early
    options = m.options
    cond, cond_memo = schedule.cond, schedule.cond_memo
    cond_local = cond_memo is not None
    window = schedule.d.window
    max_trips = m.max_trips
    phase_a, phase_b, memos = trip_parts(schedule) if start != count else ((), (), ())
    collected = list(schedule.collected.items())
    deferred = None
    stop = count  # laziness/fixed-point may lower it
    check_at = -1 if watch is None else first_check(watch, count)
    i = start  # n when every trip's work was batched
    ordinary = handed_back  # the loop's ordinary trips, compiled once it is hot (compiled.py)
    hot = options.compile_after
    ask_at = 0  # the next trip at which `trip_function` may answer otherwise than None
    skip = start if handed_back is not None else -1  # the trip they handed back
    while True:
        if deferred is None and not schedule.masked and hot is not None and i != stop \
                and i != skip:
            if ordinary is None and i >= ask_at:
                ordinary = trip_function(schedule, i, hot)
                ask_at = max(i + 1, hot)  # within a run, None until trip `hot`
            if ordinary is not None:
                schedule.compiled = True
                i = ordinary(i, ordinary_until(i, stop, check_at, schedule.m.max_trips))
        if stop is not None and i >= stop:
            break
        for memo, step in phase_a:
            if i not in memo:
                step(i)
        if cond is not None:
            c = cond_memo[i] if cond_local else schedule.invariant(cond)
            if c.__class__ is Partial:  # masked: trip/while refuses an undefined element
                c = while_holds(loop, i, c)
            if not c:  # a 0-D or one-element bool
                break
        if i >= max_trips:
            raise fuel.exhausted(loop, count)
        if deferred is None:
            try:
                for memo, step, offset in phase_b:
                    j = i + offset
                    if j >= 0 and j not in memo:
                        step(j)
                for src, elements in collected:
                    elements.append(schedule.get(src, i))
            except LazyLoopError as error:
                # The reference evaluator forces these elements only once n is known:
                # a loop that never stops reports fuel first, one that stops this error.
                deferred = error
        i += 1
        if i == check_at:
            stop, watch, check_at = settle(watch, schedule.memo, i, stop)
        gone = i - window - 1  # no scheduled reader asks for this index any more: free it
        for memo in memos:
            memo.pop(gone, None)
        if not i % CLOCK_EVERY:
            for memo in memos:  # an element forced out of order, below the window
                for old in [k for k in memo if k < gone]:
                    del memo[old]
            fuel.check_clock(loop, count, i)
    if deferred is not None:
        raise deferred
    runs = schedule.d.plan.derived  # how many trips the loop ran on this plan (compiled.py)
    runs[schedule.trips_key] = runs.get(schedule.trips_key, 0) + i
    schedule.stopped = i  # the outputs are read here; past a fixed point, equal to trip n's
    schedule.settled = stop != count and i == stop  # laziness/fixed-point cut it short
    return count if schedule.settled else i


def trip_parts(schedule):
    """What a trip of `run` works on: phase A's (memo, step), phase B's (memo, step,
    offset), and the memos whose window slides (a chain's is kept whole). Made once per
    schedule (kept with it for later runs); for a run fed by batches, whose steps read
    them, made for that run."""
    parts = None if schedule.batched else schedule.parts
    if parts is None:
        memo, steps, certain = schedule.memo, schedule.steps, schedule.d.certain
        parts = ([(memo[k], steps[k]) for k in schedule.phase_a],
                 [(memo[k], steps[k], certain[k]) for k in schedule.phase_b],
                 [m for k, m in memo.items() if k not in schedule.d.chains])
        if not schedule.batched:
            schedule.parts = parts
    return parts

