"""A core network as an equivalent ONNX model.

    model = lazyloop.onnx.export.export(net, opset=17, scan=False, cond="omit")

How each core construct is written in ONNX (the rule the translation keeps in parentheses):

* a loop becomes a `Loop` node (`onnx/loop`): its COUNT limit is `M` (cast to int64), its
  WHILE limit the `cond` input and the body's condition output; recurrences are loop-carried
  values (`recurrence/def`), LAST_VALUE of a recurrence is the carried value's final value
  (`output/last`). A loop without WHILE either omits `cond` (``cond="omit"``, the body passes
  its condition input through: A9) or passes a constant true (``cond="true"``).
* the WHILE input X is computed twice, as ONNX requires: once before the loop from the
  recurrences' initial values (X0) and once at the end of each trip from their next values
  (X_{i+1}); `trip/while` forces exactly those elements.
* an iterator is a `Gather` of the iteration number on its axis (`iterator/forward`), or of
  extent-1-i when reverse (`iterator/reverse`, reading A2 "guide");
* CONCATENATE/REVERSE is a scan output (stacked on a new axis 0), reversed with a `Slice` of
  step -1 for REVERSE, post-padded with `Pad` to the length Y (`output/concat`: the padding
  is undefined; A1 "padding-after": reversed values first), and moved to its axis with
  `Transpose`;
* with ``scan=True`` a loop that is a plain scan (a constant COUNT equal to the extent of every
  iterator, no WHILE) becomes a `Scan` node instead (`onnx/scan9`): iterators are scan inputs
  with their axes and directions, CONCATENATE/REVERSE scan outputs with their axes and
  directions (REVERSE = prepend), padding again by `Pad`;
* if-conditionals become `If` nodes whose branches return the chosen value;
* every other layer is the ONNX op of the same meaning (table `ELEMENTWISE`, `UNARY`, ...).

Function layers (opaque Python functions) are not exportable.

export_graph.py holds the graph under construction, export_layers.py the layer translations
and export_loops.py the Loop and Scan forms, each a collaborator of the Exporter here, which
walks the network; and the public `export` and `loop_forms`.
"""
from __future__ import annotations

from typing import Dict, Optional

import onnx
from onnx import helper

from ..core.export import NotExportable
from ..core.export import Structure
from .export_graph import INT64_MIN, Graph, onnx_dtype, value_info  # noqa: F401 -- re-exported
from .export_layers import ELEMENTWISE, REDUCE, UNARY, LayerTranslation  # noqa: F401
from .export_loops import LoopEmission

DEFAULT_OPSET = 17


def ir_version_for(opset: int) -> int:
    """The oldest IR version that carries `opset` (runtimes refuse IR versions they do not
    know, so the export does not claim a newer one than it needs)."""
    best = None
    for _, ir, op, *_ in helper.VERSION_TABLE:
        if op >= opset and (best is None or ir < best):
            best = ir
    return best or onnx.IR_VERSION


class Exporter:
    """One export of a network: the ONNX names of its tensors and the walk over its scopes;
    its collaborators write the layers (`layers`, export_layers.LayerTranslation) and the
    loops (`loops`, export_loops.LoopEmission)."""

    def __init__(self, net, opset: int = DEFAULT_OPSET, scan: bool = False,
                 cond: str = "omit", name: str = "lazyloop_export"):
        if opset < 13:
            raise NotExportable("export", "onnx/loop", f"opset {opset} is too old",
                                "export with opset >= 13")
        if cond not in ("omit", "true"):
            raise NotExportable("export", "onnx/loop", f"unknown cond mode {cond!r}",
                                "use cond='omit' or cond='true'")
        self.net = net
        self.s = Structure(net)
        self.opset = opset
        self.scan = scan
        self.cond_mode = cond
        self.model_name = name
        self.names: Dict[int, str] = {}  # id(tensor) -> its ONNX name
        self.used = {t.name for t in net._inputs} | {t.name for t in net._outputs}
        self.counter = 0
        self.loop_forms: Dict[str, str] = {}
        self.layers = LayerTranslation(self)
        self.loops = LoopEmission(self)

    def fresh(self, base: str) -> str:
        base = "".join(c if c.isalnum() or c in "_." else "_" for c in base) or "t"
        while True:
            self.counter += 1
            name = f"{base}_{self.counter}"
            if name not in self.used:
                self.used.add(name)
                return name

    def name(self, tensor) -> str:
        try:
            return self.names[id(tensor)]
        except KeyError:  # pragma: no cover -- the scope order guarantees it
            raise NotExportable(f"tensor {tensor.name!r}", "structure/nesting",
                                "is read before it is computed", "") from None

    # -- the model ----------------------------------------------------------------------------
    def export(self) -> onnx.ModelProto:
        g = Graph(self, self.model_name)
        for t in self.net._inputs:
            self.names[id(t)] = t.name
            g.inputs.append(value_info(t.name, t.type))
        self.emit_scope(g, None)
        for t in self.net._outputs:
            g.nodes.append(helper.make_node("Identity", [self.name(t)], [t.name],
                                            name=self.fresh("n_output")))
            g.outputs.append(value_info(t.name, t.type))
        model = helper.make_model(g.make(), producer_name="lazyloop.export",
                                  opset_imports=[helper.make_opsetid("", self.opset)])
        model.ir_version = ir_version_for(self.opset)
        return model

    def emit_scope(self, g: Graph, scope: Optional[str]) -> None:
        for kind, obj in self.s.items(scope):
            if kind == "layer":
                self.layers.emit_layer(g, obj)
            elif self.scan and self.s.scan_fit(obj) is not None:
                self.loops.emit_scan(g, obj)
            else:
                self.loops.emit_loop(g, obj)


def export(net, opset: int = DEFAULT_OPSET, scan: bool = False, cond: str = "omit",
           name: str = "lazyloop_export", check: bool = True) -> onnx.ModelProto:
    """The ONNX model equivalent to `net` (see the module docstring). `scan=True` writes plain
    scans as Scan nodes; `cond` says how a loop without WHILE passes its condition ("omit" or
    "true"). The model is checked with `onnx.checker` unless `check=False`."""
    exporter = Exporter(net, opset=opset, scan=scan, cond=cond, name=name)
    model = exporter.export()
    if check:
        onnx.checker.check_model(model, full_check=False)
    return model


def loop_forms(net, **options) -> Dict[str, str]:
    """Which ONNX op each loop of `net` is exported as ({"loop0": "Loop" | "Scan"})."""
    exporter = Exporter(net, **options)
    exporter.export()
    return dict(exporter.loop_forms)
