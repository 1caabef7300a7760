"""Recipes for ONNX Scan programs: Scan 9 and later (axes, directions, zero-length inputs;
`onnx/scan9`) and Scan 8 (batches, sequence lengths, padding; `onnx/scan8`), with the state
body they share."""
from __future__ import annotations

from typing import Optional, Tuple

import attrs
import numpy as np
from hypothesis import strategies as st

from .recipes import DialectProgram, _const, _model, _onnx, axes, newest_opset, values


def state_body(helper, nph, TP, states, n_inputs, E):
    """The body a Scan program shares across opsets: states st_k, scan elements e_i; each state
    moves to tanh(st_k + e0). Returns (nodes, body inputs, state outputs)."""
    b_in = [helper.make_tensor_value_info(f"st{k}", TP.FLOAT, E) for k in range(states)]
    b_in += [helper.make_tensor_value_info(f"e{i}", TP.FLOAT, E) for i in range(n_inputs)]
    b, b_out = [_const(helper, nph, "two", np.float32(2))], []
    for k in range(states):
        b.append(helper.make_node("Add", [f"st{k}", "e0"], [f"st{k}_sum"]))
        b.append(helper.make_node("Tanh", [f"st{k}_sum"], [f"st{k}_next"]))
        b_out.append(helper.make_tensor_value_info(f"st{k}_next", TP.FLOAT, E))
    return b, b_in, b_out


# ------------------------------------------------------------------------------------------
# ONNX Scan 9+
# ------------------------------------------------------------------------------------------

SCAN9_OPSETS = (16, 9, 11, 19, 21, 10)  # and the installed onnx's newest (newest_opset)
ELEMENT_SHAPES = ((2,), (), (2, 3))
SCAN_OUTPUT_SOURCES = ("state", "input", "sum")


@attrs.frozen
class OnnxScanRecipe:
    """One ONNX Scan (opset >= 9) node. Every scan input has the element shape `element` and
    the sequence length `length` on its axis; `inputs` holds (axis, direction) per input,
    `outputs` (source, axis, direction) per scan output; `states` float states of the element
    shape, updated by adding the first scan input's element."""

    opset: int = 16
    length: int = 2
    element: Tuple[int, ...] = (2,)
    inputs: Tuple[Tuple[int, int], ...] = ((0, 0),)
    states: int = 0
    outputs: Tuple[Tuple[str, int, int], ...] = ()
    seed: int = 0
    format = "onnx"
    kind = "onnx-scan9"

    def rules(self):
        return {"onnx/scan9"}

    def features(self):
        f = {f"opset-{self.opset}"}
        if self.length == 0:
            f.add("zero-length-scan-input")
        if any(d for _, d in self.inputs):
            f.add("reverse-scan-input")
        if any(a not in (0,) for a, _ in self.inputs):
            f.add("scan-input-axis-nonzero")
        if any(a < 0 for a, _ in self.inputs) or any(a < 0 for _, a, _ in self.outputs):
            f.add("negative-axis")
        if any(d for _, _, d in self.outputs):
            f.add("reverse-scan-output")
        if any(a != 0 for _, a, _ in self.outputs):
            f.add("scan-output-axis-nonzero")
        if any(s == "sum" for s, _, _ in self.outputs) or (
                not self.element and self.outputs):
            f.add("scalar-scan-output")
        return f

    def program(self) -> DialectProgram:
        return DialectProgram(self)

    def out_rank(self, source: str) -> int:
        return 1 if source == "sum" else len(self.element) + 1

    def build(self):
        onnx, TP, helper, nph = _onnx()
        E = list(self.element)
        inputs, feeds, scan_in = [], {}, []
        for k in range(self.states):
            name = f"s{k}"
            inputs.append(helper.make_tensor_value_info(name, TP.FLOAT, E))
            feeds[name] = values(tuple(E), self.seed + 10 + k)
        for i, (axis, _) in enumerate(self.inputs):
            rank = len(E) + 1
            a = axis + rank if axis < 0 else axis
            shape = E[:a] + [self.length] + E[a:]
            name = f"x{i}"
            inputs.append(helper.make_tensor_value_info(name, TP.FLOAT, shape))
            feeds[name] = values(tuple(shape), self.seed + i)
            scan_in.append(name)
        b, b_in, b_out = state_body(helper, nph, TP, self.states, len(self.inputs), E)
        for j, (src, _, _) in enumerate(self.outputs):
            y = f"o{j}"
            if src == "state" and self.states:
                b.append(helper.make_node("Identity", [f"st{j % self.states}_next"], [y]))
                shape = E
            elif src == "sum":
                b.append(helper.make_node("ReduceSum", [f"e{j % len(self.inputs)}"], [y],
                                          keepdims=0))
                shape = []
            else:
                b.append(helper.make_node("Mul", [f"e{j % len(self.inputs)}", "two"], [y]))
                shape = E
            b_out.append(helper.make_tensor_value_info(y, TP.FLOAT, shape))
        body = helper.make_graph(b, "scan_body", b_in, b_out)
        attrs_ = dict(num_scan_inputs=len(self.inputs),
                      scan_input_axes=[a for a, _ in self.inputs],
                      scan_input_directions=[d for _, d in self.inputs])
        if self.outputs:
            attrs_["scan_output_axes"] = [a for _, a, _ in self.outputs]
            attrs_["scan_output_directions"] = [d for _, _, d in self.outputs]
        outs = [f"s{k}_final" for k in range(self.states)] + \
               [f"o{j}_stacked" for j in range(len(self.outputs))]
        node = helper.make_node("Scan", [f"s{k}" for k in range(self.states)] + scan_in, outs,
                                body=body, **attrs_)
        ranks = [len(E)] * self.states + [self.out_rank(src) for src, _, _ in self.outputs]
        g_out = [helper.make_tensor_value_info(o, TP.FLOAT, [None] * r)
                 for o, r in zip(outs, ranks)]
        graph = helper.make_graph([node], "onnx_scan_program", inputs, g_out)
        return _model(graph, self.opset), feeds


@st.composite
def onnx_scan_recipes(draw, opsets=SCAN9_OPSETS):
    opset = draw(st.sampled_from(opsets + (newest_opset(),)))
    element = draw(st.sampled_from(ELEMENT_SHAPES))
    rank = len(element) + 1
    low = 0 if opset < 11 else -rank
    inputs = tuple(draw(st.lists(st.tuples(axes(low, rank - 1), st.integers(0, 1)),
                                 min_size=1, max_size=2)))
    states = draw(st.integers(0, 2))
    outputs = []
    for _ in range(draw(st.integers(0 if states else 1, 2))):
        src = draw(st.sampled_from(SCAN_OUTPUT_SOURCES))
        r = 1 if src == "sum" else rank
        low_out = 0 if opset < 11 else -r
        outputs.append((src, draw(axes(low_out, r - 1)), draw(st.integers(0, 1))))
    return OnnxScanRecipe(opset=opset, length=draw(st.integers(0, 3)), element=element,
                          inputs=inputs, states=states, outputs=tuple(outputs),
                          seed=draw(st.integers(0, 3)))


def onnx_scans():
    """ONNX Scan programs, opset 9 and later, with axes and directions (`onnx/scan9`)."""
    return onnx_scan_recipes().map(DialectProgram)


# what an engine that converts Scan from opset 11 on runs (IREE's ONNX import)
SCAN11_OPSETS = tuple(o for o in SCAN9_OPSETS if o >= 11)


def onnx_scan11s():
    """`onnx_scans` from opset 11 on (kind `onnx-scan11`): the Scans an engine that converts
    Scan only from opset 11 runs."""
    return onnx_scan_recipes(opsets=SCAN11_OPSETS).map(DialectProgram)


# ------------------------------------------------------------------------------------------
# ONNX Scan 8
# ------------------------------------------------------------------------------------------


@attrs.frozen
class OnnxScan8Recipe:
    """One ONNX Scan-8 node: a batch of `batch` sequences of `length` steps (axis 1),
    optional `sequence_lens` (None: omitted), `directions` per scan input, `states` states,
    `outputs` sources of scan outputs (padded to `length` where a sequence is shorter)."""

    batch: int = 1
    length: int = 2
    element: Tuple[int, ...] = (2,)
    lens: Optional[Tuple[int, ...]] = None
    directions: Tuple[int, ...] = (0,)
    states: int = 1
    outputs: Tuple[str, ...] = ()
    seed: int = 0
    format = "onnx"
    kind = "onnx-scan8"

    def rules(self):
        return {"onnx/scan8"}

    def features(self):
        f = set()
        if self.lens is not None and any(n < self.length for n in self.lens):
            f.add("scan8-padding")
        if self.lens is not None and any(n == 0 for n in self.lens):
            f.add("scan8-empty-sequence")
        if any(self.directions):
            f.add("reverse-scan-input")
        if self.lens is None:
            f.add("sequence-lens-omitted")
        return f

    def program(self) -> DialectProgram:
        return DialectProgram(self)

    def build(self):
        onnx, TP, helper, nph = _onnx()
        E, B, L = list(self.element), self.batch, self.length
        inputs, feeds = [], {}
        lens_name = ""
        if self.lens is not None:
            lens_name = "sequence_lens"
            inputs.append(helper.make_tensor_value_info(lens_name, TP.INT64, [B]))
            feeds[lens_name] = np.array(self.lens, np.int64)
        for k in range(self.states):
            inputs.append(helper.make_tensor_value_info(f"s{k}", TP.FLOAT, [B] + E))
            feeds[f"s{k}"] = values((B, *E), self.seed + 10 + k)
        for i in range(len(self.directions)):
            inputs.append(helper.make_tensor_value_info(f"x{i}", TP.FLOAT, [B, L] + E))
            feeds[f"x{i}"] = values((B, L, *E), self.seed + i)
        b, b_in, b_out = state_body(helper, nph, TP, self.states, len(self.directions), E)
        for j, src in enumerate(self.outputs):
            y = f"o{j}"
            if src == "state" and self.states:
                b.append(helper.make_node("Identity", [f"st{j % self.states}_next"], [y]))
            else:
                b.append(helper.make_node("Mul", [f"e{j % len(self.directions)}", "two"], [y]))
            b_out.append(helper.make_tensor_value_info(y, TP.FLOAT, E))
        body = helper.make_graph(b, "scan8_body", b_in, b_out)
        outs = [f"s{k}_final" for k in range(self.states)] + \
               [f"o{j}_stacked" for j in range(len(self.outputs))]
        attrs_ = dict(num_scan_inputs=len(self.directions), body=body)
        if any(self.directions):
            attrs_["directions"] = list(self.directions)
        node = helper.make_node("Scan", [lens_name] + [f"s{k}" for k in range(self.states)]
                                + [f"x{i}" for i in range(len(self.directions))], outs, **attrs_)
        ranks = [len(E) + 1] * self.states + [len(E) + 2] * len(self.outputs)
        g_out = [helper.make_tensor_value_info(o, TP.FLOAT, [None] * r)
                 for o, r in zip(outs, ranks)]
        graph = helper.make_graph([node], "onnx_scan8_program", inputs, g_out)
        return _model(graph, 8), feeds


@st.composite
def onnx_scan8_recipes(draw):
    batch = draw(st.integers(1, 3))
    length = draw(st.integers(1, 4))
    lens = None
    if draw(st.booleans()):  # the boundaries first: the full length, an empty sequence, one
        one_len = st.one_of(st.sampled_from((length, 0, 1)), st.integers(0, length))
        lens = tuple(draw(st.lists(one_len, min_size=batch, max_size=batch)))
    states = draw(st.integers(0, 2))
    outputs = tuple(draw(st.lists(st.sampled_from(("input", "state")),
                                  min_size=0 if states else 1, max_size=2)))
    return OnnxScan8Recipe(batch=batch, length=length,
                           element=draw(st.sampled_from(((2,), ()))), lens=lens,
                           directions=tuple(draw(st.lists(st.integers(0, 1), min_size=1,
                                                          max_size=2))),
                           states=states, outputs=outputs, seed=draw(st.integers(0, 3)))


def onnx_scan8s():
    """ONNX Scan-8 programs: batches, sequence lengths, directions (`onnx/scan8`)."""
    return onnx_scan8_recipes().map(DialectProgram)
