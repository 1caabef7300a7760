"""The engine's own in-line forms of a few steps, for its compiled trips (compiled.py).

Every kind of node has its step written as Python text by its entry of the step table
(`lazyloop.core.reference.steps`, `emit`). For a few common cases the compiled trips write
something shorter that gives the same element: the entry's step with a call or a layer
taken out where the call would compute nothing the element needs. Each form leaves element
j<level> in v<level>, as an entry's `emit` does (`e`: the emitter, `e.read` and `e.emit`),
and hands everything out of its usual case to the function the entry's step calls, so a
value or an error is that function's.
"""
from __future__ import annotations

from typing import Callable, Optional

import numpy as np

from ..kernel import ELLIPSIS_OUT
from ..plan import Iterator
from ..reference.rules import iterator_element


def inline_form(node) -> Optional[Callable]:
    """The in-line form of `node`'s step, or None where its entry's `emit` is used."""
    if isinstance(node, Iterator) and node.axis == 0:
        return row
    if plain_passed(node, 0, "a") is not None:
        return passed_argument
    if direct_ufunc(node):
        return ufunc_call
    return None


def row(e, depth, c, node, level, low=0):
    """An iterator along the first axis (`iterated` written in line): element j of a plain
    array with j inside the axis is its row j (from the end, reversed: `iterator/reverse` by
    A2 "guide"); anything else as `iterated` makes it (`iterator/forward`,
    `iterator/bounds`)."""
    j, v, w = f"j{level}", f"v{level}", f"w{level}"
    e.read(depth, node.source, "0", w, level)  # the invariant
    e.emit(depth, f"if {w}.__class__ is ND and {w}.ndim and 0 <= {j} < {w}.shape[0]:")
    e.emit(depth + 1, f"{v} = {w}[{w}.shape[0] - 1 - {j}]" if node.reverse else f"{v} = {w}[{j}]")
    e.emit(depth, "else:")
    e.emit(depth + 1, f"{v} = ITERATE(N[{c}], {w}, {j})")


def iterated(node, whole, i):
    """Element i of an iterator (`rules.iterator_element`: `iterator/forward`,
    `iterator/reverse` by A2 "guide", `iterator/bounds`) in the usual case -- a plain array
    iterated along its first axis at an index inside it -- as its slice at once; anything
    else (a mask, another axis, an index outside the axis) as the rule makes it."""
    if whole.__class__ is np.ndarray and node.axis == 0 and whole.ndim:
        extent = whole.shape[0]
        index = extent - 1 - i if node.reverse else i
        if 0 <= index < extent:
            return whole[index]
    return iterator_element(node, whole, i)


def plain_passed(node, c, a, b="b"):
    """The test under which a map's value is its first argument `a` itself, as its kernel
    states (`Kernel.returns_plain`: Identity, a Cast or CastLike to the dtype the array
    has), so no call is made (`stream/map`); None where the kernel does not say (a Cast to
    another dtype than its stream's, whose d<c> the test reads)."""
    plain = getattr(getattr(node, "kernel", None), "returns_plain", None)
    if plain is None or None in node.args:
        return None
    array = f"{a}.__class__ is ND"
    if plain == "any":
        return array
    if plain == "like" and len(node.args) == 2:
        return (f"{array} and {b}.__class__ is ND and {a}.dtype == {b}.dtype "
                f"and {a}.dtype.kind in 'biuf'")
    if isinstance(plain, np.dtype) and plain == getattr(node.type, "dtype", None):
        return f"{array} and ({a}.dtype is d{c} or {a}.dtype == d{c})"
    return None


def passed_argument(e, depth, c, node, level, low=0):
    """A map whose kernel returns its plain array argument as it is (`plain_passed`): that
    argument, else the kernel's call (`stream/map`)."""
    names = e.arguments(depth, node, level)
    e.emit(depth, f"if {plain_passed(node, c, *names)}:")
    e.emit(depth + 1, f"v{level} = {names[0]}")
    e.emit(depth, "else:")
    e.emit(depth + 1, f"v{level} = f{c}({', '.join(names)})")


def direct_ufunc(node) -> bool:
    """Whether the map's kernel is a binary numpy ufunc whose function only makes its value
    an array (`Kernel.ufunc`, not the ufunc itself): written `u<c>(a, b, out=...)`, which
    gives that array with no Python layer, where numpy takes `out=...` (`ELLIPSIS_OUT`). A
    ufunc that raises hands the trip back, and the step calls the function, which names
    the node in its error (`stream/map`)."""
    ufunc = getattr(getattr(node, "kernel", None), "ufunc", None)
    return (ELLIPSIS_OUT and ufunc is not None and node.fn is not ufunc
            and len(node.args) == 2 and None not in node.args)


def ufunc_call(e, depth, c, node, level, low=0):
    """A binary ufunc's map (`direct_ufunc`): the ufunc itself, with `out=...`."""
    names = e.arguments(depth, node, level)
    e.emit(depth, f"v{level} = u{c}({', '.join(names)}, out=...)")
