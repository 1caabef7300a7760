"""The vocabulary of a conformance case: `U` (an undefined position), `Expected` (an output
written by hand), `Case`, and the `CASES` table that the `case` decorator (core programs) and
`dialect_case` (ONNX / OpenVINO recipes) fill in."""
from __future__ import annotations

from typing import Callable, Dict, Optional, Tuple

import attrs
import numpy as np

class _Undefined:
    def __repr__(self):
        return "U"


U = _Undefined()


@attrs.frozen
class Expected:
    """An expected output: its values (with U where undefined) and dtype."""
    values: object
    dtype: str = "float32"
    shape: Optional[Tuple[int, ...]] = None  # needed when the array is empty

    def array_and_mask(self):
        from ..core.undefined import fill_value
        dtype = np.dtype(self.dtype)
        flat = list(_flatten(self.values))
        mask = np.array([v is not U for v in flat], dtype=bool)
        data = np.array([fill_value(dtype) if v is U else v for v in flat], dtype=dtype)
        shape = self.shape if self.shape is not None else np.shape(
            np.empty(_shape_of(self.values), dtype=np.int8))
        return data.reshape(shape), mask.reshape(shape)


def _flatten(v):
    if isinstance(v, (list, tuple)):
        for x in v:
            yield from _flatten(x)
    else:
        yield v


def _shape_of(v):
    shape = []
    while isinstance(v, (list, tuple)):
        shape.append(len(v))
        if not v:
            break
        v = v[0]
    return tuple(shape)


@attrs.frozen
class Case:
    """name, rules, inputs and expected outputs (by hand); `build(net, api)` writes a core
    program on `net` (format "core"), or `model()` returns a dialect model ("onnx" or
    "openvino"); `ambiguities` lists register IDs the answer depends on."""
    name: str
    rules: Tuple[str, ...]
    inputs: Dict[str, np.ndarray]
    expected: Dict[str, Expected]
    build: Optional[Callable] = None
    model: Optional[Callable] = None
    format: str = "core"
    ambiguities: Tuple[str, ...] = ()
    note: str = ""

    def network(self, api=None):
        """The case as a `lazyloop.Network` (core cases)."""
        import lazyloop
        api = api or lazyloop
        net = lazyloop.Network("tensorrt")
        self.build(net, api)
        return net

    def expected_arrays(self):
        """{name: (values with lazyloop's fill where undefined, defined mask)}."""
        return {k: e.array_and_mask() for k, e in self.expected.items()}


CASES: Dict[str, Case] = {}


def case(name, rules, inputs, expected, ambiguities=(), note=""):
    """Register a core case whose builder is the decorated function."""
    def wrap(fn):
        CASES[name] = Case(name, tuple(rules), {k: np.asarray(v) for k, v in inputs.items()},
                           expected, build=fn, ambiguities=tuple(ambiguities),
                           note=note or (fn.__doc__ or "").strip())
        return fn
    return wrap


def dialect_case(name, rules, fmt, recipe, inputs, expected, ambiguities=(), note=""):
    def model():
        return recipe.build()[0]
    CASES[name] = Case(name, tuple(rules), {k: np.asarray(v) for k, v in inputs.items()},
                       expected, model=model, format=fmt, ambiguities=tuple(ambiguities),
                       note=note)
