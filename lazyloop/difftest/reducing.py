"""A finding's minimal program reduced to a minimal *model* (minimize.py for ONNX,
minimize_ir.py for OpenVINO IR): the edited models are checked like any program, as subjects
of kind "reduced" whose program is a `ReducedModel`.
"""
from __future__ import annotations

import hashlib
from typing import Optional

import attrs
import numpy as np

from .minimize import node_count
from .subject import Subject
from .symptom import Symptom


@attrs.frozen(repr=False)
class ReducedModel:
    """A model edited below the program it came from: `recipe` is (format, the model's bytes —
    ONNX, or OpenVINO IR text and weights —, feeds as (name, value) pairs); it rebuilds the
    model anywhere, in an isolated backend's child process too."""

    recipe: tuple
    rules = frozenset()
    features = frozenset()

    @classmethod
    def of(cls, fmt: str, model, feeds: dict) -> "ReducedModel":
        """`model`: an ONNX ModelProto, an openvino.Model, or its IR (text, weights)."""
        payload = model if isinstance(model, tuple) else model_bytes(fmt, model)
        return cls((fmt, payload, tuple(sorted(feeds.items()))))

    @property
    def model(self):
        fmt, payload, _ = self.recipe
        if fmt == "onnx":
            import onnx
            return onnx.ModelProto.FromString(payload)
        from ..openvino.ir import read_ir
        return read_ir(*payload)

    @property
    def feeds(self) -> dict:
        return {k: np.array(v, copy=True) for k, v in self.recipe[2]}

    def __repr__(self):
        fmt, payload, feeds = self.recipe
        h = hashlib.sha1(repr((payload, [(k, np.asarray(v).tobytes(), np.shape(v))
                                         for k, v in feeds])).encode()).hexdigest()[:12]
        return f"ReducedModel({fmt!r}, sha1={h})"


def model_bytes(fmt: str, model):
    """An ONNX model's bytes, or an OpenVINO model's IR (text, weights)."""
    if fmt == "onnx":
        return model.SerializeToString()
    import os
    import tempfile

    import openvino as ov
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "model.xml")
        ov.save_model(model, path, compress_to_fp16=False)
        with open(path, "rb") as f, open(os.path.join(tmp, "model.bin"), "rb") as w:
            return f.read(), w.read()


@attrs.frozen
class Reduction:
    """What model-level minimisation did to a finding: the reduced subject and its outcome
    (None when nothing was kept), node counts before and after, and why it ended
    ("complete", "steps", "stopped" -- Ctrl-C or wall time --, "off" -- not tried --, or
    "unreadable": the model cannot be edited)."""

    subject: Optional[Subject]
    outcome: object
    nodes_before: int
    nodes_after: int
    ended: str


def reduce_finding(subject: Subject, out, checker, steps: int, stop=None,
                   hangs: int = 8) -> Reduction:
    """Reduce the model of a (program-level minimal) finding while the backend shows the same
    symptom (`out.symptom`), explained by the same reading (or none): at most `steps` new
    runs on the backend, `hangs` of them timed out, until `stop()`."""
    try:
        model, feeds = subject.model(), subject.feeds
        before = node_count(model)
    except Exception:  # noqa: BLE001 -- a model that cannot be built again: keep as is
        return Reduction(None, None, 0, 0, "unreadable")
    if steps <= 0 or out.symptom is None:
        return Reduction(None, None, before, before, "off")
    keeps, seen, hung = keeper(subject, out, checker)

    def stopped() -> bool:
        return hung[0] >= hangs or bool(stop and stop())

    if subject.format == "onnx":
        from .minimize import minimise
    else:  # an OpenVINO model is edited as IR, which its reader must read back
        from .minimize_ir import minimise, readable
        model = model_bytes(subject.format, model)
        if not readable(model):
            return Reduction(None, None, before, before, "unreadable")
    try:
        (model, feeds), ended = minimise((model, feeds), keeps, steps, stop=stopped)
    except Exception:  # noqa: BLE001 -- an edit the model's library rejects: keep the program
        return Reduction(None, None, before, before, "unreadable")
    if id(model) not in seen:  # nothing kept: the program's own model is minimal
        return Reduction(None, None, before, before, ended)
    reduced, result = seen[id(model)]
    return Reduction(reduced, result, before, node_count(reduced.model()), ended)


def keeper(subject: Subject, out, checker):
    """(keeps(case), the candidates seen by id of their model, [timed out]): `keeps` runs an
    edited case of `subject` on the backend and says whether it shows `out`'s symptom, with
    its answer computed by the same reading (explaining.py) or by none."""
    target, reading = out.symptom, checker.computed_reading(subject, out)
    seen, hung = {}, [0]

    def keeps(case) -> bool:
        candidate = Subject("reduced", subject.format, ReducedModel.of(subject.format, *case))
        result = checker.outcome(candidate)
        seen[id(case[0])] = (candidate, result)
        hung[0] += "no answer within" in (result.error or "")
        return shows(result, target) and checker.computed_reading(candidate, result) == reading
    return keeps, seen, hung


def one_minimal_violations(subject: Subject, checker) -> list:
    """The nodes of a case (a subject whose model shows a finding on the checker's backend)
    whose removal keeps it valid and its symptom (minimize.py, minimize_ir.py): empty when
    the case is 1-minimal. A case that shows no finding raises ValueError."""
    out = checker.outcome(subject)
    if out.status != "disagree":
        raise ValueError(f"the case shows no finding ({out.status}: {out.error})")
    keeps = keeper(subject, out, checker)[0]
    if subject.format == "onnx":
        from .minimize import one_minimal_violations as violations
        return violations((subject.model(), subject.feeds), keeps)
    from .minimize_ir import one_minimal_violations as violations
    return violations((model_bytes(subject.format, subject.model()), subject.feeds), keeps)


def shows(out, symptom: Symptom) -> bool:
    return out is not None and out.status == "disagree" and out.symptom == symptom
