"""What lowering an OpenVINO model gives back (`openvino/model`): the core network together
with the bindings between the model's Parameter and Result names and the network's inputs and
outputs, which translate a caller's feeds in and the core's outputs back."""
from __future__ import annotations

from typing import Tuple

import attrs
import numpy as np
import openvino as ov

from ..core.errors import InputError
from ..core.feeds import feed_dict
from ..core.network import Network
from ..core.types import TensorType


@attrs.frozen
class InputBinding:
    core_name: str        # the core network's input name
    names: Tuple[str, ...]  # names a caller may feed it by: friendly name, then tensor names
    type: TensorType


@attrs.frozen
class OutputBinding:
    user_name: str  # the model output's tensor name
    core_name: str  # the core network's output name


@attrs.define
class Lowered:
    """A model lowered onto the core: `network` (profile "openvino") plus the maps between
    the model's names and the network's."""

    network: Network
    model: object
    inputs: Tuple[InputBinding, ...]
    outputs: Tuple[OutputBinding, ...]
    readings: dict  # the frontend readings (A20-A24) the lowering used

    def core_feeds(self, user_feeds) -> dict:
        """Feeds keyed by Parameter name (friendly name or any tensor name) -> feeds keyed by
        the core network's input names."""
        by_name = {}
        for b in self.inputs:
            for n in b.names:
                by_name.setdefault(n, b)
        out = {}
        for key, value in feed_dict(user_feeds).items():
            b = by_name.get(key)
            if b is None:
                raise InputError(f"feed {key!r}", "openvino/model", "no Parameter of the model "
                                 "has this name", f"feed one of {[b.names[0] for b in self.inputs]}")
            if b.core_name in out:
                raise InputError(f"feed {key!r}", "openvino/model",
                                 f"Parameter {b.names[0]!r} is fed twice",
                                 "feed every Parameter once")
            out[b.core_name] = _feed_value(value, b)
        return out

    def user_outputs(self, core_outputs) -> dict:
        """Core outputs -> one entry per model output, in model output order, keyed by the
        output's tensor name."""
        return {o.user_name: core_outputs[o.core_name] for o in self.outputs}


def _feed_value(value, binding: InputBinding):
    if isinstance(value, ov.Tensor):
        value = np.array(value.data, copy=True)
    if not isinstance(value, (np.ndarray, np.generic)):
        try:
            value = np.asarray(value, dtype=binding.type.dtype)
        except (TypeError, ValueError) as exc:
            raise InputError(f"Parameter {binding.names[0]!r}", "openvino/model",
                             f"cannot be read as {binding.type!r}: {exc}",
                             "feed a numpy array") from None
    return value
