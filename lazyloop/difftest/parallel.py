"""Scaling a campaign out on Dask distributed.

Program i of a campaign is a pure function of (seed, i) (`shrinking.draw_program`; and of
the baseline's shapes, `known.draw_avoiding`), so the indices split into shards that any
worker explores on its own backend (isolated in a child process there too, kept from shard to
shard with its strategy: `warm`). The parent merges the shards' tallies — counts add up, and for each
signature the instance with the smallest index is kept — and finishes the report itself:
shrinking in index order (one signature after another, on the parent's own backend: workers
do not shrink) and grouping by root cause, exactly as a single process does. The
same seed therefore gives the same findings whatever the number of workers.

`workers=N` starts a LocalCluster of N single-threaded worker processes (no dashboard),
forked from this process once it made its backend child and strategy and imported what
checking needs (`local_cluster`, `preload`), so they start with them; shards get smaller
towards the end (`shards`), and each worker closes its backend child when the exploring is
over (`release`). `scheduler="tcp://host:8786"` uses a running cluster instead (each of its workers needs
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
import warnings

from .campaign import Tally, campaign_strategy, explore, finish, running, runner_for
from .checking import Checker
from .plugins import search_first
from .shrinking import INTERRUPTED

# the programs of a shard: at most MAX (a progress line and --max-time are checked between
# shards), at least MIN (a Dask task costs a few milliseconds)
MAX_SHARD, MIN_SHARD = 50, 2
SHARDS_PER_WORKER = 4  # a shard is about 1/(this x workers) of the programs still unassigned


def shards(max_examples: int, workers: int = 1) -> list:
    """The indices 0 .. max_examples-1 in consecutive ranges, largest first: each about a
    SHARDS_PER_WORKER x `workers`-th of the indices not yet in a shard (within MIN_SHARD ..
    MAX_SHARD), so that the last shards are small and no worker waits long for another at
    the end (programs differ in cost by a factor of a thousand)."""
    ranges, start = [], 0
    while start < max_examples:
        left = max_examples - start
        size = min(MAX_SHARD, max(MIN_SHARD, -(-left // (SHARDS_PER_WORKER * max(1, workers)))))
        ranges.append(range(start, min(start + size, max_examples)))
        start += size
    return ranges


def explore_shard(spec, indices, seed, formats, kinds, isolate, timeout, memory_mb,
                  tolerance=(None, None), folder=None, known=None, stop_at=None) -> Tally:
    """Run on a worker: programs `indices` against the worker's backend and strategy (`warm`:
    the same isolated child and the same strategy from shard to shard; `explore` keeps
    hypothesis' files out of the worker's current folder); `folder`: where
    ``module:factory`` is looked up first (a remote scheduler's workers: None). Past
    `stop_at` (a time.time(): --max-time) the shard stops and returns what it explored."""
    if folder is not None:
        search_first(folder)
    runner, strategy = warm(spec, isolate, timeout, memory_mb, formats, kinds)
    deadline = None if stop_at is None else time.monotonic() + (stop_at - time.time())
    return explore(Checker(runner, tolerance=tolerance), strategy, seed, indices,
                   deadline=deadline, known=known)


_WARM = {}  # in a worker process: the campaign's settings -> (its backend, its strategy)
_STRATEGIES = {}  # (formats, kinds) -> strategy: the parent's, inherited by forked workers


def warm(spec, isolate, timeout, memory_mb, formats, kinds):
    """(backend, strategy) of the worker for these settings, made by its first shard and kept
    for the next ones (a child process that died is replaced by `Isolated` itself, on the
    next program; a strategy drawn from again draws faster than a new one; a LocalCluster's
    worker starts with the parent's, `_STRATEGIES`). A worker keeps one backend until the
    campaign's exploring is over (`release`; another campaign's settings close it too, and
    an isolated child whose worker died reads the end of its pipe)."""
    key = (spec, isolate, timeout, memory_mb, formats, kinds)
    if key not in _WARM:
        release()
        runner = runner_for(spec, isolate, timeout, memory_mb)[0]
        strategy = _STRATEGIES.get((formats, kinds))
        if strategy is None:
            strategy = campaign_strategy(runner, formats, kinds)[1]
        _WARM[key] = (runner, strategy)
    return _WARM[key]


def release() -> None:
    """Run on every worker when a campaign's exploring is over: its backend child is closed
    (and waited for) and its strategy forgotten."""
    for runner, _ in _WARM.values():
        if hasattr(runner, "close"):
            runner.close()
    _WARM.clear()


def campaign_kinds(runner, kinds):
    """The subject kinds of a campaign on `runner` as a tuple (None: every kind), the same
    for the parent and its workers."""
    kinds = kinds or getattr(runner, "kinds", None)
    return tuple(kinds) if kinds else None


def check_parallel(spec, max_examples, seed, formats, kinds, shrink_it, budget,
                   progress, isolate, timeout, memory_mb, workers, scheduler, deadline=None,
                   tolerance=(None, None), known=None):
    """`check` with the exploration spread over Dask workers (see the module docstring).
    Past `deadline` (time.monotonic()) or on Ctrl-C the running shards stop at their next
    program, the others are cancelled, and the merged tally is reported as partial."""
    start = time.monotonic()
    with running(spec, isolate, timeout, memory_mb) as runner:
        kinds = campaign_kinds(runner, kinds)
        formats, strategy = campaign_strategy(runner, formats, kinds)
        tally = Tally()
        if scheduler is None:  # forked workers start with what this process has
            preload(formats)
            _STRATEGIES[formats, kinds] = strategy
        try:
            processes = explore_on_workers(tally, spec, max_examples, seed, formats, kinds,
                                           progress, isolate, timeout, memory_mb, workers,
                                           scheduler, deadline, tolerance, known)
        finally:
            _STRATEGIES.pop((formats, kinds), None)
        report = finish(tally, Checker(runner, tolerance=tolerance), strategy, runner.name,
                        seed, shrink_it, budget, progress)
    report.seconds = time.monotonic() - start
    report.processes = max(1, processes)
    return report


def explore_on_workers(tally, spec, max_examples, seed, formats, kinds, progress, isolate,
                       timeout, memory_mb, workers, scheduler, deadline, tolerance,
                       known) -> int:
    """Explore programs 0 .. max_examples-1 in shards on the workers into `tally`; the
    number of worker processes."""
    from dask.distributed import Client
    folder = None if scheduler is not None else os.getcwd()
    with contextlib.ExitStack() as stack:
        cluster = stack.enter_context(local_cluster(workers)) if scheduler is None else None
        client = stack.enter_context(Client(scheduler or cluster))
        processes = len(client.scheduler_info().get("workers", ())) or workers
        stop_at = None if deadline is None else time.time() + (deadline - time.monotonic())
        futures = [client.submit(explore_shard, spec, shard, seed, formats, kinds, isolate,
                                 timeout, memory_mb, tolerance, folder, known, stop_at,
                                 pure=False)
                   for shard in shards(max_examples, processes)]
        tally.stopped = gather(futures, tally, deadline, progress, max_examples)
        if tally.stopped is None:  # else shards may still run; the workers close soon
            client.run(release)
    return processes


# what checking a program of a format imports when it first needs it: loaded by the parent
# before the workers fork, so that no worker imports them again
PRELOAD = {"onnx": ("lazyloop.onnx", "lazyloop.onnx.export", "lazyloop.core.engine",
                    "lazyloop.core.export", "lazyloop.core.validate", "onnx.reference"),
           "openvino": ("lazyloop.openvino", "lazyloop.core.engine", "lazyloop.core.export"),
           "core": ("lazyloop.core.engine", "lazyloop.core.export")}


def preload(formats) -> None:
    """Import what checking programs of `formats` needs (PRELOAD), here, once."""
    import importlib
    for fmt in formats:
        for name in PRELOAD.get(fmt, ()):
            importlib.import_module(name)


# a campaign's LocalCluster: workers forked from this process, and none of Dask's periodic
# watching that costs CPU while a worker has one long task at a time (a statistical profiler
# sampling every 10 ms, event-loop health checks every 20 ms, system and GIL monitors, memory
# checks every 100 ms: together about a tenth of a core)
CAMPAIGN_CLUSTER = {
    "distributed.worker.multiprocessing-method": "fork",
    "distributed.worker.profile.enabled": False,
    "distributed.admin.tick.interval": "1s",
    "distributed.admin.system-monitor.interval": "5s",
    "distributed.admin.system-monitor.disk": False,
    "distributed.admin.system-monitor.gil.enabled": False,
    "distributed.worker.memory.monitor-interval": "1s",
    "distributed.scheduler.work-stealing": False,  # shards are handed out as workers free up
    "distributed.scheduler.active-memory-manager.start": False,  # no data to move around
}


@contextlib.contextmanager
def local_cluster(workers: int):
    """A LocalCluster of `workers` single-threaded worker processes without a dashboard,
    *forked* from this process (multiprocessing method "fork": a worker starts with this
    process's modules and `_STRATEGIES`, in milliseconds, where a spawned one imports
    distributed, lazyloop and its strategies again), its scratch files (scheduler's and
    workers') in a temporary folder removed afterwards."""
    import tempfile

    import dask
    from dask.distributed import LocalCluster
    with tempfile.TemporaryDirectory(prefix="lazyloop-dask-") as scratch, \
            dask.config.set(dict(CAMPAIGN_CLUSTER, **{"temporary-directory": scratch})), \
            warnings.catch_warnings():
        # Python 3.12+ warns of any fork while another thread runs (the cluster's event loop)
        warnings.filterwarnings("ignore", message=".*fork\\(\\) may lead to deadlocks",
                                category=DeprecationWarning)
        # no dashboard; the scheduler's small HTTP server on any free local port (it would try
        # 8787, and warn when another cluster holds it)
        cluster = LocalCluster(n_workers=max(1, workers), threads_per_worker=1,
                               processes=True, dashboard_address=None,
                               scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
                               silence_logs=logging.ERROR, local_directory=scratch)
        try:
            yield cluster
        finally:
            cluster.close()


# seconds past --max-time the parent waits for the shards then running: each stops at its
# next program and returns what it explored (shards not started by then return at once)
GRACE = 5.0


def gather(futures, tally, deadline, progress, total):
    """Merge the shards' tallies as they come in; why the exploring stopped early (None,
    "max-time" or "interrupted"; shards not in by then are cancelled)."""
    from dask.distributed import as_completed
    merged = 0
    try:
        for future in as_completed(futures, timeout=None if deadline is None else
                                   max(0.0, deadline - time.monotonic()) + GRACE):
            tally.merge(future.result())
            if progress:
                progress("generate", tally.generated, total, tally)
            future.release()
            merged += 1
            if merged < len(futures) and INTERRUPTED.is_set():  # Ctrl-C (command line)
                raise KeyboardInterrupt
    except KeyboardInterrupt:
        stopped = "interrupted"
    except TimeoutError:
        stopped = "max-time"
    else:
        return tally.stopped
    for future in futures:
        future.cancel()
    return stopped
