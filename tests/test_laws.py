"""Laws the specification states, checked on random inputs and random programs.

Expected values come from numpy on the inputs (the iterated array itself, `np.flip`, the
initial value) or from `Eager`, a small eager interpreter written here from TensorRT's formal
semantics with plain Python loops -- never from lazyloop itself.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import lazyloop as ll
from lazyloop.core.plan import compile_network
from lazyloop.strategies import invalid_networks, networks
from nets import ENGINE_MODES, on_engine

E = ll.ElementWiseOperation
CONCATENATE, REVERSE, LAST_VALUE = (ll.LoopOutput.CONCATENATE, ll.LoopOutput.REVERSE,
                                    ll.LoopOutput.LAST_VALUE)

shapes = hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4)
limits = st.sampled_from(["count", "while", "both"])


def floats(shape):
    return hnp.arrays(np.float32, shape, elements=st.floats(-2, 2, width=32))


def const(net, value, dtype=None):
    value = np.asarray(value, dtype=dtype)
    return net.add_constant(value.shape, value).get_output(0)


def limit(net, loop, n, kind):
    """Make `loop` run n trips with a COUNT, a WHILE on a counter, or both (the WHILE one
    trip later than the COUNT, so the COUNT stops it)."""
    if kind in ("count", "both"):
        loop.add_trip_limit(const(net, n, np.int32), ll.TripLimit.COUNT)
    if kind in ("while", "both"):
        c = loop.add_recurrence(const(net, 0, np.int32))
        c.set_input(1, net.add_elementwise(c.get_output(0), const(net, 1, np.int32),
                                           E.SUM).get_output(0))
        bound = const(net, n + (kind == "both"), np.int32)
        loop.add_trip_limit(net.add_elementwise(c.get_output(0), bound, E.LESS).get_output(0),
                            ll.TripLimit.WHILE)


def scan(x, axis, reverse, kind, limit_kind="count", length=None):
    """x -> Iterator(axis, reverse) -> loop output `kind` on `axis` of `length`."""
    net = ll.Network()
    t = net.add_input("x", ll.float32, x.shape)
    n = x.shape[axis]
    loop = net.add_loop()
    limit(net, loop, n, limit_kind)
    it = loop.add_iterator(t, axis=axis, reverse=reverse).get_output(0)
    out = loop.add_loop_output(it, kind, axis)
    out.set_input(1, const(net, n if length is None else length, np.int32))
    net.mark_output(out.get_output(0))
    result = ll.run(net, {"x": x})
    name = out.get_output(0).name
    return result.outputs[name], result.defined[name]


# ------------------------------------------------------------------------------------------
# Iterators and outputs are inverse to each other
# ------------------------------------------------------------------------------------------

@given(st.data(), shapes, limits)
def test_iterate_then_concatenate_is_identity(data, shape, limit_kind):
    # rule: iterator/forward, output/concat -- length = count = extent of the axis
    x = data.draw(floats(shape))
    axis = data.draw(st.integers(0, len(shape) - 1))
    value, defined = scan(x, axis, False, CONCATENATE, limit_kind)
    np.testing.assert_array_equal(value, x)
    assert defined.all()


@given(st.data(), shapes, limits)
def test_reverse_iterator_then_reverse_output_is_identity(data, shape, limit_kind):
    # rule: iterator/reverse, output/reverse
    x = data.draw(floats(shape))
    axis = data.draw(st.integers(0, len(shape) - 1))
    value, _ = scan(x, axis, True, REVERSE, limit_kind)
    np.testing.assert_array_equal(value, x)


@given(st.data(), shapes, st.booleans())
def test_one_reversal_flips_the_axis(data, shape, reverse_iterator):
    # rule: iterator/reverse, output/reverse -- a reversed iterator or a REVERSE output alone
    x = data.draw(floats(shape))
    axis = data.draw(st.integers(0, len(shape) - 1))
    kind = CONCATENATE if reverse_iterator else REVERSE
    value, _ = scan(x, axis, reverse_iterator, kind)
    np.testing.assert_array_equal(value, np.flip(x, axis))


@given(st.data(), shapes, st.integers(1, 3), st.sampled_from([CONCATENATE, REVERSE]))
def test_padding_is_undefined_and_follows_the_values(data, shape, pad, kind):
    # rule: output/concat, output/reverse -- length n + pad: the n values (reversed for
    # REVERSE, A1 default "padding-after"), then pad undefined positions
    x = data.draw(floats(shape))
    axis = data.draw(st.integers(0, len(shape) - 1))
    n = shape[axis]
    value, defined = scan(x, axis, False, kind, length=n + pad)
    assert value.shape == shape[:axis] + (n + pad,) + shape[axis + 1:]
    head = np.take(value, range(n), axis=axis)
    np.testing.assert_array_equal(head, x if kind is CONCATENATE else np.flip(x, axis))
    assert np.take(defined, range(n), axis=axis).all()
    assert not np.take(defined, range(n, n + pad), axis=axis).any()


@given(st.data(), hnp.array_shapes(min_dims=0, max_dims=2, min_side=1, max_side=3), limits,
       st.integers(0, 2))
def test_zero_trips_give_the_initial_value(data, shape, limit_kind, length):
    # rule: output/last -- 0 trips: LAST_VALUE of a recurrence is its initial value;
    # rule: output/concat -- and a CONCATENATE of length L is L undefined positions
    init = data.draw(floats(shape))
    net = ll.Network()
    t = net.add_input("init", ll.float32, shape)
    loop = net.add_loop()
    limit(net, loop, 0, limit_kind)
    rec = loop.add_recurrence(t)
    nxt = net.add_activation(rec.get_output(0), ll.ActivationType.TANH).get_output(0)
    rec.set_input(1, nxt)
    last = loop.add_loop_output(rec.get_output(0), LAST_VALUE).get_output(0)
    cat = loop.add_loop_output(nxt, CONCATENATE, 0)
    cat.set_input(1, const(net, length, np.int32))
    net.mark_output(last)
    net.mark_output(cat.get_output(0))
    result = ll.run(net, {"init": init})
    np.testing.assert_array_equal(result.outputs[last.name], init)
    assert result.outputs[cat.get_output(0).name].shape == (length,) + shape
    assert not result.defined[cat.get_output(0).name].any()
    assert not [e for e in result.trace if e.stream == nxt.name]  # rule: laziness/dead


def test_conditional_with_invariant_branches_varies_per_trip():
    # rule: stream/map -- the condition is a stream of the loop (0 < 1, 1 < 1, 2 < 1), the
    # branches are invariants 10 and 20: per trip the taken branch, [10, 20, 20]
    net = ll.Network()
    three, one = const(net, 3, np.int32), const(net, 1, np.int32)
    loop = net.add_loop()
    loop.add_trip_limit(three, ll.TripLimit.COUNT)
    c = loop.add_recurrence(const(net, 0, np.int32))
    c.set_input(1, net.add_elementwise(c.get_output(0), one, E.SUM).get_output(0))
    cond = net.add_if_conditional()
    cond.set_condition(net.add_elementwise(c.get_output(0), one, E.LESS).get_output(0))
    a = cond.add_input(const(net, 10.0, np.float32)).get_output(0)
    b = cond.add_input(const(net, 20.0, np.float32)).get_output(0)
    out = loop.add_loop_output(cond.add_output(a, b).get_output(0), CONCATENATE, 0)
    out.set_input(1, three)
    net.mark_output(out.get_output(0))
    value = list(ll.evaluate(net, {}).values())[0]
    np.testing.assert_array_equal(value, np.array([10, 20, 20], np.float32))


# ------------------------------------------------------------------------------------------
# An eager interpreter of TensorRT's formal semantics, for replayed recipes
# ------------------------------------------------------------------------------------------

class Names:
    """The `api` the recipes are replayed with: every enum member and dtype is its name
    (`api.TripLimit.COUNT` is "COUNT", `api.float32` is "float32")."""

    def __getattr__(self, name):
        return Members() if name[0].isupper() else name


class Members:
    def __getattr__(self, name):
        return name


class Partial:
    """An eager value with undefined positions (only loop outputs with padding have them)."""

    def __init__(self, value, mask):
        self.value, self.mask = value, mask


class Node:
    """A tensor of the eager network, and the layer that makes it."""

    def __init__(self, layer, inputs, **params):
        object.__setattr__(self, "layer", layer)
        object.__setattr__(self, "inputs", list(inputs))
        object.__setattr__(self, "params", dict(params))
        object.__setattr__(self, "name", None)

    def get_output(self, index):
        return self

    def set_input(self, index, tensor):
        while len(self.inputs) <= index:
            self.inputs.append(None)
        self.inputs[index] = tensor

    def __setattr__(self, key, value):  # alpha, beta, reshape_dims, name
        if key == "name":
            object.__setattr__(self, key, value)
        else:
            self.params[key] = value


class EagerLoop:
    def __init__(self):
        self.count = self.cond = None
        self.recurrences, self.outputs = [], []

    def add_trip_limit(self, tensor, kind):
        if kind == "COUNT":
            self.count = tensor
        else:
            self.cond = tensor

    def add_iterator(self, tensor, axis=0, reverse=False):
        return Node("iterator", [tensor], loop=self, axis=axis, reverse=reverse)

    def add_recurrence(self, tensor):
        node = Node("recurrence", [tensor, None], loop=self)
        self.recurrences.append(node)
        return node

    def add_loop_output(self, tensor, kind, axis=0):
        node = Node("output", [tensor, None], loop=self, kind=kind, axis=axis)
        self.outputs.append(node)
        return node


class EagerIf:
    def set_condition(self, tensor):
        self.condition = tensor

    def add_input(self, tensor):
        return Node("identity", [tensor])

    def add_output(self, then, orelse):
        return Node("if", [self.condition, then, orelse])


def activation(kind, x, alpha, beta):
    f = {"RELU": lambda: np.maximum(x, 0), "SIGMOID": lambda: 1 / (1 + np.exp(-x)),
         "TANH": lambda: np.tanh(x), "SOFTSIGN": lambda: x / (1 + np.abs(x)),
         "LEAKY_RELU": lambda: np.where(x >= 0, x, alpha * x),
         "ELU": lambda: np.where(x >= 0, x, alpha * (np.exp(x) - 1)),
         "CLIP": lambda: np.clip(x, alpha, beta),
         "HARD_SIGMOID": lambda: np.clip(alpha * x + beta, 0, 1),
         "SCALED_TANH": lambda: alpha * np.tanh(beta * x)}[kind]
    return np.asarray(f()).astype(x.dtype)


def matmul(a, b, op_a, op_b):
    if op_b == "TRANSPOSE":
        b = np.swapaxes(b, -1, -2)
    if op_a == "VECTOR":
        return np.matmul(a[..., None, :], b)[..., 0, :]
    return np.matmul(a, b)


BINARY = {"SUM": np.add, "SUB": np.subtract, "PROD": np.multiply, "MAX": np.maximum,
          "MIN": np.minimum, "LESS": np.less, "GREATER": np.greater, "EQUAL": np.equal}
UNARY = {"ABS": np.abs, "NEG": np.negative, "SIN": np.sin, "COS": np.cos, "ATAN": np.arctan,
         "FLOOR": np.floor, "CEIL": np.ceil, "SIGN": np.sign, "ROUND": np.rint,
         "NOT": np.logical_not}


class Eager:
    """TensorRT's network-definition surface; `run(feeds)` interprets the network eagerly:
    each loop runs trip by trip in plain Python, trip i computing in its own frame what the
    WHILE condition, the CONCATENATE/REVERSE inputs and the recurrences' next values need."""

    def __init__(self):
        self.marked = []

    # -- the builder surface ------------------------------------------------------------------
    def add_input(self, name, dtype, shape):
        node = Node("input", [], dtype=dtype, shape=shape)
        node.name = name
        return node

    def add_constant(self, shape, weights):
        return Node("const", [], value=np.asarray(weights).reshape(shape))

    def add_loop(self):
        return EagerLoop()

    def add_if_conditional(self):
        return EagerIf()

    def add_elementwise(self, a, b, op):
        return Node("elementwise", [a, b], op=op)

    def add_unary(self, x, op):
        return Node("unary", [x], op=op)

    def add_activation(self, x, kind):
        return Node("activation", [x], kind=kind, alpha=0.0, beta=0.0)

    def add_matrix_multiply(self, a, op_a, b, op_b):
        return Node("matmul", [a, b], op_a=op_a, op_b=op_b)

    def add_reduce(self, x, op, axes, keep_dims):
        return Node("reduce", [x], axes=axes, keep_dims=keep_dims)

    def add_shuffle(self, x):
        return Node("shuffle", [x], reshape_dims=None)

    def add_cast(self, x, dtype):
        return Node("cast", [x], dtype=dtype)

    def add_select(self, c, a, b):
        return Node("select", [c, a, b])

    def mark_output(self, tensor):
        self.marked.append(tensor)

    # -- interpretation -----------------------------------------------------------------------
    def run(self, feeds):
        self.feeds = feeds
        root = Frame(None, 0, None, {})
        return {t.name: self.value(t, root) for t in self.marked}

    def value(self, t, frame):
        key = id(t)
        if key not in frame.memo:
            frame.memo[key] = self.compute(t, frame)
        return frame.memo[key]

    def plain(self, t, frame):
        v = self.value(t, frame)
        assert not isinstance(v, Partial), "the generator feeds padding only to outputs"
        return v

    def compute(self, t, frame):
        p, ins = t.params, t.inputs
        arg = lambda k: self.plain(ins[k], frame)  # noqa: E731
        if t.layer == "input":
            return self.feeds[t.name]
        if t.layer == "const":
            return p["value"]
        if t.layer == "iterator":
            f = frame.find(p["loop"])
            whole = self.plain(ins[0], f.parent)
            extent = whole.shape[p["axis"]]
            assert f.index < extent, "the generator keeps iterators in bounds"
            index = extent - 1 - f.index if p["reverse"] else f.index
            return np.take(whole, index, axis=p["axis"])
        if t.layer == "recurrence":
            return frame.find(p["loop"]).carried[id(t)]
        if t.layer == "output":
            runs = frame.memo.setdefault(("runs", id(p["loop"])), {})
            if not runs:
                runs.update(self.run_loop(p["loop"], frame))
            return runs[id(t)]
        if t.layer == "if":
            taken = ins[1] if bool(arg(0)) else ins[2]
            return self.plain(taken, frame)
        if t.layer == "identity":
            return arg(0)
        if t.layer == "elementwise":
            return BINARY[p["op"]](arg(0), arg(1))
        if t.layer == "unary":
            return UNARY[p["op"]](arg(0))
        if t.layer == "activation":
            return activation(p["kind"], arg(0), p["alpha"], p["beta"])
        if t.layer == "matmul":
            return matmul(arg(0), arg(1), p["op_a"], p["op_b"])
        if t.layer == "reduce":
            x = arg(0)
            axes = tuple(i for i in range(x.ndim) if p["axes"] >> i & 1)
            return np.sum(x, axis=axes, keepdims=p["keep_dims"]).astype(x.dtype)
        if t.layer == "shuffle":
            return np.reshape(arg(0), p["reshape_dims"])
        if t.layer == "cast":
            return arg(0).astype(p["dtype"])
        if t.layer == "select":
            return np.where(arg(0), arg(1), arg(2))
        raise AssertionError(f"no eager rule for {t.layer}")

    def run_loop(self, loop, parent):
        """One run of `loop` in frame `parent`: {id(output node): value}."""
        count = None if loop.count is None else int(self.plain(loop.count, parent))
        carried = {id(r): self.plain(r.inputs[0], parent) for r in loop.recurrences}
        stacked = [o for o in loop.outputs if o.params["kind"] != "LAST_VALUE"]
        elements = {id(o): [] for o in stacked}
        i = 0
        while count is None or i < count:
            frame = Frame(loop, i, parent, carried)
            if loop.cond is not None and not bool(self.plain(loop.cond, frame)):
                break
            for o in stacked:
                elements[id(o)].append(self.value(o.inputs[0], frame))
            carried = {id(r): self.plain(r.inputs[1], frame) for r in loop.recurrences}
            i += 1
            assert i < 100, "generated loops terminate"
        last = Frame(loop, i, parent, carried)
        result = {}
        for o in loop.outputs:
            if o.params["kind"] == "LAST_VALUE":
                result[id(o)] = self.plain(o.inputs[0], last)
            else:
                length = int(o.inputs[1].params["value"])
                result[id(o)] = stack(elements[id(o)], length, o.params["axis"],
                                      o.params["kind"] == "REVERSE", self.probe(o.inputs[0]))
        return result

    def probe(self, t):
        """Zeros of the element type of `t` (shape and dtype), by running its layers on zeros."""
        p = t.params
        if t.layer == "input":
            return np.zeros(p["shape"], p["dtype"])
        if t.layer == "const":
            return np.zeros_like(p["value"])
        if t.layer == "iterator":
            whole = self.probe(t.inputs[0])
            return np.zeros(np.delete(whole.shape, p["axis"]), whole.dtype)
        if t.layer in ("recurrence", "identity"):
            return self.probe(t.inputs[0])
        if t.layer == "if":
            return self.probe(t.inputs[1])
        if t.layer == "output":
            element = self.probe(t.inputs[0])
            if p["kind"] == "LAST_VALUE":
                return element
            length = int(t.inputs[1].params["value"])
            return np.zeros(np.insert(element.shape, p["axis"], length).astype(int), element.dtype)
        zeros = [Node("const", [], value=self.probe(i)) for i in t.inputs]
        return np.asarray(self.compute(Node(t.layer, zeros, **p), Frame(None, 0, None, {})))


class Frame:
    """One trip of one run of a loop (the root frame: outside every loop)."""

    def __init__(self, loop, index, parent, carried):
        self.loop, self.index, self.parent, self.carried = loop, index, parent, carried
        self.memo = {}

    def find(self, loop):
        frame = self
        while frame.loop is not loop:
            frame = frame.parent
        return frame


def stack(elements, length, axis, reverse, zeros):
    """n elements on a new axis, padded to `length` with undefined positions; REVERSE puts
    the n values in reverse order, then the padding (A1 default)."""
    values = [e.value if isinstance(e, Partial) else e for e in elements]
    masks = [e.mask if isinstance(e, Partial) else np.ones(np.shape(e), bool) for e in elements]
    if reverse:
        values, masks = values[::-1], masks[::-1]
    shape = (length,) + zeros.shape
    out = np.zeros(shape, zeros.dtype)
    mask = np.zeros(shape, bool)
    for j, (v, m) in enumerate(zip(values, masks)):
        out[j], mask[j] = v, m
    out, mask = np.moveaxis(out, 0, axis), np.moveaxis(mask, 0, axis)
    return out if mask.all() else Partial(out, mask)


def eager_run(program):
    net = Eager()
    program.build(net, Names())
    return net.run(program.feeds)


# ------------------------------------------------------------------------------------------
# Laws on random programs
# ------------------------------------------------------------------------------------------

@given(networks())
def test_lazy_evaluation_equals_eager_interpretation(program):
    # rule: trip/count, trip/while, trip/both, iterator/forward, iterator/reverse,
    # recurrence/def, output/last, output/concat, output/reverse, stream/invariant,
    # stream/map, structure/nesting -- on every defined element; padding is undefined
    result = ll.run(program.net, program.feeds)
    expected = eager_run(program)
    for name, want in expected.items():
        value, mask = (want.value, want.mask) if isinstance(want, Partial) else (
            want, np.ones(np.shape(want), bool))
        got = result.outputs[name]
        assert got.shape == value.shape and got.dtype == value.dtype, name
        np.testing.assert_array_equal(result.defined[name], mask, err_msg=name)
        np.testing.assert_allclose(got[mask], value[mask], rtol=1e-6, atol=1e-6, err_msg=name)


@given(networks())
def test_every_element_is_forced_at_most_once(program):
    # rule: stream/memo -- no (loop, stream, index, activation) twice in the trace
    events = [(e.loop, e.stream, e.index, e.activation)
              for e in ll.run(program.net, program.feeds).trace]
    assert len(events) == len(set(events))


def run_fast(plan, feeds, mode="fast"):
    """Evaluate on the engine in `mode`: (output values, the (stream, index) pairs the
    schedule forced, the loops it ran)."""
    values, machine = on_engine(plan, feeds, mode=mode)
    ran = set(machine.scheduled_loops)
    return values, machine.record, ran


@pytest.mark.parametrize("mode", ENGINE_MODES)
@given(program=networks())
def test_fast_path_equals_the_reference(mode, program):
    # rule: laziness/dead, laziness/modes -- in every mode of the engine the per-trip
    # schedule returns the reference evaluator's values and defined masks, and forces
    # exactly the elements it forces, in every loop it runs
    plan = compile_network(program.net)
    feeds = program.feeds
    reference = ll.run(plan, feeds)
    fast = ll.evaluate(plan, feeds, mode=mode)
    untraced = ll.run(plan, feeds, trace=False, mode=mode)  # with the defined masks
    values, record, ran = run_fast(plan, feeds, mode)
    for name, value in reference.outputs.items():
        np.testing.assert_array_equal(fast[name], value, err_msg=name)
        np.testing.assert_array_equal(values[name], value, err_msg=name)
        np.testing.assert_array_equal(untraced.outputs[name], value, err_msg=name)
        np.testing.assert_array_equal(untraced.defined[name], reference.defined[name],
                                      err_msg=name)
    for loop in ran:  # a nested loop's schedule also says which outer element it ran for
        forced = [r if len(r) == 3 else r + ((),) for r in record if plan.nodes[r[0]].scope == loop]
        assert len(forced) == len(set(forced))  # rule: stream/memo
        assert set(forced) == {(e.stream, e.index, e.activation) for e in reference.trace
                               if e.loop == loop}


def test_the_fast_path_law_is_not_vacuous():
    # rule: laziness/dead -- the schedule does run on generated programs
    ran = []

    @settings(max_examples=60, database=None, derandomize=True, deadline=None)
    @given(networks())
    def collect(program):
        plan = compile_network(program.net)
        ran.extend(run_fast(plan, program.feeds)[2])

    collect()
    assert len(ran) >= 3


@given(networks())
def test_evaluation_leaves_feeds_alone(program):
    # rule: stream/memo -- evaluation is pure: feeds are not written, results repeat
    feeds = program.feeds
    before = {k: v.copy() for k, v in feeds.items()}
    first = ll.evaluate(program.net, feeds)
    second = ll.evaluate(program.net, feeds)
    for k in feeds:
        np.testing.assert_array_equal(feeds[k], before[k])
    for k in first:
        np.testing.assert_array_equal(first[k], second[k])


@given(invalid_networks())
def test_invalid_networks_raise_their_rule(case):
    # rule: structure/acyclic, structure/exit, structure/limits, structure/recurrence,
    # structure/while-input, structure/last-value, structure/length, structure/nesting,
    # recurrence/def, profile/tensorrt-dtypes, iterator/bounds, output/concat, trip/count
    build, rule = case
    with pytest.raises(ll.LazyLoopError) as info:
        net, feeds = build()
        ll.run(net, feeds)
    assert info.value.rule == rule, f"{build.__self__!r}\nraised {info.value}"


# ------------------------------------------------------------------------------------------
# Core bugs these laws found, reduced by hand; fixed since, kept as regression tests
# ------------------------------------------------------------------------------------------

# regression (a core bug these laws found, now fixed): a layer whose input is set to its own
# output (layer.set_input(1, layer.get_output(0))) recurses in Layer._changed (its types are
# reset, then inferred from themselves) and RecursionError escapes instead of StructureError
# [structure/acyclic]
def test_self_cycle_is_refused_as_acyclic():
    # rule: structure/acyclic
    net = ll.Network()
    x = net.add_input("x", ll.float32, (2,))
    layer = net.add_elementwise(x, x, E.SUM)
    with pytest.raises(ll.LazyLoopError) as info:
        layer.set_input(1, layer.get_output(0))
        net.mark_output(layer.get_output(0))
        ll.run(net, {"x": np.zeros(2, np.float32)})
    assert info.value.rule == "structure/acyclic"


# regression (a core bug these laws found, now fixed): nesting is inferred from boundary
# layers only; inner loop B whose only use of outer loop A is a body layer reading A's
# iterator (an invariant in B) is refused with [structure/nesting] ('not nested in one
# another'); TensorRT: B uses a value defined inside A, so B is nested in A
def test_inner_loop_reading_outer_iterator_in_its_body():
    # rule: structure/nesting, stream/invariant -- A over xa = [1, 2], B over xb = [10, 20, 30],
    # B's body a + b, stacked by B then by A: [[11, 21, 31], [12, 22, 32]]
    net = ll.Network()
    xa = net.add_input("xa", ll.float32, (2,))
    xb = net.add_input("xb", ll.float32, (3,))
    two, three = const(net, 2, np.int32), const(net, 3, np.int32)
    outer = net.add_loop()
    outer.add_trip_limit(two, ll.TripLimit.COUNT)
    a = outer.add_iterator(xa).get_output(0)
    inner = net.add_loop()
    inner.add_trip_limit(three, ll.TripLimit.COUNT)
    b = inner.add_iterator(xb).get_output(0)
    rows = inner.add_loop_output(net.add_elementwise(a, b, E.SUM).get_output(0), CONCATENATE, 0)
    rows.set_input(1, three)
    table = outer.add_loop_output(rows.get_output(0), CONCATENATE, 0)
    table.set_input(1, two)
    net.mark_output(table.get_output(0))
    value = ll.evaluate(net, {"xa": np.array([1, 2], np.float32),
                              "xb": np.array([10, 20, 30], np.float32)})[table.get_output(0).name]
    np.testing.assert_array_equal(value, np.array([[11, 21, 31], [12, 22, 32]], np.float32))


# regression (a core bug these laws found, now fixed): an inner loop with no iterator or
# recurrence, whose CONCATENATE output reads the outer loop's iterator, is not inferred
# nested and is refused with [structure/exit]; TensorRT: it uses a value defined inside the
# outer loop, so it is nested in it
def test_inner_loop_without_streams_outputs_an_outer_stream():
    # rule: structure/nesting, stream/invariant -- x = [[0, 1, 2], [3, 4, 5]]; per outer trip
    # the inner loop (1 trip) stacks the row once: [[[0, 1, 2]], [[3, 4, 5]]]
    net = ll.Network()
    x = net.add_input("x", ll.float32, (2, 3))
    two, one = const(net, 2, np.int32), const(net, 1, np.int32)
    outer = net.add_loop()
    outer.add_trip_limit(two, ll.TripLimit.COUNT)
    row = outer.add_iterator(x).get_output(0)
    inner = net.add_loop()
    inner.add_trip_limit(one, ll.TripLimit.COUNT)
    once = inner.add_loop_output(row, CONCATENATE, 0)
    once.set_input(1, one)
    rows = outer.add_loop_output(once.get_output(0), CONCATENATE, 0)
    rows.set_input(1, two)
    net.mark_output(rows.get_output(0))
    x_value = np.arange(6, dtype=np.float32).reshape(2, 3)
    value = ll.evaluate(net, {"x": x_value})[rows.get_output(0).name]
    np.testing.assert_array_equal(value, x_value[:, None, :])


# regression (a core bug these laws found, now fixed) (schedule.py): in a loop with COUNT and
# WHILE limits that the COUNT stops, the per-trip schedule computes at trip n-1 the elements
# the WHILE input would need at trip n, which trip/both never forces: ll.evaluate raises
# IteratorOutOfBounds where ll.run returns [0.] (and in general forces more than the
# reference: laziness/dead)
def test_schedule_does_not_force_past_a_count_that_stops_a_while_loop():
    # rule: trip/both, laziness/dead -- COUNT 1, WHILE r < 100 with r = <0, x[0], ...> and x
    # empty: trip 0 runs (0 < 100), then i == count stops the loop; x[0] is never needed,
    # so CONCATENATE(r, 1) = [0.] without an error
    net = ll.Network()
    x = net.add_input("x", ll.float32, (0,))
    loop = net.add_loop()
    loop.add_trip_limit(const(net, 1, np.int32), ll.TripLimit.COUNT)
    r = loop.add_recurrence(const(net, 0.0, np.float32))
    r.set_input(1, loop.add_iterator(x).get_output(0))
    below = net.add_elementwise(r.get_output(0), const(net, 100.0, np.float32), E.LESS)
    loop.add_trip_limit(below.get_output(0), ll.TripLimit.WHILE)
    out = loop.add_loop_output(r.get_output(0), CONCATENATE, 0)
    out.set_input(1, const(net, 1, np.int32))
    net.mark_output(out.get_output(0))
    feeds = {"x": np.zeros((0,), np.float32)}
    np.testing.assert_array_equal(ll.run(net, feeds).outputs[out.get_output(0).name], [0.0])
    np.testing.assert_array_equal(ll.evaluate(net, feeds)[out.get_output(0).name], [0.0])


# regression (a core bug these laws found, now fixed) (plan.infer_nesting): nesting is not
# transitive. C is nested in B (its recurrence starts from B's iterator) and B in A (its
# recurrence starts from A's iterator), but loop_parents(C) = {B} only; a layer of C reading
# A's stream that does not flow into C's outputs (here a dead one) is refused with
# [structure/nesting] ('not nested in one another'). TensorRT: C is inside B, so inside A.
# Reached by networks(max_depth=2)
def test_nesting_is_transitive():
    # rule: structure/nesting, laziness/dead -- x = [0.5]; A, B, C one trip each; c = <x[0]>
    # stacked by C, B and A: [[[0.5]]]; c + a is never read
    net = ll.Network()
    x = net.add_input("x", ll.float32, (1,))
    one = const(net, 1, np.int32)
    loops = []
    for _ in range(3):
        loops.append(net.add_loop())
        loops[-1].add_trip_limit(one, ll.TripLimit.COUNT)
    A, B, C = loops
    a = A.add_iterator(x).get_output(0)
    b = B.add_iterator(x).get_output(0)          # a stream of B over a network input
    carry_a = B.add_recurrence(a)                # B reads A's stream: B is nested in A
    carry_a.set_input(1, net.add_activation(carry_a.get_output(0),
                                            ll.ActivationType.TANH).get_output(0))
    c = C.add_recurrence(b)                      # C reads B's stream: C is nested in B
    c.set_input(1, net.add_activation(c.get_output(0), ll.ActivationType.TANH).get_output(0))
    net.add_elementwise(c.get_output(0), a, E.SUM)  # C reads A's stream (nobody reads this)
    out = c.get_output(0)
    for loop in (C, B, A):
        layer = loop.add_loop_output(out, CONCATENATE, 0)
        layer.set_input(1, one)
        out = layer.get_output(0)
    net.mark_output(out)
    value = ll.evaluate(net, {"x": np.array([0.5], np.float32)})[out.name]
    np.testing.assert_array_equal(value, np.array([[[0.5]]], np.float32))


# regression (a core bug these laws found, now fixed): the output of a nested loop whose
# source reads nothing of the outer loop was placed outside the outer loop, so an outer
# recurrence taking it as its next value was refused with [structure/recurrence]
def test_nested_loop_output_is_a_stream_of_the_outer_loop():
    # rule: structure/nesting, structure/recurrence, output/last -- B is nested in A (its
    # recurrence starts from A's iterator); q = <0, 1> in B's one trip, so B's LAST_VALUE(q)
    # is 1 on each of A's two trips; A's r = <0, 1, 1> and LAST_VALUE(r) = 1
    net = ll.Network()
    x = net.add_input("x", ll.float32, (2,))
    one, two = const(net, 1, np.int32), const(net, 2, np.int32)
    outer = net.add_loop()
    outer.add_trip_limit(two, ll.TripLimit.COUNT)
    a = outer.add_iterator(x).get_output(0)
    inner = net.add_loop()
    inner.add_trip_limit(one, ll.TripLimit.COUNT)
    carried = inner.add_recurrence(a)
    carried.set_input(1, net.add_activation(carried.get_output(0),
                                            ll.ActivationType.TANH).get_output(0))
    q = inner.add_recurrence(const(net, 0.0, np.float32))
    q.set_input(1, net.add_elementwise(q.get_output(0), const(net, 1.0, np.float32),
                                       E.SUM).get_output(0))
    r = outer.add_recurrence(const(net, 0.0, np.float32))
    r.set_input(1, inner.add_loop_output(q.get_output(0), LAST_VALUE).get_output(0))
    out = outer.add_loop_output(r.get_output(0), LAST_VALUE).get_output(0)
    net.mark_output(out)
    value = ll.evaluate(net, {"x": np.array([1.0, 2.0], np.float32)})[out.name]
    np.testing.assert_array_equal(value, np.array(1.0, np.float32))
