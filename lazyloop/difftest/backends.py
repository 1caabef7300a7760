"""The backends that come with lazyloop, and how one is named and asked for its formats.

A backend takes a model in one of its formats and feeds, and answers with its outputs; its
`run` raises `Unsupported` when it will not load or compile the model at all.
"""
from __future__ import annotations

import contextlib
import re

import numpy as np


class Unsupported(Exception):
    """Raised by a backend's `run` when it refuses to load or compile a model."""


class LoadFailed(Exception):
    """A backend failed while loading or compiling a model without saying it does not
    support something in it: for a valid model, a finding (not a refusal)."""


class InputLost(LoadFailed):
    """The engine's compiled model lacks (or renamed) an input the model declares: the
    engine lost input `v0` on the way, so it cannot be fed as the model says (a finding)."""


# what a backend says when it refuses an op, a type or an attribute it does not implement
_REFUSAL = re.compile(r"not ?implemented|unimplemented|not (yet )?supported|unsupported|"
                      r"no (kernel|implementation)|could not find an implementation|"
                      r"does not support|doesn't support|cannot (create|find) (a )?(kernel|"
                      r"node|operator)|unknown (op|operator)|not registered|is not a registered",
                      re.IGNORECASE)


def says_unsupported(exc: BaseException) -> bool:
    """Whether a load/compile error is the backend refusing something it does not support
    (then the program counts as *unsupported*) rather than an internal error, an assertion
    or a crash (then it is a finding)."""
    return (isinstance(exc, NotImplementedError) or type(exc).__name__ == "NotImplemented"
            or bool(_REFUSAL.search(f"{type(exc).__name__}: {exc}")))


@contextlib.contextmanager
def refusals_while_running():
    """A built-in backend that says, while running, that it does not implement something
    (onnx's ReferenceEvaluator: "Scan is not implemented for ...") refuses the model."""
    try:
        yield
    except Exception as exc:
        if says_unsupported(exc):
            raise Unsupported(f"{type(exc).__name__}: {exc}") from None
        raise


def refusal_or_failure(exc: BaseException) -> Exception:
    """The exception a backend's load step raises for `exc`: Unsupported or LoadFailed."""
    text = f"{type(exc).__name__}: {exc}"
    return Unsupported(text) if says_unsupported(exc) else LoadFailed(text)

def _onnx_bytes(model) -> bytes:
    return model if isinstance(model, bytes) else model.SerializeToString()


def _onnx_proto(model):
    if isinstance(model, bytes):
        import onnx
        return onnx.ModelProto.FromString(model)
    return model


class OnnxRuntimeBackend:
    """onnxruntime's CPU execution provider."""

    name = "onnxruntime"
    format = "onnx"
    formats = ("onnx",)

    def __init__(self):
        import onnxruntime as ort
        ort.set_default_logger_severity(4)
        self._ort = ort

    def load(self, model):
        opts = self._ort.SessionOptions()
        opts.log_severity_level = 4
        try:
            return self._ort.InferenceSession(_onnx_bytes(model), opts,
                                              providers=["CPUExecutionProvider"])
        except Exception as exc:
            raise refusal_or_failure(exc) from None

    def run(self, model, feeds):
        session = self.load(model)
        names = [o.name for o in session.get_outputs()]
        wanted = {i.name for i in session.get_inputs()}
        with refusals_while_running():
            values = session.run(None, {k: v for k, v in feeds.items() if k in wanted})
        return dict(zip(names, values))


class OnnxReferenceBackend:
    """ONNX's own reference evaluator (onnx.reference.ReferenceEvaluator)."""

    name = "onnx-reference"
    format = "onnx"
    formats = ("onnx",)

    def load(self, model):
        from onnx.reference import ReferenceEvaluator
        try:
            return ReferenceEvaluator(model)
        except Exception as exc:
            raise refusal_or_failure(exc) from None

    def run(self, model, feeds):
        ev = self.load(model)
        wanted = set(ev.input_names)
        with refusals_while_running():
            values = ev.run(None, {k: v for k, v in feeds.items() if k in wanted})
        return dict(zip(ev.output_names, values))


class OpenVinoBackend:
    """OpenVINO's CPU plugin. It takes OpenVINO models, and ONNX models through OpenVINO's
    ONNX reader (`formats`). Models are compiled with ``INFERENCE_PRECISION_HINT = f32``: on
    CPUs with bf16 support the plugin otherwise computes float32 models in bf16 (a documented
    default, not a loop semantics question), which no float32 tolerance would absorb."""

    name = "openvino"
    format = "openvino"
    formats = ("openvino", "onnx")

    def __init__(self, device: str = "CPU", config=None):
        import openvino as ov
        self._ov = ov
        self.core = ov.Core()
        self.device = device
        self.config = {"INFERENCE_PRECISION_HINT": "f32"} if config is None else dict(config)

    def load(self, model):
        ov = self._ov
        try:
            if isinstance(model, ov.Model):
                model = model.clone()
            else:
                model = self.core.read_model(_onnx_bytes(model))
            return self.core.compile_model(model, self.device, self.config)
        except Exception as exc:
            raise refusal_or_failure(exc) from None

    def run(self, model, feeds):
        compiled = self.load(model)
        inputs = {}
        for port in compiled.inputs:
            for name in port.get_names():
                if name in feeds:
                    inputs[name] = feeds[name]
                    break
        result = compiled(inputs)
        out = {}
        for k, port in enumerate(compiled.outputs):
            value = np.array(result[port])
            # a port may carry several names (OpenVINO's ONNX reader keeps the producer's
            # name beside the graph output's): the value answers to each of them
            for name in sorted(port.get_names()) or [str(k)]:
                out.setdefault(name, value)
        return out


class TractBackend:
    """Sonos' tract (PyPI `tract`), an ONNX inference engine: it runs Scan (opset 9+) and If;
    it has no Loop operator and refuses models with one (spec/51-difftest.md). Input shapes
    and types are fixed from the feeds before the model is optimised."""

    name = "tract"
    format = "onnx"
    formats = ("onnx",)
    kinds = ("onnx-scan9", "onnx-if", "onnx-scan-if", "onnx-schema-scan")  # no Loop

    def __init__(self):
        import tract
        self._tract = tract

    def load(self, model, feeds):
        import tempfile
        proto = _onnx_proto(model)
        _tract_refusals(proto)
        try:
            with tempfile.TemporaryDirectory() as tmp:
                path = f"{tmp}/model.onnx"
                with open(path, "wb") as f:
                    f.write(_onnx_bytes(model))
                inference = self._tract.onnx().load(path)
            # by position, as the ONNX graph declares them (tract 0.23 may give two outputs
            # the name of one producer)
            given = {t.name for t in proto.graph.initializer}
            inputs = [i.name for i in proto.graph.input if i.name not in given]
            for k, name in enumerate(inputs):
                inference.set_input_fact(k, _tract_fact(np.asarray(feeds[name])))
            return inputs, [o.name for o in proto.graph.output], \
                inference.into_model().into_runnable()
        except Exception as exc:
            raise refusal_or_failure(_without_backtrace(exc)) from None

    def run(self, model, feeds):
        inputs, outputs, runnable = self.load(model, feeds)
        try:
            values = runnable.run([np.array(feeds[n], order="C") for n in inputs])
        except Exception as exc:
            raise _without_backtrace(exc) from None
        return {n: v.to_numpy() for n, v in zip(outputs, values)}


def _tract_refusals(proto) -> None:
    """What tract does not implement, refused before it is asked: Loop (tract says
    "Unimplemented(Loop)") and Scan of opset 8 (tract reads every Scan as opset 9+, so the
    batch axis and `sequence_lens` of Scan 8 are not understood)."""
    opset = next((o.version for o in proto.opset_import if o.domain in ("", "ai.onnx")), 0)
    ops = set()

    def collect(graph):
        for node in graph.node:
            ops.add(node.op_type)
            for a in node.attribute:
                if a.g.node:
                    collect(a.g)
                for g in a.graphs:
                    collect(g)
    collect(proto.graph)
    if "Loop" in ops:
        raise Unsupported("tract: Unimplemented(Loop)")
    if "Scan" in ops and opset < 9:
        raise Unsupported("tract: Scan of opset 8 is not implemented (only Scan 9+)")


def _without_backtrace(exc):
    """tract's errors carry a Rust stack backtrace: keep the message before it."""
    text = str(exc).split("Stack backtrace:")[0].strip()
    return type(exc)(text) if text != str(exc) else exc


_TRACT_TYPES = {"float32": "f32", "float64": "f64", "float16": "f16", "int8": "i8",
                "int16": "i16", "int32": "i32", "int64": "i64", "uint8": "u8", "bool": "bool"}


def _tract_fact(value) -> str:
    """tract's text form of a tensor type: "2,3,f32" (a scalar: "f32")."""
    return ",".join([*(str(d) for d in value.shape), _TRACT_TYPES[value.dtype.name]])


class LazyloopBackend:
    """lazyloop's own frontends as a backend: a correct backend by construction (a check
    against it finds nothing unless lazyloop disagrees with itself)."""

    def __init__(self, format: str = "onnx"):  # noqa: A002
        self.format = format
        self.formats = (format,)
        self.name = "lazyloop" if format == "onnx" else "lazyloop-openvino"

    def run(self, model, feeds):
        from ..core.errors import ModelError, StructureError, UnsupportedError
        from ..core.fuel import EXPECTATION_MAX_TRIPS
        from ..core.plan import compile_network
        frontend = _frontend(self.format)
        try:  # lowering and compiling: a refusal is "unsupported"
            lowered = frontend.lower(model)
            compile_network(lowered.network)
        except (ModelError, StructureError, UnsupportedError) as exc:
            raise Unsupported(str(exc)) from None
        return lowered.evaluate(feeds, EXPECTATION_MAX_TRIPS)


class TripCountPlusOne:
    """A planted fault: an ONNX backend that runs every Loop with a trip count M one larger
    than the model says (its M input rewritten to M + 1, in every graph)."""

    def __init__(self, inner):
        self.inner = inner
        self.name = f"{inner.name}+trip-count-plus-one"
        self.format = "onnx"
        self.formats = ("onnx",)

    def run(self, model, feeds):
        import onnx
        from onnx import helper, numpy_helper
        model = onnx.ModelProto.FromString(_onnx_bytes(model))
        counter = [0]

        def rewrite(graph):
            nodes = []
            for node in graph.node:
                for a in node.attribute:
                    if a.type == onnx.AttributeProto.GRAPH:
                        rewrite(a.g)
                if node.op_type == "Loop" and node.input and node.input[0]:
                    counter[0] += 1
                    one, bumped = f"__one_{counter[0]}", f"__bumped_{counter[0]}"
                    nodes.append(helper.make_node("Constant", [], [one],
                                                  value=numpy_helper.from_array(np.int64(1))))
                    nodes.append(helper.make_node("Add", [node.input[0], one], [bumped]))
                    node.input[0] = bumped
                nodes.append(node)
            del graph.node[:]
            graph.node.extend(nodes)
        rewrite(model.graph)
        return self.inner.run(model, feeds)

BACKENDS = {
    "onnxruntime": OnnxRuntimeBackend,
    "onnx-reference": OnnxReferenceBackend,
    "openvino": OpenVinoBackend,
    "tract": TractBackend,
    "lazyloop": lambda: LazyloopBackend("onnx"),
    "lazyloop-openvino": lambda: LazyloopBackend("openvino"),
    # engines users deploy (lazyloop/difftest/engines): `module:factory`, imported when made
    "iree": "lazyloop.difftest.engines:iree_backend",
    "mnn": "lazyloop.difftest.engines:mnn_backend",
    "onnxslim": "lazyloop.difftest.engines:onnxslim_backend",
    "onnxsim": "lazyloop.difftest.engines:onnxsim_backend",
    "onnxoptimizer": "lazyloop.difftest.engines:onnxoptimizer_backend",
}


def formats_of(b) -> tuple:
    return tuple(getattr(b, "formats", None) or (getattr(b, "format", "onnx"),))


def a_model(fmt: str) -> str:
    """A model of format `fmt`, in words: "an ONNX model", "an OpenVINO model"."""
    return {"onnx": "an ONNX model", "openvino": "an OpenVINO model",
            "core": "a core program"}.get(fmt, f"a {fmt} model")


def _frontend(fmt):
    if fmt == "onnx":
        from .. import onnx as frontend
    else:
        from .. import openvino as frontend
    return frontend
