"""The network builder. Its surface follows TensorRT's INetworkDefinition, so code written
for `tensorrt` builds the same network here."""
from __future__ import annotations

from typing import Optional

import numpy as np

from . import checks
from .conditional import IfConditional
from .errors import InputError, ShapeError, StructureError, builder_call
from .layers.base import Tensor
from .layers.elementwise import ElementWiseLayer, SelectLayer
from .layers.function import FunctionLayer
from .layers.matmul import MatrixMultiplyLayer
from .layers.reduce import ReduceLayer
from .layers.shape import (CastLayer, ConcatenationLayer, ConstantLayer, GatherLayer,
                           IdentityLayer, ShuffleLayer, SliceLayer)
from .layers.unary import ActivationLayer, UnaryLayer
from .loop import Loop
from .types import OpaqueType, TensorType

PROFILES = ("tensorrt", "onnx", "openvino")


class Network:
    """A network definition. `profile` selects which restrictions apply: "tensorrt" (the
    default) checks TensorRT's own; "onnx" and "openvino" relax them for lowered programs."""

    def __init__(self, profile: str = "tensorrt"):
        if profile not in PROFILES:
            raise StructureError("Network", "profile/tensorrt-dtypes",
                                 f"unknown profile {profile!r}", f"use one of {PROFILES}")
        self.profile = profile
        self.layers = []
        self.loops = []
        self.conditionals = []
        self._inputs = []
        self._outputs = []
        self._counter = 0
        self._version = 0  # bumped by every change; compiled plans are cached per version

    # -- bookkeeping ------------------------------------------------------------------------
    def _fresh_layer_name(self, kind: str) -> str:
        self._counter += 1
        return f"{kind}_{self._counter}"

    def _add(self, layer):
        try:
            layer.output_types()  # a bad layer is refused when it is added (`stream/shape`)
        except ShapeError:
            if not layer.typed_after_add:
                raise
        layer._position = len(self.layers)
        self._version += 1
        self.layers.append(layer)
        return layer

    def _downstream(self, layer):
        """Layers that read `layer`'s outputs, transitively, in the order they were added."""
        users = {}
        for other in self.layers:
            for t in other.inputs():
                if t is not None and t.producer is not None:
                    users.setdefault(id(t.producer), []).append(other)
        found, stack = {}, [layer]
        while stack:
            for user in users.get(id(stack.pop()), []):
                if id(user) not in found and user is not layer:
                    found[id(user)] = user
                    stack.append(user)
        return sorted(found.values(), key=lambda x: getattr(x, "_position", 0))

    def _check_owned(self, tensor, user) -> None:
        """`structure/builder-args`: a tensor argument is a Tensor of this network."""
        where = user if isinstance(user, str) else getattr(user, "where", lambda: repr(user))()
        if not isinstance(tensor, Tensor):
            raise StructureError(where, "structure/builder-args",
                                 f"input {tensor!r} is not a lazyloop Tensor",
                                 "pass the result of get_output(i) or add_input")
        if tensor.network is not self:
            raise StructureError(where, "structure/builder-args",
                                 f"tensor {tensor.name!r} belongs to another network",
                                 "build every layer from tensors of the network it is added to")

    # -- TensorRT's INetworkDefinition surface ------------------------------------------------
    @builder_call
    def add_input(self, name: str, dtype, shape=None) -> Tensor:
        """A network input. `dtype` may be an `OpaqueType` (an ONNX sequence or optional, for
        frontends); then `shape` is not used."""
        name = checks.name_arg("add_input", "name", name)
        if any(t.name == name for t in self._inputs):
            raise InputError(f"input {name!r}", "stream/shape", "an input of that name exists",
                             "give every input a distinct name")
        if isinstance(dtype, OpaqueType):
            t = Tensor(self, None, 0, name, dtype)
            self._inputs.append(t)
            self._version += 1
            return t
        if shape is None and self.profile == "tensorrt":
            checks.refuse(f"input {name!r}", "has no shape", "pass shape, a tuple of ints")
        if shape is not None:   # None: any rank (relaxed profiles, `structure/shapes`)
            shape = checks.dims_arg(f"input {name!r}", "shape", shape, low=None, allow_none=True)
            shape = tuple(None if d is None or d < 0 else d for d in shape)
        dtype = checks.dtype_arg(f"input {name!r}", "dtype", dtype, kinds="biuf" if
                                 self.profile == "tensorrt" else None)
        if self.profile == "tensorrt" and None in shape:
            raise InputError(f"input {name!r}", "stream/shape",
                             f"dynamic dimensions {shape} are not supported",
                             "give every dimension its size (stream/shape is static)")
        t = Tensor(self, None, 0, name, TensorType(dtype, shape))
        self._inputs.append(t)
        self._version += 1
        return t

    @builder_call
    def mark_output(self, tensor: Tensor) -> None:
        self._check_owned(tensor, "mark_output")
        if not any(t is tensor for t in self._outputs):
            self._outputs.append(tensor)
            self._version += 1

    def unmark_output(self, tensor: Tensor) -> None:
        self._check_owned(tensor, "unmark_output")
        self._outputs = [t for t in self._outputs if t is not tensor]
        self._version += 1

    @property
    def num_inputs(self) -> int:
        return len(self._inputs)

    @property
    def num_outputs(self) -> int:
        return len(self._outputs)

    @property
    def num_layers(self) -> int:
        return len(self.layers)

    def get_input(self, index: int) -> Optional[Tensor]:
        """The index-th input, or None (as TensorRT returns a null pointer) past the end."""
        index = checks.index_arg("get_input", "index", index)
        return self._inputs[index] if 0 <= index < len(self._inputs) else None

    def get_output(self, index: int) -> Optional[Tensor]:
        index = checks.index_arg("get_output", "index", index)
        return self._outputs[index] if 0 <= index < len(self._outputs) else None

    def get_layer(self, index: int):
        index = checks.index_arg("get_layer", "index", index)
        return self.layers[index] if 0 <= index < len(self.layers) else None

    @builder_call
    def add_loop(self) -> Loop:
        loop = Loop(self, len(self.loops))
        self.loops.append(loop)
        return loop

    @builder_call
    def add_if_conditional(self) -> IfConditional:
        cond = IfConditional(self, len(self.conditionals))
        self.conditionals.append(cond)
        return cond

    @builder_call
    def add_constant(self, shape, weights):
        return self._add(ConstantLayer(self, shape, weights))

    @builder_call
    def add_elementwise(self, input1, input2, op):
        return self._add(ElementWiseLayer(self, input1, input2, op))

    @builder_call
    def add_unary(self, input, op):  # noqa: A002 -- TensorRT's parameter name
        return self._add(UnaryLayer(self, input, op))

    @builder_call
    def add_activation(self, input, type):  # noqa: A002
        return self._add(ActivationLayer(self, input, type))

    @builder_call
    def add_matrix_multiply(self, input0, op0, input1, op1):
        return self._add(MatrixMultiplyLayer(self, input0, op0, input1, op1))

    @builder_call
    def add_identity(self, input):  # noqa: A002
        return self._add(IdentityLayer(self, input))

    @builder_call
    def add_cast(self, input, to_type):  # noqa: A002
        return self._add(CastLayer(self, input, to_type))

    @builder_call
    def add_shuffle(self, input):  # noqa: A002
        return self._add(ShuffleLayer(self, input))

    @builder_call
    def add_slice(self, input, start, shape, stride):  # noqa: A002
        return self._add(SliceLayer(self, input, start, shape, stride))

    @builder_call
    def add_concatenation(self, inputs):
        inputs = checks.tensors_arg("add_concatenation", "inputs", self, inputs)
        return self._add(ConcatenationLayer(self, inputs))

    @builder_call
    def add_select(self, condition, then_input, else_input):
        return self._add(SelectLayer(self, condition, then_input, else_input))

    @builder_call
    def add_reduce(self, input, op, axes, keep_dims):  # noqa: A002
        return self._add(ReduceLayer(self, input, op, axes, keep_dims))

    @builder_call
    def add_gather(self, input, indices, axis):  # noqa: A002
        return self._add(GatherLayer(self, input, indices, axis))

    # -- for frontends ------------------------------------------------------------------------
    @builder_call
    def add_function(self, fn, inputs, output_types, op: str = "function",
                     name: Optional[str] = None):
        """A layer applying `fn(*input_values) -> tuple of output values` element-wise; how
        ONNX and OpenVINO nodes are lowered. Inputs may be None (an absent optional input)."""
        fn = checks.callable_arg("add_function", "fn", fn)
        inputs = checks.tensors_arg("add_function", "inputs", self, inputs, optional=True)
        if not isinstance(output_types, (list, tuple)) or not all(
                isinstance(t, (TensorType, OpaqueType)) for t in output_types):
            checks.refuse("add_function", f"output_types {output_types!r} are not a list of "
                          "types", "pass a list of TensorType or OpaqueType")
        op = checks.name_arg("add_function", "op", op)
        layer = FunctionLayer(self, fn, inputs, output_types, op)
        if name:
            layer.name = name
        return self._add(layer)

    @builder_call
    def add_undefined(self, type_):
        """A value no source defines (for frontends): filled with the dtype's fill and masked
        as undefined wherever it flows (DESIGN §4)."""
        from .undefined import Partial, filled

        if not isinstance(type_, TensorType):
            checks.refuse("add_undefined", f"type {type_!r} is not a TensorType",
                          "pass the TensorType of the value left undefined")
        shape = tuple(0 if d is None else d for d in type_.shape or ())

        def undefined():
            return (Partial(filled(shape, type_.dtype), np.zeros(shape, bool)),)
        return self.add_function(undefined, [], [type_], op="undefined")

    def __repr__(self):
        return (f"<Network profile={self.profile} layers={len(self.layers)} "
                f"loops={len(self.loops)} outputs={[t.name for t in self._outputs]}>")
