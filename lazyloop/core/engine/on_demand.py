"""Streams made on demand, compiled: the steps of a loop's conditional streams.

A stream no phase schedules -- a branch's, what an inner loop reads only in some runs (its
body's reads when its COUNT may be 0) -- is made when something asks for element k: the
compiled trips write it in line where they read it (compiled.py), anything else calls its
step, a closure that reads its inputs through other closures (`Schedule.step_for`). A loop
nested in another reads such streams of the enclosing loop at every run it makes: one
element per run and stream, each through a chain of closures.

Once the enclosing loop's trips are compiled, each such stream gets a compiled step too:
`c<c>(j0)`, written by the same emitter, makes element j0 as the trips would make it in
line -- the same elements, read and stored in the same memos, in the same order, checked
the same way. Anything out of the ordinary -- a kernel raising, an element failing its
stream's type -- is left to the step it replaces, which does again what is not memoised and
reports what failed (`stream/memo`: what the compiled step stored is not made twice). A
stream whose cone reuses a map made from shapes (reuse.py: the trips' locals), a nested
loop's output, or a step longer than `STEP_LINES` lines keeps its step, as do the streams
of a loop with no loop nested in it. `Schedule.take`, `release` and the batches keep the steps as
built (`plain_steps`): a compiled step is only ever installed over them.
"""
from __future__ import annotations

import re

from ..plan import LoopOut


STEP_LINES = 400  # a compiled step longer than this keeps its step (a deep branch's cone)


def on_demand_streams(demand, batched) -> list:
    """The members made only on demand whose steps are compiled, in a loop with a loop
    nested in it (whose runs ask for them; elsewhere the trips write them in line where
    they read them): not a chain (kept whole by `branches.chain_step`), not batched, not a
    nested loop's output."""
    if not demand.nested:
        return []
    return [k for k, node in demand.members.items()
            if k in demand.conditional and k not in demand.chains and k not in batched
            and not isinstance(node, LoopOut)]


def step_lines(emitter, k):
    """The lines (at `bind`'s depth) of `def c<c>(j0)`, the compiled step of member k, or
    None when it keeps its step. The emitter's invariant names and reused maps are left as
    the trips had them: the step's invariants are its own locals, fetched when it starts."""
    c = emitter.ids[k]
    invariants, reused = dict(emitter.invariants), len(emitter.reused_names)
    emitter.lines, emitter.rel, emitter.regs = [], {}, None
    emitter.compute(3, k, 0)
    body, names = emitter.lines, {name: ref for ref, name in emitter.invariants.items()}
    emitter.invariants = invariants
    if len(emitter.reused_names) != reused:  # its cone reads the trips' locals
        del emitter.reused_names[reused:]
        return None
    if len(body) > STEP_LINES:
        return None
    used = dict.fromkeys(n for n in re.findall(r"\bx\d+\b", "\n".join(body)) if n in names)
    return ([f"    def c{c}(j0):  # {k!r}, made on demand"]
            + [f"        {name} = INVS.get({names[name]!r}, _M)" for name in used]
            + ["        try:"] + body
            + ["        except Exception:  # noqa: BLE001 -- its step does it again, says what failed",
               f"            return s{c}(j0)",
               "        return v0"])


def compiled_steps(emitter):
    """The lines of every compiled step of the loop (`step_lines`), and the text of the dict
    `bind` returns beside the trips: {member: its compiled step}."""
    lines, made = [], []
    for k in on_demand_streams(emitter.d, emitter.batched):
        found = step_lines(emitter, k)
        if found is not None:
            lines += found
            made.append(f"{k!r}: c{emitter.ids[k]}")
    return lines, "{" + ", ".join(made) + "}"
