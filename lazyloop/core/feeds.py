"""Checking what a caller feeds a network: a mapping of input name to array, each value of
its input's declared dtype and shape (`stream/shape`)."""
from __future__ import annotations

from typing import Mapping

import numpy as np

from .errors import InputError
from .plan import Plan
from .types import OpaqueType


def feed_dict(feeds) -> dict:
    """The caller's feeds as a new dict; anything but a mapping (or None) is refused."""
    if feeds is not None and not isinstance(feeds, Mapping):
        raise InputError("feeds", "stream/shape", f"is a {type(feeds).__name__}, not a mapping",
                         "pass a dict {input name: array}")
    return dict(feeds or {})


def check_feeds(plan: Plan, feeds) -> dict:
    feeds = feed_dict(feeds)
    out = {}
    for nid in plan.inputs:
        node = plan.nodes[nid]
        if nid not in feeds:
            raise InputError(f"input {nid!r}", "stream/shape", "no value was fed",
                             f"feed {nid!r} as a {node.type!r} array")
        value = feeds.pop(nid)
        ty = node.type
        if isinstance(ty, OpaqueType):
            out[nid] = value
            continue
        if not isinstance(value, (np.ndarray, np.generic)):
            try:
                value = np.asarray(value, dtype=ty.dtype)
            except (TypeError, ValueError) as exc:
                raise InputError(f"input {nid!r}", "stream/shape", f"cannot be read as "
                                 f"{ty!r}: {exc}", "feed a numpy array") from None
        value = np.array(value)
        if value.dtype != ty.dtype:
            raise InputError(f"input {nid!r}", "stream/shape",
                             f"was fed {value.dtype}, it is declared {ty.dtype}",
                             f"feed a {ty.dtype} array")
        if not ty.accepts(value):
            raise InputError(f"input {nid!r}", "stream/shape",
                             f"was fed shape {list(value.shape)}, it is declared {ty!r}",
                             "feed an array of the declared shape")
        value.flags.writeable = False
        out[nid] = value
    if feeds:
        raise InputError(f"inputs {sorted(feeds)}", "stream/shape", "are not inputs of the "
                         "network", f"the network's inputs are {list(plan.inputs)}")
    return out
