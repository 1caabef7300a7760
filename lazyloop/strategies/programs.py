"""Loop programs held as plain data: the builder calls (`Call`, `SetAttr`) and the values they
pass (`Ref`, `Member`, `Array`), `replay` to perform them on a network, `source` to print them
as Python, and the two records the strategies draw: `Program` (a valid program) and
`InvalidProgram` (one that breaks a named rule)."""
from __future__ import annotations

import functools
from typing import Any, Optional, Tuple

import attrs
import numpy as np


@attrs.frozen
class Ref:
    """A value bound by an earlier step: a layer, a tensor, a loop or a conditional."""
    name: str

    def __repr__(self):
        return self.name


@attrs.frozen
class Member:
    """An attribute path on the target API module: `("TripLimit", "COUNT")`, `("float32",)`."""
    path: Tuple[str, ...]

    def resolve(self, api):
        return functools.reduce(getattr, self.path, api)

    def __repr__(self):
        return "api." + ".".join(self.path)


@attrs.frozen
class Array:
    """A numpy array held as plain data (weights and feeds)."""
    dtype: str
    shape: Tuple[int, ...]
    data: Tuple[Any, ...]

    @classmethod
    def of(cls, value) -> "Array":
        value = np.asarray(value)
        return cls(value.dtype.name, tuple(value.shape), tuple(value.reshape(-1).tolist()))

    def value(self) -> np.ndarray:
        return np.array(self.data, dtype=self.dtype).reshape(self.shape)

    def __repr__(self):
        return f"np.array({list(self.data)!r}, np.{self.dtype}).reshape({self.shape!r})"


@attrs.frozen
class Call:
    """`result = target.method(*args, **kwargs)`; `result` None discards the return value."""
    result: Optional[str]
    target: str
    method: str
    args: Tuple[Any, ...] = ()
    kwargs: Tuple[Tuple[str, Any], ...] = ()

    def __repr__(self):
        parts = [repr(a) for a in self.args] + [f"{k}={v!r}" for k, v in self.kwargs]
        text = f"{self.target}.{self.method}({', '.join(parts)})"
        return f"{self.result} = {text}" if self.result else text


@attrs.frozen
class SetAttr:
    """`target.attr = value` (activation alpha/beta, shuffle reshape_dims, tensor names)."""
    target: str
    attr: str
    value: Any

    def __repr__(self):
        return f"{self.target}.{self.attr} = {self.value!r}"


def replay(steps, network, api=None) -> dict:
    """Perform the builder calls on `network`; returns the environment of bound names.

    The environment also keeps every weights array under "_weights", because TensorRT reads
    weights by reference when the engine is built: keep the environment alive until then."""
    if api is None:
        import lazyloop as api
    env = {"network": network, "_weights": []}

    def resolve(x):
        if isinstance(x, Ref):
            return env[x.name]
        if isinstance(x, Member):
            return x.resolve(api)
        if isinstance(x, Array):
            value = x.value()
            env["_weights"].append(value)
            return value
        if isinstance(x, tuple):
            return tuple(resolve(v) for v in x)
        return x

    for step in steps:
        target = env[step.target]
        if isinstance(step, SetAttr):
            setattr(target, step.attr, resolve(step.value))
            continue
        result = getattr(target, step.method)(*[resolve(a) for a in step.args],
                                               **{k: resolve(v) for k, v in step.kwargs})
        if step.result:
            env[step.result] = result
    return env


def source(steps, module: str = "trt") -> str:
    """The steps as Python code for a `network` object and an enum module named `module`."""
    return "\n".join(repr(s).replace("api.", f"{module}.") for s in steps)


@attrs.frozen(slots=False, repr=False)
class Program:
    """A valid program: builder calls, feeds, and what it exercises.

    `rules` holds the rule IDs it exercises; `features` finer labels ("zero-trips",
    "padding", "nested", ...). `outputs` are the names of the marked output tensors."""
    steps: Tuple[Any, ...]
    inputs: Tuple[Tuple[str, Array], ...]
    outputs: Tuple[str, ...]
    rules: frozenset
    features: frozenset

    def build(self, network=None, api=None):
        """Replay onto `network` (a new `lazyloop.Network()` by default); returns it."""
        if network is None:
            import lazyloop
            network = lazyloop.Network("tensorrt")
        replay(self.steps, network, api)
        return network

    @functools.cached_property
    def net(self):
        """The program built on a `lazyloop.Network` (built once, on first use)."""
        return self.build()

    def __getstate__(self):  # the recipe pickles; the built network is rebuilt on demand
        return {k: v for k, v in self.__dict__.items() if k != "net"}

    def __setstate__(self, state):
        self.__dict__.update(state)

    @property
    def feeds(self) -> dict:
        return {name: a.value() for name, a in self.inputs}

    def source(self, module: str = "trt") -> str:
        return source(self.steps, module)

    def _repr_pretty_(self, printer, cycle):  # hypothesis prints falsifying examples so
        printer.text(repr(self))

    def __repr__(self):
        feeds = ", ".join(f"{k!r}: {a!r}" for k, a in self.inputs)
        return (f"Program(rules={sorted(self.rules)}, features={sorted(self.features)},\n"
                f"  feeds={{{feeds}}},\n  outputs={list(self.outputs)},\n"
                + "\n".join("  " + line for line in self.source("api").splitlines()) + ")")


@attrs.frozen(slots=False, repr=False)
class InvalidProgram:
    """Builder calls that break `rule`: building or evaluating them raises a
    `LazyLoopError` whose `.rule` is `rule`. `variant` names the way it breaks it."""
    steps: Tuple[Any, ...]
    inputs: Tuple[Tuple[str, Array], ...]
    rule: str
    variant: str

    def build(self, network=None, api=None):
        """Replay the calls (which may raise) -> (network, feeds)."""
        if network is None:
            import lazyloop
            network = lazyloop.Network("tensorrt")
        replay(self.steps, network, api)
        return network, {name: a.value() for name, a in self.inputs}

    def source(self, module: str = "trt") -> str:
        return source(self.steps, module)

    def _repr_pretty_(self, printer, cycle):
        printer.text(repr(self))

    def __repr__(self):
        return (f"InvalidProgram(rule={self.rule!r}, variant={self.variant!r},\n"
                + "\n".join("  " + line for line in self.source("api").splitlines()) + ")")
