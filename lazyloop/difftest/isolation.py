"""Running any backend in a child process, so that what kills a process is a finding.

`Isolated(spec)` forks a child (start method 'fork': a backend *object* is inherited as it
is and need not be picklable; a name or a factory is made in the child). The child reports
"ready" with the backend's name and formats — its start-up has its own time limit
(`startup_timeout`) — then answers one model at a time over a pipe. `run` asks and waits;
`send` asks and returns at once, `receive` takes the answer (the parent works meanwhile:
the checker's pipeline). The parent watches each answer while it waits for it: a child
that dies (a signal: SIGFPE, SIGSEGV, SIGABRT, ...), runs past `timeout` seconds from the
sending, or whose resident memory (VmRSS, read from /proc in the parent; not an
address-space limit, which breaks OpenVINO) passes `memory_mb` is killed and reported as
`BackendCrashed`; the next model starts a fresh child.
"""
from __future__ import annotations

import os
import time
from typing import Optional

import numpy as np

from .backends import HarnessError, InputLost, Unsupported, _onnx_bytes
from .comparing import plain
from .costs import spent
from .shrinking import ABORTED, INTERRUPTED, Abort


class BackendCrashed(Exception):
    """The backend's process died (a signal), ran past its time limit or its memory limit."""


class BackendHung(BackendCrashed):
    """The backend's process gave no answer within its time limit (and was killed)."""


class BackendStartFailed(BackendCrashed):
    """The backend could not be made or started in its child process; `missing` names the
    module whose import failed, when that is why."""

    def __init__(self, message: str, missing: Optional[str] = None):
        super().__init__(message)
        self.missing = missing


DEFAULT_MEMORY_MB = 4096


class Isolated:
    """Backend `spec` (a built-in or registered name, ``module:factory``, a factory or a
    backend object) run in a child process; see the module docstring."""

    def __init__(self, spec, timeout: float = 60.0, startup_timeout: float = 300.0,
                 memory_mb: float = DEFAULT_MEMORY_MB):
        from .plugins import backend_info, factory_of, is_backend
        self.spec = spec
        self.backend_name = spec if isinstance(spec, str) else getattr(spec, "name", None)
        self._factory = factory_of(spec)  # unknown names fail here, in the parent
        self.timeout, self.startup_timeout, self.memory_mb = timeout, startup_timeout, memory_mb
        self._proc = self._conn = None
        self._question = None  # the question sent whose answer is not received yet
        self.restarts = 0
        self.last_costs = {}  # how the last question's time went (`receive`)
        self.answer_seconds = 0.0  # how long the last answer took (`receive`)
        if is_backend(spec):  # known without starting anything
            self._know(backend_info(spec, self.backend_name))
        else:
            self._start()

    def _know(self, info) -> None:
        """What the parent knows of the backend (`plugins.BackendInfo`): its name, formats,
        kinds and version, as the child reported them."""
        self.info = info
        self.name, self.format, self.formats, self.kinds = (info.name, info.format,
                                                            info.formats, info.kinds)
        self.version = info.version

    # -- the child's life -------------------------------------------------------------------
    def _start(self):
        import multiprocessing

        from .plugins import BackendSpecError
        parent, child = multiprocessing.Pipe()
        # the child closes the parent's end: when the parent dies (a Dask worker that kept
        # its backend), the child reads the end of its pipe and exits
        self._proc = _Child.fork(_child_main, child, self._factory, self.backend_name,
                                 closing=(parent,))
        child.close()
        self._conn = parent
        try:
            status, *info = self._await(self.startup_timeout, "starting")
        except BackendCrashed as exc:
            raise BackendStartFailed(f"backend {self.backend_name!r} did not start: {exc}") \
                from None
        if status == "ready":
            self._know(info[0])
            return
        self._kill()
        if status == "not a backend":
            raise BackendSpecError(info[0])
        raise BackendStartFailed(f"backend {self.backend_name!r} did not start: {info[0]}",
                                 missing=info[1])

    def close(self):
        if self._proc is not None:
            try:
                self._conn.send(None)
                self._proc.join(5)
            except Exception:
                pass
            self._kill()

    def _kill(self):
        if self._proc is not None:
            if self._proc.is_alive():
                self._proc.kill()
            self._proc.join()
            self._conn.close()
            self._proc = self._conn = None

    def __del__(self):  # pragma: no cover -- best effort
        try:
            self._kill()
        except Exception:
            pass

    # -- asking -----------------------------------------------------------------------------
    def run(self, model, feeds):
        self.send(model, feeds)
        return self.receive()

    def run_subject(self, subject, feeds):
        """Run a subject whose model the child builds itself from its recipe: an OpenVINO
        model then never goes through IR files (whose reader refuses some models OpenVINO's
        own writer produces, spec/50-findings.md); a "core" program travels as its steps."""
        self.send_subject(subject, feeds)
        return self.receive()

    def send(self, model, feeds) -> None:
        """Hand `model` and `feeds` to the child and return at once: its answer is
        `receive`'s (the parent may work meanwhile; `run` is both)."""
        self.last_costs = {}
        with spent(self.last_costs, "serialisation"):
            payload = _pack_model(model)
        self._send((payload, _plain(feeds)))

    def send_subject(self, subject, feeds) -> None:
        """`send` for a subject (see `run_subject`)."""
        if subject.format == "onnx":
            return self.send(subject.model(), feeds)
        self.last_costs = {}
        return self._send((("subject", subject.portable()), _plain(feeds)))

    @property
    def asked(self) -> bool:
        """Whether a question was sent whose answer `receive` has not taken yet."""
        return self._question is not None

    def discard(self) -> None:
        """Forget an unanswered question: its answer would come to the next one, so a child
        still working on it is killed (a fresh one takes the next question)."""
        if self._question is not None:
            self._question = None
            self._kill()

    def _send(self, message) -> None:
        """Send `message` to the child (a fresh one when it died: "starting" in
        `last_costs`); a child lost on the way is the answer `_receive` gives."""
        if self._question is not None:
            raise RuntimeError("Isolated: a question is still unanswered (receive it first)")
        if self._proc is None or not self._proc.is_alive():
            if self._proc is not None:
                self._kill()
            self.restarts += 1
            with spent(self.last_costs, "starting"):
                self._start()
        self._question = _Question(time.perf_counter())
        try:
            self._conn.send(message)
        except (OSError, BrokenPipeError):
            self._question.lost = True
        except (KeyboardInterrupt, Abort):  # its answer would come to the next question
            self._question = None
            self._kill()
            raise
        self._question.sent = time.perf_counter()
        self.last_costs["transfer"] = self._question.sent - self._question.started

    def receive(self):
        """The child's answer to the question sent last. `last_costs` gets how waiting for
        it went: the backend's own run (timed in the child) and the parent's waiting past it
        as "transfer", or all the waiting as "hangs" when the child ran past its time limit
        (counted from the sending), as "backend" when it died (costs.py). When the parent
        did other work between sending and receiving, the part of the backend's run that
        work covered is "overlapped" (`send`'s own `last_costs`: serialisation, a fresh
        child's start as "starting", the sending as "transfer")."""
        question, self._question = self._question, None
        if question is None:
            raise RuntimeError("Isolated: no question to receive the answer of")
        self.last_costs = {}
        waiting = time.perf_counter()
        sending = question.sent - question.started
        try:
            if question.lost:
                raise BackendCrashed(self._died())
            status, value, own = self._await(self.timeout, "running", question.started)
        except BackendHung:  # the parent's waiting only: what the hang cost the campaign
            self.last_costs["hangs"] = time.perf_counter() - waiting
            raise
        except BackendCrashed:  # a death: the backend's run, from the sending
            self.last_costs["backend"] = time.perf_counter() - question.sent
            self.last_costs["overlapped"] = waiting - question.sent
            raise
        except (KeyboardInterrupt, Abort):  # its answer would come to the next question
            self._kill()
            raise
        blocked = time.perf_counter() - waiting
        # the child may start its clock before the parent notes that sending ended (the
        # parent can be descheduled in between); it cannot before sending began
        overlapped = min(own, waiting - question.started)
        self.last_costs["backend"] = own
        self.last_costs["overlapped"] = overlapped
        self.last_costs["transfer"] = max(0.0, blocked - (own - overlapped))
        # how long the answer took: to its arrival when the parent waited for it, else (it
        # came while the parent worked) the backend's run (what `Checker.answered` notes)
        self.answer_seconds = sending + (waiting - question.sent + blocked
                                         if blocked > 1e-3 else own)
        if status == "ok":
            return value
        kind, text = value
        raise _remote_error(kind)(text)

    def _await(self, limit: float, doing: str, since: Optional[float] = None):
        """The child's next answer; kills it and raises BackendCrashed on death, on `limit`
        seconds without an answer (counted from `since`, a time.perf_counter() value, or
        from now), or when its resident memory passes `memory_mb`."""
        deadline = (time.perf_counter() if since is None else since) + limit
        while True:
            if self._conn.poll(0.02):
                try:
                    return self._conn.recv()
                except (EOFError, OSError):
                    raise BackendCrashed(self._died()) from None
            if not self._proc.is_alive():
                raise BackendCrashed(self._died())
            if ABORTED.is_set():  # a second Ctrl-C: the child goes, nothing is kept
                self._kill()
                raise Abort()
            if INTERRUPTED.is_set():  # Ctrl-C (the command line's handler): stop waiting
                raise KeyboardInterrupt
            rss = resident_mb(self._proc.pid)
            if self.memory_mb and rss is not None and rss > self.memory_mb:
                self._kill()
                raise BackendCrashed(f"the backend's process passed its memory limit of "
                                     f"{self.memory_mb:.0f} MiB while {doing} (killed)")
            if time.perf_counter() > deadline:
                self._kill()
                raise BackendHung(f"no answer within {limit:.3g} s while {doing} (killed)")

    def _died(self) -> str:
        proc = self._proc
        proc.join(10)
        code = proc.exitcode
        self._kill()
        return f"the backend's process died ({_describe_exit(code)})"


class _Question:
    """A question sent to the child: when sending began and ended, and whether the child
    was found gone while sending."""

    def __init__(self, started: float):
        self.started = self.sent = started
        self.lost = False


class _Child:
    """A forked child process (os.fork: works inside daemonic processes such as Dask's
    workers, where multiprocessing refuses to start children)."""

    def __init__(self, pid: int):
        self.pid, self.exitcode = pid, None

    @classmethod
    def fork(cls, target, *args, closing=()) -> "_Child":
        pid = os.fork()
        if pid == 0:  # pragma: no cover -- the child
            code = 0
            try:
                for conn in closing:  # the parent's ends, not the child's to hold open
                    conn.close()
                target(*args)
            except BaseException:
                code = 1
            finally:
                os._exit(code)
        return cls(pid)

    def _reap(self, flags: int) -> None:
        if self.exitcode is not None:
            return
        try:
            pid, status = os.waitpid(self.pid, flags)
        except ChildProcessError:
            self.exitcode = -1
            return
        if pid:
            self.exitcode = os.waitstatus_to_exitcode(status)

    def is_alive(self) -> bool:
        self._reap(os.WNOHANG)
        return self.exitcode is None

    def join(self, timeout=None) -> None:
        deadline = time.monotonic() + (timeout if timeout is not None else 1e9)
        while self.is_alive() and time.monotonic() < deadline:
            time.sleep(0.01)

    def kill(self) -> None:
        import signal
        if self.is_alive():
            os.kill(self.pid, signal.SIGKILL)
            self._reap(0)


def resident_mb(pid: int):
    """A process's resident set size in MiB (VmRSS in /proc/PID/status), None if unknown."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def _plain(feeds):
    return {k: np.asarray(v) for k, v in feeds.items()}


def _describe_exit(code) -> str:
    import signal
    if code is not None and code < 0:
        try:
            return f"signal {signal.Signals(-code).name}"
        except ValueError:
            return f"signal {-code}"
    return f"exit code {code}"


# the harness's own exceptions come back as themselves: they mean something to the tester
_HARNESS_TYPES = {"Unsupported": Unsupported, "InputLost": InputLost,
                  "HarnessError": HarnessError}
_REMOTE_TYPES = dict(_HARNESS_TYPES)


def _remote_error(kind: str):
    """The harness's own exception class, or one named like the backend's own (the message
    keeps its text)."""
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
        import onnx
        return onnx.ModelProto.FromString(data)
    if kind == "subject":
        return data.model()
    from ..openvino.ir import read_ir
    return read_ir(*data)


def _child_main(conn, factory, spec):  # pragma: no cover -- runs in the child process
    import faulthandler
    import signal

    from .plugins import BackendSpecError, backend_info
    faulthandler.disable()  # a crash is reported by the parent, not dumped here
    # Ctrl-C reaches the whole process group: it is the parent's to act on, and a child it
    # killed would look like a crash of the backend
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    quiet = os.open(os.devnull, os.O_WRONLY)
    os.dup2(quiet, 1)  # what the backend prints goes nowhere (errors come through the pipe)
    os.dup2(quiet, 2)
    try:
        b = factory()
        conn.send(("ready", backend_info(b, spec)))
    except BackendSpecError as exc:
        conn.send(("not a backend", str(exc)))
        return
    except BaseException as exc:
        missing = exc.name if isinstance(exc, ImportError) else None
        conn.send(("failed", f"{type(exc).__name__}: {exc}", missing))
        return
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return
        if message is None:
            return
        payload, feeds = message
        started = None
        try:
            model = _unpack_model(payload)
            started = time.perf_counter()
            out = b.run(model, feeds)
            own = time.perf_counter() - started
            answer = ("ok", {k: plain(v) for k, v in out.items()}, own)
        except Exception as exc:
            own = 0.0 if started is None else time.perf_counter() - started
            kind = next((k for k, cls in _HARNESS_TYPES.items() if isinstance(exc, cls)),
                        type(exc).__name__)
            answer = ("error", (kind, str(exc)), own)
        conn.send(answer)

