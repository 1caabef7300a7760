"""Drawing program i of a campaign, and shrinking a disagreement, with hypothesis's engine.

Program i is a pure function of (seed, i): it is drawn from the strategy by a fresh
hypothesis `ConjectureData` whose random source is seeded with "seed:i". Nothing else — not
the backend, the number of workers, earlier runs or an example database — changes it, so a
campaign splits into shards that run anywhere and merge into the same findings.

A disagreement is shrunk from the choices that drew it: hypothesis's shrinker proposes
smaller choice sequences; each is drawn into a program and checked, and it counts when it
disagrees with the same signature. The budget is a number of *steps* (programs run on the
backend that were not run before), not seconds, so shrinking gives the same minimal program
on any machine; past the budget only programs already known to fail still count, and after
`CANDIDATES_PER_STEP` x steps proposals in all the shrinker is stopped with what it reached.
"""
from __future__ import annotations

import random

DEFAULT_SHRINK_STEPS = 300


def _draw(data, strategy):
    from hypothesis.control import BuildContext
    with BuildContext(data, wrapped_test=None):
        return data.draw(strategy)


def draw_program(strategy, seed: int, index: int):
    """(subject, choices): program `index` of the campaign seeded `seed`."""
    from hypothesis.internal.conjecture.data import ConjectureData
    data = ConjectureData(random=random.Random(f"lazyloop:{seed}:{index}"))
    subject = _draw(data, strategy)
    return subject, tuple(node.value for node in data.nodes)


def replay_program(strategy, choices):
    """The program a choice sequence draws."""
    from hypothesis.internal.conjecture.data import ConjectureData
    return _draw(ConjectureData.for_choices(choices), strategy)


class _SameFault(Exception):
    """hypothesis's tag for 'disagrees with the signature being shrunk'."""


class _Budget(Exception):
    """The shrinker proposed more candidates than its budget allows."""


# candidates (new or remembered) the shrinker may propose per step of the budget
CANDIDATES_PER_STEP = 10


def shrink(strategy, checker, sig, choices, steps: int = DEFAULT_SHRINK_STEPS):
    """(minimal subject, its outcome, shrunk?) for the disagreement of signature `sig` drawn
    by `choices`; at most `steps` new programs are run on the backend."""
    from hypothesis import HealthCheck, Phase, settings
    from hypothesis.internal.conjecture.data import Status
    from hypothesis.internal.conjecture.engine import ConjectureRunner, RunIsComplete
    from hypothesis.internal.escalation import InterestingOrigin

    origin = InterestingOrigin.from_exception(_SameFault())
    spent, calls = [0], [0]
    best = {}

    def test(data):
        candidate = _draw(data, strategy)  # drawn first: hypothesis checks draws replay
        calls[0] += 1
        if calls[0] > CANDIDATES_PER_STEP * steps:
            raise _Budget()  # ends the shrinker; what it reached so far is kept
        key = candidate.key()
        if key not in checker.memo:
            if spent[0] >= steps:
                return
            spent[0] += 1
        out = checker.outcome(candidate)
        if out.status == "disagree" and out.signature(candidate) == sig:
            best[key] = (candidate, out)
            data.mark_interesting(origin)

    config = settings(database=None, deadline=None, phases=[Phase.shrink],
                      suppress_health_check=list(HealthCheck), report_multiple_bugs=False)
    # ignore_limits: no wall-clock limit on shrinking (hypothesis's five minutes); the budget
    # in steps and hypothesis's cap on successful shrinks bound it instead
    runner = ConjectureRunner(test, settings=config, random=random.Random(0),
                              ignore_limits=True)
    first = runner.cached_test_function(choices)
    if first.status != Status.INTERESTING:  # pragma: no cover -- a flaky backend
        subject = replay_program(strategy, choices)
        return subject, checker.outcome(subject), False
    original = replay_program(strategy, choices).key()
    try:
        _hypothesis_name(runner, "shrink_interesting_test_cases", "shrink_interesting_examples")()
    except (_Budget, RunIsComplete):  # out of budget, or hypothesis's cap on shrinks
        pass
    except Exception:  # pragma: no cover -- hypothesis gave up: keep what it reached
        pass
    found = _hypothesis_name(runner, "interesting_test_cases", "interesting_examples")
    result = found.get(origin) or first
    subject = replay_program(strategy, result.choices)
    candidate, out = best.get(subject.key(), (subject, checker.outcome(subject)))
    return candidate, out, candidate.key() != original


def _hypothesis_name(runner, name, older_name):
    """A ConjectureRunner member under its current name, or the one hypothesis used before
    6.16x (the engine is internal: its names change between releases)."""
    return getattr(runner, name) if hasattr(runner, name) else getattr(runner, older_name)
