"""What the dialect recipes share: `DialectProgram` (a recipe and the model it builds),
deterministic feed `values`, the `axes` strategy, and small helpers to assemble and check an
ONNX model."""
from __future__ import annotations

import functools

import attrs
import numpy as np
from hypothesis import strategies as st


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


def newest_opset() -> int:
    """The newest ai.onnx opset the installed onnx package knows."""
    import onnx.defs
    return onnx.defs.onnx_opset_version()


def _onnx():
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    return onnx, TensorProto, helper, numpy_helper


def _const(helper, numpy_helper, name, value):
    return helper.make_node("Constant", [], [name],
                            value=numpy_helper.from_array(np.asarray(value), name + "_value"))


def _model(graph, opset: int):
    onnx, _, helper, _ = _onnx()
    from ..onnx.export import ir_version_for
    model = helper.make_model(graph, producer_name="lazyloop.strategies.dialects",
                              opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = ir_version_for(opset)
    onnx.checker.check_model(model)
    return model


def axes(low: int, high: int):
    """An axis in [low, high], shrinking towards 0 (then 1, -1, 2, -2, ...)."""
    options = sorted(range(low, high + 1), key=lambda a: (abs(a), a < 0))
    return st.sampled_from(options)


# ------------------------------------------------------------------------------------------
# Names an engine may rename
# ------------------------------------------------------------------------------------------

# "plain": as written; "tf": TensorFlow's tensor names ("x:0"); "torch": TorchScript's
# numbered inputs ("input.1") and dynamo's paths ("/Loop_output_0"); "digits": values named
# by numbers, as older exporters did ("7")
NAME_STYLES = ("plain", "tf", "torch", "digits")


def _style(style: str):
    counter = iter(range(1, 1 << 30))
    if style == "tf":
        return lambda name, is_input: f"{name}:0"
    if style == "torch":
        return lambda name, is_input: (f"input.{next(counter)}" if is_input
                                       else f"/{name}/{name}_output_0")
    return lambda name, is_input: str(next(counter))


def renamed(model, feeds: dict, style: str):
    """(model, feeds) with every value name -- graph inputs and outputs, node inputs and
    outputs, initializers, at every depth -- renamed in one `style` (NAME_STYLES),
    consistently (a name read from an enclosing graph keeps meaning the same value)."""
    if style == "plain":
        return model, feeds
    inputs = {vi.name for vi in model.graph.input}
    make, table = _style(style), {}

    def new(name):
        if name and name not in table:
            table[name] = make(name, name in inputs)
        return table.get(name, name)

    def walk(graph):
        for group in (graph.input, graph.output, graph.value_info, graph.initializer):
            for v in group:
                v.name = new(v.name)
        for node in graph.node:
            node.input[:] = [new(n) for n in node.input]
            node.output[:] = [new(n) for n in node.output]
            for a in node.attribute:
                if a.HasField("g"):
                    walk(a.g)
                for g in a.graphs:
                    walk(g)

    for vi in model.graph.input:  # graph inputs first: "input.1", "input.2", ...
        new(vi.name)
    walk(model.graph)
    return model, {new(k): v for k, v in feeds.items()}
