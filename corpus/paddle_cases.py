"""The paddle cases of the exporter corpus (see make_corpus.py): Python `while`, `break` and
`if` on tensors in a paddle Layer, turned into static `while`/`cond` by
`paddle.jit.to_static` and written by paddle2onnx as Loop and If. The answer is the Layer run
eagerly (dygraph)."""
import numpy as np
import paddle

F32, I64 = np.float32, np.int64


class WhileCounter(paddle.nn.Layer):
    """while i < n: acc = acc * 0.5 + x."""

    def forward(self, x, n):
        i = paddle.zeros([1], "int64")
        acc = paddle.zeros_like(x)
        while i < n:
            acc = acc * 0.5 + x
            i = i + 1
        return acc


class WhileValue(paddle.nn.Layer):
    """while sum(x) < limit: x = x * 3 (the condition reads the carried value)."""

    def forward(self, x, limit):
        while x.sum() < limit:
            x = x * 3.0
        return x


class IfInWhile(paddle.nn.Layer):
    """An `if` on the carried value inside `while` (an If in a Loop body)."""

    def forward(self, x, n):
        i = paddle.zeros([1], "int64")
        while i < n:
            if x.sum() > 10.0:
                x = x * 0.5
            else:
                x = x + 3.0
            i = i + 1
        return x


class TopIf(paddle.nn.Layer):
    """An `if` on a tensor outside loops (an If in the main graph)."""

    def forward(self, x):
        if x.sum() > 0:
            y = paddle.cumsum(x)
        else:
            y = x * x
        return y


class NestedWhile(paddle.nn.Layer):
    """while in while: total += i * j for j < i < n."""

    def forward(self, n):
        i = paddle.zeros([1], "int64")
        total = paddle.zeros([1], "int64")
        while i < n:
            j = paddle.zeros([1], "int64")
            while j < i:
                total = total + i * j
                j = j + 1
            i = i + 1
        return total


class TwoCarried(paddle.nn.Layer):
    """while i < n with three carried values (paddle2onnx writes `for _ in range(n)` over a
    0-d n as a model ONNX's shape inference refuses: a Cast of rank 1 declared rank 0)."""

    def forward(self, x, n):
        s = paddle.zeros_like(x)
        p = paddle.ones_like(x)
        i = paddle.zeros([1], "int64")
        while i < n:
            s = s + x * i.astype("float32")
            p = p * (1.0 + 0.1 * x)
            i = i + 1
        return s, p


class GrowingConcat(paddle.nn.Layer):
    """A buffer grown with paddle.concat on every trip (a growing carried value). It starts
    as a copy of x: started as x itself, paddle2onnx 2.1 names the carried body input `x`,
    which hides the graph's x that the body also reads (ONNX scoping: the body's own input
    wins), so its model concatenates buf * (i + 1), not x * (i + 1)."""

    def forward(self, x, n):
        buf = x * 1.0
        i = paddle.zeros([1], "int64")
        while i < n:
            buf = paddle.concat([buf, x * (i + 1).astype("float32")], axis=0)
            i = i + 1
        return buf


class WhileBreak(paddle.nn.Layer):
    """while with break: double x until its sum passes 40, at most n trips."""

    def forward(self, x, n):
        i = paddle.zeros([1], "int64")
        while i < n:
            x = x + x
            i = i + 1
            if x.sum() > 40.0:
                break
        return x


CASES = [
    ("while_counter", WhileCounter(), {"x": np.array([1.0, -2.0], F32),
                                       "n": np.array([6], I64)},
     "while i < n with x read from outside"),
    ("while_value", WhileValue(), {"x": np.array([1.0, 2.0], F32),
                                   "limit": np.array([100.0], F32)},
     "while on the carried value"),
    ("if_in_while", IfInWhile(), {"x": np.array([1.0, 2.0], F32), "n": np.array([7], I64)},
     "if on the carried value inside while (paddle cond in while)"),
    ("top_if", TopIf(), {"x": np.array([1.0, -3.0, 4.0], F32)},
     "if outside loops"),
    ("nested_while", NestedWhile(), {"n": np.array([6], I64)},
     "while in while"),
    ("two_carried", TwoCarried(), {"x": np.array([1.0, 0.5], F32), "n": np.array([5], I64)},
     "while with a counter and two more carried values"),
    ("growing_concat", GrowingConcat(), {"x": np.array([[1.0, 2.0]], F32),
                                         "n": np.array([3], I64)},
     "paddle.concat grows a carried buffer per trip"),
    ("while_break", WhileBreak(), {"x": np.array([1.0, 2.0], F32), "n": np.array([10], I64)},
     "while with break"),
]
