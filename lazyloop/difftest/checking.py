"""Checking programs against a backend: the `Checker` for one subject (with the search for
a register ambiguity that explains a difference), and `check`, the whole campaign of
generating, grouping and shrinking; `throughput` measures it."""
from __future__ import annotations

import time
from typing import Dict

from ..core.errors import EvaluationError, FuelExhausted, LazyLoopError
from .backends import Unsupported, _frontend, formats_of
from .comparing import Difference, compare, plain
from .campaign import explore, finish
from .isolation import DEFAULT_MEMORY_MB, BackendCrashed, Isolated
from .plugins import is_backend
from .report import Outcome, Report
from .shrinking import (DEFAULT_SHRINK_HANGS, DEFAULT_SHRINK_SECONDS, DEFAULT_SHRINK_STEPS,
                        DEFAULT_SHRINK_TOTAL_SECONDS, ShrinkBudget)
from .subject import Invalid, NotExported, Refused, Subject, subjects


class Checker:
    """Runs subjects against one backend and remembers outcomes (hypothesis replays them)."""

    def __init__(self, b, attribute: bool = True, tolerance=(None, None)):
        self.backend = b
        self.memo: Dict[str, Outcome] = {}
        self.attribute_ambiguities = attribute
        self.tolerance = tolerance  # (rtol, atol) overriding comparing's defaults
        self.slowest = 0.0  # seconds of the slowest answer the backend gave (not a hang)

    def outcome(self, subject: Subject) -> Outcome:
        key = subject.key()
        if key not in self.memo:
            self.memo[key] = self.examine(subject)
        return self.memo[key]

    def examine(self, subject: Subject) -> Outcome:
        try:
            expected, defined, rules = subject.expectation()
            model = subject.model()
        except Invalid as exc:
            return Outcome("invalid", error=str(exc))
        except NotExported as exc:
            return Outcome("not-exportable", error=str(exc))
        except Refused as exc:
            return Outcome("unsupported", rules=frozenset(), error=str(exc))
        except LazyLoopError as exc:  # pragma: no cover -- a deliberate error we did not expect
            return Outcome("invalid", error=str(exc))
        except Exception as exc:  # lazyloop itself failed
            return Outcome("invalid", internal=f"{type(exc).__name__}: {exc}")
        started = time.monotonic()
        try:
            if hasattr(self.backend, "run_subject"):
                actual = self.backend.run_subject(subject, subject.feeds)
            else:
                actual = self.backend.run(model, subject.feeds)
        except Unsupported as exc:
            self.answered(started)
            return Outcome("unsupported", rules=rules, error=str(exc))
        except Exception as exc:
            if not isinstance(exc, BackendCrashed):  # a death or a hang is not an answer
                self.answered(started)
            return Outcome("disagree", rules=rules,
                           differences=(Difference("*", "error", f"{type(exc).__name__}"),),
                           error=f"{type(exc).__name__}: {exc}")
        self.answered(started)
        diffs = compare(expected, defined, actual, *self.tolerance)
        if not diffs:
            return Outcome("agree", rules=rules)
        return Outcome("disagree", rules=rules, differences=tuple(diffs),
                       actual={k: plain(v) for k, v in actual.items()})

    def answered(self, started: float) -> None:
        """Note how long an answer took (what is normal for this backend: `hang_limit`)."""
        self.slowest = max(self.slowest, time.monotonic() - started)

    def attribute(self, subject: Subject, out: Outcome, actual) -> None:
        """Which registered ambiguity, read otherwise, makes lazyloop agree with the backend."""
        if not self.attribute_ambiguities or subject.format == "core":
            return
        if actual is None and "process died" in (out.error or ""):
            return  # a crash is a bug whatever the reading
        try:
            model = subject.model()
        except Exception:  # pragma: no cover
            return
        frontend = _frontend(subject.format)
        try:  # only a model lazyloop evaluates by default can be read otherwise
            frontend.run(model, subject.feeds, max_trips=10_000)
        except Exception:
            return
        from .overflowing import worth_trying
        for amb_id, reading in alternative_readings(subject.format):
            if actual is None and reading not in REFUSING_READINGS | {"no-limit", "infinite"}:
                continue
            if not worth_trying(amb_id, subject.format, model):
                continue  # A30: no integer arithmetic for `saturate` to change
            try:
                r = frontend.run(model, subject.feeds, max_trips=10_000,
                                 readings={amb_id: reading})
            except FuelExhausted:
                if actual is None and "no answer within" in (out.error or ""):
                    out.ambiguity = amb_id  # the backend hangs where this reading never ends
                    return
                continue
            except EvaluationError:
                if actual is None:  # a reading that refuses, as the backend does
                    out.ambiguity = amb_id
                    return
                continue
            except Exception:
                continue
            if actual is not None and not compare(r.outputs, r.defined, actual,
                                                  *self.tolerance):
                out.ambiguity = amb_id
                return


# readings under which lazyloop refuses (a runtime error) what the default reading runs
REFUSING_READINGS = frozenset({"error", "refuse", "eager"})


def alternative_readings(fmt: str):
    """(ambiguity ID, reading) for every reading other than the default, core register first
    and then the frontend's own entries."""
    from ..core.ambiguity import REGISTER
    pairs = []
    for a in REGISTER.values():
        pairs += [(a.id, r) for r in a.readings if r != a.default]
    try:
        if fmt == "onnx":
            from ..onnx.lowering import FRONTEND_READINGS
            for k, options in FRONTEND_READINGS.items():
                pairs += [(k, r) for r in options[1:]]
        else:
            from ..openvino.register import OPENVINO_REGISTER
            for a in OPENVINO_REGISTER.values():
                pairs += [(a.id, r) for r in a.readings if r != a.default]
    except ImportError:  # pragma: no cover
        pass
    return pairs


def check(b, max_examples: int = 200, seed: int = 0, formats=None, kinds=None,
          shrink: bool = True, shrink_steps: int = DEFAULT_SHRINK_STEPS, progress=None,
          isolate: bool = True, timeout: float = 60.0, memory_mb: float = DEFAULT_MEMORY_MB,
          workers: int = 0, scheduler=None, max_seconds=None, rtol=None, atol=None,
          shrink_seconds=DEFAULT_SHRINK_SECONDS,
          shrink_total_seconds=DEFAULT_SHRINK_TOTAL_SECONDS,
          shrink_hangs: int = DEFAULT_SHRINK_HANGS) -> Report:
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
    why its shrinking ended (`shrinking`). Returns a `Report`."""
    budget = ShrinkBudget(shrink_steps, shrink_seconds, shrink_total_seconds, shrink_hangs)
    start = time.monotonic()
    deadline = None if max_seconds is None else start + max_seconds
    if workers or scheduler:
        from .parallel import check_parallel
        report = check_parallel(b, max_examples, seed, formats, kinds, shrink, budget,
                                progress, isolate, timeout, memory_mb, workers, scheduler,
                                deadline, (rtol, atol))
    else:
        runner, owned = runner_for(b, isolate, timeout, memory_mb)
        try:
            formats, strategy = campaign_strategy(runner, formats, kinds)
            checker = Checker(runner, tolerance=(rtol, atol))
            tally = explore(checker, strategy, seed, range(max_examples), progress,
                            max_examples, deadline)
            report = finish(tally, checker, strategy, getattr(runner, "name", type(b).__name__),
                            seed, shrink, budget, progress)
        finally:
            if owned:
                runner.close()
    report.seconds = time.monotonic() - start
    return report


def runner_for(b, isolate: bool, timeout: float, memory_mb: float):
    """(the backend to run programs on, whether this call owns it and must close it)."""
    from .plugins import make_backend
    if isinstance(b, Isolated):
        return b, False
    if isolate:
        return Isolated(b, timeout=timeout, memory_mb=memory_mb), True
    return (make_backend(b) if isinstance(b, str) or not is_backend(b) else b), False


def campaign_strategy(runner, formats=None, kinds=None):
    """(formats, the strategy of subjects) for a campaign on `runner`."""
    formats = tuple(formats or formats_of(runner))
    return formats, subjects(formats, kinds or getattr(runner, "kinds", None))


def throughput(b, n: int = 100, seed: int = 0, formats=None, kinds=None, isolate=False,
               workers: int = 0) -> float:
    """Programs checked per second against backend `b` (generation, lazyloop's evaluation,
    export and the backend's run; no shrinking), measured over `n` generated programs."""
    report = check(b, max_examples=n, seed=seed, formats=formats, kinds=kinds, shrink=False,
                   isolate=isolate, workers=workers)
    return report.generated / report.seconds if report.seconds else float("inf")
