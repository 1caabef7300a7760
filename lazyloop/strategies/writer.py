"""The pieces a program generator is made of: small hypothesis strategies for single choices
(trip counts, operations, activations, shapes), the `LoopPlan` of one loop, and `Writer`,
which appends builder calls to a program and tracks the `Value`s they define."""
from __future__ import annotations

import itertools
from typing import Optional, Tuple

import attrs
import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from .programs import Array, Call, Member, Program, Ref, SetAttr

# ------------------------------------------------------------------------------------------
# Small strategies for the simple choices programs are made of
# ------------------------------------------------------------------------------------------

FLOAT, INT, BOOL = "float32", "int32", "bool"

EW = "ElementWiseOperation"
values_in_range = st.floats(-2, 2, width=32, allow_subnormal=False)
weights_in_range = st.floats(-1, 1, width=32, allow_subnormal=False)
element_shapes = st.lists(st.integers(1, 3), max_size=2).map(tuple)
trip_counts = st.integers(0, 3)
limit_kinds = st.sampled_from(["count", "while", "both"])
counter_styles = st.sampled_from(["up", "down"])
binary_ops = st.sampled_from(["SUM", "SUB", "PROD", "MAX", "MIN"])
unary_ops = st.sampled_from(["ABS", "NEG", "SIN", "COS", "ATAN", "FLOOR", "CEIL", "SIGN"])
body_op_kinds = st.sampled_from(["binary", "unary", "activation", "matmul", "select",
                                 "counter"])
recurrence_kinds = st.sampled_from(["accumulate", "scale", "max", "clip", "shift", "matmul",
                                    "pair"])
output_kinds = st.sampled_from(["LAST_VALUE", "CONCATENATE", "REVERSE"])
paddings = st.integers(0, 2)


@st.composite
def activations(draw):
    """(activation type, alpha, beta), with the parameters TensorRT's formulas use."""
    kind = draw(st.sampled_from(["TANH", "RELU", "SIGMOID", "SOFTSIGN", "CLIP", "LEAKY_RELU",
                                 "ELU", "HARD_SIGMOID", "SCALED_TANH"]))
    alpha = beta = None
    if kind == "CLIP":
        alpha = draw(st.sampled_from([-1.0, -0.5, 0.0]))
        beta = draw(st.sampled_from([0.5, 1.0]))
    elif kind in ("LEAKY_RELU", "ELU"):
        alpha = draw(st.sampled_from([0.1, 0.5, 1.0]))
    elif kind in ("HARD_SIGMOID", "SCALED_TANH"):
        alpha = draw(st.sampled_from([0.2, 0.5, 1.0]))
        beta = draw(st.sampled_from([0.5, 1.0]))
    return kind, alpha, beta


def float_arrays(shape, elements=values_in_range):
    return hnp.arrays(np.float32, shape, elements=elements)


@attrs.frozen
class LoopPlan:
    """The small choices that shape one loop; the builder fills in the rest (how many
    iterators, recurrences, layers and outputs it gets is drawn element by element)."""
    limit: str          # "count", "while" or "both"
    trips: int          # the intended trip count n (capped by what is iterated)
    nested: bool        # a loop inside this one
    conditional: bool   # an if-conditional in the body
    dead: bool          # a layer nobody reads (`laziness/dead`)


def loop_plans(depth: int, max_depth: int):
    return st.builds(
        LoopPlan, limit=limit_kinds, trips=trip_counts if depth == 0 else st.integers(0, 2),
        nested=st.booleans() if depth < max_depth else st.just(False),
        conditional=st.booleans(), dead=st.booleans())


# ------------------------------------------------------------------------------------------
# Writing a program: the calls, and the values they define
# ------------------------------------------------------------------------------------------


@attrs.frozen
class Value:
    """A tensor the program has defined, as the generator sees it.

    `scope` is the path of loops it is inside (data flow decides, as `structure/nesting`
    says); `top` is the largest value an int32 counter takes on a trip that runs; `defined`
    is False for loop outputs that may hold padding (they are only ever output again)."""
    ref: str
    dtype: str
    shape: Tuple[int, ...]
    scope: Tuple[str, ...] = ()
    kind: str = "map"
    defined: bool = True
    layer: Optional[str] = None
    top: int = 0


def broadcast(a, b) -> Tuple[int, ...]:
    """The shape of an elementwise layer on shapes `a` and `b` of one rank: a dimension of 1
    takes the other's extent, 0 included ((0,) with (1,) is (0,), not (1,))."""
    return tuple(y if x == 1 else x for x, y in zip(a, b))


def deepest(*scopes):
    return max(scopes, key=len)


def visible_in(value: Value, scope) -> bool:
    return tuple(scope[:len(value.scope)]) == value.scope


class Writer:
    """Appends builder calls to a recipe; knows the values they define."""

    def __init__(self, draw):
        self.draw = draw
        self.steps = []
        self.inputs = []
        self.values = []
        self.outputs = []
        self.rules = set()
        self.features = set()
        self._names = itertools.count(1)

    def fresh(self, prefix: str) -> str:
        return f"{prefix}{next(self._names)}"

    def call(self, target, method, *args, result="layer", **kwargs):
        name = self.fresh(result) if result else None
        self.steps.append(Call(name, target, method, tuple(args), tuple(kwargs.items())))
        return name

    def set(self, target, attr, value):
        self.steps.append(SetAttr(target, attr, value))

    def layer(self, method, *args, dtype, shape, scope, kind="map", target="network",
              **kwargs) -> Value:
        layer = self.call(target, method, *args, **kwargs)
        tensor = self.call(layer, "get_output", 0, result="t")
        value = Value(tensor, dtype, tuple(shape), tuple(scope), kind, layer=layer)
        self.values.append(value)
        return value

    # -- leaves ---------------------------------------------------------------------------
    def input(self, shape, dtype=FLOAT, data=None) -> Value:
        name = f"x{len(self.inputs)}"
        if data is None:
            data = self.draw(float_arrays(shape))
        self.inputs.append((name, Array.of(np.asarray(data, dtype=dtype))))
        self.steps.append(Call(name, "network", "add_input", (name, Member((dtype,)),
                                                             tuple(shape))))
        value = Value(name, dtype, tuple(shape), (), "input")
        self.values.append(value)
        return value

    def constant(self, value, dtype=None) -> Value:
        array = np.asarray(value, dtype=dtype)
        return self.layer("add_constant", array.shape, Array.of(array),
                          dtype=array.dtype.name, shape=array.shape, scope=(), kind="const")

    def int_constant(self, k: int) -> Value:
        return self.constant(np.array(k, np.int32))

    def float_constant(self, shape, elements=values_in_range) -> Value:
        return self.constant(self.draw(float_arrays(shape, elements)))

    # -- layers, with the scope data flow gives them --------------------------------------
    def elementwise(self, a: Value, b: Value, op: str, dtype=None) -> Value:
        shape = broadcast(a.shape, b.shape)
        if dtype is None:
            dtype = BOOL if op in ("LESS", "GREATER", "EQUAL") else a.dtype
        return self.layer("add_elementwise", Ref(a.ref), Ref(b.ref), Member((EW, op)),
                          dtype=dtype, shape=shape, scope=deepest(a.scope, b.scope))

    def unary(self, a: Value, op: str) -> Value:
        return self.layer("add_unary", Ref(a.ref), Member(("UnaryOperation", op)),
                          dtype=a.dtype, shape=a.shape, scope=a.scope)

    def activation(self, a: Value, kind: str, alpha=None, beta=None) -> Value:
        v = self.layer("add_activation", Ref(a.ref), Member(("ActivationType", kind)),
                       dtype=a.dtype, shape=a.shape, scope=a.scope)
        if alpha is not None:
            self.set(v.layer, "alpha", alpha)
        if beta is not None:
            self.set(v.layer, "beta", beta)
        return v

    def tanh(self, a: Value) -> Value:
        return self.activation(a, "TANH")

    def matmul_square(self, a: Value) -> Value:
        """a (rank 1 or 2) times a constant square matrix: the element shape is kept."""
        q = a.shape[-1]
        w = self.float_constant((q, q), weights_in_range)
        transpose = self.draw(st.booleans())
        op_a = "VECTOR" if len(a.shape) == 1 else "NONE"
        op_w = "TRANSPOSE" if transpose else "NONE"
        self.features.add("matmul")
        return self.layer("add_matrix_multiply", Ref(a.ref), Member(("MatrixOperation", op_a)),
                          Ref(w.ref), Member(("MatrixOperation", op_w)), dtype=a.dtype,
                          shape=a.shape, scope=a.scope)

    def reduce_all(self, a: Value) -> Value:
        """Sum over every axis, to a 0-D tensor (identity on 0-D tensors)."""
        if not a.shape:
            return a
        return self.layer("add_reduce", Ref(a.ref), Member(("ReduceOperation", "SUM")),
                          (1 << len(a.shape)) - 1, False, dtype=a.dtype, shape=(),
                          scope=a.scope)

    def reshape_to_rank(self, a: Value, rank: int) -> Value:
        """A 0-D tensor as an all-ones shape of `rank` (TensorRT broadcasts equal ranks)."""
        if rank == 0:
            return a
        v = self.layer("add_shuffle", Ref(a.ref), dtype=a.dtype, shape=(1,) * rank,
                       scope=a.scope)
        self.set(v.layer, "reshape_dims", (1,) * rank)
        return v

    def cast(self, a: Value, dtype: str) -> Value:
        return self.layer("add_cast", Ref(a.ref), Member((dtype,)), dtype=dtype,
                          shape=a.shape, scope=a.scope)

    def mark(self, value: Value) -> None:
        name = f"y{len(self.outputs)}"
        self.set(value.ref, "name", name)
        self.steps.append(Call(None, "network", "mark_output", (Ref(value.ref),)))
        self.outputs.append(name)

    def program(self) -> Program:
        return Program(tuple(self.steps), tuple(self.inputs), tuple(self.outputs),
                       frozenset(self.rules), frozenset(self.features))
