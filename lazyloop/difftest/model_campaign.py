"""A campaign on a user's own models (spec/51-difftest.md, "Your own models"): for each
model, `max_examples` feeds drawn from its declared inputs (model_feeds.py), checked and
shrunk exactly as generated programs are (the same Checker, explanations and isolation), the
feeds shrunk and the model kept; one report for all the models."""
from __future__ import annotations

import attrs

from .campaign import add_up, explore, finish
from .model_feeds import model_format, model_subjects
from .report import Refusal, Report


def check_models(runner, checker, models, max_examples: int, seed: int, shrink_it: bool,
                 budget, progress=None, deadline=None, known=None) -> Report:
    """Programs k*N .. k*N+N-1 of the campaign seeded `seed` are the feeds of model k
    (N = `max_examples`), each drawn from (seed, index) as any program; the report lists the
    models (`Report.models`). Past `deadline` or on Ctrl-C the models not reached are not
    explored."""
    name = getattr(runner, "name", type(runner).__name__)
    budget = attrs.evolve(budget, model_steps=0)  # the feeds shrink, never the model
    reports = []
    for k, path in enumerate(models):
        strategy = model_subjects(path)
        indices = range(k * max_examples, (k + 1) * max_examples)
        tally = explore(checker, strategy, seed, indices, progress, max_examples, deadline,
                        known)
        report = finish(tally, checker, strategy, name, seed, shrink_it, budget, progress)
        report.models = ({"path": path, "format": model_format(path),
                          "programs": report.generated,
                          "findings": len(report.disagreements)},)
        reports.append(report)
        if report.stopped:
            break
    return combined(reports, name, seed)


def combined(reports, backend: str, seed: int) -> Report:
    """One report of the campaigns on several models: counts added, findings, refusals and
    errors listed one model after another."""
    out = Report(backend, seed)
    if not reports:
        return out
    out.backend_version = reports[0].backend_version
    refusals = {}
    for r in reports:
        add_up(out, r)
        out.disagreements += r.disagreements
        out.models += r.models
        for refusal in r.unsupported:
            seen = refusals.get(refusal.reason)
            refusals[refusal.reason] = refusal if seen is None else Refusal(
                seen.reason, seen.count + refusal.count, seen.example, seen.rules)
    out.unsupported = list(refusals.values())
    return out
