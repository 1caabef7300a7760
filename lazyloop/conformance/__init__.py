"""The conformance suite: the hand-written cases of `lazyloop.conformance.cases`, exported in
the ONNX backend-test layout or run against a backend.

    lazyloop conformance export DIR            # DIR/<case>/model.onnx + test_data_set_0/...
    lazyloop conformance run --backend NAME    # a pass/fail/ambiguous/unsupported table

A case *passes* when the backend's outputs have the expected dtypes and shapes and the hand-
written values wherever they are defined (tolerances of `lazyloop.difftest.compare`). A case
that differs and lists ambiguity IDs is *ambiguous* (the backend read the source another way);
one that differs without is a *failure*; a model the backend refuses to load or compile, or
that cannot be written in the backend's format, is *unsupported*.
"""
from __future__ import annotations

import os
from typing import List, Optional

import attrs
import numpy as np

from .cases import CASES, Case


@attrs.frozen
class Result:
    case: str
    status: str           # pass, fail, ambiguous, unsupported
    detail: str = ""
    rules: tuple = ()
    ambiguities: tuple = ()


def case_model(case: Case, fmt: str):
    """The case as a model in `fmt` ("onnx", "openvino" or "core")."""
    if case.format == "core":
        if fmt == "core":  # the case itself: its builder replays onto any TensorRT-style API
            return case
        net = case.network()
        if fmt == "onnx":
            from ..onnx.export import export
            return export(net)
        from ..openvino.export import export
        return export(net)
    if case.format != fmt:
        from ..difftest.backends import a_model
        raise ValueError(f"case {case.name!r} is {a_model(case.format)}")
    return case.model()


def formats_for(case: Case, backend_formats) -> list:
    if case.format == "core":
        return list(backend_formats)
    return [case.format] if case.format in backend_formats else []


def run_case(case: Case, b, fmt: Optional[str] = None) -> Result:
    from ..difftest import Unsupported, compare, formats_of
    from ..difftest.backends import a_model
    from ..core.errors import LazyLoopError
    formats = formats_for(case, formats_of(b))
    if fmt is not None:
        formats = [f for f in formats if f == fmt]
    if not formats:
        return Result(case.name, "unsupported", f"not applicable: {a_model(case.format)}; "
                      f"the backend takes {', '.join(formats_of(b))}", case.rules,
                      case.ambiguities)
    fmt = formats[0]
    try:
        model = case_model(case, fmt)
    except LazyLoopError as exc:  # not exportable, or the target library refused to build it
        return Result(case.name, "unsupported", str(exc), case.rules, case.ambiguities)
    try:
        actual = b.run(model, dict(case.inputs))
    except Unsupported as exc:
        return Result(case.name, "unsupported", f"refused: {str(exc).strip()[:300]}",
                      case.rules, case.ambiguities)
    except Exception as exc:  # a failure while running (BackendCrashed too)
        status = "ambiguous" if case.ambiguities else "fail"
        return Result(case.name, status, f"{type(exc).__name__}: {str(exc).strip()[:300]}",
                      case.rules, case.ambiguities)
    arrays = case.expected_arrays()
    expected = {k: v for k, (v, _) in arrays.items()}
    defined = {k: m for k, (_, m) in arrays.items()}
    diffs = compare(expected, defined, actual)
    if not diffs:
        return Result(case.name, "pass", "", case.rules, case.ambiguities)
    status = "ambiguous" if case.ambiguities else "fail"
    return Result(case.name, status, "; ".join(f"{d.output}: {d.kind}: {d.detail}"
                                               for d in diffs)[:400],
                  case.rules, case.ambiguities)


def run_suite(b, names=None, fmt: Optional[str] = None) -> List[Result]:
    names = list(names or CASES)
    return [run_case(CASES[n], b, fmt) for n in names]


def table(results: List[Result], backend_name: str = "") -> str:
    width = max(len(r.case) for r in results) if results else 10
    lines = [f"conformance: {backend_name}", ""]
    for r in results:
        amb = f" [{', '.join(r.ambiguities)}]" if r.ambiguities and r.status != "pass" else ""
        text = " ".join(r.detail.split())
        detail = f"  {text[:140]}" if r.status != "pass" and text else ""
        lines.append(f"{r.case:<{width}}  {r.status:<11}{amb}{detail}")
    counts = {s: sum(1 for r in results if r.status == s)
              for s in ("pass", "fail", "ambiguous", "unsupported")}
    lines += ["", "  ".join(f"{k}: {v}" for k, v in counts.items()) + f"  (of {len(results)})"]
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------
# Export in the ONNX backend-test layout
# ------------------------------------------------------------------------------------------


def export_case(case: Case, directory: str) -> Optional[str]:
    """DIR/<case>/model.onnx, test_data_set_0/input_N.pb, output_N.pb (the hand-written
    outputs; undefined positions hold lazyloop's fill value) and defined_N.pb (where they are
    defined), the layout of `lazyloop.difftest.cases`; README.md lists undefined positions.
    OpenVINO dialect cases are written as model.xml/.bin with the same data layout."""
    path = os.path.join(directory, case.name)
    data = os.path.join(path, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    fmt = "onnx" if case.format in ("core", "onnx") else "openvino"
    model = case_model(case, fmt)
    if fmt == "onnx":
        with open(os.path.join(path, "model.onnx"), "wb") as f:
            f.write(model.SerializeToString())
        inputs = [i.name for i in model.graph.input]
        outputs = [o.name for o in model.graph.output]
    else:
        import openvino as ov
        ov.save_model(model, os.path.join(path, "model.xml"), compress_to_fp16=False)
        inputs = [p.get_friendly_name() for p in model.get_parameters()]
        outputs = list(case.expected)
    from ..difftest.cases import write_data_set
    arrays = case.expected_arrays()
    names = [n for n in outputs if n in arrays]
    write_data_set(data, {n: case.inputs[n] for n in inputs if n in case.inputs},
                   {n: arrays[n][0] for n in names}, {n: arrays[n][1] for n in names})
    undefined = [(n, np.argwhere(~arrays[n][1]).tolist()) for n in names
                 if not arrays[n][1].all()]
    with open(os.path.join(path, "README.md"), "w", encoding="utf-8") as f:
        f.write(case_readme(case, undefined))
    return path


def case_readme(case: Case, undefined) -> str:
    lines = [f"# {case.name}", "", case.note or "", "",
             f"Rules: {', '.join(f'`{r}`' for r in case.rules)}"]
    if case.ambiguities:
        lines.append(f"Ambiguities: {', '.join(case.ambiguities)} (the expected outputs follow "
                     "each entry's default reading)")
    lines += ["", "Expected outputs were worked out by hand (lazyloop.conformance.cases)."]
    if undefined:
        lines += ["", "Undefined positions (any value is right there; output_N.pb holds "
                      "lazyloop's fill value, defined_N.pb is False there):"]
        for name, where in undefined:
            lines.append(f"- `{name}`: {where}")
    return "\n".join(lines) + "\n"


def export_suite(directory: str, names=None) -> List[str]:
    os.makedirs(directory, exist_ok=True)
    return [export_case(CASES[n], directory) for n in (names or CASES)]




__all__ = ["CASES", "Result", "run_case", "run_suite", "export_case", "export_suite",
           "table", "case_model"]
