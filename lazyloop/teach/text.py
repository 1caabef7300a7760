"""Text views for the notebooks: the forcing trace and plans as tables, compact outlines of
plans and OpenVINO models, values with undefined positions as `?`, and text in columns."""
from __future__ import annotations

from typing import Dict, Iterable, Mapping, Optional

import numpy as np

from ..core.plan import (Const, IfOutput, Input, Iterator, LoopOut, Map, Plan, Project, Recurrence,
                         Undefined, compile_network)
from ..core.errors import InputError


def trace_of(evaluation):
    """The evaluation's forcing trace; an evaluation that kept none (only the reference
    evaluator records one) is refused rather than read as one that forced nothing."""
    if evaluation.trace is None:
        raise InputError("evaluation", "laziness/modes",
                         f"kept no forcing trace (it ran in mode {evaluation.mode!r})",
                         "evaluate with trace=True (mode \"reference\") to draw what was forced")
    return evaluation.trace

def print_trace(evaluation, limit: Optional[int] = 60, streams: Optional[Iterable[str]] = None):
    """The forcing trace as a numbered table, in completion order (an element is listed once
    it has been computed), with who asked for it. Numbers are positions in the whole trace, the
    same numbers `plot_trace` writes in its cells. A value outside every loop is one tensor (an
    invariant stream, `stream/invariant`), shown by its name alone, not as an element."""
    wanted = set(streams) if streams is not None else None
    nodes = evaluation.plan.nodes

    def element(stream, index):
        node = nodes.get(stream)
        return str(stream) if node is not None and node.scope is None else f"{stream}[{index}]"

    events = [(k, e) for k, e in enumerate(trace_of(evaluation), 1)
              if wanted is None or e.stream in wanted]
    shown = events[:limit] if limit else events
    rows = [(str(k), str(e.loop or "-"), str(e.activation or "-"), element(e.stream, e.index),
             "an output" if e.by is None else (element(*e.by)
                                               if not str(e.by[0]).startswith("#trips")
                                               else f"the trip limit of {e.by[0][7:]}"))
            for k, e in shown]
    head = ("#", "loop", "activation", "computed", "asked for by")
    w = [max(len(r[i]) for r in rows + [head]) for i in range(4)]
    for r in [head] + rows:
        print(f"{r[0]:>{w[0]}}  {r[1]:<{w[1]}} {r[2]:<{w[2]}} {r[3]:<{w[3]}} {r[4]}".rstrip())
    if limit and len(events) > limit:
        print(f"... and {len(events) - limit} more")


def print_plan(plan):
    """Every stream node of a plan with its scope; each node's repr reads like its expression."""
    if not isinstance(plan, Plan):
        plan = getattr(plan, "plan", None) or compile_network(plan)
    width = max((len(str(k)) for k in plan.nodes), default=4)
    for name, lp in plan.loops.items():
        print(repr(lp))
    for nid, node in plan.nodes.items():
        print(f"  {nid:<{width}}  in {str(node.scope or '(outside)'):<10} = {node!r}")
    print("outputs:", ", ".join(f"{name} <- {nid}" for name, nid in plan.outputs))


def _short_id(ref) -> str:
    """A stream id without the frontend's path: "Loop(total)/carried:acc" -> "carried:acc"."""
    if ref is None:
        return "-"
    text = str(ref)
    if text.endswith("()"):
        text = text[:-2]
    return text.rsplit("/", 1)[-1]


def _expression(node, short) -> str:
    if isinstance(node, Input):
        return f"input {node.type!r}"
    if isinstance(node, Const):
        v = node.value
        return (f"const {np.asarray(v).tolist()}" if isinstance(v, np.ndarray) and v.size <= 3
                else f"const {node.type!r}")
    if isinstance(node, Iterator):
        return (f"Iterator({short(node.source)}, axis={node.axis}"
                + (", reverse" if node.reverse else "") + ")")
    if isinstance(node, Recurrence):
        return f"Recurrence({short(node.init)}, {short(node.next)})"
    if isinstance(node, LoopOut):
        if node.kind.name == "LAST_VALUE":
            return f"LastValue({short(node.source)})"
        kind = "Concatenate" if node.kind.name == "CONCATENATE" else "Reverse"
        length = short(node.length) if node.length else "n"
        return f"{kind}({short(node.source)}, {length}, axis={node.axis})"
    if isinstance(node, IfOutput):
        return f"{short(node.cond)} ? {short(node.then)} : {short(node.orelse)}"
    if isinstance(node, Undefined):
        return "undefined"
    if isinstance(node, Map):
        return f"{node.op}({', '.join(short(a) for a in node.args)})"
    return repr(node)


def outline(plan, constants: bool = False) -> str:
    """A compact text of a plan: each loop with its limits and its streams, then what is
    computed outside the loops. Frontend prefixes are dropped from the names and a function
    call with its projections is one line, so lowerings of one program from different
    dialects can be read side by side (`side_by_side`)."""
    if not isinstance(plan, Plan):
        plan = getattr(plan, "plan", None) or compile_network(getattr(plan, "network", plan))
    projections: Dict[str, list] = {}
    for nid, node in plan.nodes.items():
        if isinstance(node, Project):
            projections.setdefault(node.call, []).append(nid)

    def line(nid, node):
        if isinstance(node, Project):
            return None
        if isinstance(node, Const) and not constants:
            return None
        names = ", ".join(_short_id(p) for p in projections.get(nid, [])) or _short_id(nid)
        return f"{names} = {_expression(node, _short_id)}"

    out = ["inputs: " + ", ".join(_short_id(i) for i in plan.inputs)]

    def block(loop, depth):
        lp = plan.loops[loop]
        limits = [f"COUNT({_short_id(lp.count)})"] if lp.count else []
        limits += [f"WHILE({_short_id(lp.while_)})"] if lp.while_ else []
        pad = "  " * depth
        out.append(f"{pad}loop {_short_id(loop)}: {' '.join(limits) or 'no limit'}")
        for nid, node in plan.nodes.items():
            if node.scope == loop:
                text = line(nid, node)
                if text:
                    out.append(f"{pad}  {text}")
        for child, cp in plan.loops.items():
            if cp.parent == loop:
                block(child, depth + 1)

    for loop, lp in plan.loops.items():
        if lp.parent is None:
            block(loop, 0)
    out.append("outside the loops:")
    for nid, node in plan.nodes.items():
        if node.scope is None and not isinstance(node, Input):
            text = line(nid, node)
            if text:
                out.append(f"  {text}")
    out.append("outputs: " + ", ".join(_short_id(nid) for _, nid in plan.outputs))
    return "\n".join(out)


def openvino_outline(model) -> str:
    """An OpenVINO model as text: its ops in order, and for every Loop / TensorIterator its
    ports: what each body Parameter is bound to (merged with a back edge, sliced, invariant),
    the special body ports, and what each output takes (last iteration or concatenation)."""
    lines = []

    def source(value):
        node = value.get_node()
        return f"{node.get_friendly_name()} ({node.get_type_name()})"

    def walk(m, pad):
        for op in m.get_ordered_ops():
            kind = op.get_type_name()
            if kind not in ("Loop", "TensorIterator"):
                lines.append(f"{pad}{kind:<14} {op.get_friendly_name()}")
                continue
            body = op.get_function()
            params, results = body.get_parameters(), body.get_results()

            def result(k):
                return f"Result {k} = {source(results[k].input_value(0))}"

            head = f"{pad}{kind} {op.get_friendly_name()}"
            if kind == "Loop":
                current, condition = op.get_special_body_ports()
                head += (f": trip count <- {source(op.input_value(0))}, execution condition <- "
                         f"{source(op.input_value(1))}; body condition: {result(condition)}"
                         + (f"; current_iteration: {params[current].get_friendly_name()}"
                            if current >= 0 else ""))
            lines.append(head)
            for d in op.get_input_descriptions():
                name = params[d.body_parameter_index].get_friendly_name()
                where = source(op.input_value(d.input_index))
                kind_d = type(d).__name__
                if kind_d.startswith("Merged"):
                    lines.append(f"{pad}  in  merged    {name} <- {where}, back edge from "
                                 f"{result(d.body_value_index)}")
                elif kind_d.startswith("Slice"):
                    lines.append(f"{pad}  in  sliced    {name} <- {where}: axis={d.axis} "
                                 f"start={d.start} stride={d.stride} part_size={d.part_size} "
                                 f"end={d.end}")
                else:
                    lines.append(f"{pad}  in  invariant {name} <- {where}")
            for d in op.get_output_descriptions():
                if type(d).__name__.startswith("Concat"):
                    lines.append(f"{pad}  out {d.output_index}  concat    "
                                 f"{result(d.body_value_index)}: "
                                 f"axis={d.axis} start={d.start} stride={d.stride} "
                                 f"part_size={d.part_size} end={d.end}")
                else:
                    lines.append(f"{pad}  out {d.output_index}  by iteration {d.iteration}: "
                                 f"{result(d.body_value_index)}")
            lines.append(f"{pad}  body:")
            walk(body, pad + "    ")

    walk(model, "")
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------
# Undefined values
# ------------------------------------------------------------------------------------------

def masked(value, defined, precision: int = 3) -> str:
    """The value as text with every undefined position shown as `?` (DESIGN §4)."""
    value = np.asarray(value)
    defined = np.broadcast_to(np.asarray(defined, bool), value.shape)
    floats = value.dtype.kind == "f"
    if floats:  # numpy's style: "2.", "1.25", aligned on the left like numpy aligns them
        texts = [np.format_float_positional(v, precision=precision, trim=".")
                 for v in value.reshape(-1)]
    else:
        texts = [str(v) for v in value.reshape(-1)]
    texts = [t if ok else "?" for t, ok in zip(texts, defined.reshape(-1))]
    width = max((len(t) for t in texts), default=1)
    cells = np.array([t.ljust(width) if floats else t.rjust(width) for t in texts],
                     dtype=object).reshape(value.shape)
    if value.ndim == 0:
        return str(cells[()]).strip()
    return np.array2string(cells, formatter={"all": lambda s: s}, max_line_width=100)


def side_by_side(blocks: Mapping[str, str], width: Optional[int] = None, gap: int = 3) -> str:
    """Blocks of text next to each other, each under its title; returns the text."""
    columns = [[title, "-" * len(title)] + str(text).splitlines() for title, text in blocks.items()]
    widths = [width or max(len(line) for line in col) for col in columns]
    height = max(len(col) for col in columns)
    lines = []
    for r in range(height):
        parts = []
        for col, w in zip(columns, widths):
            cell = col[r] if r < len(col) else ""
            parts.append(cell[:w].ljust(w))
        lines.append((" " * gap).join(parts).rstrip())
    return "\n".join(lines)


def _wrap(text, width):
    import textwrap
    return "\n".join(textwrap.wrap(text, width))
