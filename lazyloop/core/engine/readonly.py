"""`stream/memo` on the fast path: which elements must be marked read-only.

A memoised element is never written to. The reference machine marks every array element
read-only when it stores it (`flags.writeable = False`), so that no kernel can corrupt a
value another stream will read. Marking costs about as much as a small numpy call, so the
schedule marks only the elements that can reach a kernel that might write to its inputs.

An element reaches the kernels of the streams that read it; through a recurrence (whose
elements are its next value's elements, the same objects) and through a kernel that returns
its input itself (ONNX Identity), it also reaches their readers. A kernel *reads only* when its
record says so (`Kernel.reads_only`: a numpy ufunc, which writes only to an `out=` it is not
given, or a frontend's kernel bound straight to numpy). Loop outputs need no
marking here: the machine marks a LAST_VALUE element when it stores it, and CONCATENATE
stacks copies. Every other element -- one read by any other kernel -- is marked, as before.
"""
from __future__ import annotations

from ..plan import IfOutput, Map, Recurrence
from ..reference.steps import entry


def unmarked_streams(demand) -> frozenset:
    """The loop's streams whose elements no possibly-writing kernel reads (derived once)."""
    key = ("unmarked", demand.key)
    derived = demand.plan.derived
    if key not in derived:
        derived[key] = _unmarked(demand.members, demand.inner)
    return derived[key]


def _unmarked(members, inner=None) -> frozenset:
    """`inner`: an inner loop's output -> the streams its runs read (any kernel of the
    inner loop may be a writing one, so what they read is marked)."""
    inner = inner or {}
    readers = {k: [] for k in members}
    for nid, node in members.items():
        step = entry(node)  # what its step reads (the step table), a branch included
        for arg in [a for a, _ in step.reads(node)] + list(step.branches(node)):
            if arg in readers:
                readers[arg].append(nid)
        for arg in inner.get(nid, ()):
            readers[arg].append(nid)

    def writes(reader):
        node = members[reader]
        return (isinstance(node, Map) and not node.kernel.reads_only) or reader in inner

    def carries(reader):  # its element is the element it reads, itself
        node = members[reader]
        return isinstance(node, (Recurrence, IfOutput)) or (
            isinstance(node, Map) and node.kernel.passes_input)

    marked = {k for k in members if any(writes(r) for r in readers[k])}
    changed = True
    while changed:  # what reaches a marked stream unchanged is marked too
        changed = False
        for k in members:
            if k not in marked and any(carries(r) and r in marked for r in readers[k]):
                marked.add(k)
                changed = True
    return frozenset(k for k in members if k not in marked)
