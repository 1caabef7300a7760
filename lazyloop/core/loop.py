"""Loops and their boundary layers: trip limit, iterator, recurrence, loop output.

Inside loop L a tensor denotes the stream of its values over L's trips. The boundary layers
are the stream combinators of TensorRT's formal semantics; their element rules live in
`lazyloop.evaluate`, their static types here.
"""
from __future__ import annotations

import numpy as np

from . import checks
from .errors import builder_call
from .enums import LayerType, LoopOutput, TripLimit
from .layers.base import Layer
from .types import TensorType

INTS = (np.dtype(np.int32), np.dtype(np.int64))


class Loop(checks.FixedAttributes):
    """TensorRT's ILoop: an identity that boundary layers share."""

    def __init__(self, network, index: int):
        self.network = network
        self.name = f"loop{index}"
        self.trip_limits = []
        self.iterators = []
        self.recurrences = []
        self.outputs = []
        self._ready = True

    # A boundary layer joins the loop only once the network accepted it (`structure/builder-args`).
    @builder_call
    def add_trip_limit(self, tensor, kind: TripLimit) -> "TripLimitLayer":
        kind = checks.enum_arg(f"{self.name}.add_trip_limit", "kind", TripLimit, kind)
        layer = self.network._add(TripLimitLayer(self, tensor, kind))
        self.trip_limits.append(layer)
        return layer

    @builder_call
    def add_iterator(self, tensor, axis: int = 0, reverse: bool = False) -> "IteratorLayer":
        layer = self.network._add(IteratorLayer(self, tensor, axis, reverse))
        self.iterators.append(layer)
        return layer

    @builder_call
    def add_recurrence(self, initial_value) -> "RecurrenceLayer":
        layer = self.network._add(RecurrenceLayer(self, initial_value))
        self.recurrences.append(layer)
        return layer

    @builder_call
    def add_loop_output(self, tensor, kind: LoopOutput, axis: int = 0) -> "LoopOutputLayer":
        kind = checks.enum_arg(f"{self.name}.add_loop_output", "kind", LoopOutput, kind)
        layer = self.network._add(LoopOutputLayer(self, tensor, kind, axis))
        self.outputs.append(layer)
        return layer

    def limit(self, kind: TripLimit):
        kind = checks.enum_arg(f"{self.name}.limit", "kind", TripLimit, kind)
        return next((t for t in self.trip_limits if t.kind is kind), None)

    def __repr__(self):
        return f"<{self.name}>"


class BoundaryLayer(Layer):
    def __init__(self, loop: Loop, inputs, num_outputs=1):
        self.loop = loop
        super().__init__(loop.network, inputs, num_outputs)

    def get_loop(self) -> Loop:
        return self.loop


class TripLimitLayer(BoundaryLayer):
    type = LayerType.TRIP_LIMIT
    any_rank = True  # relaxed profiles: a one-element tensor, checked when it arrives

    def __init__(self, loop, tensor, kind: TripLimit):
        self.kind = kind
        super().__init__(loop, [tensor], num_outputs=0)
        self.check_type()

    def compute_types(self):
        return []

    def check_type(self):
        t = self.input_type(0)
        want = INTS if self.kind is TripLimit.COUNT else (np.dtype(np.bool_),)
        if self.network.profile != "tensorrt":
            ok_shape = t.rank in (0, None) or t.shape == (1,)  # one element (A16)
        else:
            ok_shape = t.rank == 0
        if t.dtype not in want or not ok_shape:
            rule = "trip/count" if self.kind is TripLimit.COUNT else "trip/while"
            self.refuse(f"a {self.kind.name} limit takes a 0-D "
                        f"{' or '.join(d.name for d in want)} tensor, got {t!r}",
                        "pass a scalar of that dtype (a cast or shuffle layer makes one)",
                        rule=rule)

    def set_input(self, index, tensor):
        super().set_input(index, tensor)
        self.check_type()

    def describe(self):
        return f"trip_limit({self._inputs[0].name}, {self.kind.name})"


class IteratorLayer(BoundaryLayer):
    type = LayerType.ITERATOR
    any_rank = True  # an input of unknown rank: the axis is checked when the value arrives
    settable = {**Layer.settable, "axis": checks.an_int(low=0, rule="iterator/forward"),
                "reverse": checks.a_bool}

    def __init__(self, loop, tensor, axis, reverse):
        self.axis, self.reverse = axis, reverse
        super().__init__(loop, [tensor])
        self.output_types()

    def infer(self):
        t = self.input_type(0)
        if t.shape is None and self.axis >= 0:
            return t
        if not 0 <= self.axis < (t.rank or 0):
            self.refuse(f"axis {self.axis} is out of range for rank {t.rank}",
                        f"iterate an axis from 0 to {t.rank - 1}", rule="iterator/forward")
        return TensorType(t.dtype, t.shape[:self.axis] + t.shape[self.axis + 1:])

    def describe(self):
        return f"iterator({self._inputs[0].name}, axis={self.axis}, reverse={self.reverse})"


class RecurrenceLayer(BoundaryLayer):
    type = LayerType.RECURRENCE
    optional_inputs = (1,)  # the next value, set later with set_input(1, ...)

    def __init__(self, loop, initial):
        super().__init__(loop, [initial, None])

    def max_inputs(self):
        return 2

    def infer(self):
        """The stream has its initial value's type; the next value is checked against it
        (`recurrence/def`) without following the back edge."""
        return self._inputs[0].type

    def check_next(self):
        """The next value's type agrees with the stream's: the same type (TensorRT profile);
        in relaxed profiles the same dtype and, where both are known, rank and dimensions
        (each element is checked against the stream's type when it arrives)."""
        first = self._inputs[0].type
        nxt = self._inputs[1]
        if nxt is not None and isinstance(first, TensorType) and isinstance(nxt.type, TensorType):
            a, b = first, nxt.type
            if a.dtype != b.dtype or (a.shape is not None and b.shape is not None and (
                    len(a.shape) != len(b.shape) or any(x is not None and y is not None and x != y
                                                        for x, y in zip(a.shape, b.shape)))):
                self.refuse(f"initial value {a!r} and next value {b!r} differ",
                            "give both inputs the same shape and dtype", rule="recurrence/def")

    def set_input(self, index, tensor):
        super().set_input(index, tensor)
        self.check_next()

    def describe(self):
        nxt = self._inputs[1].name if self._inputs[1] is not None else "<unset>"
        return f"recurrence({self._inputs[0].name}, {nxt})"


class LoopOutputLayer(BoundaryLayer):
    type = LayerType.LOOP_OUTPUT
    settable = {**Layer.settable, "axis": checks.an_int(low=0, rule="output/concat")}
    optional_inputs = (1,)  # the length, set later with set_input(1, ...)

    def __init__(self, loop, tensor, kind: LoopOutput, axis):
        self.kind, self.axis = kind, axis
        super().__init__(loop, [tensor] if kind is LoopOutput.LAST_VALUE else [tensor, None])
        self.output_types()

    def max_inputs(self):
        return 1 if self.kind is LoopOutput.LAST_VALUE else 2

    def static_length(self):
        """The value of input 1 when it is a build-time constant, else None."""
        length = self._inputs[1] if len(self._inputs) > 1 else None
        layer = length.producer if length is not None else None
        while layer is not None and layer.type is LayerType.IDENTITY:
            layer = layer.get_input(0).producer
        if layer is not None and layer.type is LayerType.CONSTANT and layer.weights.size == 1:
            value = layer.weights.reshape(())
            if value.dtype.kind in "iu" and value >= 0:
                return int(value)
        return None

    def infer(self):
        t = self._inputs[0].type
        if self.kind is LoopOutput.LAST_VALUE or not isinstance(t, TensorType):
            return t
        if t.shape is None:  # elements of unknown rank: so is the stack of them
            return t
        if not 0 <= self.axis <= t.rank:
            self.refuse(f"axis {self.axis} is out of range for a rank {t.rank + 1} output",
                        f"stack on an axis from 0 to {t.rank}", rule="output/concat")
        return TensorType(t.dtype, t.shape[:self.axis] + (self.static_length(),) + t.shape[self.axis:])

    def describe(self):
        args = [self._inputs[0].name, self.kind.name]
        if self.kind is not LoopOutput.LAST_VALUE:
            args.insert(1, self._inputs[1].name if self._inputs[1] is not None else "<length unset>")
            args.append(f"axis={self.axis}")
        return f"loop_output({', '.join(args)})"
