"""Replaying a generated core program, builder call by builder call, onto any object with
TensorRT's network-definition API.

A program from `lazyloop.strategies.networks()` is data: a tuple of builder calls
(`network.add_loop()`, `loop.add_trip_limit(t, api.TripLimit.COUNT)`, ...) whose enums and
dtypes are looked up on an `api` module. `replay` performs them on a target network:

    from lazyloop.tensorrt.replay import replay, build_engine, run_engine
    env = replay(program, lazyloop.Network())           # lazyloop itself (tests do this)
    env = replay(program, trt_network, api=tensorrt)     # TensorRT's INetworkDefinition

On a machine with a GPU and TensorRT (nothing in this repository can run TensorRT; this path
is written to TensorRT's documented Python API and is *not* tested here):

    import tensorrt as trt
    engine = build_engine(program)                       # builder -> network -> serialized
    outputs = run_engine(engine, program.feeds)          # {output name: numpy array}
    expected = lazyloop.run(program.net, program.feeds)  # compare where .defined is True

`TensorRTBackend` wraps the two for `lazyloop.difftest.check(TensorRTBackend())`, which then
generates core programs and hands each one to TensorRT as the model (format "core").
`ReplayBackend` does the same onto lazyloop itself, which is how the replay path is tested.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from ..strategies import Call, SetAttr
from ..strategies import replay as replay_steps

# TensorRT's method names the generated programs may call, per receiver kind. `replay` onto
# a `StrictNetwork` refuses any other name, so a program that works on lazyloop but uses a
# name TensorRT lacks is caught without TensorRT.
NETWORK_METHODS = frozenset({
    "add_input", "add_constant", "add_loop", "add_if_conditional", "add_elementwise",
    "add_unary", "add_activation", "add_matrix_multiply", "add_identity", "add_shuffle",
    "add_slice", "add_concatenation", "add_select", "add_cast", "add_reduce", "add_gather",
    "mark_output", "unmark_output"})
LOOP_METHODS = frozenset({"add_trip_limit", "add_iterator", "add_recurrence",
                          "add_loop_output"})
CONDITIONAL_METHODS = frozenset({"set_condition", "add_input", "add_output"})
LAYER_METHODS = frozenset({"get_output", "get_input", "set_input"})
LAYER_ATTRIBUTES = frozenset({"alpha", "beta", "reshape_dims", "first_transpose",
                              "second_transpose", "zero_is_placeholder", "axis", "name"})
TENSOR_ATTRIBUTES = frozenset({"name"})


def steps_of(program):
    return program.steps if hasattr(program, "steps") else tuple(program)


class KeepAlive:
    """A network proxy that keeps every argument of every call alive: TensorRT reads the
    weights of `add_constant` by reference until the engine is built."""

    def __init__(self, network):
        object.__setattr__(self, "_network", network)
        object.__setattr__(self, "kept", [])

    def __getattr__(self, name):
        attr = getattr(self._network, name)
        if not callable(attr):
            return attr

        def call(*args, **kwargs):
            self.kept.append((args, kwargs))
            return attr(*args, **kwargs)
        return call

    def __setattr__(self, name, value):
        setattr(self._network, name, value)


def build_onto(program, network, api=None):
    """Build `program` on `network`: a generated `Program` (its builder calls, replayed) or
    anything with ``build(network, api)`` (a conformance case). Returns what keeps the
    weights alive."""
    if hasattr(program, "steps"):
        return replay(program, network, api)
    if api is None:
        import lazyloop as api
    program.build(network, api)
    return network


def replay(program, network, api=None) -> dict:
    """Perform the program's builder calls on `network` (enums and dtypes from `api`,
    `lazyloop` by default). Returns the environment of names the calls bound; it also keeps
    the weights arrays alive (TensorRT reads weights by reference until the engine is
    built)."""
    return replay_steps(steps_of(program), network, api)


def check_names(program) -> list:
    """The builder calls of `program` that use a name outside TensorRT's API (an empty list
    when every call and attribute is one TensorRT has)."""
    kinds = {"network": "network"}
    bad = []
    for step in steps_of(program):
        kind = kinds.get(step.target, "layer")
        if isinstance(step, SetAttr):
            allowed = TENSOR_ATTRIBUTES if kind == "tensor" else LAYER_ATTRIBUTES
            if step.attr not in allowed:
                bad.append(step)
            continue
        allowed = {"network": NETWORK_METHODS, "loop": LOOP_METHODS,
                   "conditional": CONDITIONAL_METHODS, "layer": LAYER_METHODS,
                   "tensor": frozenset()}[kind]
        if step.method not in allowed:
            bad.append(step)
        if step.result:
            kinds[step.result] = _result_kind(kind, step.method)
    return bad


def _result_kind(receiver: str, method: str) -> str:
    if method == "add_loop":
        return "loop"
    if method == "add_if_conditional":
        return "conditional"
    if method in ("add_input",) and receiver == "network":
        return "tensor"
    if method == "get_output" or method == "get_input":
        return "tensor"
    return "layer"


# ------------------------------------------------------------------------------------------
# TensorRT (untested here: needs a GPU)
# ------------------------------------------------------------------------------------------


def build_engine(program, logger=None, workspace: int = 1 << 28) -> bytes:
    """builder -> network (the program replayed onto it) -> serialized engine (bytes).
    Needs `tensorrt`; not tested in this repository."""
    import tensorrt as trt
    logger = logger or trt.Logger(trt.Logger.WARNING)
    builder = trt.Builder(logger)
    flags = 0
    if hasattr(trt, "NetworkDefinitionCreationFlag") and \
            hasattr(trt.NetworkDefinitionCreationFlag, "EXPLICIT_BATCH") and \
            int(trt.__version__.split(".")[0]) < 10:
        flags = 1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH)
    network = builder.create_network(flags)
    keep = KeepAlive(network)
    env = build_onto(program, keep, api=trt)
    config = builder.create_builder_config()
    if hasattr(config, "set_memory_pool_limit"):
        config.set_memory_pool_limit(trt.MemoryPoolType.WORKSPACE, workspace)
    serialized = builder.build_serialized_network(network, config)
    del env, keep  # the weights may go once the engine is built
    if serialized is None:
        raise RuntimeError("TensorRT refused to build the network (see the logger's output)")
    return bytes(serialized)


def run_engine(engine: bytes, feeds: dict) -> dict:
    """Run a serialized engine on numpy feeds; {output name: numpy array}. Uses Polygraphy's
    TrtRunner (pip install polygraphy). Not tested in this repository."""
    from polygraphy.backend.trt import EngineFromBytes, TrtRunner
    with TrtRunner(EngineFromBytes(engine)) as runner:
        out = runner.infer(feed_dict={k: np.ascontiguousarray(v) for k, v in feeds.items()})
    return {k: np.asarray(v) for k, v in out.items()}


class TensorRTBackend:
    """A difftest backend taking core programs (format "core"): each is replayed onto a
    TensorRT network, built and run. Refusing to build is "unsupported". Untested here."""

    name = "tensorrt"
    format = "core"
    formats = ("core",)

    def run(self, program, feeds):
        from ..difftest import Unsupported
        try:
            engine = build_engine(program)
        except Exception as exc:
            raise Unsupported(f"{type(exc).__name__}: {exc}") from None
        return run_engine(engine, feeds)


class ReplayBackend:
    """Core programs replayed onto a fresh `lazyloop.Network` and evaluated: what
    `TensorRTBackend` does, with lazyloop in TensorRT's place (tested)."""

    name = "lazyloop-replay"
    format = "core"
    formats = ("core",)

    def __init__(self, api=None, network_factory=None):
        self.api = api
        self.network_factory = network_factory

    def run(self, program, feeds):
        import lazyloop
        net = self.network_factory() if self.network_factory else lazyloop.Network("tensorrt")
        build_onto(program, net, self.api or lazyloop)
        return lazyloop.evaluate(net, feeds)


def outputs_of(program) -> Optional[tuple]:
    return getattr(program, "outputs", None)


__all__ = ["replay", "build_onto", "KeepAlive", "check_names", "build_engine", "run_engine", "TensorRTBackend",
           "ReplayBackend", "NETWORK_METHODS", "LOOP_METHODS", "CONDITIONAL_METHODS",
           "Call", "SetAttr"]
