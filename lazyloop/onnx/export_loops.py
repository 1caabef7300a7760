"""How an export writes each core loop: as an ONNX Loop node (`onnx/loop`), or, for a plain
scan when the export asks for Scan, as a Scan node (`onnx/scan9`). `LoopEmission`, a
collaborator of the Exporter, writes them: carried values, iterators, the WHILE input
computed before the loop and at the end of each trip, and scan outputs reversed, padded and
moved to their axis.
"""
from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper

from ..core.enums import LayerType, LoopOutput
from ..core.export import NotExportable, constant_value
from ..core.types import TensorType
from .export_graph import INT64_MIN, Graph, value_info


class LoopEmission:
    """Writes the loops of one export (`export.Exporter`, the collaborator whose `s`
    (the network's structure), `name`, `names`, `fresh`, `cond_mode`, `loop_forms`,
    `emit_scope` and `layers` it uses)."""

    def __init__(self, exporter):
        self.exporter = exporter

    def count_input(self, g, loop) -> str:
        count = self.exporter.s.count(loop)
        if count is None:
            return ""
        name = self.exporter.name(count)
        if count.type.shape == (1,):
            name = g.op("Squeeze", [name, g.i64([0])])
        if count.dtype != np.int64:
            name = g.op("Cast", [name], to=TensorProto.INT64, base="trip_count")
        return name

    def while_value(self, g, loop, x, values) -> str:
        """X computed in graph `g` with each recurrence of `loop` read as `values[id(rec)]`."""
        subst = {}
        for rec in loop.recurrences:
            subst[id(rec.get_output(0))] = values[id(rec)]
        if id(x) in subst:
            return subst[id(x)]
        for layer in self.exporter.s.while_cone(loop, x):
            self.exporter.layers.emit_layer(g, layer, subst)
        return subst[id(x)] if id(x) in subst else self.exporter.name(x)

    def emit_loop(self, g: Graph, loop) -> None:
        """`onnx/loop`: the loop as an ONNX Loop node in the graph of its parent scope."""
        self.exporter.loop_forms[loop.name] = "Loop"
        body = Graph(self.exporter, self.exporter.fresh(f"{loop.name}_body"))
        it = self.exporter.fresh(f"{loop.name}_i")
        cond_in = self.exporter.fresh(f"{loop.name}_cond_in")
        body.inputs += [helper.make_tensor_value_info(it, TensorProto.INT64, []),
                        helper.make_tensor_value_info(cond_in, TensorProto.BOOL, [])]
        carried = []  # (init name in g, body input name, type, next tensor or None)
        for rec in loop.recurrences:
            t = rec.get_output(0)
            name = self.exporter.fresh(rec.name)
            self.exporter.names[id(t)] = name
            body.inputs.append(value_info(name, t.type))
            carried.append((self.exporter.name(rec.get_input(0)), name, t.type, rec.get_input(1)))
        # LAST_VALUE of a non-recurrence (relaxed profiles): a carried value with an undefined
        # start whose next value is the source, i.e. Y_{n-1}.
        extra_last = {}
        for out in loop.outputs:
            src = out.get_input(0)
            p = src.producer
            if out.kind is LoopOutput.LAST_VALUE and not (
                    p is not None and p.type is LayerType.RECURRENCE and p.loop is loop):
                ty = src.type
                if not isinstance(ty, TensorType) or not ty.is_static:
                    raise NotExportable(f"loop output {out.name!r}", "output/last",
                                        "the last-trip value of a non-recurrence needs a "
                                        "static shape to carry", "")
                init = g.const(np.zeros(ty.shape, ty.dtype), base="undefined_start")
                name = self.exporter.fresh(f"{out.name}_carry")
                body.inputs.append(value_info(name, ty))
                carried.append((init, name, ty, src))
                extra_last[id(out)] = len(carried) - 1
        for itl in loop.iterators:
            self.exporter.names[id(itl.get_output(0))] = self.iterate(body, itl, it)
        # the condition before the first trip, from the recurrences' initial values
        x = self.exporter.s.while_input(loop)
        cond_init = ""
        if x is not None:
            inits = {id(rec): self.exporter.name(rec.get_input(0)) for rec in loop.recurrences}
            cond_init = self.while_value(g, loop, x, inits)
        elif self.exporter.cond_mode == "true":
            cond_init = g.const(np.array(True))
        self.exporter.emit_scope(body, loop.name)
        # body outputs: condition, next values, scan elements
        if x is not None:
            nexts = {id(rec): self.exporter.name(rec.get_input(1)) for rec in loop.recurrences}
            cond_out = self.while_value(body, loop, x, nexts)
        else:
            cond_out = cond_in
        outs = [(cond_out, TensorType(np.bool_, ()))]
        for _, _, ty, nxt in carried:
            outs.append((self.exporter.name(nxt), ty))
        scans = [o for o in loop.outputs if o.kind is not LoopOutput.LAST_VALUE]
        for o in scans:
            outs.append((self.exporter.name(o.get_input(0)), o.get_input(0).type))
        for value, ty in outs:
            out = body.op("Identity", [value], base="body_out")
            body.outputs.append(value_info(out, ty))
        inputs = [self.count_input(g, loop), cond_init] + [c[0] for c in carried]
        results = g.op("Loop", inputs, n_out=len(carried) + len(scans), base=loop.name,
                       body=body.make())
        results = [results] if isinstance(results, str) else results
        finals = results[:len(carried)]
        stacked = dict(zip((id(o) for o in scans), results[len(carried):]))
        rec_index = {id(rec): k for k, rec in enumerate(loop.recurrences)}
        for o in loop.outputs:
            if o.kind is LoopOutput.LAST_VALUE:
                k = extra_last.get(id(o))
                if k is None:
                    k = rec_index[id(o.get_input(0).producer)]
                self.exporter.names[id(o.get_output(0))] = g.op("Identity", [finals[k]],
                                                                base=o.name)
            else:
                self.exporter.names[id(o.get_output(0))] = self.finish_scan_output(
                    g, o, stacked[id(o)])

    def iterate(self, body: Graph, itl, it: str) -> str:
        """`iterator/forward` / `iterator/reverse`: element i is X[i] (or X[L-1-i]) on the
        iterator's axis, a Gather of a 0-D index (which drops the axis)."""
        src = self.exporter.name(itl.get_input(0))
        index = it
        if itl.reverse:
            extent = itl.get_input(0).shape[itl.axis]
            if extent is None:
                shape = body.op("Shape", [src])
                dim = body.op("Gather", [shape, body.const(np.array(itl.axis, np.int64))])
                last = body.op("Sub", [dim, body.const(np.array(1, np.int64))])
            else:
                last = body.const(np.array(extent - 1, np.int64))
            index = body.op("Sub", [last, it])
        return body.op("Gather", [src, index], base=itl.name, axis=itl.axis)

    def finish_scan_output(self, g: Graph, o, stacked: str) -> str:
        """From the values stacked on axis 0 to the CONCATENATE/REVERSE output: reverse,
        post-pad to the length, move axis 0 to the output's axis."""
        rank = o.get_output(0).type.rank
        x = stacked
        if o.kind is LoopOutput.REVERSE:
            x = g.op("Slice", [x, g.i64([-1]), g.i64([INT64_MIN]), g.i64([0]), g.i64([-1])])
        length = o.get_input(1) if o.num_inputs > 1 else None
        if length is not None:
            x = self.pad_to(g, x, length, 0, rank)
        if o.axis != 0:
            perm = list(range(1, rank))
            perm.insert(o.axis, 0)
            x = g.op("Transpose", [x], perm=perm)
        return g.op("Identity", [x], base=o.name)

    def pad_to(self, g: Graph, x: str, length, axis: int, rank: int, static_n=None) -> str:
        """Post-pad axis `axis` of x to `length` (zeros: the padding is undefined)."""
        y = constant_value(length)
        if static_n is not None and y is not None:
            pads = [0] * (2 * rank)
            pads[rank + axis] = y - static_n
            if y == static_n:
                return x
            return g.op("Pad", [x, g.i64(pads)])
        yname = self.exporter.name(length)
        if length.type.shape == (1,):
            yname = g.op("Squeeze", [yname, g.i64([0])])
        if length.dtype != np.int64:
            yname = g.op("Cast", [yname], to=TensorProto.INT64)
        n = g.op("Gather", [g.op("Shape", [x]), g.const(np.array(axis, np.int64))])
        amount = g.op("Reshape", [g.op("Sub", [yname, n]), g.i64([1])])
        pads = g.op("Concat", [g.i64([0] * (rank + axis)), amount,
                               g.i64([0] * (rank - axis - 1))], axis=0)
        return g.op("Pad", [x, pads])

    def emit_scan(self, g: Graph, loop) -> None:
        """`onnx/scan9`: a plain scan as an ONNX Scan node."""
        self.exporter.loop_forms[loop.name] = "Scan"
        count = self.exporter.s.scan_fit(loop)
        body = Graph(self.exporter, self.exporter.fresh(f"{loop.name}_body"))
        inits = []
        for rec in loop.recurrences:
            t = rec.get_output(0)
            name = self.exporter.fresh(rec.name)
            self.exporter.names[id(t)] = name
            body.inputs.append(value_info(name, t.type))
            inits.append(self.exporter.name(rec.get_input(0)))
        sources, axes, directions = [], [], []
        for itl in loop.iterators:
            t = itl.get_output(0)
            name = self.exporter.fresh(itl.name)
            self.exporter.names[id(t)] = name
            body.inputs.append(value_info(name, t.type))
            sources.append(self.exporter.name(itl.get_input(0)))
            axes.append(itl.axis)
            directions.append(int(itl.reverse))
        self.exporter.emit_scope(body, loop.name)
        for rec in loop.recurrences:
            out = body.op("Identity", [self.exporter.name(rec.get_input(1))], base="body_out")
            body.outputs.append(value_info(out, rec.get_output(0).type))
        scans = [o for o in loop.outputs if o.kind is not LoopOutput.LAST_VALUE]
        for o in scans:
            out = body.op("Identity", [self.exporter.name(o.get_input(0))], base="body_out")
            body.outputs.append(value_info(out, o.get_input(0).type))
        attrs = dict(num_scan_inputs=len(sources), scan_input_axes=axes,
                     scan_input_directions=directions)
        if scans:
            attrs["scan_output_axes"] = [o.axis for o in scans]
            attrs["scan_output_directions"] = [int(o.kind is LoopOutput.REVERSE) for o in scans]
        results = g.op("Scan", inits + sources, n_out=len(inits) + len(scans), base=loop.name,
                       body=body.make(), **attrs)
        results = [results] if isinstance(results, str) else results
        rec_index = {id(rec): k for k, rec in enumerate(loop.recurrences)}
        stacked = dict(zip((id(o) for o in scans), results[len(inits):]))
        for o in loop.outputs:
            if o.kind is LoopOutput.LAST_VALUE:
                k = rec_index[id(o.get_input(0).producer)]
                self.exporter.names[id(o.get_output(0))] = g.op("Identity", [results[k]],
                                                                base=o.name)
                continue
            x = stacked[id(o)]
            length = o.get_input(1) if o.num_inputs > 1 else None
            if length is not None:
                x = self.pad_to(g, x, length, o.axis, o.get_output(0).type.rank, count)
            self.exporter.names[id(o.get_output(0))] = g.op("Identity", [x], base=o.name)
