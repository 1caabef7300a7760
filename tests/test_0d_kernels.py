"""Elementwise kernels on 0-D arrays -- the counters, flags and scalar states of exported
loops, which lazyloop binds with shortcuts (ufuncs called with `out=...`, integer Div of
non-negative values by Python's `//`, Where passing x or y on) -- give exactly what ONNX's
reference kernel gives (rule: onnx/node): the same dtype, shape and bits, and the same kind
of warning, on every pair of edge values of every dtype the ops accept."""
import itertools
import warnings

import numpy as np
import pytest

pytest.importorskip("onnx")
from onnx import helper  # noqa: E402

from lazyloop.onnx import kernels  # noqa: E402
from kernel_checks import same  # noqa: E402

OPSET = 17
FLOATS = (np.float16, np.float32, np.float64)
INTEGERS = (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64)


def edges(dtype):
    """The values a 0-D input of `dtype` is tried with: signs, zeros, ones, the extremes."""
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return [False, True]
    if dtype.kind == "f":
        info = np.finfo(dtype)
        return [-2.5, -1.0, -0.0, 0.0, 0.5, 3.0, np.inf, -np.inf, np.nan, info.max,
                info.tiny]
    info = np.iinfo(dtype)
    return sorted(v for v in {int(info.min), int(info.min) + 1, -7, -1, 0, 1, 2, 7,
                              int(info.max)} if info.min <= v <= info.max)


def node(op, arity):
    return helper.make_node(op, [f"x{k}" for k in range(arity)], ["y"])


def reference_run(op, arity):
    """ONNX's reference kernel for the op, called through its own public `run` (its checks
    included): nothing of lazyloop's binding."""
    cls = kernels.kernel_class("", op, OPSET)
    run_params = {"log": lambda *a, **k: None, "opsets": {"": OPSET}, "verbose": 0,
                  "new_ops": None, "existing_functions": {}, "evaluator_cls": None}
    return cls(node(op, arity), run_params).run


def lazyloop_single(op, arity):
    """The one-value form lazyloop binds for the node (the form its trips call)."""
    kernel = kernels.bind(node(op, arity), {"": OPSET}, f"node {op}")
    return kernel.single or (lambda *args: kernel.function(*args)[0])


def answers(fn, args):
    """(the value or the exception's type, the warning categories raised) of fn(*args)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            value = fn(*args)
        except Exception as exc:  # noqa: BLE001 -- compared by kind below
            value = type(exc)
    return value, sorted({w.category.__name__ for w in caught})


def agree(op, arity, dtype, combos):
    mine, theirs = lazyloop_single(op, arity), reference_run(op, arity)
    for values in combos:
        args = [np.array(v, dtype) for v in values]
        got, got_warned = answers(mine, args)
        want, want_warned = answers(lambda *a: theirs(*a)[0], args)
        if isinstance(want, type):  # the reference refuses: so does lazyloop
            assert isinstance(got, type), (op, dtype, values)
            continue
        same(np.asarray(got), np.asarray(want))
        assert got_warned == want_warned, (op, dtype, values, got_warned, want_warned)


@pytest.mark.parametrize("dtype", FLOATS + INTEGERS, ids=lambda t: np.dtype(t).name)
def test_division_of_0d_arrays_is_the_reference_bit_for_bit(dtype):
    values = edges(dtype)
    if np.dtype(dtype).kind in "iu":  # the reference divides integers by zero its own way
        agree("Div", 2, dtype, [(a, b) for a, b in itertools.product(values, values) if b != 0])
    else:
        agree("Div", 2, dtype, itertools.product(values, values))


@pytest.mark.parametrize("dtype", FLOATS + INTEGERS + (np.bool_,),
                         ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize("op", ["Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"])
def test_comparisons_on_0d_arrays_are_the_reference_bit_for_bit(op, dtype):
    if op != "Equal" and dtype is np.bool_:
        pytest.skip("ONNX orders numbers only")
    values = edges(dtype)
    agree(op, 2, dtype, itertools.product(values, values))


@pytest.mark.parametrize("op", ["And", "Or", "Xor"])
def test_logical_ops_on_0d_booleans_are_the_reference(op):
    agree(op, 2, np.bool_, itertools.product([False, True], repeat=2))


def test_not_on_a_0d_boolean_is_the_reference():
    agree("Not", 1, np.bool_, [(False,), (True,)])


def test_integer_division_truncates_toward_zero_on_0d_arrays():
    div = lazyloop_single("Div", 2)
    expected = {(7, 2): 3, (-7, 2): -3, (7, -2): -3, (-7, -2): 3, (0, 5): 0, (6, 3): 2}
    for (a, b), q in expected.items():  # by hand: C's truncating quotient
        got = div(np.array(a, np.int64), np.array(b, np.int64))
        assert got.dtype == np.int64 and got.shape == () and got == q, (a, b)


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.bool_],
                         ids=lambda t: np.dtype(t).name)
def test_where_on_0d_arrays_takes_x_or_y_itself(dtype):
    where = lazyloop_single("Where", 3)
    x, y = np.array(1, dtype), np.array(0, dtype)
    assert where(np.array(True), x, y) is x
    assert where(np.array(False), x, y) is y
    reference = reference_run("Where", 3)
    for c in (False, True):
        same(where(np.array(c), x, y), reference(np.array(c), x, y)[0])


def test_where_passes_an_input_on_in_its_record():
    kernel = kernels.bind(node("Where", 3), {"": OPSET}, "node Where")
    assert kernel.passes_input  # what it returns is then marked as its input is


def test_under_an_error_state_that_raises_0d_kernels_raise_as_the_reference():
    div = lazyloop_single("Div", 2)
    one, zero = np.array(1.0, np.float32), np.array(0.0, np.float32)
    with np.errstate(all="raise"):
        with pytest.raises(Exception) as raised:
            div(one, zero)
    assert "divide by zero" in str(raised.value)
