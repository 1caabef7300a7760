"""The backends that come with lazyloop, and how one is named and asked for its formats.

A backend takes a model in one of its formats and feeds, and answers with its outputs; its
`run` raises `Unsupported` when it will not load or compile the model at all.
"""
from __future__ import annotations

import numpy as np


class Unsupported(Exception):
    """Raised by a backend's `run` when it refuses to load or compile a model."""

def _onnx_bytes(model) -> bytes:
    return model if isinstance(model, bytes) else model.SerializeToString()


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
            raise Unsupported(f"{type(exc).__name__}: {exc}") from None

    def run(self, model, feeds):
        session = self.load(model)
        names = [o.name for o in session.get_outputs()]
        wanted = {i.name for i in session.get_inputs()}
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
            raise Unsupported(f"{type(exc).__name__}: {exc}") from None

    def run(self, model, feeds):
        ev = self.load(model)
        wanted = set(ev.input_names)
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
            raise Unsupported(f"{type(exc).__name__}: {exc}") from None

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


class LazyloopBackend:
    """lazyloop's own frontends as a backend: a correct backend by construction (a check
    against it finds nothing unless lazyloop disagrees with itself)."""

    def __init__(self, format: str = "onnx"):  # noqa: A002
        self.format = format
        self.formats = (format,)
        self.name = "lazyloop" if format == "onnx" else "lazyloop-openvino"

    def run(self, model, feeds):
        from ..core.errors import ModelError, StructureError, UnsupportedError
        from ..core.evaluate import compile_network, evaluate
        frontend = _frontend(self.format)
        try:  # lowering and compiling: a refusal is "unsupported"
            lowered = frontend.lower(model)
            plan = compile_network(lowered.network)
        except (ModelError, StructureError, UnsupportedError) as exc:
            raise Unsupported(str(exc)) from None
        return lowered.user_outputs(evaluate(plan, lowered.core_feeds(feeds), max_trips=100_000))


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
    "lazyloop": lambda: LazyloopBackend("onnx"),
    "lazyloop-openvino": lambda: LazyloopBackend("openvino"),
}


def backend(name: str):
    """A built-in backend: "onnxruntime", "onnx-reference", "openvino" (CPU; OpenVINO models
    and ONNX models through its reader), or lazyloop's own frontends ("lazyloop",
    "lazyloop-openvino")."""
    if name not in BACKENDS:
        raise KeyError(f"unknown backend {name!r}; built-in: {sorted(BACKENDS)}")
    return BACKENDS[name]()


def formats_of(b) -> tuple:
    return tuple(getattr(b, "formats", None) or (getattr(b, "format", "onnx"),))


def _frontend(fmt):
    if fmt == "onnx":
        from .. import onnx as frontend
    else:
        from .. import openvino as frontend
    return frontend
