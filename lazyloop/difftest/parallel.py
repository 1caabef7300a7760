"""Scaling a campaign out on Dask distributed.

Program i of a campaign is a pure function of (seed, i) (`shrinking.draw_program`), so the
indices split into shards that any worker explores on its own backend (isolated in a child
process there too). The parent merges the shards' tallies — counts add up, and for each
signature the instance with the smallest index is kept — and finishes the report itself:
shrinking in index order and grouping by root cause, exactly as a single process does. The
same seed therefore gives the same findings whatever the number of workers.

`workers=N` starts a LocalCluster of N single-threaded worker processes (no dashboard);
`scheduler="tcp://host:8786"` uses a running cluster instead (each of its workers needs
lazyloop and the backend's package installed). The backend travels to the workers as what
names it: a built-in or registered name, or ``module:factory``.
"""
from __future__ import annotations

import logging
import time

from .campaign import Tally, explore, finish
from .checking import Checker, campaign_strategy, runner_for

SHARD_SIZE = 10


def shards(max_examples: int, size: int = SHARD_SIZE) -> list:
    """The indices 0 .. max_examples-1 in consecutive ranges of `size`."""
    return [range(k, min(k + size, max_examples)) for k in range(0, max_examples, size)]


def explore_shard(spec, indices, seed, formats, kinds, isolate, timeout, memory_mb) -> Tally:
    """Run on a worker: programs `indices` against a backend made there."""
    runner, owned = runner_for(spec, isolate, timeout, memory_mb)
    try:
        _, strategy = campaign_strategy(runner, formats, kinds)
        return explore(Checker(runner), strategy, seed, indices)
    finally:
        if owned:
            runner.close()


def check_parallel(spec, max_examples, seed, formats, kinds, shrink_it, shrink_steps,
                   progress, isolate, timeout, memory_mb, workers, scheduler):
    """`check` with the exploration spread over Dask workers (see the module docstring)."""
    from dask.distributed import Client, LocalCluster, as_completed
    start = time.monotonic()
    cluster = None
    if scheduler is None:
        cluster = LocalCluster(n_workers=max(1, workers), threads_per_worker=1,
                               processes=True, dashboard_address=None,
                               silence_logs=logging.ERROR)
    tally = Tally()
    try:
        with Client(scheduler or cluster) as client:
            futures = [client.submit(explore_shard, spec, shard, seed, formats, kinds, isolate,
                                     timeout, memory_mb, pure=False)
                       for shard in shards(max_examples)]
            for future in as_completed(futures):
                tally.merge(future.result())
                if progress:
                    progress("generate", tally.generated, max_examples, tally)
                future.release()
    finally:
        if cluster is not None:
            cluster.close()
    runner, owned = runner_for(spec, isolate, timeout, memory_mb)
    try:
        _, strategy = campaign_strategy(runner, formats, kinds)
        report = finish(tally, Checker(runner), strategy, runner.name, seed, shrink_it,
                        shrink_steps, progress)
    finally:
        if owned:
            runner.close()
    report.seconds = time.monotonic() - start
    return report
