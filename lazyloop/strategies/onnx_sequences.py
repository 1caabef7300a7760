"""Recipes for ONNX Loops that carry a sequence and an optional (`onnx/loop`,
`onnx/sequences`): a list that enters empty (SequenceEmpty) and grows by one element a trip
(SequenceInsert at the end or at the front), read after the loop as a graph output (a
sequence as a Loop output), by SequenceLength, SequenceAt and ConcatFromSequence; and an
optional that enters empty, is filled in the body and read with OptionalHasElement and
OptionalGetElement (inside an If, so the empty case is read too)."""
from __future__ import annotations

from typing import Tuple

import attrs
import numpy as np
from hypothesis import strategies as st

from .recipes import DialectProgram, _const, _model, _onnx, newest_opset

SEQ_OPSETS = (16, 18, 19, 21)  # Optional needs 15; and the installed onnx's newest
SEQ_ELEMENTS = ((), (2,))
# how the list is read after the loop; "at" and "concat" need at least one element
SEQ_READS = ("sequence", "length", "at-last", "at-first", "concat", "stack")


@attrs.frozen
class OnnxSeqLoopRecipe:
    """A Loop of `count` trips carrying a list that enters empty. Trip i inserts the element
    i + n/2 (n: the list's length on entry to the trip, read with SequenceLength when
    `body_length`, else 0), as a tensor of shape `element`, at the end (`prepend` False) or
    at position 0. `reads` says how the final list is read. `optional` carries an optional
    float too: it enters empty and each trip stores (what it held, or 0) + i; `optional_out`
    makes the final optional a graph output as well."""

    opset: int = 16
    count: int = 2
    m_source: str = "const"
    cond: str = "omit"             # the Loop's cond: omitted, or a constant true
    element: Tuple[int, ...] = ()
    prepend: bool = False
    body_length: bool = False
    reads: Tuple[str, ...] = ("sequence",)
    optional: bool = False
    optional_out: bool = False
    format = "onnx"
    kind = "onnx-seq-loop"

    def rules(self):
        return {"onnx/loop", "onnx/sequences"}

    def features(self):
        f = {"carried-sequence", f"opset-{self.opset}"} | {f"read-{r}" for r in self.reads}
        if "sequence" in self.reads:
            f.add("sequence-loop-output")
        if self.optional:
            f.add("carried-optional")
        if self.count == 0:
            f.add("zero-trips")
        return f

    def program(self) -> DialectProgram:
        return DialectProgram(self)

    def build(self):
        onnx, TP, helper, nph = _onnx()
        E = list(self.element)
        elem_t = helper.make_tensor_type_proto(TP.FLOAT, E)
        seq_t = helper.make_sequence_type_proto(elem_t)
        opt_t = helper.make_optional_type_proto(helper.make_tensor_type_proto(TP.FLOAT, []))
        nodes, inputs, feeds = [], [], {}
        if self.m_source == "input":
            inputs.append(helper.make_tensor_value_info("M", TP.INT64, []))
            feeds["M"] = np.array(self.count, np.int64)
        else:
            nodes.append(_const(helper, nph, "M", np.array(self.count, np.int64)))
        nodes.append(helper.make_node("SequenceEmpty", [], ["list0"], dtype=TP.FLOAT))
        carried, outs = ["list0"], ["list"]
        if self.optional:
            nodes.append(helper.make_node("Optional", [], ["opt0"],
                                          type=helper.make_tensor_type_proto(TP.FLOAT, [])))
            carried.append("opt0")
            outs.append("opt")
        b = [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
             helper.make_node("Cast", ["i"], ["i_f"], to=TP.FLOAT),
             _const(helper, nph, "half", np.float32(0.5)),
             _const(helper, nph, "zeros", np.zeros(E, np.float32))]
        b_in = [helper.make_tensor_value_info("i", TP.INT64, []),
                helper.make_tensor_value_info("cond_in", TP.BOOL, []),
                helper.make_value_info("s_in", seq_t)]
        b_out = [helper.make_tensor_value_info("cond_out", TP.BOOL, []),
                 helper.make_value_info("s_out", seq_t)]
        if self.body_length:
            b += [helper.make_node("SequenceLength", ["s_in"], ["n_in"]),
                  helper.make_node("Cast", ["n_in"], ["n_f"], to=TP.FLOAT),
                  helper.make_node("Mul", ["n_f", "half"], ["n_half"]),
                  helper.make_node("Add", ["i_f", "n_half"], ["v_scalar"])]
        else:
            b.append(helper.make_node("Identity", ["i_f"], ["v_scalar"]))
        b.append(helper.make_node("Add", ["v_scalar", "zeros"], ["v"]))
        if self.prepend:
            b += [_const(helper, nph, "front", np.array(0, np.int64)),
                  helper.make_node("SequenceInsert", ["s_in", "v", "front"], ["s_out"])]
        else:
            b.append(helper.make_node("SequenceInsert", ["s_in", "v"], ["s_out"]))
        if self.optional:
            b += self._fill_optional(helper, nph, TP)
            b_in.append(helper.make_value_info("o_in", opt_t))
            b_out.append(helper.make_value_info("o_out", opt_t))
        body = helper.make_graph(b, "seq_loop_body", b_in, b_out)
        if self.cond == "true":
            nodes.append(_const(helper, nph, "cond", np.array(True)))
        cond = "cond" if self.cond == "true" else ""
        nodes.append(helper.make_node("Loop", ["M", cond] + carried, outs, body=body))
        g_out = []
        for r in self.reads:
            g_out.append(self._read(helper, nph, TP, r, nodes, seq_t))
        if self.optional:
            nodes.append(helper.make_node("OptionalHasElement", ["opt"], ["opt_has"]))
            nodes.append(self._get_or_zero(helper, nph, TP, "opt", "opt_has", "opt_value"))
            g_out += [helper.make_tensor_value_info("opt_has", TP.BOOL, []),
                      helper.make_tensor_value_info("opt_value", TP.FLOAT, [])]
            if self.optional_out:
                g_out.append(helper.make_value_info("opt", opt_t))
        graph = helper.make_graph(nodes, "onnx_seq_loop_program", inputs, g_out)
        return _model(graph, self.opset), feeds

    def _fill_optional(self, helper, nph, TP):
        """o_out = Optional((what o_in holds, or 0) + i)."""
        return [helper.make_node("OptionalHasElement", ["o_in"], ["o_has"]),
                self._get_or_zero(helper, nph, TP, "o_in", "o_has", "o_prev"),
                helper.make_node("Add", ["o_prev", "i_f"], ["o_next"]),
                helper.make_node("Optional", ["o_next"], ["o_out"])]

    @staticmethod
    def _get_or_zero(helper, nph, TP, opt, has, out):
        """If(has) then OptionalGetElement(opt) else 0: reads an optional that may be empty."""
        then = helper.make_graph(
            [helper.make_node("OptionalGetElement", [opt], [out + "_got"])], "get", [],
            [helper.make_tensor_value_info(out + "_got", TP.FLOAT, [])])
        other = helper.make_graph([_const(helper, nph, out + "_zero", np.float32(0))], "zero",
                                  [], [helper.make_tensor_value_info(out + "_zero", TP.FLOAT,
                                                                     [])])
        return helper.make_node("If", [has], [out], then_branch=then, else_branch=other)

    def _read(self, helper, nph, TP, how, nodes, seq_t):
        rank = len(self.element)
        if how == "sequence":
            nodes.append(helper.make_node("Identity", ["list"], ["list_out"]))
            return helper.make_value_info("list_out", seq_t)
        if how == "length":
            nodes.append(helper.make_node("SequenceLength", ["list"], ["list_length"]))
            return helper.make_tensor_value_info("list_length", TP.INT64, [])
        if how.startswith("at"):
            pos = -1 if how == "at-last" else 0
            nodes.append(_const(helper, nph, f"pos_{how}", np.array(pos, np.int64)))
            nodes.append(helper.make_node("SequenceAt", ["list", f"pos_{how}"], [f"list_{how}"]))
            return helper.make_tensor_value_info(f"list_{how}", TP.FLOAT, list(self.element))
        new_axis = int(how == "stack")
        name = f"list_{how}"
        nodes.append(helper.make_node("ConcatFromSequence", ["list"], [name], axis=0,
                                      new_axis=new_axis))
        return helper.make_tensor_value_info(name, TP.FLOAT, [None] * (rank + new_axis))


@st.composite
def onnx_seq_loop_recipes(draw):
    count = draw(st.integers(0, 3))
    reads = SEQ_READS if count else SEQ_READS[:2]  # an empty list has no element to read
    chosen = draw(st.lists(st.sampled_from(reads), min_size=1, max_size=3, unique=True))
    element = draw(st.sampled_from(SEQ_ELEMENTS))
    if element == () and "concat" in chosen:
        chosen.remove("concat")  # scalars only stack (ConcatFromSequence needs rank >= 1)
        chosen = chosen or ["sequence"]
    optional = draw(st.booleans())
    return OnnxSeqLoopRecipe(
        opset=draw(st.sampled_from(SEQ_OPSETS + (newest_opset(),))), count=count,
        m_source=draw(st.sampled_from(("const", "input"))),
        cond=draw(st.sampled_from(("omit", "true"))), element=element,
        prepend=draw(st.booleans()), body_length=draw(st.booleans()), reads=tuple(chosen),
        optional=optional, optional_out=optional and draw(st.booleans()))


def onnx_seq_loops():
    """ONNX Loops carrying a list and an optional that enter empty (`onnx/sequences`)."""
    return onnx_seq_loop_recipes().map(DialectProgram)
