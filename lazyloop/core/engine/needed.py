"""Which outputs of a loop a run on the schedule computes (`laziness/dead`).

The schedule runs a loop once per activation and computes all the outputs it was built for
at once, so it may be built only for outputs that the evaluation needs whenever it needs one
of them -- else it would force what the reference never forces, or have to run again for an
output asked for later (and force elements twice, against `stream/memo`):

* a loop outside loops computes the outputs every evaluation needs whatever the values
  (`statically_needed`), when no other output of it may be needed (`possibly_needed`: an
  output read by a branch of an if-conditional, or by another loop's body, is needed only in
  some evaluations); or the one output that may be needed, when none is needed for certain;
* a loop nested in a loop the reference runs computes its one output that may be needed;
* a loop nested in a scheduled loop computes what that loop's demand says a run of it
  computes (`Demand.runs`, `nests.py`).

Outputs nobody may need (the weights jax2onnx carries out of a `lax.scan`, skl2onnx's unused
Scan outputs) are never computed.
"""
from __future__ import annotations

from typing import Optional, Tuple

from ..plan import IfOutput, LoopOut, Recurrence


def statically_needed(plan) -> frozenset:
    """Nodes outside loops every evaluation of the outputs forces, whatever the values."""
    key = ("statically needed",)
    if key not in plan.derived:
        needed, stack = set(), [nid for _, nid in plan.outputs]
        while stack:
            nid = stack.pop()
            node = plan.nodes[nid]
            if nid in needed or node.scope is not None:
                continue
            needed.add(nid)
            stack.extend(r for r in node.inputs() if r is not None)
            if isinstance(node, LoopOut) and plan.loops[node.loop].count:
                stack.append(plan.loops[node.loop].count)
        plan.derived[key] = frozenset(needed)
    return plan.derived[key]


def may_read(plan, node) -> tuple:
    """Every node `node` may force, whatever it reads: its inputs, a recurrence's next value,
    both branches of an if-conditional, a loop output's source and its loop's limits."""
    found = [r for r in node.inputs() if r is not None]
    if isinstance(node, Recurrence):
        found.append(node.next)
    elif isinstance(node, IfOutput):
        found += [node.then, node.orelse]
    elif isinstance(node, LoopOut):
        loop = plan.loops[node.loop]
        found += [r for r in (node.source, loop.count, loop.while_) if r is not None]
    return tuple(found)


def possibly_needed(plan) -> frozenset:
    """Nodes some evaluation of the outputs may force."""
    key = ("possibly needed",)
    if key not in plan.derived:
        found, stack = set(), [nid for _, nid in plan.outputs]
        while stack:
            nid = stack.pop()
            if nid not in found:
                found.add(nid)
                stack.extend(may_read(plan, plan.nodes[nid]))
        plan.derived[key] = frozenset(found)
    return plan.derived[key]


def outputs_to_compute(plan, loop) -> Tuple[Optional[frozenset], str]:
    """(the outputs a run of `loop` on the schedule computes, "") -- for a loop outside loops
    or nested in a loop the reference runs -- or (None, why not)."""
    key = ("outputs to compute", loop)
    if key not in plan.derived:
        spec = plan.loops[loop]
        maybe = [o for o in spec.outputs if o in possibly_needed(plan)]
        if spec.parent is not None:
            found = (frozenset(maybe), "") if len(maybe) == 1 else (
                None, f"it runs in loop {spec.parent!r} on the reference, and "
                      f"{len(maybe)} of its outputs may be needed")
        else:
            sure = [o for o in spec.outputs if o in statically_needed(plan)]
            if set(maybe) == set(sure) or (not sure and len(maybe) == 1):
                found = frozenset(maybe), ""
            else:
                some = sorted(set(maybe) - set(sure))
                found = None, f"its output {some[0]!r} is needed only in some evaluations"
        plan.derived[key] = found
    return plan.derived[key]
