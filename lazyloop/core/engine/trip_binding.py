"""What a loop's compiled trip function (compiled.py) is bound to that no run changes."""
from __future__ import annotations

import numpy as np


def scalar_class(dtype):
    """The numpy scalar class whose every instance has `dtype` (np.float32 for float32), or
    None when its instances may have another (a byte order, a string length, a unit)."""
    if dtype is None or not dtype.isbuiltin or np.dtype(dtype.type) != dtype:
        return None
    return dtype.type


def binding(schedule) -> tuple:
    """What the trip function is bound to that no run changes, per member: the node, its
    memo, kernel, ufunc (`Emitter.direct_ufunc`), dtype, scalar class and admitted shapes --
    listed once per schedule (a run fed by batches binds the trips again)."""
    if schedule.binding is None:
        members = list(schedule.d.members.values())
        dtypes = [getattr(n.type, "dtype", None) for n in members]
        schedule.binding = (members, [schedule.memo[n.id] for n in members],
                            [getattr(n, "fn", None) for n in members],
                            [getattr(getattr(n, "kernel", None), "ufunc", None)
                             for n in members], dtypes,
                            [scalar_class(t) for t in dtypes],
                            [schedule.shapes.get(n.id) for n in members])
    return schedule.binding
