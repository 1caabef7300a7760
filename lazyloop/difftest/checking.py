"""Checking programs against a backend: the `Checker` for one subject -- the fast mode's
expectation, the backend's answer, a disagreement confirmed by the reference evaluator, and
the search for a register ambiguity that explains it. The whole campaign is
`check_campaign.check`."""
from __future__ import annotations

import time
from typing import Dict, Optional

import attrs

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
    """Runs subjects against one backend and remembers outcomes (hypothesis replays them).

    `outcome(subject)` examines one subject from start to end. A campaign examines programs
    in a pipeline (`prepare`, `send`, `conclude`): lazyloop's work on the next program (its
    expectation and model) is done while the backend answers the one before, whose answer
    is then taken and judged before the next program is sent. The backend sees the same
    programs in the same order either way, one question at a time."""

    def __init__(self, b, attribute: bool = True, tolerance=(None, None)):
        self.backend = b
        self.memo: Dict[str, Outcome] = {}
        self.attribute_ambiguities = attribute
        self.tolerance = tolerance  # (rtol, atol) overriding comparing's defaults
        self.slowest = 0.0  # seconds of the slowest answer the backend gave (not a hang)
        self.costs = Costs()  # what examining programs cost, by part (costs.py)
        self._sent = None  # the question sent last whose answer is not concluded yet

    def outcome(self, subject: Subject) -> Outcome:
        question = self.prepare(subject)
        self.send(question)
        return self.conclude(question)

    def examine(self, subject: Subject) -> Outcome:
        """The outcome of `subject`, examined afresh (not remembered)."""
        question = Question(subject, subject.key())
        self._timed(question, self._prepare)
        self.send(question)
        return self._answer(question)

    # -- the pipeline's three steps ----------------------------------------------------------
    def prepare(self, subject: Subject) -> "Question":
        """A question for `subject` with lazyloop's side done (expectation, model, fed
        inputs), or its outcome known without asking: remembered, or settled before the
        backend (invalid, not exportable, refused, not fed). A subject equal to the one
        whose answer is on its way waits for that answer."""
        question = Question(subject, subject.key())
        if question.key in self.memo or (self._sent is not None and
                                         self._sent.key == question.key):
            question.remembered = True
            return question
        self._timed(question, self._prepare)
        return question

    def send(self, question: "Question") -> None:
        """Ask the backend about a prepared question: an isolated backend starts working on
        it and `conclude` takes its answer; one run in this process answers at once."""
        if question.remembered or question.outcome is not None:
            return
        if self._sent is not None:
            raise RuntimeError("Checker: conclude the question sent before sending another")
        self._timed(question, self._send)
        self._sent = question  # (not when sending was interrupted: nothing is on its way)

    def conclude(self, question: "Question") -> Outcome:
        """The outcome of a prepared (and sent) question: the backend's answer taken and
        judged, remembered by the subject's key."""
        if question.remembered:
            return self.memo[question.key]
        out = self.memo[question.key] = self._answer(question)
        return out

    def _answer(self, question: "Question") -> Outcome:
        if question is self._sent:
            self._sent = None
        return self._timed(question, self._conclude)

    def discard(self) -> None:
        """Forget a question sent whose answer will not be concluded (Ctrl-C, --max-time):
        an isolated backend's child still working on it is replaced (`Isolated.discard`)."""
        if self._sent is not None:
            self._sent = None
            if hasattr(self.backend, "discard"):
                self.backend.discard()

    def _timed(self, question: "Question", step):
        """`step(question)`, its time added to the costs: the parts it measured apart
        (`question.parts`: export and lowering as the subject noted them, inside the
        expectation), the rest as "comparison"."""
        parts = question.parts = {}
        started = time.perf_counter()
        try:
            return step(question)
        finally:
            total = time.perf_counter() - started
            built = question.subject.take_building()
            parts["expectation"] = parts.get("expectation", 0.0) - sum(built.values())
            parts.update(built)
            for part, seconds in parts.items():
                self.costs.add(part, seconds)
            self.costs.add("comparison", total - covered(parts))

    def _prepare(self, question: "Question") -> None:
        subject, parts = question.subject, question.parts
        try:
            with spent(parts, "expectation"):
                question.expected, question.defined, question.rules = subject.expectation()
                question.model = model = subject.model()
        except Invalid as exc:
            question.outcome = Outcome("invalid", error=str(exc))
        except NotExported as exc:
            question.outcome = Outcome("not-exportable", error=str(exc))
        except Refused as exc:
            question.outcome = Outcome("unsupported", rules=frozenset(), error=str(exc))
        except LazyLoopError as exc:  # pragma: no cover -- a deliberate error we did not expect
            question.outcome = Outcome("invalid", error=str(exc))
        except Exception:  # lazyloop itself failed: kept with its traceback
            import traceback
            question.outcome = Outcome("invalid", internal=traceback.format_exc())
        else:
            lacking = unfed(model, subject.feeds) if subject.format in ("onnx", "openvino") \
                else []
            if lacking:  # the harness must feed every input it hands on (spec/51, "The harness")
                question.outcome = Outcome(
                    "harness-error", rules=question.rules,
                    error=f"HarnessError: no value for the model's input {lacking[0]!r}")

    def _send(self, question: "Question") -> None:
        """Hand the question to the backend: an isolated one (`Isolated.send_subject`)
        answers later; one run here answers now, its answer (or error) kept, all "backend"."""
        subject = question.subject
        if hasattr(self.backend, "send_subject"):
            try:
                self.backend.send_subject(subject, subject.feeds)
                question.answer = _LATER
            except Exception as exc:  # a child that could not be started: its answer
                question.answer = exc
            finally:
                question.parts.update(self.backend.last_costs)
            return
        started = time.perf_counter()
        try:
            question.answer = self.backend.run(question.model, subject.feeds)
        except Exception as exc:  # judged in `_conclude`, as if it came now
            question.answer = exc
        finally:
            question.seconds = question.parts["backend"] = time.perf_counter() - started

    def _receive(self, question: "Question"):
        """The backend's answer to the question (raising what the backend raised); `parts`
        gets how the time went (`Isolated.last_costs`: serialisation, transfer, its own run,
        hangs)."""
        answer = question.answer
        if answer is _LATER:
            try:
                answer = self.backend.receive()
            finally:
                question.parts.update(self.backend.last_costs)
                question.seconds = self.backend.answer_seconds
        if isinstance(answer, BaseException):
            raise answer
        return answer

    def _conclude(self, question: "Question") -> Outcome:
        if question.outcome is not None:
            return question.outcome
        subject, parts, rules = question.subject, question.parts, question.rules
        try:
            actual = self._receive(question)
        except Unsupported as exc:
            self.answered(question)
            return Outcome("unsupported", rules=rules, error=str(exc))
        except HarnessError as exc:  # lazyloop's adapter, not the engine: apart from findings
            return Outcome("harness-error", rules=rules, error=f"HarnessError: {exc}")
        except InputLost as exc:  # the engine's fault, never a value from an unfed input
            self.answered(question)
            return self.confirmed(subject, parts, Outcome(
                "disagree", differences=(Difference("*", "lost-input", str(exc)),),
                error=f"InputLost: {exc}", symptom=Symptom("lost-input")))
        except Exception as exc:
            if not isinstance(exc, BackendCrashed):  # a death or a hang is not an answer
                self.answered(question)
            error = f"{type(exc).__name__}: {exc}"
            return self.confirmed(subject, parts, Outcome(
                "disagree", differences=(Difference("*", "error", f"{type(exc).__name__}"),),
                error=error, symptom=error_symptom(error)))
        self.answered(question)
        expected, defined = question.expected, question.defined
        diffs = compare(expected, defined, actual, *self.tolerance)
        if not diffs:
            return Outcome("agree", rules=rules)
        return self.confirmed(subject, parts, Outcome("disagree", differences=tuple(diffs),
                                          actual={k: plain(v) for k, v in actual.items()},
                                          symptom=value_symptom(expected, defined, actual)))

    def confirmed(self, subject: Subject, parts: Dict[str, float], out: Outcome) -> Outcome:
        """`confirmed(subject, out)`, its time noted as "confirmation" in `parts`."""
        with spent(parts, "confirmation"):
            return confirmed(subject, out)

    def answered(self, question: "Question") -> None:
        """Note how long an answer took (what is normal for this backend: `hang_limit`)."""
        self.slowest = max(self.slowest, question.seconds)

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


_LATER = object()  # the answer of a question an isolated backend answers on `receive`


def covered(parts: dict) -> float:
    """The wall time a step's `parts` account for: their sum, less the backend's run that
    overlapped lazyloop's own work ("overlapped", counted in "backend" already) twice --
    once as its own entry, once inside "backend"."""
    overlapped = parts.get("overlapped", 0.0)
    return sum(parts.values()) - 2 * overlapped


@attrs.define(eq=False)
class Question:
    """One subject on its way through the `Checker`'s pipeline (working state, filled in
    step by step; its `Outcome` is the record): what lazyloop expects, the model handed on,
    the backend's answer (or error) when it came at once, and the outcome when it was
    settled without the backend (`remembered`: the memo has it, or will when the question
    before it is concluded)."""

    subject: Subject
    key: str
    remembered: bool = False
    outcome: Optional[Outcome] = None
    expected: object = None
    defined: object = None
    rules: frozenset = frozenset()
    model: object = None
    answer: object = None
    seconds: float = 0.0  # how long the answer took (`Isolated.answer_seconds`, or the run)
    parts: dict = attrs.Factory(dict)  # what the step being timed measured apart


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
