"""A whole campaign against one backend, `check` (generating, checking, shrinking, grouping;
in this process or on Dask workers), and `throughput`, which measures one."""
from __future__ import annotations

import time

from .campaign import campaign_strategy, explore, finish, running
from .checking import Checker
from .isolation import DEFAULT_MEMORY_MB, Isolated
from .known import as_known
from .plugins import plugin_spec
from .report import Report
from .shrinking import (DEFAULT_MINIMIZE_STEPS, DEFAULT_SHRINK_HANGS, DEFAULT_SHRINK_SECONDS,
                        DEFAULT_SHRINK_STEPS, DEFAULT_SHRINK_TOTAL_SECONDS, ShrinkBudget)


def check(b, max_examples: int = 200, seed: int = 0, formats=None, kinds=None,
          shrink: bool = True, shrink_steps: int = DEFAULT_SHRINK_STEPS, progress=None,
          isolate: bool = True, timeout: float = 60.0, memory_mb: float = DEFAULT_MEMORY_MB,
          workers: int = 0, scheduler=None, max_seconds=None, rtol=None, atol=None,
          shrink_seconds=DEFAULT_SHRINK_SECONDS,
          shrink_total_seconds=DEFAULT_SHRINK_TOTAL_SECONDS,
          shrink_hangs: int = DEFAULT_SHRINK_HANGS,
          minimize_steps: int = DEFAULT_MINIMIZE_STEPS, baseline=None) -> Report:
    """Differential-test backend `b` against lazyloop on programs 0 .. `max_examples`-1 of
    the campaign seeded `seed` (see the package docstring). `b` is a backend object, a
    factory, or a name (built-in, registered in ``lazyloop.backends``, ``module:factory``).

    By default the backend runs in a child process (`Isolated`): a crash (with its signal),
    a hang past `timeout` seconds or a resident size past `memory_mb` MiB is a finding and a
    fresh child takes the next program; `isolate=False` runs it here (for debugging).
    `workers`/`scheduler` run the programs in shards on Dask distributed (`parallel`).
    `formats` defaults to every format the backend takes, `kinds` to the backend's own
    `kinds` attribute or every subject kind; `progress(stage, done, total, tally)` is called
    as it goes. After `max_seconds`, or on Ctrl-C, exploring stops and the findings so far
    are reported unshrunk (`report.stopped`); `rtol`/`atol` replace the float tolerances.
    Shrinking is bounded per signature by `shrink_steps` new programs, `shrink_seconds` and
    `shrink_hangs` candidates that time out (each with a shorter time limit,
    `shrinking.hang_limit`), and in all by `shrink_total_seconds`; each disagreement says
    why its shrinking ended (`shrinking`). Then each finding's model is reduced by at most
    `minimize_steps` edited models (minimize.py; 0: not reduced). `baseline` (a report's
    path, a `known.KnownCauses` or root-cause keys): programs shaped like one of its causes
    are drawn less often (known.py). Returns a `Report`."""
    known = as_known(baseline)
    budget = ShrinkBudget(shrink_steps, shrink_seconds, shrink_total_seconds, shrink_hangs,
                          minimize_steps)
    start = time.monotonic()
    deadline = None if max_seconds is None else start + max_seconds
    if workers or scheduler:
        from .parallel import check_parallel
        report = check_parallel(b, max_examples, seed, formats, kinds, shrink, budget,
                                progress, isolate, timeout, memory_mb, workers, scheduler,
                                deadline, (rtol, atol), known)
    else:
        with running(b, isolate, timeout, memory_mb) as runner:
            formats, strategy = campaign_strategy(runner, formats, kinds)
            checker = Checker(runner, tolerance=(rtol, atol))
            tally = explore(checker, strategy, seed, range(max_examples), progress,
                            max_examples, deadline, known)
            report = finish(tally, checker, strategy, getattr(runner, "name", type(b).__name__),
                            seed, shrink, budget, progress)
    report.seconds = time.monotonic() - start
    report.backend_spec = plugin_spec(b.spec if isinstance(b, Isolated) else b)
    report.known_shapes = len(known.shapes) if known else 0
    return report


def throughput(b, n: int = 100, seed: int = 0, formats=None, kinds=None, isolate=False,
               workers: int = 0) -> float:
    """Programs checked per second against backend `b` (generation, lazyloop's evaluation,
    export and the backend's run; no shrinking), measured over `n` generated programs."""
    report = check(b, max_examples=n, seed=seed, formats=formats, kinds=kinds, shrink=False,
                   isolate=isolate, workers=workers)
    return report.generated / report.seconds if report.seconds else float("inf")
