"""A backend with two faults planted on purpose, for notebook 7: a plug-in backend that
`lazyloop check --backend lazyloop.teach.planted:two_faults` names as module:factory
(spec/51-difftest.md, "Plug-ins").

It is lazyloop's own ONNX frontend (correct by construction, so every finding is a planted
fault) behind two rewrites of the model, the kind of mistakes a real runtime makes:

- every ONNX `Loop` with a trip count `M` runs `M + 1` trips (`dt.TripCountPlusOne`), which
  breaks `onnx/loop` and `trip/count`/`trip/both`;
- every `Scan` reads its scan inputs front to back, whatever `scan_input_directions` says: a
  reversed input is read forward, which breaks `iterator/reverse`.

The two touch different loop constructs, so the documented root-cause key (format, loop
constructs, control rules, what went wrong) keeps them apart as two findings.
"""
from __future__ import annotations

NAME = "planted-faults"


class ScanInputsReadForward:
    """Every Scan of the model (nested graphs too) loses its `scan_input_directions`, so a
    reversed scan input is read forward."""

    format = "onnx"
    formats = ("onnx",)

    def __init__(self, inner):
        self.inner = inner
        self.name = f"{inner.name}+scan-inputs-read-forward"

    def run(self, model, feeds):
        import onnx

        from ..difftest.backends import _onnx_bytes
        model = onnx.ModelProto.FromString(_onnx_bytes(model))
        _drop_scan_directions(model.graph)
        return self.inner.run(model, feeds)


def _drop_scan_directions(graph) -> None:
    import onnx
    for node in graph.node:
        for a in node.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                _drop_scan_directions(a.g)
        if node.op_type == "Scan":
            kept = [a for a in node.attribute if a.name != "scan_input_directions"]
            del node.attribute[:]
            node.attribute.extend(kept)


def two_faults():
    """The factory: lazyloop's ONNX frontend with both planted faults."""
    import lazyloop.difftest as dt
    b = dt.TripCountPlusOne(ScanInputsReadForward(dt.backend("lazyloop")))
    b.name = NAME
    return b
