"""The op search's answer saved with the package, so that a campaign does not search again.

Searching the calls every ONNX op may make in a body (`onnx_op_search.signatures` over the
whole `catalogue`) runs thousands of reference kernels: seconds in every process that draws
a schema program (every Dask worker too). `op_catalogue.json` holds that answer for one
opset, with what it depends on: the onnx version, numpy's major version and a digest of the
search's own sources (`onnx_op_search.py`, `onnx_ops.py`, `op_ranges.py`). It is used only
where all three match; anywhere else the search runs as before, so a saved answer can never
stand for a different search. `python -m lazyloop.strategies.onnx_op_search` writes it
again (the test suite says when it is stale).
"""
from __future__ import annotations

import functools
import hashlib
import json
from pathlib import Path
from typing import Dict, Optional, Tuple

from .onnx_ops import OpCall, Port, freeze
from .op_ranges import Tensor

SAVED = Path(__file__).with_name("op_catalogue.json")
SOURCES = ("onnx_op_search.py", "onnx_ops.py", "op_ranges.py")


def stamp(opset: int) -> dict:
    """What the search's answer at `opset` depends on."""
    import numpy as np
    import onnx
    digest = hashlib.sha256()
    for name in SOURCES:
        digest.update(Path(__file__).with_name(name).read_bytes())
    return {"opset": opset, "onnx": onnx.__version__,
            "numpy": np.__version__.split(".")[0], "sources": digest.hexdigest()[:16]}


@functools.lru_cache(maxsize=None)
def saved(opset: int) -> Optional[Dict[str, Tuple[OpCall, ...]]]:
    """{op: its calls} as saved for `opset`, or None when nothing saved matches `stamp`."""
    try:
        document = json.loads(SAVED.read_text())
    except (OSError, ValueError):
        return None
    if document.get("stamp") != stamp(opset):
        return None
    return {op: tuple(_call(c) for c in calls) for op, calls in document["calls"].items()}


def write(opset: int, table: Dict[str, Tuple[OpCall, ...]], path: Path = SAVED) -> None:
    """Save `table` ({op: its calls}, the search's answer at `opset`)."""
    ops = ",\n".join(f" {json.dumps(op)}: {json.dumps([_plain_call(c) for c in calls])}"
                     for op, calls in table.items())  # one op a line: diffs say which
    path.write_text(f'{{"stamp": {json.dumps(stamp(opset))},\n"calls": {{\n{ops}}}}}\n')
    saved.cache_clear()


# -- OpCalls as JSON ----------------------------------------------------------------------

def _plain_call(c: OpCall) -> list:
    return [c.op, c.opset, [[p.role, p.dtype, p.shape, p.domain, _plain(p.value)]
                            for p in c.inputs],
            [[k, _plain(v)] for k, v in c.attributes], [list(o) for o in c.outputs]]


def _plain(value):
    if isinstance(value, Tensor):
        return {"tensor": [value.dtype, list(value.shape), _plain(value.values)]}
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    if isinstance(value, float) and value != value:
        return {"float": "nan"}
    if isinstance(value, float) and value in (float("inf"), float("-inf")):
        return {"float": str(value)}
    return value


def _value(plain):
    if isinstance(plain, dict) and "tensor" in plain:
        dtype, shape, values = plain["tensor"]
        return Tensor(dtype, tuple(shape), _value(values))
    if isinstance(plain, dict):
        return float(plain["float"])
    if isinstance(plain, list):
        return tuple(_value(v) for v in plain)
    return plain


def _call(plain: list) -> OpCall:
    op, opset, inputs, attributes, outputs = plain
    ports = tuple(Port(role, dtype, None if shape is None else tuple(shape), domain,
                       freeze(_value(value)))
                  for role, dtype, shape, domain, value in inputs)
    return OpCall(op, opset, ports, tuple((k, _value(v)) for k, v in attributes),
                  tuple((dtype, tuple(dims)) for dtype, dims in outputs))
