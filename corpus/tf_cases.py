"""The TensorFlow cases of the exporter corpus (see make_corpus.py): `tf.while_loop`s
converted by tf2onnx, one of them with shape_invariants for a value that grows."""
import numpy as np
import tensorflow as tf

F32, I64 = np.float32, np.int64


def counter(x, n):
    """while i < n: acc = acc * 2 + x."""
    i0 = tf.constant(0, tf.int64)
    _, acc = tf.while_loop(lambda i, a: i < n, lambda i, a: (i + 1, a * 2.0 + x),
                           (i0, tf.zeros_like(x)))
    return acc


def grow(x, n):
    """A buffer that grows by one row per trip (shape_invariants [None, 2])."""
    i0 = tf.constant(0, tf.int64)
    _, buf = tf.while_loop(lambda i, b: i < n,
                           lambda i, b: (i + 1, tf.concat([b, x * tf.cast(i + 1, tf.float32)], 0)),
                           (i0, x), shape_invariants=(i0.shape, tf.TensorShape([None, 2])))
    return buf


def value_cond(x, limit):
    """while sum(x) < limit: x = x * 3 (the condition reads the carried value)."""
    (out,) = tf.while_loop(lambda a: tf.reduce_sum(a) < limit, lambda a: (a * 3.0,), (x,))
    return out


def tensor_array(x, n):
    """A TensorArray written once per trip, stacked after the loop."""
    ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
    i0 = tf.constant(0, tf.int32)

    def body(i, h, ta):
        h = tf.tanh(h + 1.0)
        return i + 1, h, ta.write(i, h)

    _, _, ta = tf.while_loop(lambda i, h, ta: i < tf.cast(n, tf.int32), body, (i0, x, ta))
    return ta.stack()


CASES = [
    ("while_counter", counter, {"x": np.array([1.0, -1.0], F32), "n": np.array(4, I64)},
     "tf.while_loop with a trip counter"),
    ("while_grow", grow, {"x": np.array([[1.0, 2.0]], F32), "n": np.array(3, I64)},
     "tf.while_loop, shape_invariants: a buffer grows by a row per trip"),
    ("while_value_cond", value_cond, {"x": np.array([1.0, 2.0], F32),
                                      "limit": np.array(100.0, F32)},
     "tf.while_loop whose condition reads the carried value"),
    ("tensor_array", tensor_array, {"x": np.array([0.0, 1.0], F32), "n": np.array(3, I64)},
     "TensorArray written per trip, stacked"),
]
