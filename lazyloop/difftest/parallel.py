"""Scaling a campaign out on Dask distributed.

Program i of a campaign is a pure function of (seed, i) (`shrinking.draw_program`; and of
the baseline's shapes, `known.draw_avoiding`), so the indices split into shards that any
worker explores on its own backend (isolated in a child process there too, kept from shard to
shard with its strategy: `warm`). The parent merges the shards' tallies — counts add up, and for each
signature the instance with the smallest index is kept — and finishes the report itself:
shrinking in index order (one signature after another, on the parent's own backend: workers
do not shrink) and grouping by root cause, exactly as a single process does. The
same seed therefore gives the same findings whatever the number of workers.

`workers=N` starts a LocalCluster of N single-threaded worker processes (no dashboard);
`scheduler="tcp://host:8786"` uses a running cluster instead (each of its workers needs
lazyloop and the backend's package installed). The backend travels to the workers as what
names it: a built-in or registered name, or ``module:factory``. LocalCluster workers are handed
the current folder, where ``module:factory`` is looked up first (`plugins.search_first`), and
the cluster keeps its scratch files in a temporary folder it removes; a remote scheduler's
workers import the module as installed there.
"""
from __future__ import annotations

import contextlib
import logging
import os
import time

from .campaign import Tally, campaign_strategy, explore, finish, running, runner_for
from .checking import Checker
from .plugins import search_first
from .shrinking import INTERRUPTED

SHARD_SIZE = 10


def shards(max_examples: int, size: int = SHARD_SIZE) -> list:
    """The indices 0 .. max_examples-1 in consecutive ranges of `size`."""
    return [range(k, min(k + size, max_examples)) for k in range(0, max_examples, size)]


def explore_shard(spec, indices, seed, formats, kinds, isolate, timeout, memory_mb,
                  tolerance=(None, None), folder=None, known=None) -> Tally:
    """Run on a worker: programs `indices` against the worker's backend and strategy (`warm`:
    the same isolated child and the same strategy from shard to shard; `explore` keeps
    hypothesis' files out of the worker's current folder); `folder`: where
    ``module:factory`` is looked up first (the parent's current folder, on a LocalCluster)."""
    if folder is not None:
        search_first(folder)
    runner, strategy = warm(spec, isolate, timeout, memory_mb, formats, kinds)
    return explore(Checker(runner, tolerance=tolerance), strategy, seed, indices,
                   known=known)


_WARM = {}  # in a worker process: the campaign's settings -> (its backend, its strategy)


def warm(spec, isolate, timeout, memory_mb, formats, kinds):
    """(backend, strategy) of the worker for these settings, made by its first shard and kept
    for the next ones (a child process that died is replaced by `Isolated` itself, on the
    next program; a strategy drawn from again draws faster than a new one). A worker keeps
    one: another campaign's settings close it. It ends with the worker (an isolated child
    reads the end of its pipe)."""
    key = (spec, isolate, timeout, memory_mb, formats and tuple(formats),
           kinds and tuple(kinds))
    if key not in _WARM:
        for runner, _ in _WARM.values():
            if hasattr(runner, "close"):
                runner.close()
        _WARM.clear()
        runner = runner_for(spec, isolate, timeout, memory_mb)[0]
        _WARM[key] = (runner, campaign_strategy(runner, formats, kinds)[1])
    return _WARM[key]


def check_parallel(spec, max_examples, seed, formats, kinds, shrink_it, budget,
                   progress, isolate, timeout, memory_mb, workers, scheduler, deadline=None,
                   tolerance=(None, None), known=None):
    """`check` with the exploration spread over Dask workers (see the module docstring).
    Past `deadline` (time.monotonic()) or on Ctrl-C the shards not yet in are cancelled and
    the merged tally is reported as partial."""
    from dask.distributed import Client
    start = time.monotonic()
    tally = Tally()
    folder = os.getcwd() if scheduler is None else None
    with contextlib.ExitStack() as stack:
        cluster = stack.enter_context(local_cluster(workers)) if scheduler is None else None
        with Client(scheduler or cluster) as client:
            futures = [client.submit(explore_shard, spec, shard, seed, formats, kinds, isolate,
                                     timeout, memory_mb, tolerance, folder, known,
                                     pure=False)
                       for shard in shards(max_examples)]
            tally.stopped = gather(futures, tally, deadline, progress, max_examples)
            processes = len(client.scheduler_info().get("workers", ())) or workers
    with running(spec, isolate, timeout, memory_mb) as runner:
        _, strategy = campaign_strategy(runner, formats, kinds)
        report = finish(tally, Checker(runner, tolerance=tolerance), strategy, runner.name,
                        seed, shrink_it, budget, progress)
    report.seconds = time.monotonic() - start
    report.processes = max(1, processes)
    return report


@contextlib.contextmanager
def local_cluster(workers: int):
    """A LocalCluster of `workers` single-threaded worker processes without a dashboard,
    its scratch files (scheduler's and workers') in a temporary folder removed afterwards."""
    import tempfile

    import dask
    from dask.distributed import LocalCluster
    with tempfile.TemporaryDirectory(prefix="lazyloop-dask-") as scratch, \
            dask.config.set({"temporary-directory": scratch}):
        cluster = LocalCluster(n_workers=max(1, workers), threads_per_worker=1,
                               processes=True, dashboard_address=None,
                               silence_logs=logging.ERROR, local_directory=scratch)
        try:
            yield cluster
        finally:
            cluster.close()


def gather(futures, tally, deadline, progress, total):
    """Merge the shards' tallies as they come in; None when all came, else why not
    ("max-time" or "interrupted"; the rest are cancelled)."""
    from dask.distributed import as_completed
    merged = 0
    try:
        for future in as_completed(futures, timeout=None if deadline is None else
                                   max(0.0, deadline - time.monotonic())):
            tally.merge(future.result())
            if progress:
                progress("generate", tally.generated, total, tally)
            future.release()
            merged += 1
            if merged < len(futures) and INTERRUPTED.is_set():  # Ctrl-C (command line)
                raise KeyboardInterrupt
            if merged < len(futures) and deadline is not None and time.monotonic() > deadline:
                raise TimeoutError
    except KeyboardInterrupt:
        stopped = "interrupted"
    except TimeoutError:
        stopped = "max-time"
    else:
        return tally.stopped
    for future in futures:
        future.cancel()
    return stopped
