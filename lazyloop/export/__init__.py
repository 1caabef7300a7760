"""Exporting a core (TensorRT-style) network to other loop IRs.

    from lazyloop.export import to_onnx, to_openvino
    model = to_onnx(net)                      # onnx.ModelProto: Loop (or Scan) nodes
    ov_model = to_openvino(net)               # openvino.Model: Loop-5 nodes

The export is *equivalent* to the network: on every input, wherever lazyloop says an output
position is defined, the exported model computes the same value (rule IDs: the core rules it
translates, plus `onnx/loop`, `onnx/scan9`, `openvino/loop5` for the target). Undefined
positions (CONCATENATE padding) are filled with zeros by the export; nothing may read them.
A construct with no faithful translation raises `NotExportable` (an `UnsupportedError`) naming
the layer and the reason; spec/51-difftest.md lists them.
"""
from __future__ import annotations

from ..errors import UnsupportedError


class NotExportable(UnsupportedError):
    """The network uses a construct the target IR cannot express faithfully."""


class TargetRefused(UnsupportedError):
    """The target library refused to build a node of a valid network (for example OpenVINO's
    shape inference of a loop that runs zero trips); a limitation of the target."""


def to_onnx(net, **options):
    from .onnx import export
    return export(net, **options)


def to_openvino(net, **options):
    from .openvino import export
    return export(net, **options)


__all__ = ["NotExportable", "TargetRefused", "to_onnx", "to_openvino"]
