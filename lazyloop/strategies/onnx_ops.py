"""One call of an ONNX op, as plain data: `OpCall` -- the op, its inputs (data fed by the
loop, constants, or left out), attributes and typed outputs -- so a program's body is data
too, and one call can be run alone, outside any loop (`OpCall.alone`); the values programs
feed a call (`typed_values`, `port_values`) and how they move on between trips (`step_of`,
`advance`); the call's reference kernel (`run_reference`). Which calls of which ops are
drawn is `onnx_op_search`.
"""
from __future__ import annotations

import contextlib
import functools
import warnings
from typing import Optional, Tuple

import attrs
import numpy as np

from . import op_ranges as R

# the dtypes drawn, simplest first (bfloat16, float8, int4, strings, complex: left out)
DTYPES = ("float32", "int64", "int32", "float16", "bool", "float64", "int8", "uint8",
          "int16", "uint16", "uint32", "uint64")
TENSOR_TYPES = {f"tensor({'float' if d == 'float32' else 'double' if d == 'float64' else d})": d
           for d in DTYPES}


def freeze(v):
    """Lists and arrays as nested tuples (hashable, and printed as they are written)."""
    if isinstance(v, (list, tuple)):
        return tuple(freeze(x) for x in v)
    if isinstance(v, np.ndarray):
        return freeze(v.tolist())
    return v


@attrs.frozen(repr=False)
class Port:
    """One input of a call: `role` "data" (fed from the loop: a carried value, a scan
    element, an outer value or an earlier call's output), "const" (a Constant in the body
    holding `value`) or "none" (an optional input left out)."""
    role: str
    dtype: Optional[str] = None
    shape: Optional[Tuple[int, ...]] = None
    domain: str = "any"
    value: object = None

    def __repr__(self):
        if self.role == "none":
            return "Port('none')"
        if self.role == "const":
            return f"Port('const', {self.dtype!r}, {self.shape!r}, value={self.value!r})"
        domain = "" if self.domain == "any" else f", {self.domain!r}"
        return f"Port('data', {self.dtype!r}, {self.shape!r}{domain})"


@attrs.frozen(repr=False)
class OpCall:
    """One node of a body: `op` at `opset`, its input ports, its attributes ((name, value)
    pairs) and its outputs as (dtype, shape) with None for a dimension whose extent depends
    on the values (shape inference cannot say)."""
    op: str
    opset: int
    inputs: Tuple[Port, ...]
    attributes: Tuple[Tuple[str, object], ...] = ()
    outputs: Tuple[Tuple[str, Tuple], ...] = ()

    def __repr__(self):
        return (f"OpCall({self.op!r}, {self.opset}, {self.inputs!r}, "
                f"attributes={self.attributes!r}, outputs={self.outputs!r})")

    @property
    def data(self):
        """(position, port) of the data inputs."""
        return [(k, p) for k, p in enumerate(self.inputs) if p.role == "data"]

    def static(self, k: int) -> bool:
        """Whether output k has the same shape whatever the values."""
        return None not in self.outputs[k][1]

    def node(self, inputs, outputs, name: str = ""):
        """The NodeProto, reading `inputs` (one name per port, "" where left out)."""
        from onnx import helper
        return helper.make_node(self.op, list(inputs), list(outputs), name=name or None,
                                **{k: attribute_value(v) for k, v in self.attributes})

    def const_nodes(self, prefix: str):
        """(Constant nodes, input names) for the ports of this call: data ports named
        `prefix`x<k>, constants `prefix`c<k>, left-out ports ""."""
        nodes, names = [], []
        for k, p in enumerate(self.inputs):
            if p.role == "const":
                names.append(f"{prefix}c{k}")
                nodes.append(constant_node(names[-1], np.array(p.value, p.dtype)))
            else:
                names.append(f"{prefix}x{k}" if p.role == "data" else "")
        return nodes, names

    def alone(self, feeds: Optional[dict] = None):
        """(model, feeds): this call as the only node of a model (its constants as Constant
        nodes), data inputs as graph inputs x<k>, outputs y<k>; fed `feeds` (by default the
        values a program feeds it on its first trip). What an op-fault separation runs."""
        from onnx import helper
        nodes, names = self.const_nodes("")
        outs = [f"y{j}" for j in range(len(self.outputs))]
        nodes.append(self.node(names, outs))
        inputs = [value_info(names[k], p.dtype, p.shape) for k, p in self.data]
        outputs = [value_info(o, d, s) for o, (d, s) in zip(outs, self.outputs)]
        graph = helper.make_graph(nodes, f"{self.op}_alone", inputs, outputs)
        if feeds is None:
            feeds = {names[k]: port_values(p, k, 0) for k, p in self.data}
        return make_model(graph, self.opset), feeds


# ------------------------------------------------------------------------------------------
# Values
# ------------------------------------------------------------------------------------------

def typed_values(dtype: str, shape, domain: str = "any", seed: int = 0) -> np.ndarray:
    """Small values of `dtype` in `domain`: floats multiples of 1/4 in [-2, 2] (whole numbers
    in [-4, 4] for "whole"), signed integers in [-4, 4], unsigned in [0, 8], alternating
    bools; `seed` shifts the pattern."""
    dt = np.dtype(dtype)
    k = np.arange(int(np.prod(shape, dtype=np.int64))) + 3 * seed
    if dt == np.bool_:
        flat = k % 2 == 0
    elif domain == "positive" or domain == "ge1":
        flat = k % 8 + (4 if domain == "ge1" and dt.kind == "f" else 1)
    elif domain == "unit":
        flat = k % 7 - 3 if dt.kind == "f" else k % 3 - (dt.kind == "i")
    elif domain == "small":
        flat = k % 3
    elif domain == "nonzero":
        flat = k % 8 - 4
        flat = flat + (flat >= 0) if dt.kind != "u" else k % 8 + 1
    elif domain == "whole":  # whole numbers in [-4, 4], floats too
        return np.asarray(k % 9 - 4 if dt.kind != "u" else k % 5).reshape(shape).astype(dt)
    else:
        flat = k % 17 - 8 if dt.kind != "u" else k % 9
    flat = flat / 4.0 if dt.kind == "f" else flat
    return np.asarray(flat).reshape(shape).astype(dt)


def port_values(port: Port, k: int, seed: int) -> np.ndarray:
    """The first trip's value of data input k of a call, for the program seed `seed`."""
    return typed_values(port.dtype, port.shape, port.domain, seed + 5 * k)


def step_of(dtype: str, domain: str):
    """How a loop-fed value moves on between trips, staying in its domain: ("Not",) for
    bools, ("Neg",) where a step could leave the domain, else ("Add", step)."""
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return ("Not",)
    if domain in ("unit", "nonzero") and dt.kind != "u":
        return ("Neg",)
    return ("Add", 0.25 if dt.kind == "f" and domain != "whole" else 1)


@contextlib.contextmanager
def strict_numpy():
    """Run a kernel with numpy's division by zero, invalid operations and float overflow
    raised as errors (and its RuntimeWarnings too): a value computed through a NaN -- even
    one cast to an integer afterwards -- is not a value two engines must agree on."""
    with warnings.catch_warnings(), np.errstate(divide="raise", invalid="raise",
                                                over="raise", under="ignore"):
        warnings.simplefilter("error", RuntimeWarning)
        yield


def advance(x: np.ndarray, step) -> np.ndarray:
    """The value of the next trip, as the body computes it (`step_of`)."""
    if step[0] == "Not":
        return np.logical_not(x)
    if step[0] == "Neg":
        return np.negative(x)
    return (x + np.array(step[1], x.dtype)).astype(x.dtype)


# ------------------------------------------------------------------------------------------
# ONNX helpers
# ------------------------------------------------------------------------------------------

def tensor_type(dtype: str) -> int:
    from onnx import helper
    return helper.np_dtype_to_tensor_dtype(np.dtype(dtype))


def value_info(name: str, dtype: str, shape):
    """A typed value; a dimension None is unknown, a shape None an unknown rank."""
    from onnx import helper
    return helper.make_tensor_value_info(name, tensor_type(dtype),
                                         None if shape is None else list(shape))


def constant_node(name: str, value: np.ndarray):
    from onnx import helper, numpy_helper
    return helper.make_node("Constant", [], [name],
                            value=numpy_helper.from_array(np.asarray(value), name + "_value"))


def attribute_value(v):
    """A drawn attribute value as onnx.helper takes it (a `Tensor` becomes a TensorProto)."""
    if isinstance(v, R.Tensor):
        from onnx import numpy_helper
        return numpy_helper.from_array(np.array(v.values, v.dtype).reshape(v.shape))
    return list(v) if isinstance(v, tuple) else v


def make_model(graph, opset: int):
    from onnx import helper

    from ..onnx.export import ir_version_for
    model = helper.make_model(graph, producer_name="lazyloop.strategies.onnx_schema",
                              opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = ir_version_for(opset)
    return model


# ------------------------------------------------------------------------------------------
# The reference kernel of a call
# ------------------------------------------------------------------------------------------

@functools.lru_cache(maxsize=4096)
def reference_kernel(call: OpCall):
    """The reference kernel of `call`, instantiated for its node (`onnx.reference.ops`)."""
    from onnx.reference.ops import load_op
    node = call.node([f"x{k}" if p.role != "none" else "" for k, p in enumerate(call.inputs)],
                     [f"y{j}" for j in range(len(call.outputs))])
    params = {"log": lambda *a, **k: None, "opsets": {"": call.opset}, "verbose": 0,
              "new_ops": None, "existing_functions": {}, "evaluator_cls": None}
    return load_op("", call.op, call.opset)(node, params)


def run_reference(call: OpCall, args):
    """The call's outputs by its reference kernel on `args` (None for a left-out input), or
    None when the kernel fails, meets a NaN or a division by zero (`strict_numpy`), or
    returns a dtype, rank or fixed dimension other than the call's outputs declare, or a
    value that is not finite."""
    try:
        with strict_numpy():
            results = [np.asarray(r) for r in reference_kernel(call).run(*args)]
    except Exception:  # noqa: BLE001 -- a refusal is an answer here
        return None
    if len(results) < len(call.outputs):
        return None
    for (dtype, dims), r in zip(call.outputs, results):
        if r.dtype.name != dtype or r.ndim != len(dims) or any(
                d is not None and d != e for d, e in zip(dims, r.shape)):
            return None
        if r.dtype.kind == "f" and not np.all(np.isfinite(r)):
            return None
    return results
