"""Checking what a caller feeds a network: a mapping of input name to array, each value of
its input's declared dtype and shape (`stream/shape`)."""
from __future__ import annotations

from typing import Mapping

import numpy as np

from .errors import InputError
from .plan import Plan
from .reference.machine import admitted_shapes
from .types import OpaqueType, TensorType


def feed_dict(feeds) -> dict:
    """The caller's feeds as a new dict; anything but a mapping (or None) is refused."""
    if type(feeds) is dict:
        return dict(feeds)
    if feeds is not None and not isinstance(feeds, Mapping):
        raise InputError("feeds", "stream/shape", f"is a {type(feeds).__name__}, not a mapping",
                         "pass a dict {input name: array}")
    return dict(feeds or {})


def input_table(plan: Plan) -> tuple:
    """(input id, its type, its dtype (None: opaque), the shapes of that dtype found to
    agree with its type) per network input, in order; derived once per plan."""
    key = ("input table",)
    table = plan.derived.get(key)
    if table is None:
        table = plan.derived[key] = tuple(
            (nid, ty, getattr(ty, "dtype", None), admitted_shapes(plan, nid)
             if isinstance(ty, TensorType) else None)
            for nid, ty in ((nid, plan.nodes[nid].type) for nid in plan.inputs))
    return table


class CheckedFeeds(dict):
    """`check_feeds`' answer: {input id: value}, every tensor input a read-only array its
    input's type accepts; an evaluator may take them as they are."""


def check_feeds(plan: Plan, feeds) -> CheckedFeeds:
    """The feeds as the network's inputs: each a read-only copy of an array of its input's
    dtype and of a shape its type admits (`stream/shape`); an opaque input as it is."""
    feeds = feed_dict(feeds)
    out = CheckedFeeds()
    for nid, ty, dtype, shapes in input_table(plan):
        if nid not in feeds:
            raise InputError(f"input {nid!r}", "stream/shape", "no value was fed",
                             f"feed {nid!r} as a {ty!r} array")
        value = feeds.pop(nid)
        if (value.__class__ is np.ndarray and dtype is not None and value.dtype == dtype
                and value.shape in shapes):
            value = np.array(value)  # the usual case: a shape its type was found to admit
            value.setflags(write=False)
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
        value.setflags(write=False)
        shapes.add(value.shape)
        out[nid] = value
    if feeds:
        raise InputError(f"inputs {sorted(feeds)}", "stream/shape", "are not inputs of the "
                         "network", f"the network's inputs are {list(plan.inputs)}")
    return out
