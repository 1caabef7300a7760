"""Checking programs against a backend: the `Checker` for one subject (with the search for
a register ambiguity that explains a difference), and `check`, the whole campaign of
generating, grouping and shrinking; `throughput` measures it."""
from __future__ import annotations

import time
from collections import Counter
from typing import Dict

import numpy as np

from ..core.errors import EvaluationError, FuelExhausted, LazyLoopError
from .backends import Unsupported, _frontend, formats_of
from .comparing import Difference, compare
from .report import Disagreement, Outcome, Refusal, Report, _error_key
from .shrinking import _settings, _shrink
from .subject import Invalid, NotExported, Refused, Subject, subjects


class Checker:
    """Runs subjects against one backend and remembers outcomes (hypothesis replays them)."""

    def __init__(self, b, attribute: bool = True, tolerance=(None, None)):
        self.backend = b
        self.memo: Dict[str, Outcome] = {}
        self.attribute_ambiguities = attribute
        self.tolerance = tolerance  # (rtol, atol) overriding comparing's defaults

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
        try:
            if hasattr(self.backend, "run_subject"):
                actual = self.backend.run_subject(subject, subject.feeds)
            else:
                actual = self.backend.run(model, subject.feeds)
        except Unsupported as exc:
            return Outcome("unsupported", rules=rules, error=str(exc))
        except Exception as exc:
            return Outcome("disagree", rules=rules,
                           differences=(Difference("*", "error", f"{type(exc).__name__}"),),
                           error=f"{type(exc).__name__}: {exc}")
        diffs = compare(expected, defined, actual, *self.tolerance)
        if not diffs:
            return Outcome("agree", rules=rules)
        return Outcome("disagree", rules=rules, differences=tuple(diffs),
                       actual={k: np.asarray(v) for k, v in actual.items()})

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
        for amb_id, reading in alternative_readings(subject.format):
            if actual is None and reading not in REFUSING_READINGS | {"no-limit", "infinite"}:
                continue
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

class _TimeUp(BaseException):
    """Raised inside the exploration when `max_seconds` have passed (a BaseException, so
    that hypothesis lets it through instead of taking it for a failing example)."""


def check(b, max_examples: int = 200, seed: int = 0, formats=None, kinds=None,
          shrink: bool = True, shrink_seconds: float = 60.0, progress=None,
          max_seconds=None, rtol=None, atol=None) -> Report:
    """Differential-test backend `b` against lazyloop on `max_examples` generated programs
    (see the package docstring). Returns a `Report`. `formats` defaults to every format the
    backend takes; `kinds` restricts the subject kinds ("core", "onnx-loop", ...);
    `progress(stage, done, total, report)` is called as it goes. After `max_seconds`, or on
    Ctrl-C, generation stops and the findings so far are reported unshrunk
    (`report.stopped`); `rtol`/`atol` replace the float tolerances."""
    from .schema import backend_version
    from hypothesis import Phase, given
    from hypothesis import seed as hseed

    formats = tuple(formats or formats_of(b))
    strategy = subjects(formats, kinds)
    checker = Checker(b, tolerance=(rtol, atol))
    report = Report(getattr(b, "name", type(b).__name__), seed,
                    backend_version=backend_version(b))
    start = time.monotonic()
    first_seen: Dict[tuple, tuple] = {}   # signature -> (subject, outcome, index)
    counts: Counter = Counter()
    refusals: Dict[str, list] = {}
    coverage = set()

    @hseed(seed)
    @_settings(max_examples, [Phase.generate])
    @given(strategy)
    def explore(subject):
        if max_seconds is not None and time.monotonic() - start > max_seconds:
            raise _TimeUp()
        report.generated += 1
        out = checker.outcome(subject)
        report.by_kind[subject.kind] += 1
        if out.internal:
            report.internal_errors.append(f"{subject!r}: {out.internal}")
        if out.status == "invalid":
            report.invalid += 1
        elif out.status == "not-exportable":
            report.not_exportable += 1
        else:
            report.examples += 1
            coverage.update(out.rules)
            if out.status == "agree":
                report.agreements += 1
            elif out.status == "unsupported":
                reason = _error_key(out.error or "")
                refusals.setdefault(reason, [0, subject, out.rules])[0] += 1
            else:
                report.instances += 1
                sig = out.signature(subject)
                counts[sig] += 1
                if sig not in first_seen:
                    first_seen[sig] = (subject, out, report.generated)
        if progress:
            progress("generate", report.generated, max_examples, report)

    try:
        explore()
    except _TimeUp:
        report.stopped, shrink = "max-time", False
    except KeyboardInterrupt:
        report.stopped, shrink = "interrupted", False
    report.coverage = frozenset(coverage)
    report.unsupported = [Refusal(reason, n, subj, rules)
                          for reason, (n, subj, rules) in refusals.items()]
    for k, (sig, (subject, out, index)) in enumerate(first_seen.items()):
        if progress:
            progress("shrink", k, len(first_seen), report)
        minimal, mout, shrunk = subject, out, False
        if shrink:
            minimal, mout, shrunk = _shrink(strategy, checker, sig, seed, max_examples,
                                            shrink_seconds, subject, out)
        report.disagreements.append(_disagreement(minimal, mout, checker, sig, index,
                                                  counts[sig], shrunk))
    if progress:
        progress("done", len(first_seen), len(first_seen), report)
    report.seconds = time.monotonic() - start
    return report


def _disagreement(subject, out, checker, sig, index, count, shrunk) -> Disagreement:
    """The record of one (minimal) disagreement; its ambiguity is looked for here, on the
    minimal program, where nothing unrelated to the difference is left to explain it."""
    expected, defined, rules = subject.expectation()
    checker.attribute(subject, out, out.actual)
    return Disagreement(model=subject.model(), feeds=subject.feeds, expected=expected,
                        actual=out.actual, rules=out.rules or rules, ambiguity=out.ambiguity,
                        defined=defined, differences=out.differences, error=out.error,
                        subject=subject, signature=sig, found_after=index,
                        occurrences=count, shrunk=shrunk)


def throughput(b, n: int = 100, seed: int = 0, formats=None, kinds=None) -> float:
    """Programs checked per second against backend `b` (generation, lazyloop's evaluation,
    export and the backend's run; no shrinking), measured over `n` generated programs."""
    report = check(b, max_examples=n, seed=seed, formats=formats, kinds=kinds, shrink=False)
    return report.generated / report.seconds if report.seconds else float("inf")
