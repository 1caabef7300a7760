"""Naming a backend: a built-in name, a name an installed package registers in the entry-point
group ``lazyloop.backends``, or ``module:factory`` (an importable callable that returns a
backend). `make_backend` also takes a factory (a callable) or a backend object as it is.

``module:factory`` is imported as ``python -m`` imports a module: from the current folder
first. The folder is put at the front of ``sys.path`` and stays there, so that what the module
imports later is found too; an isolated child (forked) inherits it, and Dask LocalCluster
workers are handed the folder (`search_first`). Workers of a remote scheduler import the
module as installed there.

What a factory makes is checked before any program runs (`backend_info`): it has
``run(model, feeds)`` and takes model formats lazyloop knows (`KNOWN_FORMATS`); a backend that
declares no format is given ONNX models (``format_declared`` is then False, and the command
line says so in one line).
"""
from __future__ import annotations

import importlib
import os
import sys
from typing import Optional

import attrs

from .backends import BACKENDS

ENTRY_POINT_GROUP = "lazyloop.backends"
# "core": the builder calls of a core program, as `lazyloop.tensorrt` replays them
KNOWN_FORMATS = ("onnx", "openvino", "core")


class BackendSpecError(KeyError):
    """A backend name that names nothing lazyloop can find, or a factory that makes no usable
    backend (a user's mistake)."""

    def __str__(self):  # the message itself, not KeyError's quoted repr of it
        return str(self.args[0]) if self.args else ""


@attrs.frozen
class BackendInfo:
    """What the parent knows of a backend without holding it: its name, the formats and
    subject kinds it takes, its version (None: lazyloop looks it up by name) and whether it
    declared its format (else it is given ONNX models)."""

    name: str
    formats: tuple
    kinds: Optional[tuple] = None
    version: Optional[str] = None
    format_declared: bool = True

    @property
    def format(self) -> str:
        return self.formats[0]


def is_backend(obj) -> bool:
    """A backend is an object with `run` (and `name`, `format`/`formats`)."""
    return callable(getattr(obj, "run", None)) and not isinstance(obj, type)


def backend_info(b, spec) -> BackendInfo:
    """The `BackendInfo` of `b`, which `spec` made; BackendSpecError when `b` is not a backend
    or names a format lazyloop does not know (formats are lowercase: "onnx", "openvino",
    "core")."""
    if not is_backend(b):
        shown = repr(b) if len(repr(b)) <= 60 else repr(b)[:57] + "..."
        raise BackendSpecError(f"backend {spec!r}: the factory returned {type(b).__name__} "
                               f"{shown}, not a backend (an object with run(model, feeds))")
    declared = [*_names(b, "formats"), *_names(b, "format")]
    for fmt in declared:
        if fmt not in KNOWN_FORMATS:
            raise BackendSpecError(f"backend {spec!r}: format {fmt!r} is not a model format "
                                   f"lazyloop knows; give one of {', '.join(KNOWN_FORMATS)}")
    formats = tuple(_names(b, "formats") or _names(b, "format") or ["onnx"])
    kinds, version = getattr(b, "kinds", None), getattr(b, "version", None)
    return BackendInfo(str(getattr(b, "name", None) or type(b).__name__), formats,
                       tuple(kinds) if kinds else None,
                       None if version is None else str(version), bool(declared))


def _names(b, attribute) -> list:
    value = getattr(b, attribute, None)
    if value is None:
        return []
    return [value] if isinstance(value, str) or not isinstance(value, (tuple, list)) \
        else list(value)


def entry_point_backends() -> dict:
    """{name: entry point} registered by installed packages in ``lazyloop.backends``."""
    from importlib.metadata import entry_points
    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


def factory_of(spec):
    """The zero-argument callable that makes the backend `spec` names (see the module
    docstring); raises BackendSpecError for a name nothing answers to."""
    if not isinstance(spec, str):
        if is_backend(spec):
            return lambda: spec
        if callable(spec):
            return spec
        raise BackendSpecError(f"{spec!r} is neither a backend (an object with run) "
                               f"nor a factory")
    if spec in BACKENDS:  # a factory, or the `module:factory` of an engine's module
        entry = BACKENDS[spec]
        return _import_factory(entry) if isinstance(entry, str) else entry
    registered = entry_point_backends()
    if spec in registered:
        return _load_entry_point(spec, registered[spec])
    if ":" in spec:
        return _import_factory(spec)
    raise BackendSpecError(f"unknown backend {spec!r}; built-in: {sorted(BACKENDS)}, "
                           f"registered: {sorted(registered)}; or give module:factory")


def plugin_spec(spec) -> Optional[str]:
    """The ``module:factory`` that makes the plug-in `spec` names, for a case folder's
    repro.py to import: `spec` itself, a registered name's entry point, or the module and
    name of a factory (a function or class) handed over as an object; None for a built-in
    (repro.py has its own runner) and for a backend object, which no name makes again."""
    if isinstance(spec, str):
        if spec in BACKENDS:
            return None
        registered = entry_point_backends()
        if spec in registered:
            return registered[spec].value
        return spec if ":" in spec else None
    if is_backend(spec) or not callable(spec):
        return None
    module, name = getattr(spec, "__module__", None), getattr(spec, "__qualname__", "")
    if not module or module == "__main__" or "<" in name:
        return None
    return f"{module}:{name}"


def search_first(folder: str) -> None:
    """Put `folder` at the front of ``sys.path`` (once), as ``python -m`` does with the
    current folder, so that ``module:factory`` finds a module written there."""
    folder = os.path.abspath(folder)
    if folder not in sys.path:
        sys.path.insert(0, folder)
        importlib.invalidate_caches()


def _load_entry_point(name, entry_point):
    try:
        return entry_point.load()
    except Exception as exc:
        raise BackendSpecError(f"backend {name!r}: the entry point {entry_point.value!r} "
                               f"does not load ({type(exc).__name__}: {exc})") from None


def _import_factory(spec: str):
    module_name, _, attr = spec.partition(":")
    search_first(os.getcwd())
    try:
        obj = importlib.import_module(module_name)
    except ImportError as exc:
        raise BackendSpecError(f"backend {spec!r}: cannot import {module_name!r} from the "
                               f"current folder or the installed packages ({exc})") from None
    except Exception as exc:  # the module itself fails while it is imported
        raise BackendSpecError(f"backend {spec!r}: importing {module_name!r} raised "
                               f"{type(exc).__name__}: {exc}") from None
    for part in attr.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            raise BackendSpecError(f"backend {spec!r}: {module_name!r} has no {attr!r}")
    if is_backend(obj):
        return lambda: obj
    if not callable(obj):
        raise BackendSpecError(f"backend {spec!r}: {attr!r} is not callable")
    return obj


def backend(name):
    """A backend by name: built-in ("onnxruntime", "onnx-reference", "openvino" — CPU;
    OpenVINO models and ONNX models through its reader —, "tract", the engines "iree",
    "mnn", "onnxslim", "onnxsim", "onnxoptimizer", or lazyloop's own frontends "lazyloop",
    "lazyloop-openvino"), registered by an installed package in the
    entry-point group ``lazyloop.backends``, or ``module:factory``."""
    return make_backend(name)


def make_backend(spec):
    """The backend `spec` names, made in this process and checked (`backend_info`)."""
    b = factory_of(spec)()
    backend_info(b, spec if isinstance(spec, str) else getattr(spec, "name", repr(spec)))
    return b
