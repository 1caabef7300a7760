"""Shape computations made once while the shapes stay the same.

Exporters write loop bodies that recompute, every trip, index arithmetic from the shapes of
the carried values: `Shape` of the buffer, `Gather` of one dimension, `Range`, `Expand`,
`Concat`, ... (jax2onnx's dynamic-update-slice is some thirty such nodes around one
ScatterND). The values they compute change only when a shape changes, which in most loops
is never. Each is still an element of its stream, made by its map (`stream/map`); but the
map's element is its kernel's value on its arguments' values, so

* a map whose kernel reads only its argument's shape (`Kernel.shape_only`, ONNX `Shape`)
  has, for an argument of the same shape as at its previous element, the previous element;
* a map whose kernel's value depends only on its arguments (`Kernel.pure`) has, for
  arguments that are the very objects its previous element read, the previous element
  (the same object: elements are never written, `stream/memo`).

`shape_derived(demand)` names the maps of a loop where this is likely to pay: the shape-only
maps, and the pure maps that read only invariants and other such maps. The compiled trips
(compiled.py) then test the arguments before they call the kernel, and keep the element
they made with the arguments it was made from.
"""
from __future__ import annotations

from ..plan import Map


def shape_derived(demand) -> frozenset:
    """The members of a loop made from shapes and invariants alone (derived once)."""
    key = ("shape derived", demand.key)
    derived = demand.plan.derived
    if key not in derived:
        derived[key] = _shape_derived(demand.members)
    return derived[key]


def _shape_derived(members) -> frozenset:
    found = set()
    grew = True
    while grew:
        grew = False
        for nid, node in members.items():
            if nid in found or not isinstance(node, Map) or node.multi:
                continue
            kernel = node.kernel
            if kernel.shape_only and len(node.args) == 1 and node.args[0] is not None:
                found.add(nid)
                grew = True
            elif kernel.pure and all(a is not None for a in node.args) and all(
                    a in found or a not in members for a in node.args) and any(
                    a in found for a in node.args):
                found.add(nid)
                grew = True
    return frozenset(found)


def emit_reused(e, depth, k, c, node, level):
    """The compiled trips' element of a map made from shapes, written by the emitter `e`
    (compiled.py): its previous element r<c> again while its argument has the same shape
    (`shape_only`) or its arguments are the same objects (`pure`); else its step, checked,
    kept with what it read (in p<c>_<n>)."""
    names = e.arguments(depth, node, level)
    kept = [f"p{c}_{p}" for p in range(len(names))]
    if node.kernel.shape_only:
        (a,), (p,) = names, kept
        same = f"r{c} is not _M and {a}.__class__ is ND and {a}.shape == {p}"
        keep = [f"{p} = {a}.shape if {a}.__class__ is ND else _M"]
    else:
        same = " and ".join(f"{a} is {p}" for a, p in zip(names, kept))
        keep = [f"{p} = {a}" for a, p in zip(names, kept)]
    e.reused_names += kept + [f"r{c}"]
    e.emit(depth, f"if {same}:")
    e.emit(depth + 1, f"v{level} = r{c}")
    e.emit(depth, "else:")
    e.emit(depth + 1, f"v{level} = f{c}({', '.join(names)})")
    e.checks.emit(e, depth + 1, k, c, node, f"v{level}")
    for line in keep + [f"r{c} = v{level}"]:
        e.emit(depth + 1, line)
