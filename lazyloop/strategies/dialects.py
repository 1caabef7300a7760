"""Hypothesis strategies for loop programs written directly in the dialects: ONNX Loop (every
mode of the operator's table), ONNX Scan 8 and Scan 9+ (directions, axes, sequence lengths,
zero-length inputs) and OpenVINO Loop-5 (every port kind).

    from lazyloop.strategies.dialects import onnx_loops, onnx_scans, onnx_scan8s, openvino_loops

    @given(onnx_loops())
    def test_it(p):
        p.model, p.feeds, p.rules      # onnx.ModelProto, {name: array}, rule IDs
        p.recipe                       # the plain data the program is built from

A program is a *recipe*: a frozen record of small choices (which mode, how many carried
values, which axis, ...). `build` turns it into the model and its feeds, so a recipe printed by
hypothesis rebuilds the same program (``OnnxLoopRecipe(...).program()``). Choices are drawn
simplest-first, so shrinking goes towards fewer values, fewer outputs, forward directions,
axis 0 and few trips. Values are multiples of 1/4 in [-2, 2]; bodies only add, scale by 1/2
and take tanh, so results stay finite.

Rule IDs exercised: `onnx/loop`, `onnx/scan9`, `onnx/scan8`, `openvino/loop5`, and the core
rules their lowering uses (the difference tester adds those read from the lowered plan).
"""
from __future__ import annotations

import functools
from typing import Optional, Tuple

import attrs
import numpy as np
from hypothesis import strategies as st

# ------------------------------------------------------------------------------------------
# Programs
# ------------------------------------------------------------------------------------------


@attrs.frozen(slots=False, repr=False)
class DialectProgram:
    """A program in one dialect: `recipe`, and what building it gives."""

    recipe: object

    @functools.cached_property
    def _built(self):
        """(model, feeds). A library that refuses to build a node of this valid program
        (OpenVINO validates every node as it is made) raises `TargetRefused`."""
        try:
            return self.recipe.build()
        except RuntimeError as exc:
            from ..core.export import TargetRefused
            raise TargetRefused(f"{type(self.recipe).__name__}", sorted(self.rules)[0],
                                f"the {self.format} library refused a node: "
                                f"{str(exc).strip()[:600]}",
                                "a limitation of the library, not of the program") from None

    @property
    def model(self):
        return self._built[0]

    @property
    def feeds(self) -> dict:
        return {k: np.array(v) for k, v in self._built[1].items()}

    @property
    def format(self) -> str:
        return self.recipe.format

    @property
    def kind(self) -> str:
        return self.recipe.kind

    @property
    def rules(self) -> frozenset:
        return frozenset(self.recipe.rules())

    @property
    def features(self) -> frozenset:
        return frozenset(self.recipe.features())

    def __repr__(self):
        return f"{self.recipe!r}.program()"


def values(shape, seed: int, dtype=np.float32) -> np.ndarray:
    """Deterministic feed values: multiples of 1/4 in [-2, 2] (seed 0: all ones/4 steps)."""
    size = int(np.prod(shape, dtype=np.int64))
    if seed == 0:
        flat = (np.arange(size) % 9 - 4) / 4.0
    else:
        flat = np.random.default_rng(seed).integers(-8, 9, size) / 4.0
    return flat.reshape(shape).astype(dtype)


def _onnx():
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    return onnx, TensorProto, helper, numpy_helper


def _const(helper, numpy_helper, name, value):
    return helper.make_node("Constant", [], [name],
                            value=numpy_helper.from_array(np.asarray(value), name + "_value"))


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


def _model(graph, opset: int):
    onnx, _, helper, _ = _onnx()
    from ..onnx.export import ir_version_for
    model = helper.make_model(graph, producer_name="lazyloop.strategies.dialects",
                              opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = ir_version_for(opset)
    onnx.checker.check_model(model)
    return model


# ------------------------------------------------------------------------------------------
# ONNX Loop
# ------------------------------------------------------------------------------------------

LOOP_OPSETS = (16, 11, 13, 19, 21)
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
    `m_source`/`cond_source` say whether M and cond are graph inputs or constants."""

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
        return _model(graph, self.opset), feeds


@st.composite
def onnx_loop_recipes(draw):
    mode = draw(st.sampled_from(LOOP_MODES))
    opset = draw(st.sampled_from(LOOP_OPSETS))
    count = draw(st.sampled_from((2, 1, 0, 3, 4, -1))) if mode.startswith("M") else 0
    body_cond = draw(st.sampled_from(("pass", "true", "iter")))
    if mode in (",cond", ",1"):
        body_cond = "iter"  # without M only the body's condition can end the loop
    carried = tuple(draw(st.lists(st.tuples(st.sampled_from(CARRIED_SHAPES),
                                            st.sampled_from(CARRIED_UPDATES)), max_size=3)))
    scans = tuple(draw(st.lists(st.tuples(st.sampled_from(SCAN_SOURCES), st.integers(0, 2)),
                                max_size=3)))
    if not carried and not scans:
        scans = (("iter", 0),)
    return OnnxLoopRecipe(
        opset=opset, mode=mode, count=count,
        cond_init=draw(st.sampled_from((True, False))) or mode == ",1",
        body_cond=body_cond, stop=draw(st.integers(0, 4)),
        m_source=draw(st.sampled_from(("const", "input"))),
        cond_source=draw(st.sampled_from(("const", "input"))),
        carried=carried, scans=scans, seed=draw(st.integers(0, 3)))


def onnx_loops():
    """ONNX Loop programs in every mode of the operator's table (`onnx/loop`)."""
    return onnx_loop_recipes().map(DialectProgram)


# ------------------------------------------------------------------------------------------
# ONNX Scan 9+
# ------------------------------------------------------------------------------------------

SCAN9_OPSETS = (16, 9, 11, 19, 21)
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


def axes(low: int, high: int):
    """An axis in [low, high], shrinking towards 0 (then 1, -1, 2, -2, ...)."""
    options = sorted(range(low, high + 1), key=lambda a: (abs(a), a < 0))
    return st.sampled_from(options)


@st.composite
def onnx_scan_recipes(draw):
    opset = draw(st.sampled_from(SCAN9_OPSETS))
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
    length = draw(st.integers(1, 3))
    lens = None
    if draw(st.booleans()):
        lens = tuple(draw(st.lists(st.integers(0, length), min_size=batch, max_size=batch)))
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


# ------------------------------------------------------------------------------------------
# OpenVINO Loop-5
# ------------------------------------------------------------------------------------------


@attrs.frozen
class OvLoopRecipe:
    """One OpenVINO Loop-5 node with every kind of port:

    - trip count (`trip`, -1 = no limit; a Constant or a Parameter, int64/int32, shape
      () or [1]) and execution condition (`exec_cond`, Constant or Parameter);
    - the body's execution_condition Result: constant true, or current_iteration+1 < `stop`;
    - the current_iteration Parameter (`current`: None, or (dtype, shape));
    - merged inputs with back edges (`merged`: (shape, update) each);
    - an invariant input `w` (`invariant`), read by merged updates "add-outer";
    - sliced inputs (`sliced`: (axis, part_size, reverse) each, over `chunks` chunks);
    - outputs (`outputs`: (kind, source, axis)): kind "last" (iteration value -1) or "concat"
      (concatenated slices on `axis`), source "merged:k" (the back-edged Result), "sliced:k"
      (the chunk, no back edge), "iter" (current iteration as a [1] float, no back edge).
    """

    trip: int = 2
    trip_source: str = "const"
    trip_dtype: str = "int64"
    trip_shape: Tuple[int, ...] = ()
    exec_cond: bool = True
    cond_source: str = "const"
    body_cond: str = "true"
    stop: int = 2
    current: Optional[Tuple[str, Tuple[int, ...]]] = None
    merged: Tuple[Tuple[Tuple[int, ...], str], ...] = ()
    invariant: bool = False
    sliced: Tuple[Tuple[int, int, bool], ...] = ()
    chunks: int = 2
    outputs: Tuple[Tuple[str, str, int], ...] = ()
    seed: int = 0
    format = "openvino"
    kind = "openvino-loop"

    def rules(self):
        return {"openvino/loop5"}

    def trips(self) -> int:
        n = 0
        go = self.exec_cond
        while go and (self.trip < 0 or n < self.trip):
            n += 1
            if self.body_cond == "iter":
                go = n < self.stop
        return n

    def features(self):
        f = {f"trip-{self.trip_source}", f"body-cond-{self.body_cond}"}
        if self.trips() == 0:
            f.add("zero-trips")
        if self.trip < 0:
            f.add("no-trip-limit")
        if self.current is not None:
            f.add("current-iteration")
        if self.sliced:
            f.add("sliced-input")
        if any(r for _, _, r in self.sliced):
            f.add("reverse-slice")
        if any(p > 1 for _, p, _ in self.sliced):
            f.add("part-size")
        if self.invariant:
            f.add("invariant-input")
        if self.merged:
            f.add("back-edge")
        for kind, src, axis in self.outputs:
            f.add(f"output-{kind}-{src.split(':')[0]}")
            if axis < 0:
                f.add("negative-axis")
        return f

    def program(self) -> DialectProgram:
        return DialectProgram(self)

    def build(self):
        import openvino as ov
        import openvino.opset13 as ops
        params, feeds = [], {}

        def source(name, value, kind):
            if kind == "param":
                p = ops.parameter(list(np.shape(value)), np.asarray(value).dtype, name=name)
                p.output(0).get_tensor().set_names({name})
                params.append(p)
                feeds[name] = np.asarray(value)
                return p.output(0)
            return ops.constant(np.asarray(value)).output(0)

        trip = source("trip", np.full(self.trip_shape, self.trip, self.trip_dtype),
                      self.trip_source)
        cond = source("cond", np.full(self.trip_shape, self.exec_cond, np.bool_),
                      self.cond_source)
        w = None
        if self.invariant or any(u == "add-outer" for _, u in self.merged):
            w = source("w", values((), self.seed + 7), "param")
        body_params, results = [], []
        cur = None
        current = self.current
        if self.body_cond == "iter" and current is None:
            current = ("int64", ())
        if any(src == "iter" for _, src, _ in self.outputs) and current is None:
            current = ("int64", ())
        if current is not None:
            cur = ops.parameter(list(current[1]), np.dtype(current[0]), name="current")
            body_params.append(cur)
        cond_out = ops.constant(np.full((), True)).output(0)
        if self.body_cond == "iter":
            nxt = ops.add(cur, ops.constant(np.ones(current[1], current[0])))
            cond_out = ops.less(nxt, ops.constant(np.full(current[1], self.stop,
                                                          current[0]))).output(0)
        results.append(ops.result(cond_out))
        w_in = None
        if w is not None:
            w_in = ops.parameter([], np.float32, name="w_in")
            body_params.append(w_in)
        merged_params, merged_results = [], []
        for k, (shape, update) in enumerate(self.merged):
            p = ops.parameter(list(shape), np.float32, name=f"m{k}")
            body_params.append(p)
            if update == "tanh":
                nxt = ops.tanh(p)
            elif update == "half":
                nxt = ops.multiply(p, ops.constant(np.float32(0.5)))
            elif update == "add-iter" and cur is not None:
                nxt = ops.tanh(ops.add(p, ops.convert(cur, np.float32)))
            else:
                nxt = ops.tanh(ops.add(p, w_in)) if w_in is not None else ops.tanh(p)
            r = ops.result(nxt)
            results.append(r)
            merged_params.append(p)
            merged_results.append(r)
        sliced_params, sliced_sources = [], []
        for k, (axis, part, rev) in enumerate(self.sliced):
            full = [2, 2]
            a = axis % 2
            full[a] = part * self.chunks
            x = source(f"x{k}", values(tuple(full), self.seed + k), "param")
            chunk = list(full)
            chunk[a] = part
            p = ops.parameter(chunk, np.float32, name=f"chunk{k}")
            body_params.append(p)
            sliced_params.append(p)
            sliced_sources.append((x, axis, part, rev))
        out_results = []
        for kind, src, axis in self.outputs:
            if src.startswith("merged") and self.merged:
                k = int(src.split(":")[1]) % len(self.merged)
                r = merged_results[k]
            elif src.startswith("sliced") and self.sliced:
                k = int(src.split(":")[1]) % len(self.sliced)
                r = ops.result(ops.tanh(sliced_params[k]))
                results.append(r)
            else:
                it = ops.reshape(ops.convert(cur, np.float32),
                                 ops.constant(np.array([1], np.int64)), False)
                r = ops.result(it)
                results.append(r)
            out_results.append(r)
        body = ov.Model(results, body_params, "loop_body")
        loop = ops.loop(trip, cond)
        loop.set_function(body)
        loop.set_special_body_ports([body_params.index(cur) if cur is not None else -1, 0])
        if w_in is not None:
            loop.set_invariant_input(w_in, w)
        for k, (shape, _) in enumerate(self.merged):
            init = source(f"m{k}_init", values(shape, self.seed + 20 + k), "param")
            loop.set_merged_input(merged_params[k], init, merged_results[k].output(0))
        for p, (x, axis, part, rev) in zip(sliced_params, sliced_sources):
            if rev:
                loop.set_sliced_input(p, x, -1, -1, part, 0, axis)
            else:
                loop.set_sliced_input(p, x, 0, 1, part, -1, axis)
        outputs = []
        for j, ((kind, _, axis), r) in enumerate(zip(self.outputs, out_results)):
            if kind == "last":
                out = loop.get_iter_value(r.output(0), -1)
            else:
                out = loop.get_concatenated_slices(r.output(0), 0, 1, 1, -1, axis)
            res = ops.result(out)
            outputs.append(res)
        model = ov.Model(outputs, params, "openvino_loop_program")
        for j, out in enumerate(model.outputs):
            out.get_tensor().set_names({f"out{j}"})
        return model, feeds


@st.composite
def openvino_loop_recipes(draw):
    trip = draw(st.sampled_from((2, 1, 0, 3, -1)))
    body_cond = draw(st.sampled_from(("true", "iter")))
    if trip < 0:
        body_cond = "iter"  # something must end the loop
    stop = draw(st.integers(0, 3))
    merged = tuple(draw(st.lists(st.tuples(st.sampled_from(((2,), (1, 2), ())),
                                           st.sampled_from(("tanh", "half", "add-iter",
                                                            "add-outer"))), max_size=2)))
    sliced = tuple(draw(st.lists(st.tuples(st.sampled_from((0, 1, -1, -2)),
                                           st.sampled_from((1, 2)), st.booleans()),
                                 max_size=2)))
    current = None
    if draw(st.booleans()):
        current = (draw(st.sampled_from(("int64", "int32"))), draw(st.sampled_from(((), (1,)))))
    exec_cond = draw(st.sampled_from((True, False)))
    n_max = 0
    go = exec_cond
    while go and (trip < 0 or n_max < trip):
        n_max += 1
        go = body_cond == "true" or n_max < stop
        if n_max > 8:
            break
    outputs = []
    sources = ["iter"] + [f"merged:{k}" for k in range(len(merged))] + \
        [f"sliced:{k}" for k in range(len(sliced))]
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(("concat", "last")))
        src = draw(st.sampled_from(sources))
        rank = 1
        if src.startswith("merged"):
            rank = max(len(merged[int(src.split(":")[1])][0]), 1)
        elif src.startswith("sliced"):
            rank = 2
        axis = draw(axes(-rank, rank - 1)) if kind == "concat" else 0
        if kind == "concat" and src.startswith("merged") and \
                not merged[int(src.split(":")[1])][0]:
            kind = "last"  # a 0-D value cannot be concatenated along an existing axis
        outputs.append((kind, src, axis))
    shape_kind = draw(st.sampled_from(((), (1,))))
    return OvLoopRecipe(
        trip=trip, trip_source=draw(st.sampled_from(("const", "param"))),
        trip_dtype=draw(st.sampled_from(("int64", "int32"))), trip_shape=shape_kind,
        exec_cond=exec_cond, cond_source=draw(st.sampled_from(("const", "param"))),
        body_cond=body_cond, stop=stop, current=current, merged=merged,
        invariant=draw(st.booleans()), sliced=sliced, chunks=max(n_max, 1),
        outputs=tuple(outputs), seed=draw(st.integers(0, 3)))


def openvino_loops():
    """OpenVINO Loop-5 programs with every port kind (`openvino/loop5`)."""
    return openvino_loop_recipes().map(DialectProgram)


# ------------------------------------------------------------------------------------------
# All of them
# ------------------------------------------------------------------------------------------

ONNX_KINDS = {"onnx-loop": onnx_loops, "onnx-scan9": onnx_scans, "onnx-scan8": onnx_scan8s}
OPENVINO_KINDS = {"openvino-loop": openvino_loops}


def dialect_programs(formats=("onnx", "openvino")):
    """Programs of every dialect kind whose format is in `formats`."""
    parts = []
    if "onnx" in formats:
        parts += [f() for f in ONNX_KINDS.values()]
    if "openvino" in formats:
        parts += [f() for f in OPENVINO_KINDS.values()]
    return st.one_of(parts)


__all__ = ["DialectProgram", "OnnxLoopRecipe", "OnnxScanRecipe", "OnnxScan8Recipe",
           "OvLoopRecipe", "onnx_loops", "onnx_scans", "onnx_scan8s", "openvino_loops",
           "dialect_programs", "onnx_loop_recipes", "onnx_scan_recipes", "onnx_scan8_recipes",
           "openvino_loop_recipes"]
