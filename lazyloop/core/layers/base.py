"""Tensors and the layer base class of the TensorRT-style builder."""
from __future__ import annotations

from typing import List, Optional, Sequence

import numpy as np

from .. import checks
from ..enums import LayerType
from ..errors import ShapeError, StructureError
from ..types import OpaqueType, TensorType


class Tensor:
    """A value of the network: outside loops a tensor, inside loop L a stream over L's trips."""

    def __init__(self, network, producer: Optional["Layer"], index: int, name: str,
                 type_: Optional[TensorType] = None):
        self.network = network
        self.producer = producer
        self.index = index
        self._name = name
        self._input_type = type_  # only for network inputs
        self._ready = True

    def __setattr__(self, key, value):
        """Only `name` changes once the tensor exists (`structure/builder-args`)."""
        if getattr(self, "_ready", False) and not key.startswith("_") and key != "name":
            checks.refuse(f"tensor {self._name!r}", f"attribute {key!r} cannot be set",
                          "tensors are made by add_input and the layers' outputs")
        object.__setattr__(self, key, value)

    @property
    def name(self) -> str:
        return self._name

    @name.setter
    def name(self, value: str) -> None:
        self._name = checks.name_arg(f"tensor {self._name!r}", "name", value, empty=True)
        self.network._version += 1

    @property
    def type(self):
        if self.producer is None:
            return self._input_type
        return self.producer.output_types()[self.index]

    @property
    def shape(self):
        t = self.type
        return t.shape if isinstance(t, TensorType) else None

    @property
    def dtype(self):
        t = self.type
        return t.dtype if isinstance(t, TensorType) else None

    @property
    def is_network_input(self) -> bool:
        return self.producer is None

    @property
    def is_network_output(self) -> bool:
        return any(t is self for t in self.network._outputs)

    def __repr__(self) -> str:
        return f"Tensor({self.name!r}, {self.type!r})"


class Layer:
    """A layer: inputs, parameters, outputs; `type` and member names follow TensorRT.

    Its builder surface is TensorRT's (`get_input`, `set_input`, `get_output`, `num_*`,
    `name` and the settable parameters); the methods in `EVALUATOR_HOOKS` are how the core
    types and compiles layers, not part of that surface."""

    EVALUATOR_HOOKS = frozenset({"infer", "kernel", "compute_types", "output_types", "input_type",
                                 "refuse", "axis_list", "check_type", "check_next", "static_length",
                                 "describe", "op_label", "max_inputs", "inputs", "where"})

    type: LayerType = None
    typed_after_add = False  # TensorRT lets some parameters (a concatenation's axis) follow
    any_rank = False  # True: the layer takes inputs whose rank is unknown (relaxed profiles)
    # attribute -> checker(layer, attribute, value) -> value, run at every assignment
    # (`structure/builder-args`); other public attributes are fixed once the layer is built
    settable = {"name": checks.a_name}
    optional_inputs = ()  # indices of inputs that may be left unset (None) at construction

    def __init__(self, network, inputs: Sequence[Optional[Tensor]], num_outputs: int = 1):
        self.network = network
        self.name = network._fresh_layer_name(self.type.value)
        self._inputs: List[Optional[Tensor]] = list(inputs)
        for i, t in enumerate(self._inputs):
            if t is not None or (self.optional_inputs != "all" and i not in self.optional_inputs):
                network._check_owned(t, self)
        self._outputs = [Tensor(network, self, i, self.name if num_outputs == 1 else f"{self.name}:{i}")
                         for i in range(num_outputs)]
        self._types = None
        self._ready = True

    def __setattr__(self, key, value):
        """`structure/builder-args`: a public attribute is checked when it is assigned, and a value the
        layer's rule refuses is refused now, leaving the layer as it was."""
        if key.startswith("_"):
            object.__setattr__(self, key, value)
            return
        ready = getattr(self, "_ready", False)
        check = self.settable.get(key)
        if check is not None:
            value = check(self, key, value)
        elif ready:
            checks.refuse(self.where(), f"attribute {key!r} cannot be set after the layer is "
                          "built", f"settable attributes are {sorted(self.settable)}; build a "
                          "new layer to change anything else")
        old = self.__dict__.get(key, _UNSET)
        object.__setattr__(self, key, value)
        if ready:
            self.network._version += 1
            if key != "name":
                try:
                    self._changed()
                except Exception:
                    object.__setattr__(self, key, old)
                    self._retype()
                    raise

    def where(self) -> str:
        """How messages name this layer."""
        name = self.__dict__.get("name")
        return f"layer {name!r} ({self.type.value})" if name else f"{type(self).__name__}"

    def _changed(self):
        """A parameter or input changed: infer this layer again (refusing a bad change now),
        then every layer downstream, producers before consumers, without recursion."""
        old = self._types
        self._types = None
        try:
            new = self.output_types()
        except Exception:
            self._types = old
            raise
        if new == old:
            return
        dirty = self.network._downstream(self)
        for layer in dirty:
            layer._types = None
        for layer in dirty:
            layer.output_types()

    def _retype(self):
        """After a refused change was undone: infer this layer and its users again."""
        for layer in [self] + self.network._downstream(self):
            layer._types = None
        try:
            self._changed()
        except StructureError:
            pass  # a layer TensorRT lets be typed later (a concatenation's axis) stays so

    # -- TensorRT's ILayer surface -------------------------------------------------------
    @property
    def num_inputs(self) -> int:
        return len(self._inputs)

    @property
    def num_outputs(self) -> int:
        return len(self._outputs)

    def get_input(self, index: int) -> Optional[Tensor]:
        index = checks.index_arg(self.where(), "index", index)
        if not 0 <= index < len(self._inputs):
            return None
        return self._inputs[index]

    def get_output(self, index: int) -> Tensor:
        index = checks.index_arg(self.where(), "index", index)
        if not 0 <= index < len(self._outputs):
            raise StructureError(f"layer {self.name!r}", "stream/shape",
                                 f"has no output {index}", f"it has {len(self._outputs)}")
        return self._outputs[index]

    def set_input(self, index: int, tensor: Tensor) -> None:
        index = checks.index_arg(self.where(), "index", index)
        if not 0 <= index < self.max_inputs():
            raise StructureError(f"layer {self.name!r}", "stream/shape",
                                 f"has no input {index}",
                                 f"it takes at most {self.max_inputs()} inputs")
        self.network._check_owned(tensor, self)
        while len(self._inputs) <= index:
            self._inputs.append(None)
        old = self._inputs[index]
        self._inputs[index] = tensor
        self.network._version += 1
        try:
            self._changed()  # refuse a bad input now
        except Exception:
            self._inputs[index] = old
            self._retype()
            raise

    def max_inputs(self) -> int:
        return len(self._inputs)

    # -- semantics ---------------------------------------------------------------------------
    def inputs(self) -> List[Optional[Tensor]]:
        return list(self._inputs)

    def output_types(self) -> list:
        """Static types of the outputs (`stream/shape`), inferred once and cached."""
        if self._types is None:
            if getattr(self, "_inferring", False):
                raise StructureError(f"layer {self.name!r}", "structure/acyclic",
                                     "its type depends on itself through a cycle that is not "
                                     "a recurrence's input 1", "break the cycle with a recurrence")
            self._inferring = True
            try:
                self._types = self.compute_types()
            finally:
                self._inferring = False
        return self._types

    def compute_types(self) -> list:
        return [self.infer()]

    def infer(self):
        raise NotImplementedError

    def kernel(self):
        """The function applied to one element of each input: f(*values) -> value."""
        raise NotImplementedError

    def refuse(self, problem: str, fix: str = "", rule: str = "stream/shape"):
        raise ShapeError(f"layer {self.name!r} ({self.type.value})", rule, problem, fix)

    def input_type(self, index: int) -> TensorType:
        t = self._inputs[index]
        if t is None:
            self.refuse(f"input {index} is not set", f"call set_input({index}, tensor)",
                        rule="structure/recurrence" if self.type is LayerType.RECURRENCE
                        else "stream/shape")
        ty = t.type
        if not isinstance(ty, TensorType):
            self.refuse(f"input {index} ({t.name}) is not a tensor but {ty!r}",
                        "only a frontend's own function layers take sequences or optionals")
        if ty.shape is None and not self.any_rank:
            self.refuse(f"input {index} ({t.name}) has no known rank ({ty!r})",
                        "give it a known rank, or compute it with a function layer",
                        rule="structure/shapes")
        return ty

    def op_label(self) -> str:
        """The layer's function as a plan node names it, e.g. `elementwise.SUM`."""
        for attr in ("op", "activation_type"):
            value = getattr(self, attr, None)
            if hasattr(value, "name"):
                return f"{self.type.value}.{value.name}"
        return self.type.value

    def describe(self) -> str:
        """The expression that built the layer, for reprs and messages."""
        args = ", ".join(t.name if t is not None else "<unset>" for t in self._inputs)
        return f"{self.type.value}({args})"

    def __repr__(self) -> str:
        return f"<{self.name} = {self.describe()}>"


_UNSET = object()


def readonly(value):
    """Memoised elements are read-only, so no layer can corrupt them (stream/memo)."""
    if isinstance(value, np.ndarray):
        value.flags.writeable = False
    return value


__all__ = ["Tensor", "Layer", "readonly", "OpaqueType", "TensorType"]
