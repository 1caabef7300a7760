"""The onnxscript cases of the exporter corpus (see make_corpus.py): loops as onnxscript
compiles Python `for`, `while` and `break`, lists built with the sequence ops, a buffer grown
by Concat, and conditions of shape [1]."""


import numpy as np
from onnxscript import BOOL, FLOAT, INT64, script
from onnxscript import opset18 as op

F32, I64 = np.float32, np.int64


@script()
def for_sum(x: FLOAT[None], n: INT64) -> FLOAT[None]:
    acc = op.Identity(x)
    for i in range(n):
        acc = op.Add(acc, op.Mul(x, op.CastLike(i, x)))
    return acc


@script()
def while_halve(x: FLOAT) -> FLOAT:
    cond = op.Greater(x, op.Constant(value_float=1.0))
    while cond:
        x = op.Div(x, op.Constant(value_float=2.0))
        cond = op.Greater(x, op.Constant(value_float=1.0))
    return x


@script()
def for_break(x: FLOAT, n: INT64) -> FLOAT:
    for i in range(n):
        x = op.Mul(x, op.Constant(value_float=2.0))
        big = op.Greater(x, op.Constant(value_float=100.0))
        if big:
            break
    return x


@script()
def for_break_count(x: FLOAT, n: INT64) -> tuple[FLOAT, INT64]:
    trips = op.Constant(value_int=0)
    for i in range(n):
        trips = op.Add(trips, op.Constant(value_int=1))
        x = op.Add(x, x)
        stop = op.Greater(x, op.Constant(value_float=50.0))
        if stop:
            break
    return x, trips


@script()
def for_break_1(x: FLOAT[1], n: INT64) -> FLOAT[1]:
    for i in range(n):
        x = op.Add(x, op.Constant(value_floats=[5.0]))
        big = op.Greater(x, op.Constant(value_floats=[12.0]))
        if big:
            break
    return x


@script()
def grow_concat(x: FLOAT[2], n: INT64) -> FLOAT[None]:
    res = op.Identity(x)
    for i in range(n):
        res = op.Concat(res, op.Mul(x, op.CastLike(i, x)), axis=0)
    return res


@script()
def grow_from_empty(n: INT64) -> INT64[None]:
    res = op.Constant(value_ints=[1])
    res = op.Slice(res, op.Constant(value_ints=[0]), op.Constant(value_ints=[0]))
    for i in range(n):
        res = op.Concat(res, op.Reshape(op.Mul(i, i), op.Constant(value_ints=[1])), axis=0)
    return res


@script()
def list_build(x: FLOAT[2], n: INT64) -> FLOAT[None, 2]:
    items = op.SequenceEmpty(dtype=1)
    for i in range(n):
        items = op.SequenceInsert(items, op.Add(x, op.CastLike(i, x)))
    return op.ConcatFromSequence(items, axis=0, new_axis=1)


@script()
def list_prepend(n: INT64) -> FLOAT[None]:
    items = op.SequenceEmpty(dtype=1)
    for i in range(n):
        fi = op.Cast(i, to=1)
        items = op.SequenceInsert(items, op.Reshape(fi, op.Constant(value_ints=[1])),
                                  op.Constant(value_int=0))
    return op.ConcatFromSequence(items, axis=0)


@script()
def list_read(x: FLOAT[None], n: INT64) -> FLOAT:
    parts = op.SplitToSequence(x, op.Constant(value_int=2), axis=0)
    total = op.Constant(value_float=0.0)
    for i in range(n):
        part = op.SequenceAt(parts, i)
        total = op.Add(total, op.ReduceSum(part, keepdims=0))
    return total


@script()
def while_cond_1(x: FLOAT[1], limit: FLOAT[1]) -> FLOAT[1]:
    cond = op.Less(x, limit)
    while cond:
        x = op.Mul(x, op.Constant(value_floats=[3.0]))
        cond = op.Less(x, limit)
    return x


@script()
def for_cond_1(x: FLOAT[1], n: INT64[1]) -> FLOAT[1]:
    for i in range(n):
        x = op.Add(x, op.Constant(value_floats=[1.5]))
    return x


@script()
def nested_for(n: INT64, m: INT64) -> INT64:
    total = op.Constant(value_int=0)
    for i in range(n):
        for j in range(m):
            total = op.Add(total, op.Mul(i, j))
    return total


@script()
def while_break(x: FLOAT, limit: FLOAT) -> FLOAT:
    cond = op.Less(x, limit)
    while cond:
        x = op.Add(x, op.Constant(value_float=7.0))
        cond = op.Less(x, limit)
        odd = op.Equal(op.Mod(op.Cast(x, to=7), op.Constant(value_int=2)),
                       op.Constant(value_int=1))
        if odd:
            break
    return x


HONOUR = {"A15": "honour"}  # onnxscript's break: Loop(M, cond omitted), body condition false

CASES = [
    ("for_sum", for_sum, {"x": np.array([1, 2], F32), "n": np.array(4, I64)},
     "for loop: acc += x * i", None),
    ("for_zero_trips", for_sum, {"x": np.array([1, 2], F32), "n": np.array(0, I64)},
     "for loop run zero times", None),
    ("while_halve", while_halve, {"x": np.array(37.0, F32)},
     "while loop: halve until <= 1", None),
    ("for_break", for_break, {"x": np.array(3.0, F32), "n": np.array(10, I64)},
     "for loop with break: double until > 100", HONOUR),
    ("for_break_count", for_break_count, {"x": np.array(1.0, F32), "n": np.array(20, I64)},
     "for loop with break, counting trips", HONOUR),
    ("for_break_1", for_break_1, {"x": np.array([1.0], F32), "n": np.array(10, I64)},
     "for loop with break on a [1] condition", HONOUR),
    ("while_break", while_break, {"x": np.array(0.0, F32), "limit": np.array(100.0, F32)},
     "while loop with break on an odd value", None),
    ("grow_concat", grow_concat, {"x": np.array([1, 2], F32), "n": np.array(3, I64)},
     "growing buffer: res = Concat(res, x * i)", None),
    ("grow_from_empty", grow_from_empty, {"n": np.array(4, I64)},
     "growing buffer that enters as [0]", None),
    ("list_build", list_build, {"x": np.array([1, 2], F32), "n": np.array(3, I64)},
     "SequenceEmpty + SequenceInsert per trip, ConcatFromSequence(new_axis=1)", None),
    ("list_prepend", list_prepend, {"n": np.array(4, I64)},
     "SequenceInsert at position 0 per trip, ConcatFromSequence", None),
    ("list_read", list_read, {"x": np.arange(6, dtype=F32), "n": np.array(3, I64)},
     "SplitToSequence, SequenceAt per trip", None),
    ("while_cond_1", while_cond_1, {"x": np.array([1.0], F32), "limit": np.array([50.0], F32)},
     "while loop whose condition has shape [1]", None),
    # eager mode cannot run range() over a [1] tensor: the script's own Python, in numpy
    ("for_cond_1", for_cond_1, {"x": np.array([1.0], F32), "n": np.array([3], I64)},
     "for loop whose trip count has shape [1]", None,
     lambda x, n: x + F32(1.5) * int(n[0])),
    ("nested_for", nested_for, {"n": np.array(3, I64), "m": np.array(4, I64)},
     "nested for loops: sum of i * j", None),
]
