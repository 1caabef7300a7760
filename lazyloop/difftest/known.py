"""New faults before old ones: programs shaped like a known cause are drawn less often
(spec/51-difftest.md, "New faults before old ones").

A root-cause key is (format, loop constructs, symptom, skeleton of the minimal case); of
these, all but the symptom can be read off a program *before* the backend runs it. A program's
**shape** is what of that can be read, as a set of traits of its model and feeds -- those a
minimal case keeps because the fault needs them, not those it keeps because shrinking chose
the simplest value:

- `op:TYPE` for every node in any graph (but `Constant`, `Identity` and the constructs), and
  `dtype:D` for the element type of each such node's first input;
- `construct:CHAIN` for every Loop, Scan and If, with the constructs around it (`Loop>If`),
  and `C:output-twice` where its body gives one value as two outputs (a state that is also
  a scan output);
- how each is driven, where its structure or an edge value decides it: a Loop without a
  trip count or a condition (`Loop:M=none`, `Loop:cond=none`), with a constant or fed trip
  count of 0, below 0 or past 2^15 (`Loop:M=0`, `Loop:M=negative`, `Loop:M=huge`) or a
  false condition, with scan outputs (`Loop:scan-outputs`); a Scan of length 0, with a
  non-zero or reversed input or output axis (`Scan:axis`, `Scan:reverse`, `Scan:out-axis`,
  `Scan:out-reverse`), a Scan 8 (`Scan:batch`, `Scan:sequence_lens`);
- `values:empty` when a feed or constant has no element, `values:past-2^31` when one holds
  an integer of that magnitude.

Trip counts of 1 or 3, lengths of 2, true conditions, the dtypes of particular ops, a body
that passes its input through: a minimal case holds these because they are the simplest
choices, and a program without them meets the same fault; they are not traits.

A finding's shape is that of its minimal case (for an op fault, the op alone), and the
report keeps it (`shape`). A program whose shape holds every trait of a known cause's shape
is likely to meet that cause again: it **matches** it. With a baseline, program i is drawn
from (seed, i) as always; while it matches a known cause it is drawn again, from (seed, i,
attempt), at most `REDRAWS` times, and the last draw runs whatever it matches. Program i
stays a pure function of (seed, i, the baseline's shapes), so shards and worker counts give
the same findings.
"""
from __future__ import annotations

import random
from typing import Optional, Tuple

import attrs
import numpy as np

REDRAWS = 3  # draws of one program after the first, while it matches a known cause
PLUMBING = ("Constant", "Identity")  # nodes that carry values and compute nothing
CONSTRUCTS = ("Loop", "Scan", "If", "TensorIterator")


@attrs.frozen
class KnownCauses:
    """The root-cause keys of a baseline, and the shapes of those whose minimal case is
    known (key, frozenset of traits)."""

    keys: frozenset = frozenset()
    shapes: Tuple[Tuple[str, frozenset], ...] = ()

    def matching(self, shape) -> Optional[str]:
        """The first known cause whose shape `shape` holds, or None."""
        if shape:
            for key, known in self.shapes:
                if known <= shape:
                    return key
        return None


def usable(shape) -> bool:
    """A shape that can match: it names an op or a construct (an empty one would match
    every program)."""
    return any(t.startswith(("op:", "construct:")) for t in shape)


def known_causes(keys, shapes: dict) -> KnownCauses:
    """`KnownCauses` of baseline `keys` and {key: traits} of those with a usable shape."""
    return KnownCauses(frozenset(keys), tuple(sorted(
        (k, frozenset(s)) for k, s in shapes.items() if k in keys and usable(s))))


def load_known(path: str) -> KnownCauses:
    """The known causes of a baseline report (`schema.load_baseline`: its keys; a stale one
    raises `StaleBaseline`) with the shape of each finding: its `shape`, or, for a report
    written before findings kept one, the shape of its case folder beside the report (where
    `--out` wrote both); a finding with neither is known but matches no program."""
    import json
    import os

    from .schema import load_baseline
    keys = load_baseline(path)
    with open(path, encoding="utf-8") as f:
        findings = json.load(f)["findings"]
    shapes = {}
    for finding in findings:
        shape = finding.get("shape")
        if shape is None and finding.get("case"):
            shape = case_folder_shape(os.path.join(os.path.dirname(os.path.abspath(path)),
                                                   finding["case"]))
        if shape:
            shapes[finding["root_cause"]] = shape
    return known_causes(keys, shapes)


def case_folder_shape(folder: str):
    """The shape of a case folder's model fed its first data set, or None."""
    from .cases import NotACase, read_case
    try:
        saved = read_case(folder)
        if saved.format == "onnx":
            import onnx
            model = onnx.load(saved.model_path)
        else:
            from ..openvino.ir import read_ir
            model = read_ir(saved.model_path)
        return program_shape(model, saved.data_sets[0].inputs)
    except (NotACase, OSError, ValueError, ImportError):
        return None


def as_known(baseline) -> Optional[KnownCauses]:
    """What `check(baseline=...)` takes as known causes: a report's path, a `KnownCauses`,
    or root-cause keys (known, matching nothing); None for no baseline."""
    if baseline is None or isinstance(baseline, KnownCauses):
        return baseline
    if isinstance(baseline, str):
        return load_known(baseline)
    return KnownCauses(frozenset(baseline))


# ------------------------------------------------------------------------------------------
# Drawing less often what matches
# ------------------------------------------------------------------------------------------

def draw_avoiding(strategy, seed: int, index: int, known: Optional[KnownCauses]):
    """(subject, choices, redraws): program `index` of the campaign seeded `seed`, drawn
    again (at most REDRAWS times) while its shape matches a known cause."""
    from .shrinking import draw_with
    subject, choices = draw_with(strategy, random.Random(f"lazyloop:{seed}:{index}"))
    if known is None or not known.shapes:
        return subject, choices, 0
    for attempt in range(1, REDRAWS + 1):
        if known.matching(subject_shape(subject)) is None:
            return subject, choices, attempt - 1
        subject, choices = draw_with(strategy,
                                     random.Random(f"lazyloop:{seed}:{index}:{attempt}"))
    return subject, choices, REDRAWS


def subject_shape(subject) -> frozenset:
    """The shape of a program (empty when its model cannot be built: it never matches)."""
    try:
        return program_shape(subject.model(), subject.feeds)
    except Exception:  # noqa: BLE001 -- a program that cannot be built is refused later
        return frozenset()


# ------------------------------------------------------------------------------------------
# The shape of a model and its feeds
# ------------------------------------------------------------------------------------------

def program_shape(model, feeds: dict) -> frozenset:
    """The traits of `model` (ONNX or OpenVINO) fed `feeds` (module docstring)."""
    traits = set(value_traits(feeds.values()))
    if hasattr(model, "graph"):
        onnx_traits(model, feeds, traits)
    elif hasattr(model, "get_ordered_ops"):
        openvino_traits(model, "", traits)
    return frozenset(traits)


def value_traits(values) -> set:
    traits = set()
    for v in values:
        if v is None or isinstance(v, (list, tuple)):
            continue
        a = np.asarray(v)
        if a.size == 0:
            traits.add("values:empty")
        elif a.dtype.kind in "iu" and np.abs(a.astype(np.float64)).max() >= 2.0 ** 31:
            traits.add("values:past-2^31")
    return traits


def trips_class(n) -> Optional[str]:
    """A trip count's or length's trait where its value decides something: 0, negative, past
    2^15 (a counter kept in 16 bits); None otherwise."""
    n = int(n)
    return "negative" if n < 0 else "0" if n == 0 else "huge" if n >= 2 ** 15 else None


def onnx_traits(model, feeds, traits: set) -> None:
    import onnx
    from onnx import numpy_helper
    try:
        model = onnx.shape_inference.infer_shapes(model)
    except Exception:  # noqa: BLE001 -- then fewer dtypes are known
        pass
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 0)
    values = {k: np.asarray(v) for k, v in feeds.items() if v is not None
              and not isinstance(v, (list, tuple))}
    for t in model.graph.initializer:
        values.setdefault(t.name, numpy_helper.to_array(t))
    traits |= value_traits(numpy_helper.to_array(t) for t in model.graph.initializer)
    _onnx_graph(model.graph, "", {}, values, opset, traits)


def _onnx_types(graph, outer: dict) -> dict:
    """{value name: element type} of a graph's values, with those of its enclosing scopes."""
    types = dict(outer)
    for v in list(graph.input) + list(graph.value_info) + list(graph.output):
        if v.type.HasField("tensor_type"):
            types[v.name] = v.type.tensor_type.elem_type
    for t in graph.initializer:
        types[t.name] = t.data_type
    return types


def _onnx_graph(graph, chain: str, outer: dict, values: dict, opset: int, traits: set):
    from onnx import helper, numpy_helper
    types = _onnx_types(graph, outer)
    for node in graph.node:
        if node.op_type == "Constant":
            for a in node.attribute:
                if a.name == "value" and a.HasField("t"):
                    values[node.output[0]] = numpy_helper.to_array(a.t)
                    types[node.output[0]] = a.t.data_type
                    traits |= value_traits([values[node.output[0]]])
            continue
        if node.op_type not in PLUMBING + CONSTRUCTS:
            traits.add(f"op:{node.op_type}")
            first = types.get(node.input[0]) if node.input and node.input[0] else None
            if first:
                traits.add(f"dtype:{helper.tensor_dtype_to_np_dtype(first).name}")
        if node.op_type not in CONSTRUCTS:
            continue
        here = f"{chain}>{node.op_type}" if chain else node.op_type
        traits.add(f"construct:{here}")
        traits |= {f"{node.op_type}:{t}" for t in _driven(node, values, opset)}
        for a in node.attribute:
            for sub in ([a.g] if a.HasField("g") else []) + list(a.graphs):
                traits |= {f"{node.op_type}:{t}" for t in _body_flow(node.op_type, sub)}
                _onnx_graph(sub, here, types, values, opset, traits)


def _body_flow(op: str, body) -> set:
    """How a body gives its outputs, where engines have been seen to go wrong: one value as
    two outputs (a state that is also a scan output)."""
    names = [o.name for o in body.output][1 if op == "Loop" else 0:]
    return {"output-twice"} if len(set(names)) < len(names) else set()


def _known(values: dict, name: str):
    return values.get(name) if name else None


def _driven(node, values: dict, opset: int) -> set:
    """How a Loop, Scan or If is driven, as far as constants and feeds say."""
    attrs_ = {a.name: a for a in node.attribute}
    inputs = list(node.input) + ["", ""]
    if node.op_type == "If":
        return set()
    if node.op_type == "Loop":
        out = set()
        m, cond = _known(values, inputs[0]), _known(values, inputs[1])
        if not inputs[0]:
            out.add("M=none")
        elif m is not None and np.size(m) and trips_class(np.asarray(m).reshape(-1)[0]):
            out.add(f"M={trips_class(np.asarray(m).reshape(-1)[0])}")
        if not inputs[1]:
            out.add("cond=none")
        elif cond is not None and np.size(cond) and not np.asarray(cond).reshape(-1)[0]:
            out.add("cond=false")
        if len(node.output) > len(node.input) - 2:
            out.add("scan-outputs")
        return out
    if node.op_type != "Scan":
        return set()
    out = set()
    n_scan = attrs_["num_scan_inputs"].i if "num_scan_inputs" in attrs_ else 1
    if opset < 9:
        out.add("batch")
        if inputs[0]:
            out.add("sequence_lens")
        scans, axes = [i for i in node.input[1:]][-n_scan:], [1] * n_scan
    else:
        scans = list(node.input)[-n_scan:]
        axes = list(attrs_["scan_input_axes"].ints) if "scan_input_axes" in attrs_ \
            else [0] * n_scan
    for name, axis in zip(scans, axes):
        value = _known(values, name)
        if value is not None and np.ndim(value) > abs(axis) - (axis < 0) \
                and trips_class(np.shape(value)[axis]):
            out.add(f"length={trips_class(np.shape(value)[axis])}")
    for attribute, trait in (("scan_input_axes", "axis"), ("scan_input_directions", "reverse"),
                             ("scan_output_axes", "out-axis"),
                             ("scan_output_directions", "out-reverse"), ("directions", "reverse")):
        if attribute in attrs_ and any(attrs_[attribute].ints):
            out.add(trait)
    return out


def openvino_traits(model, chain: str, traits: set) -> None:
    """Ops and the element types of their first inputs, and loop constructs with their
    chain, of an openvino.Model (bodies too); a loop's trip count where a Constant gives it
    and decides something."""
    from .skeleton import bodies
    for op in model.get_ordered_ops():
        kind = op.get_type_name()
        if kind in ("Parameter", "Result", "Constant"):
            continue
        if kind not in CONSTRUCTS:
            traits.add(f"op:{kind}")
            if op.get_input_size():
                traits.add(f"dtype:{op.input(0).get_element_type().get_type_name()}")
            continue
        here = f"{chain}>{kind}" if chain else kind
        traits.add(f"construct:{here}")
        if kind == "Loop":
            source = op.input_value(0).get_node()
            if source.get_type_name() == "Constant":
                count = np.asarray(source.get_data()).reshape(-1)
                if count.size and trips_class(count[0]):
                    traits.add(f"Loop:M={trips_class(count[0])}")
        for body in bodies(op):
            openvino_traits(body, here, traits)
