"""How an export writes each core layer that is not a loop as ONNX nodes: the op tables
(`ELEMENTWISE`, `UNARY`, `REDUCE`) and `LayerTranslation`, the part of the Exporter that
emits one layer (constants, element-wise and unary ops, activations, casts, matrix
multiplies, shuffles, slices, reductions, and if-conditional outputs as If nodes).
"""
from __future__ import annotations

from typing import List

import numpy as np
from onnx import TensorProto

from ..core.enums import (ActivationType as Act, ElementWiseOperation as Op, LayerType,
                          MatrixOperation as M, ReduceOperation as R, UnaryOperation as U)
from ..core.export import NotExportable
from .export_graph import INT64_MIN, Graph, onnx_dtype, value_info

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


class LayerTranslation:
    """Writes the non-loop layers of one export (`export.Exporter`, the collaborator whose
    `name`, `names`, `fresh` and `opset` it uses)."""

    def __init__(self, exporter):
        self.exporter = exporter

    def emit_layer(self, g: Graph, layer, subst=None) -> None:
        """Emit one non-loop layer; `subst` maps id(tensor) -> name for the WHILE cones."""
        def arg(t):
            if subst is not None and id(t) in subst:
                return subst[id(t)]
            return self.exporter.name(t)
        out = layer._outputs[0]
        name = self.translate(g, layer, [None if t is None else arg(t) for t in layer.inputs()])
        if subst is not None:
            subst[id(out)] = name
        else:
            self.exporter.names[id(out)] = name

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
        if op == "ReduceSum" or self.exporter.opset >= 18:
            return g.op(op, [x, g.i64(axes)], base=layer.name, keepdims=keep)
        return g.op(op, [x], base=layer.name, axes=axes, keepdims=keep)

    def conditional(self, g, layer, a):
        cond = self.exporter.name(layer.conditional.condition.get_input(0))
        out_type = layer._outputs[0].type
        branches = []
        for which, value in (("then", a[0]), ("else", a[1])):
            b = Graph(self.exporter, self.exporter.fresh(f"{layer.name}_{which}"))
            out = b.op("Identity", [value], base=which)
            b.outputs.append(value_info(out, out_type))
            branches.append(b.make())
        return g.op("If", [cond], base=layer.name, then_branch=branches[0],
                    else_branch=branches[1])
