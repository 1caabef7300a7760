"""Naming a backend: a built-in name, a name an installed package registers in the entry-point
group ``lazyloop.backends``, or ``module:factory`` (an importable callable that returns a
backend). `make_backend` also takes a factory (a callable) or a backend object as it is.
"""
from __future__ import annotations

import importlib

ENTRY_POINT_GROUP = "lazyloop.backends"


class BackendSpecError(KeyError):
    """A backend name that names nothing lazyloop can find (a user's mistake)."""


def is_backend(obj) -> bool:
    """A backend is an object with `run` (and `name`, `format`/`formats`)."""
    return callable(getattr(obj, "run", None)) and not isinstance(obj, type)


def entry_point_backends() -> dict:
    """{name: entry point} registered by installed packages in ``lazyloop.backends``."""
    from importlib.metadata import entry_points
    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


def factory_of(spec):
    """The zero-argument callable that makes the backend `spec` names (see the module
    docstring); raises BackendSpecError for a name nothing answers to."""
    from .backends import BACKENDS
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
        return registered[spec].load()
    if ":" in spec:
        return _import_factory(spec)
    raise BackendSpecError(f"unknown backend {spec!r}; built-in: {sorted(BACKENDS)}, "
                           f"registered: {sorted(registered)}; or give module:factory")


def _import_factory(spec: str):
    module_name, _, attr = spec.partition(":")
    try:
        obj = importlib.import_module(module_name)
    except ImportError as exc:
        raise BackendSpecError(f"backend {spec!r}: cannot import {module_name!r} "
                               f"({exc})") from None
    for part in attr.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            raise BackendSpecError(f"backend {spec!r}: {module_name!r} has no {attr!r}")
    if is_backend(obj):
        return lambda: obj
    if not callable(obj):
        raise BackendSpecError(f"backend {spec!r}: {attr!r} is not callable")
    return obj


def make_backend(spec):
    """The backend `spec` names, made in this process."""
    b = factory_of(spec)()
    if not is_backend(b):
        raise BackendSpecError(f"backend {spec!r}: the factory returned {type(b).__name__}, "
                               f"which has no run(model, feeds)")
    return b
