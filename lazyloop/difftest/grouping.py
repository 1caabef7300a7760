"""Grouping findings: one fault, one group (spec/51-difftest.md, "Grouping findings").

Exploring keeps the first instance of each *signature* (program kind, symptom); each is shrunk
keeping its symptom, possibly into a program of another kind (shrinking.py), and its model is
reduced (reducing.py). The minimal cases are then grouped by their *root-cause key*:

    (format, loop constructs, symptom, skeleton of the minimal model)

- format: the model format ("onnx", "openvino", "core");
- loop constructs: the op types of the loop constructs in the minimal model (Loop, Scan, If,
  TensorIterator), sorted, for the reader (the skeleton holds them too); for an op fault
  (op_faults.py: a body op that disagrees alone, outside any loop) `op:TYPE`, the case
  being the op alone;
- symptom: what the backend showed, names and numbers left out (symptom.py);
- the minimal model compared up to names and constants (skeleton.py, a short hash).

Two findings with one key are one fault met twice: the same symptom on the same minimal case.
The key depends on neither the seed nor the program that first met the fault, so a baseline
taken with one seed knows the fault when another seed finds it.
"""
from __future__ import annotations

from .skeleton import bodies, digest

LOOP_OPS = ("Loop", "Scan", "If", "TensorIterator")


def root_cause(subject, out, op=None) -> tuple:
    """The root-cause key of a minimal case; see the module docstring. An op fault's case is
    the op alone (op_faults.py): its constructs part names the op (`op:Mod`)."""
    try:
        case = digest(subject.model())
    except Exception:  # noqa: BLE001 -- a model that cannot be built again
        case = "?"
    constructs = (f"op:{op}",) if op else loop_ops(subject)
    return (subject.format, constructs, str(out.symptom), case)


def key_text(key: tuple) -> str:
    """A root-cause key as one line, the form the JSON report and baselines carry:
    ``format | loop constructs | symptom | case DIGEST``."""
    fmt, ops, symptom, case = key
    return " | ".join((fmt, "+".join(ops) or "-", symptom, f"case {case}"))


def loop_ops(subject) -> tuple:
    """The loop-construct op types of a subject's model, sorted ("core" programs: none)."""
    try:
        model = subject.model()
    except Exception:  # pragma: no cover
        return ()
    found = set()
    if hasattr(model, "graph"):
        _onnx_ops(model.graph, found)
    elif hasattr(model, "get_ordered_ops"):
        _openvino_ops(model, found)
    return tuple(sorted(found & set(LOOP_OPS)))


def _onnx_ops(graph, found: set) -> None:
    for node in graph.node:
        found.add(node.op_type)
        for a in node.attribute:
            if a.HasField("g"):
                _onnx_ops(a.g, found)
            for g in a.graphs:
                _onnx_ops(g, found)


def _openvino_ops(model, found: set) -> None:
    for op in model.get_ordered_ops():
        found.add(op.get_type_name())
        for body in bodies(op):
            _openvino_ops(body, found)


def merge_by_root_cause(disagreements: list) -> list:
    """One disagreement per root-cause key: the one found first, with the occurrences of all
    and the signatures it was also met as."""
    by_key: dict = {}
    for d in sorted(disagreements, key=lambda d: d.found_after):
        kept = by_key.get(d.root_cause)
        if kept is None:
            by_key[d.root_cause] = d
            continue
        kept.occurrences += d.occurrences
        kept.also_seen_as = kept.also_seen_as + (d.signature,)
    return list(by_key.values())
