"""What the kernel tests share: a node's binding beside its reference kernel bound alone,
and the comparison of their answers (rule: onnx/node)."""
import numpy as np
import pytest
from onnx import helper

from lazyloop.core.errors import EvaluationError
from lazyloop.onnx import kernels


def same(got, want):
    """The same dtype, shape and values -- bit for bit (-0.0 is not 0.0) where numeric."""
    got = np.asarray(got)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    if got.dtype.kind in "biufc":
        assert np.ascontiguousarray(got).tobytes() == np.ascontiguousarray(want).tobytes()


def node_with(op, arity, outputs=1, **attributes):
    return helper.make_node(op, [f"x{k}" for k in range(arity)],
                            [f"y{k}" for k in range(outputs)], **attributes)


def bound_pair(op, arity, opset=17, outputs=1, **attributes):
    """(the node's binding, its reference kernel bound without the direct path)."""
    n = node_with(op, arity, outputs, **attributes)
    cls = kernels.kernel_class("", op, opset)
    run_params = {"log": lambda *a, **k: None, "opsets": {"": opset}, "verbose": 0,
                  "new_ops": None, "existing_functions": {}, "evaluator_cls": None}
    return (kernels.bind(n, {"": opset}, f"node {op}"),
            kernels._bound_reference(cls(n, run_params), f"node {op}"))


def i64(*values):
    return np.array(values, np.int64)


X = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
F = np.array([-2.5, -1.0, -0.0, 0.0, 0.5, 3.0, np.inf, -np.inf, np.nan], np.float32)
N = np.array([-3, -1, 0, 1, 2, 7], np.int32)


def agrees_with_the_reference(fn, slow, args):
    """The binding gives the reference kernel's value, dtype and shape, or refuses where it
    refuses; its value (None where refused)."""
    try:
        want = slow(*args)[0]
    except EvaluationError:
        with pytest.raises(EvaluationError):
            fn(*args)
        return None
    got = fn(*args)[0]
    same(got, np.asarray(want))
    return got


def refusing_slow(*args):
    raise AssertionError("the reference kernel was called")


def all_outputs_agree(fn, slow, args, outputs: int):
    """`agrees_with_the_reference` for a kernel of several outputs: each of the binding's
    `outputs` values is the reference's, or both refuse with EvaluationError."""
    try:
        want = slow(*args)
    except EvaluationError:
        with pytest.raises(EvaluationError):
            fn(*args)
        return
    got = fn(*args)
    assert len(got) == len(want) == outputs
    for g, w in zip(got, want):
        same(g, np.asarray(w))
