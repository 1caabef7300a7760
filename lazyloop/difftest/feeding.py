"""How a built-in adapter (and every repro.py) feeds an engine: every input the model declares
to the engine's input that names it, as a writable, C-contiguous copy (an engine may write
into its inputs or read them with strides of its own); an input the engine lost is
`InputLost` (spec/51-difftest.md, "The harness"). The built-in backends and the engines
users deploy (`engines/`) share this one module."""
from __future__ import annotations

import numpy as np

from .errors import InputLost


def writable(value):
    """A writable, C-contiguous copy of a feed (a sequence element by element; an empty
    optional stays None): what an engine is handed never aliases lazyloop's arrays or
    read-only buffers."""
    if value is None:
        return None
    if isinstance(value, (list, tuple)):
        return [writable(v) for v in value]
    return np.array(value, copy=True, order="C")


def port_values(declared, ports, feeds, given=frozenset(), unread=frozenset()) -> dict:
    """{port position: writable value} for an engine whose compiled model has input `ports`
    (each the set of names it answers to), for a model that declares inputs `declared` (in
    order). Every declared input is fed, none is skipped silently: a port takes the declared
    input it names; a declared input that no port names was lost by the engine
    (`InputLost`: renamed when a port names nothing declared, dropped otherwise) -- unless the
    model reads it nowhere (`unread`: an engine may leave out an input nothing uses). A port
    that asks for an input the model does not declare is `InputLost` too; ports named only by
    initializers (`given`) keep their own values. A declared input without a feed was lost on
    the way (`InputLost`): the harness checks that it feeds every input before it hands a
    model on (`unfed`), so only a plug-in wrapping an adapter can drop or rename one."""
    named = {}
    for k, names in enumerate(ports):
        hit = [d for d in declared if d in names]
        if hit:
            named[k] = hit[0]
        elif names and set(names) <= set(given):
            named[k] = None
    spare = [k for k in range(len(ports)) if k not in named]
    for d in declared:
        if d in named.values() or d in unread:
            continue
        if spare:
            raise InputLost(f"the engine lost input `{d}`: its compiled model asks for "
                            f"{sorted(ports[spare[0]])} in its place")
        raise InputLost(f"the engine lost input `{d}`: its compiled model has no input of that "
                        f"name (its inputs: {[sorted(p) for p in ports]})")
    if spare:
        raise InputLost(f"the engine asks for input {sorted(ports[spare[0]])}, which the "
                        f"model does not declare")
    missing = [d for d in declared if d not in feeds and d in named.values()]
    if missing:
        raise InputLost(f"the engine lost input `{missing[0]}`: no value reached it (given: "
                        f"{sorted(feeds)})")
    return {k: writable(feeds[d]) for k, d in named.items() if d is not None}


def in_engine_order(model, takes, feeds, unread_may_go: bool = True) -> list:
    """The feeds of an ONNX `model` for an engine whose compiled model takes the inputs named
    `takes`, in its order (`port_values` with one name per input). `unread_may_go=False`:
    an engine that leaves out a declared input, even one nothing reads, lost it (a graph
    optimiser must keep the model's inputs: a caller feeding them would be refused)."""
    declared, given, unread = onnx_inputs(model)
    values = port_values(declared, [{name} for name in takes], feeds, given,
                         unread if unread_may_go else frozenset())
    return [values[k] for k in range(len(takes)) if k in values]


def unfed(model, feeds) -> list:
    """The inputs `model` (ONNX or OpenVINO) declares and reads that `feeds` has no value for:
    what the harness itself failed to feed (a `HarnessError`, never the engine's finding)."""
    declared, _, unread = model_inputs(model)
    return [d for d in declared if d not in feeds and d not in unread]


def onnx_inputs(model) -> tuple:
    """(the input names an ONNX model declares, in order; the initializer names; the declared
    inputs nothing in the model reads): inputs that are also initializers have a value
    already and are not declared inputs to feed."""
    graph = onnx_proto(model).graph
    given = {t.name for t in graph.initializer}
    declared = [i.name for i in graph.input if i.name not in given]
    read = _onnx_reads(graph)
    return declared, given, {d for d in declared if d not in read}


def _onnx_reads(graph) -> set:
    """Every name a graph (its subgraphs too) reads: node inputs and graph outputs."""
    read = {o.name for o in graph.output}
    for node in graph.node:
        read.update(node.input)
        for a in node.attribute:
            for sub in ([a.g] if a.HasField("g") else []) + list(a.graphs):
                read |= _onnx_reads(sub)
    return read


def model_inputs(model) -> tuple:
    """(the inputs a model declares, in order; initializer names; the declared inputs nothing
    reads) of an ONNX model (`onnx_inputs`) or an OpenVINO model (its Parameters, by the name
    each is fed by)."""
    if not hasattr(model, "get_parameters"):
        return onnx_inputs(model)
    params = model.get_parameters()
    return [input_name(p.output(0)) for p in params], set(), \
        {input_name(p.output(0)) for p in params if not p.output(0).get_target_inputs()}


def input_name(output) -> str:
    """The name an OpenVINO model input is fed by: its tensor name (the only one lazyloop's
    exporter and OpenVINO's ONNX reader give it), else the Parameter's friendly name."""
    names = sorted(output.get_names())
    return names[0] if len(names) == 1 else output.get_node().get_friendly_name()


def onnx_proto(model):
    """An ONNX ModelProto from itself or its bytes."""
    if isinstance(model, bytes):
        import onnx
        return onnx.ModelProto.FromString(model)
    return model
