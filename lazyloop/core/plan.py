"""Compiling a network into an immutable plan of stream nodes.

Each tensor becomes one frozen node whose repr reads like the expression that built it, e.g.
``Iterator(x, axis=0, reverse=False)``. A node lives in a scope: the root (outside every loop)
or the innermost loop it is inside. Nesting is inferred from data flow (`structure/nesting`).
"""
from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

import attrs
import numpy as np

from .enums import LayerType, LoopOutput, TripLimit
from .errors import StructureError
from .kernel import Kernel, kernel_of
from .types import TensorType
from .undefined import fill_value

Ref = Optional[str]  # the id of another node, or None for an absent optional input


def _args(refs) -> str:
    return ", ".join("-" if r is None else r for r in refs)


@attrs.frozen(repr=False)
class Node:
    id: str
    scope: Optional[str]  # the loop the node's stream ranges over; None = the root scope
    type: Any

    def inputs(self) -> Tuple[Ref, ...]:
        return ()


@attrs.frozen(repr=False)
class Input(Node):
    def __repr__(self):
        return f"Input({self.id!r}, {self.type!r})"


@attrs.frozen(repr=False)
class Const(Node):
    value: Any = attrs.field(eq=False)

    def __repr__(self):
        v = self.value
        shown = v.tolist() if isinstance(v, np.ndarray) and v.size <= 4 else self.type
        return f"Const({shown})"


@attrs.frozen(repr=False)
class Undefined(Node):
    """A value no source defines (A3, an undefined start): filled, and masked."""

    def __repr__(self):
        return f"Undefined({self.type!r})"


@attrs.frozen(repr=False)
class Map(Node):
    """`stream/map`: element i is the kernel's function applied to element i of every
    argument (`lazyloop.core.kernel`: the function and what it says of itself)."""
    op: str
    kernel: Kernel = attrs.field(eq=False)
    args: Tuple[Ref, ...]
    positionwise: bool = False
    multi: bool = False  # the function returns a tuple, read through Project nodes

    @property
    def fn(self):
        return self.kernel.function

    def inputs(self):
        return self.args

    def __repr__(self):
        return f"{self.op}({_args(self.args)})"


@attrs.frozen(repr=False)
class Project(Node):
    call: str
    k: int

    def inputs(self):
        return (self.call,)

    def __repr__(self):
        return f"{self.call}[{self.k}]"


@attrs.frozen(repr=False)
class Iterator(Node):
    source: str
    axis: int
    reverse: bool

    def inputs(self):
        return (self.source,)

    def __repr__(self):
        return f"Iterator({self.source}, axis={self.axis}, reverse={self.reverse})"


@attrs.frozen(repr=False)
class Recurrence(Node):
    init: str
    next: str

    def inputs(self):
        return (self.init,)  # the back edge is not a same-trip input

    def __repr__(self):
        return f"Recurrence({self.init}, {self.next})"


@attrs.frozen(repr=False)
class LoopOut(Node):
    loop: str
    kind: LoopOutput
    source: str
    axis: int
    length: Ref

    def inputs(self):
        return (self.length,) if self.length else ()

    def __repr__(self):
        if self.kind is LoopOutput.LAST_VALUE:
            return f"LastValue({self.source})"
        name = "Concatenate" if self.kind is LoopOutput.CONCATENATE else "Reverse"
        return f"{name}({self.source}, {self.length or 'n'}, axis={self.axis})"


@attrs.frozen(repr=False)
class IfOutput(Node):
    """Element i is `then`'s element i when `cond`'s holds, else `orelse`'s; only one is forced."""
    cond: str
    then: str
    orelse: str

    def inputs(self):
        return (self.cond,)

    def __repr__(self):
        return f"IfOutput({self.cond} ? {self.then} : {self.orelse})"


@attrs.frozen(repr=False)
class LoopPlan:
    name: str
    parent: Optional[str]
    count: Ref
    while_: Ref
    outputs: Tuple[str, ...]

    def __repr__(self):
        limits = []
        if self.count:
            limits.append(f"COUNT({self.count})")
        if self.while_:
            limits.append(f"WHILE({self.while_})")
        return f"Loop({self.name}, parent={self.parent}, {' '.join(limits) or 'no limit'})"


@attrs.frozen
class Plan:
    profile: str
    nodes: Dict[str, Node]
    loops: Dict[str, LoopPlan]
    inputs: Tuple[str, ...]
    outputs: Tuple[Tuple[str, str], ...]  # (output name, node id)
    # analyses derived from the plan alone (per-loop demand), computed once
    derived: dict = attrs.field(factory=dict, eq=False, repr=False)

    def listing(self) -> str:
        """The plan as text: one `id = expression` line per node, grouped by scope."""
        lines = []
        for scope in [None] + list(self.loops):
            title = "outside loops" if scope is None else repr(self.loops[scope])
            members = [n for n in self.nodes.values() if n.scope == scope]
            if members:
                lines.append(f"{title}:")
                lines += [f"  {n.id} = {n!r}" for n in members]
        return "\n".join(lines)


POSITIONWISE = {LayerType.ELEMENTWISE, LayerType.UNARY, LayerType.ACTIVATION,
                LayerType.IDENTITY, LayerType.CAST, LayerType.SELECT,
                LayerType.CONDITIONAL_INPUT}


# ------------------------------------------------------------------------------------------
# Nesting: which loops each tensor is inside (`structure/nesting`)
# ------------------------------------------------------------------------------------------

def _loop_inputs(layer):
    """Every input a layer's elements depend on: for a boundary layer the back edge too (a
    recurrence whose next value reads a stream of loop A is inside A); for a conditional
    output its condition too."""
    inputs = [t for t in layer.inputs() if t is not None]
    if layer.type is LayerType.CONDITIONAL_OUTPUT and layer.conditional.condition is not None:
        inputs.append(layer.conditional.condition.get_input(0))
    return inputs


def loop_parents(loop, ins):
    """The loops `loop` is nested in: those its boundary layers read values from (TensorRT:
    "if loop B uses values defined inside loop A, B is nested in A"), and those its outputs are
    streams of (a value of A flowed through B into its output)."""
    found = set()
    for layer in loop.trip_limits + loop.iterators + loop.recurrences + loop.outputs:
        for t in _loop_inputs(layer):
            found |= ins(t)
    for out in loop.outputs:
        found |= ins(out.get_output(0))
    return frozenset(found) - {id(loop)}


def infer_nesting(net):
    """The loops each tensor is inside, as a monotone fixed point (sets only grow):

    * an iterator's or recurrence's stream is inside its own loop, the loops that loop is
      nested in, and every loop one of the layer's inputs is inside (the back edge included);
    * a loop output is inside the loops its loop is nested in, and whatever its input, its
      length and its loop's trip limits are inside, less its own loop;
    * any other layer is inside every loop one of its inputs is inside.

    Which loop encloses which follows from `loop_parents` (`structure/nesting`)."""
    inside = {}
    loop_of = {id(loop): loop for loop in net.loops}

    def ins(t):
        return inside.get(id(t), frozenset()) if t is not None else frozenset()

    changed = True
    while changed:
        changed = False
        outer = {id(loop): loop_parents(loop, ins) for loop in net.loops}
        for layer in net.layers:
            loop = getattr(layer, "loop", None)
            found = frozenset().union(*[ins(t) for t in _loop_inputs(layer)])
            if loop is not None and layer.type in (LayerType.ITERATOR, LayerType.RECURRENCE):
                found = found | {id(loop)} | outer[id(loop)]
            elif loop is not None and layer.type is LayerType.LOOP_OUTPUT:
                for limit in loop.trip_limits:
                    found = found | ins(limit.get_input(0))
                found = (found - {id(loop)}) | outer[id(loop)]
            for t in layer._outputs:
                old = inside.get(id(t), frozenset())
                if not found <= old:
                    inside[id(t)] = old | found
                    changed = True
    for key, parents in outer.items():
        for p in parents:
            if key in outer[p]:
                raise StructureError(f"{loop_of[key].name} and {loop_of[p].name}",
                                     "structure/nesting",
                                     "each loop uses values defined inside the other",
                                     "loops must nest cleanly: pass values out through loop "
                                     "output layers")
    return inside, outer, loop_of


def innermost(loops, outer, loop_of, where):
    """The innermost of a set of loops, which must form one chain of nesting."""
    for cand in loops:
        if all(o == cand or o in outer[cand] for o in loops):
            return cand
    names = sorted(loop_of[k].name for k in loops)
    raise StructureError(where, "structure/nesting",
                         f"uses values from inside loops {names}, which are not nested in "
                         "one another", "take values out of a loop through a loop output layer")


# ------------------------------------------------------------------------------------------
# Compiling
# ------------------------------------------------------------------------------------------

def compile_network(net, readings=None) -> Plan:
    """The network's plan, validated; cached on the network until it changes."""
    cached = getattr(net, "_plan_cache", None)
    if cached is not None and readings is not None and cached[2] is readings \
            and cached[0][0] == net._version:
        return cached[1]  # the same reading table as last time (an evaluation loop's case)
    from .ambiguity import resolve
    chosen = resolve(readings)
    key = (net._version, chosen["A6"], chosen["A30"])
    same = chosen if chosen is readings else None  # a resolved table is not changed later
    if cached is not None and cached[0] == key:
        net._plan_cache = (key, cached[1], same)
        return cached[1]
    plan = _compile(net, chosen, chosen["A30"])
    net._plan_cache = (key, plan, same)
    return plan


def _compile(net, readings, overflow: str) -> Plan:
    from .validate import validate_network  # the structure rules, before any forcing

    inside, outer, loop_of = infer_nesting(net)
    names = _unique_ids(net)
    scope_of = {}

    def scope(t):
        key = id(t)
        if key not in scope_of:
            loops = inside.get(key, frozenset())
            where = f"tensor {t.name!r}" + (f" of layer {t.producer.name!r}" if t.producer else "")
            best = innermost(loops, outer, loop_of, where) if loops else None
            scope_of[key] = loop_of[best].name if best is not None else None
        return scope_of[key]

    def ref(t):
        return None if t is None else names[id(t)]

    loop_parent = {}
    for loop in net.loops:
        parents = outer[id(loop)]
        best = innermost(parents, outer, loop_of, loop.name) if parents else None
        loop_parent[loop.name] = loop_of[best].name if best is not None else None

    validate_network(net, scope, loop_parent, readings)

    nodes: Dict[str, Node] = {}
    for t in net._inputs:
        nodes[ref(t)] = Input(ref(t), None, t.type)
    extra = []
    for layer in net.layers:
        extra += _compile_layer(layer, nodes, ref, scope, overflow)
    loops = {}
    for loop in net.loops:
        count = loop.limit(TripLimit.COUNT)
        cond = loop.limit(TripLimit.WHILE)
        loops[loop.name] = LoopPlan(
            loop.name, loop_parent[loop.name],
            ref(count.get_input(0)) if count else None,
            ref(cond.get_input(0)) if cond else None,
            tuple(ref(o.get_output(0)) for o in loop.outputs))
    for node in extra:
        nodes[node.id] = node
    outputs = tuple((t.name, ref(t)) for t in net._outputs)
    return Plan(net.profile, nodes, loops, tuple(ref(t) for t in net._inputs), outputs)


def _unique_ids(net):
    seen = {}
    names = {}
    tensors = list(net._inputs) + [t for layer in net.layers for t in layer._outputs]
    for t in tensors:
        base = t.name
        k = seen.get(base, 0)
        seen[base] = k + 1
        names[id(t)] = base if k == 0 else f"{base}#{k}"
    return names


def _compile_layer(layer, nodes, ref, scope, overflow):
    """Add the nodes of one layer; returns helper nodes to add after all layers. A layer's
    own kernel is bound under the integer-overflow reading `overflow` (A30)."""
    from .overflow import bound
    kind = layer.type
    if kind in (LayerType.TRIP_LIMIT, LayerType.CONDITION):
        return []
    out = layer._outputs[0] if layer._outputs else None
    nid = ref(out) if out is not None else None
    if kind is LayerType.CONSTANT:
        nodes[nid] = Const(nid, None, out.type, layer.weights)
    elif kind is LayerType.ITERATOR:
        nodes[nid] = Iterator(nid, layer.loop.name, out.type, ref(layer.get_input(0)),
                              layer.axis, layer.reverse)
    elif kind is LayerType.RECURRENCE:
        nodes[nid] = Recurrence(nid, layer.loop.name, out.type, ref(layer.get_input(0)),
                                ref(layer.get_input(1)))
    elif kind is LayerType.LOOP_OUTPUT:
        return _compile_loop_output(layer, nodes, ref, scope, nid, out)
    elif kind is LayerType.CONDITIONAL_OUTPUT:
        cond = layer.conditional.condition.get_input(0)
        nodes[nid] = IfOutput(nid, scope(out), out.type, ref(cond), ref(layer.get_input(0)),
                              ref(layer.get_input(1)))
    elif kind is LayerType.FUNCTION and layer.num_outputs == 1:
        nodes[nid] = Map(nid, scope(out), out.type, layer.op,
                         kernel_of(layer.kernel()).first_value(layer.num_inputs),
                         tuple(ref(t) for t in layer.inputs()))
    elif kind is LayerType.FUNCTION:
        call = f"{layer.name}()"
        args = tuple(ref(t) for t in layer.inputs())
        sc = scope(layer._outputs[0]) if layer._outputs else None
        nodes[call] = Map(call, sc, None, layer.op, kernel_of(layer.kernel()), args, False, True)
        for k, t in enumerate(layer._outputs):
            nodes[ref(t)] = Project(ref(t), sc, t.type, call, k)
    else:
        nodes[nid] = Map(nid, scope(out), out.type, layer.op_label(),
                         bound(kernel_of(layer.kernel()), overflow),
                         tuple(ref(t) for t in layer.inputs()), kind in POSITIONWISE)
    return []


def _compile_loop_output(layer, nodes, ref, scope, nid, out):
    """A LAST_VALUE of something that is not a recurrence means the last trip's value Y_{n-1}:
    a recurrence with an undefined start carries it (relaxed profiles; DESIGN §3)."""
    loop = layer.loop
    source = layer.get_input(0)
    src = ref(source)
    extra = []
    if layer.kind is LoopOutput.LAST_VALUE and (source.producer is None or
                                                source.producer.type is not LayerType.RECURRENCE
                                                or source.producer.loop is not loop):
        start = f"undefined({src})"
        carry = f"last_trip({src})"
        parent_scope = scope(out)
        extra.append(Undefined(start, parent_scope, source.type))
        extra.append(Recurrence(carry, loop.name, source.type, start, src))
        src = carry
    length = layer.get_input(1) if layer.kind is not LoopOutput.LAST_VALUE else None
    nodes[nid] = LoopOut(nid, scope(out), out.type, loop.name, layer.kind, src,
                         layer.axis, ref(length))
    return extra


__all__ = ["Plan", "Node", "Input", "Const", "Undefined", "Map", "Project", "Iterator",
           "Recurrence", "LoopOut", "IfOutput", "LoopPlan", "compile_network", "fill_value",
           "TensorType"]
