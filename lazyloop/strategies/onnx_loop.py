"""Recipes for ONNX Loop programs in every mode of the operator's (M, cond) table, with carried
values, scan outputs and the body's condition (`onnx/loop`)."""
from __future__ import annotations

from typing import Tuple

import attrs
import numpy as np
from hypothesis import strategies as st

from .recipes import (NAME_STYLES, DialectProgram, _const, _model, _onnx, newest_opset,
                      renamed, values)

LOOP_OPSETS = (16, 11, 13, 19, 21, 9, 10)  # and the installed onnx's newest (newest_opset)
# (M, cond) as the operator's table writes them; ("", "") is left out: nothing ends it.
LOOP_MODES = ("M,cond", "M,", ",cond", ",1")
CARRIED_SHAPES = ((), (2,), (1, 3))
CARRIED_UPDATES = ("add-iter", "tanh", "half", "add-outer")
SCAN_SOURCES = ("carried", "iter", "vector", "cond")


@attrs.frozen
class OnnxLoopRecipe:
    """One ONNX Loop node. `mode` is the (M, cond) row of the operator's table; `count` the
    value of M, `cond_init` the value of cond; the body's condition output is its condition
    input passed through ("pass"), a constant true ("true") or iteration+1 < `stop` ("iter");
    `m_source`/`cond_source` say whether M and cond are graph inputs or constants; `names`
    renames every value as an exporter would (`recipes.renamed`)."""

    opset: int = 16
    mode: str = "M,cond"
    count: int = 2
    cond_init: bool = True
    body_cond: str = "pass"
    stop: int = 2
    m_source: str = "const"
    cond_source: str = "const"
    carried: Tuple[Tuple[Tuple[int, ...], str], ...] = ()
    scans: Tuple[Tuple[str, int], ...] = ()
    seed: int = 0
    names: str = "plain"
    format = "onnx"
    kind = "onnx-loop"

    def rules(self):
        return {"onnx/loop"}

    def features(self):
        f = {f"mode({self.mode})", f"body-cond-{self.body_cond}", f"opset-{self.opset}"}
        if self.trips() == 0:
            f.add("zero-trips")
        if any(src == "iter" or (src == "cond") for src, _ in self.scans) or any(
                src == "carried" and self.carried and self.carried[k % len(self.carried)][0] == ()
                for src, k in self.scans):
            f.add("scalar-scan-output")
        if self.mode == "M," and self.body_cond == "pass":
            f.add("omitted-cond-passed-through")
        if self.count < 0 and self.mode.startswith("M"):
            f.add("negative-M")
        if self.names != "plain":
            f.add(f"names-{self.names}")
        return f

    def trips(self) -> int:
        """How many trips the loop makes (ONNX's pseudo-code, A9 reading "true")."""
        has_m, has_cond = self.mode.startswith("M"), self.mode.endswith("cond")
        limit = max(self.count, 0) if has_m else None
        go = self.cond_init if has_cond else True
        n = 0
        while go and (limit is None or n < limit):
            n += 1
            if self.mode == "M,":
                continue  # the condition is ignored
            go = {"pass": go, "true": True, "iter": n < self.stop}[self.body_cond]
        return n

    def program(self) -> DialectProgram:
        return DialectProgram(self)

    def build(self):
        onnx, TP, helper, nph = _onnx()
        has_m, has_cond = self.mode.startswith("M"), self.mode != "M,"
        nodes, inputs, feeds = [], [], {}
        # the outer invariant w, read inside the body from the enclosing scope
        inputs.append(helper.make_tensor_value_info("w", TP.FLOAT, []))
        feeds["w"] = values((), self.seed + 7)
        m_name = cond_name = ""
        if has_m:
            m_name = "M"
            if self.m_source == "input":
                inputs.append(helper.make_tensor_value_info("M", TP.INT64, []))
                feeds["M"] = np.array(self.count, np.int64)
            else:
                nodes.append(_const(helper, nph, "M", np.array(self.count, np.int64)))
        if has_cond:
            cond_name = "cond"
            value = True if self.mode == ",1" else self.cond_init
            if self.cond_source == "input" and self.mode != ",1":
                inputs.append(helper.make_tensor_value_info("cond", TP.BOOL, []))
                feeds["cond"] = np.array(value)
            else:
                nodes.append(_const(helper, nph, "cond", np.array(value)))
        v_init = []
        for k, (shape, _) in enumerate(self.carried):
            name = f"v{k}"
            inputs.append(helper.make_tensor_value_info(name, TP.FLOAT, list(shape)))
            feeds[name] = values(shape, self.seed + k)
            v_init.append(name)
        # body
        b = []
        b_in = [helper.make_tensor_value_info("i", TP.INT64, []),
                helper.make_tensor_value_info("cond_in", TP.BOOL, [])]
        b.append(helper.make_node("Cast", ["i"], ["i_f"], to=TP.FLOAT))
        b.append(_const(helper, nph, "half", np.float32(0.5)))
        b_out, nexts = [], []
        body_cond = "pass" if self.mode == "M," and self.body_cond == "iter" else self.body_cond
        if body_cond == "pass":
            b.append(helper.make_node("Identity", ["cond_in"], ["cond_out"]))
        elif body_cond == "true":
            b.append(_const(helper, nph, "cond_out", np.array(True)))
        else:
            b.append(_const(helper, nph, "one", np.int64(1)))
            b.append(_const(helper, nph, "stop", np.int64(self.stop)))
            b.append(helper.make_node("Add", ["i", "one"], ["i_next"]))
            b.append(helper.make_node("Less", ["i_next", "stop"], ["cond_out"]))
        b_out.append(helper.make_tensor_value_info("cond_out", TP.BOOL, []))
        for k, (shape, update) in enumerate(self.carried):
            x, y = f"c{k}", f"c{k}_next"
            b_in.append(helper.make_tensor_value_info(x, TP.FLOAT, list(shape)))
            if update == "add-iter":
                b.append(helper.make_node("Add", [x, "i_f"], [f"c{k}_sum"]))
                b.append(helper.make_node("Tanh", [f"c{k}_sum"], [y]))
            elif update == "tanh":
                b.append(helper.make_node("Tanh", [x], [y]))
            elif update == "half":
                b.append(helper.make_node("Mul", [x, "half"], [y]))
            else:
                b.append(helper.make_node("Add", [x, "w"], [f"c{k}_sum"]))
                b.append(helper.make_node("Tanh", [f"c{k}_sum"], [y]))
            b_out.append(helper.make_tensor_value_info(y, TP.FLOAT, list(shape)))
            nexts.append(y)
        scan_ranks = []
        for j, (src, k) in enumerate(self.scans):
            y = f"s{j}"
            if src == "carried" and self.carried:
                k %= len(self.carried)
                b.append(helper.make_node("Identity", [nexts[k]], [y]))
                shape = self.carried[k][0]
            elif src == "vector":
                b.append(_const(helper, nph, f"s{j}_zeros", np.zeros(2, np.float32)))
                b.append(helper.make_node("Add", ["i_f", f"s{j}_zeros"], [y]))
                shape = (2,)
            elif src == "cond":
                b.append(helper.make_node("Cast", ["cond_in"], [y], to=TP.FLOAT))
                shape = ()
            else:
                b.append(helper.make_node("Identity", ["i_f"], [y]))
                shape = ()
            scan_ranks.append(len(shape))
            b_out.append(helper.make_tensor_value_info(y, TP.FLOAT, list(shape)))
        body = helper.make_graph(b, "loop_body", b_in, b_out)
        outs = [f"v{k}_final" for k in range(len(self.carried))] + \
               [f"s{j}_stacked" for j in range(len(self.scans))]
        nodes.append(helper.make_node("Loop", [m_name, cond_name] + v_init, outs, body=body))
        ranks = [len(shape) for shape, _ in self.carried] + [r + 1 for r in scan_ranks]
        g_out = [helper.make_tensor_value_info(o, TP.FLOAT, [None] * r)
                 for o, r in zip(outs, ranks)]
        graph = helper.make_graph(nodes, "onnx_loop_program", inputs, g_out)
        return renamed(_model(graph, self.opset), feeds, self.names)


@st.composite
def onnx_loop_recipes(draw, modes=LOOP_MODES, max_scans: int = 3, opsets=LOOP_OPSETS):
    """Loop recipes over `modes` (rows of the operator's table), with at most `max_scans`
    scan outputs, in `opsets` (and the installed onnx's newest); the defaults draw every
    program of the default mix."""
    mode = draw(st.sampled_from(modes))
    opset = draw(st.sampled_from(opsets + (newest_opset(),)))
    count = draw(st.sampled_from((2, 1, 0, 3, 4, -1))) if mode.startswith("M") else 0
    body_cond = draw(st.sampled_from(("pass", "true", "iter")))
    if mode in (",cond", ",1"):
        body_cond = "iter"  # without M only the body's condition can end the loop
    carried = tuple(draw(st.lists(st.tuples(st.sampled_from(CARRIED_SHAPES),
                                            st.sampled_from(CARRIED_UPDATES)), max_size=3)))
    scans = tuple(draw(st.lists(st.tuples(st.sampled_from(SCAN_SOURCES), st.integers(0, 2)),
                                max_size=max_scans)))
    if not carried and not scans:  # the Loop needs an output
        if max_scans:
            scans = (("iter", 0),)
        else:
            carried = (((), "half"),)
    if opset < 11 and not carried:  # Loop-1 takes at least one carried value
        carried = (((), "half"),)
    return OnnxLoopRecipe(
        opset=opset, mode=mode, count=count,
        cond_init=draw(st.sampled_from((True, False))) or mode == ",1",
        body_cond=body_cond, stop=draw(st.integers(0, 4)),
        m_source=draw(st.sampled_from(("const", "input"))),
        cond_source=draw(st.sampled_from(("const", "input"))),
        carried=carried, scans=scans, seed=draw(st.integers(0, 3)),
        names=draw(st.sampled_from(NAME_STYLES)))


def onnx_loops():
    """ONNX Loop programs in every mode of the operator's table (`onnx/loop`)."""
    return onnx_loop_recipes().map(DialectProgram)


# what a counted-loop engine compiles (IREE's ONNX import lowers a Loop to a counted loop
# only from opset 13, with both M and cond, and without scan outputs)
COUNTED_OPSETS = (16, 13, 19, 21)


def onnx_counted_loops():
    """ONNX Loops with both M and cond given and no scan output, opset 13 on (`onnx/loop`):
    the Loops a counted-loop engine runs (kind `onnx-loop-m-cond`)."""
    return onnx_loop_recipes(modes=("M,cond",), max_scans=0,
                             opsets=COUNTED_OPSETS).map(DialectProgram)
