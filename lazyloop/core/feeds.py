"""Checking what a caller feeds a network: a mapping of input name to array, each value of
its input's declared dtype and shape (`stream/shape`)."""
from __future__ import annotations

from typing import Mapping

import numpy as np

from .errors import InputError
from .plan import Plan
from .reference.machine import admitted_shapes
from .types import OpaqueType


def feed_dict(feeds) -> dict:
    """The caller's feeds as a new dict; anything but a mapping (or None) is refused."""
    if type(feeds) is dict:
        return dict(feeds)
    if feeds is not None and not isinstance(feeds, Mapping):
        raise InputError("feeds", "stream/shape", f"is a {type(feeds).__name__}, not a mapping",
                         "pass a dict {input name: array}")
    return dict(feeds or {})


def check_feeds(plan: Plan, feeds) -> dict:
    """The feeds as the network's inputs: each a read-only copy of an array of its input's
    dtype and of a shape its type admits (`stream/shape`); an opaque input as it is."""
    feeds = feed_dict(feeds)
    out = {}
    for nid in plan.inputs:
        node = plan.nodes[nid]
        if nid not in feeds:
            raise InputError(f"input {nid!r}", "stream/shape", "no value was fed",
                             f"feed {nid!r} as a {node.type!r} array")
        value = feeds.pop(nid)
        ty = node.type
        if (value.__class__ is np.ndarray and value.dtype == getattr(ty, "dtype", None)
                and value.shape in admitted_shapes(plan, nid)):
            value = np.array(value)  # the usual case: a shape its type was found to admit
            value.flags.writeable = False
            out[nid] = value
            continue
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
        admitted_shapes(plan, nid).add(value.shape)
        out[nid] = value
    if feeds:
        raise InputError(f"inputs {sorted(feeds)}", "stream/shape", "are not inputs of the "
                         "network", f"the network's inputs are {list(plan.inputs)}")
    return out
