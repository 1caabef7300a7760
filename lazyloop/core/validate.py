"""The structure rules, checked before any element is forced.

Each check is one rule; each failure is a StructureError naming the layer, the rule ID and
the fix. Rules marked "TensorRT profile" are TensorRT's own restrictions and are relaxed for
lowered ONNX/OpenVINO programs.
"""
from __future__ import annotations

import numpy as np

from .enums import LayerType, LoopOutput, TripLimit
from .errors import StructureError

FLOATS_TRT = {np.dtype(np.float32), np.dtype(np.float16)}
OTHER_TRT = {np.dtype(np.bool_), np.dtype(np.int32), np.dtype(np.int64)}


def refuse(layer, rule, problem, fix):
    raise StructureError(f"layer {layer.name!r} ({layer.describe()})", rule, problem, fix)


def is_ancestor_or_self(scope, of, loop_parent):
    """True when scope `scope` encloses (or is) scope `of`."""
    while True:
        if scope == of:
            return True
        if of is None:
            return False
        of = loop_parent[of]


def validate_network(net, scope, loop_parent, readings=None):
    trt = net.profile == "tensorrt"
    check_nesting(net, scope)
    check_outputs_exit(net, scope)
    for loop in net.loops:
        check_limits(loop, trt)
    for layer in net.layers:
        check_layer_types(layer)
        loop = getattr(layer, "loop", None)
        if loop is None:
            continue
        kind = layer.type
        if kind is LayerType.RECURRENCE:
            check_recurrence(layer, scope, loop_parent, trt)
        elif kind is LayerType.ITERATOR:
            check_from_outside(layer, layer.get_input(0), scope, loop_parent, "iterator/forward")
        elif kind is LayerType.TRIP_LIMIT:
            check_trip_limit(layer, scope, loop_parent, trt)
        elif kind is LayerType.LOOP_OUTPUT:
            check_loop_output(layer, scope, loop_parent, trt)
    check_acyclic(net)
    if trt:
        from .ambiguity import resolve
        check_tensorrt_dtypes(net, scope, resolve(readings)["A6"] == "fp-only")


def check_nesting(net, scope):
    """`structure/nesting`: every tensor is inside one chain of nested loops."""
    for layer in net.layers:
        for t in layer._outputs:
            scope(t)


def check_layer_types(layer):
    """`stream/shape`: every layer's types are known statically; a bad layer fails now."""
    layer.output_types()


def check_outputs_exit(net, scope):
    """`structure/exit`: data leaves a loop only through its loop output layers."""
    if not net._outputs:
        return
    for t in net._outputs:
        if scope(t) is not None:
            raise StructureError(f"network output {t.name!r}", "structure/exit",
                                 f"is a stream inside {scope(t)}",
                                 "mark the output of a loop output layer instead")


def check_limits(loop, trt):
    """`structure/limits`: at most one COUNT and one WHILE; TensorRT wants at least one."""
    for kind in TripLimit:
        found = [t for t in loop.trip_limits if t.kind is kind]
        if len(found) > 1:
            refuse(found[1], "structure/limits", f"{loop.name} has two {kind.name} limits",
                   "a loop takes at most one limit of each kind")
    if trt and not loop.trip_limits:
        raise StructureError(loop.name, "structure/limits", "has no trip limit",
                             "add a COUNT or WHILE trip limit")


def check_from_outside(layer, tensor, scope, loop_parent, rule):
    """A boundary input that must be available before the loop starts."""
    loop = layer.loop.name
    where = scope(tensor)
    if not is_ancestor_or_self(where, loop_parent[loop], loop_parent):
        refuse(layer, rule, f"input {tensor.name!r} is computed inside {where}, not before "
               f"{loop} starts", "compute it outside the loop")


def check_from_inside(layer, tensor, scope, loop_parent, rule):
    """A boundary input read on every trip: from the loop itself or a scope enclosing it."""
    loop = layer.loop.name
    where = scope(tensor)
    if not is_ancestor_or_self(where, loop, loop_parent):
        refuse(layer, "structure/exit", f"input {tensor.name!r} is a stream of {where}, "
               f"which is not {loop} or a loop enclosing it",
               "take the value out of the inner loop through a loop output layer")


def check_recurrence(layer, scope, loop_parent, trt):
    """`structure/recurrence` and `recurrence/def`."""
    init, nxt = layer.get_input(0), layer.get_input(1)
    if nxt is None:
        refuse(layer, "structure/recurrence", "its next value (input 1) is not set",
               "call set_input(1, next_value)")
    check_from_outside(layer, init, scope, loop_parent, "structure/recurrence")
    check_from_inside(layer, nxt, scope, loop_parent, "structure/recurrence")
    if trt and scope(nxt) != layer.loop.name:
        refuse(layer, "structure/recurrence", f"next value {nxt.name!r} is not computed "
               f"inside {layer.loop.name}", "compute the next value inside the loop")
    layer.check_next()  # recurrence/def: same shape and dtype


def check_trip_limit(layer, scope, loop_parent, trt):
    t = layer.get_input(0)
    if layer.kind is TripLimit.COUNT:
        check_from_outside(layer, t, scope, loop_parent, "trip/count")
        return
    check_from_inside(layer, t, scope, loop_parent, "trip/while")
    if trt:
        check_while_input(layer, t)


def check_while_input(layer, tensor):
    """`structure/while-input` (TensorRT profile): the WHILE input is computed without
    iterator, trip-limit or loop-output layers; recurrences of the same loop are its leaves."""
    loop = layer.loop
    stack, seen = [tensor], set()
    while stack:
        t = stack.pop()
        if id(t) in seen or t is None or t.producer is None:
            continue
        seen.add(id(t))
        p = t.producer
        if p.type is LayerType.RECURRENCE:
            if p.loop is not loop:
                refuse(layer, "structure/while-input", f"it reads recurrence {p.name!r} of "
                       f"{p.loop.name}", "build the condition from this loop's recurrences")
            continue
        if p.type in (LayerType.ITERATOR, LayerType.LOOP_OUTPUT):
            refuse(layer, "structure/while-input", f"it is computed from {p.type.value} "
                   f"layer {p.name!r}", "compute the condition from recurrences only")
        stack.extend(p.inputs())


def check_loop_output(layer, scope, loop_parent, trt):
    loop = layer.loop
    source = layer.get_input(0)
    check_from_inside(layer, source, scope, loop_parent, "structure/exit")
    if layer.kind is LoopOutput.LAST_VALUE:
        p = source.producer
        if trt and (p is None or p.type is not LayerType.RECURRENCE or p.loop is not loop):
            refuse(layer, "structure/last-value", f"input {source.name!r} is not a recurrence "
                   f"of {loop.name}", "output a recurrence, or use CONCATENATE")
        return
    check_length(layer, scope, loop_parent, trt)


def check_length(layer, scope, loop_parent, trt):
    """`structure/length`: a 0-D integer length, known before the loop starts (TensorRT: a
    build-time constant)."""
    length = layer.get_input(1) if layer.num_inputs > 1 else None
    if length is None:
        if trt:
            refuse(layer, "structure/length", "its length (input 1) is not set",
                   "call set_input(1, length) with a 0-D int32 constant")
        return
    ty = length.type
    shapes = ((),) if trt else ((), (1,))
    if ty.dtype not in (np.dtype(np.int32), np.dtype(np.int64)) or ty.shape not in shapes:
        refuse(layer, "structure/length", f"length {length.name!r} is {ty!r}",
               "use a 0-D int32 tensor")
    check_from_outside(layer, length, scope, loop_parent, "structure/length")
    if trt and layer.static_length() is None:
        refuse(layer, "structure/length", f"length {length.name!r} is not a build-time "
               "constant", "use a constant layer for the length")


def check_acyclic(net):
    """`structure/acyclic`: with every recurrence's input 1 removed the graph is acyclic. A
    loop output also waits for its loop's trip limits."""
    deps = {}
    for layer in net.layers:
        ins = list(layer.inputs())
        if layer.type is LayerType.RECURRENCE:
            ins = ins[:1]
        if layer.type is LayerType.LOOP_OUTPUT:
            ins += [t.get_input(0) for t in layer.loop.trip_limits]
        if layer.type is LayerType.CONDITIONAL_OUTPUT and layer.conditional.condition:
            ins.append(layer.conditional.condition.get_input(0))
        deps[id(layer)] = [t.producer for t in ins if t is not None and t.producer is not None]
    state = {}
    for start in net.layers:
        if id(start) in state:
            continue
        stack = [(start, iter(deps[id(start)]))]
        state[id(start)] = "open"
        while stack:
            layer, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                state[id(layer)] = "done"
                stack.pop()
                continue
            mark = state.get(id(nxt))
            if mark == "open":
                refuse(nxt, "structure/acyclic", "it depends on its own output through a "
                       "path that is not a recurrence's input 1",
                       "break the cycle with a recurrence layer")
            if mark is None:
                state[id(nxt)] = "open"
                stack.append((nxt, iter(deps[id(nxt)])))


def check_tensorrt_dtypes(net, scope, fp_only=False):
    """`profile/tensorrt-dtypes`: floating point loop values are FP32 or FP16; bool and
    int32/int64 are allowed (A6, default reading "profile")."""
    allowed = FLOATS_TRT if fp_only else FLOATS_TRT | OTHER_TRT
    for layer in net.layers:
        for t in layer._outputs:
            if scope(t) is None:
                continue
            if t.dtype not in allowed:
                refuse(layer, "profile/tensorrt-dtypes", f"loop value {t.name!r} has dtype "
                       f"{t.dtype}", "TensorRT loops take FP32/FP16 values (bool and int32/"
                       "int64 for conditions and counters): add a cast")
