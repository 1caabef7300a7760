"""Checking builder arguments at the call, as TensorRT's API does (`structure/builder-args`).

Every public builder method and every settable layer attribute passes its arguments through
one of these functions before anything changes: a wrong type, an out-of-range value or a
tensor of another network is refused at once as a `StructureError` naming the call or layer,
the rule and what to pass instead -- never later, inside evaluation, as a raw Python error.
"""
from __future__ import annotations

import math
import numbers
from enum import Enum

import numpy as np

from .errors import StructureError

RULE = "structure/builder-args"


def refuse(where: str, problem: str, fix: str, rule: str = RULE):
    raise StructureError(where, rule, problem, fix)


def is_int(value) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))


def int_arg(where: str, what: str, value, low=None, high=None, rule: str = RULE) -> int:
    """An integer (a bool or a float is not one), optionally within [low, high]."""
    if not is_int(value):
        refuse(where, f"{what} is {value!r}, not an integer", f"pass {what} as a Python int",
               rule)
    value = int(value)
    if (low is not None and value < low) or (high is not None and value > high):
        bounds = f"at least {low}" if high is None else f"between {low} and {high}"
        refuse(where, f"{what} is {value}, out of range", f"pass {what} {bounds}", rule)
    return value


def index_arg(where: str, what: str, value) -> int:
    """An index of a getter: any integer (out-of-range ones answer None or are refused by
    the caller), never a string, float or None."""
    return int_arg(where, what, value)


def bool_arg(where: str, what: str, value, rule: str = RULE) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        refuse(where, f"{what} is {value!r}, not a bool", f"pass {what} as True or False", rule)
    return bool(value)


def float_arg(where: str, what: str, value, rule: str = RULE) -> float:
    """A finite real number."""
    if not isinstance(value, numbers.Real) or isinstance(value, (bool, np.bool_)) \
            or not math.isfinite(float(value)):
        refuse(where, f"{what} is {value!r}, not a finite number",
               f"pass {what} as a finite float", rule)
    return float(value)


def enum_arg(where: str, what: str, enum: type, value, rule: str = RULE) -> Enum:
    """A member of `enum` (or its value, as TensorRT's integer enum values are accepted)."""
    if isinstance(value, enum):
        return value
    if is_int(value) or isinstance(value, str):
        for member in enum:
            if member.value == value:
                return member
    refuse(where, f"{what} is {value!r}, not a {enum.__name__}",
           f"pass one of {', '.join(enum.__name__ + '.' + m.name for m in enum)}", rule)


def dims_arg(where: str, what: str, value, low=0, allow_none=False, rule: str = RULE) -> tuple:
    """A sequence of integers (each at least `low`); None entries only when `allow_none`."""
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__") \
            or isinstance(value, dict):
        refuse(where, f"{what} is {value!r}, not a sequence of integers",
               f"pass {what} as a tuple of ints", rule)
    dims = []
    for d in value:
        if d is None and allow_none:
            dims.append(None)
            continue
        if not is_int(d) or (low is not None and d < low):
            lowest = "" if low is None else f" >= {low}"
            refuse(where, f"{what} {value!r} holds {d!r}",
                   f"pass {what} as a tuple of ints{lowest}", rule)
        dims.append(int(d))
    return tuple(dims)


def dtype_arg(where: str, what: str, value, rule: str = RULE, kinds="biuf") -> np.dtype:
    """A numpy-readable dtype of one of `kinds` (by default numbers and bools; None: any,
    as relaxed profiles carry ONNX's strings and bfloat16 for their own kernels)."""
    try:
        dtype = np.dtype(value) if value is not None else None
    except (TypeError, ValueError):
        dtype = None
    if dtype is None or (kinds is not None and dtype.kind not in kinds):
        refuse(where, f"{what} is {value!r}, not a numeric or bool dtype",
               f"pass {what} as a numpy dtype such as np.float32", rule)
    return dtype


def name_arg(where: str, what: str, value, empty=False) -> str:
    """A string; an empty one only when `empty` (a layer or tensor may be unnamed)."""
    if not isinstance(value, str) or not (value or empty):
        refuse(where, f"{what} is {value!r}, not a{'' if empty else ' non-empty'} string",
               f"pass {what} as a{'' if empty else ' non-empty'} str")
    return value


def weights_arg(where: str, value, kinds="biuf") -> np.ndarray:
    """Constant weights: an array-like of one of the dtype `kinds` (numbers and bools)."""
    try:
        array = np.asarray(value)
    except (TypeError, ValueError):
        array = None
    if array is None or (kinds is not None and array.dtype.kind not in kinds):
        refuse(where, f"weights {type(value).__name__} are not a numeric array",
               "pass the weights as a numpy array of numbers or bools")
    return array


def tensors_arg(where: str, what: str, network, value, optional=False) -> list:
    """A list of this network's tensors (None entries only when `optional`)."""
    if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple)):
        refuse(where, f"{what} is {value!r}, not a list of tensors",
               f"pass {what} as a list of tensors of this network")
    for t in value:
        if t is None and optional:
            continue
        network._check_owned(t, where)
    return list(value)


def callable_arg(where: str, what: str, value):
    if not callable(value):
        refuse(where, f"{what} is {value!r}, not callable",
               f"pass {what} as a function of the input values")
    return value


class FixedAttributes:
    """A builder object (a loop, an if-conditional) whose public attributes other than `name`
    are fixed once it is built; the name must stay a non-empty string (`structure/builder-args`)."""

    def __setattr__(self, key, value):
        if not key.startswith("_") and getattr(self, "_ready", False):
            if key != "name":
                refuse(f"{type(self).__name__} {self.name!r}", f"attribute {key!r} cannot be "
                       "set", "use the builder methods (add_*, set_*) to change it")
            value = name_arg(f"{type(self).__name__} {self.name!r}", "name", value, empty=True)
            self.network._version += 1
        object.__setattr__(self, key, value)


# -- layer attributes: a checker(layer, attribute, value) -> value, run at every assignment --
def an_int(low=None, high=None, rule: str = RULE):
    return lambda layer, key, value: int_arg(layer.where(), key, value, low, high, rule)


def a_bool(layer, key, value):
    return bool_arg(layer.where(), key, value)


def a_float(layer, key, value):
    return float_arg(layer.where(), key, value)


def a_member(enum: type, rule: str = RULE):
    return lambda layer, key, value: enum_arg(layer.where(), key, enum, value, rule)


def some_dims(low=0, optional=False):
    """A tuple of ints (each >= low), or None when `optional`."""
    def check(layer, key, value):
        if value is None and optional:
            return None
        return dims_arg(layer.where(), key, value, low)
    return check


def a_dtype(layer, key, value):
    return dtype_arg(layer.where(), key, value)


def a_name(layer, key, value):
    return name_arg(layer.where(), key, value, empty=True)
