"""`CoreLoop`, the core loop built for an ONNX Loop or Scan node (DESIGN §3;
spec/30-onnx-lowering.md), and what loops.py and scan.py share around it.

Whatever the dialect, a CoreLoop holds carried values as recurrences whose final value is
read by LAST_VALUE, per-trip outputs stacked by CONCATENATE/REVERSE, iterators over scan
inputs, and a body graph lowered (through graph.py) with its inputs bound to streams; a
loop built for a node inside another loop's body is nested in that loop.

Every loop lowering -- ONNX Loop (loops.py), Scan 9 and Scan 8 (scan.py), OpenVINO Loop-5 and
TensorIterator (`lazyloop.openvino.loop`) -- builds its core loop in the same phases, in this
order, each marked in the code:

1. trip limits -- COUNT, WHILE over a recurrence of the condition, and the trip counter the
   body may read (ONNX's iteration number, OpenVINO's current iteration);
2. carried values -- recurrences from their initial values (next values: phase 5);
3. iterated inputs -- iterators over the scanned or sliced inputs, and what the body reads
   per trip besides its carried values;
4. the body -- its nodes lowered with its inputs bound to those streams;
5. back edges -- each recurrence's next value, the condition's included;
6. outputs -- last values and stacked per-trip values, bound to the node's outputs.
"""
from __future__ import annotations

from typing import List, Optional

import numpy as np
import onnx

from ..core.enums import LoopOutput, TripLimit
from ..core.errors import (EvaluationError, ModelError, ShapeError, StreamShapeChanged,
                           UnsupportedError)
from ..core.kernel import Kernel
from ..core.result_types import contains
from ..core.types import TensorType
from .graph import graph_outputs, graph_types, lower_initializers, lower_nodes
from .scope import Lowering, Scope, node_tag
from .types import from_ll, merge, to_ll


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
        scalar = self.low.reading("A16") == "scalar"   # one-element counts (A16)
        if isinstance(ty, TensorType) and ty.shape == (1,) and scalar:
            raise ModelError(self.where, self.rule, f"the trip count is {ty!r} (reading "
                             "A16=scalar)", "give an int64 scalar, or use A16=one-element")
        if not (isinstance(ty, TensorType) and ty.dtype in (np.int64, np.int32)
                and ty.shape in ((), (1,))):
            where, rule = self.where, self.rule

            def as_count(m):
                a = np.asarray(m)
                if a.dtype.kind not in "iu" or a.size != 1 or (scalar and a.ndim):
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
        try:
            rec.set_input(1, nxt)
        except ShapeError as exc:  # the body's declarations contradict each other
            raise ModelError(self.where, "onnx/declared", f"{what} is declared "
                             f"{rec.get_output(0).type!r} as a body input but its next value "
                             f"is {nxt.type!r} ({exc.problem})",
                             "declare a symbolic dim for a size that varies, or read the "
                             "declared dims as hints (readings={'A17': 'hint'})") from None

    def same_shape(self, nxt, rec, what: str, rule: str, why: str, fix: str):
        """The next value `nxt` of the recurrence `rec`, checked on every trip to have the
        shape of the value it follows (the initial value's on trip 0): StreamShapeChanged
        citing `rule`, naming the node, otherwise. Two equal static types need no check."""
        have, was = nxt.type, rec.get_output(0).type
        if isinstance(have, TensorType) and have.is_static and have == was:
            return nxt
        where = self.where

        def kept(v, previous):
            if np.shape(v) != np.shape(previous):
                raise StreamShapeChanged(where, rule, f"{what} changes shape from "
                                         f"{list(np.shape(previous))} to {list(np.shape(v))} "
                                         f"{why}", fix)
            return (v,)

        return self.function(kept, [nxt, rec.get_output(0)], nxt.type,
                             f"{rule.split('/')[-1]}:{what}")

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
        rank = t.type.rank
        moved = None
        if rank is None and axis != 0:   # element rank known only at run time
            axis, moved = 0, axis
        if rank is not None and axis < 0:
            axis += rank + 1
        if rank is not None and not 0 <= axis <= rank:
            raise ModelError(self.where, "onnx/attributes", f"attribute scan_output_axes "
                             f"holds {axis}, out of range for {what}, a rank {rank + 1} output",
                             "use an axis in [-r-1, r]")
        layer = self.loop.add_loop_output(t, kind, axis)
        if length is not None:
            layer.set_input(1, length)
        out = self.low.label(layer, self.name(what)).get_output(0)
        if not t.type.is_static and self.low.reading("A12") == "error":
            out = self.refuse_shapeless_zero_trips(out, axis, what)
        if moved is not None:
            out = self.stacked_axis_at_run_time(out, moved, what)
        return out

    def stacked_axis_at_run_time(self, out, axis, what):
        """Per-trip values of unknown rank r, stacked on axis 0, moved to `axis` once r is
        known (a negative axis counts from r + 1); an axis outside [-r-1, r] is refused."""
        where, rule = self.where, self.rule

        def move(v):
            r = np.ndim(v)
            a = axis + r if axis < 0 else axis
            if not 0 <= a < r:
                raise ModelError(where, "onnx/attributes", f"attribute scan_output_axes holds "
                                 f"{axis}, out of range for {what}, a rank {r} output (rule "
                                 f"{rule})", "use an axis in [-r-1, r]")
            return (np.ascontiguousarray(np.moveaxis(v, 0, a)),)

        return self.function(move, [out], out.type, f"axis:{what}")

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
        """A scan output needs an element type even for zero trips (`stream/shape`): what
        inference found, completed by the body's declared output type."""
        ty = to_ll(declared) if declared is not None else t.type
        if isinstance(t.type, TensorType):
            if not isinstance(ty, TensorType) or not compatible(t.type, ty):
                return t
            ty = meet(t.type, ty)  # declared static dims complete what inference left open
            if ty == t.type:
                return t
        elif not isinstance(ty, TensorType):
            raise ModelError(self.where, self.rule, f"the element type of {what} is unknown "
                             f"({t.type!r})", "declare the body output's tensor type")
        return self.function(lambda v: (v,), [t], ty, f"element_type:{what}")

    def iterate(self, x, axis: int, reverse: bool, what: str):
        """Iterator over `axis` (`iterator/forward`, `iterator/reverse`); over an input of
        unknown rank the axis (non-negative) is checked when the value arrives."""
        ty = x.type
        if not isinstance(ty, TensorType):
            raise UnsupportedError(self.where, self.rule, f"scan input {what} has no known "
                                   f"element type ({ty!r})", "declare the scan input's type")
        if ty.rank is not None and axis < 0:
            axis += ty.rank
        if not 0 <= axis < (ty.rank if ty.rank is not None else axis + 1):
            raise ModelError(self.where, self.rule, f"scan axis out of range for {what} of "
                             f"rank {ty.rank}", "use an axis in [-r, r-1]")
        layer = self.loop.add_iterator(x, axis, reverse)
        return self.boundary(self.low.label(layer, self.name(what)).get_output(0))

    def conform(self, t, declared: Optional[onnx.TypeProto], what: str, carried=False):
        """`onnx/declared`: a value bound to a body input declared `declared`. The declared
        type is a constraint -- dtype, and rank and static dims where declared (`dim_param`
        constrains nothing): a type that contradicts it is refused now, a value that breaks
        it when it arrives, both as ModelErrors naming the input. A carried value's stream
        takes the declared type alone (its initial value's shape must not freeze the shape
        of later trips: A11), dtype from the initial value when the body declares none."""
        want = declared_type(declared)
        have = t.type
        if want is None:
            if not carried or not isinstance(have, TensorType):
                return t
            want = TensorType(have.dtype, None)
        elif isinstance(have, TensorType):
            if not compatible(have, want):
                raise ModelError(self.where, "onnx/declared", f"{what} is declared {want!r} in "
                                 f"the body but receives {have!r}",
                                 "make the body input's declared type match its value"
                                 + (" (or readings={'A18': 'as-given'})" if self.rule ==
                                    "onnx/loop" and want.shape == (1,) and have.shape == ()
                                    else ""))
            if not carried and contains(want, have):
                return t
            if not carried:
                want = meet(have, want)
        elif have.description not in ("?", "tensor(?)") and not isinstance(have, TensorType):
            return t   # a sequence or optional: its frontend checks it
        where = self.where
        admitted, dtype = set(), want.dtype  # shapes of `want.dtype` found to agree with it

        def conforming(v):
            if v.__class__ is np.ndarray and v.shape in admitted and v.dtype == dtype:
                return v  # the check depends on dtype and shape alone
            if isinstance(v, np.generic):
                v = np.asarray(v)
            if not (isinstance(v, np.ndarray) and v.dtype == want.dtype and want.admits(v.shape)):
                got = f"{v.dtype}{list(v.shape)}" if isinstance(v, np.ndarray) else type(v).__name__
                raise ModelError(where, "onnx/declared", f"{what} is declared {want!r} but "
                                 f"its value is {got}", "declare the type the value has "
                                 "(a symbolic dim for a size that varies)")
            admitted.add(v.shape)
            return v

        # its value is of the declared type, or it raises (result_types: no check after it);
        # a one-output layer calls `conforming` itself (`Kernel.first_value`)
        sure = Kernel(lambda v: (conforming(v),), single=conforming, gives=lambda types: want)
        return self.function(sure, [t], want, f"declared:{what}")

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
            declared = vi.type if vi.type.WhichOneof("value") else None
            input_types[vi.name] = merge(known, declared) if known is not None else declared
        lower_initializers(self.low, body, scope)
        scope.types = graph_types(self.low, body, scope, input_types)
        lower_nodes(self.low, body.node, scope)
        return graph_outputs(body, scope, f"body of {self.where}")


def carried_dims_as_hints(body: onnx.GraphProto, inputs: range, outputs: range):
    """A17 reading "hint": the body with the static dims of its carried inputs and outputs
    forgotten (dtype and rank kept), as onnxruntime reads them (`onnx/declared`)."""
    relaxed = onnx.GraphProto()
    relaxed.CopyFrom(body)
    for vi in [relaxed.input[k] for k in inputs] + [relaxed.output[k] for k in outputs]:
        if vi.type.HasField("tensor_type") and vi.type.tensor_type.HasField("shape"):
            for dim in vi.type.tensor_type.shape.dim:
                dim.ClearField("dim_value")
    return relaxed


def one_element_declarations_of_scalars(body: onnx.GraphProto, inputs: range, values):
    """A18 reading "as-given": the body with the shape forgotten (dtype kept) of each carried
    input declared `[1]` whose initial value (in `values`) is 0-D, so that the body receives
    the 0-D value, as onnxruntime and ONNX's reference evaluator do (`onnx/declared`)."""
    scalars = [k for k, v in zip(inputs, values)
               if isinstance(v.type, TensorType) and v.type.shape == ()
               and getattr(declared_type(body.input[k].type), "shape", None) == (1,)]
    if not scalars:
        return body
    relaxed = onnx.GraphProto()
    relaxed.CopyFrom(body)
    for k in scalars:
        relaxed.input[k].type.tensor_type.ClearField("shape")
    return relaxed


def declared_type(tp: Optional[onnx.TypeProto]) -> Optional[TensorType]:
    """What a body input's declaration constrains, as a TensorType (None: nothing)."""
    ty = to_ll(tp) if tp is not None else None
    return ty if isinstance(ty, TensorType) else None


def compatible(a: TensorType, b: TensorType) -> bool:
    """Some value has both types: one dtype, and rank and dims agree where both know them."""
    if a.dtype != b.dtype:
        return False
    if a.shape is None or b.shape is None:
        return True
    return len(a.shape) == len(b.shape) and all(
        x is None or y is None or x == y for x, y in zip(a.shape, b.shape))


def meet(a: TensorType, b: TensorType) -> TensorType:
    """The values both types admit (their shapes agree where both are known)."""
    if a.shape is None or b.shape is None:
        return a if b.shape is None else b
    return TensorType(a.dtype, tuple(x if x is not None else y for x, y in zip(a.shape, b.shape)))


def given_back(body: onnx.GraphProto, pairs) -> frozenset:
    """The positions k of `pairs[k] = (body input, body output)` whose output is that input
    itself, or an Identity node's copy of it: a carried value the body gives back unchanged,
    whose every element is its initial value (`read_in_body`)."""
    made = {o: node for node in body.node for o in node.output}
    found = set()
    for k, (i, o) in enumerate(pairs):
        name, out = body.input[i].name, body.output[o].name
        node = made.get(out)
        if out == name or (node is not None and node.op_type == "Identity"
                           and node.domain in ("", "ai.onnx") and list(node.input) == [name]):
            found.add(k)
    return frozenset(found)


def read_in_body(rec, unchanged: bool):
    """What the body reads for a carried value: its recurrence's stream; for one the body
    gives back unchanged (`given_back`), its initial value itself, an invariant of the loop
    (`stream/invariant`) -- every element of the recurrence is that value, and the maps
    reading it then read no recurrence (the fast path may batch them). The recurrence stays,
    for the node's output: its last value is the initial value once the loop has ended, with
    the loop's own termination, errors and zero trips."""
    return rec.get_input(0) if unchanged else rec.get_output(0)


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
