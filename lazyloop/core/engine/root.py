"""Values outside loops, forced in the reference's order without its driver.

The reference machine forces every element through its driver: a generator per element,
which yields what it needs and is resumed with it (`stream/order`). Outside loops, what a
map, a projection, an input or a constant needs is known before anything runs: its
arguments, left to right. So the engine forces a value outside loops by walking that static
cone once, depth first, in the order the driver would reach each node (`root_order`, derived
once per plan), calling each map's kernel itself; an if-conditional's output forces its
condition, then the taken branch, by the same walk; a loop output or an undefined value is
forced by the driver, as the reference forces it, when the walk reaches it. The elements forced, their order and their values are the reference's
(`laziness/dead`, `stream/map`).
"""
from __future__ import annotations

from numpy import ndarray

from ..errors import LazyLoopError
from ..plan import Const, IfOutput, Input, Map, Project
from ..reference import rules
from ..types import TensorType
from ..undefined import Partial

DIRECT = (Map, Project, Const, Input)  # kinds whose inputs are known before the run


def root_order(plan, nid) -> tuple:
    """The nodes outside loops that forcing `nid` forces through maps and projections, in
    the order the reference's driver completes them (depth first, arguments left to right),
    `nid` last; a node of another kind is a leaf, forced by the driver."""
    key = ("root order", nid)
    if key not in plan.derived:
        done, order = set(), []
        stack = [(nid, False)]
        while stack:
            k, expanded = stack.pop()
            if k in done:
                continue
            node = plan.nodes[k]
            if expanded or not isinstance(node, (Map, Project)):
                done.add(k)
                order.append(k)
                continue
            stack.append((k, True))
            args = node.args if isinstance(node, Map) else (node.call,)
            stack.extend((a, False) for a in reversed(args) if a is not None and a not in done)
        plan.derived[key] = tuple(order)
    return plan.derived[key]


def force_root(machine, nid):
    """Element 0 of `nid`, a node outside loops, and what it needs, as the reference forces
    them (`machine.demand` forces what is not a map, a projection, an input, a constant or
    an if-conditional's output)."""
    memo, nodes = machine.root.memo, machine.plan.nodes
    done = memo.get(nid)
    if done is not None:
        return done[0]
    for k in root_order(machine.plan, nid):
        done = memo.get(k)
        if done is not None:
            continue
        node = nodes[k]
        if isinstance(node, Map):
            args = [None if a is None else memo[a][0] for a in node.args]
            try:
                value = (rules.map_element(node, args) if any(
                    a.__class__ is Partial for a in args) else node.fn(*args))
            except LazyLoopError:
                raise
            except Exception as exc:  # as MapStep.force names it (`stream/map`)
                raise rules.kernel_refused(node, 0, exc) from None
        elif isinstance(node, Project):
            value = memo[node.call][0][node.k]
        elif isinstance(node, Input):
            value = machine.feeds[k]
        elif isinstance(node, Const):
            value = node.value
        elif isinstance(node, IfOutput):  # the condition, then the taken branch only
            c = force_root(machine, node.cond)
            value = rules.if_element(node, c, lambda ref: force_root(machine, ref))
        else:
            machine.demand_by_driver(k)
            continue
        store(machine, k, node, value)
    return memo[nid][0]


def store(machine, k, node, value):
    """`Machine.store` outside loops, without a trace: an array of a dtype and shape its
    stream's type was found to admit is marked read-only and kept at once."""
    ty = node.type
    if value.__class__ is ndarray and isinstance(ty, TensorType) and (
            not machine.relaxed or value.dtype == ty.dtype and value.shape in machine.admitted(k)):
        value.flags.writeable = False
        machine.root.memo[k] = {0: value}
    else:
        machine.store(k, machine.root, 0, value)
