"""Recipes for the corners exporters' models hit (issue 22 point 2): loops of thousands of
trips whose body reads the iteration number (`onnx-count-loop`: an iteration counter kept in
too few bits wraps past 2^15 or 2^16), int64 values carried past 2^31 (`onnx-wide-loop`: an
engine keeping int64 in 32 bits wraps), and float16 chains where rounding between nodes
matters (`onnx-half-chain`: an engine computing float32 between nodes differs). Each program
hits its corner on purpose, so a backend that gets the corner wrong fails on most of them.
"""
from __future__ import annotations

from typing import Tuple

import attrs
import numpy as np
from hypothesis import strategies as st

from .onnx_ops import constant_node, typed_values, value_info
from .recipes import DialectProgram, _model

CORNER_OPSETS = (16, 13, 19, 21)


def _node(op, inputs, outputs, **kw):
    from onnx import helper
    return helper.make_node(op, list(inputs), list(outputs), **kw)


def _graph(nodes, name, inputs, outputs):
    from onnx import helper
    return helper.make_graph(nodes, name, inputs, outputs)


def _loop_inputs(nodes, inputs, feeds, count, m_source):
    """M as a Constant or as a graph input."""
    if m_source == "input":
        inputs.append(value_info("M", "int64", ()))
        feeds["M"] = np.array(count, np.int64)
    else:
        nodes.append(constant_node("M", np.array(count, np.int64)))


# ------------------------------------------------------------------------------------------
# Thousands of trips reading the iteration number
# ------------------------------------------------------------------------------------------

COUNTS = (40000, 1000, 33000, 70000)          # past 2^15 (32768) and 2^16 (65536)
ITER_READS = ("scan", "sum", "float", "last")


@attrs.frozen
class OnnxCountLoopRecipe:
    """A Loop of `count` trips whose body reads its iteration number i as `reads` says:
    "scan" stacks i, "sum" carries an int64 sum of i, "float" stacks i cast to float32
    (exact below 2^24), "last" carries i itself (its last value is count - 1)."""

    opset: int = 16
    count: int = 40000
    m_source: str = "const"
    reads: Tuple[str, ...] = ("scan",)
    format = "onnx"
    kind = "onnx-count-loop"

    def rules(self):
        return {"onnx/loop", "trip/count"}

    def features(self):
        f = {f"iteration-{r}" for r in self.reads} | {f"opset-{self.opset}", "long-loop"}
        if self.count > 2 ** 15:
            f.add("trips-past-2^15")
        if self.count > 2 ** 16:
            f.add("trips-past-2^16")
        return f

    def program(self) -> DialectProgram:
        return DialectProgram(self)

    def build(self):
        nodes, inputs, feeds = [], [], {}
        _loop_inputs(nodes, inputs, feeds, self.count, self.m_source)
        b = [_node("Identity", ["cond_in"], ["cond_out"])]
        b_in = [value_info("i", "int64", ()), value_info("cond_in", "bool", ())]
        carried_in, carried_out, scans, init, outs = [], [], [], [], []
        for read in self.reads:
            if read == "sum":
                carried_in.append(value_info("sum_in", "int64", ()))
                b.append(_node("Add", ["sum_in", "i"], ["sum_next"]))
                carried_out.append(value_info("sum_next", "int64", ()))
                init.append(("sum0", np.array(0, np.int64)))
            elif read == "last":
                carried_in.append(value_info("last_in", "int64", ()))
                b.append(_node("Identity", ["i"], ["last_next"]))
                carried_out.append(value_info("last_next", "int64", ()))
                init.append(("last0", np.array(-1, np.int64)))
            elif read == "float":
                b.append(_node("Cast", ["i"], ["i_float"], to=1))
                scans.append(value_info("i_float", "float32", ()))
            else:
                b.append(_node("Identity", ["i"], ["i_copy"]))
                scans.append(value_info("i_copy", "int64", ()))
        for name, value in init:
            inputs.append(value_info(name, "int64", ()))
            feeds[name] = value
        outs = [f"{v.name}_final" for v in carried_out] + [f"{v.name}_stacked" for v in scans]
        body = _graph(b, "count_loop_body", b_in + carried_in,
                      [value_info("cond_out", "bool", ())] + carried_out + scans)
        nodes.append(_node("Loop", ["M", ""] + [n for n, _ in init], outs, body=body))
        g_out = [value_info(n, "int64", ()) for n in outs[:len(carried_out)]]
        g_out += [value_info(n, "float32" if n.startswith("i_float") else "int64", (None,))
                  for n in outs[len(carried_out):]]
        return _model(_graph(nodes, "onnx_count_loop_program", inputs, g_out), self.opset), feeds


@st.composite
def onnx_count_loop_recipes(draw):
    return OnnxCountLoopRecipe(
        opset=draw(st.sampled_from(CORNER_OPSETS)), count=draw(st.sampled_from(COUNTS)),
        m_source=draw(st.sampled_from(("const", "input"))),
        reads=tuple(draw(st.lists(st.sampled_from(ITER_READS), min_size=1, max_size=4,
                                  unique=True))))


def onnx_count_loops():
    """Loops of thousands of trips reading their iteration number (`onnx/loop`)."""
    return onnx_count_loop_recipes().map(DialectProgram)


# ------------------------------------------------------------------------------------------
# int64 values carried past 2^31
# ------------------------------------------------------------------------------------------

WIDE_STARTS = (2 ** 31 + 5, 2 ** 31 - 2, -(2 ** 31) - 7, 2 ** 32 + 1, 3 * 2 ** 31)
WIDE_UPDATES = ("add", "double", "add-iter", "sub")


@attrs.frozen
class OnnxWideLoopRecipe:
    """A Loop of `count` trips carrying int64 values that start at `starts` (near or past
    ±2^31) and move by `update`: "add" adds `step`, "sub" subtracts it, "double" doubles,
    "add-iter" adds the iteration number; with `scan` each trip's value is stacked too."""

    opset: int = 16
    count: int = 2
    starts: Tuple[int, ...] = (2 ** 31 + 5,)
    update: str = "add"
    step: int = 1
    scan: bool = False
    m_source: str = "const"
    format = "onnx"
    kind = "onnx-wide-loop"

    def rules(self):
        return {"onnx/loop", "trip/count"}

    def features(self):
        return {"int64-past-2^31", f"update-{self.update}", f"opset-{self.opset}"} | (
            {"zero-trips"} if self.count == 0 else set())

    def program(self) -> DialectProgram:
        return DialectProgram(self)

    def build(self):
        nodes, inputs, feeds = [], [], {}
        _loop_inputs(nodes, inputs, feeds, self.count, self.m_source)
        b = [_node("Identity", ["cond_in"], ["cond_out"]),
             constant_node("step", np.array(self.step, np.int64)),
             constant_node("two", np.array(2, np.int64))]
        b_in = [value_info("i", "int64", ()), value_info("cond_in", "bool", ())]
        carried, scans, names = [], [], []
        for k, start in enumerate(self.starts):
            x, y = f"v{k}_in", f"v{k}_next"
            op, other = {"add": ("Add", "step"), "sub": ("Sub", "step"),
                         "double": ("Mul", "two"), "add-iter": ("Add", "i")}[self.update]
            b.append(_node(op, [x, other], [y]))
            b_in.append(value_info(x, "int64", ()))
            carried.append(value_info(y, "int64", ()))
            if self.scan:
                scans.append(value_info(y, "int64", ()))
            inputs.append(value_info(f"v{k}", "int64", ()))
            feeds[f"v{k}"] = np.array(start, np.int64)
            names.append(f"v{k}")
        outs = [f"v{k}_final" for k in range(len(self.starts))]
        outs += [f"v{k}_stacked" for k in range(len(scans))]
        body = _graph(b, "wide_loop_body", b_in,
                      [value_info("cond_out", "bool", ())] + carried + scans)
        nodes.append(_node("Loop", ["M", ""] + names, outs, body=body))
        g_out = [value_info(o, "int64", (None,) if o.endswith("stacked") else ()) for o in outs]
        return _model(_graph(nodes, "onnx_wide_loop_program", inputs, g_out), self.opset), feeds


@st.composite
def onnx_wide_loop_recipes(draw):
    update = draw(st.sampled_from(WIDE_UPDATES))
    return OnnxWideLoopRecipe(
        opset=draw(st.sampled_from(CORNER_OPSETS)), count=draw(st.sampled_from((2, 1, 3, 0))),
        starts=tuple(draw(st.lists(st.sampled_from(WIDE_STARTS), min_size=1, max_size=2))),
        update=update, step=draw(st.sampled_from((1, 2 ** 30, 7))), scan=draw(st.booleans()),
        m_source=draw(st.sampled_from(("const", "input"))))


def onnx_wide_loops():
    """Loops carrying int64 values past 2^31 (`onnx/loop`)."""
    return onnx_wide_loop_recipes().map(DialectProgram)


# ------------------------------------------------------------------------------------------
# float16 chains
# ------------------------------------------------------------------------------------------

# each step is two nodes whose float16 result depends on rounding the value between them:
# "absorb" (x + 1024) - 1024 loses x's bits below 0.5; "third" (x * 1/3) * 3; "tenth"
# x + x * 0.1
HALF_STEPS = ("absorb", "third", "tenth")


@attrs.frozen
class OnnxHalfChainRecipe:
    """A Loop (or, with `scan`, a Scan) of `trips` trips carrying a float16 value of `shape`
    through a chain of `steps` every trip, after adding a quarter of the trip's input (the
    iteration number, or the scan element); each trip's value is stacked too."""

    opset: int = 16
    scan: bool = False
    trips: int = 2
    shape: Tuple[int, ...] = (2,)
    steps: Tuple[str, ...] = ("absorb",)
    big: float = 1024.0
    format = "onnx"
    kind = "onnx-half-chain"

    def rules(self):
        return {"onnx/scan9"} if self.scan else {"onnx/loop"}

    def features(self):
        return {"float16-chain", f"opset-{self.opset}"} | {f"half-{s}" for s in self.steps}

    def program(self) -> DialectProgram:
        return DialectProgram(self)

    def _constants(self):
        return [constant_node(name, np.array(value, np.float16)) for name, value in
                (("quarter", 0.25), ("big", self.big), ("third", 1 / 3), ("three", 3),
                 ("tenth", 0.1))]

    def _chain(self, x):
        """The nodes of the steps applied to `x`, and the name of the result."""
        b = []
        for k, step in enumerate(self.steps):
            y, t = f"h{k}", f"h{k}_t"
            if step == "absorb":
                b += [_node("Add", [x, "big"], [t]), _node("Sub", [t, "big"], [y])]
            elif step == "third":
                b += [_node("Mul", [x, "third"], [t]), _node("Mul", [t, "three"], [y])]
            else:
                b += [_node("Mul", [x, "tenth"], [t]), _node("Add", [x, t], [y])]
            x = y
        return b, x

    def build(self):
        shape = self.shape
        x0 = typed_values("float16", shape, "any", 0) + np.float16(0.125)
        inputs = [value_info("x", "float16", shape)]
        feeds = {"x": x0.astype(np.float16)}
        if self.scan:
            step_in = value_info("e", "float16", shape)
            lead = []
        else:
            step_in = value_info("i", "int64", ())
            lead = [_node("Cast", ["i"], ["e"], to=10)]
        chain, last = self._chain("x_moved")
        b = self._constants() + lead + [_node("Mul", ["e", "quarter"], ["e_q"]),
                                        _node("Add", ["x_in", "e_q"], ["x_moved"])] + chain
        b += [_node("Identity", [last], ["x_next"]), _node("Identity", [last], ["x_each"])]
        carried = [value_info("x_next", "float16", shape)]
        stacked = [value_info("x_each", "float16", shape)]
        outs = ["x_final", "x_stacked"]
        g_out = [value_info("x_final", "float16", shape),
                 value_info("x_stacked", "float16", (None,) + shape)]
        if self.scan:
            xs = np.stack([typed_values("float16", shape, "any", 1 + t) for t in
                           range(self.trips)]) if self.trips else np.zeros((0,) + shape,
                                                                             np.float16)
            inputs.append(value_info("xs", "float16", (self.trips,) + shape))
            feeds["xs"] = xs.astype(np.float16)
            body = _graph(b, "half_scan_body", [value_info("x_in", "float16", shape), step_in],
                          carried + stacked)
            node = _node("Scan", ["x", "xs"], outs, body=body, num_scan_inputs=1)
            nodes = [node]
        else:
            body = _graph([_node("Identity", ["cond_in"], ["cond_out"])] + b, "half_loop_body",
                          [step_in, value_info("cond_in", "bool", ()),
                           value_info("x_in", "float16", shape)],
                          [value_info("cond_out", "bool", ())] + carried + stacked)
            nodes = [constant_node("M", np.array(self.trips, np.int64)),
                     _node("Loop", ["M", "", "x"], outs, body=body)]
        graph = _graph(nodes, "onnx_half_chain_program", inputs, g_out)
        return _model(graph, self.opset), feeds


@st.composite
def onnx_half_chain_recipes(draw):
    return OnnxHalfChainRecipe(
        opset=draw(st.sampled_from(CORNER_OPSETS)), scan=draw(st.booleans()),
        trips=draw(st.sampled_from((2, 1, 3))), shape=draw(st.sampled_from(((2,), (), (2, 3)))),
        steps=tuple(draw(st.lists(st.sampled_from(HALF_STEPS), min_size=1, max_size=3))),
        big=draw(st.sampled_from((1024.0, 2048.0, 512.0))))


def onnx_half_chains():
    """Loops and Scans computing float16 chains (`onnx/loop`, `onnx/scan9`)."""
    return onnx_half_chain_recipes().map(DialectProgram)
