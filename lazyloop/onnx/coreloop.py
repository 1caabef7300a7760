"""`CoreLoop`, the core loop built for an ONNX Loop or Scan node (DESIGN §3;
spec/30-onnx-lowering.md), and what loops.py and scan.py share around it.

Whatever the dialect, a CoreLoop holds carried values as recurrences whose final value is
read by LAST_VALUE, per-trip outputs stacked by CONCATENATE/REVERSE, iterators over scan
inputs, and a body graph lowered (through graph.py) with its inputs bound to streams; a
loop built for a node inside another loop's body is nested in that loop.
"""
from __future__ import annotations

from typing import List, Optional

import numpy as np
import onnx

from ..core.enums import LoopOutput, TripLimit
from ..core.errors import EvaluationError, ModelError, UnsupportedError
from ..core.types import TensorType
from .graph import graph_outputs, graph_types, lower_initializers, lower_nodes
from .scope import Lowering, Scope, node_tag
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
