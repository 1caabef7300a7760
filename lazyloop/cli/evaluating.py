"""Where `run` and `explain` meet the evaluators -- the one place to change when the core's
evaluators change (the reliability work adds a wall-time budget and a memory-lean traced run).

- `outputs_and_masks`: `ll.run` without a trace: the fast path, keeping only what demand
  needs, with the masks of defined positions that `ll.evaluate` drops.
- `traced`: the reference evaluator with its forcing events handed to a sink, for `explain`
  only (which keeps what it draws).
- `progress_while`: on a terminal, a progress line while an evaluation runs long.
"""
from __future__ import annotations

import sys
import threading
import time

from ..core.evaluate import DEFAULT_MAX_TRIPS  # noqa: F401 -- the fuel default for --help

DEFAULT_MAX_SECONDS = 600.0  # the command line's wall-time budget (the library has none)


def outputs_and_masks(lowered, user_feeds, max_trips, max_seconds=None):
    """{output: value} and {output: defined mask}, by the model's output names: `ll.run`
    without a trace, which takes the fast path and keeps only what demand still needs."""
    from ..core.evaluate import run
    result = run(lowered.network, lowered.core_feeds(user_feeds), max_trips=max_trips,
                 trace=False, max_seconds=max_seconds)
    return lowered.user_outputs(result.outputs), lowered.user_outputs(result.defined)


def traced(lowered, user_feeds, max_trips, max_seconds=None, sink=True):
    """The reference evaluator's `Evaluation`, its forcing events handed to `sink` (for
    `explain`: a `DrawnTrace`, which keeps only what it draws; True keeps every event)."""
    from ..core.evaluate import run
    return run(lowered.network, lowered.core_feeds(user_feeds), max_trips=max_trips,
               trace=sink, max_seconds=max_seconds)


def progress_while(label: str, work, stream=None, after: float = 2.0):
    """Run `work()`; if it takes longer than `after` seconds and `stream` (stderr) is a
    terminal, show how long it has run, redrawn in place every second, cleared at the end."""
    stream = stream or sys.stderr
    if not getattr(stream, "isatty", lambda: False)():
        return work()
    done = threading.Event()
    start = time.monotonic()

    def tick():
        if done.wait(after):
            return
        while not done.wait(1.0):
            stream.write(f"\r\x1b[K{label} ... {time.monotonic() - start:.0f} s (Ctrl-C stops)")
            stream.flush()

    ticker = threading.Thread(target=tick, daemon=True)
    ticker.start()
    try:
        return work()
    finally:
        done.set()
        ticker.join()
        if time.monotonic() - start > after:
            stream.write("\r\x1b[K")
            stream.flush()
