"""Where `run` and `explain` meet the evaluators -- the one place to change when the core's
evaluators change (the reliability work adds a wall-time budget and a memory-lean traced run).

- `outputs_and_masks`: the fast path (the per-trip schedule of `ll.evaluate`, which keeps a
  fixed window of elements), keeping the masks of defined positions that `ll.evaluate` drops.
- `traced`: the reference evaluator with the forcing trace, for `explain` only.
- `progress_while`: on a terminal, a progress line while an evaluation runs long.
"""
from __future__ import annotations

import sys
import threading
import time

import numpy as np

from ..core.evaluate import DEFAULT_MAX_TRIPS  # noqa: F401 -- the fuel default for --help


def outputs_and_masks(lowered, user_feeds, max_trips):
    """{output: value} and {output: defined mask}, by the model's output names, evaluated on
    the fast path (`stream/order`: elements forced in order, a fixed window kept)."""
    from ..core.evaluate import Machine, _plain, check_feeds, compile_network
    from ..core.undefined import split, whole_mask
    plan = compile_network(lowered.network)
    machine = Machine(plan, check_feeds(plan, lowered.core_feeds(user_feeds)), max_trips,
                      fast=True)
    outputs, masks = {}, {}
    for name, nid in plan.outputs:
        element = machine.demand(nid)
        value, mask = split(element)
        outputs[name] = _plain(element)
        if mask is not None and not isinstance(mask, bool):
            masks[name] = np.broadcast_to(mask, np.shape(value)).copy()
        else:
            masks[name] = whole_mask(outputs[name], mask is None or mask)
    return lowered.user_outputs(outputs), lowered.user_outputs(masks)


def traced(lowered, user_feeds, max_trips):
    """The reference evaluator's `Evaluation` with the forcing trace (for `explain`)."""
    from ..core.evaluate import run
    return run(lowered.network, lowered.core_feeds(user_feeds), max_trips=max_trips,
               trace=True)


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
