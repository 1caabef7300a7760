"""If-conditionals: per element, only the taken branch is forced."""
from __future__ import annotations

import numpy as np

from .enums import LayerType
from . import checks
from .errors import builder_call
from .layers.base import Layer
from .types import TensorType


class IfConditional(checks.FixedAttributes):
    def __init__(self, network, index):
        self.network = network
        self.name = f"if{index}"
        self.condition = None
        self.inputs = []
        self.outputs = []
        self._ready = True

    @builder_call
    def set_condition(self, tensor) -> "ConditionLayer":
        layer = self.network._add(ConditionLayer(self, tensor))
        object.__setattr__(self, "condition", layer)  # set by this method only
        return layer

    @builder_call
    def add_input(self, tensor) -> "IfConditionalInputLayer":
        layer = self.network._add(IfConditionalInputLayer(self, tensor))
        self.inputs.append(layer)
        return layer

    @builder_call
    def add_output(self, true_value, false_value) -> "IfConditionalOutputLayer":
        if self.condition is None:
            from .errors import StructureError
            raise StructureError(self.name, "stream/map", "has no condition yet",
                                 "call set_condition first")
        layer = self.network._add(IfConditionalOutputLayer(self, true_value, false_value))
        self.outputs.append(layer)
        return layer


class ConditionLayer(Layer):
    type = LayerType.CONDITION

    def __init__(self, conditional, tensor):
        self.conditional = conditional
        super().__init__(conditional.network, [tensor], num_outputs=0)
        t = self.input_type(0)
        if t.dtype != np.bool_ or t.shape not in ((), (1,)):
            self.refuse(f"the condition must be a 0-D bool tensor, got {t!r}",
                        "compare to make a bool, and reduce or reshape it to a scalar")

    def compute_types(self):
        return []


class IfConditionalInputLayer(Layer):
    type = LayerType.CONDITIONAL_INPUT

    def __init__(self, conditional, tensor):
        self.conditional = conditional
        super().__init__(conditional.network, [tensor])

    def infer(self):
        return self._inputs[0].type

    def kernel(self):
        return lambda x: x


class IfConditionalOutputLayer(Layer):
    """Element i is the true value's element i when the condition's element i holds,
    else the false value's; the other branch is not forced."""

    type = LayerType.CONDITIONAL_OUTPUT
    any_rank = True

    def __init__(self, conditional, true_value, false_value):
        self.conditional = conditional
        super().__init__(conditional.network, [true_value, false_value])

    def infer(self):
        a, b = self._inputs[0].type, self._inputs[1].type
        if isinstance(a, TensorType) and isinstance(b, TensorType):
            if a.dtype == b.dtype and (a.shape is None or b.shape is None):
                return TensorType(a.dtype, None)   # a branch of unknown rank (relaxed)
            if a.dtype != b.dtype or a.rank != b.rank:
                self.refuse(f"branches give {a!r} and {b!r}", "make both branches agree")
            return TensorType(a.dtype, tuple(x if x == y else None for x, y in zip(a.shape, b.shape)))
        return a

    def describe(self):
        c = self.conditional.condition.get_input(0).name
        return f"if_output({c} ? {self._inputs[0].name} : {self._inputs[1].name})"
