"""Reading an OpenVINO IR (`openvino/model`), negative port-map axes included.

OpenVINO writes a Loop or TensorIterator whose sliced input or concatenated output has a
negative axis (`axis="-2"`, counting from the end) as it is, and its own IR reader then
refuses that file ("not an unsigned 64 bit integer"). Such an IR is read here with each
negative axis written as the axis it counts to, and the port map of every such loop is then
given its negative axes back, so that the model is the one OpenVINO wrote: the same model
OpenVINO's runtime compiles (and lazyloop evaluates, `openvino/slice`, `openvino/concat`).
"""
from __future__ import annotations

import os
import xml.etree.ElementTree as ET
import numpy as np

# The functions below carry no annotations: each case folder's repro.py holds their source
# (lazyloop/difftest/repro.py), to read its IR the same way without lazyloop.


def read_ir(xml, weights=None):
    """The `openvino.Model` of an IR: `xml` the IR text (bytes, with `weights` the .bin
    bytes) or the path of an .xml file (its .bin beside it). Refusals are OpenVINO's
    reader's own exceptions."""
    import openvino as ov
    if not isinstance(xml, bytes):  # a path
        path = os.fspath(xml)
        with open(path, "rb") as f:
            xml = f.read()
        bin_path = os.path.splitext(path)[0] + ".bin"
        if weights is None and os.path.exists(bin_path):
            with open(bin_path, "rb") as f:
                weights = f.read()
    text, negative = with_axes_counted(xml)
    model = ov.Core().read_model(model=text.decode(), weights=ov.Tensor(
        np.frombuffer(weights or b"", dtype=np.uint8).copy()))
    if negative:
        restore_axes(model, negative)
    return model


def with_axes_counted(xml):
    """(the IR text with every negative port-map axis replaced by the axis it counts to --
    the rank of the loop's port plus the axis --, {loop name: {(side, external port):
    negative axis}})."""
    if b'axis="-' not in xml:
        return xml, {}
    root = ET.fromstring(xml)
    negative = {}
    for loop in root.iter("layer"):
        port_map = loop.find("port_map")
        if port_map is None:
            continue
        for entry in port_map:
            axis = int(entry.get("axis", 0))
            if axis >= 0:
                continue
            side = entry.tag  # "input" or "output"
            port = entry.get("external_port_id")
            rank = next(len(p.findall("dim")) for p in loop.find(side) if p.get("id") == port)
            entry.set("axis", str(rank + axis))
            negative.setdefault(loop.get("name"), {})[(side, int(port))] = axis
    return ET.tostring(root), negative


def restore_axes(model, negative):
    """Give each loop named in `negative` its negative axes back (its port map's input and
    output descriptions rebuilt), in the model and in every body."""
    from openvino._pyopenvino.op.util import ConcatOutputDescription, SliceInputDescription
    for node in _loops(model):
        axes = negative.get(node.get_friendly_name())
        if not axes:
            continue
        inputs = list(node.get_input_descriptions())
        for k, d in enumerate(inputs):
            axis = axes.get(("input", d.input_index))
            if isinstance(d, SliceInputDescription) and axis is not None:
                inputs[k] = SliceInputDescription(d.input_index, d.body_parameter_index,
                                                  d.start, d.stride, d.part_size, d.end, axis)
        outputs = list(node.get_output_descriptions())
        first_output = node.get_input_size()  # output ports are numbered after the inputs
        for k, d in enumerate(outputs):
            axis = axes.get(("output", first_output + d.output_index))
            if isinstance(d, ConcatOutputDescription) and axis is not None:
                outputs[k] = ConcatOutputDescription(d.body_value_index, d.output_index,
                                                     d.start, d.stride, d.part_size, d.end,
                                                     axis)
        node.set_input_descriptions(inputs)
        node.set_output_descriptions(outputs)
    model.validate_nodes_and_infer_types()


def _loops(model):
    for node in model.get_ordered_ops():
        if node.get_type_name() in ("Loop", "TensorIterator"):
            yield node
            yield from _loops(node.get_function())


__all__ = ["read_ir"]
