"""The passes both model minimisers run (minimize.py for ONNX, minimize_ir.py for OpenVINO
IR): every edit in turn, kept when the edited case is valid and still shows the finding,
pass after pass until a pass keeps none (spec/51-difftest.md, "Minimal cases")."""
from __future__ import annotations


def passes(case, keeps, edits_of, valid, steps: int, stop=None):
    """Try every edit of `edits_of(model)` in turn, keeping each that leaves the case valid
    and `keeps` it, pass after pass until a pass keeps none (or `steps` calls of `keeps`, or
    `stop()`): (the case reached, "complete" | "steps" | "stopped")."""
    current = case
    spent = 0
    changed = True
    while changed:
        changed = False
        for _, edit in edits_of(current[0]):
            candidate = edit(current)
            if candidate is None or not valid(candidate[0]):
                continue
            if spent >= steps:
                return current, "steps"
            if stop is not None and stop():
                return current, "stopped"
            spent += 1
            if keeps(candidate):
                current, changed = candidate, True
    return current, "complete"
