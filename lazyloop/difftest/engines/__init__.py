"""Engines users deploy, built in as backends, one module each: IREE (`iree`: ONNX import,
llvm-cpu), MNN (`mnn`: its converter and Module API) and the graph optimisers run in front
of onnxruntime (`optimisers`: `onnxslim`, `onnxsim`, `onnxoptimizer`). Each is behind its
own extra; they feed engines as every built-in adapter does (`difftest/feeding.py`: every
declared input, as a writable copy; an input the engine lost is `InputLost`). What each runs,
refuses and converts: spec/51-difftest.md, "Engines users deploy".

The factories below (`iree_backend`, ...; not named like the modules, which would replace
them once imported) are the entries of the built-in backend table: a module is imported
only when its backend is made, so a missing package says which extra brings it then.
"""
from __future__ import annotations

import contextlib


@contextlib.contextmanager
def needs(extra: str):
    """A package missing while a backend is made: the error says which extra brings it."""
    try:
        yield
    except ModuleNotFoundError as exc:
        raise ModuleNotFoundError(f"{exc}: backend {extra!r} needs it, install "
                                  f"lazyloop[{extra}]", name=exc.name) from None


def iree_backend():
    from .iree import IreeBackend
    with needs("iree"):
        return IreeBackend()


def mnn_backend():
    from .mnn import MnnBackend
    with needs("mnn"):
        return MnnBackend()


def onnxslim_backend():
    return _optimised("onnxslim")


def onnxsim_backend():
    return _optimised("onnxsim")


def onnxoptimizer_backend():
    return _optimised("onnxoptimizer")


def _optimised(tool: str):
    from .optimisers import OptimisedOnnxRuntime
    with needs(tool):
        return OptimisedOnnxRuntime(tool)
