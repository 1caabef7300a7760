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


def _constant_value(output) -> Optional[np.ndarray]:
    node = output.get_node()
    if node.get_type_name() == "Constant":
        return np.asarray(node.get_data())
    return None
