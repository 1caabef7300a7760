"""Where `run` and `explain` meet the evaluators, through the one frontend protocol (a
`lazyloop.core.lowered.Lowered`, whatever the model's format).

- `outputs_and_masks`: a run without a trace: mode "fast", keeping only what demand needs,
  with the masks of defined positions that `evaluate` drops (and which path ran each loop).
- `traced`: mode "reference" with its forcing events handed to a sink, for `explain` only
  (which keeps what it draws).
- `progress_while`: on a terminal, a progress line while an evaluation runs long.
"""
from __future__ import annotations

import sys
import threading
import time

from ..core.fuel import COMMAND_LINE_MAX_SECONDS as DEFAULT_MAX_SECONDS  # noqa: F401
from ..core.fuel import DEFAULT_MAX_TRIPS  # noqa: F401 -- the fuel default for --help


def outputs_and_masks(lowered, user_feeds, max_trips, max_seconds=None, paths=None):
    """{output: value} and {output: defined mask}, by the model's output names: a run
    without a trace (mode "fast"), which keeps only what demand still needs. `paths`, a
    dict, is given which evaluator ran each loop (`Evaluation.paths`)."""
    result = lowered.run(user_feeds, max_trips, trace=False, max_seconds=max_seconds,
                         mode="fast")
    if paths is not None:
        paths.update(result.paths)
    return result.outputs, result.defined


def traced(lowered, user_feeds, max_trips, max_seconds=None, sink=True):
    """The reference evaluator's `Evaluation`, its forcing events handed to `sink` (for
    `explain`: a `DrawnTrace`, which keeps only what it draws; True keeps every event)."""
    return lowered.run(user_feeds, max_trips, trace=sink, max_seconds=max_seconds,
                       mode="reference").evaluation


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
