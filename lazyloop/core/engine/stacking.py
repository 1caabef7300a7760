"""A stacked loop output in the usual case, made at once (`output/concat`,
`output/reverse`): what the machine does with a CONCATENATE/REVERSE output's elements after
a run on a schedule, outside loops or for an element of an enclosing loop."""
from __future__ import annotations

import numpy as np

from ..enums import LoopOutput
from ..reference.rules import stacked_whole


def stacked_plainly(out, elements):
    """`output/concat`, `output/reverse` in the usual case, or None: an output without a
    length input (its length is the trip count) of n >= 1 elements that are all arrays of
    its dtype -- all defined, of one shape (`structure/shapes` checked each as it was
    stored) -- stacked by `rules.stacked_whole`, as `rules.stack` stacks them then, without
    looking at each for a mask. Elements of one dtype and one shape are stacked
    by `np.array` (not objects or records), which makes what `np.stack` makes of them at a
    fraction of its cost."""
    if out.length is not None or elements.__class__ is not list or not elements:
        return None
    same = one_kind(elements)
    if same is None:
        return None
    return stacked_whole(out, np.array(elements) if same else elements)


def one_kind(elements):
    """Whether the elements (a list of at least one) are arrays of one dtype and one shape
    that `np.array` stacks as `np.stack` does (not objects or records); None when one of
    them is not an array (an undefined element, a sequence)."""
    ndarray = np.ndarray
    first = elements[0]
    if first.__class__ is not ndarray:
        return None
    dtype, shape, same = first.dtype, first.shape, first.dtype.kind not in "OV"
    for e in elements:
        if e.__class__ is not ndarray:
            return None
        same = same and e.dtype is dtype and e.shape == shape
    return same


def stacker(out):
    """`stacked_plainly` for one output, what does not depend on its elements decided once:
    a function of the elements, or None for an output with a length input (its length is
    read at the enclosing element). An output on axis 0 in trip order whose elements are
    of its dtype is their `np.array` (what `stacked_whole` makes of it then)."""
    if out.length is not None:
        return None
    dtype = getattr(out.type, "dtype", None)
    if out.axis or out.kind is LoopOutput.REVERSE or dtype is None:
        return lambda elements: stacked_plainly(out, elements)
    dtype = np.dtype(dtype)

    def stack(elements):
        if elements.__class__ is not list or not elements:
            return None
        same = one_kind(elements)
        if not same:
            return None if same is None else stacked_whole(out, elements)
        value = np.array(elements)
        return value if value.dtype == dtype else None
    return stack
