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


class InputLost(Exception):
    """The engine's compiled model lacks, or renames, an input the model declares ("the
    engine lost input `v0`"): the engine's fault and a finding of its own kind, never a
    value difference computed from an input that was not fed (spec/51, "The harness")."""


class HarnessError(Exception):
    """lazyloop's own adapter for an engine failed (not the engine): reported apart from the
    findings, as lazyloop's fault."""


@contextlib.contextmanager
def adapter_step(what: str):
    """A step of a built-in adapter that is lazyloop's own code, not the engine's: whatever
    fails in it (but a lost input) is a `HarnessError`."""
    try:
        yield
    except (InputLost, HarnessError, Unsupported):
        raise
    except Exception as exc:
        raise HarnessError(f"lazyloop's adapter failed while {what}: "
                           f"{type(exc).__name__}: {exc}") from exc


def writable(value):
    """A writable copy of a feed (a sequence element by element; an empty optional stays
    None): what an engine is handed never aliases lazyloop's arrays or read-only buffers."""
    if value is None:
        return None
    if isinstance(value, (list, tuple)):
        return [writable(v) for v in value]
    return np.array(value, copy=True)


def port_values(declared, ports, feeds, given=frozenset(), unread=frozenset()) -> dict:
    """{port position: writable value} for an engine whose compiled model has input `ports`
    (each the set of names it answers to), for a model that declares inputs `declared` (in
    order). Every declared input is fed, none is skipped silently: a port takes the declared
    input it names; a declared input that no port names was lost by the engine
    (`InputLost`: renamed when a port names nothing declared, dropped otherwise) -- unless the
    model reads it nowhere (`unread`: an engine may leave out an input nothing uses). A port
    that asks for an input the model does not declare is `InputLost` too; ports named only by
    initializers (`given`) keep their own values. A declared input without a feed is the
    harness's fault (`HarnessError`)."""
    named = {}
    for k, names in enumerate(ports):
        hit = [d for d in declared if d in names]
        if hit:
            named[k] = hit[0]
        elif names and set(names) <= set(given):
            named[k] = None
    spare = [k for k in range(len(ports)) if k not in named]
    for d in declared:
        if d in named.values() or d in unread:
            continue
        if spare:
            raise InputLost(f"the engine lost input `{d}`: its compiled model asks for "
                            f"{sorted(ports[spare[0]])} in its place")
        raise InputLost(f"the engine lost input `{d}`: its compiled model has no input of that "
                        f"name (its inputs: {[sorted(p) for p in ports]})")
    if spare:
        raise InputLost(f"the engine asks for input {sorted(ports[spare[0]])}, which the "
                        f"model does not declare")
    missing = [d for d in declared if d not in feeds and d in named.values()]
    if missing:
        raise HarnessError(f"no value was given for the model's input {missing[0]!r}")
    return {k: writable(feeds[d]) for k, d in named.items() if d is not None}


def onnx_inputs(model) -> tuple:
    """(the input names an ONNX model declares, in order; the initializer names; the declared
    inputs nothing in the model reads): inputs that are also initializers have a value
    already and are not declared inputs to feed."""
    graph = _onnx_proto(model).graph
    given = {t.name for t in graph.initializer}
    declared = [i.name for i in graph.input if i.name not in given]
    read = _onnx_reads(graph)
    return declared, given, {d for d in declared if d not in read}


def _onnx_reads(graph) -> set:
    """Every name a graph (its subgraphs too) reads: node inputs and graph outputs."""
    read = {o.name for o in graph.output}
    for node in graph.node:
        read.update(node.input)
        for a in node.attribute:
            for sub in ([a.g] if a.HasField("g") else []) + list(a.graphs):
                read |= _onnx_reads(sub)
    return read


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


def model_inputs(model) -> tuple:
    """(the inputs a model declares, in order; initializer names; the declared inputs nothing
    reads) of an ONNX model (`onnx_inputs`) or an OpenVINO model (its Parameters, by the name
    each is fed by)."""
    if not hasattr(model, "get_parameters"):
        return onnx_inputs(model)
    params = model.get_parameters()
    return [input_name(p.output(0)) for p in params], set(), \
        {input_name(p.output(0)) for p in params if not p.output(0).get_target_inputs()}


def input_name(output) -> str:
    """The name an OpenVINO model input is fed by: its tensor name (the only one lazyloop's
    exporter and OpenVINO's ONNX reader give it), else the Parameter's friendly name."""
    names = sorted(output.get_names())
    return names[0] if len(names) == 1 else output.get_node().get_friendly_name()


class TractBackend:
    """Sonos' tract (PyPI `tract`), an ONNX inference engine: it runs Scan (opset 9+) and If;
    it has no Loop operator and refuses models with one (spec/51-difftest.md). Input shapes
    and types are fixed from the feeds before the model is optimised."""

    name = "tract"
    format = "onnx"
    formats = ("onnx",)
    kinds = ("onnx-scan9", "onnx-if", "onnx-scan-if")  # what tract runs: no Loop

    def __init__(self):
        import tract
        self._tract = tract

    def load(self, model, feeds):
        """(the value of each input port, in order; the runnable model): input facts are
        fixed from the values fed, then the model is optimised."""
        import tempfile
        proto = _onnx_proto(model)
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
        return {o.name: v.to_numpy() for o, v in zip(_onnx_proto(model).graph.output, out)}


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
        from ..core.evaluate import compile_network, evaluate
        frontend = _frontend(self.format)
        try:  # lowering and compiling: a refusal is "unsupported"
            lowered = frontend.lower(model)
            plan = compile_network(lowered.network)
        except (ModelError, StructureError, UnsupportedError) as exc:
            raise Unsupported(str(exc)) from None
        declared, given, unread = model_inputs(model)
        ports = [{n} for n in lowered.model_inputs] if self.format == "onnx" else \
            [set(b.names) for b in lowered.inputs]
        values = port_values(declared, ports, feeds, given, unread)
        named = {next(d for d in declared if d in ports[k]): v for k, v in values.items()}
        return lowered.user_outputs(evaluate(plan, lowered.core_feeds(named), max_trips=100_000))


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
}


def backend(name):
    """A backend by name: built-in ("onnxruntime", "onnx-reference", "openvino" — CPU;
    OpenVINO models and ONNX models through its reader —, "tract", or lazyloop's own
    frontends "lazyloop", "lazyloop-openvino"), registered by an installed package in the
    entry-point group ``lazyloop.backends``, or ``module:factory``."""
    from .plugins import make_backend
    return make_backend(name)


def formats_of(b) -> tuple:
    return tuple(getattr(b, "formats", None) or (getattr(b, "format", "onnx"),))


def _frontend(fmt):
    if fmt == "onnx":
        from .. import onnx as frontend
    else:
        from .. import openvino as frontend
    return frontend
