"""Comparing lazyloop's expected outputs with a backend's, and the float tolerances used.

Only positions lazyloop marks as defined are compared; see the package docstring.
"""
from __future__ import annotations

from typing import List

import attrs
import numpy as np

FLOAT_TOLERANCE = {np.dtype(np.float16): (1e-2, 1e-2)}
DEFAULT_TOLERANCE = (1e-4, 1e-5)  # rtol, atol for float32/float64


@attrs.frozen
class Difference:
    output: str
    kind: str        # "error", "missing-output", "dtype", "shape", "values"
    detail: str


def tolerance(dtype):
    return FLOAT_TOLERANCE.get(np.dtype(dtype), DEFAULT_TOLERANCE)


def compare(expected: dict, defined: dict, actual: dict, rtol=None, atol=None
            ) -> List[Difference]:
    """What differs between lazyloop's outputs and a backend's (see the package docstring).
    `rtol`/`atol`, when given, replace the float tolerances of every float dtype."""
    diffs = []
    for name, want in expected.items():
        if name not in actual:
            diffs.append(Difference(name, "missing-output",
                                    f"the backend returned {sorted(actual)}"))
            continue
        got = actual[name]
        if not isinstance(want, np.ndarray):
            continue  # sequences and optionals: not produced by the generators
        got = np.asarray(got)
        if got.dtype != want.dtype:
            diffs.append(Difference(name, "dtype", f"expected {want.dtype}, got {got.dtype}"))
            continue
        if got.shape != want.shape:
            diffs.append(Difference(name, "shape", f"expected {list(want.shape)}, "
                                                   f"got {list(got.shape)}"))
            continue
        mask = np.asarray(defined.get(name, True), dtype=bool)
        mask = np.broadcast_to(mask, want.shape)
        if not mask.any():
            continue
        w, g = want[mask], got[mask]
        if want.dtype.kind in "fc":
            r, a = tolerance(want.dtype)
            r, a = (r if rtol is None else rtol), (a if atol is None else atol)
            ok = np.isclose(g, w, rtol=r, atol=a, equal_nan=True)
        else:
            ok = g == w
        if not np.all(ok):
            bad = int(np.size(ok) - np.count_nonzero(ok))
            first = int(np.flatnonzero(~np.asarray(ok))[0])
            diffs.append(Difference(name, "values",
                                    f"{bad} of {np.size(ok)} defined positions differ; e.g. "
                                    f"expected {w.reshape(-1)[first]!r}, got "
                                    f"{g.reshape(-1)[first]!r}"))
    return diffs
