"""ONNX Loop lowered onto a core loop (rule onnx/loop).

M becomes a COUNT limit, `cond` a WHILE limit over a recurrence of the condition, the body's
first input an iteration number counted by a recurrence; carried values are recurrences and
scan outputs are stacked per trip. The ambiguity readings A7, A8, A9 and A11 choose among
the behaviours ONNX leaves open.
"""
from __future__ import annotations

from typing import Optional

import numpy as np
import onnx

from ..core.enums import ElementWiseOperation, TripLimit
from ..core.errors import EvaluationError, ModelError
from ..core.types import OpaqueType, TensorType
from ..core.undefined import Partial
from .coreloop import CoreLoop, bind_results, check_outputs
from .graph import add_constant, as_scalar_bool, graph_attribute
from .scope import Lowering, Scope
from .types import to_ll


def iteration_number(cl: CoreLoop, declared: Optional[onnx.TypeProto]):
    """recurrence(0, i + 1) with the body's declared dtype and shape (int64 scalar when
    undeclared)."""
    ty = to_ll(declared)
    if not isinstance(ty, TensorType) or ty.dtype.kind not in "iuf":
        ty = TensorType(np.int64, ())
    shape = tuple(1 if d is None else d for d in ty.shape)
    zero = cl.nested(add_constant(cl.low, np.zeros(shape, ty.dtype), cl.name("iteration0")),
                     "iteration0")
    one = add_constant(cl.low, np.ones(shape, ty.dtype), cl.name("one"))
    rec = cl.carried(zero, "iteration")
    step = cl.low.net.add_elementwise(rec.get_output(0), one, ElementWiseOperation.SUM)
    cl.low.label(step, cl.name("iteration+1"))
    rec.set_input(1, step.get_output(0))
    return rec.get_output(0)


def omitted_condition(cl: CoreLoop):
    """What the body's condition input receives when `cond` is omitted (A9): true by
    default; reading "undefined" feeds an undefined (masked) value."""
    if cl.low.reading("A9") == "true":
        return add_constant(cl.low, np.array(True), cl.name("cond_true"))

    def undefined():
        return (Partial(np.array(True), np.zeros((), bool)),)

    return cl.function(undefined, [], TensorType(np.bool_, ()), "cond_undefined")


def shape_free(cl: CoreLoop, init, what: str):
    """A11 reading "allow": a carried value typed opaquely, so its shape may change from trip
    to trip (as onnxruntime allows); the default "error" keeps `structure/shapes`."""
    if not isinstance(init.type, TensorType):
        return init
    return cl.function(lambda v: (v,), [init], OpaqueType(f"{init.type!r} (shape may change)"),
                       f"A11:{what}")


def scan_output(cl: CoreLoop, t, what: str, declared):
    """A Loop scan output: the per-trip values stacked on a new axis 0 (A8 "stack"); reading
    A8 "concatenate" joins them along their own first axis instead."""
    out = cl.stacked(t, what, declared=declared)
    if cl.low.reading("A8") == "stack":
        return out
    where, rule = cl.where, cl.rule
    ty = out.type

    def join_first_axes(v):
        if np.ndim(v) < 2:
            raise EvaluationError(where, rule, f"{what}: 0-D per-trip values cannot be "
                                  "concatenated (reading A8=concatenate)",
                                  "use A8=stack, or produce rank >= 1 values")
        return (np.reshape(v, (-1,) + np.shape(v)[2:]),)

    joined = TensorType(ty.dtype, (None,) + tuple(ty.shape[2:])) if ty.rank >= 2 else ty
    return cl.function(join_first_axes, [out], joined, f"A8:{what}")


def lower_loop(low: Lowering, node, scope: Scope, where: str) -> None:
    rule = "onnx/loop"
    body = graph_attribute(node, "body", where, rule)
    ins = [scope.lookup(x, where) if x else None for x in node.input]
    if len(ins) < 2:
        raise ModelError(where, rule, f"has {len(ins)} inputs", "give M and cond (\"\" to omit)")
    m, cond, inits = ins[0], ins[1], ins[2:]
    n = len(inits)
    if len(body.input) != 2 + n:
        raise ModelError(where, rule, f"its body takes {len(body.input)} inputs; with {n} "
                         f"carried values it must take {2 + n} (iteration number, condition, "
                         "carried values)", "make the body's inputs match the node's inputs")
    k = len(body.output) - 1 - n
    if k < 0:
        raise ModelError(where, rule, f"its body gives {len(body.output)} outputs; with {n} "
                         f"carried values it must give at least {1 + n} (condition, carried "
                         "values, scan outputs)", "make the body's outputs match")
    sample = low.readings["A7"] == "sample"
    check_outputs(node, where, rule, n + k + (1 if sample else 0))
    cl = CoreLoop(low, scope, node, where, rule, "")
    if m is not None:
        cl.count(m)
    i = iteration_number(cl, body.input[0].type)
    if cond is not None:
        cond_rec = cl.carried(as_scalar_bool(low, cond, cl.name("cond_initial"), where, rule),
                              "cond")
        cl.loop.add_trip_limit(cond_rec.get_output(0), TripLimit.WHILE)
        cond_in = cond_rec.get_output(0)
    else:
        cond_rec = None
        cond_in = omitted_condition(cl)
    if any(v is None for v in inits):
        raise ModelError(where, rule, "a carried value's initial value is omitted",
                         "give every carried value an initial value")
    if low.reading("A11") == "allow":
        inits = [shape_free(cl, v, body.input[2 + j].name) for j, v in enumerate(inits)]
    recs = [cl.carried(v, f"carried:{body.input[2 + j].name}") for j, v in enumerate(inits)]
    init_types = [scope.onnx_type(x) for x in node.input[2:]]
    outs = cl.body(body, [(i, None), (cond_in, None)] +
                   [(r.get_output(0), tp) for r, tp in zip(recs, init_types)])
    if cond_rec is not None:
        cl.close(cond_rec, as_scalar_bool(low, outs[0], cl.name("cond_next"), where, rule), "cond")
    for j, r in enumerate(recs):
        cl.close(r, outs[1 + j], f"carried value {j}")
    results = [cl.last(r.get_output(0), f"final:{body.output[1 + j].name}")
               for j, r in enumerate(recs)]
    results += [scan_output(cl, outs[1 + n + j], f"scan:{body.output[1 + n + j].name}",
                            body.output[1 + n + j].type) for j in range(k)]
    if sample:  # A7 "sample": the final condition comes first
        results.insert(0, cl.last(cond_rec.get_output(0) if cond_rec is not None else outs[0],
                                  "final:cond"))
    bind_results(scope, node, results)
