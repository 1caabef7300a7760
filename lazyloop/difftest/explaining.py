"""Explaining a finding by the ambiguity register: lazyloop evaluated under another reading
of a registered ambiguity gives the backend's answer."""
from __future__ import annotations

from ..core.errors import EvaluationError, FuelExhausted
from .backends import _frontend
from .comparing import compare


def explain(subject, out, actual, tolerance=(None, None)) -> None:
    """Which registered ambiguity, read otherwise, makes lazyloop agree with the backend: set
    as `out.ambiguity`."""
    if subject.format == "core":
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
                                              *tolerance):
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


