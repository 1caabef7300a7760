"""Steady trips: the elements of a compiled loop's scheduled streams kept in local variables.

On every ordinary trip the compiled trips (compiled.py) make, for each stream the phases
schedule, its elements at the same offsets from the trip: the WHILE input's cone at i
(phase A), what the outputs need at i + certain (phase B). Once a run is *steady* -- the
trips before made every element they schedule and nothing else, and the window slid -- the
memo of such a stream holds exactly its elements i + r for r from -window to hi - 1 (hi: the
highest offset it is made at): those the trips before made and no reader has let go. The
trip makes its element i + hi, the one it did not have; every other offset it is made at is
one of those it has (`stream/memo`: made once).

So a steady trip need not ask its memos: the *register* q<c>_<r> holds element i + r of
member c, for r from -window to hi, and sliding the window is moving each register one
down. The memo dictionaries are what the rest of the schedule reads (the caller's trips,
its steps, the outputs, the fixed-point watch): at every return -- the trips done, the WHILE
input false, a trip handed back half made because something raised -- the registers are
written back, and the memo holds what the trips step by step would have left in it (what
the trip made before it stopped included). The registers are loaded once the memos are
seen to be in the steady state (each holds exactly the elements i - window .. i + hi - 1, at a
trip late enough that all of them exist); until then the compiled trips run in memo form --
except in a run that starts with its memos empty, whose early trips (0 .. first - 1, at most
EARLY_TRIPS) run on registers too, each holding what the trips before it made.

A trip may read an element before its phase makes it (the WHILE input's cone reads a trip
back): the reader makes it there, in its register, if it is not made yet, and the phase
then finds it made. Streams no phase schedules (made on demand: a branch's, what the WHILE
input reads a trip back) keep their memos, written in line as in the memo form; one so deep
in such a chain that the memo form reads it through its step (which reads the memos the
registers hold) is made by a deep read (deep_reads.py), or where none can be written hands
the trip back to the caller (`NotSteady`, counted: a loop that does this `UNSTEADY_TRIPS`
times stays in memo form). A loop whose trip reads an
element no register holds is compiled in memo form alone.

A stream whose elements come from a batch keeps its memo: its step takes element k from the
batch, which holds every element a trip makes (n + certain of them, the loop having no WHILE
input and stopping at its count n), so it reads no other memo. A loop runs on registers only
when nothing else reads its memos while its trips run: no chain (a cycle of streams made on
demand, through steps), no inner loop (its runs read this loop's elements), and no recorded
run (the tests' trace of what was forced goes through the memo form).
"""
from __future__ import annotations

from ..plan import LoopOut, Recurrence


UNSTEADY_TRIPS = 4  # a loop whose steady trips were handed back this often stays in memo form


class NotSteady(Exception):
    """The trip reads an element the registers do not hold (or through a step, which reads
    the memos): the loop's compiled trips keep their memo form."""


def steady_streams(demand, batched, recording) -> dict:
    """The members kept in registers -> the offsets (relative to the trip) at which the
    phases make them; empty when the loop cannot run on registers (the module's docstring)."""
    members = demand.members
    if recording or demand.chains or any(isinstance(n, LoopOut) for n in members.values()):
        return {}
    offsets = {}
    if demand.loop.while_ is not None:
        for k in demand.phases[0]:
            offsets.setdefault(k, set()).add(0)
    for k in demand.phases[1]:
        offsets.setdefault(k, set()).add(demand.certain[k])
    return {k: o for k, o in offsets.items() if k not in batched}


class Registers:
    """The registers of one loop's steady trips -- or of one of its early trips `trip` (0 ..
    `first` - 1), which holds only the elements the trips before it made (none on trip 0;
    none below element 0) and makes each element at the offsets its phases make it -- names,
    and the lines that load, slide and write them back."""

    def __init__(self, demand, ids, offsets, trip=None):
        self.window = demand.window
        self.ids = ids
        self.offsets = offsets
        self.trip = trip  # None: a steady trip
        self.zero = trip == 0
        self.high = {k: max(o) for k, o in offsets.items()}  # k -> hi
        self.fresh = set()  # members whose element i + hi this trip made so far
        self.made_at = set()  # (member, offset) this trip made so far
        self.early = set()  # members a reader makes before their phase, when not made yet
        # the first trip that may be steady: every register's element exists (i - window >= 0)
        # and every element a steady trip makes, i + hi, exists -- past element 0 for a
        # carried value (element 0 is its initial value, which a steady trip never makes)
        self.first = max([self.window] + [
            (1 if isinstance(demand.members[k], Recurrence) else 0) - hi
            for k, hi in self.high.items()])
        self.low = kept_below(demand, offsets, self.high)  # k -> its lowest register kept

    def __contains__(self, k):
        return k in self.high

    def name(self, k, r):
        return f"q{self.ids[k]}_{r}" if r >= 0 else f"q{self.ids[k]}_m{-r}"

    def held(self, k):
        """The offsets whose elements the trip finds made: -window .. hi - 1 on a steady
        trip; on early trip t those of elements 0 and up (none on trip 0, whose phases and
        readers make elements 0 .. hi: `unmade_on_trip_0`)."""
        if self.trip is None:
            return range(-self.window, self.high[k])
        return range(0) if self.zero else range(max(-self.window, -self.trip), self.high[k])

    def below_zero(self, r) -> bool:
        """Whether element i + r is below element 0 on an early trip (none exists)."""
        return self.trip is not None and r < -self.trip

    def least(self, low):
        """The least index of the element a trip makes at offset `low`: exactly trip + low
        on an early trip; at least 1 on a steady one (never element 0)."""
        return 1 if self.trip is None else self.trip + low

    def kept(self, k):
        """The held offsets whose registers are slid and written back: low .. hi - 1
        (`kept_below`); the others hold elements no reader asks for."""
        return range(0) if self.zero else range(self.low[k], self.high[k])

    def unmade(self, k, r) -> bool:
        """Whether element i + r of k may not be made yet where it is read: its top one
        before its phase makes it; on an early trip, any of element 0 and up not held nor
        made already."""
        if self.trip is not None:
            return (not self.below_zero(r) and r not in self.held(k)
                    and (k, r) not in self.made_at)
        return r == self.high[k] and k not in self.fresh

    def reading(self, k, r):
        """The register holding element i + r of k at this point of the trip. On an early
        trip an element below 0 is read only where the index is tested first (a carried
        value's element j - 1 where j > 0): its register, never assigned, is not read."""
        if r < self.low[k] and self.trip is None:  # pragma: no cover -- kept_below
            # follows every read a steady trip makes (an early trip slides every register)
            raise NotSteady(f"{k!r} read at i + {r}, below its kept registers")
        if r in self.held(k) or r == self.high[k] and k in self.fresh or (
                k, r) in self.made_at or self.below_zero(r):
            return self.name(k, r)
        raise NotSteady(f"{k!r} read at i + {r}")

    def making(self, k, r):
        """The register element i + r of k is stored in when the trip makes it (`made`
        says it did); None when a steady trip has it already."""
        if r in self.held(k) or self.below_zero(r):  # early trips: no element below 0
            return None
        if r != self.high[k] and self.trip is None:  # pragma: no cover -- hi is the highest
            raise NotSteady(f"{k!r} made at i + {r}")  # offset made
        return self.name(k, r)

    def made(self, k, r):
        self.made_at.add((k, r))
        if r == self.high[k]:
            self.fresh.add(k)

    def unmade_on_trip_0(self) -> list:
        """The registers trip 1, steady, finds made (offsets 1 - window .. hi, none below
        0) that trip 0's phases do not make: a reader makes them, if one asks; else trip 0
        hands itself back (`UNSTEADY`) before it collects anything, and the run goes on in
        the memo form."""
        return [self.name(k, r) for k, o in self.offsets.items()
                for r in range(max(0, 1 - self.window), self.high[k] + 1) if r not in o]

    # -- the lines --------------------------------------------------------------------------
    def entry(self):
        """Lines (at the trip loop's depth) that leave the memo-form trips for the steady
        ones at a trip whose memos are in the steady state, moving them to the registers.
        An element below a stream's kept registers is dropped first (no reader asks for it;
        a write-back leaves it out)."""
        lines = [f"if i >= {self.first} and unsteady < {UNSTEADY_TRIPS}:"]
        lines += [f"    m{self.ids[k]}.pop(i + {r}, None)" for k in self.high
                  for r in range(-self.window, self.low[k])]
        loads = [f"        {self.name(k, r)} = m{self.ids[k]}[i + {r}]" for k in self.high
                 for r in self.kept(k)]
        lines += ["    try:"] + (loads or ["        pass"])
        lines += ["    except KeyError:", "        pass",
                  "    else:",
                  "        if " + " and ".join(f"len(m{self.ids[k]}) == {len(self.kept(k))}"
                                               for k in self.high) + ":"]
        # steady: the memos hold exactly what the registers do, and let go of it (an element
        # is kept alive only as long as the memo form keeps it) until they are written back
        lines += [f"            m{self.ids[k]}.clear()" for k in self.high]
        lines.append("            break  # steady")
        return lines

    def start(self):
        """Lines before the first steady trip: nothing made yet at i + hi."""
        return [f"{self.name(k, self.high[k])} = _M" for k in self.high]

    def dropped(self):
        """Lines before the first steady trip, however the run reached it: no register below
        a stream's kept ones holds an element -- the early trips slid every register, and an
        element left there would stay alive through the steady trips, which neither read nor
        slide it (`stream/memo`: a run holds what a reader may still ask for)."""
        return [f"{self.name(k, r)} = _M" for k in self.high
                for r in range(-self.window, self.low[k])]

    def slide(self):
        """Lines after a trip (i is the next trip's): each kept register one down; after an
        early trip every register (what an early trip reads may lie below the kept ones)."""
        lines = []
        for k, hi in self.high.items():
            bottom = self.low[k] if self.trip is None else -self.window
            lines += [f"{self.name(k, r)} = {self.name(k, r + 1)}" for r in range(bottom, hi)]
            lines.append(f"{self.name(k, hi)} = _M")
        return lines

    def read_after_the_loop(self, demand) -> list:
        """The members whose memos a reader may ask once the WHILE input ended the loop on
        a steady trip (`trip/while`), in order: the caller finds phase A's elements and the
        WHILE input's made, and forces the LAST_VALUE outputs' sources at that trip; an
        element the registers do not hold is made by its step, which reads its inputs (an
        edge's offset is 0 or below). Every other member's memo is left empty: nothing reads
        it before the run is released (`stream/memo`: nothing is made twice)."""
        phase_a = set(demand.phases[0])
        roots = [(k, 0) for k in phase_a] + [(demand.loop.while_, 0)] + [
            (k, q) for k, qs in demand.output_roots()[1].items() for q in qs]
        needed, seen = {}, set()
        while roots:
            k, q = roots.pop()
            if (k, q) in seen or k not in demand.members or q < -self.window - 1:
                continue  # below the window: held by no form of the trips, nor what it reads
            seen.add((k, q))
            needed[k] = True
            if k in self.high and (q in self.held(k) or q == 0 and k in phase_a):
                continue
            roots += [(r, q + off) for r, off in demand.edges[k] + demand.cond_edges[k]]
        return [k for k in self.high if k in needed]

    def at_the_stop(self, demand) -> list:
        """Lines after the steady trips when they ran up to the trip the caller stops the
        loop at (`last`: its COUNT, `trip/count`): only what is read once the loop ended
        written back (`read_after_the_loop`), every other memo left empty -- nothing reads
        it before the run is released. None where that is every register, or where a step
        reads above its trip (an edge of positive offset)."""
        ended = self.read_after_the_loop(demand) if reads_back_only(demand) else list(self.high)
        if len(ended) == len(self.high):
            return []
        return (["if last and i == until:  # the loop stops here"]
                + ["    " + line for line in self.write_back(ended)] + ["    return i"])

    def write_back(self, members=None):
        """Lines that leave in each memo (of `members`, by default all) what the memo-form
        trips would have that a reader may ask for: the elements of its kept registers, i +
        low .. i + hi - 1, and i + hi when this trip made it."""
        lines = []
        for k in self.high if members is None else members:
            hi, c = self.high[k], self.ids[k]
            lines.append(f"m{c}.clear()")
            lines += [f"m{c}[i + {r}] = {self.name(k, r)}" for r in self.kept(k)]
            top = self.name(k, hi)
            lines.append(f"if {top} is not _M: m{c}[i + {hi}] = {top}")
        return lines

    def first_lines(self):
        """Lines before trip 0 on registers: none holds an element yet."""
        return [" = ".join(self.name(k, r) for k, hi in self.high.items()
                           for r in range(-self.window, hi + 1)) + " = _M"]

    def written_early(self):
        """Lines that leave in each memo (empty when trip 0 began) what the early trips
        made before one stopped, handed back or ended the loop, or before the trips asked
        for ran out: every register holding an element (those below element 0 hold none;
        the early trips slide all of them, so each holds element i + r)."""
        return [f"if {self.name(k, r)} is not _M: m{self.ids[k]}[i + {r}] = {self.name(k, r)}"
                for k, hi in self.high.items() for r in range(-self.window, hi + 1)]


def reads_back_only(demand) -> bool:
    """Whether every step reads its inputs at its own trip or before (no edge of positive
    offset): then what a reader asks once the loop ended is found by walking back from it
    (`Registers.read_after_the_loop`)."""
    return all(off <= 0 for edges in (demand.edges, demand.cond_edges)
               for found in edges.values() for _, off in found)


def kept_below(demand, offsets, high) -> dict:
    """Each register stream -> the lowest offset (from the trip) of an element that a reader
    may ask for while or after the compiled trips run; registers below it are neither slid
    nor written back (`stream/memo`: an element no reader asks for need not be kept).

    The readers: the steps of a trip, compiled or the caller's (each member at the offsets
    the phases make it reads its edges), the WHILE input, the outputs once the loop stopped
    (a LAST_VALUE at n, a collected stream at the trip), and what their steps read in turn,
    as far as an element is not held already; later trips read the same offsets from a
    later trip. A carried value keeps its whole window: the fixed-point watch compares its
    elements (`laziness/fixed-point`)."""
    window = demand.window
    roots = [(k, o) for k, made in offsets.items() for o in made]
    roots.append((demand.loop.while_, 0))
    prefix, points = demand.output_roots()
    roots += [(k, 0) for k in prefix] + [(k, q) for k, qs in points.items() for q in qs]
    low = {k: -window if isinstance(demand.members[k], Recurrence) else max(-window, hi)
           for k, hi in high.items()}
    seen = set()
    while roots:
        k, q = roots.pop()
        if (k, q) in seen or k not in demand.members or q < -window - 1:
            continue
        seen.add((k, q))
        if k in high:
            low[k] = max(-window, min(low[k], q))
            if -window <= q < high[k]:
                continue  # held: its step is not run, nor what it reads read
        roots += [(r, q + off) for r, off in demand.edges[k] + demand.cond_edges[k]]
    return low
