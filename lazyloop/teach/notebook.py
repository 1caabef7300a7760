"""Helpers that notebook cells call directly: ambiguity register entries, spec sections by
rule id, and the checking of exercise answers."""
from __future__ import annotations

import numpy as np

from .text import _wrap

def _registers():
    """Every ambiguity register lazyloop knows: the core's and the frontends' (if loaded)."""
    import importlib
    from ..core.ambiguity import REGISTER
    found = dict(REGISTER)
    for module in ("lazyloop.openvino.register", "lazyloop.onnx.register",
                   "lazyloop.onnx.lowering"):
        try:
            mod = importlib.import_module(module)
        except Exception:  # a frontend that is absent or not installed
            continue
        for name in dir(mod):
            table = getattr(mod, name)
            if name.endswith("REGISTER") and isinstance(table, dict):
                found.update({k: v for k, v in table.items() if k not in found})
    return found


def show_ambiguity(*ids):
    """Print register entries: the rule, the question, each reading (default marked *)."""
    table = _registers()
    for key in ids:
        entry = table.get(key)
        if entry is None:
            print(f"{key}: not in the register")
            continue
        print(f"{entry.id} [{entry.rule}] {entry.question}")
        for reading, source in entry.readings.items():
            mark = "*" if reading == entry.default else " "
            print(f"   {mark} {reading}: {_wrap(source, 90).replace(chr(10), chr(10) + ' ' * 8)}")


def rule_text(rule_id: str, spec_dir=None, max_lines: int = 40) -> str:
    """The section of the specification (spec/*.md of a source checkout) that defines
    `rule_id`: from its heading to the next heading of the same or a higher level."""
    import pathlib
    import re
    folder = pathlib.Path(spec_dir) if spec_dir else \
        pathlib.Path(__file__).resolve().parents[2] / "spec"
    pattern = re.compile(r"^(#+) .*`" + re.escape(rule_id) + r"`")
    for path in sorted(folder.glob("*.md")):
        if path.name == "ambiguities.md":
            continue
        lines = path.read_text().splitlines()
        for k, line in enumerate(lines):
            found = pattern.match(line)
            if found:
                level, body = len(found.group(1)), [line]
                for later in lines[k + 1:]:
                    head = re.match(r"^(#+) ", later)
                    if head and len(head.group(1)) <= level:
                        break
                    body.append(later)
                text = "\n".join(body).strip()
                cut = text.splitlines()
                if len(cut) > max_lines:
                    text = "\n".join(cut[:max_lines]) + "\n[...]"
                return f"{path.name}:\n{text}"
    return f"{rule_id}: no section in {folder} (the spec ships with a source checkout)"


class ExerciseNotAnswered(AssertionError):
    pass


def _matches(answer, expected, rtol, atol) -> bool:
    if isinstance(expected, (set, frozenset)):
        return isinstance(answer, (set, frozenset, list, tuple)) and set(answer) == set(expected)
    if isinstance(expected, dict):
        return (isinstance(answer, dict) and answer.keys() == expected.keys()
                and all(_matches(answer[k], expected[k], rtol, atol) for k in expected))
    if isinstance(expected, (list, tuple)) and any(
            isinstance(e, (list, tuple, dict, set, np.ndarray)) for e in expected):
        return (isinstance(answer, (list, tuple)) and len(answer) == len(expected)
                and all(_matches(a, e, rtol, atol) for a, e in zip(answer, expected)))
    if isinstance(expected, str) or isinstance(answer, str):
        return answer == expected
    try:
        a, e = np.asarray(answer), np.asarray(expected)
    except ValueError:  # a ragged answer cannot equal a regular expectation
        return False
    if a.dtype.kind in "biuf" and e.dtype.kind in "biuf":
        return a.shape == e.shape and bool(np.allclose(a, e, rtol=rtol, atol=atol,
                                                       equal_nan=True))
    ok = answer == expected
    return bool(np.all(ok)) if isinstance(ok, np.ndarray) else bool(ok)


def check(answer, expected, what: str = "answer", rtol: float = 1e-5, atol: float = 1e-6):
    """The check of an exercise: `answer` (what the reader filled in) against `expected`
    (computed independently of lazyloop: by hand, in plain Python or with numpy). Numbers
    are compared with a tolerance, sets as sets, containers element by element."""
    if answer is Ellipsis:
        raise ExerciseNotAnswered(f"{what}: replace the ... placeholder with your answer")
    if not _matches(answer, expected, rtol, atol):
        raise AssertionError(f"{what}: got {answer!r}, expected {expected!r}")
    print(f"correct: {what}")
