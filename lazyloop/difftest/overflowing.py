"""Which programs A30's `saturate` reading can change: those with integer arithmetic.

Trying a reading costs a lowering and an evaluation of the program. A30 (`stream/map`,
integer overflow) changes only integer Add, Sub, Mul, Neg and Abs, so the tester tries
`saturate` only on a model that has one (`worth_trying`); a model whose arithmetic is all
floating point cannot be explained by it. The check reads the model, evaluates nothing, and
says yes when it cannot tell (an element type it cannot infer).
"""
from __future__ import annotations

ONNX_OPS = frozenset({"Add", "Sub", "Mul", "Neg", "Abs"})


def worth_trying(amb_id: str, fmt: str, model) -> bool:
    """Whether reading `amb_id` otherwise can change what lazyloop computes for `model`
    (A30 narrowed here; A31 only on an ONNX model with a Resize; every other entry is
    always worth trying)."""
    if amb_id == "A31":
        from ..onnx.resize_rounding import has_resize
        return fmt == "onnx" and has_resize(model)
    if amb_id != "A30":
        return True
    try:
        if fmt == "onnx":
            return onnx_integer_arithmetic(model)
        return openvino_integer_arithmetic(model)
    except Exception:  # noqa: BLE001 -- cannot tell: try the reading
        return True


def onnx_integer_arithmetic(model) -> bool:
    """An Add/Sub/Mul/Neg/Abs whose first input is an integer tensor (or of a type that
    shape inference leaves unknown), in the graph, its subgraphs or its functions."""
    import onnx
    from onnx import TensorProto as T

    integers = {T.INT8, T.INT16, T.INT32, T.INT64, T.UINT8, T.UINT16, T.UINT32, T.UINT64}
    if any(n.op_type in ONNX_OPS for f in model.functions for n in f.node):
        return True
    inferred = onnx.shape_inference.infer_shapes(model)

    def graph_has(g, outer: dict) -> bool:
        types = dict(outer)
        for vi in list(g.input) + list(g.output) + list(g.value_info):
            types[vi.name] = vi.type.tensor_type.elem_type
        types.update({t.name: t.data_type for t in g.initializer})
        for node in g.node:
            if node.op_type in ONNX_OPS and node.domain in ("", "ai.onnx"):
                elem = types.get(node.input[0], 0)
                if elem == 0 or elem in integers:
                    return True
            for a in node.attribute:
                subs = ([a.g] if a.HasField("g") else []) + list(a.graphs)
                if any(graph_has(s, types) for s in subs):
                    return True
        return False

    return graph_has(inferred.graph, {})


def openvino_integer_arithmetic(model) -> bool:
    """An op the `saturate` reading binds (openvino.kernels.saturates), in the model or the
    body of a Loop, TensorIterator or If."""
    from ..openvino.kernels import saturates

    for op in model.get_ordered_ops():
        if saturates(op):
            return True
        bodies = [getattr(op, name)() for name in ("get_function", "get_then_body",
                                                   "get_else_body") if hasattr(op, name)]
        if any(openvino_integer_arithmetic(b) for b in bodies if b is not None):
            return True
    return False
