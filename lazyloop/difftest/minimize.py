"""Reducing a finding's model itself, after the program-level shrink (spec/51-difftest.md,
"Minimal cases").

Shrinking draws smaller *programs*; what a program exports may still hold nodes the symptom
does not need (an exporter's padding, a dead branch, a second output). `minimise` edits the
exported ONNX model directly, one small edit at a time, and keeps an edit when the edited
model is still valid (ONNX's checker, with its full check when the original passes it;
lazyloop still evaluates it) and the backend still shows the same symptom (`keeps`). The
edits, tried in this order in passes until a pass keeps none:

- drop every node no output reads (dead nodes);
- drop a graph output (one always stays);
- drop a Loop's carried value or scan output, or a Scan's scan output, that nothing reads;
- drop one node, one of its inputs (the first, then the others) taking its place (where
  types and ranks allow);
- leave a Loop's optional trip count or condition out;
- turn a graph input into a constant holding the value fed;
- drop one attribute;
- set one constant (initializer or `Constant` node) to zeros.

`one_minimal_violations` is the check that a case is 1-minimal: removing any one node
(rewired so) loses the symptom or the validity. The OpenVINO IR counterpart is
`minimize_ir`; both run their edits in the same `passes`.
"""
from __future__ import annotations

from typing import Callable, List, Optional, Tuple

import numpy as np

from .passes import passes

Case = Tuple[object, dict]  # (ModelProto, feeds)


def node_count(model) -> int:
    """Nodes of a model, those of its subgraphs (ONNX) or loop bodies (OpenVINO) too."""
    if hasattr(model, "graph"):
        return sum(1 for _ in _all_nodes(model.graph))
    from .skeleton import bodies
    return sum(1 + sum(node_count(b) for b in bodies(op)) for op in model.get_ordered_ops()
               if op.get_type_name() not in ("Parameter", "Result"))


def _all_nodes(graph):
    for node in graph.node:
        yield node
        for sub in _subgraphs(node):
            yield from _all_nodes(sub)


def _subgraphs(node):
    for a in node.attribute:
        if a.HasField("g"):
            yield a.g
        yield from a.graphs


# ------------------------------------------------------------------------------------------
# Finding graphs and values by stable names
# ------------------------------------------------------------------------------------------


def named(model):
    """A copy whose nodes all have names (unnamed ones get `__mN`): edits find nodes by name
    in every edited copy (names are not part of a case, spec/51 "Grouping findings")."""
    model = _copy(model)
    k = 0
    taken = {n.name for n in _all_nodes(model.graph)}
    for node in _all_nodes(model.graph):
        if not node.name:
            while f"__m{k}" in taken:
                k += 1
            node.name = f"__m{k}"
            taken.add(node.name)
    return model


def _copy(model):
    import onnx
    out = onnx.ModelProto()
    out.CopyFrom(model)
    return out


def _graphs(graph, parent=None):
    """(graph, the node holding it or None) for the graph and every subgraph in it."""
    yield graph, parent
    for node in graph.node:
        for sub in _subgraphs(node):
            yield from _graphs(sub, node)


def _find(model, name):
    """(graph, index) of the node called `name`, or None."""
    for g, _ in _graphs(model.graph):
        for i, node in enumerate(g.node):
            if node.name == name:
                return g, i
    return None


def _reads(graph, value: str, skip=None) -> bool:
    """Whether anything in `graph` (its nodes, their subgraphs, its outputs) reads `value`."""
    if any(o.name == value for o in graph.output):
        return True
    for node in graph.node:
        if node is skip:
            continue
        if value in node.input:
            return True
        if any(_reads(sub, value) for sub in _subgraphs(node)):
            return True
    return False


def _rename_reads(graph, old: str, new: str) -> None:
    for o in graph.output:
        if o.name == old:
            o.name = new
    for node in graph.node:
        for k, x in enumerate(node.input):
            if x == old:
                node.input[k] = new
        for sub in _subgraphs(node):
            if old not in {v.name for v in sub.input}:
                _rename_reads(sub, old, new)


# ------------------------------------------------------------------------------------------
# The edits: each takes a case and returns the edited case, or None where it does not apply
# ------------------------------------------------------------------------------------------


def without_dead_nodes(case: Case) -> Optional[Case]:
    """Every node that nothing reads, in every graph, dropped (repeatedly), and every
    initializer nothing reads."""
    model, feeds = case
    model = _copy(model)
    dropped = False
    changed = True
    while changed:
        changed = False
        for g, _ in _graphs(model.graph):
            for i in reversed(range(len(g.node))):
                node = g.node[i]
                if not any(o and _reads(g, o, skip=node) for o in node.output):
                    del g.node[i]
                    changed = dropped = True
    inputs = {v.name for v in model.graph.input}
    for k in reversed(range(len(model.graph.initializer))):
        name = model.graph.initializer[k].name
        if name not in inputs and not _reads(model.graph, name):
            del model.graph.initializer[k]
            dropped = True
    return (model, feeds) if dropped else None


def node_edit(change):
    """`change(model, feeds, graph, index, node, *args)` as an edit of the node a name gives:
    `node_edit(change)(name, *args)` is the edit, applied to a copy of the case's model (None
    when no node is called `name`, or when `change` says so)."""
    def edit_of(name: str, *args):
        def edit(case):
            model, feeds = case
            model = _copy(model)
            found = _find(model, name)
            if found is None:
                return None
            g, i = found
            return change(model, feeds, g, i, g.node[i], *args)
        return edit
    edit_of.__doc__ = change.__doc__
    return edit_of


@node_edit
def without_node(model, feeds, g, i, node, k: int = 0):
    """Node `name` dropped: when something reads it, its `k`-th present input (the first by
    default) takes the place of its first output (its other outputs must be unread)."""
    read = [o for o in node.output if o and _reads(g, o, skip=node)]
    if read:
        present = [x for x in node.input if x]
        first = present[k] if k < len(present) else None
        if first is None or read != [node.output[0]]:
            return None
        types = value_types(model)
        if types.get(first, "?") != types.get(node.output[0], "?"):
            return None  # rewiring would change a value's type or rank
        if any(o.name == first for o in g.output) and \
                any(o.name == node.output[0] for o in g.output):
            return None  # one name would stand for two outputs
        _rename_reads(g, node.output[0], first)
    del g.node[i]
    return model, feeds


def value_types(model) -> dict:
    """{value name: "elem_type/rank"} as ONNX's shape inference gives them (every graph;
    a value it cannot type is absent)."""
    import onnx
    try:
        inferred = onnx.shape_inference.infer_shapes(model)
    except Exception:  # noqa: BLE001 -- nothing typed: rewiring is left to the checker
        return {}
    found = {}
    for g, _ in _graphs(inferred.graph):
        for v in list(g.input) + list(g.output) + list(g.value_info):
            t = v.type.tensor_type
            if v.type.WhichOneof("value") == "tensor_type" and t.HasField("shape"):
                found[v.name] = f"{t.elem_type}/{len(t.shape.dim)}"
            elif v.type.WhichOneof("value"):
                found[v.name] = v.type.WhichOneof("value")
        for t in g.initializer:
            found[t.name] = f"{t.data_type}/{len(t.dims)}"
    return found


def without_output(name: str) -> Callable[[Case], Optional[Case]]:
    """Graph output `name` dropped (one output always stays)."""
    def edit(case):
        model, feeds = case
        outputs = model.graph.output
        if len(outputs) < 2 or name not in [o.name for o in outputs]:
            return None
        model = _copy(model)
        k = [o.name for o in model.graph.output].index(name)
        del model.graph.output[k]
        return model, feeds
    return edit


@node_edit
def without_loop_value(model, feeds, g, i, node, body_output: str):
    """A Loop's carried value or scan output, or a Scan's scan output, that nothing after it
    reads, dropped from the node and its body together (`body_output` names it in the body)."""
    body = next((a.g for a in node.attribute if a.name == "body"), None)
    names = [o.name for o in body.output] if body is not None else []
    if body_output not in names:
        return None
    k = names.index(body_output)
    if node.op_type == "Loop":
        if k == 0:
            return None  # the condition
        out = k - 1
        carried = len(node.input) - 2
        if out < carried:  # a carried value: its input, body input and output
            del node.input[2 + out]
            del body.input[2 + out]
    elif node.op_type == "Scan":
        states = len(body.output) - _scan_outputs(node, body)
        if k < states:
            return None
        out = k
        _drop_from_list_attribute(node, "scan_output_axes", k - states)
        _drop_from_list_attribute(node, "scan_output_directions", k - states)
    else:
        return None
    if out >= len(node.output) or (node.output[out] and _reads(g, node.output[out],
                                                                skip=node)):
        return None
    del node.output[out]
    del body.output[k]
    return model, feeds


def _scan_outputs(node, body) -> int:
    states = len(body.input) - next(a.i for a in node.attribute if a.name == "num_scan_inputs")
    return len(body.output) - states


def _drop_from_list_attribute(node, name: str, k: int) -> None:
    for a in node.attribute:
        if a.name == name and k < len(a.ints):
            del a.ints[k]


@node_edit
def without_loop_input(model, feeds, g, i, node, position: int):
    """A Loop's optional trip count (0) or condition (1) left out."""
    if node.op_type != "Loop" or not node.input[position]:
        return None
    if position == 0 and not _body_decides(node):
        return None  # without a count it would never end (lazyloop's fuel decides)
    node.input[position] = ""
    return model, feeds


def _body_decides(loop) -> bool:
    """Whether a Loop's body computes its condition (so that the loop may end without a
    trip count): its condition output is neither its condition input nor a copy of it."""
    body = next(a.g for a in loop.attribute if a.name == "body")
    cond_in, cond_out = body.input[1].name, body.output[0].name
    if cond_out == cond_in:
        return False
    producer = next((n for n in body.node if cond_out in n.output), None)
    return not (producer is not None and producer.op_type == "Identity" and
                list(producer.input) == [cond_in]) and producer is not None


def input_as_constant(name: str) -> Callable[[Case], Optional[Case]]:
    """Graph input `name` turned into an initializer holding the value it was fed."""
    def edit(case):
        from onnx import numpy_helper
        model, feeds = case
        value = feeds.get(name)
        if value is None or isinstance(value, list):
            return None
        model = _copy(model)
        k = [v.name for v in model.graph.input].index(name)
        del model.graph.input[k]
        model.graph.initializer.append(numpy_helper.from_array(np.asarray(value), name))
        return model, {n: v for n, v in feeds.items() if n != name}
    return edit


@node_edit
def without_attribute(model, feeds, g, i, node, attribute: str):
    """Attribute `attribute` of the node dropped."""
    kept = [a for a in node.attribute if a.name != attribute]
    if len(kept) == len(node.attribute):
        return None
    del node.attribute[:]
    node.attribute.extend(kept)
    return model, feeds


def constant_zeros(owner: str, tensor: str) -> Callable[[Case], Optional[Case]]:
    """A constant's values set to zeros: an initializer (`owner` "") or the `value` of the
    Constant node `owner`."""
    def edit(case):
        from onnx import numpy_helper
        model, feeds = case
        model = _copy(model)
        if owner:
            found = _find(model, owner)
            if found is None:
                return None
            node = found[0].node[found[1]]
            proto = next((a.t for a in node.attribute if a.name == "value" and
                          a.HasField("t")), None)
        else:
            proto = next((t for t in model.graph.initializer if t.name == tensor), None)
        if proto is None:
            return None
        value = numpy_helper.to_array(proto)
        if value.dtype == object or not np.any(value):
            return None
        proto.CopyFrom(numpy_helper.from_array(np.zeros_like(value), proto.name))
        return model, feeds
    return edit


def edits(model) -> List[Tuple[str, Callable]]:
    """(what, edit) for every edit of `model`, in the order the passes try them."""
    found: List[Tuple[str, Callable]] = [("drop dead nodes", without_dead_nodes)]
    found += [(f"drop output {o.name}", without_output(o.name)) for o in model.graph.output]
    graphs = list(_graphs(model.graph))
    for g, _ in graphs:
        for node in g.node:
            body = next((a.g for a in node.attribute if a.name == "body"), None)
            if node.op_type in ("Loop", "Scan") and body is not None:
                found += [(f"drop {node.op_type} {node.name} value {o.name}",
                           without_loop_value(node.name, o.name)) for o in body.output[1:]]
    for g, _ in graphs:
        found += [(f"drop node {n.name} ({n.op_type}) for its input {k}", without_node(n.name, k))
                  for n in reversed(g.node) for k in range(max(1, sum(1 for x in n.input if x)))]
    for g, _ in graphs:
        found += [(f"leave out input {k} of {n.name}", without_loop_input(n.name, k))
                  for n in g.node if n.op_type == "Loop" for k in (0, 1)]
    given = {t.name for t in model.graph.initializer}
    found += [(f"input {v.name} as a constant", input_as_constant(v.name))
              for v in model.graph.input if v.name not in given]
    for g, _ in graphs:
        found += [(f"drop attribute {a.name} of {n.name}", without_attribute(n.name, a.name))
                  for n in g.node for a in n.attribute
                  if not a.HasField("g") and not a.graphs and n.op_type != "Constant"]
    found += [(f"zero initializer {t.name}", constant_zeros("", t.name))
              for t in model.graph.initializer]
    for g, _ in graphs:
        found += [(f"zero constant {n.name}", constant_zeros(n.name, ""))
                  for n in g.node if n.op_type == "Constant"]
    return found


# ------------------------------------------------------------------------------------------
# Validity, the passes, and the 1-minimality check
# ------------------------------------------------------------------------------------------


def checker(model) -> Callable[[object], bool]:
    """The validity check for edits of `model`: ONNX's checker with its full check (strict
    shape inference) when `model` itself passes it, the plain checker otherwise."""
    import onnx
    try:
        onnx.checker.check_model(model, full_check=True)
        full = True
    except Exception:  # noqa: BLE001 -- the original does not pass the full check
        full = False

    def valid(candidate) -> bool:
        try:
            onnx.checker.check_model(candidate, full_check=full)
            return True
        except Exception:  # noqa: BLE001
            return False
    return valid


def minimise(case: Case, keeps: Callable[[Case], bool], steps: int = 300,
             valid: Optional[Callable] = None, stop=None) -> Tuple[Case, str]:
    """(the smallest case the edits reach while `keeps(case)` holds, why it ended:
    "complete", "steps" or "stopped" -- `stop()` said so: Ctrl-C, wall time); at most
    `steps` calls of `keeps` (each runs the backend)."""
    model, feeds = case
    model = named(model)
    return passes((model, feeds), keeps, edits, valid or checker(model), steps, stop)


def one_minimal_violations(case: Case, keeps: Callable[[Case], bool],
                           valid: Optional[Callable] = None) -> List[str]:
    """The nodes whose removal (rewired: its first input in place of its first output; a
    node nothing reads, simply dropped) keeps the model valid and the symptom: empty when
    the case is 1-minimal. A dead node the symptom needs (a backend that fails on a value
    nobody reads, A10) is no violation: removing it loses the symptom."""
    model, feeds = case
    model = named(model)
    valid = valid or checker(model)
    found = []
    for g, _ in _graphs(model.graph):
        for node in g.node:
            candidate = without_node(node.name)((model, feeds))
            if candidate is not None and valid(candidate[0]) and keeps(candidate):
                found.append(f"{node.op_type} {node.name}")
    return found
