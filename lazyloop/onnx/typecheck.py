"""What is checked on a whole ONNX model before anything is lowered.

`onnx/attributes` (for the opset): a model importing a newer default-domain opset than the
installed onnx knows is refused -- lazyloop would read its operators by older definitions.

`onnx/attributes` (for Mod): a floating-point Mod of opsets 10-27 needs `fmod = 1`.

`onnx/types`: in every node of every graph (subgraphs included) the inputs and outputs bound
to one type parameter of its operator's schema have one type ("Mul: inputs of different
types"), and those of a fixed type (a Loop's M is tensor(int64)) have that type. Which types
a parameter allows is left to the kernels (ONNX's reference kernels accept more than old
opsets list, and so do runtimes). The types are what the model declares, completed by
ONNX's own (lenient) type inference; a value whose type is unknown is not judged. A type
that contradicts the values is thereby reported at the node whose type is wrong, before
lowering, and never as a stream shape error deep inside a loop.
"""
from __future__ import annotations

from typing import Dict

import onnx
from onnx import TypeProto, defs

from ..core.errors import ModelError
from .infer import subgraphs
from .scope import node_label, opsets_of
from .types import describe

DEFAULT_DOMAINS = ("", "ai.onnx")


def check_opsets(model: onnx.ModelProto) -> None:
    """`onnx/attributes`: the default-domain opset is one the installed onnx defines."""
    newest = defs.onnx_opset_version()
    for o in model.opset_import:
        if o.domain in DEFAULT_DOMAINS and o.version > newest:
            raise ModelError(f"opset_import {o.domain or 'ai.onnx'}", "onnx/attributes",
                             f"is version {o.version}, newer than the installed onnx knows "
                             f"({newest})", f"export with opset <= {newest}, or upgrade onnx")


def check_types(model: onnx.ModelProto) -> None:
    """`onnx/types` for every node of the model's graphs."""
    try:
        inferred = onnx.shape_inference.infer_shapes(model, check_type=False, strict_mode=False)
    except Exception:  # noqa: BLE001 -- inference is a help: judge the declared types alone
        inferred = model
    walk(inferred.graph, {}, opsets_of(model.opset_import).get("", 1),
         f"graph {inferred.graph.name or 'main'!r}")


def known_types(graph: onnx.GraphProto, outer: Dict[str, TypeProto]) -> Dict[str, TypeProto]:
    types = dict(outer)
    for init in graph.initializer:
        tp = TypeProto()
        tp.tensor_type.elem_type = init.data_type
        types[init.name] = tp
    for vi in list(graph.input) + list(graph.value_info) + list(graph.output):
        if vi.type.WhichOneof("value") is not None:
            types[vi.name] = vi.type
    return types


def walk(graph: onnx.GraphProto, outer, opset: int, where: str) -> None:
    types = known_types(graph, outer)
    for node in graph.node:
        check_node(node, types, opset, f"{node_label(node)} in {where}")
        for a in node.attribute:
            for g in subgraphs(a):
                walk(g, types, opset, f"{a.name} of {node_label(node)} in {where}")


def formal_of(formals, k: int):
    if k < len(formals):
        return formals[k]
    if formals and formals[-1].option == defs.OpSchema.FormalParameterOption.Variadic:
        return formals[-1]
    return None


def check_node(node, types, opset: int, where: str) -> None:
    """`onnx/types`: one node against its schema (default domain only)."""
    if node.domain not in DEFAULT_DOMAINS:
        return
    try:
        schema = defs.get_schema(node.op_type, opset, "")
    except Exception:  # noqa: BLE001 -- an unknown op is judged when it is lowered
        return
    allowed = {c.type_param_str: set(c.allowed_type_strs) for c in schema.type_constraints}
    bound = {}
    for kind, formals, actuals in (("input", schema.inputs, node.input),
                                   ("output", schema.outputs, node.output)):
        for k, name in enumerate(actuals):
            formal = formal_of(formals, k)
            tp = types.get(name) if name else None
            if formal is None or tp is None:
                continue
            text = describe(tp)
            if "?" in text:
                continue
            param = formal.type_str
            if param not in allowed:   # a fixed type such as tensor(int64)
                if text != param:
                    raise ModelError(where, "onnx/types", f"{kind} {name!r} is {text}, "
                                     f"{node.op_type} wants {param} there",
                                     "fix the type of the value or of the node")
                continue
            variadic = formal.option == defs.OpSchema.FormalParameterOption.Variadic
            if variadic and not formal.is_homogeneous:
                continue
            if param in bound and bound[param][0] != text:
                first, other = bound[param]
                both = f"{kind}s" if other[0] == kind else "input and output"
                raise ModelError(where, "onnx/types", f"{node.op_type}: {both} of different "
                                 f"types: {other[0]} {other[1]!r} is {first}, {kind} {name!r} "
                                 f"is {text} (both are type parameter {param})",
                                 "cast one of them, or fix the declared type")
            bound.setdefault(param, (text, (kind, name)))
    check_float_mod(node, schema, types, where)


FLOAT_TYPES = ("tensor(float)", "tensor(double)", "tensor(float16)", "tensor(bfloat16)")


def check_float_mod(node, schema, types, where: str) -> None:
    """`onnx/attributes`: Mod from opset 10 to 27 defines floating-point inputs only with
    `fmod = 1` (C's fmod); the floor modulo of floats (`fmod = 0`, the default) came in
    Mod-28. A float Mod of an older opset without `fmod = 1` is refused."""
    if node.op_type != "Mod" or schema.since_version >= 28 or not node.input:
        return
    dtype = describe(types.get(node.input[0])) if node.input[0] in types else "?"
    fmod = next((a.i for a in node.attribute if a.name == "fmod"), 0)
    if dtype in FLOAT_TYPES and fmod != 1:
        raise ModelError(where, "onnx/attributes", f"Mod-{schema.since_version} of {dtype} "
                         f"has fmod = {fmod}; for floating-point inputs its definition "
                         "requires fmod = 1", "set fmod = 1 (C's fmod), or use opset 28 or "
                         "later for the floor modulo of floats")
