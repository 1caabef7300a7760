"""Recipes that reach further than the small loops: long ONNX Loops with narrow-typed
counters and accumulators (int8, int16, uint8, float16: overflow, wrap-around and rounding
happen within the loop), a body value used both as a carried state and as a scan output,
If-only programs and If inside Scan bodies, over more dtypes and opsets up to the installed
onnx's newest (`onnx/loop`, `onnx/scan9`, `onnx/if`)."""
from __future__ import annotations

from typing import Tuple

import attrs
import numpy as np
from hypothesis import strategies as st

from .recipes import DialectProgram, _const, _model, _onnx, newest_opset, values

NARROW_DTYPES = ("int8", "int16", "uint8", "float16")
# element types of If branches: Add/Mul take them all from opset 14 on
IF_DTYPES = ("float32", "int32", "int8", "int16", "uint8", "int64", "float16", "float64")


def _tp(TP, dtype: str):
    return {"float32": TP.FLOAT, "float16": TP.FLOAT16, "float64": TP.DOUBLE, "int8": TP.INT8,
            "int16": TP.INT16, "int32": TP.INT32, "int64": TP.INT64, "uint8": TP.UINT8,
            "bool": TP.BOOL}[dtype]


@attrs.frozen
class OnnxLongLoopRecipe:
    """A Loop of `count` trips (hundreds to thousands) carrying a counter of `dtype` that
    adds `step` each trip and an accumulator that adds the counter: both wrap around (or
    round, for float16) inside the loop. With `scan_state` the counter's next value is also
    a scan output (one body value as both state and scan output)."""

    opset: int = 14
    dtype: str = "int8"
    count: int = 300
    start: int = 0
    step: int = 1
    m_source: str = "const"
    scan_state: bool = False
    format = "onnx"
    kind = "onnx-long-loop"

    def rules(self):
        return {"onnx/loop", "trip/count"}

    def features(self):
        return {f"dtype-{self.dtype}", f"opset-{self.opset}", "long-loop"} | (
            {"state-and-scan-output"} if self.scan_state else set())

    def program(self) -> DialectProgram:
        return DialectProgram(self)

    def build(self):
        onnx, TP, helper, nph = _onnx()
        dt, T = np.dtype(self.dtype), _tp(TP, self.dtype)
        nodes, inputs, feeds = [], [], {}
        if self.m_source == "input":
            inputs.append(helper.make_tensor_value_info("M", TP.INT64, []))
            feeds["M"] = np.array(self.count, np.int64)
        else:
            nodes.append(_const(helper, nph, "M", np.array(self.count, np.int64)))
        for name in ("counter", "acc"):
            inputs.append(helper.make_tensor_value_info(name, T, []))
        feeds["counter"] = np.array(self.start).astype(dt)
        feeds["acc"] = np.array(0, dt)
        b = [_const(helper, nph, "step", np.array(self.step).astype(dt)),
             helper.make_node("Identity", ["cond_in"], ["cond_out"]),
             helper.make_node("Add", ["c", "step"], ["c_next"]),
             helper.make_node("Add", ["a", "c_next"], ["a_next"])]
        b_in = [helper.make_tensor_value_info("i", TP.INT64, []),
                helper.make_tensor_value_info("cond_in", TP.BOOL, []),
                helper.make_tensor_value_info("c", T, []),
                helper.make_tensor_value_info("a", T, [])]
        b_out = [helper.make_tensor_value_info("cond_out", TP.BOOL, []),
                 helper.make_tensor_value_info("c_next", T, []),
                 helper.make_tensor_value_info("a_next", T, [])]
        outs = ["counter_final", "acc_final"]
        if self.scan_state:  # the same body value, as a scan output too
            b_out.append(helper.make_tensor_value_info("c_next", T, []))
            outs.append("counter_stacked")
        body = helper.make_graph(b, "long_loop_body", b_in, b_out)
        nodes.append(helper.make_node("Loop", ["M", ""] + ["counter", "acc"], outs, body=body))
        g_out = [helper.make_tensor_value_info(o, T, [None] if o.endswith("stacked") else [])
                 for o in outs]
        graph = helper.make_graph(nodes, "onnx_long_loop_program", inputs, g_out)
        return _model(graph, self.opset), feeds


@st.composite
def onnx_long_loop_recipes(draw):
    dtype = draw(st.sampled_from(NARROW_DTYPES))
    info = np.finfo(dtype) if dtype == "float16" else np.iinfo(dtype)
    signed = info.min < 0
    steps = (1, 3, 7, -1, 100) if signed else (1, 3, 7, 100)
    return OnnxLongLoopRecipe(
        opset=draw(st.sampled_from((14, 16, 19, 21, newest_opset()))), dtype=dtype,
        count=draw(st.sampled_from((300, 100, 1000, 2500))),
        start=draw(st.integers(-100 if signed else 0, 100)), step=draw(st.sampled_from(steps)),
        m_source=draw(st.sampled_from(("const", "input"))), scan_state=draw(st.booleans()))


def onnx_long_loops():
    """Long ONNX Loops with narrow-typed counters and accumulators (`onnx/loop`)."""
    return onnx_long_loop_recipes().map(DialectProgram)


@attrs.frozen
class OnnxIfRecipe:
    """An If on a condition: an input, a constant, or (inside a Scan body, `in_scan`) the
    element's sum compared with 0. Its then branch adds `x` to itself, its else branch
    multiplies `x` by itself; both read `x` from the enclosing scope."""

    opset: int = 16
    dtype: str = "float32"
    shape: Tuple[int, ...] = (2,)
    cond: str = "input"            # "input", "true", "false"; in a Scan: the element's sign
    cond_value: bool = True
    in_scan: bool = False
    length: int = 2
    seed: int = 0
    format = "onnx"

    @property
    def kind(self):
        return "onnx-scan-if" if self.in_scan else "onnx-if"

    def rules(self):
        return {"onnx/if", "onnx/scan9"} if self.in_scan else {"onnx/if"}

    def features(self):
        return {f"dtype-{self.dtype}", f"opset-{self.opset}", self.kind}

    def program(self) -> DialectProgram:
        return DialectProgram(self)

    def _if(self, helper, nph, T, x, cond, out):
        then = helper.make_graph([helper.make_node("Add", [x, x], ["then_y"])], "then", [],
                                 [helper.make_tensor_value_info("then_y", T, list(self.shape))])
        other = helper.make_graph([helper.make_node("Mul", [x, x], ["else_y"])], "else", [],
                                  [helper.make_tensor_value_info("else_y", T, list(self.shape))])
        return helper.make_node("If", [cond], [out], then_branch=then, else_branch=other)

    def build(self):
        onnx, TP, helper, nph = _onnx()
        dt, T = np.dtype(self.dtype), _tp(TP, self.dtype)
        scale = 1 if dt.kind == "f" else 4  # integer feeds: small whole numbers
        if not self.in_scan:
            x = (values(self.shape, self.seed) * scale).astype(dt)
            inputs = [helper.make_tensor_value_info("x", T, list(self.shape))]
            feeds, nodes = {"x": x}, []
            if self.cond == "input":
                inputs.append(helper.make_tensor_value_info("c", TP.BOOL, []))
                feeds["c"] = np.array(self.cond_value)
            else:
                nodes.append(_const(helper, nph, "c", np.array(self.cond == "true")))
            nodes.append(self._if(helper, nph, T, "x", "c", "y"))
            graph = helper.make_graph(nodes, "onnx_if_program", inputs,
                                      [helper.make_tensor_value_info("y", T, list(self.shape))])
            return _model(graph, self.opset), feeds
        xs = (values((self.length, *self.shape), self.seed) * scale).astype(dt)
        body = helper.make_graph(
            [helper.make_node("Cast", ["e"], ["e_f"], to=TP.FLOAT),  # ReduceSum: no int8
             helper.make_node("ReduceSum", ["e_f"], ["total"], keepdims=0),
             _const(helper, nph, "zero", np.array(0, np.float32)),
             helper.make_node("Greater", ["total", "zero"], ["positive"]),
             self._if(helper, nph, T, "e", "positive", "y")],
            "scan_if_body", [helper.make_tensor_value_info("e", T, list(self.shape))],
            [helper.make_tensor_value_info("y", T, list(self.shape))])
        node = helper.make_node("Scan", ["xs"], ["ys"], body=body, num_scan_inputs=1)
        graph = helper.make_graph(
            [node], "onnx_scan_if_program",
            [helper.make_tensor_value_info("xs", T, [self.length, *self.shape])],
            [helper.make_tensor_value_info("ys", T, [self.length, *self.shape])])
        return _model(graph, self.opset), {"xs": xs}


@st.composite
def onnx_if_recipes(draw, in_scan: bool = False, dtypes=IF_DTYPES):
    return OnnxIfRecipe(
        opset=draw(st.sampled_from((16, 14, 19, 21, newest_opset()))),
        dtype=draw(st.sampled_from(dtypes)),
        shape=draw(st.sampled_from(((2,), (), (1, 3)))),
        cond=draw(st.sampled_from(("input", "true", "false"))),
        cond_value=draw(st.booleans()), in_scan=in_scan,
        length=draw(st.integers(0 if in_scan else 2, 3)), seed=draw(st.integers(0, 3)))


def onnx_ifs():
    """If-only programs (`onnx/if`)."""
    return onnx_if_recipes().map(DialectProgram)


# an engine whose 8-bit arithmetic fails outside any If too (MNN: an int8 Add crashes, an
# int8 Mul gives wrong values) is not tested on If with them: they would only show that
IF_DTYPES_NO_8BIT = tuple(d for d in IF_DTYPES if d not in ("int8", "uint8"))


def onnx_ifs_without_8bit():
    """`onnx_ifs` without int8 and uint8 branches (kind `onnx-if-no-8bit`)."""
    return onnx_if_recipes(dtypes=IF_DTYPES_NO_8BIT).map(DialectProgram)


def onnx_scan_ifs():
    """Scan 9+ programs whose body decides per element with an If (`onnx/scan9`, `onnx/if`)."""
    return onnx_if_recipes(in_scan=True).map(DialectProgram)
