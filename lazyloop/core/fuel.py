"""Fuel: how far a loop may run before the evaluator gives up on it (`trip/count`, `trip/while`).

A WHILE loop whose condition never turns false would run forever, so every evaluation has a
fuel of `max_trips` trips per loop activation, counted in trips actually stepped: results stay
deterministic, whatever the machine's speed. The default, 10**7 trips (the public API's
contract), is far above the loops of real models (a sequence length, a beam search, a fixed
number of refinement steps) and what the fast path steps in well under a minute on a small
state; for an answer in seconds, pass `max_seconds` (the command line sets one by default).

Two refusals come sooner than the last trip:

* a loop whose only limit is a COUNT above the fuel is refused before its first trip (the
  count is known then, and every trip up to it would have to be stepped): `trip/count`;
* an optional wall-time budget, `max_seconds` (None, the library's default: no budget), is
  checked on the clock every `CLOCK_EVERY` trips (and, in the reference evaluator, every
  `CLOCK_EVERY` elements forced), so it costs nothing per trip.

Messages name the loop (the model's node name, for lowered programs) and the limit that let
it run: `trip/count` when its COUNT is above the fuel, else `trip/while`.
"""
from __future__ import annotations

import math
import numbers
import time
from typing import Optional

import numpy as np

from .errors import FuelExhausted, InputError

# Every fuel lazyloop uses, named once (each caller takes its fuel from here):

#: The library's fuel (`ll.evaluate`, `ll.run`, the frontends, the command line's
#: --max-trips): the public API's contract, far above the loops of real models.
DEFAULT_MAX_TRIPS = 10_000_000

#: The differential tester's fuel for lazyloop's own answer to a generated program (its
#: expectation, and the `lazyloop` backends): generated loops run a few trips, so a program
#: still running after this many is one whose loop never ends -- refused as invalid in a
#: fraction of a second instead of after 10^7 trips, program after program.
EXPECTATION_MAX_TRIPS = 100_000

#: The tester's fuel when it evaluates a disagreement again under every other reading of
#: every ambiguity (about thirty runs per finding, `difftest.checking`): some readings
#: make a loop endless (A4 "no-limit", A15), which must fail fast; lower still, since the
#: minimal programs it runs on have shrunk to a few trips.
ATTRIBUTION_MAX_TRIPS = 10_000

#: The command line's wall-time budget (`lazyloop run`/`explain` --max-seconds); the library
#: has none by default (max_seconds=None).
COMMAND_LINE_MAX_SECONDS = 600.0

CLOCK_EVERY = 64  # trips (or forced elements) between two readings of the clock


def check_max_trips(max_trips) -> int:
    if type(max_trips) is int and max_trips >= 0:
        return max_trips
    if not isinstance(max_trips, (numbers.Integral, np.integer)) or isinstance(max_trips, bool) \
            or max_trips < 0:
        raise InputError("max_trips", "trip/while", f"is {max_trips!r}, not an integer >= 0",
                         f"pass max_trips as an int (the default is {DEFAULT_MAX_TRIPS})")
    return int(max_trips)


def check_max_seconds(max_seconds) -> Optional[float]:
    if max_seconds is None:
        return None
    if not isinstance(max_seconds, numbers.Real) or isinstance(max_seconds, bool) \
            or not math.isfinite(max_seconds) or max_seconds <= 0:
        raise InputError("max_seconds", "trip/while", f"is {max_seconds!r}, not a positive "
                         "number of seconds", "pass max_seconds as a positive float, or None "
                         "for no wall-time budget")
    return float(max_seconds)


def limit_rule(loop, count) -> str:
    """The limit that let the loop run past the fuel: a COUNT (then above the fuel, whatever a
    WHILE condition said), else the WHILE condition or the absence of limits."""
    return "trip/count" if count is not None else "trip/while"


class Fuel:
    """The fuel of one evaluation: `max_trips` per activation and an optional deadline."""

    def __init__(self, max_trips=DEFAULT_MAX_TRIPS, max_seconds=None):
        self.max_trips = check_max_trips(max_trips)
        self.max_seconds = check_max_seconds(max_seconds)
        self.deadline = None if self.max_seconds is None else time.monotonic() + self.max_seconds

    def before_first_trip(self, loop, count, may_settle=False) -> None:
        """`trip/count`: a COUNT alone above the fuel is refused before anything is stepped,
        unless the loop may reach a fixed point (`laziness/fixed-point`: only the fast path
        looks for one, and only for loops without stacked outputs, which keep every trip)."""
        if count is not None and count > self.max_trips and loop.while_ is None \
                and not may_settle:
            raise FuelExhausted(loop.name, "trip/count",
                                f"its COUNT limit is {count} trips, more than "
                                f"max_trips={self.max_trips}",
                                "raise max_trips to at least the count, or lower the count")

    def exhausted(self, loop, count) -> FuelExhausted:
        """The error for a loop still running after `max_trips` trips."""
        return FuelExhausted(loop.name, limit_rule(loop, count),
                             f"still running after max_trips={self.max_trips} trips",
                             "raise max_trips, or check the loop's trip limits")

    def check_forcing(self, plan, node, index) -> None:
        """The reference evaluator, while forcing elements: refuse past the budget, naming the
        loop whose element was being forced (or the stream, outside loops)."""
        if self.deadline is not None and time.monotonic() > self.deadline:
            loop = plan.loops.get(node.scope) if node.scope is not None else None
            where = loop.name if loop is not None else f"stream {node.id!r}"
            rule = "trip/count" if loop is not None and loop.count is not None else "trip/while"
            raise FuelExhausted(where, rule, f"still running after max_seconds="
                                f"{self.max_seconds:g} (forcing element {index} of "
                                f"{node.id!r})", "raise max_seconds, or check the loop's "
                                "trip limits")

    def check_clock(self, loop, count, trips) -> None:
        """Called every CLOCK_EVERY trips: refuse a loop past the wall-time budget."""
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise FuelExhausted(loop.name, limit_rule(loop, count),
                                f"still running after max_seconds={self.max_seconds:g} "
                                f"({trips} trips)",
                                "raise max_seconds, or check the loop's trip limits")
