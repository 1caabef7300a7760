"""Shrinking a disagreement: replaying the seeded generation until hypothesis meets it
again, then letting hypothesis reduce it to a minimal program of the same signature.

The hypothesis settings live here because the exploration and its replay must share them
(same examples, same phases up to shrinking) for the replay to meet the same subjects.
"""
from __future__ import annotations

import time


class _Found(Exception):
    pass


def _settings(max_examples, phases):
    from hypothesis import HealthCheck, Verbosity, settings
    return settings(max_examples=max_examples, deadline=None, database=None,
                    phases=phases, suppress_health_check=list(HealthCheck),
                    verbosity=Verbosity.quiet, report_multiple_bugs=False,
                    print_blob=False)


def _shrink(strategy, checker, sig, seed, max_examples, budget, subject, out):
    """Replay the generation with the same seed (outcomes come from the memo) until the first
    subject of signature `sig`, and let hypothesis shrink it. Past the time budget only
    subjects already known to fail count, so the shrinker stops soon and replays cleanly."""
    from hypothesis import Phase, given
    from hypothesis import seed as hseed

    best = [subject, out]
    deadline = time.monotonic() + budget

    @hseed(seed)
    @_settings(max_examples, [Phase.generate, Phase.shrink])
    @given(strategy)
    def replay(candidate):
        key = candidate.key()
        if key not in checker.memo and time.monotonic() > deadline:
            return
        o = checker.outcome(candidate)
        if o.status == "disagree" and o.signature(candidate) == sig:
            best[0], best[1] = candidate, o
            raise _Found()

    try:
        replay()
    except _Found:
        return best[0], best[1], best[0] is not subject
    except Exception:  # hypothesis could not replay (flaky): keep the first instance
        pass
    return subject, out, False
