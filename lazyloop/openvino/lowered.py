"""How a caller's feed becomes the value a lowered OpenVINO model's core network takes
(`openvino/model`): an `openvino.Tensor` as a numpy array, anything else read with the
Parameter's declared dtype. The bindings themselves are the shared `lazyloop.core.lowered`
ones."""
from __future__ import annotations

import numpy as np
import openvino as ov

from ..core.errors import InputError
from ..core.lowered import InputBinding


def as_core_value(value, binding: InputBinding):
    if isinstance(value, ov.Tensor):
        value = np.array(value.data, copy=True)
    if not isinstance(value, (np.ndarray, np.generic)):
        try:
            value = np.asarray(value, dtype=binding.type.dtype)
        except (TypeError, ValueError) as exc:
            raise InputError(f"Parameter {binding.name!r}", "openvino/model",
                             f"cannot be read as {binding.type!r}: {exc}",
                             "feed a numpy array") from None
    return value
