"""What a finding shows: its *symptom*, with the names and numbers of the program that met it
left out (spec/51-difftest.md, "Symptoms").

A backend that failed shows its error: the exception's class and message, normalised so that
one fault met in two programs gives one text (node and tensor names, file positions, line
numbers, addresses and numbers dropped; the part that tells faults apart kept: an OpenVINO
`Check '...' failed at FILE` keeps its condition and file, an onnxruntime error its status
message, a Python kernel its operator). A crash shows its signal, a hang and an out-of-memory
end show as such, and an engine whose compiled model lost a declared input shows
`lost-input`. A backend that answered shows the most telling kind of value difference among
its outputs (`VALUE_KINDS`, most telling first); wrong values say what they have in common:
all zeros, all at their dtype's bounds (saturation, overflow to infinity), all NaN.

Shrinking keeps a finding's symptom exactly: a candidate program counts only when it shows
the same one, whatever kind of program it is.
"""
from __future__ import annotations

import re

import attrs
import numpy as np

# kinds of value difference, the most telling first: a finding whose outputs differ in several
# ways shows the first of them
VALUE_KINDS = ("missing-output", "type", "presence", "length", "dtype", "rank", "rows",
               "shape", "offset", "values")


@attrs.frozen
class Symptom:
    """`kind` (error, crash, hang, oom, lost-input, or a value kind of `VALUE_KINDS`) and a
    `detail` that tells symptoms of one kind apart (a normalised error, a signal, ...)."""

    kind: str
    detail: str = ""

    def __str__(self):
        return f"{self.kind}: {self.detail}" if self.detail else self.kind

    @property
    def is_error(self) -> bool:
        return self.kind not in VALUE_KINDS


def error_symptom(error: str) -> Symptom:
    """The symptom of a backend that failed with `error` ("Type: message", as the tester
    records it)."""
    text = error or ""
    crash = re.search(r"process died \((?:signal )?([^)]*)\)", text)
    if crash:
        return Symptom("crash", crash.group(1))
    if "no answer within" in text:
        return Symptom("hang")
    if ("MemoryError" in text or "memory limit" in text or "bad_alloc" in text
            or "out of memory" in text.lower()):
        return Symptom("oom")
    if text.startswith("InputLost"):
        return Symptom("lost-input")
    return Symptom("error", normalised_error(text))


def normalised_error(message: str, limit: int = 300) -> str:
    """An error message without what belongs to one program (see the module docstring)."""
    text = " ".join(message.strip().split())
    head = text.split(":")[0]
    if "Status Message:" in text:  # onnxruntime: the reason follows the node's name
        text = head + ": " + text.split("Status Message:", 1)[1]
    text = text.split("Stack backtrace:")[0]
    # OpenVINO: a chain of "Exception from FILE:LINE:" wrappers before the reason
    text = re.sub(r"Exception from \S+:\d+:\s*", "", text)
    text = re.sub(r"(\w)'(t\b|s\b)", r"\1’\2", text)  # "wasn't" is no quote
    checks = re.findall(r"Check '([^']*)' failed", text)  # conditions tell faults apart
    text = re.sub(r"Check '[^']*' failed", "Check ⟨condition⟩ failed", text)
    text = re.sub(r"operator '+(\w+)'+", r"operator ⟨\1⟩", text)  # op types, not names
    text = re.sub(r"'?<Node\((\w+)\)[^>]*>'?", r"⟨\1⟩", text)
    text = re.sub(r"(opset\d+::\w+) [\w./-]+", r"\1", text)  # a node's type, not its name
    text = re.sub(r"(\w+)\.(cc|cpp|hpp|h|c|py|rs):\d+", r"\1.\2", text)  # no line numbers
    text = re.sub(r"/?(?:[\w.-]+/)+(\w+\.(?:cc|cpp|hpp|h|c|py|rs))", r"\1", text)  # no folders
    text = re.sub(r"0x[0-9a-fA-F]+", "0x#", text)
    text = re.sub(r"'[^']*'|\"[^\"]*\"|`[^`]*`", "'…'", text)  # `x:0` too
    text = _without_node_reprs(text)  # lazyloop's "stream 'id' (element_type(Loop(x)/...))"
    text = re.sub(r"\[[^\]]*\]", "[…]", text)  # lists of types, shapes, attributes
    text = re.sub(r"\b(?:u?int|float|bfloat)\d+\[…\]", "T[…]", text)  # a value's type, not it
    text = re.sub(r"\b(in (body of|graph) [^:]*?)(?=:)", "", text)
    text = re.sub(r"\b(Node|node|Parameter|Result|Constant|layer|stream|tensor|name)\s+"
                  r"(?!of\b|with\b|has\b|is\b|type\b)[\w./:-]*\d[\w./:-]*", r"\1", text)
    text = re.sub(r"\bNode \S+ of type", "Node of type", text)
    text = re.sub(r"(Name|node|layer|stream|tensor)\s*:?\s*'…'", r"\1", text)
    text = re.sub(r"\d+", "#", text)
    text = re.sub(r"\((?:#|,|\s)*\)", "(…)", text)  # shapes and tuples of numbers
    for condition in checks:
        text = text.replace("⟨condition⟩", "'" + re.sub(r"\d+", "#", condition) + "'", 1)
    text = re.sub(r"⟨(\w+)⟩", r"'\1'", text)
    return " ".join(text.split())[:limit]


def _without_node_reprs(text: str) -> str:
    """`text` without the parenthesised node that follows a quoted name (lazyloop's own
    messages name a stream by its id, then its node: both belong to the program)."""
    out, k = [], 0
    for m in re.finditer(r"'…'\s*\(", text):
        if m.start() < k:
            continue
        depth, j = 0, m.end() - 1
        while j < len(text):
            depth += {"(": 1, ")": -1}.get(text[j], 0)
            if depth == 0:
                break
            j += 1
        out.append(text[k:m.start()] + "'…'")
        k = j + 1
    return "".join(out) + text[k:]


def value_symptom(expected: dict, defined: dict, actual: dict) -> Symptom:
    """The most telling kind of difference between lazyloop's outputs and a backend's (kinds
    in `VALUE_KINDS`); "values" when nothing more telling applies."""
    kinds = set()
    for name, want in expected.items():
        if name not in actual:
            kinds.add("missing-output")
            continue
        kinds |= output_kinds(want, defined.get(name, True), actual[name])
    kind = min(kinds, key=VALUE_KINDS.index) if kinds else "values"
    return Symptom(kind, wrong_values(expected, defined, actual) if kind == "values" else "")


def wrong_values(expected: dict, defined: dict, actual: dict) -> str:
    """What the wrong values of same-shaped tensor outputs have in common: "zeros" (all 0),
    "bounds" (all at their dtype's least or greatest value, or infinite), "nan"; else ''."""
    got = []
    for name, want in expected.items():
        g = actual.get(name)
        if isinstance(want, list) or want is None or g is None or isinstance(g, (list, tuple)):
            continue
        want, g = np.asarray(want), np.asarray(g)
        if g.dtype != want.dtype or g.shape != want.shape:
            continue
        mask = np.broadcast_to(np.asarray(defined.get(name, True), bool), want.shape)
        differs = mask & ~_agree(want, g)
        got.append((g[differs], g.dtype))
    values = [v for v, _ in got if v.size]
    if not values:
        return ""
    if all(np.all(v == 0) for v in values):
        return "zeros"
    if all(np.all(np.isnan(v)) for v, d in got if v.size and d.kind in "fc") and \
            all(d.kind in "fc" for v, d in got if v.size):
        return "nan"
    if all(np.all(np.isin(v, _bounds(d))) for v, d in got if v.size):
        return "bounds"
    return ""


def _agree(want, got):
    if want.dtype.kind in "fc":
        from .comparing import tolerance
        rtol, atol = tolerance(want.dtype)
        return np.isclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
    return got == want


def _bounds(dtype) -> list:
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return [info.min, info.max]
    if dtype.kind in "fc":
        return [np.inf, -np.inf]
    return []


def output_kinds(want, mask, got) -> set:
    """How one output differs (empty when it does not): a sequence by its length and then
    its elements, an optional by presence (rule `onnx/sequences`), a tensor by dtype, rank,
    rows (only the leading dimension differs), shape, a constant offset or values."""
    if isinstance(want, list):
        if not isinstance(got, (list, tuple)):
            return {"type"}
        if len(got) != len(want):
            return {"length"}
        masks = mask if isinstance(mask, list) else [True] * len(want)
        return set().union(*(output_kinds(w, m, g) for w, m, g in zip(want, masks, got)))
    if want is None or got is None:
        return set() if (want is None) == (got is None) else {"presence"}
    if isinstance(got, (list, tuple)):
        return {"type"}
    return tensor_kinds(np.asarray(want), mask, np.asarray(got))


def tensor_kinds(want, mask, got) -> set:
    if got.dtype != want.dtype:
        return {"dtype"}
    if got.ndim != want.ndim:
        return {"rank"}
    if got.shape != want.shape:
        return {"rows"} if got.shape[1:] == want.shape[1:] else {"shape"}
    mask = np.broadcast_to(np.asarray(mask, dtype=bool), want.shape)
    w, g = want[mask], got[mask]
    if want.dtype.kind in "fc":
        from .comparing import tolerance
        rtol, atol = tolerance(want.dtype)
        same = np.isclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
    else:
        same = g == w
    if np.all(same):
        return set()
    return {"offset"} if constant_offset(w, g) else {"values"}


def constant_offset(want, got) -> bool:
    """Every defined position differs by one and the same nonzero amount (integers in their
    own dtype, so that wrap-around stays one offset; floats to their tolerance)."""
    if want.size == 0 or want.dtype == np.bool_ or want.dtype.kind not in "iufc":
        return False
    with np.errstate(over="ignore", invalid="ignore"):
        diff = (got - want).reshape(-1)
    if want.dtype.kind in "fc":
        from .comparing import tolerance
        if not np.all(np.isfinite(diff)):
            return False
        rtol, atol = tolerance(want.dtype)
        return bool(np.allclose(diff, diff[0], rtol=rtol, atol=atol) and
                    not np.isclose(diff[0], 0, atol=atol))
    return bool(np.all(diff == diff[0]) and diff[0] != 0)

