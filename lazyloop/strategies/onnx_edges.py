"""Recipes for two more corners exporters' models hit (issue 22 point 2): scans of zero and
one trips feeding every output kind at once (`onnx-short-scan`: scan outputs of 0 rows, not
1; 0-D final values, not `[1]`), and loops an optimiser or an engine can fold away
(`onnx-const-loop`: a constant trip count and condition, constant initial values, and
possibly a graph input read only through its static shape, which folding removes), written
with the names exporters give values (`names`: names an engine may rename).
"""
from __future__ import annotations

from typing import Tuple

import attrs
import numpy as np
from hypothesis import strategies as st

from .onnx_corners import CORNER_OPSETS, _graph, _node
from .onnx_ops import constant_node, typed_values, value_info
from .recipes import NAME_STYLES, DialectProgram, _model, renamed

# ------------------------------------------------------------------------------------------
# Zero- and one-trip scans, every output kind
# ------------------------------------------------------------------------------------------

# final values: a 0-D one and a [2] one; stacked values: a 0-D element, a [2] element, the
# [2] element stacked on the last axis, and the [2] element in reverse
SHORT_OUTPUTS = ("final-scalar", "final-vector", "stacked-scalar", "stacked-vector",
                 "stacked-last-axis", "stacked-reversed")


@attrs.frozen
class OnnxShortScanRecipe:
    """A Scan 9+ (or, with `loop`, a Loop) of `length` trips (0 or 1; drawn so, any works)
    whose body feeds each of `outputs`: a 0-D and a [2] state (carried value), and scan
    outputs of a 0-D element, of a [2] element, of a [2] element on the last axis, and
    reversed (a Loop has no axis or direction: those two are stacked on axis 0 and
    reversed with Slice)."""

    opset: int = 16
    loop: bool = False
    length: int = 0
    outputs: Tuple[str, ...] = SHORT_OUTPUTS
    format = "onnx"
    kind = "onnx-short-scan"

    def rules(self):
        return {"onnx/loop"} if self.loop else {"onnx/scan9"}

    def features(self):
        f = {f"short-{o}" for o in self.outputs} | {f"opset-{self.opset}"}
        f.add({0: "zero-trips", 1: "one-trip"}.get(self.length, "two-trips"))
        return f

    def program(self) -> DialectProgram:
        return DialectProgram(self)

    def build(self):
        L = self.length
        xs = np.stack([typed_values("float32", (2,), "any", t) for t in range(L)]) if L else \
            np.zeros((0, 2), np.float32)
        inputs = [value_info("s", "float32", ()), value_info("v", "float32", (2,))]
        feeds = {"s": np.array(0.5, np.float32), "v": np.array([1.0, -1.0], np.float32)}
        b = [constant_node("two", np.array(2, np.float32)),
             _node("ReduceSum", ["e"], ["e_sum"], keepdims=0),
             _node("Add", ["s_in", "e_sum"], ["s_next"]),
             _node("Add", ["v_in", "e"], ["v_next"]),
             _node("Mul", ["e", "two"], ["e_twice"]),
             _node("Identity", ["v_next"], ["v_each"]), _node("Neg", ["e"], ["e_neg"])]
        state_in = [value_info("s_in", "float32", ()), value_info("v_in", "float32", (2,))]
        state_out = [value_info("s_next", "float32", ()), value_info("v_next", "float32", (2,))]
        finals = {"final-scalar": "s_final", "final-vector": "v_final"}
        stacked = [o for o in self.outputs if o.startswith("stacked")]
        # every output from a node of its own (one value as two outputs is another corner)
        elem = {"stacked-scalar": ("e_sum", ()), "stacked-vector": ("e_twice", (2,)),
                "stacked-last-axis": ("v_each", (2,)), "stacked-reversed": ("e_neg", (2,))}
        scan_out = [value_info(elem[o][0], "float32", elem[o][1]) for o in stacked]
        names = ["s_final", "v_final"] + [f"{o}_out" for o in stacked]
        if self.loop:
            nodes = self._loop(b, state_in, state_out, scan_out, stacked, xs)
        else:
            inputs.append(value_info("xs", "float32", (L, 2)))
            feeds["xs"] = xs
            body = _graph(b, "short_scan_body", state_in + [value_info("e", "float32", (2,))],
                          state_out + scan_out)
            axes = [-1 if o == "stacked-last-axis" else 0 for o in stacked]
            dirs = [int(o == "stacked-reversed") for o in stacked]
            nodes = [_node("Scan", ["s", "v", "xs"], names, body=body, num_scan_inputs=1,
                           **({"scan_output_axes": axes, "scan_output_directions": dirs}
                              if stacked else {}))]
        shapes = {"s_final": (), "v_final": (2,), "stacked-scalar_out": (L,),
                  "stacked-vector_out": (L, 2), "stacked-last-axis_out": (2, L),
                  "stacked-reversed_out": (L, 2)}
        wanted = {finals[o] for o in self.outputs if o in finals} | {
            f"{o}_out" for o in stacked}
        g_out = [value_info(n, "float32", shapes[n]) for n in names if n in wanted]
        graph = _graph(nodes, "onnx_short_scan_program", inputs, g_out)
        return _model(graph, self.opset), feeds

    def _loop(self, b, state_in, state_out, scan_out, stacked, xs):
        """The Loop form: the element is row i of xs (Gather), read from the outer scope."""
        L = self.length
        b = [_node("Gather", ["xs_const", "i"], ["e"], axis=0)] + b
        body = _graph([_node("Identity", ["cond_in"], ["cond_out"])] + b, "short_loop_body",
                      [value_info("i", "int64", ()), value_info("cond_in", "bool", ())]
                      + state_in, [value_info("cond_out", "bool", ())] + state_out + scan_out)
        raw = ["s_final", "v_final"] + [f"{o}_raw" for o in stacked]
        nodes = [constant_node("xs_const", xs), constant_node("M", np.array(L, np.int64)),
                 _node("Loop", ["M", "", "s", "v"], raw, body=body)]
        for o in stacked:
            if o == "stacked-last-axis":
                nodes.append(_node("Transpose", [f"{o}_raw"], [f"{o}_out"], perm=[1, 0]))
            elif o == "stacked-reversed":
                nodes += [constant_node(f"{o}_{k}", np.array([v], np.int64)) for k, v in
                          (("start", -1), ("end", -(2 ** 62)), ("axis", 0), ("step", -1))]
                nodes.append(_node("Slice", [f"{o}_raw", f"{o}_start", f"{o}_end",
                                             f"{o}_axis", f"{o}_step"], [f"{o}_out"]))
            else:
                nodes.append(_node("Identity", [f"{o}_raw"], [f"{o}_out"]))
        return nodes


@st.composite
def onnx_short_scan_recipes(draw):
    outputs = tuple(o for o in SHORT_OUTPUTS if draw(st.booleans())) or ("final-scalar",)
    return OnnxShortScanRecipe(opset=draw(st.sampled_from(CORNER_OPSETS)),
                               loop=draw(st.booleans()),
                               length=draw(st.sampled_from((0, 1))), outputs=outputs)


def onnx_short_scans():
    """Scans and Loops of zero and one trips feeding every output kind."""
    return onnx_short_scan_recipes().map(DialectProgram)


# ------------------------------------------------------------------------------------------
# Loops that fold to constants
# ------------------------------------------------------------------------------------------

@attrs.frozen
class OnnxConstLoopRecipe:
    """A Loop whose trip count `count`, condition `cond` and carried values (`shapes`) are
    all constants -- Constant nodes or initializers (`store`) -- so that it folds to
    constants. The body goes on while i + 1 < `stop` and adds i + 1/2 to each value; the
    iteration number is also stacked. With `via_shape` the trip count is read from the
    static shape of a graph input `x` of `count` elements (Shape, then Gather): the loop
    folds once shapes are, and `x` is then read by nothing. Names follow `names`
    (`recipes.renamed`)."""

    opset: int = 16
    count: int = 3
    cond: bool = True
    stop: int = 2
    shapes: Tuple[Tuple[int, ...], ...] = ((),)
    store: str = "constant"
    via_shape: bool = False
    names: str = "plain"
    format = "onnx"
    kind = "onnx-const-loop"

    def rules(self):
        return {"onnx/loop", "trip/both"}

    def features(self):
        f = {f"store-{self.store}", f"names-{self.names}", f"opset-{self.opset}"}
        if self.via_shape:
            f.add("count-from-static-shape")
        if not self.cond or self.stop < self.count:
            f.add("stops-before-count")
        return f

    def program(self) -> DialectProgram:
        return DialectProgram(self)

    def build(self):
        from onnx import numpy_helper
        consts = {"cond": np.array(self.cond), "one": np.array(1, np.int64),
                  "stop": np.array(self.stop, np.int64)}
        consts.update({f"v{k}": typed_values("float32", s, "any", k)
                       for k, s in enumerate(self.shapes)})
        nodes, inputs, feeds = [], [], {}
        if self.via_shape:
            inputs.append(value_info("x", "float32", (self.count,)))
            feeds["x"] = np.zeros(self.count, np.float32)
            consts["zero"] = np.array(0, np.int64)
            nodes += [_node("Shape", ["x"], ["x_shape"]),
                      _node("Gather", ["x_shape", "zero"], ["M"], axis=0)]
        else:
            consts["M"] = np.array(self.count, np.int64)
        initializers = []
        for name, value in consts.items():
            if self.store == "initializer" and name not in ("one", "stop"):
                initializers.append(numpy_helper.from_array(value, name))
            elif name not in ("one", "stop"):
                nodes.insert(0, constant_node(name, value))
        b = [constant_node("one_b", consts["one"]), constant_node("stop_b", consts["stop"]),
             constant_node("half", np.array(0.5, np.float32)),
             _node("Add", ["i", "one_b"], ["i_next"]), _node("Less", ["i_next", "stop_b"],
                                                             ["go"]),
             _node("And", ["go", "cond_in"], ["cond_out"]),
             _node("Cast", ["i"], ["i_f"], to=1), _node("Add", ["i_f", "half"], ["i_h"])]
        b_in = [value_info("i", "int64", ()), value_info("cond_in", "bool", ())]
        b_out = [value_info("cond_out", "bool", ())]
        for k, s in enumerate(self.shapes):
            b.append(_node("Add", [f"c{k}", "i_h"], [f"c{k}_next"]))
            b_in.append(value_info(f"c{k}", "float32", s))
            b_out.append(value_info(f"c{k}_next", "float32", s))
        b_out.append(value_info("i_h", "float32", ()))
        body = _graph(b, "const_loop_body", b_in, b_out)
        outs = [f"v{k}_final" for k in range(len(self.shapes))] + ["i_stacked"]
        nodes.append(_node("Loop", ["M", "cond"] + [f"v{k}" for k in range(len(self.shapes))],
                           outs, body=body))
        g_out = [value_info(f"v{k}_final", "float32", s) for k, s in enumerate(self.shapes)]
        g_out.append(value_info("i_stacked", "float32", (None,)))
        graph = _graph(nodes, "onnx_const_loop_program", inputs, g_out)
        graph.initializer.extend(initializers)
        model = _model(graph, self.opset)
        return renamed(model, feeds, self.names)


@st.composite
def onnx_const_loop_recipes(draw):
    count = draw(st.sampled_from((3, 2, 1, 0, 4)))
    # the condition ends the loop one or two trips before M, or not at all
    stop = max(0, count - draw(st.sampled_from((1, 2, 0))))
    return OnnxConstLoopRecipe(
        opset=draw(st.sampled_from(CORNER_OPSETS)), count=count,
        cond=draw(st.sampled_from((True, False))), stop=stop,
        shapes=tuple(draw(st.lists(st.sampled_from(((), (2,), (1, 3))), min_size=1,
                                   max_size=2))),
        store=draw(st.sampled_from(("constant", "initializer"))),
        via_shape=draw(st.booleans()), names=draw(st.sampled_from(NAME_STYLES)))


def onnx_const_loops():
    """Loops whose trip count, condition and initial values are constants."""
    return onnx_const_loop_recipes().map(DialectProgram)
