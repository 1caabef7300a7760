"""ONNX If lowered onto a core if-conditional (rule onnx/if): each branch is a graph nested in
the node's graph, lowered through graph.py, and the conditional picks, per element, the
outputs of the branch the condition takes.
"""
from __future__ import annotations

from ..core.errors import ModelError
from ..core.types import OpaqueType, TensorType
from .graph import (as_scalar_bool, graph_attribute, graph_outputs, graph_types,
                    lower_initializers, lower_nodes)
from .scope import Lowering, Scope, node_tag


def opaque_view(low: Lowering, t, name: str):
    """The same values, typed opaquely (the core checks no shape or dtype on them)."""
    layer = low.net.add_function(lambda v: (v,), [t], [OpaqueType(f"{t.type!r} (unchecked)")],
                                 op="Unchecked")
    return low.label(layer, name).get_output(0)


def lower_if(low: Lowering, node, scope: Scope, where: str) -> None:
    """Rule `onnx/if`: per element, the taken branch's outputs; only that branch is forced."""
    rule = "onnx/if"
    cond = scope.lookup(node.input[0], where) if len(node.input) and node.input[0] else None
    if cond is None:
        raise ModelError(where, rule, "has no condition input", "give If its bool condition")
    branches = [graph_attribute(node, "then_branch", where, rule),
                graph_attribute(node, "else_branch", where, rule)]
    then_outs, else_outs = (lower_branch(low, node, scope, where, kind, g)
                            for kind, g in zip(("then", "else"), branches))
    conditional = low.net.add_if_conditional()
    conditional.set_condition(as_scalar_bool(low, cond, scope.prefix + f"{node_tag(node)}/cond",
                                             where, rule))
    for k, o in enumerate(node.output):
        a, b = agreeing_branch_types(low, then_outs[k], else_outs[k],
                                     scope.prefix + f"{node_tag(node)}:{k}")
        layer = conditional.add_output(a, b)
        low.label(layer, scope.prefix + (o or f"{node_tag(node)}:{k}"))
        scope.bind(o, layer.get_output(0))
        if o:
            scope.types.setdefault(o, branches[0].output[k].type)


def lower_branch(low: Lowering, node, scope: Scope, where: str, kind: str, g) -> list:
    """A branch is a graph nested in the node's graph; its outputs."""
    if len(g.output) != len(node.output):
        raise ModelError(where, "onnx/if", f"its {kind} branch gives {len(g.output)} outputs, "
                         f"the node has {len(node.output)}", "make the arities agree")
    prefix = low.fresh(scope.prefix + node_tag(node) + f"/{kind}") + "/"
    sub = Scope(low, scope, f"{kind} branch of {where}", prefix, scope.in_loop)
    lower_initializers(low, g, sub)
    sub.types = graph_types(low, g, sub, {})
    lower_nodes(low, g.node, sub)
    return graph_outputs(g, sub, f"{kind} branch of {where}")


def agreeing_branch_types(low: Lowering, a, b, name: str):
    """If 11+ lets the branches differ in shape, rank included: branches of one dtype and
    different ranks give an output of unknown rank (`structure/shapes`); where their types
    differ in dtype or kind, both are typed opaquely rather than refused by the core's
    if-conditional output (`stream/shape`)."""
    if a is None or b is None:
        raise ModelError(name, "onnx/if", "a branch output is an omitted value",
                         "compute every branch output")
    ta, tb = a.type, b.type
    if isinstance(ta, TensorType) and isinstance(tb, TensorType):
        if (ta.rank, ta.dtype) == (tb.rank, tb.dtype):
            return a, b
        if ta.dtype == tb.dtype:   # ranks differ: the output's rank is known per element
            layer = low.net.add_function(lambda v: (v,), [a], [TensorType(ta.dtype, None)],
                                         op="AnyRank")
            return low.label(layer, f"{name}/then").get_output(0), b
    elif not isinstance(ta, TensorType) and not isinstance(tb, TensorType):
        return a, b
    return opaque_view(low, a, f"{name}/then"), opaque_view(low, b, f"{name}/else")
