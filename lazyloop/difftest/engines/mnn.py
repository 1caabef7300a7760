"""MNN as a backend (`mnn`, extra `[mnn]`): the ONNX model is converted by MNN's own
converter, called as the library function the `mnn` wheel ships (`_tools.mnnconvert`, the
converter's command line in-process), and run with MNN's Module API
(`MNN.nn.load_module_from_file`, inputs made with `MNN.expr.const`).

Never through the `mnnconvert` Python wrapper (`MNN.tools.mnnconvert`, the wheel's
`mnnconvert` script): importing it imports `MNN.tools.utils.log`, which runs
``pip install -U aliyun-log-python-sdk`` when that package is missing and sends a log of
every conversion (model id, sizes, options, a machine id) to a remote service. This module
blocks `MNN.tools` from being imported in the process that runs MNN (`block_telemetry`).
"""
from __future__ import annotations

import contextlib
import os
import re
import sys
import tempfile

import numpy as np

from ..backends import LoadFailed, Unsupported, _onnx_bytes, _onnx_proto, says_unsupported
from ..feeding import in_engine_order, writable

# the package whose import runs `pip install` and uploads logs: never imported here
TELEMETRY_PACKAGE = "MNN.tools"


def block_telemetry() -> None:
    """Make `import MNN.tools` fail in this process (the wrapper is never needed: the
    converter is called directly)."""
    if TELEMETRY_PACKAGE not in sys.modules:
        sys.modules[TELEMETRY_PACKAGE] = None


class MnnBackend:
    """MNN (PyPI `mnn`): MNN's converter, then its Module API on the CPU."""

    name = "mnn"
    format = "onnx"
    formats = ("onnx",)
    # Loop (bodies of any op too) and If; no 8-bit If: MNN's 8-bit arithmetic fails outside
    # any If too (an int8 Add crashes, an int8 Mul is wrong), which the If kind cannot separate
    kinds = ("onnx-loop", "onnx-if-no-8bit", "onnx-schema-loop")

    def __init__(self):
        block_telemetry()
        with quiet():  # importing MNN prints the CPU's features
            import MNN
            import MNN.expr as expr
            import MNN.nn as nn
            import _tools  # the converter, as the wheel builds it (beside MNN's engine)
        self._convert, self._expr, self._nn = _tools.mnnconvert, expr, nn
        self.version = MNN.version()

    def run(self, model, feeds):
        proto = _onnx_proto(model)
        for out in proto.graph.output:
            if not out.type.HasField("tensor_type"):
                raise Unsupported(f"mnn: output {out.name!r} is not a tensor (a sequence or "
                                  f"an optional): MNN's Module API returns tensors only")
        with tempfile.TemporaryDirectory() as tmp:
            module = self.load(_onnx_bytes(model), tmp)
        # the converted model's own inputs and outputs (loaded without naming any, MNN
        # lists what the model has; named, it would echo any name back)
        info = module.get_info()
        takes, gives = list(info["inputNames"]), list(info["outputNames"])
        given = in_engine_order(proto, takes, feeds)
        outputs = module.forward([self._input(value, var)
                                  for value, var in zip(given, info["inputs"])])
        declared = {out.name: out for out in proto.graph.output}
        return {name: as_declared(value.read(), declared.get(name))
                for name, value in zip(gives, outputs)}

    def load(self, data: bytes, tmp: str):
        """The converted model as an MNN Module; a failed conversion is `Unsupported` when
        the converter says so, else `LoadFailed`."""
        source, target = os.path.join(tmp, "model.onnx"), os.path.join(tmp, "model.mnn")
        with open(source, "wb") as f:
            f.write(data)
        with quiet() as said:
            converted = self._convert(["mnnconvert", "-f", "ONNX", "--modelFile", source,
                                       "--MNNModel", target, "--bizCode", "lazyloop"])
        if not converted or not os.path.exists(target):
            raise _failure("convert", said())
        try:
            with quiet() as said:
                return self._nn.load_module_from_file(target, [], [])
        except Exception as exc:
            raise _failure("load", f"{type(exc).__name__}: {exc} {said()}") from None

    def _input(self, value, var):
        """A feed as the MNN variable the converted model takes. MNN's `const` reads only
        float32, int32 and uint8 arrays (an int64 or float64 array is read as raw 32-bit
        words, an int8 one refused): other types are given in the nearest of those and
        cast by MNN to the type the model's input was converted to (MNN keeps int64 and
        bool as int32, float64 as float32)."""
        expr, kind = self._expr, str(var.dtype).split(".")[-1]
        value = np.asarray(value)
        carrier = CARRIERS[kind]
        if value.dtype.kind in "iub" and value.size and not _fits(value, carrier):
            raise Unsupported(f"mnn: an input of {value.dtype} holds values past "
                              f"{np.dtype(carrier).name}, the type MNN keeps it in")
        array = writable(value.astype(carrier))
        carried_as = {np.float32: expr.float, np.int32: expr.int, np.uint8: expr.uint8}[carrier]
        made = expr.const(array, list(array.shape), expr.NCHW, carried_as)
        return made if np.dtype(carrier) == np.dtype(EXACT[kind]) else \
            expr.cast(made, var.dtype)


# MNN's element types (`MNN.expr.dtype`), the numpy type each stands for, and the type its
# feed is made in (what `MNN.expr.const` reads correctly)
EXACT = {"float": np.float32, "double": np.float64, "int": np.int32, "int64": np.int64,
         "int8": np.int8, "uint8": np.uint8}
CARRIERS = {"float": np.float32, "double": np.float32, "int": np.int32, "int64": np.int32,
            "int8": np.int32, "uint8": np.uint8}


def _fits(value, carrier) -> bool:
    info = np.iinfo(carrier)
    return bool(value.min() >= info.min and value.max() <= info.max)


def as_declared(array, out) -> np.ndarray:
    """An output in the element type the ONNX graph declares for it (MNN computes int64 and
    bool in int32, float16 in float32; the values are kept, so a wrap-around at 2^31 still
    shows); as it comes for an output the graph does not declare (`out` None)."""
    import onnx
    if out is None:
        return np.array(array)
    declared = onnx.helper.tensor_dtype_to_np_dtype(out.type.tensor_type.elem_type)
    return np.array(array).astype(declared, copy=False)


# the converter's progress lines (not what went wrong) and its lines' "[hh:mm:ss] :NN: "
_BANNER = re.compile(r"^(Start to |ONNX Model |Converted |The device supports|"
                     r"inputTensors|outputTensors|The model has subgraphs)")
_STAMP = re.compile(r"^\[[\d:]+\] :\d+: ")


def _failure(stage: str, said: str) -> Exception:
    """What the converter or loader said, as `Unsupported` when it names an op it does
    not support ("These Op Not Support: ONNX::Scan"), else `LoadFailed`."""
    lines = [_STAMP.sub("", line.strip()) for line in said.splitlines()]
    lines = [line for line in lines if line and not _BANNER.match(line)][:6]
    text = f"mnn {stage} failed: " + (" | ".join(lines) or "nothing said")
    refused = says_unsupported(Exception(text)) or "Not Support" in text
    return Unsupported(text) if refused else LoadFailed(text)


@contextlib.contextmanager
def quiet():
    """What the engine's C++ code prints on stdout and stderr, kept instead of shown:
    yields a function that returns it."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    with tempfile.TemporaryFile() as log:
        os.dup2(log.fileno(), 1)
        os.dup2(log.fileno(), 2)
        kept = []

        def said() -> str:
            return kept[0] if kept else ""
        try:
            yield said
        finally:
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])
            log.seek(0)
            kept.append(log.read().decode(errors="replace"))
