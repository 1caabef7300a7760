"""What a backend's failures mean to the tester: the exceptions an adapter raises -- a
refusal (`Unsupported`), a failure to load a valid model (`LoadFailed`), an input the engine
lost (`InputLost`), lazyloop's own adapter failing (`HarnessError`) -- and how a built-in
adapter tells them apart (spec/51-difftest.md, "The pipeline", "The harness")."""
from __future__ import annotations

import contextlib
import re


class Unsupported(Exception):
    """Raised by a backend's `run` when it refuses to load or compile a model."""


class LoadFailed(Exception):
    """A backend failed while loading or compiling a model without saying it does not
    support something in it: for a valid model, a finding (not a refusal)."""


class InputLost(LoadFailed):
    """The engine's compiled model lacks, or renames, an input the model declares ("the
    engine lost input `v0`"): the engine's fault and a finding of its own kind, never a
    value difference computed from an input that was not fed (spec/51, "The harness")."""


class HarnessError(Exception):
    """lazyloop's own adapter for an engine failed (not the engine): reported apart from the
    findings, as lazyloop's fault."""


@contextlib.contextmanager
def adapter_step(what: str):
    """A step of a built-in adapter that is lazyloop's own code, not the engine's: whatever
    fails in it (but a lost input) is a `HarnessError`."""
    try:
        yield
    except (InputLost, HarnessError, Unsupported):
        raise
    except Exception as exc:
        raise HarnessError(f"lazyloop's adapter failed while {what}: "
                           f"{type(exc).__name__}: {exc}") from exc


# what a backend says when it refuses an op, a type or an attribute it does not implement
_REFUSAL = re.compile(r"not ?implemented|unimplemented|not (yet )?supported|unsupported|"
                      r"no (kernel|implementation)|could not find an implementation|"
                      r"does not support|doesn't support|cannot (create|find) (a )?(kernel|"
                      r"node|operator)|unknown (op|operator)|not registered|is not a registered",
                      re.IGNORECASE)


def says_unsupported(exc: BaseException) -> bool:
    """Whether a load/compile error is the backend refusing something it does not support
    (then the program counts as *unsupported*) rather than an internal error, an assertion
    or a crash (then it is a finding)."""
    return (isinstance(exc, NotImplementedError) or type(exc).__name__ == "NotImplemented"
            or bool(_REFUSAL.search(f"{type(exc).__name__}: {exc}")))


@contextlib.contextmanager
def refusals_while_running():
    """A built-in backend that says, while running, that it does not implement something
    (onnx's ReferenceEvaluator: "Scan is not implemented for ...") refuses the model."""
    try:
        yield
    except Exception as exc:
        if says_unsupported(exc):
            raise Unsupported(f"{type(exc).__name__}: {exc}") from None
        raise


def refusal_or_failure(exc: BaseException) -> Exception:
    """The exception a backend's load step raises for `exc`: Unsupported or LoadFailed."""
    text = f"{type(exc).__name__}: {exc}"
    return Unsupported(text) if says_unsupported(exc) else LoadFailed(text)
