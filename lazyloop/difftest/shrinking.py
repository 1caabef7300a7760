"""Drawing program i of a campaign, and shrinking a disagreement, with hypothesis's engine.

Program i is a pure function of (seed, i): it is drawn from the strategy by a fresh
hypothesis `ConjectureData` whose random source is seeded with "seed:i". Nothing else — not
the backend, the number of workers, earlier runs, an example database, how lazyloop is
installed or which modules are loaded (provider.py) — changes it, so a campaign splits into
shards that run anywhere and merge into the same findings.

A disagreement is shrunk from the choices that drew it: hypothesis's shrinker proposes
smaller choice sequences; each is drawn into a program and checked, and it counts when it
shows the same *symptom* (symptom.py), with its answer computed by the same reading of the
ambiguity register or by none (explaining.py), whatever kind of program it is. Before shrinking, the
simplest program of every kind is tried (`simplest_programs`): one that shows the symptom and
is smaller takes the finding's place, so one fault met in programs of several kinds converges
on one minimal case. The budget is a number of *steps* (programs run on the
backend that were not run before), not seconds, so shrinking gives the same minimal program
on any machine; past the budget only programs already known to fail still count, and after
`CANDIDATES_PER_STEP` x steps proposals in all the shrinker is stopped with what it reached.

Steps are the reproducible bound; three more bound what steps cannot (`ShrinkBudget`): a
backend that hangs costs a whole time limit per candidate, so candidates run with a shorter
limit (`hang_limit`), a signature stops after `hangs` candidates that timed out, and wall
time is capped per signature and for the whole shrink stage. Ctrl-C stops shrinking too. A
finding records why its shrinking ended (`SHRINKING`).
"""
from __future__ import annotations

import contextlib
import random
import threading
import time
from typing import Optional

import attrs

DEFAULT_SHRINK_STEPS = 300
DEFAULT_SHRINK_SECONDS = 120.0        # per signature
DEFAULT_SHRINK_TOTAL_SECONDS = 600.0  # the whole shrink stage
DEFAULT_SHRINK_HANGS = 8              # candidates that time out, per signature
DEFAULT_MINIMIZE_STEPS = 200          # edited models run per finding (model-level minimising)

# why a finding's shrinking ended ("complete": the shrinker found nothing smaller to try)
SHRINKING = {
    "complete": "the shrinker ran to its end",
    "steps": "its --shrink-steps budget of new programs was spent",
    "time": "its wall-time budget was spent (--shrink-seconds, --shrink-total-seconds)",
    "hangs": "too many of its candidates timed out",
    "interrupted": "Ctrl-C",
    "off": "shrinking was off (--no-shrink, or the exploration stopped early)",
}

# set by the command line's Ctrl-C handler (which raises nothing the first time): exploring
# and shrinking stop at the next program, and a wait for an isolated backend ends at once
INTERRUPTED = threading.Event()
# set by a second Ctrl-C: the run stops at once and writes no report (`Abort`)
ABORTED = threading.Event()


class Abort(BaseException):
    """A second Ctrl-C: stop at once, write nothing. A BaseException that is no
    KeyboardInterrupt, so that no handler that keeps a partial campaign catches it."""


def abort_if_asked() -> None:
    """Raise `Abort` when a second Ctrl-C came (its own raise may have been swallowed, by a
    garbage-collector hook for one)."""
    if ABORTED.is_set():
        raise Abort()


@attrs.frozen
class ShrinkBudget:
    """What shrinking may cost: per signature at most `steps` new programs on the backend,
    `seconds` of wall time and `hangs` candidates that time out; the whole shrink stage at
    most `total_seconds` (None: no wall-time bound); then at most `model_steps` edited models
    per finding while its model is minimised (0: not minimised)."""

    steps: int = DEFAULT_SHRINK_STEPS
    seconds: Optional[float] = DEFAULT_SHRINK_SECONDS
    total_seconds: Optional[float] = DEFAULT_SHRINK_TOTAL_SECONDS
    hangs: int = DEFAULT_SHRINK_HANGS
    model_steps: int = DEFAULT_MINIMIZE_STEPS


# a shrink candidate counts as hanging once it runs HANG_MARGIN times longer than the
# slowest answer the backend gave while exploring, and never before HANG_FLOOR of the limit
HANG_MARGIN = 10.0
HANG_FLOOR = 0.1


def hang_limit(timeout: float, slowest: float) -> float:
    """Seconds a shrink candidate may run: a program that hung at `timeout` still hangs at a
    smaller limit, as long as that limit is well past the backend's normal time (`slowest`
    answer seen) -- HANG_MARGIN x slowest, at least HANG_FLOOR x timeout, at most timeout."""
    return min(timeout, max(HANG_MARGIN * slowest, HANG_FLOOR * timeout))


@contextlib.contextmanager
def time_limit(runner, seconds: Optional[float]):
    """Run the block with `runner`'s per-program time limit set to `seconds` (an isolated
    backend has one; a backend run in this process has none to change)."""
    old = getattr(runner, "timeout", None)
    if old is None or seconds is None:
        yield
        return
    runner.timeout = min(old, seconds)
    try:
        yield
    finally:
        runner.timeout = old


def hung(out) -> bool:
    return "no answer within" in (out.error or "")


def _draw(data, strategy):
    from hypothesis.control import BuildContext
    with BuildContext(data, wrapped_test=None):
        return data.draw(strategy)


def draw_program(strategy, seed: int, index: int):
    """(subject, choices): program `index` of the campaign seeded `seed`."""
    return draw_with(strategy, random.Random(f"lazyloop:{seed}:{index}"))


def draw_with(strategy, source: random.Random):
    """(subject, choices) drawn from `strategy` with the random source `source` (and
    hypothesis's provider without the constants of local sources: provider.py)."""
    from hypothesis.internal.conjecture.data import ConjectureData

    from .provider import draw_provider
    data = ConjectureData(random=source, provider=draw_provider())
    subject = _draw(data, strategy)
    return subject, tuple(node.value for node in data.nodes)


def replay_program(strategy, choices):
    """The program a choice sequence draws."""
    from hypothesis.internal.conjecture.data import ConjectureData
    return _draw(ConjectureData.for_choices(choices), strategy)


def simplest_programs(strategy) -> list:
    """The choices of the simplest program of each kind the strategy draws (each branch of
    its `one_of`, every later choice the simplest), in the strategy's order: the programs a
    finding of any kind is moved to when they show its symptom, so that one fault met in
    programs of several kinds ends in one minimal case (spec/51, "Shrinking")."""
    from hypothesis.internal.conjecture.choice import ChoiceTemplate
    from hypothesis.internal.conjecture.data import ConjectureData
    inner = getattr(strategy, "wrapped_strategy", strategy)
    branches = len(getattr(inner, "original_strategies", ())) or 1
    found = []
    for k in range(branches):
        prefix = ([k] if branches > 1 else []) + [ChoiceTemplate("simplest", count=None)]
        data = ConjectureData(prefix=prefix, random=None, max_choices=100_000)
        try:
            _draw(data, strategy)
        except Exception:  # noqa: BLE001 -- an overrun: this branch has no simplest program
            continue
        found.append(tuple(node.value for node in data.nodes))
    return found


class _SameFault(Exception):
    """hypothesis's tag for 'disagrees with the signature being shrunk'."""


class _Budget(Exception):
    """The shrinker proposed more candidates than its budget allows."""


# candidates (new or remembered) the shrinker may propose per step of the budget
CANDIDATES_PER_STEP = 10


def _cut(spent: int, hangs: int, budget: ShrinkBudget, deadline) -> Optional[str]:
    """Why a new candidate may not run on the backend (a SHRINKING key), or None."""
    abort_if_asked()
    if INTERRUPTED.is_set():
        return "interrupted"
    if deadline is not None and time.monotonic() > deadline:
        return "time"
    if hangs >= budget.hangs:
        return "hangs"
    if spent >= budget.steps:
        return "steps"
    return None


def shrink(strategy, checker, sig, choices, budget: ShrinkBudget = ShrinkBudget(),
           deadline: Optional[float] = None, tick=None, used: Optional[dict] = None):
    """(minimal subject, its outcome, shrunk?, why shrinking ended: a SHRINKING key) for the
    disagreement of signature `sig` drawn by `choices`; within `budget` (its steps and
    hangs) and before `deadline` (a time.monotonic() value). `tick()` is called after each
    new candidate ran (a progress line). `used`, a dict, receives the new programs run
    ("steps") and those that timed out ("hangs")."""
    from hypothesis import HealthCheck, Phase, settings
    from hypothesis.internal.conjecture.data import Status
    from hypothesis.internal.conjecture.engine import ConjectureRunner, RunIsComplete
    from hypothesis.internal.escalation import InterestingOrigin

    origin = InterestingOrigin.from_exception(_SameFault())
    spent, calls, hangs = [0], [0], [0]
    best, ended = {}, set()

    def test(data):
        candidate = _draw(data, strategy)  # drawn first: hypothesis checks draws replay
        calls[0] += 1
        if calls[0] > 1 + CANDIDATES_PER_STEP * budget.steps:
            ended.add("steps")
            raise _Budget()  # ends the shrinker; what it reached so far is kept
        key = candidate.key()
        new = key not in checker.memo
        if new:
            why = _cut(spent[0], hangs[0], budget, deadline)
            if why == "steps":  # only programs already run may still count
                ended.add(why)
                return
            if why:
                ended.add(why)
                raise _Budget()
            spent[0] += 1
        out = checker.outcome(candidate)
        hangs[0] += new and hung(out)
        if new and tick:
            tick()
        if same_symptom(out, sig) and checker.computed_reading(candidate, out) == reading:
            best[key] = (candidate, out)
            data.mark_interesting(origin)

    config = settings(database=None, deadline=None, phases=[Phase.shrink],
                      suppress_health_check=list(HealthCheck), report_multiple_bugs=False)
    # ignore_limits: not hypothesis's own five-minute limit; the budget (steps, hangs, wall
    # time) and hypothesis's cap on successful shrinks bound it instead
    runner = ConjectureRunner(test, settings=config, random=random.Random(0),
                              ignore_limits=True)
    original = replay_program(strategy, choices)
    # the finding's explanation is part of what it shows: a candidate whose computed answer is
    # another reading's (or none) is another finding, whatever its symptom
    reading = checker.computed_reading(original, checker.outcome(original))
    try:
        first = runner.cached_test_function(choices)  # remembered: nothing runs again
        if first.status != Status.INTERESTING:  # cut before it ran again, or flaky
            return original, checker.memo.get(original.key()), False, _why(ended)
        for simplest in simplest_programs(strategy):  # the smallest that shows it wins
            runner.cached_test_function(simplest)
        _hypothesis_name(runner, "shrink_interesting_test_cases", "shrink_interesting_examples")()
    except (_Budget, RunIsComplete):  # out of budget, or hypothesis's cap on shrinks
        pass
    except KeyboardInterrupt:  # Ctrl-C: keep what was reached
        ended.add("interrupted")
    except Exception:  # pragma: no cover -- hypothesis gave up: keep what it reached
        pass
    if used is not None:
        used.update(steps=spent[0], hangs=hangs[0])
    found = _hypothesis_name(runner, "interesting_test_cases", "interesting_examples")
    result = found.get(origin)
    subject = original if result is None else replay_program(strategy, result.choices)
    candidate, out = best.get(subject.key(), (subject, checker.memo.get(subject.key())))
    return candidate, out, candidate.key() != original.key(), _why(ended)


def same_symptom(out, sig) -> bool:
    """Whether an outcome disagrees with the symptom of signature `sig` (whatever program
    kind it came from): what shrinking keeps."""
    return out is not None and out.status == "disagree" and str(out.symptom) == sig[-1]


def _why(ended) -> str:
    """The SHRINKING key of a shrinker stopped for `ended` reasons (the strongest first)."""
    for reason in ("interrupted", "time", "hangs", "steps"):
        if reason in ended:
            return reason
    return "complete"


def _hypothesis_name(runner, name, older_name):
    """A ConjectureRunner member under its current name, or the one hypothesis used before
    6.16x (the engine is internal: its names change between releases)."""
    return getattr(runner, name) if hasattr(runner, name) else getattr(runner, older_name)
