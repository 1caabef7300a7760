"""Layers that move data without arithmetic: constant, identity, cast, shuffle, slice,
concatenation, gather."""
from __future__ import annotations

import numpy as np

from .. import checks
from ..enums import LayerType
from ..types import TensorType
from .base import Layer, readonly


class ConstantLayer(Layer):
    type = LayerType.CONSTANT

    def __init__(self, network, shape, weights):
        self.shape = checks.dims_arg("add_constant", "shape", shape)
        # frontends may hold constants of other dtypes (ONNX strings) for their own kernels
        kinds = "biuf" if network.profile == "tensorrt" else None
        values = checks.weights_arg("add_constant", weights, kinds)
        if values.size != int(np.prod(self.shape, dtype=np.int64)):
            self.name = "constant"
            self.refuse(f"{values.size} weights do not fill shape {self.shape}",
                        "pass as many weights as the shape's dimensions multiply to")
        self.weights = readonly(values.reshape(self.shape).copy())
        super().__init__(network, [])

    def infer(self):
        return TensorType(self.weights.dtype, self.shape)

    def kernel(self):
        w = self.weights
        return lambda: w

    def describe(self):
        return f"constant({self.weights.tolist() if self.weights.size <= 6 else '...'})"


class IdentityLayer(Layer):
    type = LayerType.IDENTITY
    any_rank = True  # the identity of a value of unknown rank has unknown rank

    def __init__(self, network, x):
        super().__init__(network, [x])

    def infer(self):
        return self.input_type(0)

    def kernel(self):
        return lambda x: x


class CastLayer(Layer):
    type = LayerType.CAST
    settable = {**Layer.settable, "to_type": checks.a_dtype}

    def __init__(self, network, x, to_type):
        self.to_type = to_type
        super().__init__(network, [x])

    def infer(self):
        return TensorType(self.to_type, self.input_type(0).shape)

    def kernel(self):
        to = self.to_type
        return lambda x: np.asarray(x).astype(to)


class ShuffleLayer(Layer):
    """first_transpose, then reshape_dims (0 copies a dimension, -1 is inferred), then
    second_transpose."""

    type = LayerType.SHUFFLE
    settable = {**Layer.settable, "first_transpose": checks.some_dims(optional=True),
                "reshape_dims": checks.some_dims(low=-1, optional=True),
                "second_transpose": checks.some_dims(optional=True),
                "zero_is_placeholder": checks.a_bool}

    def __init__(self, network, x):
        self.first_transpose = None
        self.reshape_dims = None
        self.second_transpose = None
        self.zero_is_placeholder = True
        super().__init__(network, [x])

    def _permute(self, shape, perm, which):
        if perm is None:
            return shape
        perm = tuple(perm)[:len(shape)]
        if sorted(perm) != list(range(len(shape))):
            self.refuse(f"{which} {perm} is not a permutation of {len(shape)} axes",
                        f"list each axis 0..{len(shape) - 1} once")
        return tuple(shape[p] for p in perm)

    def _reshape(self, shape):
        if self.reshape_dims is None:
            return shape
        dims = list(self.reshape_dims)
        for i, d in enumerate(dims):
            if d == 0 and self.zero_is_placeholder:
                if i >= len(shape):
                    self.refuse(f"reshape_dims[{i}] = 0 copies a dimension the input lacks",
                                "give that dimension's size, or set zero_is_placeholder False")
                dims[i] = shape[i]
        if None in shape:
            return tuple(None if d == -1 else d for d in dims)
        total = int(np.prod(shape, dtype=np.int64))
        if dims.count(-1) > 1:
            self.refuse("reshape_dims has more than one -1",
                        "give every dimension but one its size")
        if -1 in dims:
            known = int(np.prod([d for d in dims if d != -1], dtype=np.int64))
            if known == 0 or total % known:
                self.refuse(f"cannot reshape {shape} to {tuple(self.reshape_dims)}",
                            "make the known dimensions divide the element count")
            dims[dims.index(-1)] = total // known
        if int(np.prod(dims, dtype=np.int64)) != total:
            self.refuse(f"cannot reshape {shape} to {tuple(self.reshape_dims)}",
                        "give dimensions whose product is the input's element count")
        return tuple(dims)

    def infer(self):
        t = self.input_type(0)
        shape = self._permute(t.shape, self.first_transpose, "first_transpose")
        shape = self._reshape(shape)
        shape = self._permute(shape, self.second_transpose, "second_transpose")
        return TensorType(t.dtype, shape)

    def kernel(self):
        t = self.input_type(0)
        p1 = None if self.first_transpose is None else tuple(self.first_transpose)[:t.rank]
        mid = self._permute(t.shape, self.first_transpose, "first_transpose")
        new = None if self.reshape_dims is None else self._reshape(mid)
        p2 = None if self.second_transpose is None else tuple(self.second_transpose)[:len(new or mid)]

        def shuffle(x):
            if p1 is not None:
                x = np.transpose(x, p1)
            if new is not None:
                x = np.reshape(x, new)
            if p2 is not None:
                x = np.transpose(x, p2)
            return x
        return shuffle


class SliceLayer(Layer):
    type = LayerType.SLICE
    settable = {**Layer.settable, "start": checks.some_dims(low=None), "shape": checks.some_dims(),
                "stride": checks.some_dims(low=None)}

    def __init__(self, network, x, start, shape, stride):
        self.start, self.shape, self.stride = start, shape, stride
        super().__init__(network, [x])

    def infer(self):
        t = self.input_type(0)
        if not len(self.start) == len(self.shape) == len(self.stride) == t.rank:
            self.refuse(f"start/shape/stride must each have {t.rank} entries",
                        "give one start, size and stride per input axis")
        for axis, (s, n, k, d) in enumerate(zip(self.start, self.shape, self.stride, t.shape)):
            if n < 0 or (n > 0 and d is not None and not (0 <= s < d and 0 <= s + (n - 1) * k < d)):
                self.refuse(f"slice on axis {axis} (start {s}, size {n}, stride {k}) leaves "
                            f"the extent {d}", "keep every sliced index inside the input")
        return TensorType(t.dtype, self.shape)

    def kernel(self):
        """Basic slicing (a view); a zero stride repeats one index, which needs a gather."""
        if any(k == 0 for k in self.stride):
            index = tuple(np.arange(s, s + n * k, k) if k else np.full(n, s)
                          for s, n, k in zip(self.start, self.shape, self.stride))
            return lambda x: x[np.ix_(*index)] if index else x
        index = tuple(slice(s, s + n * k if s + n * k >= 0 else None, k) if n else slice(0, 0)
                      for s, n, k in zip(self.start, self.shape, self.stride))
        return lambda x: x[index]


class ConcatenationLayer(Layer):
    type = LayerType.CONCATENATION
    typed_after_add = True  # `.axis` is set after add_concatenation, as in TensorRT
    settable = {**Layer.settable, "axis": checks.an_int()}

    def __init__(self, network, inputs):
        self.axis = 0
        super().__init__(network, list(inputs))

    def infer(self):
        types = [self.input_type(i) for i in range(self.num_inputs)]
        if not types:
            self.refuse("needs at least one input", "pass a non-empty list of tensors")
        rank = types[0].rank
        axis = self.axis + rank if self.axis < 0 else self.axis
        if not 0 <= axis < rank:
            self.refuse(f"axis {self.axis} is out of range for rank {rank}",
                        f"set axis between {-rank} and {rank - 1}")
        for t in types:
            if t.rank != rank or t.dtype != types[0].dtype or any(
                    a != b for i, (a, b) in enumerate(zip(t.shape, types[0].shape)) if i != axis):
                self.refuse(f"inputs {types} do not concatenate on axis {axis}",
                            "give the inputs one dtype and equal sizes off that axis")
        sizes = [t.shape[axis] for t in types]
        total = None if None in sizes else sum(sizes)
        shape = types[0].shape[:axis] + (total,) + types[0].shape[axis + 1:]
        return TensorType(types[0].dtype, shape)

    def kernel(self):
        rank = self.input_type(0).rank
        axis = self.axis + rank if self.axis < 0 else self.axis
        return lambda *xs: np.concatenate(xs, axis=axis)


class GatherLayer(Layer):
    type = LayerType.GATHER
    settable = {**Layer.settable, "axis": checks.an_int()}

    def __init__(self, network, data, indices, axis: int):
        self.axis = axis
        super().__init__(network, [data, indices])

    def infer(self):
        d, i = self.input_type(0), self.input_type(1)
        if i.dtype not in (np.int32, np.int64):
            self.refuse(f"indices must be int32 or int64, got {i.dtype}",
                        "cast the indices to int32")
        if not 0 <= self.axis < d.rank:
            self.refuse(f"axis {self.axis} is out of range for rank {d.rank}",
                        f"gather along an axis from 0 to {d.rank - 1}")
        return TensorType(d.dtype, d.shape[:self.axis] + i.shape + d.shape[self.axis + 1:])

    def kernel(self):
        axis, name = self.axis, self.name
        extent = self.input_type(0).shape[axis]

        def gather(data, indices):
            from ..errors import EvaluationError
            if np.any(indices >= extent) or np.any(indices < -extent):
                raise EvaluationError(f"layer {name!r} (gather)", "stream/map",
                                      f"index out of range for extent {extent}",
                                      "keep gather indices inside the data's axis")
            return np.take(data, indices, axis=axis)
        return gather
