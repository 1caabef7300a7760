"""The backends that come with lazyloop, and how one is named and asked for its formats.

A backend takes a model in one of its formats and feeds, and answers with its outputs; its
`run` raises `Unsupported` when it will not load or compile the model at all.
"""
from __future__ import annotations

import contextlib
import re

import numpy as np

from .errors import (HarnessError, InputLost, LoadFailed, Unsupported,  # noqa: F401 (the API)
                     adapter_step, refusal_or_failure, refusals_while_running,
                     says_unsupported)
from .feeding import (input_name, model_inputs, onnx_inputs, onnx_proto,  # noqa: F401
                      port_values)


def _onnx_bytes(model) -> bytes:
    return model if isinstance(model, bytes) else model.SerializeToString()


_onnx_proto = onnx_proto  # the name the engines under difftest/engines import


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
        with adapter_step("matching the model's inputs"):
            ports = [i.name for i in session.get_inputs()]
            declared, given, unread = onnx_inputs(model)
        values = port_values(declared, [{p} for p in ports], feeds, given, unread)
        with refusals_while_running():
            out = session.run(None, {ports[k]: v for k, v in values.items()})
        return dict(zip([o.name for o in session.get_outputs()], out))


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
        with adapter_step("matching the model's inputs"):
            ports = list(ev.input_names)
            declared, given, unread = onnx_inputs(model)
        values = port_values(declared, [{p} for p in ports], feeds, given, unread)
        with refusals_while_running(), naming_the_kernel():
            out = ev.run(None, {ports[k]: v for k, v in values.items()})
        return dict(zip(ev.output_names, out))


@contextlib.contextmanager
def naming_the_kernel():
    """An error raised inside one of the reference evaluator's kernels names that kernel
    (its module, `op_loop`, `op_concat_from_sequence`, ...): numpy's messages ("need at
    least one array to concatenate") do not say which operator failed, and that tells
    faults apart (spec/51, "Symptoms")."""
    try:
        yield
    except Exception as exc:
        import traceback
        found = [re.search(r"onnx[/\\]reference[/\\]ops[/\\](op_\w+)\.py$", f.filename)
                 for f in traceback.extract_tb(exc.__traceback__)]
        modules = [m.group(1) for m in found if m]
        if modules and exc.args and isinstance(exc.args[0], str):
            exc.args = (f"{exc.args[0]} (in the reference's {modules[-1]} kernel)",) + \
                exc.args[1:]
        raise


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
        with adapter_step("reading the model's inputs"):
            declared, given, unread = model_inputs(model)
        compiled = self.load(model)
        with adapter_step("matching the model's inputs"):
            ports = [set(port.get_names()) for port in compiled.inputs]
        values = port_values(declared, ports, feeds, given, unread)
        result = compiled({compiled.inputs[k]: v for k, v in values.items()})
        out = {}
        with adapter_step("reading the outputs"):
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
        """(the value of each input port, in order; the runnable model): input facts are
        fixed from the values fed, then the model is optimised."""
        import tempfile
        proto = onnx_proto(model)
        _tract_refusals(proto)
        try:
            with tempfile.TemporaryDirectory() as tmp:
                path = f"{tmp}/model.onnx"
                with open(path, "wb") as f:
                    f.write(_onnx_bytes(model))
                inference = self._tract.onnx().load(path)
        except Exception as exc:
            raise refusal_or_failure(_without_backtrace(exc)) from None
        with adapter_step("matching the model's inputs"):
            ports = [{inference.input_name(k)} for k in range(inference.input_count())]
            declared, given, unread = onnx_inputs(proto)
        values = port_values(declared, ports, feeds, given, unread)
        values = [np.array(values[k], order="C") for k in range(len(ports))]
        try:
            for k, value in enumerate(values):
                inference.set_input_fact(k, _tract_fact(value))
            return values, inference.into_model().into_runnable()
        except Exception as exc:
            raise refusal_or_failure(_without_backtrace(exc)) from None

    def run(self, model, feeds):
        values, runnable = self.load(model, feeds)
        try:
            out = runnable.run(values)
        except Exception as exc:
            raise _without_backtrace(exc) from None
        # by position, as the ONNX graph declares them (tract 0.23 may give two outputs the
        # name of one producer)
        return {o.name: v.to_numpy() for o, v in zip(onnx_proto(model).graph.output, out)}


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
                "int16": "i16", "int32": "i32", "int64": "i64", "uint8": "u8", "uint16": "u16",
                "uint32": "u32", "uint64": "u64", "bool": "bool"}


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
        declared, given, unread = model_inputs(model)
        ports = [{b.name, *b.aliases} for b in lowered.inputs]
        values = port_values(declared, ports, feeds, given, unread)
        named = {next(d for d in declared if d in ports[k]): v for k, v in values.items()}
        return lowered.evaluate(named, EXPECTATION_MAX_TRIPS)


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
