"""Differential testing: lazyloop is the oracle, a backend is the system under test.

    import lazyloop.difftest as dt
    report = dt.check(dt.backend("onnxruntime"), max_examples=200, seed=0)
    report.examples, report.disagreements, report.unsupported, report.coverage
    print(report.summary())

A *backend* is any object with `name`, optionally `format` ("onnx", the default, or
"openvino") or `formats` (every format it takes), and `run(model, feeds) -> {output name:
value}`. To say "I refuse this model" (it does not load or compile) its `run` raises
`Unsupported`; any other exception is a failure while running an accepted model.

What is generated (hypothesis, seeded): core programs (`lazyloop.strategies.networks`)
exported to the backend's format (`lazyloop.onnx.export`, `lazyloop.openvino.export`, with drawn export options), and programs
written in the dialects themselves (`lazyloop.strategies.dialects`: ONNX Loop in every mode,
Scan 8 and 9+, OpenVINO Loop-5 with every port kind). The expected values come from lazyloop:
`ll.run` for core programs, the frontends' `run` for dialect programs, with the masks of
defined positions.

Comparison (`compare`): every expected output must be present; dtype and shape are compared
exactly; values only where lazyloop says they are defined (CONCATENATE padding, A3 values are
ignored), floats with ``rtol=1e-4, atol=1e-5`` (float16: 1e-2), everything else exactly.

Each disagreement is shrunk by hypothesis to a minimal program of the same *signature*
(subject kind, kind of difference, ambiguity); a difference that an alternative reading of
the ambiguity register explains (lazyloop evaluated under that reading agrees with the
backend) is reported with that register ID in `ambiguity`.
"""
from __future__ import annotations

import os
import re
import sys
import time
from collections import Counter
from typing import Dict, List, Optional

import attrs
import numpy as np

from ..core.errors import EvaluationError, FuelExhausted, LazyLoopError

FLOAT_TOLERANCE = {np.dtype(np.float16): (1e-2, 1e-2)}
DEFAULT_TOLERANCE = (1e-4, 1e-5)  # rtol, atol for float32/float64


class Unsupported(Exception):
    """Raised by a backend's `run` when it refuses to load or compile a model."""


# ------------------------------------------------------------------------------------------
# Backends
# ------------------------------------------------------------------------------------------


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


class BackendCrashed(Exception):
    """The backend's process died (a signal) or ran past its time limit."""


class Isolated:
    """A built-in backend run in a child process, so that a backend that crashes the process
    (a signal such as SIGFPE or SIGSEGV) or never returns is a *finding* and not the end of
    the campaign. The child (``python -c``, talking pickles over its stdin/stdout) is started
    on first use and restarted after a crash."""

    def __init__(self, name: str, timeout: float = 60.0):
        probe = backend(name)
        self.backend_name = name
        self.name = probe.name
        self.format = getattr(probe, "format", "onnx")
        self.formats = formats_of(probe)
        self.timeout = timeout
        self._proc = None

    def _start(self):
        import subprocess
        code = f"from lazyloop.difftest import _worker_main; _worker_main({self.backend_name!r})"
        self._proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)

    def close(self):
        if self._proc is not None:
            try:
                _send(self._proc.stdin, None)
                self._proc.wait(timeout=5)
            except Exception:
                self._proc.kill()
            self._proc = None

    def _kill(self):
        if self._proc is not None:
            self._proc.kill()
            self._proc.wait()
            self._proc = None

    def run(self, model, feeds):
        return self._ask((_pack_model(model), {k: np.asarray(v) for k, v in feeds.items()}))

    def run_subject(self, subject, feeds):
        """Run a subject whose model the child process builds itself from its recipe: an
        OpenVINO model then never goes through IR files (whose reader refuses some models
        OpenVINO's own writer produces, spec/50-findings.md)."""
        if subject.format != "openvino":
            return self.run(subject.model(), feeds)
        return self._ask((("subject", subject.portable()),
                          {k: np.asarray(v) for k, v in feeds.items()}))

    def _ask(self, message):
        if self._proc is None or self._proc.poll() is not None:
            self._start()
        try:
            _send(self._proc.stdin, message)
            answer = _receive(self._proc.stdout, self.timeout)
        except TimeoutError:
            self._kill()
            raise BackendCrashed(f"no answer within {self.timeout:.0f} s (killed)") from None
        except (EOFError, OSError, BrokenPipeError):
            proc, self._proc = self._proc, None
            try:
                code = proc.wait(timeout=10)
            except Exception:
                proc.kill()
                code = None
            raise BackendCrashed(f"the backend's process died ({_describe_exit(code)})") from None
        status, value = answer
        if status == "ok":
            return value
        kind, message = value
        if kind == "Unsupported":
            raise Unsupported(message)
        raise _remote_error(kind)(message)


def _send(stream, obj) -> None:
    import pickle
    import struct
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(struct.pack("<Q", len(data)) + data)
    stream.flush()


def _read_exactly(stream, n: int, deadline: Optional[float]) -> bytes:
    import select
    chunks, fd = [], stream.fileno()
    while n:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise TimeoutError()
        chunk = os.read(fd, n)
        if not chunk:
            raise EOFError()
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def _receive(stream, timeout: Optional[float] = None):
    import pickle
    import struct
    deadline = None if timeout is None else time.monotonic() + timeout
    (size,) = struct.unpack("<Q", _read_exactly(stream, 8, deadline))
    return pickle.loads(_read_exactly(stream, size, deadline))


def _describe_exit(code) -> str:
    import signal
    if code is not None and code < 0:
        try:
            return f"signal {signal.Signals(-code).name}"
        except ValueError:
            return f"signal {-code}"
    return f"exit code {code}"


_REMOTE_TYPES = {}


def _remote_error(kind: str):
    """An exception class named like the backend's own (the message keeps its text)."""
    if kind not in _REMOTE_TYPES:
        _REMOTE_TYPES[kind] = type(kind, (RuntimeError,), {"__module__": "backend"})
    return _REMOTE_TYPES[kind]


def _pack_model(model):
    """A model as plain data for the child process: ONNX bytes, or OpenVINO IR text+weights."""
    if isinstance(model, bytes) or hasattr(model, "SerializeToString"):
        return ("onnx", _onnx_bytes(model))
    import tempfile

    import openvino as ov
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "model.xml")
        ov.save_model(model, path, compress_to_fp16=False)
        with open(path, "rb") as f:
            xml = f.read()
        with open(os.path.join(tmp, "model.bin"), "rb") as f:
            weights = f.read()
    return ("openvino", (xml, weights))


def _unpack_model(payload):
    kind, data = payload
    if kind == "onnx":
        return data
    if kind == "subject":
        return data.model()
    import openvino as ov
    xml, weights = data
    return ov.Core().read_model(model=xml.decode(), weights=ov.Tensor(
        np.frombuffer(weights, dtype=np.uint8).copy()))


def _worker_main(name):  # pragma: no cover -- runs in the child process
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # whatever the backend prints must not corrupt the channel
    b = backend(name)
    while True:
        try:
            message = _receive(stdin)
        except EOFError:
            return
        if message is None:
            return
        payload, feeds = message
        try:
            out = b.run(_unpack_model(payload), feeds)
            answer = ("ok", {k: np.asarray(v) for k, v in out.items()})
        except Unsupported as exc:
            answer = ("error", ("Unsupported", str(exc)))
        except Exception as exc:
            answer = ("error", (type(exc).__name__, str(exc)))
        _send(stdout, answer)


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


# ------------------------------------------------------------------------------------------
# Comparing
# ------------------------------------------------------------------------------------------


@attrs.frozen
class Difference:
    output: str
    kind: str        # "error", "missing-output", "dtype", "shape", "values"
    detail: str


def tolerance(dtype):
    return FLOAT_TOLERANCE.get(np.dtype(dtype), DEFAULT_TOLERANCE)


def compare(expected: dict, defined: dict, actual: dict) -> List[Difference]:
    """What differs between lazyloop's outputs and a backend's (see the module docstring)."""
    diffs = []
    for name, want in expected.items():
        if name not in actual:
            diffs.append(Difference(name, "missing-output",
                                    f"the backend returned {sorted(actual)}"))
            continue
        got = actual[name]
        if not isinstance(want, np.ndarray):
            continue  # sequences and optionals: not produced by the generators
        got = np.asarray(got)
        if got.dtype != want.dtype:
            diffs.append(Difference(name, "dtype", f"expected {want.dtype}, got {got.dtype}"))
            continue
        if got.shape != want.shape:
            diffs.append(Difference(name, "shape", f"expected {list(want.shape)}, "
                                                   f"got {list(got.shape)}"))
            continue
        mask = np.asarray(defined.get(name, True), dtype=bool)
        mask = np.broadcast_to(mask, want.shape)
        if not mask.any():
            continue
        w, g = want[mask], got[mask]
        if want.dtype.kind in "fc":
            rtol, atol = tolerance(want.dtype)
            ok = np.isclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
        else:
            ok = g == w
        if not np.all(ok):
            bad = int(np.size(ok) - np.count_nonzero(ok))
            first = int(np.flatnonzero(~np.asarray(ok))[0])
            diffs.append(Difference(name, "values",
                                    f"{bad} of {np.size(ok)} defined positions differ; e.g. "
                                    f"expected {w.reshape(-1)[first]!r}, got "
                                    f"{g.reshape(-1)[first]!r}"))
    return diffs


# ------------------------------------------------------------------------------------------
# Subjects: one generated program in one format, with lazyloop's expectation
# ------------------------------------------------------------------------------------------


class Invalid(Exception):
    """lazyloop refuses the program (a LazyLoopError while evaluating it): not a test."""


class NotExported(Exception):
    """The exporter says the program has no translation in the target format."""


class Refused(Exception):
    """The target library refused to construct the model (counted as unsupported)."""


@attrs.frozen(slots=False, repr=False)
class Subject:
    """`kind` is "core" (a core program exported to `format` with `options`) or a dialect
    kind ("onnx-loop", "onnx-scan9", "onnx-scan8", "openvino-loop")."""

    kind: str
    format: str
    program: object
    options: tuple = ()

    def __repr__(self):
        opts = f", options={dict(self.options)!r}" if self.options else ""
        return f"Subject({self.kind!r}, {self.format!r}{opts},\n  {self.program!r})"

    def key(self) -> str:
        return repr(self)

    def portable(self) -> "Subject":
        """A copy without cached networks and models, cheap to pickle."""
        program = self.program
        if self.kind == "core":
            from ..strategies import Program
            p = program
            program = Program(p.steps, p.inputs, p.outputs, p.rules, p.features)
        else:
            program = type(program)(program.recipe)
        return Subject(self.kind, self.format, program, self.options)

    # -- the model --------------------------------------------------------------------------
    def model(self):
        if "_model" not in self.__dict__:
            self.__dict__["_model"] = self._make_model()
        return self.__dict__["_model"]

    def _make_model(self):
        from ..core.export import NotExportable, TargetRefused
        try:
            if self.kind != "core":
                return self.program.model
            if self.format == "core":  # the builder calls themselves (TensorRT replay)
                return self.program
            if self.format == "onnx":
                from ..onnx.export import export
            else:
                from ..openvino.export import export
            return export(self.program.net, **dict(self.options))
        except NotExportable as exc:
            raise NotExported(str(exc)) from None
        except TargetRefused as exc:
            raise Refused(str(exc)) from None

    @property
    def feeds(self) -> dict:
        return dict(self.program.feeds)

    # -- the expectation --------------------------------------------------------------------
    def expectation(self):
        """(outputs, defined masks, rules); raises Invalid when lazyloop refuses it."""
        if "_expect" not in self.__dict__:
            self.__dict__["_expect"] = self._expect()
        return self.__dict__["_expect"]

    def _expect(self):
        from ..core.evaluate import run
        try:
            if self.kind == "core":
                ev = run(self.program.net, self.program.feeds, max_trips=100_000)
                outputs, defined, plan = ev.outputs, ev.defined, ev.plan
                trace = ev.trace
            else:
                frontend = _frontend(self.format)
                r = frontend.run(self.model(), self.feeds, max_trips=100_000)
                outputs, defined = r.outputs, r.defined
                plan, trace = r.evaluation.plan, r.evaluation.trace
        except LazyLoopError as exc:
            raise Invalid(str(exc)) from None
        rules = set(getattr(self.program, "rules", ()))
        rules |= plan_rules(plan, trace)
        if self.kind == "core" and self.format != "core":
            rules.add({"onnx": "onnx/loop", "openvino": "openvino/loop5"}[self.format])
            if self.format == "onnx" and dict(self.options).get("scan"):
                from ..core.export import Structure
                s = Structure(self.program.net)
                if any(s.scan_fit(loop) is not None for loop in self.program.net.loops):
                    rules.add("onnx/scan9")
        return outputs, defined, frozenset(rules)


def _frontend(fmt):
    if fmt == "onnx":
        from .. import onnx as frontend
    else:
        from .. import openvino as frontend
    return frontend


def plan_rules(plan, trace=None) -> set:
    """The core rules a compiled plan exercises (read from its nodes and loops)."""
    from ..core.enums import LoopOutput
    from ..core.plan import IfOutput, Iterator, LoopOut, Recurrence
    rules = {"stream/shape", "stream/map", "stream/memo"}
    if plan.loops:
        rules |= {"structure/acyclic", "structure/exit", "structure/limits",
                  "structure/recurrence", "structure/shapes"}
    for lp in plan.loops.values():
        if lp.count and lp.while_:
            rules.add("trip/both")
        elif lp.count:
            rules.add("trip/count")
        elif lp.while_:
            rules.add("trip/while")
        if lp.parent is not None:
            rules.add("structure/nesting")
    for node in plan.nodes.values():
        if isinstance(node, Iterator):
            rules.add("iterator/reverse" if node.reverse else "iterator/forward")
        elif isinstance(node, Recurrence):
            rules |= {"recurrence/def", "stream/order"}
        elif isinstance(node, LoopOut):
            rules.add({LoopOutput.LAST_VALUE: "output/last",
                       LoopOutput.CONCATENATE: "output/concat",
                       LoopOutput.REVERSE: "output/reverse"}[node.kind])
            if node.length is not None:
                rules.add("structure/length")
        elif isinstance(node, IfOutput):
            rules.add("laziness/dead")
        for ref in node.inputs():
            if ref is not None and node.scope is not None and plan.nodes[ref].scope != node.scope:
                rules.add("stream/invariant")
    if plan.profile == "tensorrt" and plan.loops:
        rules.add("profile/tensorrt-dtypes")
        for lp in plan.loops.values():
            if lp.while_:
                rules.add("structure/while-input")
            if any(plan.nodes[o].kind is LoopOutput.LAST_VALUE for o in lp.outputs):
                rules.add("structure/last-value")
    if trace is not None:
        forced = {e.stream for e in trace}
        if any(nid not in forced for nid, n in plan.nodes.items() if n.scope is not None):
            rules.add("laziness/dead")
    return rules


# ------------------------------------------------------------------------------------------
# Generating subjects
# ------------------------------------------------------------------------------------------


def onnx_export_options():
    from hypothesis import strategies as st
    return st.tuples(
        st.tuples(st.just("scan"), st.sampled_from((False, True))),
        st.tuples(st.just("cond"), st.sampled_from(("omit", "true"))),
        st.tuples(st.just("opset"), st.sampled_from((17, 13, 19, 21))))


def openvino_export_options():
    from hypothesis import strategies as st
    return st.tuples(
        st.tuples(st.just("iterator"), st.sampled_from(("slice", "gather"))),
        st.tuples(st.just("conditional"), st.sampled_from(("select", "if"))))


def subjects(formats=("onnx",), kinds=None):
    """A strategy of `Subject`s in the given formats (all kinds by default)."""
    from hypothesis import strategies as st

    from ..strategies import dialects as ds
    from ..strategies import networks
    parts = []
    for fmt in formats:
        if fmt == "core":  # core programs handed over as builder calls (lazyloop.tensorrt.replay)
            if kinds is None or "core" in kinds:
                parts.append(st.builds(Subject, st.just("core"), st.just("core"),
                                       networks(max_depth=1), st.just(())))
            continue
        options = onnx_export_options() if fmt == "onnx" else openvino_export_options()
        table = {"core": st.builds(Subject, st.just("core"), st.just(fmt),
                                   networks(max_depth=1), options)}
        dialect = ds.ONNX_KINDS if fmt == "onnx" else ds.OPENVINO_KINDS
        for kind, strategy in dialect.items():
            table[kind] = st.builds(Subject, st.just(kind), st.just(fmt), strategy())
        parts += [s for k, s in table.items() if kinds is None or k in kinds]
    if not parts:
        raise ValueError(f"no subjects for formats {formats} and kinds {kinds}")
    return st.one_of(parts)


# ------------------------------------------------------------------------------------------
# Outcomes and reports
# ------------------------------------------------------------------------------------------


@attrs.define
class Outcome:
    status: str                      # agree, disagree, unsupported, invalid, not-exportable
    rules: frozenset = frozenset()
    differences: tuple = ()
    actual: Optional[dict] = None
    error: Optional[str] = None
    ambiguity: Optional[str] = None
    internal: Optional[str] = None   # lazyloop itself crashed

    def signature(self, subject) -> tuple:
        if self.status != "disagree":
            return (self.status,)
        kinds = sorted({d.kind for d in self.differences})
        head = kinds[0] if kinds else "?"
        if head == "error":
            head = "error:" + _error_key(self.error or "")
        return ("disagree", subject.kind, head)


def _error_key(message: str) -> str:
    """A short, stable summary of an error message: where it happened (node names, graph
    nesting), numbers and quoted names are dropped, so that one fault met in different
    programs gives one key."""
    text = " ".join(message.strip().split())
    head = text.split(":")[0]
    if "Status Message:" in text:  # onnxruntime: the reason follows the node's name
        text = head + ": " + text.split("Status Message:", 1)[1]
    text = re.sub(r"'[^']*'|\"[^\"]*\"", "'…'", text)
    text = re.sub(r"\b(in (body of|graph) [^:]*?)(?=:)", "", text)
    text = re.sub(r"(Name|node|layer|stream|tensor)\s*:?\s*'…'", r"\1", text)
    text = re.sub(r"\d+", "#", text)
    return text[:120]


@attrs.define
class Disagreement:
    """One distinct disagreement, shrunk: `model` in the backend's format, `feeds`,
    `expected` (lazyloop) and `actual` (backend; None when it failed: see `error`), `rules`
    exercised, `ambiguity` (the register ID of an alternative reading that explains the
    difference, else None)."""

    model: object
    feeds: dict
    expected: dict
    actual: Optional[dict]
    rules: frozenset
    ambiguity: Optional[str]
    defined: dict = attrs.Factory(dict)
    differences: tuple = ()
    error: Optional[str] = None
    subject: Optional[Subject] = None
    signature: tuple = ()
    found_after: int = 0       # examples generated before the first instance
    occurrences: int = 1       # instances in the generation phase
    shrunk: bool = False

    @property
    def kind(self) -> str:
        return self.signature[2] if len(self.signature) > 2 else "?"

    def describe(self) -> str:
        lines = [f"{self.subject.kind if self.subject else '?'}: "
                 + "; ".join(f"{d.output}: {d.kind}: {d.detail}" for d in self.differences)]
        if self.error:
            lines.append(f"backend error: {self.error.strip()[:500]}")
        if self.ambiguity:
            lines.append(f"explained by ambiguity {self.ambiguity}")
        lines.append(f"rules: {', '.join(sorted(self.rules))}")
        return "\n".join(lines)


@attrs.frozen
class Refusal:
    """A kind of model the backend refused to load or compile: the reason, how often, an
    example subject."""
    reason: str
    count: int
    example: Optional[Subject]
    rules: frozenset


@attrs.define
class Report:
    backend: str
    seed: int
    examples: int = 0                 # programs run against the backend
    agreements: int = 0
    generated: int = 0                # programs drawn (including invalid / not exportable)
    invalid: int = 0
    not_exportable: int = 0
    disagreements: List[Disagreement] = attrs.Factory(list)
    unsupported: List[Refusal] = attrs.Factory(list)
    coverage: frozenset = frozenset()
    instances: int = 0                # disagreeing examples before grouping
    internal_errors: List[str] = attrs.Factory(list)
    seconds: float = 0.0
    by_kind: Counter = attrs.Factory(Counter)

    @property
    def unsupported_count(self) -> int:
        return sum(r.count for r in self.unsupported)

    def summary(self) -> str:
        return summary_table(self)


# ------------------------------------------------------------------------------------------
# Checking one subject
# ------------------------------------------------------------------------------------------


class Checker:
    """Runs subjects against one backend and remembers outcomes (hypothesis replays them)."""

    def __init__(self, b, attribute: bool = True):
        self.backend = b
        self.memo: Dict[str, Outcome] = {}
        self.attribute_ambiguities = attribute

    def outcome(self, subject: Subject) -> Outcome:
        key = subject.key()
        if key not in self.memo:
            self.memo[key] = self.examine(subject)
        return self.memo[key]

    def examine(self, subject: Subject) -> Outcome:
        try:
            expected, defined, rules = subject.expectation()
            model = subject.model()
        except Invalid as exc:
            return Outcome("invalid", error=str(exc))
        except NotExported as exc:
            return Outcome("not-exportable", error=str(exc))
        except Refused as exc:
            return Outcome("unsupported", rules=frozenset(), error=str(exc))
        except LazyLoopError as exc:  # pragma: no cover -- a deliberate error we did not expect
            return Outcome("invalid", error=str(exc))
        except Exception as exc:  # lazyloop itself failed
            return Outcome("invalid", internal=f"{type(exc).__name__}: {exc}")
        try:
            if hasattr(self.backend, "run_subject"):
                actual = self.backend.run_subject(subject, subject.feeds)
            else:
                actual = self.backend.run(model, subject.feeds)
        except Unsupported as exc:
            return Outcome("unsupported", rules=rules, error=str(exc))
        except Exception as exc:
            return Outcome("disagree", rules=rules,
                           differences=(Difference("*", "error", f"{type(exc).__name__}"),),
                           error=f"{type(exc).__name__}: {exc}")
        diffs = compare(expected, defined, actual)
        if not diffs:
            return Outcome("agree", rules=rules)
        return Outcome("disagree", rules=rules, differences=tuple(diffs),
                       actual={k: np.asarray(v) for k, v in actual.items()})

    def attribute(self, subject: Subject, out: Outcome, actual) -> None:
        """Which registered ambiguity, read otherwise, makes lazyloop agree with the backend."""
        if not self.attribute_ambiguities or subject.format == "core":
            return
        if actual is None and "process died" in (out.error or ""):
            return  # a crash is a bug whatever the reading
        try:
            model = subject.model()
        except Exception:  # pragma: no cover
            return
        frontend = _frontend(subject.format)
        try:  # only a model lazyloop evaluates by default can be read otherwise
            frontend.run(model, subject.feeds, max_trips=10_000)
        except Exception:
            return
        for amb_id, reading in alternative_readings(subject.format):
            if actual is None and reading not in REFUSING_READINGS | {"no-limit", "infinite"}:
                continue
            try:
                r = frontend.run(model, subject.feeds, max_trips=10_000,
                                 readings={amb_id: reading})
            except FuelExhausted:
                if actual is None and "no answer within" in (out.error or ""):
                    out.ambiguity = amb_id  # the backend hangs where this reading never ends
                    return
                continue
            except EvaluationError:
                if actual is None:  # a reading that refuses, as the backend does
                    out.ambiguity = amb_id
                    return
                continue
            except Exception:
                continue
            if actual is not None and not compare(r.outputs, r.defined, actual):
                out.ambiguity = amb_id
                return


# readings under which lazyloop refuses (a runtime error) what the default reading runs
REFUSING_READINGS = frozenset({"error", "refuse", "eager"})


def alternative_readings(fmt: str):
    """(ambiguity ID, reading) for every reading other than the default, core register first
    and then the frontend's own entries."""
    from ..core.ambiguity import REGISTER
    pairs = []
    for a in REGISTER.values():
        pairs += [(a.id, r) for r in a.readings if r != a.default]
    try:
        if fmt == "onnx":
            from ..onnx.lowering import FRONTEND_READINGS
            for k, options in FRONTEND_READINGS.items():
                pairs += [(k, r) for r in options[1:]]
        else:
            from ..openvino.register import OPENVINO_REGISTER
            for a in OPENVINO_REGISTER.values():
                pairs += [(a.id, r) for r in a.readings if r != a.default]
    except ImportError:  # pragma: no cover
        pass
    return pairs


# ------------------------------------------------------------------------------------------
# The campaign: generate, group, shrink
# ------------------------------------------------------------------------------------------


class _Found(Exception):
    pass


def _settings(max_examples, phases):
    from hypothesis import HealthCheck, Verbosity, settings
    return settings(max_examples=max_examples, deadline=None, database=None,
                    phases=phases, suppress_health_check=list(HealthCheck),
                    verbosity=Verbosity.quiet, report_multiple_bugs=False,
                    print_blob=False)


def check(b, max_examples: int = 200, seed: int = 0, formats=None, kinds=None,
          shrink: bool = True, shrink_seconds: float = 60.0, progress=None) -> Report:
    """Differential-test backend `b` against lazyloop on `max_examples` generated programs
    (see the module docstring). Returns a `Report`. `formats` defaults to every format the
    backend takes; `kinds` restricts the subject kinds ("core", "onnx-loop", ...);
    `progress(stage, done, total, report)` is called as it goes."""
    from hypothesis import Phase, given
    from hypothesis import seed as hseed

    formats = tuple(formats or formats_of(b))
    strategy = subjects(formats, kinds)
    checker = Checker(b)
    report = Report(getattr(b, "name", type(b).__name__), seed)
    start = time.monotonic()
    first_seen: Dict[tuple, tuple] = {}   # signature -> (subject, outcome, index)
    counts: Counter = Counter()
    refusals: Dict[str, list] = {}
    coverage = set()

    @hseed(seed)
    @_settings(max_examples, [Phase.generate])
    @given(strategy)
    def explore(subject):
        report.generated += 1
        out = checker.outcome(subject)
        report.by_kind[subject.kind] += 1
        if out.internal:
            report.internal_errors.append(f"{subject!r}: {out.internal}")
        if out.status == "invalid":
            report.invalid += 1
        elif out.status == "not-exportable":
            report.not_exportable += 1
        else:
            report.examples += 1
            coverage.update(out.rules)
            if out.status == "agree":
                report.agreements += 1
            elif out.status == "unsupported":
                reason = _error_key(out.error or "")
                refusals.setdefault(reason, [0, subject, out.rules])[0] += 1
            else:
                report.instances += 1
                sig = out.signature(subject)
                counts[sig] += 1
                if sig not in first_seen:
                    first_seen[sig] = (subject, out, report.generated)
        if progress:
            progress("generate", report.generated, max_examples, report)

    explore()
    report.coverage = frozenset(coverage)
    report.unsupported = [Refusal(reason, n, subj, rules)
                          for reason, (n, subj, rules) in refusals.items()]
    for k, (sig, (subject, out, index)) in enumerate(first_seen.items()):
        if progress:
            progress("shrink", k, len(first_seen), report)
        minimal, mout, shrunk = subject, out, False
        if shrink:
            minimal, mout, shrunk = _shrink(strategy, checker, sig, seed, max_examples,
                                            shrink_seconds, subject, out)
        report.disagreements.append(_disagreement(minimal, mout, checker, sig, index,
                                                  counts[sig], shrunk))
    if progress:
        progress("done", len(first_seen), len(first_seen), report)
    report.seconds = time.monotonic() - start
    return report


def _shrink(strategy, checker, sig, seed, max_examples, budget, subject, out):
    """Replay the generation with the same seed (outcomes come from the memo) until the first
    subject of signature `sig`, and let hypothesis shrink it. Past the time budget only
    subjects already known to fail count, so the shrinker stops soon and replays cleanly."""
    from hypothesis import Phase, given
    from hypothesis import seed as hseed

    best = [subject, out]
    deadline = time.monotonic() + budget

    @hseed(seed)
    @_settings(max_examples, [Phase.generate, Phase.shrink])
    @given(strategy)
    def replay(candidate):
        key = candidate.key()
        if key not in checker.memo and time.monotonic() > deadline:
            return
        o = checker.outcome(candidate)
        if o.status == "disagree" and o.signature(candidate) == sig:
            best[0], best[1] = candidate, o
            raise _Found()

    try:
        replay()
    except _Found:
        return best[0], best[1], best[0] is not subject
    except Exception:  # hypothesis could not replay (flaky): keep the first instance
        pass
    return subject, out, False


def _disagreement(subject, out, checker, sig, index, count, shrunk) -> Disagreement:
    """The record of one (minimal) disagreement; its ambiguity is looked for here, on the
    minimal program, where nothing unrelated to the difference is left to explain it."""
    expected, defined, rules = subject.expectation()
    checker.attribute(subject, out, out.actual)
    return Disagreement(model=subject.model(), feeds=subject.feeds, expected=expected,
                        actual=out.actual, rules=out.rules or rules, ambiguity=out.ambiguity,
                        defined=defined, differences=out.differences, error=out.error,
                        subject=subject, signature=sig, found_after=index,
                        occurrences=count, shrunk=shrunk)


# ------------------------------------------------------------------------------------------
# Throughput
# ------------------------------------------------------------------------------------------


def throughput(b, n: int = 100, seed: int = 0, formats=None, kinds=None) -> float:
    """Programs checked per second against backend `b` (generation, lazyloop's evaluation,
    export and the backend's run; no shrinking), measured over `n` generated programs."""
    report = check(b, max_examples=n, seed=seed, formats=formats, kinds=kinds, shrink=False)
    return report.generated / report.seconds if report.seconds else float("inf")


# ------------------------------------------------------------------------------------------
# Reporting and the command line
# ------------------------------------------------------------------------------------------


# rules that every compiled loop program exercises: they tell no disagreement apart
EVERY_PROGRAM_RULES = frozenset({"stream/shape", "stream/map", "stream/memo",
                                 "structure/acyclic", "structure/exit", "structure/limits",
                                 "structure/recurrence", "structure/shapes"})


def summary_table(report: Report) -> str:
    rows = [("backend", report.backend), ("seed", report.seed),
            ("programs generated", report.generated),
            ("examples (run on the backend)", report.examples),
            ("agreements", report.agreements),
            ("disagreeing examples", report.instances),
            ("distinct disagreements", len(report.disagreements)),
            ("  explained by an ambiguity", sum(1 for d in report.disagreements if d.ambiguity)),
            ("unsupported (refused to load/compile)", report.unsupported_count),
            ("invalid for lazyloop (skipped)", report.invalid),
            ("not exportable (skipped)", report.not_exportable),
            ("seconds", f"{report.seconds:.1f}")]
    width = max(len(k) for k, _ in rows)
    lines = [f"{k:<{width}}  {v}" for k, v in rows]
    if report.disagreements:
        lines += ["", "disagreements by rule (distinct disagreements whose minimal program "
                      "exercises it; rules every program exercises left out):"]
        by_rule = Counter(r for d in report.disagreements for r in d.rules
                          if r not in EVERY_PROGRAM_RULES)
        for rule, n in sorted(by_rule.items(), key=lambda kv: (-kv[1], kv[0])):
            lines.append(f"  {rule:<28} {n}")
        lines += ["", "distinct disagreements:"]
        for k, d in enumerate(report.disagreements):
            amb = f" [ambiguity {d.ambiguity}]" if d.ambiguity else ""
            lines.append(f"  {k}: {d.signature[1]} {d.kind} x{d.occurrences}{amb}: "
                         + "; ".join(f"{x.output}: {x.detail}" for x in d.differences)[:160])
    if report.unsupported:
        lines += ["", "unsupported (reason: count):"]
        for r in sorted(report.unsupported, key=lambda r: -r.count):
            lines.append(f"  {r.count:>4}  {r.reason[:150]}")
    lines += ["", f"rule coverage ({len(report.coverage)}): " + ", ".join(sorted(report.coverage))]
    if report.internal_errors:
        lines += ["", f"lazyloop internal errors: {len(report.internal_errors)}"]
        lines += ["  " + e.splitlines()[-1][:200] for e in report.internal_errors[:5]]
    return "\n".join(lines)


def write_case(directory: str, name: str, d: Disagreement) -> str:
    """One disagreement as an ONNX backend-test case: <name>/model.onnx (or model.xml/.bin
    for OpenVINO models), test_data_set_0/input_N.pb and output_N.pb (lazyloop's expected
    values; undefined positions hold lazyloop's fill and are listed in README.md), and a
    README.md saying what differs."""
    from onnx import numpy_helper
    case = os.path.join(directory, name)
    data = os.path.join(case, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    fmt = d.subject.format if d.subject else "onnx"
    if fmt == "onnx":
        with open(os.path.join(case, "model.onnx"), "wb") as f:
            f.write(_onnx_bytes(d.model))
        input_names = [i.name for i in d.model.graph.input]
        output_names = [o.name for o in d.model.graph.output]
    else:
        import openvino as ov
        ov.save_model(d.model, os.path.join(case, "model.xml"), compress_to_fp16=False)
        input_names = [p.get_friendly_name() for p in d.model.get_parameters()]
        output_names = list(d.expected)
    for k, name_ in enumerate(n for n in input_names if n in d.feeds):
        _write_tensor(os.path.join(data, f"input_{k}.pb"), d.feeds[name_], name_, numpy_helper)
    for k, name_ in enumerate(n for n in output_names if n in d.expected):
        _write_tensor(os.path.join(data, f"output_{k}.pb"), d.expected[name_], name_,
                      numpy_helper)
    with open(os.path.join(case, "README.md"), "w", encoding="utf-8") as f:
        f.write(case_readme(name, d))
    return case


def _write_tensor(path, value, name, numpy_helper):
    with open(path, "wb") as f:
        f.write(numpy_helper.from_array(np.asarray(value), name).SerializeToString())


def case_readme(name: str, d: Disagreement) -> str:
    lines = [f"# {name}", "",
             f"Found by `lazyloop check` (signature {d.signature!r}; {d.occurrences} "
             f"disagreeing example(s), first after {d.found_after} programs; "
             f"{'shrunk' if d.shrunk else 'not shrunk'}).", "",
             "## What differs", ""]
    for x in d.differences:
        lines.append(f"- `{x.output}`: {x.kind}: {x.detail}")
    if d.error:
        lines += ["", "The backend failed while running the model:", "", "```",
                  d.error.strip()[:2000], "```"]
    lines += ["", f"Ambiguity: {d.ambiguity or 'none registered explains it'}", "",
              f"Rules exercised: {', '.join(f'`{r}`' for r in sorted(d.rules))}", "",
              "## Expected (lazyloop)", ""]
    for k, v in d.expected.items():
        mask = np.asarray(d.defined.get(k, True), bool)
        note = "" if mask.all() else \
            f" ({int(mask.size - mask.sum())} undefined positions: any value is right there)"
        lines.append(f"- `{k}`{note}: `{np.asarray(v).tolist()!r}`"[:1500])
    if d.actual is not None:
        lines += ["", "## Actual (backend)", ""]
        for k, v in d.actual.items():
            lines.append(f"- `{k}`: `{np.asarray(v).tolist()!r}`"[:1500])
    lines += ["", "## The program", "", "```", repr(d.subject)[:6000], "```", ""]
    return "\n".join(lines)


EXIT_INTERNAL = 3


def cli_check(argv) -> int:
    """`lazyloop check --backend NAME --examples N --seed S --out DIR`."""
    import argparse
    parser = argparse.ArgumentParser(prog="lazyloop check",
                                     description="differential-test a backend against lazyloop")
    parser.add_argument("--backend", required=True, help=f"one of {sorted(BACKENDS)}")
    parser.add_argument("--examples", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=None, help="write each disagreement here as an ONNX "
                                                     "backend-test case")
    parser.add_argument("--format", action="append", choices=("onnx", "openvino"),
                        help="restrict to these model formats (default: all the backend takes)")
    parser.add_argument("--kind", action="append",
                        help="restrict to subject kinds: core, onnx-loop, onnx-scan9, "
                             "onnx-scan8, openvino-loop")
    parser.add_argument("--no-shrink", action="store_true")
    parser.add_argument("--shrink-seconds", type=float, default=60.0)
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument("--no-isolate", dest="isolate", action="store_false",
                        help="run the backend in this process (a crash ends the run)")
    parser.add_argument("--timeout", type=float, default=60.0,
                        help="seconds one model may run before it counts as hanging")
    args = parser.parse_args(list(argv))
    try:
        b = Isolated(args.backend, timeout=args.timeout) if args.isolate else backend(args.backend)
    except KeyError as exc:
        print(f"lazyloop check: {exc.args[0]}", file=sys.stderr)
        return 2
    except ImportError as exc:
        print(f"lazyloop check: backend {args.backend!r} is not installed ({exc})",
              file=sys.stderr)
        return 2
    bars = {}

    def progress(stage, done, total, report):
        if args.quiet:
            return
        from tqdm import tqdm
        if stage == "done":
            for bar in bars.values():
                bar.close()
            return
        bar = bars.get(stage)
        if bar is None:
            for other in bars.values():
                other.close()
            bar = bars[stage] = tqdm(total=total, desc=stage, unit="prog", file=sys.stderr)
        bar.n = done
        bar.set_postfix(agree=report.agreements, disagree=report.instances,
                        refused=report.examples - report.agreements - report.instances,
                        refresh=False)
        bar.refresh()

    try:
        report = check(b, max_examples=args.examples, seed=args.seed, formats=args.format,
                       kinds=args.kind, shrink=not args.no_shrink,
                       shrink_seconds=args.shrink_seconds, progress=progress)
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # lazyloop itself failed: the one distinct non-zero status
        import traceback
        traceback.print_exc()
        print(f"lazyloop check: internal error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return EXIT_INTERNAL
    finally:
        for bar in bars.values():
            bar.close()
        if isinstance(b, Isolated):
            b.close()
    print(report.summary())
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        for k, d in enumerate(report.disagreements):
            name = f"case_{k:03d}_{d.signature[1]}_{re.sub(r'[^a-z0-9]+', '-', d.kind.lower())[:40]}"
            write_case(args.out, name.strip("-"), d)
        print(f"\nwrote {len(report.disagreements)} case(s) to {args.out}")
    return 0


__all__ = ["Unsupported", "BackendCrashed", "Isolated", "backend", "BACKENDS", "OnnxRuntimeBackend", "OnnxReferenceBackend",
           "OpenVinoBackend", "LazyloopBackend", "TripCountPlusOne", "compare", "Difference",
           "Subject", "subjects", "check", "Report", "Disagreement", "Refusal", "throughput",
           "cli_check", "write_case", "summary_table", "plan_rules", "alternative_readings"]
