"""Writing a disagreement to disk as an ONNX backend-test case folder (model, input and
expected output protobufs, and a README saying what differs)."""
from __future__ import annotations

import os

import numpy as np

from .backends import _onnx_bytes
from .report import EVERY_PROGRAM_RULES, Disagreement
from .repro import spec_text, versions, write_repro


def write_case(directory: str, name: str, d: Disagreement, report=None) -> str:
    """One disagreement as an ONNX backend-test case: <name>/model.onnx (or model.xml/.bin
    for OpenVINO models), test_data_set_0/input_N.pb and output_N.pb (lazyloop's expected
    values; undefined positions hold lazyloop's fill and are listed in README.md), and a
    README.md saying what differs; with the campaign's `report`, also repro.py (repro.py)
    and the facts an upstream issue needs."""
    from onnx import numpy_helper
    case = os.path.join(directory, name)
    data = os.path.join(case, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    fmt = d.subject.format if d.subject else "onnx"
    if fmt == "onnx":
        with open(os.path.join(case, "model.onnx"), "wb") as f:
            f.write(_onnx_bytes(d.model))
        input_names = [i.name for i in d.model.graph.input]
        output_names = [o.name for o in d.model.graph.output]
    else:
        import openvino as ov
        ov.save_model(d.model, os.path.join(case, "model.xml"), compress_to_fp16=False)
        input_names = [p.get_friendly_name() for p in d.model.get_parameters()]
        output_names = list(d.expected)
    for k, name_ in enumerate(n for n in input_names if n in d.feeds):
        _write_tensor(os.path.join(data, f"input_{k}.pb"), d.feeds[name_], name_, numpy_helper)
    for k, name_ in enumerate(n for n in output_names if n in d.expected):
        _write_tensor(os.path.join(data, f"output_{k}.pb"), d.expected[name_], name_,
                      numpy_helper)
    with open(os.path.join(case, "README.md"), "w", encoding="utf-8") as f:
        f.write(case_readme(name, d))
        if report is not None:
            f.write(upstream_section(report, d))
    if report is not None:
        write_repro(case, report.backend, d)
    return case


def upstream_section(report, d: Disagreement) -> str:
    """Backend and versions, seed, root cause, rules with their spec text, how to rerun."""
    lines = ["## For an upstream issue", "",
             f"- backend: `{report.backend}`; versions: " + ", ".join(
                 f"{k} {v}" for k, v in versions(report.backend).items()),
             f"- found by `lazyloop check --backend {report.backend} --seed {report.seed}` "
             f"(program {d.found_after})",
             f"- root cause key: `{d.root_cause!r}`",
             "- reproduce without lazyloop: `python repro.py` (numpy, onnx and the backend's "
             "package)", ""]
    for rule in sorted(r for r in d.rules if r not in EVERY_PROGRAM_RULES):
        text = spec_text(rule)
        if text:
            lines += [f"From lazyloop's specification (spec/):", "", text, ""]
    return "\n".join(lines) + "\n"


def _write_tensor(path, value, name, numpy_helper):
    with open(path, "wb") as f:
        f.write(numpy_helper.from_array(np.asarray(value), name).SerializeToString())


def case_readme(name: str, d: Disagreement) -> str:
    lines = [f"# {name}", "",
             f"Found by `lazyloop check` (signature {d.signature!r}; {d.occurrences} "
             f"disagreeing example(s), first after {d.found_after} programs; "
             f"{'shrunk' if d.shrunk else 'not shrunk'}).", "",
             "## What differs", ""]
    for x in d.differences:
        lines.append(f"- `{x.output}`: {x.kind}: {x.detail}")
    if d.error:
        lines += ["", "The backend failed while running the model:", "", "```",
                  d.error.strip()[:2000], "```"]
    lines += ["", f"Ambiguity: {d.ambiguity or 'none registered explains it'}", "",
              f"Rules exercised: {', '.join(f'`{r}`' for r in sorted(d.rules))}", "",
              "## Expected (lazyloop)", ""]
    for k, v in d.expected.items():
        mask = np.asarray(d.defined.get(k, True), bool)
        note = "" if mask.all() else \
            f" ({int(mask.size - mask.sum())} undefined positions: any value is right there)"
        lines.append(f"- `{k}`{note}: `{np.asarray(v).tolist()!r}`"[:1500])
    if d.actual is not None:
        lines += ["", "## Actual (backend)", ""]
        for k, v in d.actual.items():
            lines.append(f"- `{k}`: `{np.asarray(v).tolist()!r}`"[:1500])
    lines += ["", "## The program", "", "```", repr(d.subject)[:6000], "```", ""]
    return "\n".join(lines)
