"""Feeds for a user's own model (spec/51-difftest.md, "Your own models").

`lazyloop check --model M.onnx` tests a backend on one fixed model for the inputs it will
meet. What varies is the feeds, drawn with hypothesis from the model's declared inputs, so the
campaign's shrinker shrinks them (never the model):

- each declared dimension keeps its size; a symbolic one (an ONNX `dim_param`) is drawn once
  and used wherever the name appears, across inputs; an unnamed unknown one is drawn on its
  own; sizes 1 to 4, or 0 (an empty tensor, an empty scan), shrinking toward 1;
- a graph input that gives a Loop its trip count (`M`) or its condition, directly or through
  casts and reshapes, and any integer scalar (a loop's limit, as exporters write while
  loops), is a **count**: 0, 1, a small one (2 to 8), a large one (64 or 1000), or -1 where
  signed; each size and count is one choice from a ladder, simplest first, so shrinking goes
  toward 0; a condition is true or false;
- other values are small (multiples of 1/4 in [-2, 2]; integers in [-4, 4]) or at the
  dtype's edges (its largest and smallest finite values, the smallest normal float, -0.0),
  shrinking toward 0;
- a sequence input holds 0 to 3 tensors of one drawn shape (empty and not).

A program of such a campaign is a `ModelProgram`: the model file and the drawn feeds. Its
kind is "model". What cannot be drawn (a string, optional or map input) is a `ModelError`.
"""
from __future__ import annotations

import functools
import hashlib
from typing import Optional, Tuple

import attrs
import numpy as np

from ..core.errors import ModelError

KIND = "model"
# drawn as one choice each, simplest first, so that shrinking walks down the ladder (a fault
# from 3 trips on shrinks to 3 wherever it was found)
DIM_SIZES = (1, 2, 3, 4, 0)                 # a drawn dimension
COUNTS = (0, 1, 2, 3, 4, 5, 8, 64, 1000)    # a trip count or limit (-1 too where signed)
PLUMBING = ("Cast", "Squeeze", "Unsqueeze", "Reshape", "Identity", "Flatten", "CastLike")


@attrs.frozen
class Declared:
    """One input of a model as it declares it: `dims` (a size, a symbol's name, or None for an
    unnamed unknown size; None for an unknown rank), `sequence` for an ONNX sequence of such
    tensors, `role` "count", "condition" or "values"."""

    name: str
    dtype: np.dtype
    dims: Optional[tuple]
    sequence: bool = False
    role: str = "values"


# ------------------------------------------------------------------------------------------
# Reading the declared inputs
# ------------------------------------------------------------------------------------------

def model_format(path: str) -> str:
    """"openvino" for an .xml IR, else "onnx"."""
    return "openvino" if path.endswith(".xml") else "onnx"


def read_model(path: str):
    """(format, model) of a .onnx file or an OpenVINO .xml IR."""
    if model_format(path) == "openvino":
        from ..openvino import read_model as read_ir
        return "openvino", read_ir(path)
    from ..onnx import load_model
    return "onnx", load_model(path)


def declared_inputs(path: str, fmt: str, model) -> Tuple[Declared, ...]:
    """The inputs a user feeds, with what drives a loop marked (module docstring)."""
    if fmt == "onnx":
        return onnx_inputs(path, model)
    return openvino_inputs(path, model)


def onnx_inputs(path, model) -> Tuple[Declared, ...]:
    from onnx import helper
    drives = onnx_loop_drivers(model.graph)
    fed = {t.name for t in model.graph.initializer}
    out = []
    for v in model.graph.input:
        if v.name in fed:
            continue
        tp, sequence = v.type, False
        if tp.WhichOneof("value") == "sequence_type":
            tp, sequence = tp.sequence_type.elem_type, True
        if tp.WhichOneof("value") != "tensor_type" or tp.tensor_type.elem_type in (0, 8):
            raise ModelError(f"{path}: input {v.name!r}", "onnx/graph",
                             "its declared type is neither a tensor of numbers or bools "
                             "nor a sequence of them: lazyloop cannot draw feeds for it",
                             "test the model with `lazyloop run` and feeds of your own")
        t = tp.tensor_type
        dtype = np.dtype(helper.tensor_dtype_to_np_dtype(t.elem_type))
        dims = None if not t.HasField("shape") else tuple(
            d.dim_value if d.HasField("dim_value") else (d.dim_param or None)
            for d in t.shape.dim)
        out.append(Declared(v.name, dtype, dims, sequence, role_of(v.name, dtype, dims,
                                                                   drives)))
    return tuple(out)


def onnx_loop_drivers(graph) -> dict:
    """{main-graph value: "count" or "condition"} for the values that give a Loop its trip
    count or condition, followed back through casts and reshapes."""
    made_by = {o: n for n in graph.node for o in n.output}
    drives = {}
    for node in graph.node:
        if node.op_type != "Loop":
            continue
        for name, role in zip(node.input[:2], ("count", "condition")):
            while name:
                drives.setdefault(name, role)
                source = made_by.get(name)
                name = source.input[0] if source is not None and \
                    source.op_type in PLUMBING and source.input else ""
    return drives


def role_of(name, dtype, dims, drives: dict) -> str:
    """"count" for a value driving a Loop's trip count or an integer scalar (or [1]);
    "condition" for one driving its condition; else "values"."""
    role = drives.get(name)
    if role == "condition" and dtype == np.bool_:
        return "condition"
    scalar = dims is not None and all(isinstance(d, int) and d == 1 for d in dims)
    if dtype.kind in "iu" and (role == "count" or scalar):
        return "count"
    return "values"


def openvino_inputs(path, model) -> Tuple[Declared, ...]:
    """An IR's Parameters: a dynamic dimension is unnamed; a Parameter feeding a Loop's trip
    count or execution condition directly drives it."""
    drives = {}
    for op in model.get_ordered_ops():
        if op.get_type_name() == "Loop":
            for port, role in ((0, "count"), (1, "condition")):
                source = op.input_value(port).get_node()
                if source.get_type_name() == "Parameter":
                    drives[source.get_friendly_name()] = role
    out = []
    for p in model.get_parameters():
        name = p.get_friendly_name()  # the name lazyloop's frontend feeds it by
        dtype = np.dtype(p.get_element_type().to_dtype())
        shape = p.get_partial_shape()
        dims = None if shape.rank.is_dynamic else tuple(
            d.get_length() if d.is_static else None for d in shape)
        role = drives.get(name)
        out.append(Declared(name, dtype, dims, False,
                            role_of(name, dtype, dims, {name: role} if role else {})))
    return tuple(out)


# ------------------------------------------------------------------------------------------
# Drawing feeds
# ------------------------------------------------------------------------------------------

def feeds_of(inputs: Tuple[Declared, ...]):
    """A strategy of {name: feed} for `inputs`: symbols first (each drawn once), then each
    input in declared order."""
    from hypothesis import strategies as st
    symbols = sorted({d for i in inputs for d in (i.dims or ()) if isinstance(d, str)})

    @st.composite
    def draw(draw_):
        sizes = {s: draw_(dim_size()) for s in symbols}
        return {i.name: draw_(feed_of(i, sizes)) for i in inputs}
    return draw()


def dim_size():
    """A drawn dimension: 1 to 4 or, less simple, 0."""
    from hypothesis import strategies as st
    return st.sampled_from(DIM_SIZES)


def feed_of(i: Declared, sizes: dict):
    """The strategy of one input's feed."""
    from hypothesis import strategies as st

    @st.composite
    def draw(draw_):
        dims = (None,) if i.dims is None else i.dims  # unknown rank: a vector
        shape = tuple(sizes[d] if isinstance(d, str) else draw_(dim_size()) if d is None
                      else d for d in dims)
        one = tensor(i.dtype, shape, i.role)
        if i.sequence:
            return draw_(st.lists(one, max_size=3))
        return draw_(one)
    return draw()


def tensor(dtype: np.dtype, shape: tuple, role: str):
    from hypothesis import strategies as st
    from hypothesis.extra.numpy import arrays
    return arrays(dtype, shape, elements=element(dtype, role),
                  fill=st.nothing())


def element(dtype: np.dtype, role: str):
    """The strategy of one element (module docstring)."""
    from hypothesis import strategies as st
    if dtype == np.bool_:
        return st.booleans()
    if role == "count" and dtype.kind in "iu":
        return st.sampled_from(COUNTS if dtype.kind == "u" else COUNTS + (-1,))
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        small = st.integers(max(-4, int(info.min)), 4)
        return st.one_of(small, st.sampled_from((int(info.max), int(info.min))))
    info = np.finfo(dtype)
    grid = st.integers(-8, 8).map(lambda k: k / 4.0)
    edges = (float(info.max), float(-info.max), float(info.tiny), -0.0)
    return st.one_of(grid, st.sampled_from(edges)).map(dtype.type)


# ------------------------------------------------------------------------------------------
# A program: the model and drawn feeds
# ------------------------------------------------------------------------------------------

@functools.lru_cache(maxsize=16)
def _model_bytes(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


@attrs.frozen(eq=False, repr=False)
class ModelFeeds:
    """The recipe of one program: the model in `path` (`format`) and `feeds`."""

    path: str
    format: str
    feeds: tuple  # ((name, value), ...) in declared order

    kind = KIND

    def build(self):
        if self.format == "onnx":
            import onnx
            return onnx.load_model_from_string(_model_bytes(self.path)), dict(self.feeds)
        return read_model(self.path)[1], dict(self.feeds)

    def rules(self) -> frozenset:
        return frozenset()

    def features(self) -> frozenset:
        return frozenset()

    def __repr__(self):
        feeds = ", ".join(f"{k!r}: {describe(v)}" for k, v in self.feeds)
        return f"ModelFeeds({self.path!r}, {{{feeds}}})"


def describe(value) -> str:
    """A feed as the report shows it: its values when small, else dtype, shape and a digest
    (a program's `repr` names it: two different feeds never read the same)."""
    if isinstance(value, list):
        return "[" + ", ".join(describe(v) for v in value) + "]"
    a = np.asarray(value)
    if a.size == 0:
        return f"np.zeros({a.shape!r}, {a.dtype.name!r})"
    if a.size <= 12:
        return f"np.array({a.tolist()!r}, {a.dtype.name!r})"
    digest = hashlib.sha1(a.tobytes()).hexdigest()[:10]
    return f"<{a.dtype.name}{list(a.shape)} sha1 {digest}>"


@attrs.frozen(slots=False, repr=False)
class ModelProgram:
    """A program of a model campaign: `recipe` (a `ModelFeeds`) and what it builds."""

    recipe: ModelFeeds

    @functools.cached_property
    def _built(self):
        return self.recipe.build()

    @property
    def model(self):
        return self._built[0]

    @property
    def feeds(self) -> dict:
        return {k: [np.array(x) for x in v] if isinstance(v, list) else np.array(v)
                for k, v in self._built[1].items()}

    @property
    def format(self) -> str:
        return self.recipe.format

    @property
    def kind(self) -> str:
        return KIND

    @property
    def rules(self) -> frozenset:
        return self.recipe.rules()

    @property
    def features(self) -> frozenset:
        return self.recipe.features()

    def __repr__(self):
        return f"{self.recipe!r}.program()"


def model_subjects(path: str):
    """The strategy of `Subject`s of the campaign on the model in `path`: the model fixed,
    its feeds drawn (a `ModelError` when an input cannot be drawn)."""
    from hypothesis import strategies as st

    from .subject import Subject
    fmt, model = read_model(path)
    inputs = declared_inputs(path, fmt, model)
    order = [i.name for i in inputs]
    return feeds_of(inputs).map(lambda feeds: Subject(
        KIND, fmt, ModelProgram(ModelFeeds(path, fmt, tuple((k, feeds[k]) for k in order))))
    ) if inputs else st.just(Subject(KIND, fmt, ModelProgram(ModelFeeds(path, fmt, ()))))
