"""Explaining a finding by the ambiguity register, by meaning (spec/51-difftest.md,
"Explanations").

A registered ambiguity explains a finding when the backend's answer is the answer of another
reading of it *on this model*: lazyloop evaluates the model under each non-default reading
and compares what comes out with what the backend did, whatever the model looks like (a
condition that folds to false is as false as a literal one; a reading that changes values is
tried on values, not only on errors):

- the backend returned values: the reading's outputs equal them (`compare`, undefined
  positions ignored), and the reading defines something of every output the backend got
  wrong (a reading that leaves such an output wholly undefined would agree with anything);
- the backend hung or ran out of memory: lazyloop never ends under the reading either (its
  fuel runs out);
- the backend failed: the reading refuses the model too (a `LazyLoopError`), and the model is
  outside the default reading's domain -- the default leaves some output position undefined,
  so it states no answer the backend could have given. Where the default answers every
  position, a backend that fails has a fault, whatever another reading refuses.

A crash is a fault under any reading. The reading that matched is recorded as
`AMBIGUITY=reading` (`out.reading`), its ambiguity in `out.ambiguity`, and whether it matched
by refusing (`out.refusal`): such a match says where the backend failed, not what it
computed, so shrinking does not hold a candidate to it (shrinking.py).
"""
from __future__ import annotations

import numpy as np

from ..core.errors import FuelExhausted, LazyLoopError
from ..core.fuel import ATTRIBUTION_MAX_TRIPS
from .backends import _frontend
from .comparing import compare

FUEL = ATTRIBUTION_MAX_TRIPS  # trips per loop run while trying readings


def explain(subject, out, actual, tolerance=(None, None)) -> None:
    """Set `out.ambiguity` and `out.reading` to the first reading whose computed answer on
    `subject` is the backend's (see the module docstring); leave them None otherwise."""
    if subject.format == "core" or "process died" in (out.error or ""):
        return  # a core program has no dialect readings; a crash is a fault under any
    try:
        model = subject.model()
        frontend = _frontend(subject.format)
        lowered = frontend.lower(model)
        default = frontend.run(lowered, subject.feeds, max_trips=FUEL)
    except Exception:  # noqa: BLE001 -- only what lazyloop evaluates can be read otherwise
        return
    from .overflowing import worth_trying
    for amb_id, reading in alternative_readings(subject.format):
        if not worth_trying(amb_id, subject.format, model):
            continue  # A30: no integer arithmetic for `saturate` to change
        answer = reading_answer(frontend, lowered_alike(lowered, amb_id) or model,
                                subject.feeds, amb_id, reading)
        if matches(answer, default, out, actual, tolerance):
            out.ambiguity, out.reading = amb_id, f"{amb_id}={reading}"
            out.refusal = answer[0] == "refuses"
            return


def lowered_alike(lowered, amb_id: str):
    """The default lowering `lowered` where a reading of `amb_id` lowers the model to the
    same network (its lowering never asked about `amb_id`), else None: the reading is then
    only the evaluation's, and the model need not be lowered again."""
    asked = getattr(lowered, "asked", None)
    return lowered if asked is not None and amb_id not in asked else None


def reading_answer(frontend, model, feeds, amb_id: str, reading: str):
    """What lazyloop answers under one reading: ("values", run), ("never-ends", None),
    ("refuses", error) or ("fails", error) for an error that is not lazyloop's answer.
    `model` may be a lowering the reading does not change (`lowered_alike`)."""
    try:
        return "values", frontend.run(model, feeds, max_trips=FUEL, readings={amb_id: reading})
    except FuelExhausted as exc:
        return "never-ends", exc
    except LazyLoopError as exc:
        return "refuses", exc
    except Exception as exc:  # noqa: BLE001
        return "fails", exc


def matches(answer, default, out, actual, tolerance) -> bool:
    """Whether a reading's answer is what the backend did (module docstring)."""
    kind, result = answer
    error = out.error or ""
    if actual is not None:
        return kind == "values" and not compare(result.outputs, result.defined, actual,
                                                *tolerance) \
            and defines_what_differs(result, out)
    if "no answer within" in error or "memory limit" in error or "MemoryError" in error:
        return kind == "never-ends"
    return kind == "refuses" and not wholly_defined(default.defined)


def defines_what_differs(result, out) -> bool:
    """The reading defines at least one position of every output the backend got wrong (or
    the output is empty: its shape is all there is to state)."""
    wrong = {d.output.split("[")[0] for d in out.differences}
    return all(np.size(result.outputs[name]) == 0 or np.any(result.defined[name])
               for name in wrong if name in result.defined and name in result.outputs)


def wholly_defined(defined: dict) -> bool:
    """Every position of every output defined (sequences and optionals count as defined)."""
    return all(np.all(m) for m in defined.values() if not isinstance(m, list))


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
