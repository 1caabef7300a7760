"""The calls and cases of the sequence kernel law (rules: onnx/node, onnx/sequences): for
each op of tests/sequence_law.py, its nodes (every attribute value the law tries, every
count of inputs its schema allows) and, for a seed, the arguments fed to one node -- within
its schema and just outside it (a non-list where a list goes, a float position, an element
of another dtype), where the binding must refuse as the reference refuses."""
from __future__ import annotations

import functools

import numpy as np
import onnx.helper
from sequence_law import (ML_OPS, OPSETS, SEQUENCE_OPS, SHAPES, Call, defined, dtypes_for,
                          element_types, positions, sequences, tensor)

#: SequenceEmpty's dtype attribute: each element type its schema allows (as TensorProto
#: numbers), and numbers that name none (0, 99)
ELEMENT_TYPE_NUMBERS = tuple(onnx.helper.np_dtype_to_tensor_dtype(d)
                             for d in element_types("SequenceEmpty", "S")) + (0, 99)
AXES = (-4, -3, -2, -1, 0, 1, 2, 3)
SPLIT_SHAPES = ((), (0,), (5,), (4, 3), (2, 0, 3), (3, 1, 2))


def nodes(op: str) -> tuple:
    """The op's nodes the law binds, before the opset is chosen."""
    if op == "SequenceEmpty":
        return (Call(op, (), 0),) + tuple(Call(op, (("dtype", t),), 0)
                                          for t in ELEMENT_TYPE_NUMBERS)
    if op == "SequenceConstruct":
        return tuple(Call(op, (), n) for n in (1, 2, 3, 4))
    if op == "SequenceInsert":
        return (Call(op, (), 2), Call(op, (), 3))
    if op == "SequenceAt":
        return (Call(op, (), 2),)
    if op == "ConcatFromSequence":
        return tuple(Call(op, (("axis", a),) + n) for a in AXES
                     for n in ((), (("new_axis", 0),), (("new_axis", 1),)))
    if op == "SplitToSequence":
        return tuple(Call(op, a + k, n) for a in ((),) + tuple((("axis", x),) for x in AXES[1:-1])
                     for k in ((), (("keepdims", 0),), (("keepdims", 1),)) for n in (1, 2))
    if op in ("Optional", "OptionalHasElement"):
        return (Call(op, (), 0), Call(op, (), 1))
    if op == "ArrayFeatureExtractor":
        return (Call(op, (), 2),)
    return (Call(op, (), 1),)


@functools.lru_cache(maxsize=None)
def calls(op: str) -> tuple:
    """The op's nodes at each opset of OPSETS where it is defined and binds."""
    found = []
    for opset in OPSETS if op != "ArrayFeatureExtractor" else (1, 3):
        if defined(op, opset):
            found += [Call(c.op, c.attributes, c.arity, opset) for c in nodes(op)]
    return tuple(found)


def held_values(op: str, parameter: str, seed: int) -> list:
    """Tensors of each allowed dtype and shape, lists of them, and None (the empty
    optional)."""
    found = [None]
    for dtype in dtypes_for(op, parameter, seed):
        found += [tensor(dtype, shape, seed) for shape in SHAPES[seed % 3::3]]
        found += sequences(dtype, seed)[seed % 2::4]
    return found


def split_values(x: np.ndarray, axis: int, seed: int) -> list:
    """SplitToSequence's splits for `x` along `axis`: lengths (0-D, or a numpy integer
    scalar) from -1 to 7, 1-D lengths that sum to the axis (with zeros among them), that do
    not, with a negative one, none, in int64 and int32; float and 2-D ones outside the
    schema."""
    dim = x.shape[axis] if -x.ndim <= axis < x.ndim else 3
    dtype = (np.int64, np.int32)[seed % 2]
    found = [np.array(k, dtype) for k in (-1, 0, 1, 2, 3, 7)] + [np.int64(2)]
    lists = [[dim], [0, dim, 0], [1] * dim, [dim // 2, dim - dim // 2], [dim + 1],
             [dim - 1], [-1, dim + 1], []]
    return found + [np.array(k, dtype) for k in lists] + \
        [np.array([1.0] * dim, np.float32), np.array([[dim]], dtype)]


def cases(call, seed: int) -> list:
    """The argument lists fed to `call` for `seed`."""
    op = call.op
    if op == "SequenceEmpty":
        return [[]]
    if op == "SequenceConstruct":
        return [s[:call.arity] for d in dtypes_for(op, "T", seed) for s in sequences(d, seed)
                if len(s) >= call.arity]
    if op == "SequenceLength":
        return [[s] for d in dtypes_for(op, "S", seed) for s in sequences(d, seed)] + \
            [[tensor(np.float32, (2, 3), seed)], [None]]
    if op == "SequenceAt":
        return [[s, at] for d in dtypes_for(op, "S", seed) for s in sequences(d, seed)[::2]
                for at in positions(seed)] + [[tensor(np.int64, (3,), seed), np.array(0)]]
    if op == "SequenceInsert":
        return insert_cases(call, seed)
    if op == "ConcatFromSequence":
        return [[s] for d in dtypes_for(op, "S", seed) for s in sequences(d, seed)] + \
            [[None], [tensor(np.float32, (2, 3), seed)]]
    if op == "SplitToSequence":
        return split_cases(call, seed)
    if op in ("Optional", "OptionalHasElement", "OptionalGetElement"):
        parameter = "V" if op == "Optional" else "O"
        return [[v] for v in held_values(op, parameter, seed)] if call.arity else [[]]
    return feature_cases(seed)


def insert_cases(call, seed: int) -> list:
    found = []
    for dtype in dtypes_for(call.op, "T", seed):
        for s in sequences(dtype, seed)[::2]:
            x = tensor(dtype, SHAPES[seed % len(SHAPES)], seed + 9)
            if call.arity == 2:
                found += [[s, x], [s, s[0] if s else x]]
            else:
                found += [[s, x, at] for at in positions(seed)]
    return found + [[tensor(np.float32, (3,), seed), tensor(np.float32, (3,), seed)]
                    + [np.array(0)] * (call.arity - 2)]


def split_cases(call, seed: int) -> list:
    attributes = dict(call.attributes)
    axis = attributes.get("axis", 0)
    found = []
    for dtype in dtypes_for(call.op, "T", seed):
        for shape in SPLIT_SHAPES:
            x = tensor(dtype, shape, seed)
            if call.arity == 1:
                found.append([x])
            else:
                found += [[x, s] for s in split_values(x, axis, seed)[seed % 2::2]]
    return found


def feature_cases(seed: int) -> list:
    """ArrayFeatureExtractor: data of each type its schema allows and of several shapes,
    indices (int64 by the schema; int32 outside it) in range, negative, past the last axis,
    none, 0-D, one row, a matrix."""
    found = []
    indices = [np.array(i, np.int64) for i in ([0], [1, 0, 1], [-1], [-4], [3], [], 1,
                                               [[0, 2]], [[0], [1]], [[1, -1], [0, 0]])]
    indices.append(np.array([0, 1], np.int32))
    for dtype in dtypes_for("ArrayFeatureExtractor", "T", seed):
        for shape in ((), (0,), (4,), (2, 4), (2, 3, 4), (3, 0), (2, 2)):
            data = tensor(dtype, shape, seed)
            found += [[data, i] for i in indices[seed % 2::2]]
    return found + [[[tensor(np.float32, (2, 3), seed)], indices[0]]]


def all_cases(seed: int) -> list:
    """(call, arguments) for every op, node, opset and case, for `seed`."""
    return [(c, args) for op in SEQUENCE_OPS + ML_OPS for c in calls(op)
            for args in cases(c, seed)]
