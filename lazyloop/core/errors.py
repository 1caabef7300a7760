"""Every error lazyloop raises on purpose.

Each message names the layer or node, the rule ID it enforces, and what to do about it,
so a failure reads like a citation of the specification.
"""
from __future__ import annotations


class LazyLoopError(Exception):
    """Base of every deliberate lazyloop error."""

    def __init__(self, where: str, rule: str, problem: str, fix: str = ""):
        self.where = where
        self.rule = rule
        self.problem = problem
        self.fix = fix
        text = f"{where}: {problem} [{rule}]"
        if fix:
            text += f" -- {fix}"
        super().__init__(text)


class StructureError(LazyLoopError):
    """The network breaks a structure rule; found before any element is forced."""


class ShapeError(StructureError):
    """A layer's inputs have shapes or dtypes its rule does not accept."""


class EvaluationError(LazyLoopError):
    """A rule was broken while elements were being forced."""


class IteratorOutOfBounds(EvaluationError):
    """An iterator element past the extent of its axis was forced (iterator/bounds)."""


class LengthTooShort(EvaluationError):
    """A CONCATENATE/REVERSE length is smaller than the trip count (output/concat)."""


class FuelExhausted(EvaluationError):
    """A loop ran past `max_trips` trips."""


class NeverEnds(FuelExhausted):
    """A loop provably never ends: its state is a fixed point and its WHILE input is true
    (laziness/fixed-point); reported at once instead of after the fuel."""


class NegativeTripCount(EvaluationError):
    """A COUNT limit was negative under a reading that refuses it (A4)."""


class StreamShapeChanged(EvaluationError):
    """An element of a stream has another shape or dtype than the stream (structure/shapes)."""


class InputError(LazyLoopError):
    """A feed is missing, unexpected, or of the wrong shape or dtype."""


class ModelError(LazyLoopError):
    """An ONNX or OpenVINO model cannot be lowered onto the core."""


class UnsupportedError(LazyLoopError):
    """A construct lazyloop knowingly does not implement."""


def builder_call(method):
    """A builder method refuses bad arguments (a wrong enum, a non-integer axis) as a
    StructureError naming the call, never as a bare ValueError/TypeError."""
    import functools

    @functools.wraps(method)
    def call(self, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except LazyLoopError:
            raise
        except (ValueError, TypeError, IndexError, KeyError) as exc:
            raise StructureError(f"{type(self).__name__}.{method.__name__}", "structure/builder-args",
                                 f"bad arguments: {type(exc).__name__}: {exc}",
                                 f"pass {method.__name__} the argument types its docstring "
                                 "and TensorRT's signature name") from None
    return call
