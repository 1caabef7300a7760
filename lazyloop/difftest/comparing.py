"""Comparing lazyloop's expected outputs with a backend's, and the float tolerances used.

Only positions lazyloop marks as defined are compared; see the package docstring.
"""
from __future__ import annotations

from typing import List

import attrs
import numpy as np

# (rtol, atol) of each float dtype, compared with numpy.isclose; integers and bools exactly.
# float64 keeps float32's: engines that compute it in float32 (MNN keeps float64 as float32)
# stay within it; `--rtol float64=1e-9` asks for more.
TOLERANCES = {"float16": (1e-2, 1e-2), "float32": (1e-4, 1e-5), "float64": (1e-4, 1e-5)}
FLOAT_TOLERANCE = {np.dtype(np.float16): TOLERANCES["float16"]}
DEFAULT_TOLERANCE = TOLERANCES["float32"]  # rtol, atol for float32/float64


@attrs.frozen
class Difference:
    output: str
    kind: str        # "error", "missing-output", "dtype", "shape", "values", "type",
                     # "length" (sequences), "presence" (optionals)
    detail: str


def tolerance(dtype, rtol=None, atol=None):
    """(rtol, atol) for float values of `dtype`: its own (`TOLERANCES`), each replaced by
    `rtol`/`atol` when given -- a number for every float dtype, or {dtype name: number} for
    those named ("*": the others)."""
    name = np.dtype(dtype).name
    own = TOLERANCES.get(name, DEFAULT_TOLERANCE)
    return _given(rtol, name, own[0]), _given(atol, name, own[1])


def _given(value, name: str, own: float) -> float:
    if isinstance(value, dict):
        value = value.get(name, value.get("*"))
    return own if value is None else value


def compare(expected: dict, defined: dict, actual: dict, rtol=None, atol=None
            ) -> List[Difference]:
    """What differs between lazyloop's outputs and a backend's (see the package docstring).
    `rtol`/`atol`, when given, replace the float tolerances (`tolerance`: of every float
    dtype, or per dtype)."""
    diffs = []
    for name, want in expected.items():
        if name not in actual:
            diffs.append(Difference(name, "missing-output",
                                    f"the backend returned {sorted(actual)}"))
            continue
        diffs.extend(compare_value(name, want, defined.get(name, True), actual[name],
                                   rtol, atol))
    return diffs


def compare_value(name: str, want, mask, got, rtol=None, atol=None) -> List[Difference]:
    """One output: a tensor position by position; a sequence (a list) by its length, then
    element by element (named `name[k]`); an optional by presence (None is the empty
    optional), then by the value it holds (rule `onnx/sequences`)."""
    if isinstance(want, list):
        if not isinstance(got, (list, tuple)):
            return [Difference(name, "type", f"expected a sequence, got {type(got).__name__}")]
        if len(got) != len(want):
            return [Difference(name, "length", f"expected {len(want)} elements, got {len(got)}")]
        masks = mask if isinstance(mask, list) else [True] * len(want)
        return [d for k, (w, m, g) in enumerate(zip(want, masks, got))
                for d in compare_value(f"{name}[{k}]", w, m, g, rtol, atol)]
    if want is None or got is None:
        if (want is None) != (got is None):
            held = "nothing" if want is None else "a value"
            return [Difference(name, "presence", f"expected an optional holding {held}, got "
                                                 f"{'nothing' if got is None else 'a value'}")]
        return []
    if isinstance(got, (list, tuple)):
        return [Difference(name, "type", "expected a tensor, got a sequence")]
    return compare_tensor(name, np.asarray(want), mask, np.asarray(got), rtol, atol)


def compare_tensor(name: str, want, mask, got, rtol=None, atol=None) -> List[Difference]:
    if got.dtype != want.dtype:
        return [Difference(name, "dtype", f"expected {want.dtype}, got {got.dtype}")]
    if got.shape != want.shape:
        return [Difference(name, "shape", f"expected {list(want.shape)}, "
                                          f"got {list(got.shape)}")]
    mask = np.broadcast_to(np.asarray(mask, dtype=bool), want.shape)
    if not mask.any():
        return []
    w, g = want[mask], got[mask]
    if want.dtype.kind in "fc":
        r, a = tolerance(want.dtype, rtol, atol)
        ok = np.isclose(g, w, rtol=r, atol=a, equal_nan=True)
    else:
        ok = g == w
    if np.all(ok):
        return []
    bad = int(np.size(ok) - np.count_nonzero(ok))
    first = int(np.flatnonzero(~np.asarray(ok))[0])
    return [Difference(name, "values", f"{bad} of {np.size(ok)} defined positions differ; e.g. "
                                       f"expected {w.reshape(-1)[first]!r}, got "
                                       f"{g.reshape(-1)[first]!r}")]


def plain(value):
    """A backend's output as reports keep it: a tensor as an array, a sequence as a list of
    them, an empty optional as None (so that `compare_value` sees what the backend gave)."""
    if value is None:
        return None
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return np.asarray(value)
