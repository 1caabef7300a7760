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
"""
from __future__ import annotations

from typing import Dict, List, Optional

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from ..core.enums import (ActivationType as Act, ElementWiseOperation as Op, LayerType, LoopOutput,
                     MatrixOperation as M, ReduceOperation as R, UnaryOperation as U)
from ..core.types import TensorType
from ..core.export import NotExportable
from ..core.export import Structure, constant_value

DEFAULT_OPSET = 17
INT64_MIN = np.iinfo(np.int64).min

ELEMENTWISE = {Op.SUM: "Add", Op.PROD: "Mul", Op.MAX: "Max", Op.MIN: "Min", Op.SUB: "Sub",
               Op.DIV: "Div", Op.POW: "Pow", Op.AND: "And", Op.OR: "Or", Op.XOR: "Xor",
               Op.EQUAL: "Equal", Op.GREATER: "Greater", Op.LESS: "Less"}
UNARY = {U.EXP: "Exp", U.LOG: "Log", U.SQRT: "Sqrt", U.RECIP: "Reciprocal", U.ABS: "Abs",
         U.NEG: "Neg", U.SIN: "Sin", U.COS: "Cos", U.TAN: "Tan", U.SINH: "Sinh",
         U.COSH: "Cosh", U.ASIN: "Asin", U.ACOS: "Acos", U.ATAN: "Atan", U.ASINH: "Asinh",
         U.ACOSH: "Acosh", U.ATANH: "Atanh", U.CEIL: "Ceil", U.FLOOR: "Floor", U.ERF: "Erf",
         U.NOT: "Not", U.SIGN: "Sign", U.ROUND: "Round"}
REDUCE = {R.SUM: "ReduceSum", R.PROD: "ReduceProd", R.MAX: "ReduceMax", R.MIN: "ReduceMin",
          R.AVG: "ReduceMean"}


def onnx_dtype(dtype) -> int:
    return helper.np_dtype_to_tensor_dtype(np.dtype(dtype))


def value_info(name: str, ty) -> onnx.ValueInfoProto:
    if not isinstance(ty, TensorType):
        raise NotExportable(f"tensor {name!r}", "stream/shape",
                            f"has the non-tensor type {ty!r}", "export tensors only")
    return helper.make_tensor_value_info(name, onnx_dtype(ty.dtype), list(ty.shape))


def ir_version_for(opset: int) -> int:
    """The oldest IR version that carries `opset` (runtimes refuse IR versions they do not
    know, so the export does not claim a newer one than it needs)."""
    best = None
    for _, ir, op, *_ in helper.VERSION_TABLE:
        if op >= opset and (best is None or ir < best):
            best = ir
    return best or onnx.IR_VERSION


class Graph:
    """One ONNX graph under construction: the model's main graph or a loop body."""

    def __init__(self, exporter: "Exporter", name: str):
        self.x = exporter
        self.name = name
        self.nodes: List[onnx.NodeProto] = []
        self.inputs: List[onnx.ValueInfoProto] = []
        self.outputs: List[onnx.ValueInfoProto] = []

    def op(self, op_type: str, inputs, n_out: int = 1, base: str = None, **attrs):
        outs = [self.x.fresh(base or op_type.lower()) for _ in range(n_out)]
        self.nodes.append(helper.make_node(op_type, list(inputs), outs,
                                           name=self.x.fresh("n_" + op_type), **attrs))
        return outs[0] if n_out == 1 else outs

    def const(self, value, base="c") -> str:
        value = np.asarray(value)
        return self.op("Constant", [], base=base,
                       value=numpy_helper.from_array(value, self.x.fresh("w")))

    def i64(self, values) -> str:
        return self.const(np.asarray(values, dtype=np.int64), base="i64")

    def make(self) -> onnx.GraphProto:
        return helper.make_graph(self.nodes, self.name, self.inputs, self.outputs)


class Exporter:
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
                self.emit_layer(g, obj)
            elif self.scan and self.s.scan_fit(obj) is not None:
                self.emit_scan(g, obj)
            else:
                self.emit_loop(g, obj)

    # -- layers -------------------------------------------------------------------------------
    def emit_layer(self, g: Graph, layer, subst=None) -> None:
        """Emit one non-loop layer; `subst` maps id(tensor) -> name for the WHILE cones."""
        def arg(t):
            if subst is not None and id(t) in subst:
                return subst[id(t)]
            return self.name(t)
        out = layer._outputs[0]
        name = self.translate(g, layer, [None if t is None else arg(t) for t in layer.inputs()])
        if subst is not None:
            subst[id(out)] = name
        else:
            self.names[id(out)] = name

    def translate(self, g: Graph, layer, a: List[str]) -> str:
        kind = layer.type
        out_type = layer._outputs[0].type
        if kind is LayerType.CONSTANT:
            return g.const(layer.weights, base=layer.name)
        if kind in (LayerType.IDENTITY, LayerType.CONDITIONAL_INPUT):
            return g.op("Identity", a[:1], base=layer.name)
        if kind is LayerType.ELEMENTWISE:
            return self.elementwise(g, layer, a)
        if kind is LayerType.UNARY:
            return g.op(UNARY[layer.op], a, base=layer.name)
        if kind is LayerType.ACTIVATION:
            return self.activation(g, layer, a[0])
        if kind is LayerType.CAST:
            return g.op("Cast", a, base=layer.name, to=onnx_dtype(layer.to_type))
        if kind is LayerType.SELECT:
            return g.op("Where", a, base=layer.name)
        if kind is LayerType.CONCATENATION:
            rank = out_type.rank
            axis = layer.axis + rank if layer.axis < 0 else layer.axis
            return g.op("Concat", a, base=layer.name, axis=axis)
        if kind is LayerType.GATHER:
            return g.op("Gather", a, base=layer.name, axis=layer.axis)
        if kind is LayerType.MATRIX_MULTIPLY:
            return self.matmul(g, layer, a)
        if kind is LayerType.SHUFFLE:
            return self.shuffle(g, layer, a[0])
        if kind is LayerType.SLICE:
            return self.slice(g, layer, a[0])
        if kind is LayerType.REDUCE:
            return self.reduce(g, layer, a[0])
        if kind is LayerType.CONDITIONAL_OUTPUT:
            return self.conditional(g, layer, a)
        raise NotExportable(f"layer {layer.name!r} ({kind.value})", "stream/map",
                            "has no ONNX translation (an opaque function layer)",
                            "build the network from TensorRT-style layers only")

    def elementwise(self, g, layer, a):
        dtype = layer.get_input(0).dtype
        if layer.op is Op.FLOOR_DIV:
            if np.issubdtype(dtype, np.floating):
                return g.op("Floor", [g.op("Div", a)], base=layer.name)
            as_f = [g.op("Cast", [x], to=TensorProto.DOUBLE) for x in a]
            q = g.op("Floor", [g.op("Div", as_f)])
            return g.op("Cast", [q], base=layer.name, to=onnx_dtype(dtype))
        return g.op(ELEMENTWISE[layer.op], a, base=layer.name)

    def activation(self, g, layer, x):
        kind, alpha, beta = layer.activation_type, float(layer.alpha), float(layer.beta)
        dtype = layer.get_input(0).dtype
        scalar = lambda v: g.const(np.asarray(v, dtype=dtype))  # noqa: E731
        base = layer.name
        if kind is Act.RELU:
            return g.op("Relu", [x], base=base)
        if kind is Act.SIGMOID:
            return g.op("Sigmoid", [x], base=base)
        if kind is Act.TANH:
            return g.op("Tanh", [x], base=base)
        if kind is Act.LEAKY_RELU:
            return g.op("LeakyRelu", [x], base=base, alpha=alpha)
        if kind is Act.ELU:
            return g.op("Elu", [x], base=base, alpha=alpha)
        if kind is Act.SELU:
            return g.op("Selu", [x], base=base, alpha=alpha, gamma=beta)
        if kind is Act.SOFTSIGN:
            return g.op("Softsign", [x], base=base)
        if kind is Act.SOFTPLUS:  # alpha * log(1 + exp(beta * x))
            inner = g.op("Softplus", [g.op("Mul", [x, scalar(beta)])])
            return g.op("Mul", [inner, scalar(alpha)], base=base)
        if kind is Act.CLIP:
            return g.op("Clip", [x, scalar(alpha), scalar(beta)], base=base)
        if kind is Act.HARD_SIGMOID:
            return g.op("HardSigmoid", [x], base=base, alpha=alpha, beta=beta)
        if kind is Act.SCALED_TANH:
            return g.op("Mul", [g.op("Tanh", [g.op("Mul", [x, scalar(beta)])]), scalar(alpha)],
                        base=base)
        if kind is Act.THRESHOLDED_RELU:
            return g.op("ThresholdedRelu", [x], base=base, alpha=alpha)
        raise NotExportable(f"layer {layer.name!r}", "stream/map",  # pragma: no cover
                            f"activation {kind.name} has no ONNX translation", "")

    def matmul(self, g, layer, a):
        x, y = a
        ra, rb = layer.get_input(0).type.rank, layer.get_input(1).type.rank

        def swap(v, rank):
            perm = list(range(rank))
            perm[-1], perm[-2] = perm[-2], perm[-1]
            return g.op("Transpose", [v], perm=perm)
        if layer.op0 is M.TRANSPOSE:
            x = swap(x, ra)
        if layer.op1 is M.TRANSPOSE:
            y = swap(y, rb)
        if layer.op0 is M.VECTOR:
            x = g.op("Unsqueeze", [x, g.i64([-2])])
        if layer.op1 is M.VECTOR:
            y = g.op("Unsqueeze", [y, g.i64([-1])])
        out = g.op("MatMul", [x, y])
        if layer.op1 is M.VECTOR:
            out = g.op("Squeeze", [out, g.i64([-1])])
        if layer.op0 is M.VECTOR:
            out = g.op("Squeeze", [out, g.i64([-1] if layer.op1 is M.VECTOR else [-2])])
        return g.op("Identity", [out], base=layer.name)

    def shuffle(self, g, layer, x):
        rank = layer.get_input(0).type.rank
        if layer.first_transpose is not None:
            x = g.op("Transpose", [x], perm=[int(p) for p in tuple(layer.first_transpose)[:rank]])
        if layer.reshape_dims is not None:
            dims = [int(d) for d in layer.reshape_dims]
            attrs = {} if layer.zero_is_placeholder else {"allowzero": 1}
            x = g.op("Reshape", [x, g.i64(dims)], **attrs)
            rank = len(dims)
        if layer.second_transpose is not None:
            x = g.op("Transpose", [x], perm=[int(p) for p in tuple(layer.second_transpose)[:rank]])
        return g.op("Identity", [x], base=layer.name)

    def slice(self, g, layer, x):
        starts, ends, steps = [], [], []
        for s, n, k in zip(layer.start, layer.shape, layer.stride):
            end = s + n * k
            if n == 0:
                end = s
            elif k < 0 and end < 0:
                end = INT64_MIN  # past the front: a negative end would count from the back
            starts.append(s)
            ends.append(end)
            steps.append(k)
        axes = list(range(len(starts)))
        if not axes:
            return g.op("Identity", [x], base=layer.name)
        return g.op("Slice", [x, g.i64(starts), g.i64(ends), g.i64(axes), g.i64(steps)],
                    base=layer.name)

    def reduce(self, g, layer, x):
        rank = layer.get_input(0).type.rank
        axes = list(layer.axis_list(rank))
        op = REDUCE[layer.op]
        keep = int(layer.keep_dims)
        if op == "ReduceSum" or self.opset >= 18:
            return g.op(op, [x, g.i64(axes)], base=layer.name, keepdims=keep)
        return g.op(op, [x], base=layer.name, axes=axes, keepdims=keep)

    def conditional(self, g, layer, a):
        cond = self.name(layer.conditional.condition.get_input(0))
        out_type = layer._outputs[0].type
        branches = []
        for which, value in (("then", a[0]), ("else", a[1])):
            b = Graph(self, self.fresh(f"{layer.name}_{which}"))
            out = b.op("Identity", [value], base=which)
            b.outputs.append(value_info(out, out_type))
            branches.append(b.make())
        return g.op("If", [cond], base=layer.name, then_branch=branches[0],
                    else_branch=branches[1])

    # -- loops --------------------------------------------------------------------------------
    def count_input(self, g, loop) -> str:
        count = self.s.count(loop)
        if count is None:
            return ""
        name = self.name(count)
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
        for layer in self.s.while_cone(loop, x):
            self.emit_layer(g, layer, subst)
        return subst[id(x)] if id(x) in subst else self.name(x)

    def emit_loop(self, g: Graph, loop) -> None:
        """`onnx/loop`: the loop as an ONNX Loop node in the graph of its parent scope."""
        self.loop_forms[loop.name] = "Loop"
        body = Graph(self, self.fresh(f"{loop.name}_body"))
        it = self.fresh(f"{loop.name}_i")
        cond_in = self.fresh(f"{loop.name}_cond_in")
        body.inputs += [helper.make_tensor_value_info(it, TensorProto.INT64, []),
                        helper.make_tensor_value_info(cond_in, TensorProto.BOOL, [])]
        carried = []  # (init name in g, body input name, type, next tensor or None)
        for rec in loop.recurrences:
            t = rec.get_output(0)
            name = self.fresh(rec.name)
            self.names[id(t)] = name
            body.inputs.append(value_info(name, t.type))
            carried.append((self.name(rec.get_input(0)), name, t.type, rec.get_input(1)))
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
                name = self.fresh(f"{out.name}_carry")
                body.inputs.append(value_info(name, ty))
                carried.append((init, name, ty, src))
                extra_last[id(out)] = len(carried) - 1
        for itl in loop.iterators:
            self.names[id(itl.get_output(0))] = self.iterate(body, itl, it)
        # the condition before the first trip, from the recurrences' initial values
        x = self.s.while_input(loop)
        cond_init = ""
        if x is not None:
            inits = {id(rec): self.name(rec.get_input(0)) for rec in loop.recurrences}
            cond_init = self.while_value(g, loop, x, inits)
        elif self.cond_mode == "true":
            cond_init = g.const(np.array(True))
        self.emit_scope(body, loop.name)
        # body outputs: condition, next values, scan elements
        if x is not None:
            nexts = {id(rec): self.name(rec.get_input(1)) for rec in loop.recurrences}
            cond_out = self.while_value(body, loop, x, nexts)
        else:
            cond_out = cond_in
        outs = [(cond_out, TensorType(np.bool_, ()))]
        for _, _, ty, nxt in carried:
            outs.append((self.name(nxt), ty))
        scans = [o for o in loop.outputs if o.kind is not LoopOutput.LAST_VALUE]
        for o in scans:
            outs.append((self.name(o.get_input(0)), o.get_input(0).type))
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
                self.names[id(o.get_output(0))] = g.op("Identity", [finals[k]], base=o.name)
            else:
                self.names[id(o.get_output(0))] = self.finish_scan_output(g, o, stacked[id(o)])

    def iterate(self, body: Graph, itl, it: str) -> str:
        """`iterator/forward` / `iterator/reverse`: element i is X[i] (or X[L-1-i]) on the
        iterator's axis, a Gather of a 0-D index (which drops the axis)."""
        src = self.name(itl.get_input(0))
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
        yname = self.name(length)
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
        self.loop_forms[loop.name] = "Scan"
        count = self.s.scan_fit(loop)
        body = Graph(self, self.fresh(f"{loop.name}_body"))
        inits = []
        for rec in loop.recurrences:
            t = rec.get_output(0)
            name = self.fresh(rec.name)
            self.names[id(t)] = name
            body.inputs.append(value_info(name, t.type))
            inits.append(self.name(rec.get_input(0)))
        sources, axes, directions = [], [], []
        for itl in loop.iterators:
            t = itl.get_output(0)
            name = self.fresh(itl.name)
            self.names[id(t)] = name
            body.inputs.append(value_info(name, t.type))
            sources.append(self.name(itl.get_input(0)))
            axes.append(itl.axis)
            directions.append(int(itl.reverse))
        self.emit_scope(body, loop.name)
        for rec in loop.recurrences:
            out = body.op("Identity", [self.name(rec.get_input(1))], base="body_out")
            body.outputs.append(value_info(out, rec.get_output(0).type))
        scans = [o for o in loop.outputs if o.kind is not LoopOutput.LAST_VALUE]
        for o in scans:
            out = body.op("Identity", [self.name(o.get_input(0))], base="body_out")
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
                self.names[id(o.get_output(0))] = g.op("Identity", [results[k]], base=o.name)
                continue
            x = stacked[id(o)]
            length = o.get_input(1) if o.num_inputs > 1 else None
            if length is not None:
                x = self.pad_to(g, x, length, o.axis, o.get_output(0).type.rank, count)
            self.names[id(o.get_output(0))] = g.op("Identity", [x], base=o.name)


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
