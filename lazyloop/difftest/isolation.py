"""Running a built-in backend in a child process, and the pickle protocol spoken with it.

A crash (a signal) or a hang inside the backend then ends the child, not the campaign:
`Isolated` reports it as `BackendCrashed` and starts a fresh child for the next model.
`_worker_main` is the loop the child runs.
"""
from __future__ import annotations

import os
import sys
import time
from typing import Optional

import numpy as np

from .backends import Unsupported, _onnx_bytes, backend, formats_of


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
        code = (f"from lazyloop.difftest.isolation import _worker_main; "
                f"_worker_main({self.backend_name!r})")
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
