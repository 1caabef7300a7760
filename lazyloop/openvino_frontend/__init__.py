"""Internals of `lazyloop.openvino`: lowering an `openvino.Model` onto the core network.

- `types`    OpenVINO element types and partial shapes as lazyloop types
- `kernels`  one OpenVINO node evaluated from Python (rule `openvino/node`)
- `register` the ambiguity entries this frontend adds (A20-A24)
- `lower`    the lowering itself (rules `openvino/model`, `openvino/loop5`,
             `openvino/tensor-iterator`, `openvino/slice`, `openvino/concat`)

The public surface is `lazyloop.openvino`; spec/40-openvino-lowering.md is the prose.
"""
