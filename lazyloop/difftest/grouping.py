"""Grouping disagreements by root cause.

The *signature* of a disagreement (subject kind, first kind of difference or normalised
error) decides which programs are shrunk together. After shrinking, the *root-cause key* of
the minimal program decides which disagreements are one fault:

    (format, loop constructs, control rules, what went wrong)

- format: the model format ("onnx", "openvino", "core");
- loop constructs: the op types of the loop constructs in the minimal model (Loop, Scan, If,
  TensorIterator), sorted;
- control rules: the rules of the minimal program that say how many trips run and what each
  trip reads (`trip/*`, `iterator/*`, `structure/nesting`, the dialect rules `onnx/*`,
  `openvino/*`); output kinds and the stream basics are left out: they say how a fault
  shows, not what it is;
- what went wrong: "wrong-result" for any dtype, shape or value difference (a loop that runs
  one trip too many shows as a longer concatenation in one program and as another last value
  in the next), "missing-output", or the backend's normalised error (its class and message
  without names and numbers; a crash with its signal, a hang, an out-of-memory kill).
"""
from __future__ import annotations

from .errorkey import _error_key

LOOP_OPS = ("Loop", "Scan", "If", "TensorIterator")
CONTROL_PREFIXES = ("trip/", "iterator/", "onnx/", "openvino/")
CONTROL_RULES = frozenset({"structure/nesting"})


def root_cause(subject, out) -> tuple:
    """The root-cause key of a (minimal) disagreeing subject; see the module docstring."""
    rules = tuple(sorted(r for r in out.rules
                         if r.startswith(CONTROL_PREFIXES) or r in CONTROL_RULES))
    return (subject.format, loop_ops(subject), rules, what_went_wrong(out))


def key_text(key: tuple) -> str:
    """A root-cause key as one line, the form the JSON report and baselines carry:
    ``format | loop constructs | control rules | what went wrong``."""
    fmt, ops, rules, what = key
    return " | ".join((fmt, "+".join(ops) or "-", ",".join(rules) or "-", what))


def what_went_wrong(out) -> str:
    kinds = {d.kind for d in out.differences}
    if "error" in kinds:
        return "error:" + _error_key(out.error or "")
    if "missing-output" in kinds:
        return "missing-output"
    return "wrong-result"


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
        found = {op.get_type_name() for op in model.get_ordered_ops()}
    return tuple(sorted(found & set(LOOP_OPS)))


def _onnx_ops(graph, found: set) -> None:
    for node in graph.node:
        found.add(node.op_type)
        for a in node.attribute:
            if a.HasField("g"):
                _onnx_ops(a.g, found)
            for g in a.graphs:
                _onnx_ops(g, found)


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
