"""The backend a command names (`--backend` of `run`, `check` and `conformance run`), started
before any program or model is evaluated: a name nothing answers to, a package that is not
installed (the extra that brings it is named), a factory that raises or returns something that
is not a backend, a format lazyloop does not know -- each is the user's mistake, one line and
exit status 2 (`UsageError`). A backend that declares no format is given ONNX models, and one
line on stderr says so."""
from __future__ import annotations

import contextlib
import sys

from .common import EXTRA_OF_MODULE, UsageError, missing_extra


def start_backend(name: str, isolate: bool = True, timeout: float = 60.0,
                  memory_mb=None, prog: str = "lazyloop"):
    """The backend `name` names (built-in, registered, or module:factory looked up from the
    current folder first), made and checked now: in a child process (`Isolated`) unless not
    `isolate`. Whoever starts it closes it (`close_backend`)."""
    from ..difftest.isolation import DEFAULT_MEMORY_MB, BackendStartFailed, Isolated
    from ..difftest.plugins import BackendSpecError, backend_info, make_backend
    try:
        b = Isolated(name, timeout=timeout, memory_mb=memory_mb or DEFAULT_MEMORY_MB) \
            if isolate else make_backend(name)
    except BackendSpecError as exc:
        raise UsageError(str(exc)) from None
    except BackendStartFailed as exc:
        raise UsageError(_missing(name, exc.missing) or str(exc)) from None
    except ImportError as exc:  # not isolated: made here
        raise UsageError(_missing(name, exc.name)
                         or f"backend {name!r} did not start: {type(exc).__name__}: {exc}") \
            from None
    except Exception as exc:  # not isolated: the factory raised
        raise UsageError(f"backend {name!r} did not start: {type(exc).__name__}: {exc}") \
            from None
    info = getattr(b, "info", None) or backend_info(b, name)
    if not info.format_declared:
        print(f"{prog}: note: backend {name!r} declares no format; it is given ONNX models "
              f"(set format = \"onnx\" or \"openvino\" on it to say so)", file=sys.stderr)
    return b


def _missing(name, module):
    """The line for a backend whose package is not installed, when lazyloop knows the extra
    that brings it (a plug-in's own dependency is reported as its error)."""
    if module and module.split(".")[0] in EXTRA_OF_MODULE:
        return f"--backend {name}: {missing_extra(ImportError(name=module))}"
    return None


def close_backend(b) -> None:
    close = getattr(b, "close", None)
    if close:
        close()


@contextlib.contextmanager
def started(name, timeout: float = 60.0, prog: str = "lazyloop"):
    """`start_backend(name)` (isolated) for the length of a block, closed after it; None when
    no backend is named."""
    b = start_backend(name, timeout=timeout, prog=prog) if name else None
    try:
        yield b
    finally:
        if b is not None:
            close_backend(b)
