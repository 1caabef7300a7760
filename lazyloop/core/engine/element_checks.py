"""What a compiled trip checks of each element it makes (`structure/shapes`), and which it
marks read-only (`stream/memo`), written by the trips' emitter (compiled.py).

An element is checked against its stream's type in the relaxed profiles, cheaply in the
common case (compiled.py's docstring), except where the check cannot fail: a carried
element that is its next value's element, of a type no wider (`carried_checked`); an element
whose type its arguments' types decide, contained in its stream's (`sure`: a kernel's
`gives`, `lazyloop.core.result_types`; an iterator's slice). Each argument was checked when
it was made, or was sure, so what is left out holds all the same.
"""
from __future__ import annotations

from ..plan import Iterator, Map, Recurrence, Undefined
from ..reference.machine import one_shape_streams
from ..result_types import contains
from ..types import TensorType
from .readonly import unmarked_streams


class ElementChecks:
    """The checks and marks of one loop's compiled trips."""

    def __init__(self, demand, check, recording):
        self.d, self.check, self.recording = demand, check, recording
        self.unmarked = unmarked_streams(demand)
        self.one_shape = one_shape_streams(demand.plan)

    def emit(self, e, depth, k, c, node, v, level=None, low=0):
        """Check and mark read-only: an array of the dtype d<c> and of a shape its stream's
        type was found to admit (the set t<c>, which the check adds to), or a numpy scalar
        of the class k<c> (a builtin dtype's own scalar class, so of dtype d<c> and shape
        ()) with () admitted, passes `structure/shapes` at once; anything else goes to
        CHECK, which decides (the test here only spares it the common case). A carried
        element j >= 1 that is the element j - 1 of its next value of the same type, already
        checked, is not checked again (`carried_checked`); nor is an element `sure` to pass;
        `level`: the index is j<level>, `low` its least value. `e`: the emitter."""
        check = self.check and isinstance(node.type, TensorType) and not self.sure(k, node)
        array = f"({v}.dtype is d{c} or {v}.dtype == d{c}) and {v}.shape in t{c}"
        scalar = f"{v}.__class__ is k{c} and () in t{c}"
        if isinstance(node, Recurrence) and not self.recording:
            passes = f"(({v}.__class__ is ND and {array}) or {scalar})"
            if check and level is not None and self.carried_checked(k, node):
                if low < 1:  # only the initial value is checked
                    e.emit(depth, f"if j{level} == 0 and not {passes}:")
                    e.emit(depth + 1, f"CHECK(N[{c}], {v})")
            elif check:  # a carried element is another stream's or an invariant: not marked
                e.emit(depth, f"if not {passes}:")
                e.emit(depth + 1, f"CHECK(N[{c}], {v})")
        else:
            mark = k not in self.unmarked
            if check or mark:
                e.emit(depth, f"if {v}.__class__ is ND:")
                if check:
                    e.emit(depth + 1, f"if not ({array}):")
                    e.emit(depth + 2, f"CHECK(N[{c}], {v})")
                if mark:
                    e.emit(depth + 1, f"{v}.setflags(write=False)")
                elif not check:
                    e.emit(depth + 1, "pass")
                if check:
                    e.emit(depth, f"elif not ({scalar}):")
                    e.emit(depth + 1, f"CHECK(N[{c}], {v})")

    def sure(self, k, node) -> bool:
        """Whether every element of k passes `structure/shapes` because its arguments'
        elements did (each is checked when made, or sure): the type `given` says its
        elements have is contained in k's. A stacked stream's elements also keep the first
        one's shape: sure only where `given` knows every dimension (one shape, always)."""
        given = self.given(node)
        if given is None or k in self.one_shape and (
                given.shape is None or None in given.shape):
            return False
        return contains(node.type, given)

    def given(self, node):
        """`given_type` of a member of the loop."""
        return given_type(self.d.plan.nodes, node)

    def carried_checked(self, k, node) -> bool:
        """Whether element j >= 1 of the recurrence k, the element j - 1 of its next value,
        passes `structure/shapes` because that element did: the next value is a stream of
        this loop (each of whose elements was checked when it was made, or its batch was)
        whose type admits only what the recurrence's admits (the same dtype, and each known
        dimension the same), and neither is stacked (a stacked stream also keeps its first
        element's shape, which the other's check did not compare)."""
        nxt = self.d.members.get(node.next)
        if nxt is None or not isinstance(nxt.type, TensorType):
            return False
        return (contains(node.type, nxt.type) and k not in self.one_shape
                and node.next not in self.one_shape)


def given_type(nodes, node):
    """The type every element of `node` has from its arguments' types, or None: a map's
    kernel says it (`Kernel.gives`, `lazyloop.core.result_types`); an iterator's slice along
    its axis has its tensor's dtype and shape without that axis (`iterator/forward`,
    `iterator/reverse`). What no source defines (A3) is not an element of its type."""
    args = node.inputs() if isinstance(node, (Map, Iterator)) else (None,)
    if None in args or any(isinstance(nodes[a], Undefined) for a in args):
        return None
    types = [nodes[a].type for a in args]
    if not all(isinstance(t, TensorType) for t in types):
        return None
    if isinstance(node, Iterator):
        (whole,) = types
        if whole.shape is None or not 0 <= node.axis < len(whole.shape):
            return None
        return TensorType(whole.dtype, whole.shape[:node.axis] + whole.shape[node.axis + 1:])
    gives = node.kernel.gives
    return None if gives is None else gives(types)


def sure_of_type(nodes, node) -> bool:
    """Whether every element of `node`, a stream that is not stacked, passes
    `structure/shapes` because its arguments' elements did: the type they give it
    (`given_type`) is contained in its own."""
    given = given_type(nodes, node)
    return given is not None and isinstance(node.type, TensorType) and contains(node.type,
                                                                                given)
