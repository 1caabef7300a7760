"""Case folders: a disagreement written to disk in the ONNX backend-test layout, and a saved
case read back (for `lazyloop run CASE_DIR`). The layout (spec/52-report-schema.md):

    CASE/model.onnx                  (or model.xml + model.bin for OpenVINO models)
    CASE/test_data_set_0/input_N.pb  TensorProto, named after the model input
    CASE/test_data_set_0/output_N.pb lazyloop's expected value, named after the output;
                                     undefined positions hold lazyloop's fill value
    CASE/test_data_set_0/defined_N.pb  bool TensorProto of output_N's shape: True where
                                     the value is defined (absent: wholly defined)
    CASE/README.md                   what differs; backend and version, lazyloop version,
                                     seed, the command that found it and the one re-running it;
                                     for an upstream issue: versions, the root-cause key, the
                                     rules with their spec text
    CASE/repro.py                    a standalone reproduction: numpy, onnx and the backend's
                                     package only (repro.py)
"""
from __future__ import annotations

import glob
import os
from typing import Dict, List, Optional

import attrs
import numpy as np

from .backends import _onnx_bytes
from .feeding import model_inputs
from .report import EVERY_PROGRAM_RULES, Disagreement
from .repro import spec_text, versions, write_repro


@attrs.frozen
class Context:
    """Where a case came from, for its README."""
    backend: str = "?"
    backend_version: Optional[str] = None
    lazyloop_version: str = "?"
    seed: Optional[int] = None
    command: Optional[str] = None
    rerun_backend: Optional[str] = None  # what --backend was given (a plug-in's module:factory)
    plugin: Optional[str] = None  # the plug-in's module:factory, which repro.py imports

    @classmethod
    def of(cls, report) -> "Context":
        """The context of a campaign's `Report` (when no command line made it)."""
        from .schema import lazyloop_version
        return cls(report.backend, report.backend_version, lazyloop_version(), report.seed,
                   f"lazyloop check --backend {report.backend} --seed {report.seed}",
                   plugin=getattr(report, "backend_spec", None))


def write_case(directory: str, name: str, d: Disagreement, context=None) -> str:
    """One disagreement as a case folder (layout above); returns its path. `context` is a
    `Context` or the campaign's `Report`; with a known backend the folder also gets repro.py
    (repro.py) and the README the facts an upstream issue needs."""
    if context is None:
        context = Context()
    elif not isinstance(context, Context):
        context = Context.of(context)
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
        input_names = model_inputs(d.model)[0]
        output_names = list(d.expected)
    write_data_set(data, {n: d.feeds[n] for n in input_names if n in d.feeds},
                   {n: d.expected[n] for n in output_names if n in d.expected}, d.defined)
    with open(os.path.join(case, "README.md"), "w", encoding="utf-8") as f:
        f.write(case_readme(name, d, context))
        if context.backend != "?":
            f.write(upstream_section(context, d))
    if context.backend != "?":
        write_repro(case, context.backend, d, context.plugin)
    return case


def write_repro_for_case(case: str, backend: str, plugin=None) -> str:
    """repro.py written again into a case folder, from what the folder holds (its model and
    lazyloop's expected outputs): how a case written by an earlier version gets today's."""
    import types
    saved = read_case(case)
    if saved.format == "onnx":
        import onnx
        model = onnx.load(saved.model_path)
    else:
        from ..openvino.ir import read_ir
        model = read_ir(saved.model_path)
    data = saved.data_sets[0]
    return write_repro(case, backend, types.SimpleNamespace(
        expected=data.expected, defined=data.defined, model=model), plugin)


def write_data_set(data: str, inputs: dict, expected: dict, defined: dict) -> None:
    """input_N.pb, output_N.pb and, for outputs with undefined positions, defined_N.pb."""
    from onnx import numpy_helper
    os.makedirs(data, exist_ok=True)
    for k, (name, value) in enumerate(inputs.items()):
        _write_tensor(os.path.join(data, f"input_{k}.pb"), value, name, numpy_helper)
    for k, (name, value) in enumerate(expected.items()):
        _write_tensor(os.path.join(data, f"output_{k}.pb"), value, name, numpy_helper)
        if value is None or isinstance(value, list):
            continue  # a sequence or an optional: every position defined
        mask = np.broadcast_to(np.asarray(defined.get(name, True), bool), np.shape(value))
        if not mask.all():
            _write_tensor(os.path.join(data, f"defined_{k}.pb"), mask, name, numpy_helper)


def upstream_section(context: Context, d: Disagreement) -> str:
    """Versions, program index, root cause, repro.py, and the rules with their spec text."""
    from .grouping import key_text
    key = key_text(d.root_cause) if d.root_cause else "/".join(map(str, d.signature[1:]))
    lines = ["", "## For an upstream issue", "",
             f"- backend: `{context.backend}`; versions: " + ", ".join(
                 f"{k} {v}" for k, v in versions(context.backend).items()),
             f"- program {d.found_after} of the campaign seeded {context.seed}",
             f"- root cause key: `{key}`",
             "- reproduce without lazyloop: `python repro.py` (numpy, onnx and the backend's "
             "package)", ""]
    for rule in sorted(r for r in d.rules if r not in EVERY_PROGRAM_RULES):
        text = spec_text(rule)
        if text:
            lines += ["From lazyloop's specification (spec/):", "", text, ""]
    return "\n".join(lines) + "\n"


def _write_tensor(path, value, name, numpy_helper):
    """A tensor as a TensorProto, a sequence (list) as a SequenceProto, an empty optional
    (None) as an OptionalProto, as ONNX's backend test data holds them."""
    from onnx import TensorProto
    if value is None:
        proto = numpy_helper.from_optional(None, name)
    elif isinstance(value, list):
        proto = numpy_helper.from_list([np.asarray(v) for v in value], name,
                                       dtype=None if value else TensorProto.FLOAT)
    else:
        proto = numpy_helper.from_array(np.asarray(value), name)
    with open(path, "wb") as f:
        f.write(proto.SerializeToString())


def shown(value):
    """A value as plain Python for a README: sequences as lists, an empty optional as None."""
    if value is None or isinstance(value, list):
        return None if value is None else [shown(v) for v in value]
    return np.asarray(value).tolist()


def shrink_note(d: Disagreement) -> str:
    """'shrunk' or 'not shrunk', and why shrinking ended when it was cut short."""
    from .shrinking import SHRINKING
    done = "shrunk" if d.shrunk else "not shrunk"
    how = getattr(d, "shrinking", "off")
    if how == "complete":
        return done
    partly = "partially shrunk" if d.shrunk else done
    return f"{partly}: {SHRINKING.get(how, how)}"


def nodes_note(d: Disagreement) -> str:
    """How many nodes the case's model has, and had before model-level minimising."""
    if d.nodes_after is None:
        return "the shrunk program's model, not minimised further"
    from .shrinking import SHRINKING
    how = {"complete": "complete", "steps": "cut: --minimize-steps spent",
           "op-alone": "not needed: the case is the op alone",
           "stopped": "cut: Ctrl-C or wall time", "off": "not tried",
           "unreadable": "not possible: the model cannot be read back"}.get(
        d.minimising, SHRINKING.get(d.minimising, d.minimising))
    return (f"model: {d.nodes_after} node(s), from {d.nodes_before} in the shrunk program's "
            f"model (model-level minimising: {how})")


def op_note(d: Disagreement) -> list:
    """For an op fault: that the model is the op alone, and where it was met."""
    if not getattr(d, "op", None):
        return []
    return [f"- op fault: `{d.op}` alone, outside any loop, disagrees on the backend too; "
            f"the model here is that one op, fed the values it reads in the program below "
            f"(spec/51, \"Op faults\")"]


def case_readme(name: str, d: Disagreement, context: Context = Context()) -> str:
    lines = [f"# {name}", "",
             f"Found by `lazyloop check` (signature {d.signature!r}; {d.occurrences} "
             f"disagreeing example(s), first after {d.found_after} programs; "
             f"{shrink_note(d)}).", "",
             f"- backend: {context.backend} {context.backend_version or '(version unknown)'}",
             f"- lazyloop: {context.lazyloop_version}",
             f"- seed: {context.seed}",
             f"- found by: `{context.command or 'lazyloop check'}`",
             f"- re-run: `lazyloop run {name} --backend "
             f"{context.rerun_backend or context.backend}` (from the folder "
             "holding this case)",
             f"- symptom: {d.symptom or '?'}; explained by: "
             f"{d.reading or d.ambiguity or 'no registered reading'}",
             f"- {nodes_note(d)}", *op_note(d), "",
             "## What differs", ""]
    for x in d.differences:
        lines.append(f"- `{x.output}`: {x.kind}: {x.detail}")
    if d.error:
        lines += ["", "The backend failed while running the model:", "", "```",
                  d.error.strip()[:2000], "```"]
    lines += ["", f"Ambiguity: {d.ambiguity or 'none registered explains it'}", "",
              f"Rules exercised: {', '.join(f'`{r}`' for r in sorted(d.rules))}", "",
              "## Expected (lazyloop)", "",
              "Undefined positions (test_data_set_0/defined_N.pb is False there) may hold any "
              "value.", ""]
    for k, v in d.expected.items():
        mask = np.asarray(d.defined.get(k, True) if not isinstance(v, list) else True, bool)
        note = "" if mask.all() else \
            f" ({int(mask.size - mask.sum())} undefined positions: any value is right there)"
        lines.append(f"- `{k}`{note}: `{shown(v)!r}`"[:1500])
    if d.actual is not None:
        lines += ["", "## Actual (backend)", ""]
        for k, v in d.actual.items():
            lines.append(f"- `{k}`: `{shown(v)!r}`"[:1500])
    lines += ["", "## The program", "", "```", repr(d.subject)[:6000], "```", ""]
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------
# Reading a case folder back
# ------------------------------------------------------------------------------------------


@attrs.frozen
class DataSet:
    name: str
    inputs: Dict[str, np.ndarray]
    expected: Dict[str, np.ndarray]
    defined: Dict[str, np.ndarray]


@attrs.frozen
class SavedCase:
    directory: str
    model_path: str
    format: str
    data_sets: List[DataSet]


class NotACase(ValueError):
    """The folder is not a case folder (no model, or no test_data_set_*)."""


def read_case(directory: str) -> SavedCase:
    """A case folder (layout above) with every test_data_set_* in it."""
    model = next((os.path.join(directory, m) for m in ("model.onnx", "model.xml")
                  if os.path.exists(os.path.join(directory, m))), None)
    sets = sorted(glob.glob(os.path.join(directory, "test_data_set_*")))
    if model is None or not sets:
        raise NotACase(f"{directory} is not a case folder: it needs model.onnx or model.xml "
                       "and test_data_set_*/ (as `lazyloop check --out` and `lazyloop "
                       "conformance export` write them)")
    fmt = "onnx" if model.endswith(".onnx") else "openvino"
    kinds = value_kinds(model) if fmt == "onnx" else ({}, {})
    return SavedCase(directory, model, fmt, [read_data_set(s, kinds) for s in sets])


def value_kinds(model_path):
    """({input position: kind}, {output position: kind}) of an ONNX model's graph, each kind
    `tensor_type`, `sequence_type` or `optional_type`: what each .pb file holds."""
    import onnx
    graph = onnx.load(model_path, load_external_data=False).graph
    return tuple({k: v.type.WhichOneof("value") for k, v in enumerate(values)}
                 for values in (graph.input, graph.output))


def read_data_set(path: str, kinds=({}, {})) -> DataSet:
    inputs = dict(_named(path, "input", kinds[0]))
    expected, defined = {}, {}
    for k, (name, value) in enumerate(_named(path, "output", kinds[1])):
        expected[name] = value
        mask_path = os.path.join(path, f"defined_{k}.pb")
        if value is None or isinstance(value, list):
            defined[name] = True  # a sequence or an optional: written only when defined
        else:
            defined[name] = (_read_value(mask_path)[1].astype(bool)
                             if os.path.exists(mask_path) else np.ones(np.shape(value), bool))
    return DataSet(os.path.basename(path), inputs, expected, defined)


def _named(path, prefix, kinds):
    files = sorted(glob.glob(os.path.join(path, f"{prefix}_*.pb")),
                   key=lambda p: int(os.path.basename(p)[len(prefix) + 1:-3]))
    return [_read_value(p, kinds.get(k)) for k, p in enumerate(files)]


def _read_value(path, kind=None):
    """(name, value) of a .pb file: a TensorProto, or, where the model says so, a
    SequenceProto (a list) or an OptionalProto (None when empty; `write_data_set` writes an
    optional that holds a value as that value's TensorProto, whose bytes carry no
    OptionalProto name)."""
    import onnx
    from onnx import numpy_helper
    with open(path, "rb") as f:
        data = f.read()
    if kind == "sequence_type":
        proto = onnx.SequenceProto.FromString(data)
        return proto.name, [np.asarray(v) for v in numpy_helper.to_list(proto)]
    if kind == "optional_type":
        proto = onnx.OptionalProto.FromString(data)
        if proto.name:
            return proto.name, numpy_helper.to_optional(proto)
    tensor = onnx.TensorProto.FromString(data)
    return tensor.name, numpy_helper.to_array(tensor)
