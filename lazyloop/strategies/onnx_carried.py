"""Recipes for ONNX Loops whose carried values change shape (`onnx/loop`, ambiguity A11
"allow") and Loops whose condition, trip count and iteration number are one-element tensors
of shape [1] (A16 "one-element"); both declare some inputs with unknown rank (no shape) or
named unknown dims (dim_param) instead of their shapes (`onnx/declared`; the main graph's
inputs always declare a rank: ONNX's checker wants one there)."""
from __future__ import annotations

from typing import Tuple

import attrs
import numpy as np
from hypothesis import strategies as st

from .recipes import DialectProgram, _const, _model, _onnx, newest_opset, values

CARRIED_OPSETS = (16, 13, 19, 21)  # and the installed onnx's newest
# how a graph input and a body input declare their shape
DECLARED = ("exact", "dim-param", "no-shape")
# grow: Concat a row onto it; double: Concat it onto itself; shrink: Slice off its first row
GROW_UPDATES = ("grow", "shrink", "double")
INT64_MAX = np.iinfo(np.int64).max


def declared_shape(declared: str, shape, names: str, top: bool = False):
    """The shape an input declares: its own, named unknown dims, or none (unknown rank). ONNX's
    checker wants a shape on the main graph's inputs, so there "no-shape" names the dims."""
    if declared == "exact":
        return list(shape)
    if declared == "dim-param" or top:
        return [f"{names}{k}" for k in range(len(shape))]
    return None


@attrs.frozen
class OnnxGrowLoopRecipe:
    """A Loop of `count` trips over carried values, each entering with `rows` rows of width
    `width` ((): a vector of `rows` elements; `rows` may be 0) and updated by one of
    GROW_UPDATES: "grow" concatenates the row i + w, "double" concatenates the value onto
    itself, "shrink" slices off the first row. The graph inputs and body inputs declare
    their shapes as `declared` says (the body's, being shape-changing, never exactly: "exact"
    gives unnamed dims); `scan_rows` stacks each trip's row count as a scan output."""

    opset: int = 16
    count: int = 2
    m_source: str = "const"
    cond: str = "omit"             # the Loop's cond: omitted, or a constant true
    carried: Tuple[Tuple[int, Tuple[int, ...], str], ...] = ((1, (2,), "grow"),)
    declared: str = "exact"
    scan_rows: bool = False
    seed: int = 0
    format = "onnx"
    kind = "onnx-grow-loop"

    def rules(self):
        return {"onnx/loop", "onnx/declared"}

    def features(self):
        f = {f"carried-{u}" for _, _, u in self.carried} | {f"declared-{self.declared}",
                                                           f"opset-{self.opset}"}
        if any(rows == 0 for rows, _, _ in self.carried):
            f.add("carried-enters-empty")
        return f

    def program(self) -> DialectProgram:
        return DialectProgram(self)

    def build(self):
        onnx, TP, helper, nph = _onnx()
        nodes, inputs, feeds = [], [], {}
        if self.m_source == "input":
            inputs.append(helper.make_tensor_value_info("M", TP.INT64, []))
            feeds["M"] = np.array(self.count, np.int64)
        else:
            nodes.append(_const(helper, nph, "M", np.array(self.count, np.int64)))
        inputs.append(helper.make_tensor_value_info("w", TP.FLOAT, []))
        feeds["w"] = values((), self.seed + 7)
        b = [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
             helper.make_node("Cast", ["i"], ["i_f"], to=TP.FLOAT),
             helper.make_node("Add", ["i_f", "w"], ["i_w"]),
             _const(helper, nph, "zero1", np.zeros(1, np.int64)),
             _const(helper, nph, "one1", np.ones(1, np.int64)),
             _const(helper, nph, "end1", np.array([INT64_MAX], np.int64))]
        b_in = [helper.make_tensor_value_info("i", TP.INT64, []),
                helper.make_tensor_value_info("cond_in", TP.BOOL, [])]
        b_out = [helper.make_tensor_value_info("cond_out", TP.BOOL, [])]
        names, outs = [], []
        for k, (rows, width, update) in enumerate(self.carried):
            shape = (rows, *width)
            inputs.append(helper.make_tensor_value_info(
                f"v{k}", TP.FLOAT, declared_shape(self.declared, shape, f"v{k}_d", top=True)))
            feeds[f"v{k}"] = values(shape, self.seed + k)
            names.append(f"v{k}")
            body_shape = declared_shape(self.declared, shape, f"c{k}_d")
            if self.declared == "exact":
                body_shape = [None] + list(width)
            x, y = f"c{k}", f"c{k}_next"
            b_in.append(helper.make_tensor_value_info(x, TP.FLOAT, body_shape))
            b_out.append(helper.make_tensor_value_info(y, TP.FLOAT, body_shape))
            b += self._update(helper, nph, x, y, width, update, k)
            outs.append(f"v{k}_final")
        g_out = [helper.make_tensor_value_info(o, TP.FLOAT, [None] * (1 + len(w)))
                 for o, (_, w, _) in zip(outs, self.carried)]
        if self.scan_rows:
            b += [helper.make_node("Shape", ["c0_next"], ["c0_shape"]),
                  _const(helper, nph, "first", np.array(0, np.int64)),
                  helper.make_node("Gather", ["c0_shape", "first"], ["c0_rows"], axis=0)]
            b_out.append(helper.make_tensor_value_info("c0_rows", TP.INT64, []))
            outs.append("rows_stacked")
            g_out.append(helper.make_tensor_value_info("rows_stacked", TP.INT64, [None]))
        body = helper.make_graph(b, "grow_loop_body", b_in, b_out)
        if self.cond == "true":
            nodes.append(_const(helper, nph, "cond", np.array(True)))
        cond = "cond" if self.cond == "true" else ""
        nodes.append(helper.make_node("Loop", ["M", cond] + names, outs, body=body))
        graph = helper.make_graph(nodes, "onnx_grow_loop_program", inputs, g_out)
        return _model(graph, self.opset), feeds

    @staticmethod
    def _update(helper, nph, x, y, width, update, k):
        if update == "shrink":  # x[1:] along axis 0 (an empty value stays empty)
            return [helper.make_node("Slice", [x, "one1", "end1", "zero1"], [y])]
        if update == "double":
            return [helper.make_node("Concat", [x, x], [y], axis=0)]
        row = f"c{k}_row"
        return [_const(helper, nph, f"{row}_zeros", np.zeros((1, *width), np.float32)),
                helper.make_node("Add", ["i_w", f"{row}_zeros"], [row]),
                helper.make_node("Concat", [x, row], [y], axis=0)]


@st.composite
def onnx_grow_loop_recipes(draw):
    carried = tuple(draw(st.lists(st.tuples(st.integers(1, 2) | st.just(0),
                                            st.sampled_from(((2,), ())),
                                            st.sampled_from(GROW_UPDATES)),
                                  min_size=1, max_size=2)))
    return OnnxGrowLoopRecipe(
        opset=draw(st.sampled_from(CARRIED_OPSETS + (newest_opset(),))),
        count=draw(st.integers(0, 3)), m_source=draw(st.sampled_from(("const", "input"))),
        cond=draw(st.sampled_from(("omit", "true"))), carried=carried, declared=draw(st.sampled_from(DECLARED)),
        scan_rows=draw(st.booleans()), seed=draw(st.integers(0, 3)))


def onnx_grow_loops():
    """ONNX Loops whose carried values grow, double or shrink (`onnx/loop`, A11)."""
    return onnx_grow_loop_recipes().map(DialectProgram)


# ------------------------------------------------------------------------------------------
# [1] conditions, trip counts and iteration numbers
# ------------------------------------------------------------------------------------------

ONE_MODES = ("M,cond", "M,", ",cond")


@attrs.frozen
class OnnxOneLoopRecipe:
    """A Loop whose trip count (`m_one`), condition (`cond_one`: the outer cond, the body's
    condition input and output) and iteration number (`iter_one`) may each be a tensor of
    shape [1] rather than a scalar. The body continues while i + 1 < `stop` (and, with a
    cond, while its condition input holds); it carries a [1, 2] accumulator adding i (declared as
    `declared` says) and stacks the iteration number and the condition input as scan
    outputs, which keep their [1] shape."""

    opset: int = 16
    mode: str = "M,cond"
    count: int = 2
    cond_init: bool = True
    stop: int = 3
    m_one: bool = True
    cond_one: bool = True
    iter_one: bool = True
    declared: str = "exact"
    seed: int = 0
    format = "onnx"
    kind = "onnx-loop-1d"

    def rules(self):
        return {"onnx/loop", "onnx/declared"}

    def features(self):
        f = {f"mode({self.mode})", f"declared-{self.declared}", f"opset-{self.opset}"}
        f |= {name for name, on in (("one-element-M", self.m_one and self.has_m),
                                    ("one-element-cond", self.cond_one and self.has_cond),
                                    ("one-element-iter", self.iter_one)) if on}
        return f

    @property
    def has_m(self):
        return self.mode.startswith("M")

    @property
    def has_cond(self):
        return self.mode.endswith("cond")

    def program(self) -> DialectProgram:
        return DialectProgram(self)

    def build(self):
        onnx, TP, helper, nph = _onnx()
        nodes, inputs, feeds = [], [], {}
        m_shape = [1] if self.m_one else []
        c_shape = [1] if self.cond_one and self.has_cond else []
        i_shape = [1] if self.iter_one else []
        m_name = c_name = ""
        if self.has_m:
            m_name = "M"
            inputs.append(helper.make_tensor_value_info("M", TP.INT64, m_shape))
            feeds["M"] = np.full(m_shape, self.count, np.int64)
        if self.has_cond:
            c_name = "cond"
            inputs.append(helper.make_tensor_value_info("cond", TP.BOOL, c_shape))
            feeds["cond"] = np.full(c_shape, self.cond_init)
        inputs.append(helper.make_tensor_value_info(
            "acc", TP.FLOAT, declared_shape(self.declared, (1, 2), "acc_d", top=True)))
        feeds["acc"] = values((1, 2), self.seed)
        b = [helper.make_node("Cast", ["i"], ["i_f"], to=TP.FLOAT),
             _const(helper, nph, "one", np.int64(1)),
             _const(helper, nph, "stop", np.int64(self.stop)),
             _const(helper, nph, "c_shape", np.array(c_shape, np.int64)),
             helper.make_node("Add", ["i", "one"], ["i_next"]),
             helper.make_node("Less", ["i_next", "stop"], ["go"]),
             # without a cond the body passes its condition input through (A15 unasked)
             helper.make_node("And", ["go", "cond_in"], ["go_on"]) if self.has_cond else
             helper.make_node("Identity", ["cond_in"], ["go_on"]),
             helper.make_node("Reshape", ["go_on", "c_shape"], ["cond_out"]),
             helper.make_node("Add", ["a", "i_f"], ["a_next"]),
             helper.make_node("Cast", ["cond_in"], ["cond_f"], to=TP.FLOAT)]
        a_shape = declared_shape(self.declared, (1, 2), "a_d")
        b_in = [helper.make_tensor_value_info("i", TP.INT64, i_shape),
                helper.make_tensor_value_info("cond_in", TP.BOOL, c_shape),
                helper.make_tensor_value_info("a", TP.FLOAT, a_shape)]
        b_out = [helper.make_tensor_value_info("cond_out", TP.BOOL, c_shape),
                 helper.make_tensor_value_info("a_next", TP.FLOAT, a_shape),
                 helper.make_tensor_value_info("i_f", TP.FLOAT, i_shape),
                 helper.make_tensor_value_info("cond_f", TP.FLOAT, c_shape)]
        body = helper.make_graph(b, "one_loop_body", b_in, b_out)
        outs = ["acc_final", "iters", "conds"]
        nodes.append(helper.make_node("Loop", [m_name, c_name, "acc"], outs, body=body))
        g_out = [helper.make_tensor_value_info("acc_final", TP.FLOAT, [1, 2]),
                 helper.make_tensor_value_info("iters", TP.FLOAT, [None] + i_shape),
                 helper.make_tensor_value_info("conds", TP.FLOAT, [None] + c_shape)]
        graph = helper.make_graph(nodes, "onnx_one_loop_program", inputs, g_out)
        return _model(graph, self.opset), feeds


@st.composite
def onnx_one_loop_recipes(draw):
    mode = draw(st.sampled_from(ONE_MODES))
    return OnnxOneLoopRecipe(
        opset=draw(st.sampled_from(CARRIED_OPSETS + (newest_opset(),))), mode=mode,
        count=draw(st.sampled_from((2, 1, 0, 3, 4))), cond_init=draw(st.booleans()),
        stop=draw(st.integers(0, 4)), m_one=draw(st.booleans()),
        cond_one=draw(st.booleans()), iter_one=draw(st.booleans()),
        declared=draw(st.sampled_from(DECLARED)), seed=draw(st.integers(0, 3)))


def onnx_one_loops():
    """ONNX Loops with [1] conditions, trip counts and iteration numbers (A16)."""
    return onnx_one_loop_recipes().map(DialectProgram)
