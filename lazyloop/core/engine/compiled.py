"""The schedule's ordinary trips as one generated Python function per loop.

The per-trip loop (`one_run.trips`) is written step by step: each stream's element is a
closure that reads its inputs' elements through other closures and stores what it computes.
Most trips of a long loop are *ordinary*: phase A's elements, the WHILE test passing, phase
B's elements, the collected elements, the window sliding by one -- no error, no clock reading,
no fixed-point comparison, no stop. For those trips the schedule calls a function generated
once per loop (and per kind of run) from the same demand analysis: the same elements, in the
same order, read and stored in the same memo dictionaries, with the closures' bodies written
out in line. It is the schedule's loop with the calls taken out, not another semantics.

The generated function runs trips from `i` while they are ordinary and returns the first trip
it did not finish, which the caller runs step by step: anything out of the ordinary -- a
kernel raising, an element failing its stream's type, the WHILE input false, the fuel clock or
the fixed-point watch due -- is left to the per-trip loop, which does and reports what it did
before. Elements a trip stored before it handed back are memoised, not computed twice
(`stream/memo`). A stream fed by a batch (batch.py) is read through its step.

A trip checks each element it makes against its stream's type cheaply (an array of the
stream's dtype and of a shape admitted before, or a numpy scalar of the dtype's own class,
passes at once; anything else goes to the full check), and not at all where it is sure to
pass (element_checks.py). Once a run is steady, its trips run on registers (registers.py):
each scheduled stream's elements in local variables, the memos written back at every return
with what a reader may still ask for. The invariants every steady trip reads before its WHILE
test are fetched once; a stream made on demand read deeper than INLINE_DEPTH is made by a deep
read (deep_reads.py); a few steps have shorter forms of their own (inline_steps.py).

Compiling costs about a millisecond, so a loop is compiled only once a run of it reaches
`HOT_TRIPS` trips, or its runs on a plan have added up to `ACROSS_RUNS` times that many; the
function is kept with the plan's derived data, and later runs start compiled from their first
trip. `source(schedule)` returns the generated text, for reading.
"""
from __future__ import annotations

import re

import numpy as np

from ..reference.steps import entry
from .deep_reads import DeepReads
from .element_checks import ElementChecks
from .inline_steps import inline_form, iterated
from .on_demand import compiled_steps
from .registers import UNSTEADY_TRIPS, NotSteady, Registers, reads_back_only, steady_streams
from .reuse import emit_reused, shape_derived
from .trip_binding import binding

HOT_TRIPS = 64  # by default a loop is compiled once a run of it reaches this trip,
ACROSS_RUNS = 4  # or once its runs on the plan add up to this many times HOT_TRIPS trips (256)
INLINE_DEPTH = 8  # streams no phase schedules are written in line this many deep (then: steps),
EARLY_TRIPS = 3  # trips 0 .. first - 1 are written on registers when there are at most this many
INLINE_LINES = 3000  # while the function is shorter than this many lines (a branch's cone)


_MISSING = object()  # an invariant not fetched yet (`stream/invariant`: fetched when read)
USES_J0 = re.compile(r"\bj0\b")  # a line that reads the index of the element made


class Emitter:
    """Writes the source of one loop's trip function."""

    def __init__(self, schedule, batched, recording):
        d = schedule.d
        self.d, self.batched, self.recording = d, batched, recording
        self.ids = {k: c for c, k in enumerate(d.members)}
        self.checks = ElementChecks(d, schedule.check, recording)
        self.scheduled = set(d.phases[0]) | set(d.phases[1])
        self.reused = shape_derived(d)  # maps made from shapes (reuse.py)
        self.reused_names = []  # their previous elements and arguments: locals of `trips`
        self.invariants = {}  # ref -> local name
        self.lines = []
        self.regs = None  # while a steady trip is written: its registers (registers.py)
        self.fetched = None  # while a steady trip is written: the invariants every steady
        # trip reads (ref -> local), fetched once before them (`fetch_before`)
        self.certain = False  # whether a line at the trip's top level is sure to run
        self.rel = {}  # index names -> their offset from the trip, on a steady trip
        self.deep = DeepReads()  # register trips' reads deeper than INLINE_DEPTH
        self.inline_depth = INLINE_DEPTH  # 0 while a deep read is written (deep_reads.py)

    # -- names ----------------------------------------------------------------------------
    def invariant(self, ref):
        if ref not in self.invariants:
            self.invariants[ref] = f"x{len(self.invariants)}"
        return self.invariants[ref]

    def emit(self, depth, text):
        self.lines.append("    " * depth + text)

    def offset(self, at):
        """The index `at` (as the entries write it: i, j<n>, j<n> - 1, i + q) relative to
        the trip, on a steady trip."""
        name, _, minus = at.partition(" - ")
        base, _, plus = name.partition(" + ")
        if base not in self.rel or minus not in ("", "1"):
            raise NotSteady(f"index {at!r}")
        return self.rel[base] + int(plus or 0) - int(minus or 0)

    # -- reading ----------------------------------------------------------------------------
    def read(self, depth, ref, at, target, level=0):
        """`target` = element `at` of `ref`: memoised, forced now, or the invariant. A stream
        no phase schedules (what the WHILE input reads a trip back, a branch of an
        if-conditional) is forced in line, as its step would force it; deeper than
        INLINE_DEPTH such streams, or once the function is long, through its step."""
        if ref is None:
            self.emit(depth, f"{target} = None")
        elif self.regs is not None and ref in self.regs:
            r, regs = self.offset(at), self.regs
            if regs.unmade(ref, r):  # read before its phase makes it: made here, once
                regs.early.add(ref)  # (it may be made already)
                self.emit(depth, f"if {regs.name(ref, r)} is _M:")
                if level >= self.inline_depth:
                    self.emit(depth + 1, f"raise UNSTEADY({ref!r})")
                else:
                    self.emit(depth + 1, f"j{level + 1} = {at}")
                    self.rel[f"j{level + 1}"] = r
                    self.compute(depth + 1, ref, level + 1)
                self.emit(depth, f"{target} = {regs.name(ref, r)}")
            else:
                self.emit(depth, f"{target} = {regs.reading(ref, r)}")
        elif ref in self.ids and (ref in self.scheduled or level >= self.inline_depth
                                  or level >= 1 and len(self.lines) > INLINE_LINES):
            c = self.ids[ref]  # usually memoised already
            if self.regs is not None:  # its step reads the memos the registers hold: a
                deep = self.deep.call(self, ref, self.offset(at))  # deep read, or the trip
                self.emit(depth, f"if {at} not in m{c}:")  # hands itself back
                if deep is None:
                    self.emit(depth + 1, f"raise UNSTEADY({ref!r})")
                    self.emit(depth, f"{target} = m{c}[{at}]")
                    return
                self.emit(depth + 1, f"{target} = {deep[0]}({', '.join([at] + deep[1])})")
                self.emit(depth, "else:")
                self.emit(depth + 1, f"{target} = m{c}[{at}]")
                return
            self.emit(depth, "try:")
            self.emit(depth + 1, f"{target} = m{c}[{at}]")
            self.emit(depth, "except KeyError:")
            self.emit(depth + 1, f"{target} = s{c}({at})")
        elif ref in self.ids:
            c = self.ids[ref]  # usually not computed yet
            self.emit(depth, f"j{level + 1} = {at}")
            if self.regs is not None:
                self.rel[f"j{level + 1}"] = self.offset(at)
            self.emit(depth, f"if j{level + 1} in m{c}:")
            self.emit(depth + 1, f"{target} = m{c}[j{level + 1}]")
            self.emit(depth, "else:")
            self.compute(depth + 1, ref, level + 1)
            self.emit(depth + 1, f"{target} = v{level + 1}")
        else:
            name = self.invariant(ref)
            if self.fetched is not None and (ref in self.fetched or self.certain and depth == 3):
                self.fetched[ref] = name  # fetched before the steady trips (`fetch_before`)
                self.emit(depth, f"{target} = {name}")
                return
            self.emit(depth, f"if {name} is _M:")
            self.emit(depth + 1, f"{name} = INV({ref!r})")
            self.emit(depth, f"{target} = {name}")

    # -- one element ------------------------------------------------------------------------
    def element(self, depth, k, index, low):
        """Element `index` of member k, unless memoised; `low`: the least value of index."""
        c = self.ids[k]
        if self.regs is not None and k in self.regs:  # steady: no memo to ask
            name = self.regs.making(k, low)
            if name is not None:
                if k in self.regs.early:  # a reader above may have made it
                    self.emit(depth, f"if {name} is _M:")
                    depth += 1
                at = len(self.lines)
                self.emit(depth, f"j0 = {index}  # {k!r}")
                self.rel["j0"] = low
                self.compute(depth, k, 0, self.regs.least(low))
                self.regs.made(k, low)
                if not any(USES_J0.search(line) for line in self.lines[at + 1:]):
                    self.lines[at] = "    " * depth + f"# {k!r}"  # its index is not read
            return
        self.emit(depth, f"j0 = {index}  # {k!r}")
        guard = f"j0 not in m{c}" if low >= 0 else f"j0 >= 0 and j0 not in m{c}"
        self.emit(depth, f"if {guard}:")
        if k in self.batched:  # its step takes the element from the batch
            self.emit(depth + 1, f"s{c}(j0)")
        else:
            self.compute(depth + 1, k, 0, low)

    def compute(self, depth, k, level, low=0):
        """v<level> = element j<level> of member k -- its kind's step, written in line by
        its entry of the step table or the engine's own form (inline_steps.py) -- then
        checked, memoised, recorded."""
        c, node = self.ids[k], self.d.members[k]
        if k in self.reused:
            emit_reused(self, depth, k, c, node, level)
        else:
            write = inline_form(node) or entry(node).emit  # the engine's form, or its entry's
            write(self, depth, c, node, level, low)
            self.checks.emit(self, depth, k, c, node, f"v{level}", level, low)
        self.store(depth, k, c, f"j{level}", f"v{level}")

    def arguments(self, depth, node, level):
        """Read the map's arguments at j<level> into a<level>_<p>; their names."""
        names = [f"a{level}_{p}" for p in range(len(node.args))]
        for name, ref in zip(names, node.args):
            self.read(depth, ref, f"j{level}", name, level)
        return names

    def store(self, depth, k, c, j, v):
        """What `Schedule.finisher` does after the check: memoise (in its register, on a
        steady trip), record."""
        if self.regs is not None and k in self.regs:
            self.emit(depth, f"{self.regs.name(k, self.rel[j])} = {v}")
            return
        self.emit(depth, f"m{c}[{j}] = {v}")
        if self.recording:
            self.emit(depth, f"RECORD(({k!r}, {j}))")

    # -- the function -----------------------------------------------------------------------
    def trip(self, collected):
        """The lines of one trip of `Schedule.run`'s loop body (at depth 2 of `trips`), in
        memo form, or on registers while `self.regs` is set (registers.py)."""
        d, regs = self.d, self.regs
        self.lines, self.rel = [], {"i": 0}
        self.fetched = {} if regs is not None and regs.trip is None else None
        self.certain = True
        stop = "return i" if regs is None else "break"  # on registers: written back first
        self.emit(2, "try:")
        cond = d.loop.while_
        for k in d.phases[0] if cond is not None else ():  # phase A: the WHILE input's cone
            self.element(3, k, "i", 0)  # (without a WHILE, phase B forces the same elements)
        if cond is not None:
            if cond in self.ids and regs is None:
                self.emit(3, f"if not m{self.ids[cond]}[i]:")
            else:
                self.read(3, cond, "i", "w")
                self.emit(3, "if not w:")
            ended = stop
            if regs is not None and regs.trip is None and reads_back_only(d):
                for line in regs.write_back(regs.read_after_the_loop(d)):
                    self.emit(4, line)  # what is read once the loop ended, written back
                ended = "return i"
            self.emit(4, f"{ended}  # the WHILE input is false: the caller stops the loop")
            self.certain = False  # what a trip reads past the WHILE test
        for k in d.phases[1]:  # phase B: what the outputs need, at i + certain
            offset = d.certain[k]
            self.element(3, k, f"i + {offset}" if offset else "i", offset)
        unmade = regs.unmade_on_trip_0() if regs is not None and regs.zero else ()
        if unmade:
            self.emit(3, f"if {' or '.join(f'{name} is _M' for name in unmade)}:")
            self.emit(4, "raise UNSTEADY('trip 1 would not find them made')")
        for t, src in enumerate(collected):
            self.read(3, src, "i", f"e{t}") if src in self.ids else self.emit(
                3, f"e{t} = GET({src!r}, i)")
        for t, _ in enumerate(collected):
            self.emit(3, f"C[{t}].append(e{t})")
        if self.lines[-1] == "        try:":
            self.emit(3, "pass  # nothing is forced on a trip of this loop")
        if regs is not None:  # a read the steady trip could not make: after a few, a run
            self.emit(2, "except UNSTEADY:")  # of the loop stays in the memo form
            self.emit(3, "unsteady += 1")
            self.emit(3, "break")
        self.emit(2, "except Exception:  # noqa: BLE001 -- the caller does this trip again")
        self.emit(3, stop)
        self.emit(2, "i += 1")
        for line in regs.slide() if regs is not None else ():
            self.emit(2, line)
        popped = [c for k, c in self.ids.items() if (regs is None or k not in regs) and (
            d.prefix[k] is not None or k in d.conditional and k not in d.chains)]
        if popped:
            self.emit(2, f"g = i - {d.window + 1}  # no scheduled reader asks for it any more")
        for c in popped:
            self.emit(2, f"m{c}.pop(g, None)")
        return self.lines

    def steady_trip(self, collected):
        """The lines of a steady trip on registers (registers.py), or None when the loop
        cannot run on them; `self.fetched` then holds the invariants it reads for sure."""
        offsets = steady_streams(self.d, self.batched, self.recording)
        if not offsets:
            return None
        self.regs = Registers(self.d, self.ids, offsets)
        try:
            return self.trip(collected)
        except NotSteady:
            self.regs = None
            return None

    def fetch_before(self, fetched):
        """Lines before the steady trips: the invariants each of them reads before anything
        may end it (the WHILE test), fetched once (`stream/invariant`: each is fetched when
        the first trip reads it, and the first steady trip does); one that raises hands
        the trip back, and the caller's step reads it again, where its trip reads it."""
        if not fetched:
            return []
        lines = ["if i < until:", "    try:"]
        for ref, name in fetched.items():
            lines += [f"        if {name} is _M:", f"            {name} = INV({ref!r})"]
        return lines + ["    except Exception:  # noqa: BLE001 -- the caller's trip fetches it",
                        "        until = i"]

    def early_trips(self, collected):
        """The lines of trips 0 .. first - 1 on registers (registers.py, `trip`), each after
        the one before, and trip 0's registers; (None, None) when a run cannot leave them as
        the first steady trip reads them, or more than EARLY_TRIPS would be written."""
        steady = self.regs
        if steady.first > EARLY_TRIPS:
            return None, None
        trips = []
        try:
            for t in range(steady.first):
                self.regs = Registers(self.d, self.ids, steady.offsets, trip=t)
                trips.append(self.trip(collected))
            return trips, Registers(self.d, self.ids, steady.offsets, trip=0)
        except NotSteady:
            return None, None
        finally:
            self.regs = steady

    def trips(self, collected):
        """The source of `bind(...)`, which returns `trips(i, until)` and the compiled steps
        of the streams made on demand (on_demand.py) -- `trips` being the loop body of
        `Schedule.run` for trips i .. until - 1, returning the first trip it did not finish
        (`collected`: the streams CONCATENATE/REVERSE outputs collect, in order): trips in
        memo form until the run is steady, then on registers where the loop allows."""
        body = self.trip(collected)
        steady = self.steady_trip(collected)
        regs, fetched = self.regs, self.fetched
        self.fetched = None  # what else is written reads invariants where it needs them
        early, zero = self.early_trips(collected) if regs is not None else (None, None)
        on_demand, made = compiled_steps(self) if not self.recording else ([], "{}")
        self.lines = []
        self.emit(0, "def bind(M, STEPS, F, U, N, D, K, S, INV, INVS, GET, ITERATE, INNER, CHECK, "
                     "RECORD, C):")
        for group, names in (("M", "m"), ("STEPS", "s"), ("F", "f"), ("U", "u"), ("D", "d"),
                             ("K", "k"), ("S", "t")):
            self.emit(1, f"[{', '.join(names + str(c) for c in self.ids.values())}] = {group}")
        if regs is not None:
            self.emit(1, "unsteady = 0  # steady trips handed back by a read they could not make")
        self.emit(1, "def trips(i, until, last=False):")
        if regs is not None:
            self.emit(2, "nonlocal unsteady")
        for ref, name in self.invariants.items():
            self.emit(2, f"{name} = INVS.get({ref!r}, _M)")
        if self.reused_names:
            self.emit(2, f"{' = '.join(dict.fromkeys(self.reused_names))} = _M")
        memo_depth = 2
        if zero is not None:  # a fresh run: trips 0 .. first - 1 on registers, then steady
            fresh = " or ".join(f"m{self.ids[k]}" for k in zero.high)
            self.emit(2, f"if i == 0 < until and unsteady < {UNSTEADY_TRIPS} "
                         f"and not ({fresh}):")
            for line in zero.first_lines():
                self.emit(3, line)
            self.emit(3, "while True:  # " + (f"trips 0 .. {len(early) - 1}, once each"
                                               if len(early) > 1 else "trip 0, once"))
            for t, lines in enumerate(early):
                if t:
                    self.emit(4, f"if i == until:  # trip {t}: not asked for")
                    self.emit(5, "break")
                self.lines.extend("        " + line for line in lines)
            self.emit(4, "break")
            self.emit(3, f"if i < {len(early)}:  # an early trip handed back, ended the loop, "
                         "or was not asked for")
            for line in zero.written_early():
                self.emit(4, line)
            self.emit(4, "return i")
            self.emit(2, "else:")
            memo_depth = 3
        pad = "    " * (memo_depth - 2)
        self.emit(memo_depth, "while i < until:")
        if regs is not None:
            self.lines.extend(pad + "            " + line for line in regs.entry())
        self.lines.extend(pad + "    " + line for line in body)
        if regs is not None:
            self.emit(memo_depth, "else:")
            self.emit(memo_depth + 1, "return i")
            for line in regs.start():
                self.emit(memo_depth, line)
            for line in regs.dropped():
                self.emit(2, line)
            for line in self.fetch_before(fetched):
                self.emit(2, line)
            self.emit(2, "while i < until:")
            self.lines.extend("    " + line for line in steady)
            for line in regs.at_the_stop(self.d):
                self.emit(2, line)
            for line in regs.write_back():
                self.emit(2, line)
        self.emit(2, "return i")
        self.lines.extend(on_demand)
        self.lines.extend(self.deep.lines)
        self.emit(1, f"return trips, {made}")
        return "\n".join(self.lines) + "\n"


def source(schedule, batched=frozenset(), recording=False) -> str:
    """The generated trip function of `schedule`'s loop, as text."""
    return Emitter(schedule, batched, recording).trips(list(schedule.collected))


def trip_function(schedule, trip, hot=HOT_TRIPS):
    """The compiled ordinary trips of `schedule`'s loop, bound to this run's memos and steps;
    None while the loop is not hot: this run is at a `trip` below `hot`, and its earlier runs
    on this plan have run fewer than ACROSS_RUNS times `hot` trips (compiling costs about a
    millisecond, what a few hundred trips save: 10-trip LSTM-like scans of the exporter corpus
    run 0.2 ms faster compiled). The function is kept with the
    plan, and its binding with the schedule (which is kept for later runs, `Schedule.take`)
    unless batches feed this run."""
    if schedule.bound is not None and not schedule.batched:
        return schedule.bound
    d = schedule.d
    recording = schedule.record is not None
    key = ("compiled", d.key, recording, schedule.batched)
    derived = d.plan.derived
    if key not in derived:
        if trip < hot and derived.get(("trips run", d.key), 0) < hot * ACROSS_RUNS:
            return None
        text = source(schedule, schedule.batched, recording)
        scope = {"_M": _MISSING, "ND": np.ndarray, "GENERIC": np.generic, "UNSTEADY": NotSteady}
        exec(compile(text, f"<trips of {d.loop.name}>", "exec"), scope)  # noqa: S102
        derived[key] = scope["bind"]
    members, memos, fns, ufuncs, dtypes, scalars, shapes = binding(schedule)
    steps = [schedule.steps[n.id] if n.id in schedule.batched else schedule.plain_steps[n.id]
             for n in members]  # as built: never a compiled step (on_demand.py)
    bound, on_demand = derived[key](
        memos, steps, fns, ufuncs, members, dtypes, scalars, shapes,
        schedule.invariant, schedule.invariants, schedule.get, iterated,
        schedule.inner_element, schedule.check_element,
        None if schedule.record is None else schedule.record.append,
        list(schedule.collected.values()))
    if not schedule.batched and not recording:
        schedule.bound = bound
        schedule.steps.update(on_demand)  # what is made on demand, compiled (on_demand.py)
    return bound
