"""Reading what a user gives `run` and `explain`: the model file (or a case folder) and the
`--input` feeds, checked against the model's declared inputs before anything is evaluated. A
file that is not a model -- empty, undecodable, cut short, not an IR, without outputs -- is
the user's input error (exit status 2), never a model the specification refused.

    --input NAME=FILE.npy     a NumPy array file (never unpickled)
    --input NAME=FILE.pb      an ONNX TensorProto (as in test_data_set_*/input_N.pb)
    --input NAME=LITERAL      a Python literal: 5, -1.5, True, [[1, 2], [3, 4]]; it is read with
                              the input's declared dtype, and a value that dtype cannot hold
                              exactly (3.5 for an integer input, 300 for int8) is refused
"""
from __future__ import annotations

import ast
import contextlib
import os
import sys

import numpy as np

from .common import UsageError


def model_format(path) -> str:
    """"onnx" or "openvino", by the file's extension; a one-line refusal for a file that
    does not exist or is neither."""
    if not os.path.exists(path):
        raise UsageError(f"no such file: {path}")
    if path.endswith(".onnx"):
        return "onnx"
    if path.endswith(".xml"):
        return "openvino"
    raise UsageError(f"{path}: expected a .onnx model, an OpenVINO .xml IR or a case "
                     "folder (model + test_data_set_*)")


def read_case_folder(directory):
    """The case `directory` holds (`difftest.cases.read_case`), or a one-line refusal."""
    from ..difftest.cases import read_case
    try:
        return read_case(directory)
    except ValueError as exc:  # not a case folder
        raise UsageError(str(exc)) from None
    except ImportError:  # onnx reads the .pb files: the command names the extra
        raise
    except Exception as exc:  # a .pb file that does not parse
        raise UsageError(f"{directory}: cannot read the case ({type(exc).__name__}: "
                         f"{exc})") from None


def load_model(path):
    """Read the model file -- a file that is not a model is the user's input error (exit
    status 2) -- and lower it onto the core, where what the specification refuses is exit
    status 1."""
    if model_format(path) == "onnx":
        from .. import onnx as frontend
        model = read_onnx_file(path)
    else:
        from .. import openvino as frontend
        model = read_ir_file(path)
    return frontend.lower(model)


def read_onnx_file(path):
    """The ModelProto in `path`; refused when the file is empty, does not parse, names no
    ONNX opset (a truncated file can still parse) or has no outputs."""
    from ..core.errors import ModelError
    from ..onnx import load_model as parse
    not_empty(path, "an ONNX model")
    try:
        proto = parse(path)
    except ModelError as exc:
        raise UsageError(str(exc)) from None
    if not any(o.domain in ("", "ai.onnx") for o in proto.opset_import):
        raise UsageError(f"{path}: not a whole ONNX model: it names no ONNX opset "
                         "(opset_import), as a truncated file or one not written by onnx.save")
    return has_outputs(path, proto, len(proto.graph.output))


def read_ir_file(path):
    """The openvino.Model of the IR in `path` (with its .bin); refused when the file is
    empty, is not the XML of an IR, OpenVINO cannot read it, or it has no outputs. What
    OpenVINO logs while reading goes nowhere (`foreign_logs_held`)."""
    import xml.etree.ElementTree as ET

    from ..core.errors import ModelError
    from ..openvino import read_model
    not_empty(path, "an OpenVINO IR")
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as exc:
        raise UsageError(f"{path}: not an OpenVINO IR: the file is not XML ({exc})") from None
    if root.tag != "net":
        raise UsageError(f"{path}: not an OpenVINO IR: its XML is <{root.tag}>, not <net>")
    try:
        with foreign_logs_held():
            model = read_model(path)
    except ModelError as exc:
        raise UsageError(str(exc)) from None
    return has_outputs(path, model, len(model.outputs))


def not_empty(path, what) -> None:
    if os.path.getsize(path) == 0:
        raise UsageError(f"{path}: the file is empty (0 bytes), not {what}")


def has_outputs(path, model, outputs: int):
    if not outputs:
        raise UsageError(f"{path}: the model has no outputs: there is nothing to evaluate")
    return model


@contextlib.contextmanager
def foreign_logs_held():
    """Whatever is written to file descriptor 2 while the block runs (a foreign library's
    own log lines: OpenVINO's frontends report a file they cannot parse there) is dropped
    instead of reaching the terminal; lazyloop says what went wrong in its own line."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as nowhere:
            os.dup2(nowhere.fileno(), 2)
            try:
                yield
            finally:
                sys.stderr.flush()
                os.dup2(saved, 2)
    finally:
        os.close(saved)


def declared_inputs(lowered) -> dict:
    """{name a user feeds: (declared type, required)} for a lowered ONNX or OpenVINO model
    (an ONNX input with an initializer has a default)."""
    return {b.name: (b.type, b.required) for b in lowered.inputs}


def parse_inputs(pairs, lowered) -> dict:
    """The feeds of `--input NAME=...` options, matched to the model's inputs."""
    declared = declared_inputs(lowered)
    aliases = {n: b.name for b in lowered.inputs for n in b.aliases}
    feeds = {}
    for pair in pairs or []:
        if "=" not in pair:
            raise UsageError(f"--input wants NAME=FILE.npy, NAME=FILE.pb or NAME=VALUE, "
                             f"got {pair!r}")
        name, text = pair.split("=", 1)
        key = aliases.get(name, name)
        if key not in declared:
            raise UsageError(f"--input {name}: the model has no input {name!r}; its inputs "
                             f"are {sorted(declared)}")
        if key in feeds:
            raise UsageError(f"--input {name}: given twice")
        feeds[key] = read_value(name, text, declared[key][0])
    missing = [n for n, (ty, required) in declared.items() if required and n not in feeds]
    if missing:
        wants = ", ".join(f"{n} ({declared[n][0]!r})" for n in missing)
        raise UsageError(f"missing --input for {wants}")
    return feeds


def read_value(name: str, text: str, ty):
    """One feed: a .npy or .pb file, or a literal read with the declared dtype."""
    if text.endswith((".npy", ".pb")):
        return read_tensor_file(f"--input {name}", text)
    try:
        literal = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        raise UsageError(f"--input {name}: {text!r} is neither a .npy/.pb file nor a Python "
                         "literal such as 5, 2.5, True or [[1, 2], [3, 4]]") from None
    return literal_as(name, literal, getattr(ty, "dtype", None))


def literal_as(name: str, literal, dtype):
    """`literal` as an array of `dtype`, refusing what the dtype cannot hold exactly."""
    leaves = list(_leaves(literal))
    if not all(isinstance(x, (bool, int, float)) for x in leaves):
        raise UsageError(f"--input {name}: {literal!r} is not a number, a bool or a nested "
                         "list of them")
    dtype = None if dtype is None or np.dtype(dtype) == object else np.dtype(dtype)
    if dtype is not None and dtype.kind == "b" and not all(isinstance(x, bool) for x in leaves):
        raise UsageError(f"--input {name}: the input is bool; write True or False, "
                         f"not {literal!r}")
    if dtype is not None and dtype.kind in "iu":
        if not all(isinstance(x, int) and not isinstance(x, bool) for x in leaves):
            raise UsageError(f"--input {name}: the input is {dtype}; {literal!r} is not an "
                             "integer")
        info = np.iinfo(dtype)
        if leaves and (min(leaves) < info.min or max(leaves) > info.max):
            raise UsageError(f"--input {name}: {literal!r} does not fit in {dtype} "
                             f"({info.min} .. {info.max})")
    try:
        return np.asarray(literal, dtype=dtype)
    except (ValueError, OverflowError) as exc:
        raise UsageError(f"--input {name}: {literal!r} cannot be read as "
                         f"{dtype or 'an array'} ({exc})") from None


def _leaves(literal):
    if isinstance(literal, (list, tuple)):
        for item in literal:
            yield from _leaves(item)
    else:
        yield literal


def read_tensor_file(what: str, path: str):
    """A .npy file (no pickles) or an ONNX TensorProto .pb file, or a one-line refusal."""
    if not os.path.exists(path):
        raise UsageError(f"{what}: no such file: {path}")
    if path.endswith(".npy"):
        try:
            with open(path, "rb") as f:
                if f.read(6) != b"\x93NUMPY":
                    raise UsageError(f"{what}: cannot read {path}: it is not a NumPy .npy "
                                     "file (write one with numpy.save)")
            return np.load(path, allow_pickle=False)
        except ValueError as exc:
            reason = ("it holds pickled Python objects, which lazyloop never loads"
                      if "pickle" in str(exc) else f"a damaged .npy file ({exc})")
            raise UsageError(f"{what}: cannot read {path}: {reason}") from None
        except OSError as exc:
            raise UsageError(f"{what}: cannot read {path}: {exc.strerror}") from None
    import onnx
    from onnx import numpy_helper
    try:
        with open(path, "rb") as f:
            tensor = onnx.TensorProto.FromString(f.read())
        return numpy_helper.to_array(tensor)
    except Exception as exc:
        raise UsageError(f"{what}: cannot read {path}: not an ONNX TensorProto "
                         f"({type(exc).__name__})") from None
