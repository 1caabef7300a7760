"""The OpenVINO (opset 13) nodes that stand for each single core layer:
constants, element-wise and unary ops, activations, casts, selects, concatenations, gathers,
matrix products, shuffles, slices, reductions and if-conditional outputs. `export.Exporter`
takes these methods from `LayerTranslation`; `_ops` gives the opset module.
"""
from __future__ import annotations

import numpy as np

from ..core.enums import (ActivationType as Act, ElementWiseOperation as Op, LayerType,
                          MatrixOperation as M, ReduceOperation as R, UnaryOperation as U)
from ..core.export import NotExportable

INT64_MIN = np.iinfo(np.int64).min


def _ops():
    import openvino.opset13 as ops
    return ops


class LayerTranslation:
    """One core layer -> an OpenVINO node, for an export whose if-conditionals are written
    as `conditional_mode` ("select" or "if"); `body` is the `export.Body` being built, `a`
    the layer's inputs as OpenVINO outputs."""

    def __init__(self, conditional_mode: str):
        self.conditional_mode = conditional_mode

    def translate(self, body, layer, a):
        ops = _ops()
        kind = layer.type
        if kind is LayerType.CONSTANT:
            return ops.constant(np.asarray(layer.weights))
        if kind in (LayerType.IDENTITY, LayerType.CONDITIONAL_INPUT):
            return a[0]
        if kind is LayerType.ELEMENTWISE:
            return self.elementwise(layer, a)
        if kind is LayerType.UNARY:
            return self.unary(layer, a[0])
        if kind is LayerType.ACTIVATION:
            return self.activation(layer, a[0])
        if kind is LayerType.CAST:
            return ops.convert(a[0], np.dtype(layer.to_type))
        if kind is LayerType.SELECT:
            return ops.select(a[0], a[1], a[2])
        if kind is LayerType.CONCATENATION:
            rank = layer._outputs[0].type.rank
            return ops.concat(a, layer.axis + rank if layer.axis < 0 else layer.axis)
        if kind is LayerType.GATHER:
            return ops.gather(a[0], a[1], ops.constant(np.int64(layer.axis)))
        if kind is LayerType.MATRIX_MULTIPLY:
            return self.matmul(layer, a)
        if kind is LayerType.SHUFFLE:
            return self.shuffle(layer, a[0])
        if kind is LayerType.SLICE:
            return self.slice(layer, a[0])
        if kind is LayerType.REDUCE:
            f = {R.SUM: ops.reduce_sum, R.PROD: ops.reduce_prod, R.MAX: ops.reduce_max,
                 R.MIN: ops.reduce_min, R.AVG: ops.reduce_mean}[layer.op]
            axes = list(layer.axis_list(layer.get_input(0).type.rank))
            return f(a[0], ops.constant(np.array(axes, np.int64)), layer.keep_dims)
        if kind is LayerType.CONDITIONAL_OUTPUT:
            return self.conditional(body, layer, a)
        raise NotExportable(f"layer {layer.name!r} ({kind.value})", "stream/map",
                            "has no OpenVINO translation (an opaque function layer)",
                            "build the network from TensorRT-style layers only")

    def elementwise(self, layer, a):
        ops = _ops()
        x, y = a
        is_int = np.issubdtype(layer.get_input(0).dtype, np.integer)
        if layer.op is Op.DIV:
            node = ops.divide(x, y)
            if is_int:  # TensorRT's integer DIV truncates; OpenVINO's floors unless told
                node.set_attribute("m_pythondiv", False)
            return node
        if layer.op is Op.FLOOR_DIV:
            if is_int:
                return ops.divide(x, y)  # python division: floor
            return ops.floor(ops.divide(x, y))
        f = {Op.SUM: ops.add, Op.PROD: ops.multiply, Op.MAX: ops.maximum, Op.MIN: ops.minimum,
             Op.SUB: ops.subtract, Op.POW: ops.power, Op.AND: ops.logical_and,
             Op.OR: ops.logical_or, Op.XOR: ops.logical_xor, Op.EQUAL: ops.equal,
             Op.GREATER: ops.greater, Op.LESS: ops.less}[layer.op]
        return f(x, y)

    def unary(self, layer, x):
        ops = _ops()
        if layer.op is U.RECIP:
            return ops.divide(ops.constant(np.array(1, layer.get_input(0).dtype)), x)
        if layer.op is U.ROUND:
            return ops.round(x, "half_to_even")
        f = {U.EXP: ops.exp, U.LOG: ops.log, U.SQRT: ops.sqrt, U.ABS: ops.abs,
             U.NEG: ops.negative, U.SIN: ops.sin, U.COS: ops.cos, U.TAN: ops.tan,
             U.SINH: ops.sinh, U.COSH: ops.cosh, U.ASIN: ops.asin, U.ACOS: ops.acos,
             U.ATAN: ops.atan, U.ASINH: ops.asinh, U.ACOSH: ops.acosh, U.ATANH: ops.atanh,
             U.CEIL: ops.ceiling, U.FLOOR: ops.floor, U.ERF: ops.erf, U.NOT: ops.logical_not,
             U.SIGN: ops.sign}[layer.op]
        return f(x)

    def activation(self, layer, x):
        ops = _ops()
        kind, alpha, beta = layer.activation_type, float(layer.alpha), float(layer.beta)
        dtype = layer.get_input(0).dtype
        c = lambda v: ops.constant(np.asarray(v, dtype=dtype))  # noqa: E731
        if kind is Act.RELU:
            return ops.relu(x)
        if kind is Act.SIGMOID:
            return ops.sigmoid(x)
        if kind is Act.TANH:
            return ops.tanh(x)
        if kind is Act.LEAKY_RELU:
            return ops.select(ops.greater_equal(x, c(0)), x, ops.multiply(x, c(alpha)))
        if kind is Act.ELU:
            return ops.elu(x, alpha)
        if kind is Act.SELU:
            return ops.selu(x, c([alpha]), c([beta]))
        if kind is Act.SOFTSIGN:
            return ops.divide(x, ops.add(c(1), ops.abs(x)))
        if kind is Act.SOFTPLUS:
            return ops.multiply(ops.softplus(ops.multiply(x, c(beta))), c(alpha))
        if kind is Act.CLIP:
            return ops.clamp(x, alpha, beta)
        if kind is Act.HARD_SIGMOID:
            return ops.hard_sigmoid(x, c(alpha), c(beta))
        if kind is Act.SCALED_TANH:
            return ops.multiply(ops.tanh(ops.multiply(x, c(beta))), c(alpha))
        if kind is Act.THRESHOLDED_RELU:
            return ops.select(ops.greater(x, c(alpha)), x, c(0))
        raise NotExportable(f"layer {layer.name!r}", "stream/map",  # pragma: no cover
                            f"activation {kind.name} has no OpenVINO translation", "")

    def matmul(self, layer, a):
        ops = _ops()
        x, y = a
        i64 = lambda v: ops.constant(np.array(v, np.int64))  # noqa: E731
        if layer.op0 is M.VECTOR:
            x = ops.unsqueeze(x, i64([-2]))
        if layer.op1 is M.VECTOR:
            y = ops.unsqueeze(y, i64([-1]))
        out = ops.matmul(x, y, layer.op0 is M.TRANSPOSE, layer.op1 is M.TRANSPOSE)
        if layer.op1 is M.VECTOR:
            out = ops.squeeze(out, i64([-1]))
        if layer.op0 is M.VECTOR:
            out = ops.squeeze(out, i64([-1] if layer.op1 is M.VECTOR else [-2]))
        return out

    def shuffle(self, layer, x):
        ops = _ops()
        rank = layer.get_input(0).type.rank
        if layer.first_transpose is not None:
            perm = [int(p) for p in tuple(layer.first_transpose)[:rank]]
            x = ops.transpose(x, ops.constant(np.array(perm, np.int64)))
        if layer.reshape_dims is not None:
            dims = [int(d) for d in layer.reshape_dims]
            x = ops.reshape(x, ops.constant(np.array(dims, np.int64)),
                            bool(layer.zero_is_placeholder))
            rank = len(dims)
        if layer.second_transpose is not None:
            perm = [int(p) for p in tuple(layer.second_transpose)[:rank]]
            x = ops.transpose(x, ops.constant(np.array(perm, np.int64)))
        return x

    def slice(self, layer, x):
        ops = _ops()
        starts, ends, steps = [], [], []
        for s, n, k in zip(layer.start, layer.shape, layer.stride):
            end = s + n * k
            if n == 0:
                end = s
            elif k < 0 and end < 0:
                end = INT64_MIN
            starts.append(s)
            ends.append(end)
            steps.append(k)
        if not starts:
            return x
        arr = lambda v: ops.constant(np.array(v, np.int64))  # noqa: E731
        return ops.slice(x, arr(starts), arr(ends), arr(steps), arr(list(range(len(starts)))))

    def conditional(self, body, layer, a):
        import openvino as ov
        ops = _ops()
        cond = body.value(layer.conditional.condition.get_input(0))
        if self.conditional_mode == "select":
            return ops.select(cond, a[0], a[1])
        node = ops.if_op(cond)
        bodies = []
        for value in a:
            p = ops.parameter(value.get_partial_shape(), value.get_element_type())
            bodies.append((p, ops.result(p)))
        node.set_then_body(ov.Model([bodies[0][1]], [bodies[0][0]]))
        node.set_else_body(ov.Model([bodies[1][1]], [bodies[1][0]]))
        node.set_input(a[0], bodies[0][0], None)
        node.set_input(a[1], None, bodies[1][0])
        return node.set_output(bodies[0][1], bodies[1][1])
