"""Deep reads of streams made on demand, on register trips: one small function per stream
and offset.

A register trip (registers.py) writes a stream no phase schedules in line where it reads
it, as the memo form does, down to INLINE_DEPTH such streams (compiled.py). Below that the
memo form calls the stream's step, which reads its inputs' memos -- but on a register trip
the scheduled streams' memos are empty, their elements being in registers, so it cannot.
A WHILE input reading its inputs a trip back through a deep body (jax2onnx's while loops
with a cond in the body) reads such streams twenty deep on every trip.

Instead the register trip calls a *deep read*: `h<c>_<trip>_<r>(j0, ...)` makes element j0
= i + r of member c as the trip would make it in line -- the same elements, read and stored
in the same memos, in the same order, checked the same way (`stream/memo`: an element
memoised is not made again; the caller asks its memo first). It is written once per member
and offset (relative to the trip) by the same emitter, deeper reads calling deep reads in
turn, and takes as arguments the registers and invariants it reads. Anything out of the
ordinary -- a kernel raising -- propagates to the trip, which hands itself back to the
caller as before.

A deep read writes its own arguments through deep reads in turn (none in line: each
stream's step is written once per offset, not once per reader), and reads only registers
the trip holds from its start, never one the trip makes. Where it would make one, where it
reads a map made from shapes (the trips' locals, reuse.py), for an element below i - 1, and
once the deep reads written reach DEEP_LINES lines, the trip hands itself back there, as it
did before deep reads existed.
"""
from __future__ import annotations

import re

from .registers import NotSteady

DEEP_LINES = 3000  # deep reads written per loop at most (then: the trip hands itself back)
NAMES = re.compile(r"\b(?:q\d+_m?\d+|x\d+)\b")  # registers and invariants a deep read reads


class DeepReads:
    """The deep reads of one loop's register trips: their names and lines."""

    def __init__(self):
        self.made = {}  # (trip, member, offset) -> (function name, arguments), None: refused
        self.lines = []  # the functions' lines, at `bind`'s depth

    def call(self, e, ref, r):
        """(name, arguments) of the deep read making element i + r of member `ref` on e's
        register trip, or None where the trip hands itself back instead: a stream a phase
        schedules, a chain, an element below i - 1 (made by an earlier trip, memoised: a
        trip makes fresh only what lies a trip back or ahead), or no room left."""
        key = (e.regs.trip, ref, r)
        if key in self.made:
            return self.made[key]
        if (ref in e.scheduled or ref in e.d.chains or ref in e.batched or r < -1
                or len(self.lines) > DEEP_LINES):
            return None
        self.made[key] = None  # while it is written: a read of itself is refused
        self.made[key] = self.write(e, ref, r, key)
        return self.made[key]

    def write(self, e, ref, r, key):
        """Write the function for `key`; (name, arguments) or None when it cannot be."""
        regs, c = e.regs, e.ids[ref]
        saved = (e.lines, e.rel, e.certain, e.inline_depth, regs.fresh, regs.made_at,
                 regs.early)
        reused = len(e.reused_names)
        e.lines, e.rel, e.certain, e.inline_depth = [], {"i": 0, "j0": r}, False, 0
        regs.fresh, regs.made_at, regs.early = set(), set(), set()  # held registers only
        try:
            e.compute(2, ref, 0)
            body = e.lines
            ok = not (regs.fresh or regs.made_at or regs.early) and len(
                e.reused_names) == reused
        except NotSteady:
            ok = False
        finally:
            (e.lines, e.rel, e.certain, e.inline_depth, regs.fresh, regs.made_at,
             regs.early) = saved
            del e.reused_names[reused:]
        if not ok:
            return None
        trip = "s" if key[0] is None else key[0]
        name = f"h{c}_{trip}_{r}" if r >= 0 else f"h{c}_{trip}_m{-r}"
        known = set(e.invariants.values()) | {regs.name(k, q) for k, hi in regs.high.items()
                                              for q in range(-regs.window, hi + 1)}
        arguments = [n for n in dict.fromkeys(NAMES.findall("\n".join(body))) if n in known]
        self.lines += [f"    def {name}({', '.join(['j0'] + arguments)}):  # {ref!r} at i + {r}"]
        self.lines += body + ["        return v0"]
        return name, arguments
