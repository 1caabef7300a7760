"""What every engine adapter shares: the inputs a model declares, the arrays handed to an
engine (writable, C-contiguous copies: an engine may write into its inputs or read them
with strides of its own), and the error for an engine that lost an input on the way."""
from __future__ import annotations

import numpy as np

from ..backends import InputLost, LoadFailed


def declared_inputs(proto) -> list:
    """The names of the model's inputs, in the graph's order, without those an initializer
    gives (models below IR version 4 list their initializers as inputs too)."""
    given = {t.name for t in proto.graph.initializer}
    return [i.name for i in proto.graph.input if i.name not in given]


def handed(value) -> np.ndarray:
    """A writable, C-contiguous copy of `value`, as an engine is given it."""
    return np.array(value, order="C", copy=True)


def matched(declared, takes, feeds) -> None:
    """Every input the model `declared` is among those the engine's compiled model `takes`
    (else `InputLost`), and every input it takes is one the model declares (else
    `LoadFailed`: the engine made up an input)."""
    for name in declared:
        if name not in takes:
            raise lost_input(name, takes)
    for name in takes:
        if name not in feeds:
            raise LoadFailed(f"the engine's compiled model takes input `{name}`, which the "
                             f"model does not declare")


def feeds_in_order(declared, takes, feeds) -> list:
    """The feeds of the inputs the engine's compiled model `takes` (names, in its order),
    as handed copies, once they are `matched` with the inputs the model `declared`."""
    matched(declared, takes, feeds)
    return [handed(feeds[name]) for name in takes]


def lost_input(name: str, takes) -> InputLost:
    """The error for input `name` that the engine's compiled model does not take (the text
    names no other input: one root cause, whichever inputs are left)."""
    return InputLost(f"the engine lost input `{name}` (the model declares it; the compiled "
                     f"model takes {len(takes)} input(s))")
