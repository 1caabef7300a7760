"""Checking programs against a backend: the `Checker` for one subject -- the fast mode's
expectation, the backend's answer, a disagreement confirmed by the reference evaluator, and
the search for a register ambiguity that explains it. The whole campaign is
`check_campaign.check`."""
from __future__ import annotations

import time
from typing import Dict

from ..core.errors import EvaluationError, FuelExhausted, LazyLoopError
from ..core.fuel import ATTRIBUTION_MAX_TRIPS
from .backends import Unsupported, _frontend
from .comparing import Difference, compare, plain
from .isolation import BackendCrashed
from .report import Outcome
from .subject import Invalid, ModesDisagree, NotExported, Refused, Subject


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
            return confirmed(subject, Outcome(
                "disagree", differences=(Difference("*", "error", f"{type(exc).__name__}"),),
                error=f"{type(exc).__name__}: {exc}"))
        self.answered(started)
        diffs = compare(expected, defined, actual, *self.tolerance)
        if not diffs:
            return Outcome("agree", rules=rules)
        return confirmed(subject, Outcome("disagree", differences=tuple(diffs),
                                          actual={k: plain(v) for k, v in actual.items()}))

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
            frontend.run(model, subject.feeds, max_trips=ATTRIBUTION_MAX_TRIPS)
        except Exception:
            return
        from .overflowing import worth_trying
        for amb_id, reading in alternative_readings(subject.format):
            if actual is None and reading not in REFUSING_READINGS | {"no-limit", "infinite"}:
                continue
            if not worth_trying(amb_id, subject.format, model):
                continue  # A30: no integer arithmetic for `saturate` to change
            try:
                r = frontend.run(model, subject.feeds, max_trips=ATTRIBUTION_MAX_TRIPS,
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
    return out


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
