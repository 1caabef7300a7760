"""Hypothesis strategies for random loop programs -- valid ones, and ones that break a rule.

A program is *data*: a tuple of builder calls (`Call`, `SetAttr`) that `replay` performs on any
object with TensorRT's network-definition API -- a `lazyloop.Network`, a `tensorrt`
INetworkDefinition, or a test's own interpreter -- with enums and dtypes looked up on an `api`
module (`lazyloop` or `tensorrt`). Generation draws simple choices (how many trips, which limit,
which values to combine) and writes the calls; shrinking those choices shrinks the program.

    from lazyloop.strategies import networks, invalid_networks

    @given(networks())
    def test_something(program):
        result = ll.run(program.net, program.feeds)
        program.rules          # the rule IDs the program exercises, e.g. "trip/while"
        program.source()       # the program as Python code for `tensorrt`

    @given(invalid_networks())
    def test_refused(case):
        build, rule = case     # build() -> (net, feeds); building or running raises `rule`

Valid programs keep to the TensorRT profile: float32 values in [-2, 2] bounded by tanh, clip
and max in recurrences; int32 counters; WHILE limits on a counter recurrence compared with a
constant bound, so every loop terminates; iterators long enough for every trip that runs.
"""
from __future__ import annotations

import functools
import itertools
from typing import Any, Optional, Tuple

import attrs
import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

# ------------------------------------------------------------------------------------------
# Programs as data
# ------------------------------------------------------------------------------------------


@attrs.frozen
class Ref:
    """A value bound by an earlier step: a layer, a tensor, a loop or a conditional."""
    name: str

    def __repr__(self):
        return self.name


@attrs.frozen
class Member:
    """An attribute path on the target API module: `("TripLimit", "COUNT")`, `("float32",)`."""
    path: Tuple[str, ...]

    def resolve(self, api):
        return functools.reduce(getattr, self.path, api)

    def __repr__(self):
        return "api." + ".".join(self.path)


@attrs.frozen
class Array:
    """A numpy array held as plain data (weights and feeds)."""
    dtype: str
    shape: Tuple[int, ...]
    data: Tuple[Any, ...]

    @classmethod
    def of(cls, value) -> "Array":
        value = np.asarray(value)
        return cls(value.dtype.name, tuple(value.shape), tuple(value.reshape(-1).tolist()))

    def value(self) -> np.ndarray:
        return np.array(self.data, dtype=self.dtype).reshape(self.shape)

    def __repr__(self):
        return f"np.array({list(self.data)!r}, np.{self.dtype}).reshape({self.shape!r})"


@attrs.frozen
class Call:
    """`result = target.method(*args, **kwargs)`; `result` None discards the return value."""
    result: Optional[str]
    target: str
    method: str
    args: Tuple[Any, ...] = ()
    kwargs: Tuple[Tuple[str, Any], ...] = ()

    def __repr__(self):
        parts = [repr(a) for a in self.args] + [f"{k}={v!r}" for k, v in self.kwargs]
        text = f"{self.target}.{self.method}({', '.join(parts)})"
        return f"{self.result} = {text}" if self.result else text


@attrs.frozen
class SetAttr:
    """`target.attr = value` (activation alpha/beta, shuffle reshape_dims, tensor names)."""
    target: str
    attr: str
    value: Any

    def __repr__(self):
        return f"{self.target}.{self.attr} = {self.value!r}"


def replay(steps, network, api=None) -> dict:
    """Perform the builder calls on `network`; returns the environment of bound names.

    The environment also keeps every weights array under "_weights", because TensorRT reads
    weights by reference when the engine is built: keep the environment alive until then."""
    if api is None:
        import lazyloop as api
    env = {"network": network, "_weights": []}

    def resolve(x):
        if isinstance(x, Ref):
            return env[x.name]
        if isinstance(x, Member):
            return x.resolve(api)
        if isinstance(x, Array):
            value = x.value()
            env["_weights"].append(value)
            return value
        if isinstance(x, tuple):
            return tuple(resolve(v) for v in x)
        return x

    for step in steps:
        target = env[step.target]
        if isinstance(step, SetAttr):
            setattr(target, step.attr, resolve(step.value))
            continue
        result = getattr(target, step.method)(*[resolve(a) for a in step.args],
                                               **{k: resolve(v) for k, v in step.kwargs})
        if step.result:
            env[step.result] = result
    return env


def source(steps, module: str = "trt") -> str:
    """The steps as Python code for a `network` object and an enum module named `module`."""
    return "\n".join(repr(s).replace("api.", f"{module}.") for s in steps)


@attrs.frozen(slots=False, repr=False)
class Program:
    """A valid program: builder calls, feeds, and what it exercises.

    `rules` holds the rule IDs it exercises; `features` finer labels ("zero-trips",
    "padding", "nested", ...). `outputs` are the names of the marked output tensors."""
    steps: Tuple[Any, ...]
    inputs: Tuple[Tuple[str, Array], ...]
    outputs: Tuple[str, ...]
    rules: frozenset
    features: frozenset

    def build(self, network=None, api=None):
        """Replay onto `network` (a new `lazyloop.Network()` by default); returns it."""
        if network is None:
            import lazyloop
            network = lazyloop.Network("tensorrt")
        replay(self.steps, network, api)
        return network

    @functools.cached_property
    def net(self):
        """The program built on a `lazyloop.Network` (built once, on first use)."""
        return self.build()

    def __getstate__(self):  # the recipe pickles; the built network is rebuilt on demand
        return {k: v for k, v in self.__dict__.items() if k != "net"}

    def __setstate__(self, state):
        self.__dict__.update(state)

    @property
    def feeds(self) -> dict:
        return {name: a.value() for name, a in self.inputs}

    def source(self, module: str = "trt") -> str:
        return source(self.steps, module)

    def _repr_pretty_(self, printer, cycle):  # hypothesis prints falsifying examples so
        printer.text(repr(self))

    def __repr__(self):
        feeds = ", ".join(f"{k!r}: {a!r}" for k, a in self.inputs)
        return (f"Program(rules={sorted(self.rules)}, features={sorted(self.features)},\n"
                f"  feeds={{{feeds}}},\n  outputs={list(self.outputs)},\n"
                + "\n".join("  " + line for line in self.source("api").splitlines()) + ")")


@attrs.frozen(slots=False, repr=False)
class InvalidProgram:
    """Builder calls that break `rule`: building or evaluating them raises a
    `LazyLoopError` whose `.rule` is `rule`. `variant` names the way it breaks it."""
    steps: Tuple[Any, ...]
    inputs: Tuple[Tuple[str, Array], ...]
    rule: str
    variant: str

    def build(self, network=None, api=None):
        """Replay the calls (which may raise) -> (network, feeds)."""
        if network is None:
            import lazyloop
            network = lazyloop.Network("tensorrt")
        replay(self.steps, network, api)
        return network, {name: a.value() for name, a in self.inputs}

    def source(self, module: str = "trt") -> str:
        return source(self.steps, module)

    def _repr_pretty_(self, printer, cycle):
        printer.text(repr(self))

    def __repr__(self):
        return (f"InvalidProgram(rule={self.rule!r}, variant={self.variant!r},\n"
                + "\n".join("  " + line for line in self.source("api").splitlines()) + ")")


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
        shape = tuple(max(x, y) for x, y in zip(a.shape, b.shape))
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
        """a times a constant square matrix: the element shape is kept (rank 1 or 2)."""
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


# ------------------------------------------------------------------------------------------
# Valid programs
# ------------------------------------------------------------------------------------------


@attrs.define
class LoopState:
    """What the builder knows about the loop it is writing."""
    ref: str
    scope: Tuple[str, ...]
    shape: Tuple[int, ...]          # the element shape E of its float values
    n_max: int                      # the most trips any of its runs makes
    varying: bool = False           # runs of it make different numbers of trips
    anchor: Tuple[str, ...] = ()    # the deepest scope a boundary layer of it reads from
    reads: Tuple[str, ...] = ()     # the deepest scope it reads values from (data flow
                                    # nests it there, and its outputs live there)
    pool: list = attrs.Factory(list)         # float32 values of shape E usable in the body
    terminal: list = attrs.Factory(list)     # values only fit to be output (other shapes)
    recurrences: list = attrs.Factory(list)  # its float recurrences
    counter: Optional[Value] = None


class ProgramBuilder:
    """Draws one valid TensorRT-profile program, loop by loop."""

    def __init__(self, draw, max_depth: int, avoid: frozenset):
        self.w = Writer(draw)
        self.draw = draw
        self.max_depth = max_depth
        self.avoid = avoid

    def read(self, loop: LoopState, *values: Value, boundary: bool = False) -> None:
        """Note that `loop` reads `values` (through a boundary layer: its iterator, trip limit
        or recurrence init): those from outside it decide where it nests."""
        for v in values:
            if len(v.scope) < len(loop.scope):
                loop.reads = deepest(loop.reads, v.scope)
                if boundary:
                    loop.anchor = deepest(loop.anchor, v.scope)

    def pick(self, options):
        return self.draw(st.sampled_from(list(options)))

    def repeat(self, at_most: int, at_least: int = 0):
        """0, 1, ... for as long as a drawn flag asks for one more: the way hypothesis draws
        its own lists, so shrinking deletes an element together with its flag."""
        k = 0
        while k < at_most and (k < at_least or self.draw(st.booleans())):
            yield k
            k += 1

    def visible(self, scope):
        return [v for v in self.w.values if visible_in(v, scope) and v.defined]

    # -- where a loop sits, its element shape, its first iterator ------------------------
    def anchor(self, outer: LoopState) -> Optional[str]:
        """How a nested loop is tied to its outer loop, so that data flow nests it there
        (`structure/nesting`): a boundary layer may "iterate" over an outer stream, "carry"
        one in as a recurrence's initial value, or "count" its trips with the outer counter;
        or only a "body" layer reads an outer stream (unless "body-only-nesting" is avoided).
        None when the outer loop has no stream to offer."""
        streams = [v for v in outer.pool if v.scope == outer.scope and v.dtype == FLOAT]
        options = (["iterate"] if any(v.shape for v in streams) else []) \
            + (["carry"] if streams else []) + (["count"] if outer.counter else []) \
            + (["body"] if streams and "body-only-nesting" not in self.avoid else [])
        return self.pick(options) if options else None

    def element_shape(self, scope, plan: LoopPlan, how: Optional[str], outer):
        """(E, n, iterated source or None, carried value or None). A top-level loop takes a
        fresh shape, or iterates over an existing value (an earlier loop's output, an input);
        a nested loop follows its anchor."""
        if how in ("iterate", "carry", "body"):
            streams = [v for v in outer.pool if v.scope == outer.scope and v.dtype == FLOAT]
            if how in ("carry", "body"):
                v = self.pick(streams)
                return v.shape, plan.trips, None, v
            v, axis = self.pick([(v, a) for v in streams for a in range(len(v.shape))])
            return v.shape[:axis] + v.shape[axis + 1:], min(plan.trips, v.shape[axis]), \
                (v, axis), None
        sources = [(v, a) for v in self.visible(scope) if v.dtype == FLOAT
                   and v.kind != "const" for a in range(len(v.shape))]
        outputs = [(v, a) for v, a in sources if v.kind == "loop-output"]
        where = self.draw(st.sampled_from(["fresh", "earlier-output", "existing"]))
        if how is None and (where == "earlier-output" and outputs
                            or where == "existing" and sources):
            v, axis = self.pick(outputs if where == "earlier-output" else sources)
            return v.shape[:axis] + v.shape[axis + 1:], min(plan.trips, v.shape[axis]), \
                (v, axis), None
        return self.draw(element_shapes), plan.trips, None, None

    # -- trip limits and counters -----------------------------------------------------------
    def counter(self, loop: LoopState, style: str, start: Value, step: int = 1) -> Value:
        """An int32 recurrence counting up from `start` (or down); `top` is set by the caller."""
        w = self.w
        rec = w.layer("add_recurrence", Ref(start.ref), target=loop.ref, dtype=INT, shape=(),
                      scope=loop.scope, kind="counter")
        one = w.int_constant(step)
        nxt = w.elementwise(rec, one, "SUM" if style == "up" else "SUB")
        w.call(rec.layer, "set_input", 1, Ref(nxt.ref), result=None)
        w.rules.update({"recurrence/def", "stream/order"})
        w.features.add(f"counter-{style}")
        return rec

    def while_limit(self, loop: LoopState, bound: int, outer: Optional[LoopState]):
        """WHILE on a counter: up from 0 while c < bound, or down from bound while c > 0;
        given `outer`, down from the outer loop's counter (the trips vary per run)."""
        w = self.w
        style = self.draw(counter_styles)
        if outer is not None:
            style = "down"
            start, top = outer.counter, outer.counter.top
            loop.varying = True
            self.read(loop, start, boundary=True)
            w.features.add("counter-from-outer")
        else:
            start, top = (w.int_constant(0) if style == "up" else w.int_constant(bound)), bound
        c = self.counter(loop, style, start)
        if style == "up":
            cond = (w.elementwise(c, w.int_constant(bound), "LESS") if self.draw(st.booleans())
                    else w.elementwise(w.int_constant(bound), c, "GREATER"))
            loop.counter = attrs.evolve(c, top=max(bound - 1, 0))
        else:
            cond = w.elementwise(c, w.int_constant(0), "GREATER")
            loop.counter = attrs.evolve(c, top=top)
        w.call(loop.ref, "add_trip_limit", Ref(cond.ref), Member(("TripLimit", "WHILE")),
               result=None)
        w.rules.add("trip/while")
        return top

    def count_limit(self, loop: LoopState, count: int, outer: Optional[LoopState]):
        """COUNT from a constant, or (given `outer`) from the outer loop's counter."""
        w = self.w
        if outer is not None:
            t, n = outer.counter, outer.counter.top
            loop.varying = True
            self.read(loop, t, boundary=True)
            w.features.add("count-from-outer")
        else:
            t, n = w.int_constant(count), count
        w.call(loop.ref, "add_trip_limit", Ref(t.ref), Member(("TripLimit", "COUNT")),
               result=None)
        w.rules.add("trip/count")
        return n

    def trip_limits(self, loop: LoopState, plan: LoopPlan, n: int, outer):
        """Returns the most trips a run of the loop makes. Given `outer`, the trips are
        counted by the outer loop's counter."""
        if plan.limit == "count":
            return self.count_limit(loop, n, outer)
        if plan.limit == "while":
            return self.while_limit(loop, n, outer)
        # both: one limit stops the loop at n, the other would allow more
        self.w.rules.add("trip/both")
        slack = self.draw(st.integers(0, 2))
        if "count-stops-both" in self.avoid:
            slack = max(slack, 1)
        if self.draw(st.booleans()) and "count-stops-both" not in self.avoid:
            a = self.count_limit(loop, n, outer)
            b = self.while_limit(loop, n + slack, None)
            if outer is None:
                self.w.features.add("count-stops-both")
        else:
            a = self.count_limit(loop, n + slack, outer)
            b = self.while_limit(loop, n, None)
        return min(a, b)

    # -- iterators and recurrences ----------------------------------------------------------
    def iterator(self, loop: LoopState, source: Optional[Tuple[Value, int]] = None) -> Value:
        w = self.w
        if source is None:
            axis = self.draw(st.integers(0, len(loop.shape)))
            extent = max(loop.n_max, 1) + self.draw(st.integers(0, 1))
            shape = loop.shape[:axis] + (extent,) + loop.shape[axis:]
            candidates = [v for v in self.visible(loop.scope[:-1]) if v.dtype == FLOAT
                          and v.shape == shape and v.kind != "const"]
            v = self.pick(candidates) if candidates and self.draw(st.booleans()) else w.input(shape)
        else:
            v, axis = source
        reverse = self.draw(st.booleans())
        self.read(loop, v, boundary=True)
        it = w.layer("add_iterator", Ref(v.ref), target=loop.ref, axis=axis, reverse=reverse,
                     dtype=FLOAT, shape=loop.shape, scope=loop.scope, kind="iterator")
        w.rules.add("iterator/reverse" if reverse else "iterator/forward")
        w.features.add(f"iterator-axis-{axis}")
        if v.scope:
            w.features.add("iterates-outer-stream")
        elif v.kind == "loop-output":
            w.features.add("iterates-loop-output")
        loop.pool.append(it)
        return it

    def recurrence(self, loop: LoopState, init: Optional[Value] = None) -> Value:
        """A float recurrence of shape E; its initial value comes from outside the loop."""
        w = self.w
        inits = [v for v in self.visible(loop.scope[:-1]) if v.dtype == FLOAT
                 and v.shape == loop.shape]
        choice = "given" if init is not None else \
            self.draw(st.sampled_from(["constant", "input", "outside"]))
        if choice == "given":
            w.features.add("init-from-outer-stream")
        elif choice == "outside" and inits:
            init = self.pick(inits)
            w.features.add("init-from-outer-stream" if init.scope else "init-from-outside")
        elif choice == "input":
            init = w.input(loop.shape)
        else:
            init = w.float_constant(loop.shape)
        self.read(loop, init, boundary=True)
        rec = w.layer("add_recurrence", Ref(init.ref), target=loop.ref, dtype=FLOAT,
                      shape=loop.shape, scope=loop.scope, kind="recurrence")
        w.rules.update({"recurrence/def", "stream/order"})
        loop.pool.append(rec)
        loop.recurrences.append(rec)
        return rec

    def close_recurrences(self, loop: LoopState, recs):
        """Set every recurrence's next value: bounded updates of several shapes."""
        w = self.w
        inside = [v for v in loop.pool if v.scope == loop.scope]
        kinds = []
        i = 0
        while i < len(recs):
            kind = self.draw(recurrence_kinds)
            if kind == "pair" and i + 1 < len(recs):
                r1, r2 = recs[i], recs[i + 1]          # r1' = r2, r2' = tanh(r1 + r2)
                self.set_next(r1, r2)
                self.set_next(r2, w.tanh(w.elementwise(r1, r2, "SUM")))
                kinds.append(kind)
                i += 2
                continue
            r = recs[i]
            x = self.pick(loop.pool)
            if kind == "matmul" and loop.shape:
                nxt = w.tanh(w.matmul_square(r))
            elif kind == "shift" and inside:
                nxt = self.pick(inside)      # r' = a value of this trip: r is it, delayed
            elif kind == "scale":
                nxt = w.tanh(w.elementwise(r, x, "PROD"))
            elif kind == "max":
                nxt = w.elementwise(r, x, "MAX")
            elif kind == "clip":
                nxt = w.activation(w.elementwise(r, x, "SUM"), "CLIP", -1.0, 1.0)
            else:
                kind = "accumulate"
                nxt = w.tanh(w.elementwise(r, x, "SUM"))
            self.set_next(r, nxt)
            kinds.append(kind)
            i += 1
        w.features.update(f"recurrence-{k}" for k in kinds)

    def set_next(self, rec: Value, nxt: Value):
        self.w.call(rec.layer, "set_input", 1, Ref(nxt.ref), result=None)

    # -- body -------------------------------------------------------------------------------
    def uses(self, loop: LoopState, *operands: Value):
        """Note the rules reading these operands in the body exercises."""
        self.w.rules.add("stream/map")
        if any(len(v.scope) < len(loop.scope) for v in operands):
            self.w.rules.add("stream/invariant")
            if any(0 < len(v.scope) < len(loop.scope) for v in operands):
                self.w.features.add("invariant-from-outer-loop")

    def may_read(self, loop: LoopState, v: Value) -> bool:
        """Whether a body layer of `loop` may read `v` from outside it, given `avoid`."""
        return len(v.scope) <= len(loop.anchor) or "body-only-nesting" not in self.avoid

    def operand(self, loop: LoopState) -> Value:
        """A float32 value of shape E: a stream of the loop, or an invariant (a value from
        outside it, a new constant, a new input)."""
        outside = [v for v in self.visible(loop.scope[:-1]) if v.dtype == FLOAT
                   and v.shape == loop.shape and self.may_read(loop, v)]
        where = self.draw(st.sampled_from(["loop", "outside", "constant", "input"]))
        if where == "loop" and loop.pool:
            return self.pick(loop.pool)
        if where == "outside" and outside:
            v = self.pick(outside)
            self.read(loop, v)
            return v
        if where == "input":
            return self.w.input(loop.shape)
        return self.w.float_constant(loop.shape)

    def body_op(self, loop: LoopState) -> Value:
        """One layer of the body."""
        w = self.w
        kind = self.draw(body_op_kinds)
        a = self.operand(loop)
        if kind == "matmul" and loop.shape:
            out = w.tanh(w.matmul_square(a))
        elif kind == "unary":
            out = w.unary(a, self.draw(unary_ops))
            w.features.add("unary")
        elif kind == "activation":
            out = w.activation(a, *self.draw(activations()))
            w.features.add("activation")
        elif kind == "select":
            b = self.operand(loop)
            out = self.w.layer("add_select", Ref(w.elementwise(a, b, "GREATER").ref),
                               Ref(a.ref), Ref(b.ref), dtype=FLOAT, shape=a.shape,
                               scope=deepest(a.scope, b.scope))
            w.features.add("select")
        elif kind == "counter" and loop.counter is not None:
            c = w.reshape_to_rank(w.cast(loop.counter, FLOAT), len(loop.shape))
            out = w.elementwise(a, c, self.pick(["SUM", "PROD"]))
            w.features.add("counter-as-data")
        else:
            b = self.operand(loop)
            out = w.elementwise(a, b, self.draw(binary_ops))
            w.features.add("binary")
        self.uses(loop, a)
        if out.scope == loop.scope:
            loop.pool.append(out)
        return out

    def condition(self, loop: LoopState) -> Value:
        """A 0-D bool of this loop: the counter against a bound, or the sign of a sum."""
        w = self.w
        if loop.counter is not None and self.draw(st.booleans()):
            k = self.draw(st.integers(0, max(loop.n_max, 1)))
            return w.elementwise(loop.counter, w.int_constant(k), "LESS")
        streams = [v for v in loop.pool if v.scope == loop.scope]
        x = self.pick(streams) if streams else self.operand(loop)
        s = w.reduce_all(x)
        return w.elementwise(s, w.constant(np.zeros((), np.float32)), "GREATER")

    def conditional(self, loop: LoopState) -> Value:
        """add_if_conditional inside the loop: per trip, only the taken branch is forced."""
        w = self.w
        cond = self.condition(loop)
        a, b = self.operand(loop), self.operand(loop)
        if len(deepest(a.scope, b.scope)) < len(cond.scope):
            # the condition varies per trip while both branches are invariants
            if "invariant-branches" in self.avoid:
                streams = [v for v in loop.pool if v.scope == loop.scope]
                if not streams:
                    return None
                b = self.pick(streams)
            else:
                w.features.add("invariant-branches")
        ifc = w.call("network", "add_if_conditional", result="if")
        w.call(ifc, "set_condition", Ref(cond.ref), result=None)
        a_in = w.layer("add_input", Ref(a.ref), target=ifc, dtype=FLOAT, shape=a.shape,
                       scope=a.scope)
        b_in = w.layer("add_input", Ref(b.ref), target=ifc, dtype=FLOAT, shape=b.shape,
                       scope=b.scope)
        then = w.activation(a_in, *self.draw(activations()))
        orelse = w.unary(b_in, self.draw(unary_ops)) if self.draw(st.booleans()) else b_in
        out = w.layer("add_output", Ref(then.ref), Ref(orelse.ref), target=ifc, dtype=FLOAT,
                      shape=loop.shape, scope=deepest(cond.scope, a.scope, b.scope))
        self.uses(loop, a, b)
        w.features.add("conditional")
        loop.pool.append(out)
        return out

    # -- outputs ----------------------------------------------------------------------------
    def loop_output(self, loop: LoopState, src: Optional[Value] = None) -> Value:
        """A loop output of `src` (drawn by default: a recurrence for LAST_VALUE)."""
        w = self.w
        recs = loop.recurrences + ([loop.counter] if loop.counter else [])
        kind = self.draw(output_kinds)
        if src is not None:
            kind = "CONCATENATE" if kind == "LAST_VALUE" else kind
        elif kind == "LAST_VALUE" and recs:
            src = self.pick(recs)
            out = w.layer("add_loop_output", Ref(src.ref), Member(("LoopOutput", kind)),
                          target=loop.ref, dtype=src.dtype, shape=src.shape,
                          scope=loop.reads, kind="loop-output")
            w.rules.add("output/last")
            return out
        kind = "CONCATENATE" if kind == "LAST_VALUE" else kind
        sources = loop.pool + loop.terminal + recs
        if src is None:
            src = self.pick(sources) if sources else self.operand(loop)
        axis = self.draw(st.integers(0, len(src.shape)))
        pad = self.draw(paddings)
        length = loop.n_max + pad
        shape = src.shape[:axis] + (length,) + src.shape[axis:]
        out = w.layer("add_loop_output", Ref(src.ref), Member(("LoopOutput", kind)), axis,
                      target=loop.ref, dtype=src.dtype, shape=shape, scope=loop.reads,
                      kind="loop-output")
        w.call(out.layer, "set_input", 1, Ref(w.int_constant(length).ref), result=None)
        padded = pad > 0 or loop.varying or not src.defined
        if padded:
            w.features.add("padding")
            w.values[w.values.index(out)] = out = attrs.evolve(out, defined=False)
        w.rules.add("output/concat" if kind == "CONCATENATE" else "output/reverse")
        w.features.add(f"{kind.lower()}-axis-{axis}")
        if len(src.scope) < len(loop.scope):
            w.rules.add("stream/invariant")
        return out

    # -- one loop ---------------------------------------------------------------------------
    def loop(self, scope: Tuple[str, ...], outer: Optional[LoopState]) -> list:
        """Write one loop (and the loops nested in it); returns its output values."""
        w = self.w
        how = self.anchor(outer) if outer is not None else None
        if outer is not None and how is None:
            return []
        plan = self.draw(loop_plans(len(scope), self.max_depth))
        ref = w.call("network", "add_loop", result="loop")
        shape, n, source, carried = self.element_shape(scope, plan, how, outer)
        loop = LoopState(ref, scope + (ref,), shape, 0)
        loop.n_max = self.trip_limits(loop, plan, n, outer if how == "count" else None)
        if loop.varying:
            w.features.add("varying-trips")
        if n == 0 or loop.varying and loop.n_max == 0:
            w.features.add("zero-trips")
        if loop.counter is None and plan.trips and self.draw(st.booleans()):
            loop.counter = attrs.evolve(self.counter(loop, "up", w.int_constant(0)),
                                        top=max(loop.n_max - 1, 0))
        if source is not None:
            self.iterator(loop, source)
        for _ in self.repeat(2 - (source is not None)):
            self.iterator(loop)
        if how == "carry":
            self.recurrence(loop, carried)
        elif how == "body":  # only a body layer mixing an outer stream with one of this
            # loop's, which this loop outputs (so it is this loop that reads the outer one)
            own = [v for v in loop.pool if v.scope == loop.scope] or [self.recurrence(loop)]
            mixed = w.elementwise(carried, self.pick(own), self.draw(binary_ops))
            self.read(loop, carried)
            self.uses(loop, carried)
            loop.pool.append(mixed)
            w.features.add("body-only-nesting")
        for _ in self.repeat(2 - len(loop.recurrences)):
            self.recurrence(loop)
        recs = loop.recurrences
        for _ in self.repeat(3):
            self.body_op(loop)
        if plan.nested:
            for out in self.loop(loop.scope, loop):
                fits = out.defined and out.dtype == FLOAT and out.shape == loop.shape
                (loop.pool if fits else loop.terminal).append(out)
        if plan.conditional:
            self.conditional(loop)
        self.close_recurrences(loop, recs)
        streams = [v for v in loop.pool if v.scope == loop.scope]
        if plan.dead and streams:
            w.unary(self.pick(streams), "NEG")  # a layer of the loop that nothing reads
            w.rules.add("laziness/dead")
        outputs = [self.loop_output(loop, mixed)] if how == "body" else []
        outputs += [self.loop_output(loop) for _ in self.repeat(3, at_least=1 - len(outputs))]
        if loop.reads:  # data flow nests it in the loop it reads from
            w.rules.add("structure/nesting")
            w.features.add("nested")
        return outputs

    # -- the whole program ------------------------------------------------------------------
    def program(self) -> Program:
        w = self.w
        marked, unmarked = [], []
        for k in self.repeat(2, at_least=1):
            if k:
                w.features.add("sequential-loops")
            outs = self.loop((), None)
            if self.draw(st.integers(0, 4)) < 4:
                marked += outs
            else:  # nobody marks its outputs (or reads them): the loop is never run
                unmarked.append(outs)
                for out in outs:
                    w.values.remove(out)
        if not marked:
            marked = unmarked.pop()
        if unmarked:
            w.rules.add("laziness/dead")
            w.features.add("dead-loop")
        defined = [v for v in marked if v.defined and v.dtype == FLOAT]
        if defined and self.draw(st.booleans()):
            marked.append(w.unary(self.pick(defined), self.draw(unary_ops)))
            w.features.add("after-loop")
        for v in marked:
            w.mark(v)
        return w.program()


# Constructs `networks()` leaves out by default because the core mishandles them (each with
# a minimal repro in tests/test_laws.py). Empty: every bug found so far is fixed. Names that
# `avoid` understands: "body-only-nesting" (a nested loop tied to its outer loop only by a
# body layer reading an outer stream), "invariant-branches" (a conditional whose condition
# is a stream of the loop while both branches are invariants), "count-stops-both" (a loop
# with both limits that its COUNT stops).
KNOWN_CORE_BUGS = frozenset()


@st.composite
def networks(draw, max_depth: int = 1, avoid=KNOWN_CORE_BUGS):
    """Valid TensorRT-profile programs: a `Program` (`.net`, `.feeds`, `.rules`, `.steps`).

    `max_depth` is how deep loops nest (0: no nesting). `avoid` names constructs to leave
    out (see `KNOWN_CORE_BUGS`, the default)."""
    return ProgramBuilder(draw, max_depth, frozenset(avoid)).program()


# ------------------------------------------------------------------------------------------
# Invalid programs: one family per structure rule
# ------------------------------------------------------------------------------------------


@attrs.frozen
class Handles:
    """A loop of a broken program: its name, scope, input, iterator, recurrence, trips."""
    ref: str
    scope: Tuple[str, ...]
    x: Value
    it: Value
    rec: Optional[Value]
    n: int


class Broken(Writer):
    """A writer for small programs around one loop, to be broken in one named way."""

    def loop(self, n: int, shape=(2,), limit="count", reverse=False):
        """A loop over a fresh input with a float recurrence; returns its handles."""
        ref = self.call("network", "add_loop", result="loop")
        scope = (ref,)
        x = self.input((max(n, 1),) + tuple(shape))
        if limit == "count":
            self.call(ref, "add_trip_limit", Ref(self.int_constant(n).ref),
                      Member(("TripLimit", "COUNT")), result=None)
        it = self.layer("add_iterator", Ref(x.ref), target=ref, axis=0, reverse=reverse,
                        dtype=FLOAT, shape=shape, scope=scope, kind="iterator")
        init = self.constant(np.zeros(shape, np.float32))
        rec = self.layer("add_recurrence", Ref(init.ref), target=ref, dtype=FLOAT,
                         shape=shape, scope=scope, kind="recurrence")
        return Handles(ref, scope, x, it, rec, n)

    def close(self, h, nxt=None):
        nxt = nxt or self.tanh(self.elementwise(h.rec, h.it, "SUM"))
        self.call(h.rec.layer, "set_input", 1, Ref(nxt.ref), result=None)
        return nxt

    def output(self, h, value, kind="CONCATENATE", length=None):
        args = (Ref(value.ref), Member(("LoopOutput", kind)))
        if kind != "LAST_VALUE":
            args += (0,)
        out = self.layer("add_loop_output", *args, target=h.ref, dtype=value.dtype,
                         shape=value.shape, scope=(), kind="loop-output")
        if kind != "LAST_VALUE":
            length = self.int_constant(h.n) if length is None else length
            if length != "unset":
                self.call(out.layer, "set_input", 1, Ref(length.ref), result=None)
        return out

    def inner(self, h):
        """A loop nested in `h`: one trip over `h`'s iterator element (a boundary layer reads
        a stream of `h`, so the nesting is plain)."""
        ref = self.call("network", "add_loop", result="loop")
        self.call(ref, "add_trip_limit", Ref(self.int_constant(1).ref),
                  Member(("TripLimit", "COUNT")), result=None)
        scope = h.scope + (ref,)
        it = self.layer("add_iterator", Ref(h.it.ref), target=ref, axis=0, reverse=False,
                        dtype=FLOAT, shape=(), scope=scope, kind="iterator")
        return attrs.evolve(h, ref=ref, scope=scope, it=it, rec=None, n=1)

    def counter_while(self, h, bound):
        c = self.layer("add_recurrence", Ref(self.int_constant(0).ref), target=h.ref,
                       dtype=INT, shape=(), scope=h.scope, kind="counter")
        self.call(c.layer, "set_input", 1,
                  Ref(self.elementwise(c, self.int_constant(1), "SUM").ref), result=None)
        cond = self.elementwise(c, self.int_constant(bound), "LESS")
        return c, cond

    def broken(self, rule, variant) -> InvalidProgram:
        return InvalidProgram(tuple(self.steps), tuple(self.inputs), rule, variant)


def _family(rule):
    """Register a composite strategy drawing (Broken writer, variant) for `rule`."""
    def wrap(fn):
        @st.composite
        def strategy(draw):
            w = Broken(draw)
            variant = fn(draw, w)
            return w.broken(rule, variant)
        strategy.__name__ = strategy.__qualname__ = fn.__name__
        FAMILIES[rule] = strategy
        return strategy
    return wrap


FAMILIES = {}
small_trips = st.integers(1, 3)


@_family("structure/acyclic")
def acyclic_breaks(draw, w: Broken):
    """A layer's input set, after the fact, to a layer downstream of it: a cycle that is not
    a recurrence's input 1."""
    h = w.loop(draw(small_trips))
    first = w.elementwise(h.it, h.it, "SUM")
    last = first
    length = draw(st.integers(0, 2))  # 0: the layer reads its own output
    for _ in range(length):
        last = w.tanh(last)
    w.close(h)
    w.call(first.layer, "set_input", 1, Ref(last.ref), result=None)
    w.mark(w.output(h, last))
    return "self-loop" if length == 0 else f"cycle of {length + 1} layers"


@_family("structure/exit")
def exit_breaks(draw, w: Broken):
    """Data leaving a loop other than through its loop output layers."""
    h = w.loop(draw(small_trips))
    w.close(h)
    variant = draw(st.sampled_from(["mark-stream", "mix-with-outside", "loop-in-loop-marked"]))
    if variant == "mark-stream":
        w.mark(h.it)
    elif variant == "mix-with-outside":
        w.mark(w.elementwise(h.it, w.constant(np.ones((2,), np.float32)), "SUM"))
    else:
        # a loop iterating over the first one's stream is nested in it; marking its output
        # takes a stream of the first loop out of it
        hi = w.inner(h)
        w.mark(w.output(hi, hi.it))
    return variant


@_family("structure/limits")
def limits_breaks(draw, w: Broken):
    variant = draw(st.sampled_from(["no-limit", "two-counts", "two-whiles"]))
    h = w.loop(draw(small_trips), limit="none" if variant != "two-counts" else "count")
    w.close(h)
    if variant == "two-counts":
        w.call(h.ref, "add_trip_limit", Ref(w.int_constant(1).ref),
               Member(("TripLimit", "COUNT")), result=None)
    elif variant == "two-whiles":
        for bound in (h.n, h.n + 1):
            _, cond = w.counter_while(h, bound)
            w.call(h.ref, "add_trip_limit", Ref(cond.ref), Member(("TripLimit", "WHILE")),
                   result=None)
    w.mark(w.output(h, h.rec, "LAST_VALUE"))
    return variant


@_family("structure/recurrence")
def recurrence_breaks(draw, w: Broken):
    variant = draw(st.sampled_from(["next-unset", "init-from-inside", "next-from-outside"]))
    h = w.loop(draw(small_trips))
    if variant == "next-unset":
        pass
    elif variant == "init-from-inside":
        w.close(h)
        bad = w.layer("add_recurrence", Ref(h.it.ref), target=h.ref, dtype=FLOAT, shape=(2,),
                      scope=h.scope)
        w.close(attrs.evolve(h, rec=bad))
    else:
        w.close(h, w.constant(np.ones((2,), np.float32)))
    w.mark(w.output(h, h.rec, "LAST_VALUE"))
    return variant


@_family("structure/while-input")
def while_input_breaks(draw, w: Broken):
    variant = draw(st.sampled_from(["from-iterator", "from-outer-recurrence",
                                    "from-loop-output"]))
    n = draw(small_trips)
    if variant == "from-iterator":
        h = w.loop(n, limit="none")
        w.close(h)
        cond = w.elementwise(w.reduce_all(h.it), w.constant(np.zeros((), np.float32)),
                             "GREATER")
        w.call(h.ref, "add_trip_limit", Ref(cond.ref), Member(("TripLimit", "WHILE")),
               result=None)
        w.mark(w.output(h, h.rec, "LAST_VALUE"))
        return variant
    h = w.loop(n)
    w.close(h)
    c, cond = w.counter_while(h, n)  # a recurrence of the outer loop
    hi = w.inner(h)
    if variant == "from-outer-recurrence":
        w.call(hi.ref, "add_trip_limit", Ref(cond.ref), Member(("TripLimit", "WHILE")),
               result=None)
        w.mark(w.output(h, w.output(hi, hi.it)))
    else:
        # outer WHILE on the last value of an inner loop
        ic = w.layer("add_recurrence", Ref(c.ref), target=hi.ref, dtype=INT, shape=(),
                     scope=hi.scope)
        w.call(ic.layer, "set_input", 1, Ref(w.elementwise(ic, w.int_constant(1), "SUM").ref),
               result=None)
        last = w.output(hi, ic, "LAST_VALUE")
        cond2 = w.elementwise(last, w.int_constant(n + 1), "LESS")
        w.call(h.ref, "add_trip_limit", Ref(cond2.ref), Member(("TripLimit", "WHILE")),
               result=None)
        w.mark(w.output(h, h.rec, "LAST_VALUE"))
    return variant


@_family("structure/last-value")
def last_value_breaks(draw, w: Broken):
    variant = draw(st.sampled_from(["of-iterator", "of-map", "of-outer-recurrence"]))
    h = w.loop(draw(small_trips))
    nxt = w.close(h)
    if variant == "of-iterator":
        w.mark(w.output(h, h.it, "LAST_VALUE"))
    elif variant == "of-map":
        w.mark(w.output(h, nxt, "LAST_VALUE"))
    else:
        hi = w.inner(h)
        w.mark(w.output(h, w.output(hi, h.rec, "LAST_VALUE")))
    return variant


@_family("structure/length")
def length_breaks(draw, w: Broken):
    variant = draw(st.sampled_from(["unset", "not-constant", "float", "not-0d",
                                    "from-inside"]))
    h = w.loop(draw(small_trips))
    w.close(h)
    if variant == "unset":
        length = "unset"
    elif variant == "not-constant":
        length = w.input((), INT, np.array(h.n, np.int32))
    elif variant == "float":
        length = w.constant(np.array(h.n, np.float32))
    elif variant == "not-0d":
        length = w.constant(np.array([h.n, h.n], np.int32))
    else:
        c, _ = w.counter_while(h, h.n)
        length = c
    w.mark(w.output(h, h.it, length=length))
    return variant


@_family("structure/nesting")
def nesting_breaks(draw, w: Broken):
    """Two loops, each using a value defined inside the other."""
    variant = draw(st.sampled_from(["both-outputs", "mutual-inits", "back-edge-from-inner"]))
    a = w.loop(draw(small_trips))
    w.close(a)
    if variant == "back-edge-from-inner":
        # b iterates over a's stream; a's recurrence takes its next value from b's stream
        b = w.inner(a)
        rec = w.layer("add_recurrence", Ref(w.constant(np.zeros((), np.float32)).ref),
                      target=a.ref, dtype=FLOAT, shape=(), scope=a.scope)
        w.call(rec.layer, "set_input", 1, Ref(w.tanh(b.it).ref), result=None)
        w.mark(w.output(a, rec, "LAST_VALUE"))
        return variant
    b = w.loop(draw(small_trips))
    w.close(b)
    if variant == "both-outputs":
        # a layer reading both loops' streams, collected by both loops
        mixed = w.elementwise(a.it, b.it, "SUM")
        w.mark(w.output(a, mixed))
        w.mark(w.output(b, mixed))
        return variant
    # each loop carries in the other's iterator as a recurrence's initial value
    for this, other in ((a, b), (b, a)):
        rec = w.layer("add_recurrence", Ref(other.it.ref), target=this.ref, dtype=FLOAT,
                      shape=(2,), scope=this.scope)
        w.call(rec.layer, "set_input", 1, Ref(w.tanh(rec).ref), result=None)
        w.mark(w.output(this, rec, "LAST_VALUE"))
    return variant


@_family("recurrence/def")
def recurrence_def_breaks(draw, w: Broken):
    """A recurrence whose next value differs from its initial value in shape or dtype."""
    variant = draw(st.sampled_from(["shape", "dtype"]))
    h = w.loop(draw(small_trips))
    if variant == "shape":
        w.close(h, w.reduce_all(h.it))
    else:
        w.close(h, w.cast(h.it, INT))
    w.mark(w.output(h, h.rec, "LAST_VALUE"))
    return variant


@_family("profile/tensorrt-dtypes")
def dtype_breaks(draw, w: Broken):
    """A loop value that is neither FP32/FP16 nor bool/int32/int64."""
    variant = draw(st.sampled_from(["float64", "int8", "uint8"]))
    h = w.loop(draw(small_trips))
    w.close(h)
    odd = w.cast(h.it, variant)
    w.mark(w.output(h, odd))
    return variant


# runtime rules: the network builds; forcing the elements breaks the rule

@_family("iterator/bounds")
def bounds_breaks(draw, w: Broken):
    """More trips than the iterated axis has elements, and the iterator is read."""
    h = w.loop(draw(small_trips))
    w.close(h)
    short = w.input((h.n - 1, 2))  # one element short of the n trips
    it = w.layer("add_iterator", Ref(short.ref), target=h.ref, axis=0,
                 reverse=draw(st.booleans()), dtype=FLOAT, shape=(2,), scope=h.scope)
    w.mark(w.output(h, it))
    return "short-axis"


@_family("output/concat")
def concat_length_breaks(draw, w: Broken):
    """A CONCATENATE/REVERSE length smaller than the trip count."""
    n = draw(small_trips)
    h = w.loop(n)
    w.close(h)
    kind = draw(st.sampled_from(["CONCATENATE", "REVERSE"]))
    w.mark(w.output(h, h.it, kind, length=w.int_constant(draw(st.integers(0, n - 1)))))
    return kind.lower()


@_family("trip/count")
def count_breaks(draw, w: Broken):
    """A COUNT that is negative (TensorRT profile: an error, A4) or not a 0-D int."""
    variant = draw(st.sampled_from(["negative", "float", "vector"]))
    h = w.loop(1, limit="none")
    w.close(h)
    t = {"negative": lambda: w.int_constant(-draw(st.integers(1, 3))),
         "float": lambda: w.constant(np.array(1.0, np.float32)),
         "vector": lambda: w.constant(np.array([1], np.int32))}[variant]()
    w.call(h.ref, "add_trip_limit", Ref(t.ref), Member(("TripLimit", "COUNT")), result=None)
    w.mark(w.output(h, h.rec, "LAST_VALUE"))
    return variant


STRUCTURE_RULES = ("structure/acyclic", "structure/exit", "structure/limits",
                   "structure/recurrence", "structure/while-input", "structure/last-value",
                   "structure/length", "structure/nesting", "recurrence/def",
                   "profile/tensorrt-dtypes")


def invalid_programs(rules=None):
    """`InvalidProgram`s, one family per rule (all registered families by default)."""
    rules = tuple(FAMILIES) if rules is None else tuple(rules)
    return st.one_of([FAMILIES[r]() for r in rules])


def invalid_networks(rules=None):
    """(build, rule) pairs: `build()` returns (network, feeds) and building or evaluating
    raises a `LazyLoopError` whose `.rule` is `rule`. `build.__self__` is the
    `InvalidProgram`, with its recipe."""
    return invalid_programs(rules).map(lambda p: (p.build, p.rule))


__all__ = ["Ref", "Member", "Array", "Call", "SetAttr", "replay", "source", "Program",
           "InvalidProgram", "networks", "invalid_networks", "invalid_programs", "FAMILIES",
           "STRUCTURE_RULES", "KNOWN_CORE_BUGS", "LoopPlan", "loop_plans", "activations",
           "float_arrays"]

# The dialect-level programs (ONNX Loop in every mode, Scan 8 and 9+, OpenVINO Loop-5 with every
# port kind) live in `lazyloop.strategies.dialects`; they are part of this public module too.
from .dialects import (DialectProgram, dialect_programs, onnx_loops,  # noqa: E402
                                 onnx_scan8s, onnx_scans, openvino_loops)

__all__ += ["DialectProgram", "dialect_programs", "onnx_loops", "onnx_scans", "onnx_scan8s",
            "openvino_loops"]
