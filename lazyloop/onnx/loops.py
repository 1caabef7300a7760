"""ONNX Loop and Scan lowered onto core loops (DESIGN §3; spec/30-onnx-lowering.md).

One helper, `CoreLoop`, builds what Loop, Scan 9+ and Scan 8 share: carried values as
recurrences returned by LAST_VALUE, per-trip outputs stacked by CONCATENATE/REVERSE, a body
graph lowered with its inputs bound to streams. The dialects differ only in how trips are
limited and what the body's inputs are:

- `onnx/loop`  — COUNT(M), WHILE over a recurrence of the condition, an iteration number;
- `onnx/scan9` — COUNT = the scan inputs' common length, iterators on any axis/direction;
- `onnx/scan8` — an outer loop over the batch, an inner loop of sequence_lens[b] trips whose
                 outputs are padded (undefined) to the longest sequence.
"""
from __future__ import annotations

from typing import List, Optional

import numpy as np
import onnx

from ..core.enums import ElementWiseOperation, LoopOutput, TripLimit
from ..core.errors import EvaluationError, ModelError, UnsupportedError
from ..core.types import OpaqueType, TensorType
from ..core.undefined import Partial
from .lowering import (Lowering, Scope, add_constant, as_scalar_bool, graph_attribute,
                    graph_outputs, graph_types, lower_if, lower_initializers, lower_nodes,
                    node_tag)
from .types import from_ll, to_ll


def attr(node, name, default=None):
    for a in node.attribute:
        if a.name == name:
            return onnx.helper.get_attribute_value(a)
    return default


class CoreLoop:
    """One core loop built for an ONNX Loop or Scan node (or for Scan 8's batch)."""

    def __init__(self, low: Lowering, scope: Scope, node, where: str, rule: str, tag: str):
        self.low, self.scope, self.node, self.where, self.rule = low, scope, node, where, rule
        self.loop = low.net.add_loop()
        self.prefix = low.fresh(scope.prefix + node_tag(node) + tag) + "/"
        self.loop.name = self.prefix.rstrip("/")
        self.enclosing = scope.loop   # the CoreLoop whose body holds this node, if any
        self.anchor = None            # this loop's first iterator or recurrence

    def nested(self, t, what: str):
        """A node in a loop body runs once per trip of that loop: the core loop built for it
        is made to read `t` through a stream of the enclosing loop, so that it is nested in
        that loop (`structure/nesting`) even when its own boundary inputs all come from
        outside both (its body may still read the enclosing loop's values)."""
        outer = self.enclosing
        if outer is None or outer.anchor is None:
            return t
        return self.function(lambda v, _trip: (v,), [t, outer.anchor], t.type,
                             f"per_trip_of_{outer.loop.name}:{what}")

    def boundary(self, t):
        if self.anchor is None:
            self.anchor = t
        return t

    def name(self, what: str) -> str:
        return self.prefix + what

    def function(self, fn, inputs, out_type, what: str):
        """A helper layer of the lowering itself (not an ONNX node)."""
        layer = self.low.net.add_function(fn, inputs, [out_type], op=what.split(":")[0])
        return self.low.label(layer, self.name(what)).get_output(0)

    def count(self, t):
        """COUNT limit (`trip/count`); a negative count runs zero trips (A4, ONNX profile)."""
        ty = t.type
        if not (isinstance(ty, TensorType) and ty.dtype in (np.int64, np.int32)
                and ty.shape in ((), (1,))):
            where, rule = self.where, self.rule

            def as_count(m):
                a = np.asarray(m)
                if a.dtype.kind not in "iu" or a.size != 1:
                    raise EvaluationError(where, rule, f"the trip count is {a.dtype}"
                                          f"{list(a.shape)}", "give an int64 scalar")
                return (a.reshape(()).astype(np.int64),)

            t = self.function(as_count, [t], TensorType(np.int64, ()), "trip_count")
        self.loop.add_trip_limit(t, TripLimit.COUNT)

    def nested_count(self, t):
        """COUNT limit of a loop that may sit in another loop's body."""
        self.count(self.nested(t, "trip_count"))

    def carried(self, init, what: str):
        """A carried value: recurrence(initial value, next value) (`recurrence/def`)."""
        layer = self.loop.add_recurrence(init)
        self.low.label(layer, self.name(what))
        self.boundary(layer.get_output(0))
        return layer

    def close(self, rec, nxt, what: str):
        """The back edge: the body's output is the next element of the carried value."""
        if nxt is None:
            raise ModelError(self.where, self.rule, f"the body's output for {what} is an "
                             "omitted value", "compute a value for every body output")
        rec.set_input(1, nxt)

    def last(self, t, what: str):
        """The final value of a carried value: LAST_VALUE of its recurrence (`output/last`);
        of any other stream, its value on the last trip."""
        layer = self.loop.add_loop_output(t, LoopOutput.LAST_VALUE)
        return self.low.label(layer, self.name(what)).get_output(0)

    def stacked(self, t, what: str, axis: int = 0, reverse: bool = False, length=None,
                declared: Optional[onnx.TypeProto] = None):
        """Per-trip values stacked on a NEW axis (`output/concat`, A8), in reverse order for
        REVERSE (`output/reverse`). Without a length the output has the n trips' values."""
        if t is None:
            raise ModelError(self.where, self.rule, f"the body's output for {what} is an "
                             "omitted value", "compute a value for every body output")
        t = self.typed(t, declared, what)
        kind = LoopOutput.REVERSE if reverse else LoopOutput.CONCATENATE
        rank = len(t.type.shape)
        if axis < 0:
            axis += rank + 1
        if not 0 <= axis <= rank:
            raise ModelError(self.where, self.rule, f"output axis for {what} is out of range "
                             f"for a rank {rank + 1} output", "use an axis in [-r, r-1]")
        layer = self.loop.add_loop_output(t, kind, axis)
        if length is not None:
            layer.set_input(1, length)
        out = self.low.label(layer, self.name(what)).get_output(0)
        if not t.type.is_static and self.low.reading("A12") == "error":
            out = self.refuse_shapeless_zero_trips(out, axis, what)
        return out

    def refuse_shapeless_zero_trips(self, out, axis, what):
        """A12 reading "error": zero trips leave no element to take a non-static shape from."""
        where, rule = self.where, self.rule

        def check(v):
            if np.shape(v)[axis] == 0:
                raise EvaluationError(where, rule, f"{what} has zero trips and its element "
                                      "shape is not static (reading A12=error)",
                                      "declare the body output's full shape, or use A12="
                                      "zero-extent")
            return (v,)

        return self.function(check, [out], out.type, f"A12:{what}")

    def typed(self, t, declared, what):
        """A scan output needs an element type even for zero trips (`stream/shape`): the
        body's declared output type, else what inference found."""
        if isinstance(t.type, TensorType):
            return t
        ty = to_ll(declared) if declared is not None else t.type
        if not isinstance(ty, TensorType):
            raise ModelError(self.where, self.rule, f"the element type of {what} is unknown "
                             f"({t.type!r})", "declare the body output's tensor type and rank")
        return self.function(lambda v: (v,), [t], ty, f"element_type:{what}")

    def iterate(self, x, axis: int, reverse: bool, what: str):
        """Iterator over `axis` (`iterator/forward`, `iterator/reverse`)."""
        ty = x.type
        if not isinstance(ty, TensorType):
            raise UnsupportedError(self.where, self.rule, f"scan input {what} has no known "
                                   f"rank ({ty!r})", "declare the scan input's shape")
        if axis < 0:
            axis += ty.rank
        if not 0 <= axis < ty.rank:
            raise ModelError(self.where, self.rule, f"scan axis out of range for {what} of "
                             f"rank {ty.rank}", "use an axis in [-r, r-1]")
        layer = self.loop.add_iterator(x, axis, reverse)
        return self.boundary(self.low.label(layer, self.name(what)).get_output(0))

    def body(self, body: onnx.GraphProto, bound: List[tuple]):
        """Lower the body with input k bound to `bound[k] = (tensor, known TypeProto)`; its
        outputs. Names of enclosing graphs stay visible (`stream/invariant`)."""
        if len(body.input) != len(bound):
            raise ModelError(self.where, self.rule, f"its body takes {len(body.input)} "
                             f"inputs, the node binds {len(bound)}",
                             "make the body's inputs match the node's inputs")
        scope = Scope(self.low, self.scope, f"body of {self.where}", self.prefix, in_loop=True)
        scope.loop = self
        input_types = {}
        for vi, (t, tp) in zip(body.input, bound):
            scope.bind(vi.name, t)
            known = from_ll(t.type) if isinstance(t.type, TensorType) else tp
            input_types[vi.name] = known if known is not None else (
                vi.type if vi.type.WhichOneof("value") else None)
        lower_initializers(self.low, body, scope)
        scope.types = graph_types(self.low, body, scope, input_types)
        lower_nodes(self.low, body.node, scope)
        return graph_outputs(body, scope, f"body of {self.where}")


def check_outputs(node, where, rule, n_results: int):
    if len(node.output) > n_results:
        raise ModelError(where, rule, f"has {len(node.output)} outputs, its body gives "
                         f"{n_results} results", "make the node's outputs match the body's")


def bind_results(scope: Scope, node, results, types=None):
    for k, o in enumerate(node.output):
        if o and k < len(results):
            scope.bind(o, results[k])
            if types is not None and types[k] is not None:
                scope.types.setdefault(o, types[k])


# ------------------------------------------------------------------------------------------
# Loop (rule onnx/loop)
# ------------------------------------------------------------------------------------------

def iteration_number(cl: CoreLoop, declared: Optional[onnx.TypeProto]):
    """recurrence(0, i + 1) with the body's declared dtype and shape (int64 scalar when
    undeclared)."""
    ty = to_ll(declared)
    if not isinstance(ty, TensorType) or ty.dtype.kind not in "iuf":
        ty = TensorType(np.int64, ())
    shape = tuple(1 if d is None else d for d in ty.shape)
    zero = cl.nested(add_constant(cl.low, np.zeros(shape, ty.dtype), cl.name("iteration0")),
                     "iteration0")
    one = add_constant(cl.low, np.ones(shape, ty.dtype), cl.name("one"))
    rec = cl.carried(zero, "iteration")
    step = cl.low.net.add_elementwise(rec.get_output(0), one, ElementWiseOperation.SUM)
    cl.low.label(step, cl.name("iteration+1"))
    rec.set_input(1, step.get_output(0))
    return rec.get_output(0)


def omitted_condition(cl: CoreLoop):
    """What the body's condition input receives when `cond` is omitted (A9): true by
    default; reading "undefined" feeds an undefined (masked) value."""
    if cl.low.reading("A9") == "true":
        return add_constant(cl.low, np.array(True), cl.name("cond_true"))

    def undefined():
        return (Partial(np.array(True), np.zeros((), bool)),)

    return cl.function(undefined, [], TensorType(np.bool_, ()), "cond_undefined")


def shape_free(cl: CoreLoop, init, what: str):
    """A11 reading "allow": a carried value typed opaquely, so its shape may change from trip
    to trip (as onnxruntime allows); the default "error" keeps `structure/shapes`."""
    if not isinstance(init.type, TensorType):
        return init
    return cl.function(lambda v: (v,), [init], OpaqueType(f"{init.type!r} (shape may change)"),
                       f"A11:{what}")


def scan_output(cl: CoreLoop, t, what: str, declared):
    """A Loop scan output: the per-trip values stacked on a new axis 0 (A8 "stack"); reading
    A8 "concatenate" joins them along their own first axis instead."""
    out = cl.stacked(t, what, declared=declared)
    if cl.low.reading("A8") == "stack":
        return out
    where, rule = cl.where, cl.rule
    ty = out.type

    def join_first_axes(v):
        if np.ndim(v) < 2:
            raise EvaluationError(where, rule, f"{what}: 0-D per-trip values cannot be "
                                  "concatenated (reading A8=concatenate)",
                                  "use A8=stack, or produce rank >= 1 values")
        return (np.reshape(v, (-1,) + np.shape(v)[2:]),)

    joined = TensorType(ty.dtype, (None,) + tuple(ty.shape[2:])) if ty.rank >= 2 else ty
    return cl.function(join_first_axes, [out], joined, f"A8:{what}")


def lower_loop(low: Lowering, node, scope: Scope, where: str) -> None:
    rule = "onnx/loop"
    body = graph_attribute(node, "body", where, rule)
    ins = [scope.lookup(x, where) if x else None for x in node.input]
    if len(ins) < 2:
        raise ModelError(where, rule, f"has {len(ins)} inputs", "give M and cond (\"\" to omit)")
    m, cond, inits = ins[0], ins[1], ins[2:]
    n = len(inits)
    if len(body.input) != 2 + n:
        raise ModelError(where, rule, f"its body takes {len(body.input)} inputs; with {n} "
                         f"carried values it must take {2 + n} (iteration number, condition, "
                         "carried values)", "make the body's inputs match the node's inputs")
    k = len(body.output) - 1 - n
    if k < 0:
        raise ModelError(where, rule, f"its body gives {len(body.output)} outputs; with {n} "
                         f"carried values it must give at least {1 + n} (condition, carried "
                         "values, scan outputs)", "make the body's outputs match")
    sample = low.readings["A7"] == "sample"
    check_outputs(node, where, rule, n + k + (1 if sample else 0))
    cl = CoreLoop(low, scope, node, where, rule, "")
    if m is not None:
        cl.count(m)
    i = iteration_number(cl, body.input[0].type)
    if cond is not None:
        cond_rec = cl.carried(as_scalar_bool(low, cond, cl.name("cond_initial"), where, rule),
                              "cond")
        cl.loop.add_trip_limit(cond_rec.get_output(0), TripLimit.WHILE)
        cond_in = cond_rec.get_output(0)
    else:
        cond_rec = None
        cond_in = omitted_condition(cl)
    if any(v is None for v in inits):
        raise ModelError(where, rule, "a carried value's initial value is omitted",
                         "give every carried value an initial value")
    if low.reading("A11") == "allow":
        inits = [shape_free(cl, v, body.input[2 + j].name) for j, v in enumerate(inits)]
    recs = [cl.carried(v, f"carried:{body.input[2 + j].name}") for j, v in enumerate(inits)]
    init_types = [scope.onnx_type(x) for x in node.input[2:]]
    outs = cl.body(body, [(i, None), (cond_in, None)] +
                   [(r.get_output(0), tp) for r, tp in zip(recs, init_types)])
    if cond_rec is not None:
        cl.close(cond_rec, as_scalar_bool(low, outs[0], cl.name("cond_next"), where, rule), "cond")
    for j, r in enumerate(recs):
        cl.close(r, outs[1 + j], f"carried value {j}")
    results = [cl.last(r.get_output(0), f"final:{body.output[1 + j].name}")
               for j, r in enumerate(recs)]
    results += [scan_output(cl, outs[1 + n + j], f"scan:{body.output[1 + n + j].name}",
                            body.output[1 + n + j].type) for j in range(k)]
    if sample:  # A7 "sample": the final condition comes first
        results.insert(0, cl.last(cond_rec.get_output(0) if cond_rec is not None else outs[0],
                                  "final:cond"))
    bind_results(scope, node, results)


# ------------------------------------------------------------------------------------------
# Scan (rules onnx/scan9 and onnx/scan8)
# ------------------------------------------------------------------------------------------

def scan_trips(cl: CoreLoop, body, inits, init_types, sources, out_axes, out_reverse,
               length=None):
    """What Scan 9 and Scan 8's inner loop share: states as recurrences, scan inputs as
    iterators (`sources` = [(tensor, axis, reverse)]), outputs stacked on `out_axes`."""
    n = len(inits)
    recs = [cl.carried(v, f"state:{body.input[j].name}") for j, v in enumerate(inits)]
    its = [cl.iterate(x, axis, rev, f"element:{body.input[n + j].name}")
           for j, (x, axis, rev) in enumerate(sources)]
    outs = cl.body(body, [(r.get_output(0), tp) for r, tp in zip(recs, init_types)] +
                   [(t, None) for t in its])
    k = len(body.output) - n
    if k < 0:
        raise ModelError(cl.where, cl.rule, f"its body gives {len(body.output)} outputs; with "
                         f"{n} states it must give at least {n}", "make the body's outputs match")
    for j, r in enumerate(recs):
        cl.close(r, outs[j], f"state {j}")
    finals = [cl.last(r.get_output(0), f"final:{body.output[j].name}")
              for j, r in enumerate(recs)]
    scans = [cl.stacked(outs[n + j], f"scan:{body.output[n + j].name}",
                        axis=out_axes[j], reverse=out_reverse[j], length=length,
                        declared=body.output[n + j].type) for j in range(k)]
    return finals, scans


def scan_attributes(node, where, rule, m: int, k: int):
    def ints(name, count, default=0):
        v = list(attr(node, name, [default] * count))
        if len(v) != count:
            raise ModelError(where, rule, f"{name} has {len(v)} entries, expected {count}")
        return [int(x) for x in v]
    return ints


def sequence_length(cl: CoreLoop, xs, axes):
    """COUNT for Scan 9: the extent of every scan input on its scan axis, which must agree."""
    where, rule = cl.where, cl.rule
    norm = [a + len(x.type.shape) if a < 0 else a for x, a in zip(xs, axes)]

    def length(*values):
        lens = [np.shape(v)[a] for v, a in zip(values, norm)]
        if any(L != lens[0] for L in lens):
            raise EvaluationError(where, rule, f"scan inputs have lengths {lens} on their scan "
                                  "axes", "give every scan input the same sequence length")
        return (np.array(lens[0], np.int64),)

    return cl.function(length, xs, TensorType(np.int64, ()), "sequence_length")


def scan_input_count(node, where: str, rule: str) -> int:
    """M, the number of scan inputs, which every Scan opset requires (at least 1)."""
    m = attr(node, "num_scan_inputs")
    if m is None or m < 1:
        raise ModelError(where, rule, "num_scan_inputs is missing or < 1",
                         "set num_scan_inputs to the number of scan inputs")
    return m


def lower_scan9(low: Lowering, node, scope: Scope, where: str) -> None:
    rule = "onnx/scan9"
    body = graph_attribute(node, "body", where, rule)
    m = scan_input_count(node, where, rule)
    ins = [scope.lookup(x, where) if x else None for x in node.input]
    n = len(ins) - m
    if n < 0 or any(x is None for x in ins):
        raise ModelError(where, rule, f"has {len(ins)} inputs (some omitted) for "
                         f"{m} scan inputs", "give N initial states then M scan inputs")
    if len(body.input) != n + m:
        raise ModelError(where, rule, f"its body takes {len(body.input)} inputs; with {n} "
                         f"states and {m} scan inputs it must take {n + m}",
                         "make the body's inputs match the node's inputs")
    k = len(body.output) - n
    check_outputs(node, where, rule, len(body.output))
    ints = scan_attributes(node, where, rule, m, k)
    in_axes, in_dirs = ints("scan_input_axes", m), ints("scan_input_directions", m)
    out_axes, out_dirs = ints("scan_output_axes", max(k, 0)), ints("scan_output_directions", max(k, 0))
    cl = CoreLoop(low, scope, node, where, rule, "")
    xs = [scan_input_typed(cl, x, body.input[n + i], f"input:{x.name}")
          for i, x in enumerate(ins[n:])]
    cl.nested_count(sequence_length(cl, xs, in_axes))
    finals, scans = scan_trips(cl, body, ins[:n], [scope.onnx_type(x) for x in node.input[:n]],
                               [(x, a, bool(d)) for x, a, d in zip(xs, in_axes, in_dirs)],
                               out_axes, [bool(d) for d in out_dirs])
    bind_results(scope, node, finals + scans)


def scan_input_typed(cl, x, element_info, what):
    """A scan input whose type ONNX's inference left unknown (a Loop's output read through an
    If, say) takes its rank from the body's declared element, one axis more (checked when the
    value arrives); with neither known it is refused."""
    if isinstance(x.type, TensorType):
        return x
    element = to_ll(element_info.type) if element_info.type.HasField("tensor_type") else None
    if not isinstance(element, TensorType):
        raise UnsupportedError(cl.where, cl.rule, f"scan input {x.name!r} has no known rank",
                               "declare the scan input's shape or the body input's")
    whole = TensorType(element.dtype, (None,) * (element.rank + 1))
    return cl.function(lambda v: (v,), [x], whole, f"typed:{what}")


def lower_scan8(low: Lowering, node, scope: Scope, where: str) -> None:
    rule = "onnx/scan8"
    body = graph_attribute(node, "body", where, rule)
    m = scan_input_count(node, where, rule)
    if len(node.input) < 1 + m:
        raise ModelError(where, rule, f"has {len(node.input)} inputs for {m} scan inputs",
                         "give sequence_lens (\"\" to omit), N states, then M scan inputs")
    lens = scope.lookup(node.input[0], where) if node.input[0] else None
    ins = [scope.lookup(x, where) if x else None for x in node.input[1:]]
    n = len(ins) - m
    if any(x is None for x in ins):
        raise ModelError(where, rule, "a state or scan input is omitted", "give every one")
    if len(body.input) != n + m:
        raise ModelError(where, rule, f"its body takes {len(body.input)} inputs; with {n} "
                         f"states and {m} scan inputs it must take {n + m}",
                         "make the body's inputs match the node's inputs")
    k = len(body.output) - n
    check_outputs(node, where, rule, len(body.output))
    dirs = scan_attributes(node, where, rule, m, k)("directions", m)
    states, xs = ins[:n], ins[n:]
    for x in xs:
        if not (isinstance(x.type, TensorType) and x.type.rank >= 2):
            raise ModelError(where, rule, f"scan input {x.name!r} is {x.type!r}; Scan 8 scan "
                             "inputs are [batch, sequence, ...]", "give rank >= 2 scan inputs")

    batch = CoreLoop(low, scope, node, where, rule, ":batch")
    sizes = batch_and_length(batch, xs)
    batch.nested_count(sizes[0])
    max_len = sizes[1]
    xs_b = [batch.iterate(x, 0, False, f"sequence:{body.input[n + j].name}")
            for j, x in enumerate(xs)]
    states_b = [batch.iterate(s, 0, False, f"state0:{body.input[j].name}")
                for j, s in enumerate(states)]
    len_b = sequence_length_of_item(batch, lens, max_len)
    reverse = reversed_prefix if low.reading("A13") == "valid-prefix" else reversed_axis
    xs_b = [reverse(batch, x, len_b, body.input[n + j].name) if d else x
            for j, (x, d) in enumerate(zip(xs_b, dirs))]

    inner = CoreLoop(low, scope, node, where, rule, ":sequence")
    inner.prefix = batch.prefix + "sequence/"
    inner.loop.name = inner.prefix.rstrip("/")
    inner.enclosing = batch
    inner.count(len_b)
    finals_b, scans_b = scan_trips(inner, body, states_b, [None] * n,
                                   [(x, 0, False) for x in xs_b], [0] * k, [False] * k,
                                   length=max_len)
    finals = [batch.stacked(f, f"final:{body.output[j].name}") for j, f in enumerate(finals_b)]
    scans = [batch.stacked(s, f"scan:{body.output[n + j].name}") for j, s in enumerate(scans_b)]
    bind_results(scope, node, finals + scans)


def batch_and_length(cl: CoreLoop, xs):
    """Scan 8's batch size (axis 0) and maximum sequence length (axis 1), which every scan
    input must share."""
    where, rule = cl.where, cl.rule

    def dims(*values):
        shapes = [np.shape(v)[:2] for v in values]
        if any(s != shapes[0] for s in shapes):
            raise EvaluationError(where, rule, f"scan inputs have [batch, sequence] sizes "
                                  f"{[list(s) for s in shapes]}", "give every scan input the "
                                  "same batch size and maximum sequence length")
        return np.array(shapes[0][0], np.int64), np.array(shapes[0][1], np.int64)

    layer = cl.low.net.add_function(dims, xs, [TensorType(np.int64, ()), TensorType(np.int64, ())],
                                    op="BatchAndLength")
    cl.low.label(layer, cl.name("batch_and_length"),
                 {0: cl.name("batch_size"), 1: cl.name("max_sequence_length")})
    return layer.get_output(0), layer.get_output(1)


def sequence_length_of_item(batch: CoreLoop, lens, max_len):
    """sequence_lens[b] (the maximum length when sequence_lens is omitted), checked to lie in
    [0, maximum length]."""
    if lens is None:
        return max_len
    where, rule = batch.where, batch.rule
    item = batch.iterate(lens, 0, False, "sequence_lens[b]")
    shortest = 1 if batch.low.reading("A14") == "refuse" else 0

    def checked(length, longest):
        if not shortest <= int(length) <= int(longest):
            raise EvaluationError(where, rule, f"sequence_lens holds {int(length)}, outside "
                                  f"[{shortest}, {int(longest)}]" + (" (reading A14=refuse)"
                                                                      if shortest else ""),
                                  "give lengths within the sequence axis")
        return (np.asarray(length, np.int64).reshape(()),)

    return batch.function(checked, [item, max_len], TensorType(np.int64, ()), "length[b]")


def reversed_prefix(batch: CoreLoop, x, length, what: str):
    """A reversed Scan 8 input of one batch item (A13 "valid-prefix", the default): its first
    sequence_lens[b] elements in reverse order, then the unused rest, so a forward iterator
    reads x[len-1-t]. The core's reverse iterator is not used: under A2=guide it would start
    at the padded end."""
    def reverse(v, L):
        L = int(L)
        return (np.concatenate([v[:L][::-1], v[L:]], axis=0),)

    return batch.function(reverse, [x, length], x.type, f"reversed:{what}")


def reversed_axis(batch: CoreLoop, x, length, what: str):
    """A13 reading "padded-axis": the whole sequence axis reversed, padding first."""
    return batch.function(lambda v, _L: (v[::-1].copy(),), [x, length], x.type,
                          f"reversed:{what}")


CONTROL_FLOW = {"Loop": lower_loop, "If": lower_if}


def lower_scan(low: Lowering, node, scope: Scope, where: str) -> None:
    """Scan 8 and Scan 9+ differ (sequence_lens and batch axis vs axes and directions)."""
    version = scope.opsets.get("", 0)
    (lower_scan8 if version < 9 else lower_scan9)(low, node, scope, where)


CONTROL_FLOW["Scan"] = lower_scan
