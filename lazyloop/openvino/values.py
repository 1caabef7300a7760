"""Small readings of OpenVINO graph values that every lowering rule uses: the key of a node's
output in the lowering's environment, a scalar's one element, a Constant's data, and the
dtypes and shapes a trip count or condition may have."""
from __future__ import annotations

from typing import Optional

import numpy as np

INTS = (np.dtype(np.int32), np.dtype(np.int64))
BOOL = np.dtype(np.bool_)
SCALAR_SHAPES = ((), (1,))


def _key(output) -> tuple:
    return (output.get_node().get_instance_id(), output.get_index())


def _scalar_value(v) -> np.ndarray:
    """A () or (1,) tensor's one element as a 0-D array."""
    return np.asarray(v).reshape(())


def _constant_value(output, depth: int = 8) -> Optional[np.ndarray]:
    """The value of `output` when it is a Constant or is computed from Constants only
    (folded with OpenVINO's own `Node.evaluate`, as its shape inference folds it: a condition
    `Greater(0, 0)` is as constant as `false`, A22); None otherwise."""
    node = output.get_node()
    kind = node.get_type_name()
    if kind == "Constant":
        return np.asarray(node.get_data())
    if depth == 0 or kind in ("Parameter", "Loop", "TensorIterator", "If", "Result") or \
            node.get_output_size() != 1 or not node.get_output_partial_shape(0).is_static:
        return None
    inputs = [_constant_value(v, depth - 1) for v in node.input_values()]
    if any(v is None for v in inputs):
        return None
    import openvino as ov
    result = ov.Tensor(node.get_output_element_type(0), node.get_output_shape(0))
    try:
        done = node.evaluate([result], [ov.Tensor(np.ascontiguousarray(v)) for v in inputs])
    except Exception:  # noqa: BLE001 -- OpenVINO cannot fold it: not a constant to lazyloop
        return None
    return np.array(result.data, copy=True) if done else None
