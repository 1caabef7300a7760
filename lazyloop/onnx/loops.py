"""ONNX Loop lowered onto a core loop (rule onnx/loop).

M becomes a COUNT limit, `cond` a WHILE limit over a recurrence of the condition, the body's
first input an iteration number counted by a recurrence; carried values are recurrences and
scan outputs are stacked per trip. Carried values may change shape from trip to trip, each
checked against the body's declared type (A11); conditions, trip counts and iteration
numbers may be one-element tensors (A16). The ambiguity readings A7, A8, A9, A11, A15 and
A16 choose among the behaviours ONNX leaves open.
"""
from __future__ import annotations

from typing import Optional

import numpy as np
import onnx

from ..core.enums import ElementWiseOperation, TripLimit
from ..core.errors import EvaluationError, ModelError
from ..core.types import TensorType
from ..core.undefined import Partial
from .coreloop import (CoreLoop, bind_results, carried_dims_as_hints, check_outputs,
                       given_back, one_element_declarations_of_scalars, read_in_body)
from .graph import add_constant, body_attribute
from .scope import Lowering, Scope
from .types import to_ll


def iteration_number(cl: CoreLoop, declared: Optional[onnx.TypeProto]):
    """recurrence(0, i + 1) with the body's declared dtype, and shape [1] when the body
    declares one element of rank 1 (A16); an int64 scalar when undeclared."""
    ty = to_ll(declared)
    if not isinstance(ty, TensorType) or ty.dtype.kind not in "iuf":
        ty = TensorType(np.int64, ())
    shape = () if ty.shape is None or len(ty.shape) == 0 else (1,) * len(ty.shape)
    if shape and (len(shape) > 1 or cl.low.reading("A16") == "scalar"):
        raise ModelError(cl.where, "onnx/loop", f"the body declares its iteration number "
                         f"{ty!r}" + (" (reading A16=scalar)" if len(shape) == 1 else ""),
                         "declare it as a scalar" + (" or [1]" if len(shape) > 1 else ""))
    zero = cl.nested(add_constant(cl.low, np.zeros(shape, ty.dtype), cl.name("iteration0")),
                     "iteration0")
    one = add_constant(cl.low, np.ones(shape, ty.dtype), cl.name("one"))
    rec = cl.carried(zero, "iteration")
    step = cl.low.net.add_elementwise(rec.get_output(0), one, ElementWiseOperation.SUM)
    cl.low.label(step, cl.name("iteration+1"))
    rec.set_input(1, step.get_output(0))
    return rec.get_output(0)


def one_element_bool(cl: CoreLoop, ty) -> bool:
    """A type every value of which is a valid condition: bool[] (or bool[1] under A16's
    default reading "one-element")."""
    return isinstance(ty, TensorType) and ty.dtype == np.bool_ and (
        ty.shape == () or (ty.shape == (1,) and cl.low.reading("A16") == "one-element"))


def condition_value(cl: CoreLoop, t, what: str, stream):
    """A condition as the body sees it (A16): under "one-element" a bool tensor with one
    element, in the shape `stream` gives when it gives one (the body's declaration: its one
    element read, as onnxruntime feeds the body), else in its own shape; under "scalar" a
    0-D bool. A value whose type already says so passes as it is; any other is checked when
    it arrives."""
    ty = t.type
    if one_element_bool(cl, ty) and isinstance(stream, TensorType) and (
            stream == ty or stream.shape is None):
        return t
    where, scalar = cl.where, cl.low.reading("A16") == "scalar"
    shape = stream.shape if one_element_bool(cl, stream) else None

    def one_element(c):
        if not (isinstance(c, np.ndarray) and c.dtype == np.bool_ and c.size == 1
                and (c.ndim == 0 or (c.ndim == 1 and not scalar))):
            got = f"{c.dtype}{list(c.shape)}" if isinstance(c, np.ndarray) else type(c).__name__
            raise EvaluationError(where, "onnx/loop", f"{what} is {got}", "give a bool scalar"
                                  + (" (reading A16=scalar)" if scalar else " or bool[1]"))
        return (c if shape is None else c.reshape(shape),)

    return cl.function(one_element, [t], TensorType(np.bool_, shape), f"cond:{what}")


def declared_condition(cl: CoreLoop, body):
    """The type of a Loop's condition stream: what the body declares for its condition input
    when that is one bool element (bool or bool[1]), else for its condition output, else
    nothing (None: each value keeps its own shape)."""
    for vi in (body.input[1], body.output[0]):
        ty = to_ll(vi.type) if vi.type.WhichOneof("value") else None
        if one_element_bool(cl, ty):
            return ty
    return None


def omitted_condition(cl: CoreLoop, vi):
    """What the body's condition input `vi` receives when `cond` is omitted (A9): true by
    default (shaped [1] when the body declares [1], A16); reading "undefined" feeds an
    undefined (masked) value."""
    true = np.array([True]) if body_declares_one(vi) else np.array(True)
    if cl.low.reading("A9") == "true":
        return add_constant(cl.low, true, cl.name("cond_true"))

    def undefined():
        return (Partial(true, np.zeros(true.shape, bool)),)

    return cl.function(undefined, [], TensorType(np.bool_, true.shape), "cond_undefined")


def body_declares_one(vi) -> bool:
    """The body declares its condition input bool[1]."""
    ty = to_ll(vi.type) if vi.type.WhichOneof("value") else None
    return isinstance(ty, TensorType) and ty.shape == (1,)


def one_shape(cl: CoreLoop, nxt, rec, what: str):
    """A11 reading "error": a carried value keeps its initial shape on every trip."""
    return cl.same_shape(nxt, rec, what, "structure/shapes", "(reading A11=error)",
                         "keep carried values one shape, or use A11=allow")


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
    """`onnx/loop`, in the phases every loop lowering follows (`coreloop.py`)."""
    rule = "onnx/loop"
    body, m, cond, inits, k = loop_signature(low, node, scope, where)
    n = len(inits)
    sample = low.readings["A7"] == "sample"
    check_outputs(node, where, rule, n + k + (1 if sample else 0))
    cl = CoreLoop(low, scope, node, where, rule, "")
    # 1. trip limits: M -> COUNT; the trip counter the body reads; cond -> WHILE
    i, cond_rec = trip_limits(cl, body, m, cond)
    # 2. carried values -> recurrences, typed as the body declares them (those the body
    #    gives back unchanged read as invariants in 4.)
    unchanged = given_back(body, [(2 + j, 1 + j) for j in range(n)])
    recs = carried_values(cl, body, scope, node, inits)
    # 3. iterated inputs: the condition as the body reads it (an omitted cond: A9)
    cond_in = cond_rec.get_output(0) if cond is not None else omitted_condition(
        cl, body.input[1])
    # 4. the body
    init_types = [scope.onnx_type(x) for x in node.input[2:]]
    outs = cl.body(body, [(i, None), (cond_in, None)] +
                   [(read_in_body(r, j in unchanged), tp)
                    for j, (r, tp) in enumerate(zip(recs, init_types))])
    # 5. back edges: the body's condition output, each carried value's next value
    back_edges(cl, body, cond_rec, recs, outs)
    # 6. outputs: carried values' last values, scan outputs stacked (A8), the final
    #    condition first under A7 "sample"
    results = [cl.last(r.get_output(0), f"final:{body.output[1 + j].name}")
               for j, r in enumerate(recs)]
    results += [scan_output(cl, outs[1 + n + j], f"scan:{body.output[1 + n + j].name}",
                            body.output[1 + n + j].type) for j in range(k)]
    if sample:
        results.insert(0, cl.last(cond_rec.get_output(0) if cond_rec is not None else outs[0],
                                  "final:cond"))
    bind_results(scope, node, results)


def loop_signature(low: Lowering, node, scope: Scope, where: str):
    """(body, M, cond, initial carried values, number of scan outputs) of a Loop node, its
    inputs and body checked against each other (`onnx/loop`); A17 "hint" reads the body's
    declared dims of carried values as hints, A18 "as-given" a `[1]` declaration of a 0-D
    initial value."""
    rule = "onnx/loop"
    body = body_attribute(low, node, where, rule)
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
    if low.readings["A18"] == "as-given":
        body = one_element_declarations_of_scalars(body, range(2, 2 + n), inits)
    if low.readings["A17"] == "hint":
        body = carried_dims_as_hints(body, range(2, 2 + n), range(1, 1 + n))
    return body, m, cond, inits, k


def trip_limits(cl: CoreLoop, body, m, cond):
    """M -> COUNT; the iteration number (the trip counter the body reads, made first: it is
    the stream a loop nested in this one's body reads to run once per trip); cond -> WHILE
    over recurrence(cond, the body's condition output), whose next value is set in phase 5 --
    A15 "honour": an omitted cond starts true and the body's output decides. Returns (the
    iteration number, the condition's recurrence or None)."""
    low = cl.low
    if m is not None:
        cl.count(m)
    i = iteration_number(cl, body.input[0].type)
    if cond is None and low.reading("A15") != "honour":
        return i, None
    start = cond if cond is not None else add_constant(
        low, np.array([True] if body_declares_one(body.input[1]) else True),
        cl.name("cond_start"))
    start = condition_value(cl, start, "the initial condition", declared_condition(cl, body))
    cond_rec = cl.carried(start, "cond")
    cl.loop.add_trip_limit(cond_rec.get_output(0), TripLimit.WHILE)
    return i, cond_rec


def carried_values(cl: CoreLoop, body, scope: Scope, node, inits):
    """Each carried value's recurrence, from its initial value conformed to the body's
    declared type (its next value is set in phase 5)."""
    if any(v is None for v in inits):
        raise ModelError(cl.where, cl.rule, "a carried value's initial value is omitted",
                         "give every carried value an initial value")
    inits = [cl.conform(v, body.input[2 + j].type, f"carried value {body.input[2 + j].name!r}",
                        carried=True) for j, v in enumerate(inits)]
    return [cl.carried(v, f"carried:{body.input[2 + j].name}") for j, v in enumerate(inits)]


def back_edges(cl: CoreLoop, body, cond_rec, recs, outs):
    """The condition's next value is the body's condition output; each carried value's, its
    body output (A11 "error": of the initial value's shape)."""
    if cond_rec is not None:
        cl.close(cond_rec, condition_value(cl, outs[0], "the body's condition output",
                                           cond_rec.get_output(0).type), "cond")
    strict = cl.low.reading("A11") == "error"
    for j, r in enumerate(recs):
        nxt = outs[1 + j]
        if strict and nxt is not None:
            nxt = one_shape(cl, nxt, r, f"carried value {body.input[2 + j].name!r}")
        cl.close(r, nxt, f"carried value {j}")
