"""Checking programs against a backend: the `Checker` for one subject -- the fast mode's
expectation, the backend's answer, a disagreement confirmed by the reference evaluator, and
the search for a register ambiguity that explains it. The whole campaign is
`check_campaign.check`."""
from __future__ import annotations

import time
from typing import Dict, Optional

from ..core.errors import LazyLoopError
from .backends import HarnessError, InputLost, Unsupported
from .comparing import Difference, compare, plain
from .costs import Costs, spent
from .explaining import alternative_readings, explain  # noqa: F401 (alternative_readings)
from .feeding import unfed
from .isolation import BackendCrashed
from .report import Outcome
from .subject import Invalid, ModesDisagree, NotExported, Refused, Subject
from .symptom import Symptom, error_symptom, value_symptom


class Checker:
    """Runs subjects against one backend and remembers outcomes (hypothesis replays them)."""

    def __init__(self, b, attribute: bool = True, tolerance=(None, None)):
        self.backend = b
        self.memo: Dict[str, Outcome] = {}
        self.attribute_ambiguities = attribute
        self.tolerance = tolerance  # (rtol, atol) overriding comparing's defaults
        self.slowest = 0.0  # seconds of the slowest answer the backend gave (not a hang)
        self.costs = Costs()  # what examining programs cost, by part (costs.py)

    def outcome(self, subject: Subject) -> Outcome:
        key = subject.key()
        if key not in self.memo:
            self.memo[key] = self.examine(subject)
        return self.memo[key]

    def examine(self, subject: Subject) -> Outcome:
        parts: Dict[str, float] = {}  # the parts of examining it measured apart (costs.py)
        started = time.perf_counter()
        try:
            return self._examine(subject, parts)
        finally:
            total = time.perf_counter() - started
            built = subject.take_building()  # export and lowering, inside the expectation
            parts["expectation"] = parts.get("expectation", 0.0) - sum(built.values())
            parts.update(built)
            for part, s in parts.items():
                self.costs.add(part, s)
            self.costs.add("comparison", total - sum(parts.values()))

    def _examine(self, subject: Subject, parts: Dict[str, float]) -> Outcome:
        try:
            with spent(parts, "expectation"):
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
        except Exception:  # lazyloop itself failed: kept with its traceback
            import traceback
            return Outcome("invalid", internal=traceback.format_exc())
        lacking = unfed(model, subject.feeds) if subject.format in ("onnx", "openvino") else []
        if lacking:  # the harness must feed every input it hands on (spec/51, "The harness")
            return Outcome("harness-error", rules=rules,
                           error=f"HarnessError: no value for the model's input {lacking[0]!r}")
        started = time.monotonic()
        try:
            actual = self.ask(subject, model, parts)
        except Unsupported as exc:
            self.answered(started)
            return Outcome("unsupported", rules=rules, error=str(exc))
        except HarnessError as exc:  # lazyloop's adapter, not the engine: apart from findings
            return Outcome("harness-error", rules=rules, error=f"HarnessError: {exc}")
        except InputLost as exc:  # the engine's fault, never a value from an unfed input
            self.answered(started)
            return self.confirmed(subject, parts, Outcome(
                "disagree", differences=(Difference("*", "lost-input", str(exc)),),
                error=f"InputLost: {exc}", symptom=Symptom("lost-input")))
        except Exception as exc:
            if not isinstance(exc, BackendCrashed):  # a death or a hang is not an answer
                self.answered(started)
            error = f"{type(exc).__name__}: {exc}"
            return self.confirmed(subject, parts, Outcome(
                "disagree", differences=(Difference("*", "error", f"{type(exc).__name__}"),),
                error=error, symptom=error_symptom(error)))
        self.answered(started)
        diffs = compare(expected, defined, actual, *self.tolerance)
        if not diffs:
            return Outcome("agree", rules=rules)
        return self.confirmed(subject, parts, Outcome("disagree", differences=tuple(diffs),
                                          actual={k: plain(v) for k, v in actual.items()},
                                          symptom=value_symptom(expected, defined, actual)))

    def ask(self, subject: Subject, model, parts: Dict[str, float]):
        """The backend's answer for `subject`; `parts` gets how the time went: an
        isolated backend says (`Isolated.last_costs`: serialisation, transfer, its own run,
        hangs), one run here is all "backend"."""
        if hasattr(self.backend, "run_subject"):
            try:
                return self.backend.run_subject(subject, subject.feeds)
            finally:
                parts.update(self.backend.last_costs)
        with spent(parts, "backend"):
            return self.backend.run(model, subject.feeds)

    def confirmed(self, subject: Subject, parts: Dict[str, float], out: Outcome) -> Outcome:
        """`confirmed(subject, out)`, its time noted as "confirmation" in `parts`."""
        with spent(parts, "confirmation"):
            return confirmed(subject, out)

    def answered(self, started: float) -> None:
        """Note how long an answer took (what is normal for this backend: `hang_limit`)."""
        self.slowest = max(self.slowest, time.monotonic() - started)

    def attribute(self, subject: Subject, out: Outcome, actual=None) -> Optional[str]:
        """Which registered ambiguity, read otherwise, makes lazyloop agree with the backend
        (explaining.py): sets `out.ambiguity` and `out.reading` once per outcome, and
        returns the reading ("A30=saturate") or None."""
        if self.attribute_ambiguities and not out.explained:
            explain(subject, out, out.actual if actual is None else actual, self.tolerance)
            out.explained = True
        return out.reading

    def computed_reading(self, subject: Subject, out: Outcome) -> Optional[str]:
        """The reading whose computed answer (values, or never ending) is the backend's, or
        None: what a shrink candidate must share with its finding (a refusal only says where
        the backend failed, and is judged on the minimal case)."""
        reading = self.attribute(subject, out)
        return None if out.refusal else reading


def confirmed(subject: Subject, out: Outcome) -> Outcome:
    """A disagreement, confirmed by the reference evaluator before it is reported: its rules
    are those the reference's trace shows exercised. Where the reference's answer is not the
    fast path's, lazyloop has a bug (`laziness/modes`): the program is reported as
    lazyloop's own failure, not as the backend's."""
    try:
        _, _, out.rules = subject.confirmation()
    except ModesDisagree as exc:
        return Outcome("invalid", internal=f"ModesDisagree: {exc} (a lazyloop bug, "
                                           "laziness/modes)")
    unfaithful = export_differences(subject)
    if unfaithful:
        return Outcome("harness-error", rules=out.rules, error=(
            f"HarnessError: lazyloop's export of the program to {subject.format} does not mean "
            f"what the program means ({unfaithful[0].output}: {unfaithful[0].detail}); the "
            "backend was judged against the program, so its answer is not a finding (spec/51, "
            "\"Exporters\")"))
    return out


def export_differences(subject: Subject) -> list:
    """Where the model a core program was exported to means something else than the program:
    lazyloop's own answer on that model, lowered back, against the program's wherever the
    program defines a position (spec/51, "Exporters": the export computes the same value
    there). Empty where they agree, for a dialect program (its model is what it is), and
    where lazyloop cannot read the model back (no evidence either way)."""
    if subject.kind != "core" or subject.format not in ("onnx", "openvino"):
        return []
    expected, defined, _ = subject.expectation()
    try:
        answer = subject.exported_answer()
    except LazyLoopError:
        return []
    return compare(expected, defined, answer)
