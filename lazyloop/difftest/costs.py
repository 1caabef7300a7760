"""What a campaign spends its time on: the split of its wall time into parts, and the tester
overhead (spec/51, "What a campaign costs").

The parts, each summed over the programs explored (seconds):

- `generation`: drawing programs from the strategy (hypothesis);
- `export`: building a program's model (a core program exported to the backend's format, a
  dialect program's model built from its recipe);
- `lowering`: a dialect model lowered onto the core (`Subject.lowered`);
- `expectation`: lazyloop's answer (mode "fast"), lowering and export left out;
- `serialisation`: the model written down as bytes for the isolated child;
- `transfer`: the round trip to the isolated child (the pipe both ways, the child reading the
  model back, waiting to be scheduled), the backend's own run left out;
- `backend`: the backend's own run (`run(model, feeds)`, timed where it runs);
- `comparison`: comparing answers (and what else examining a program does: checking its
  feeds, telling symptoms);
- `confirmation`: confirming a disagreement with the reference evaluator (a traced run);
- `starting`: starting the isolated child (a backend object's first, and a fresh one after one
  died or was killed);
- `hangs`: waiting for a backend that ran past its time limit (neither lazyloop's work nor the
  backend's);
- `finishing`: shrinking, minimising, explaining and grouping the findings.

`other` is the wall time none of them covers (starting the backend and workers,
bookkeeping). The tester overhead is (wall - hangs) / backend: how many times longer the
campaign took than the backend's own work on the same programs.

A campaign prepares the next program (generation, export, lowering, expectation) while the
isolated backend answers the one before (`Checker`'s pipeline): the backend's run then
overlaps lazyloop's work. `overlapped` (apart from the parts) is how much of the backend's
run did, so the parts add up to at most the wall time plus `overlapped`.
"""
from __future__ import annotations

import contextlib
import time
from typing import Dict, Optional

import attrs

PARTS = ("generation", "export", "lowering", "expectation", "serialisation", "transfer",
         "backend", "comparison", "confirmation", "starting", "hangs", "finishing")


OVERLAPPED = "overlapped"  # the backend's run during lazyloop's own work: inside "backend"


def _zeros() -> Dict[str, float]:
    return dict.fromkeys(PARTS + (OVERLAPPED,), 0.0)


@attrs.define
class Costs:
    """Seconds per part (`PARTS`), summed over programs; costs of shards merge by adding."""

    seconds: Dict[str, float] = attrs.Factory(_zeros)

    def add(self, part: str, seconds: float) -> None:
        self.seconds[part] += max(0.0, seconds)

    def timing(self, part: str):
        """A context manager adding the time its block takes to `part`."""
        return spent(self.seconds, part)

    def copy(self) -> "Costs":
        return Costs(dict(self.seconds))

    def since(self, earlier: "Costs") -> "Costs":
        """What was spent after `earlier` (a copy of these costs taken before)."""
        return Costs({p: s - earlier.seconds.get(p, 0.0) for p, s in self.seconds.items()})

    def merge(self, other: "Costs") -> "Costs":
        for part, s in other.seconds.items():
            self.add(part, s)
        return self

    def document(self, wall: float, processes: int = 1) -> dict:
        """The `costs` object of the JSON report: the parts, `overlapped`, `other`, the wall
        time, and the tester overhead (None when the backend's own time is unknown or nil).
        With several worker processes the parts are process-seconds and add up to at most
        `wall` x `processes` (the parent's finishing included) plus `overlapped`."""
        parts = {p: round(self.seconds[p], 4) for p in PARTS}
        overlapped = self.seconds[OVERLAPPED]
        budget = wall * max(1, processes)
        spent = sum(self.seconds[p] for p in PARTS) - overlapped
        return {"wall": round(wall, 4), "processes": max(1, processes), "parts": parts,
                OVERLAPPED: round(overlapped, 4),
                "other": round(max(0.0, budget - spent), 4),
                "overhead": overhead(wall, self.seconds)}


def overhead(wall: float, seconds: Dict[str, float]) -> Optional[float]:
    """(wall - hangs) / the backend's own time, or None when the backend took no time."""
    own = seconds.get("backend", 0.0)
    if own <= 0:
        return None
    return round((wall - seconds.get("hangs", 0.0)) / own, 3)


@contextlib.contextmanager
def spent(record: dict, part: str):
    """Add the time the block takes to `record[part]` (a dict of seconds: a `Costs`'s, or a
    subject's own record of what building it cost)."""
    start = time.perf_counter()
    try:
        yield
    finally:
        record[part] = record.get(part, 0.0) + time.perf_counter() - start
