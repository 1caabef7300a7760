"""Reducing an OpenVINO finding's model, as IR (spec/51-difftest.md, "Minimal cases"): the
counterpart of minimize.py for models that are OpenVINO IR text and weights.

An edited IR is valid when OpenVINO's own reader reads it back (`Core().read_model`, through
`lazyloop.openvino.ir.read_ir`: a negative port-map axis too) and lazyloop evaluates it. The edits, tried in this order in passes until a pass keeps none:

- drop every layer no edge leaves (but Results, and the Parameters and Results a loop's port
  map names), and every model input nothing reads;
- drop a model output (one always stays);
- drop a loop's input whose body Parameter nothing reads, or an output nothing reads, with
  its port-map entry (and the back edge and body Result only it used);
- drop one layer, the source of one of its inputs (the first, then the others) taking its
  place for every reader of its first output (where the two ports have the same precision
  and rank; the reader infers the dimensions again);
- turn a model input into a constant holding the value it was fed;
- set one constant's bytes to zeros.

A loop's trip count and execution condition (its ports 0 and 1) are not edited, nor are the
special body ports (current iteration, condition) renumbered.
"""
from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Callable, List, Optional, Tuple

import numpy as np

from .passes import passes

Case = Tuple[Tuple[bytes, bytes], dict]  # ((IR text, weights), feeds)

_PRECISIONS = {"FP32": np.float32, "FP16": np.float16, "FP64": np.float64, "I64": np.int64,
               "I32": np.int32, "I16": np.int16, "I8": np.int8, "U8": np.uint8,
               "BOOL": np.bool_}
_ELEMENT_TYPES = {np.dtype(np.float32): "f32", np.dtype(np.float16): "f16",
                  np.dtype(np.float64): "f64", np.dtype(np.int64): "i64",
                  np.dtype(np.int32): "i32", np.dtype(np.int16): "i16",
                  np.dtype(np.int8): "i8", np.dtype(np.uint8): "u8",
                  np.dtype(np.bool_): "boolean"}


def node_count(xml: bytes) -> int:
    """Layers of an IR (bodies too), Parameters and Results left out."""
    return sum(1 for layer in ET.fromstring(xml).iter("layer")
               if layer.get("type") not in ("Parameter", "Result"))


# ------------------------------------------------------------------------------------------
# Graphs of an IR: the top one and each loop body, addressed by the path of layer ids
# ------------------------------------------------------------------------------------------


def _graphs(root, path=()):
    """(path, the element holding <layers> and <edges>) for the net and every body in it."""
    yield path, root
    for layer in root.find("layers"):
        body = layer.find("body")
        if body is not None:
            yield from _graphs(body, path + (layer.get("id"),))


def _graph(root, path):
    """The graph at `path`, or None when an edit kept earlier in the pass removed it (the
    edits of a pass are listed once, from the IR the pass started with, and OpenVINO
    renumbers the layers when it writes an edited IR back)."""
    graph = root
    for lid in path:
        loop = _layer(graph, lid)
        graph = None if loop is None else loop.find("body")
        if graph is None:
            return None
    return graph


def _layer(graph, lid):
    if graph is None:
        return None
    return next((l for l in graph.find("layers") if l.get("id") == lid), None)


def _edges(graph):
    return list(graph.find("edges"))


def _port_mapped(root) -> dict:
    """{body path: ids of its layers a port map or back edge names}."""
    kept = {}
    for path, graph in _graphs(root):
        for layer in graph.find("layers"):
            if layer.find("body") is None:
                continue
            ids = set()
            for tag in ("port_map", "back_edges"):
                part = layer.find(tag)
                if part is not None:
                    for e in part:
                        ids |= {e.get(k) for k in ("internal_layer_id", "from-layer",
                                                   "to-layer") if e.get(k) is not None}
            kept[path + (layer.get("id"),)] = ids
    return kept


def _ports(layer, tag):
    part = layer.find(tag)
    return [] if part is None else list(part)


def _port_type(layer, port_id) -> str:
    """A port's precision and rank (its dimensions OpenVINO infers again when it reads)."""
    for tag in ("input", "output"):
        for port in _ports(layer, tag):
            if port.get("id") == port_id:
                return f"{port.get('precision', '?')}/{len(port.findall('dim'))}"
    return "?"


def _text(root) -> bytes:
    return ET.tostring(root)


# ------------------------------------------------------------------------------------------
# The edits
# ------------------------------------------------------------------------------------------


def without_dead_layers(case: Case) -> Optional[Case]:
    (xml, weights), feeds = case
    root = ET.fromstring(xml)
    mapped = _port_mapped(root)
    feeds = dict(feeds)
    dropped = False
    while True:
        changed = False
        for path, graph in _graphs(root):
            sources = {e.get("from-layer") for e in _edges(graph)}
            for layer in list(graph.find("layers")):
                lid, kind = layer.get("id"), layer.get("type")
                if kind == "Result" or lid in sources or lid in mapped.get(path, ()):
                    continue
                if kind == "Parameter":
                    if path:  # a body Parameter not in the port map: nothing feeds it
                        continue
                    feeds.pop(layer.get("name"), None)
                _drop_layer(graph, layer)
                changed = dropped = True
        if not changed:
            break
    return ((_text(root), weights), feeds) if dropped else None


def _drop_layer(graph, layer) -> None:
    lid = layer.get("id")
    graph.find("layers").remove(layer)
    edges = graph.find("edges")
    for e in list(edges):
        if lid in (e.get("from-layer"), e.get("to-layer")):
            edges.remove(e)


def without_layer(path: tuple, lid: str, k: int = 0) -> Callable[[Case], Optional[Case]]:
    """Layer `lid` of the graph at `path` dropped; the source of its input `k` (the first by
    default) feeds every reader of its first output (its other outputs must be unread)."""
    def edit(case):
        (xml, weights), feeds = case
        root = ET.fromstring(xml)
        graph = _graph(root, path)
        layer = _layer(graph, lid)
        if layer is None or layer.get("type") in ("Parameter", "Result") or \
                lid in _port_mapped(root).get(path, ()):
            return None
        inputs, outputs = _ports(layer, "input"), _ports(layer, "output")
        if len(inputs) <= k or not outputs:
            return None
        first_in, first_out = inputs[k].get("id"), outputs[0].get("id")
        edges = _edges(graph)
        feeding = [e for e in edges if e.get("to-layer") == lid and e.get("to-port") == first_in]
        reading = [e for e in edges if e.get("from-layer") == lid]
        if len(feeding) != 1 or any(e.get("from-port") != first_out for e in reading):
            return None
        source = _layer(graph, feeding[0].get("from-layer"))
        if _port_type(source, feeding[0].get("from-port")) != _port_type(layer, first_out):
            return None  # rewiring would change a value's precision or rank
        for e in reading:
            e.set("from-layer", feeding[0].get("from-layer"))
            e.set("from-port", feeding[0].get("from-port"))
        for e in edges:
            if e.get("to-layer") == lid:
                graph.find("edges").remove(e)
        graph.find("layers").remove(layer)
        return (_text(root), weights), feeds
    return edit


def without_loop_port(path: tuple, lid: str, port: str) -> Callable[[Case], Optional[Case]]:
    """A loop's input whose body Parameter nothing in the body reads (but the Results of back
    edges), or an output nothing outside reads, dropped with its port-map entry (and the back
    edges and body Results only it used). The trip count and execution condition (ports 0
    and 1) stay."""
    def edit(case):
        (xml, weights), feeds = case
        root = ET.fromstring(xml)
        graph = _graph(root, path)
        loop = _layer(graph, lid)
        if loop is None or loop.find("port_map") is None or port in ("0", "1"):
            return None
        body, port_map = loop.find("body"), loop.find("port_map")
        entry = next((e for e in port_map if e.get("external_port_id") == port), None)
        if entry is None:
            return None
        inner = entry.get("internal_layer_id")
        if entry.tag == "input":
            back = loop.find("back_edges")
            back = [] if back is None else list(back)
            outputs = {e.get("internal_layer_id") for e in port_map if e.tag == "output"}
            fed = {e.get("to-layer") for e in _edges(body) if e.get("from-layer") == inner}
            if any(_layer(body, r).get("type") != "Result" or r in outputs for r in fed):
                return None  # the body reads it (more than to feed a back edge)
            for e in back:  # its own back edge, and those only it fed
                if e.get("to-layer") == inner or e.get("from-layer") in fed:
                    loop.find("back_edges").remove(e)
            _drop_layer(body, _layer(body, inner))
            side, where = "input", "to"
        else:
            if any(e.get("from-layer") == lid and e.get("from-port") == port
                   for e in _edges(graph)):
                return None  # read outside the loop
            side, where = "output", "from"
        port_map.remove(entry)
        _drop_unmapped_results(loop)
        loop.find(side).remove(next(p for p in _ports(loop, side) if p.get("id") == port))
        for e in _edges(graph):
            if e.get(f"{where}-layer") == lid and e.get(f"{where}-port") == port:
                graph.find("edges").remove(e)
        return (_text(root), weights), feeds
    return edit


def _drop_unmapped_results(loop) -> None:
    """Body Results neither a port map entry nor a back edge names any more."""
    body = loop.find("body")
    named = {e.get("internal_layer_id") for e in loop.find("port_map")}
    if loop.find("back_edges") is not None:
        named |= {e.get("from-layer") for e in loop.find("back_edges")}
    for layer in list(body.find("layers")):
        if layer.get("type") == "Result" and layer.get("id") not in named:
            _drop_layer(body, layer)


def without_result(lid: str) -> Callable[[Case], Optional[Case]]:
    """A model output dropped (one always stays)."""
    def edit(case):
        (xml, weights), feeds = case
        root = ET.fromstring(xml)
        results = [l for l in root.find("layers") if l.get("type") == "Result"]
        layer = _layer(root, lid)
        if layer is None or layer.get("type") != "Result" or len(results) < 2:
            return None
        _drop_layer(root, layer)
        return (_text(root), weights), feeds
    return edit


def parameter_as_constant(lid: str) -> Callable[[Case], Optional[Case]]:
    """A model input turned into a Const holding the value it was fed (appended to the
    weights)."""
    def edit(case):
        (xml, weights), feeds = case
        root = ET.fromstring(xml)
        layer = _layer(root, lid)
        if layer is None or layer.get("type") != "Parameter":
            return None
        name = layer.get("name")
        value = feeds.get(name)
        if value is None or isinstance(value, list):
            return None
        value = np.ascontiguousarray(value)
        element = _ELEMENT_TYPES.get(value.dtype)
        if element is None:
            return None
        data = layer.find("data")
        layer.set("type", "Const")
        layer.set("version", "opset1")
        data.attrib.clear()
        data.set("element_type", element)
        data.set("shape", ",".join(str(d) for d in value.shape))
        data.set("offset", str(len(weights)))
        data.set("size", str(value.nbytes))
        return (_text(root), weights + value.tobytes()), \
            {k: v for k, v in feeds.items() if k != name}
    return edit


def constant_zeros(path: tuple, lid: str) -> Callable[[Case], Optional[Case]]:
    """A Const's bytes in the weights set to zeros."""
    def edit(case):
        (xml, weights), feeds = case
        root = ET.fromstring(xml)
        layer = _layer(_graph(root, path), lid)
        if layer is None or layer.get("type") != "Const":
            return None
        data = layer.find("data")
        offset, size = int(data.get("offset", 0)), int(data.get("size", 0))
        if size == 0 or not any(weights[offset:offset + size]):
            return None
        return (xml, weights[:offset] + bytes(size) + weights[offset + size:]), feeds
    return edit


def edits(payload) -> List[Tuple[str, Callable]]:
    """(what, edit) for every edit of an IR, in the order the passes try them."""
    root = ET.fromstring(payload[0])
    found: List[Tuple[str, Callable]] = [("drop dead layers", without_dead_layers)]
    top = list(root.find("layers"))
    found += [(f"drop output {l.get('name')}", without_result(l.get("id")))
              for l in top if l.get("type") == "Result"]
    for path, graph in _graphs(root):
        found += [(f"drop port {p.get('id')} of loop {path}/{l.get('id')}",
                   without_loop_port(path, l.get("id"), p.get("id")))
                  for l in graph.find("layers") if l.find("port_map") is not None
                  for side in ("output", "input") for p in _ports(l, side)]
    for path, graph in _graphs(root):
        found += [(f"drop layer {path}/{l.get('id')} ({l.get('type')}) for its input {k}",
                   without_layer(path, l.get("id"), k))
                  for l in reversed(list(graph.find("layers")))
                  if l.get("type") not in ("Parameter", "Result", "Const")
                  for k in range(len(_ports(l, "input")))]
    found += [(f"input {l.get('name')} as a constant", parameter_as_constant(l.get("id")))
              for l in top if l.get("type") == "Parameter"]
    for path, graph in _graphs(root):
        found += [(f"zero constant {path}/{l.get('id')}", constant_zeros(path, l.get("id")))
                  for l in graph.find("layers") if l.get("type") == "Const"]
    return found


def readable(payload) -> bool:
    """OpenVINO's own reader reads the IR back."""
    from ..openvino.ir import read_ir
    try:
        read_ir(*payload)
        return True
    except Exception:  # noqa: BLE001
        return False


def rewritten(payload):
    """The IR as OpenVINO writes it after reading it (None when it cannot read it): what a
    case folder holds, so that the edits of the next pass see the IR a user will."""
    import os
    import tempfile

    import openvino as ov

    from ..openvino.ir import read_ir
    try:
        model = read_ir(*payload)
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "model.xml")
            ov.save_model(model, path, compress_to_fp16=False)
            with open(path, "rb") as f, open(os.path.join(tmp, "model.bin"), "rb") as w:
                return f.read(), w.read()
    except Exception:  # noqa: BLE001
        return None


def rewritten_edits(payload) -> List[Tuple[str, Callable]]:
    """`edits`, each giving the IR as OpenVINO writes it back (None where it cannot read it)."""
    def rewriting(edit):
        def edited(case):
            candidate = edit(case)
            if candidate is None:
                return None
            payload = rewritten(candidate[0])
            return None if payload is None else (payload, candidate[1])
        return edited
    return [(what, rewriting(edit)) for what, edit in edits(payload)]


def minimise(case: Case, keeps, steps: int = 300, stop=None) -> Tuple[Case, str]:
    """As minimize.minimise, for an IR case ((text, weights), feeds); every candidate is the
    IR as OpenVINO reads and writes it back (and so valid)."""
    start = rewritten(case[0])
    if start is None:
        return case, "unreadable"
    return passes((start, case[1]), keeps, rewritten_edits, lambda payload: True, steps, stop)


def one_minimal_violations(case: Case, keeps) -> List[str]:
    """As minimize.one_minimal_violations, for an IR case: the layers (but Parameters,
    Results and Consts) whose removal, rewired through their first input, keeps the IR
    readable and the symptom."""
    root = ET.fromstring(case[0][0])
    found = []
    for path, graph in _graphs(root):
        for layer in graph.find("layers"):
            if layer.get("type") in ("Parameter", "Result", "Const"):
                continue
            candidate = without_layer(path, layer.get("id"))(case)
            if candidate is not None and readable(candidate[0]) and keeps(candidate):
                found.append(f"{layer.get('type')} {'/'.join(path + (layer.get('id'),))}")
    return found
