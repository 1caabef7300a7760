"""ONNX Scan lowered onto core loops (rules onnx/scan9 and onnx/scan8).

Scan 9+ is one loop of COUNT = the scan inputs' common length, with iterators on any axis and
direction. Scan 8 is an outer loop over the batch (axis 0) holding an inner loop of
sequence_lens[b] trips, whose outputs are padded (undefined) to the longest sequence.
"""
from __future__ import annotations

import numpy as np

from ..core.errors import EvaluationError, ModelError, UnsupportedError
from ..core.types import TensorType
from .coreloop import (CoreLoop, attr, bind_results, carried_dims_as_hints, check_outputs,
                       given_back, read_in_body)
from .graph import body_attribute
from .scope import Lowering, Scope
from .types import to_ll


# -- the phases a Scan's loop shares (Scan 9, and Scan 8's loop over one batch item) --------

def state_hints(cl: CoreLoop, body, n):
    """A17 "hint": the body's declared dims of its states read as hints."""
    if cl.low.readings["A17"] == "hint":
        return carried_dims_as_hints(body, range(n), range(n))
    return body


def unchanged_states(body, n: int) -> frozenset:
    """`onnx/scan9`: the states whose body output is the state's own body input, itself or
    through one Identity node (`given_back`): carried unchanged, their value on every trip
    is their initial value (skl2onnx's distance scans carry their data so)."""
    return given_back(body, [(j, j) for j in range(min(n, len(body.output)))])


def scan_states(cl: CoreLoop, body, inits):
    """2. carried values: each state's recurrence, from its initial value conformed to the
    body's declared type (its next value: `close_states`)."""
    inits = [cl.conform(v, body.input[j].type, f"state {body.input[j].name!r}", carried=True)
             for j, v in enumerate(inits)]
    return [cl.carried(v, f"state:{body.input[j].name}") for j, v in enumerate(inits)]


def scan_elements(cl: CoreLoop, body, n, sources):
    """3. iterated inputs: an iterator over each scan input, `sources` = [(tensor, axis,
    reverse)], its elements conformed to the body's declared element type."""
    return [cl.conform(cl.iterate(x, axis, rev, f"element:{body.input[n + j].name}"),
                       body.input[n + j].type, f"scan input element {body.input[n + j].name!r}")
            for j, (x, axis, rev) in enumerate(sources)]


def scan_body(cl: CoreLoop, body, recs, init_types, elements, unchanged=frozenset()):
    """4. the body, its inputs bound to the states' and the elements' streams (a state
    carried unchanged: its initial value, `stream/invariant`)."""
    outs = cl.body(body, [(read_in_body(r, j in unchanged), tp)
                          for j, (r, tp) in enumerate(zip(recs, init_types))] +
                   [(t, None) for t in elements])
    if len(body.output) < len(recs):
        raise ModelError(cl.where, cl.rule, f"its body gives {len(body.output)} outputs; with "
                         f"{len(recs)} states it must give at least {len(recs)}",
                         "make the body's outputs match")
    return outs


def close_states(cl: CoreLoop, body, recs, outs):
    """5. back edges: each state's next value is its body output, of the shape the state
    had before (the Scan text: state variables keep one shape in every iteration)."""
    for j, r in enumerate(recs):
        nxt = outs[j]
        if nxt is not None:
            nxt = cl.same_shape(nxt, r, f"state {body.input[j].name!r}", cl.rule, "(the operator's text: a state "
                                "has the same shape in every iteration)",
                                "keep each state one shape (a Loop's carried values may "
                                "change shape)")
        cl.close(r, nxt, f"state {j}")


def scan_outputs(cl: CoreLoop, body, recs, outs, out_axes, out_reverse, length=None):
    """6. outputs: each state's last value, and the scan outputs stacked on `out_axes` in
    their directions (to `length`, padded: Scan 8)."""
    n = len(recs)
    finals = [cl.last(r.get_output(0), f"final:{body.output[j].name}")
              for j, r in enumerate(recs)]
    scans = [cl.stacked(outs[n + j], f"scan:{body.output[n + j].name}",
                        axis=out_axes[j], reverse=out_reverse[j], length=length,
                        declared=body.output[n + j].type) for j in range(len(body.output) - n)]
    return finals, scans


def scan_attributes(node, where, rule, m: int, k: int):
    """`onnx/attributes`: a list attribute has one entry per scan input (or output)."""
    def ints(name, count, default=0):
        v = list(attr(node, name, [default] * count))
        if len(v) != count:
            raise ModelError(where, "onnx/attributes", f"attribute {name} has {len(v)} "
                             f"entries, the rule {rule} wants {count}",
                             f"give {name} one entry per scan {'output' if 'output' in name else 'input'}")
        return [int(x) for x in v]
    return ints


def directions(ints, name: str, count: int, where, rule):
    """`onnx/attributes`: a direction is 0 (forward) or 1 (reverse), nothing else."""
    values = ints(name, count)
    bad = [d for d in values if d not in (0, 1)]
    if bad:
        raise ModelError(where, "onnx/attributes", f"attribute {name} holds {bad[0]}; the "
                         f"rule {rule} allows 0 (forward) and 1 (reverse) only",
                         f"set every entry of {name} to 0 or 1")
    return [bool(d) for d in values]


def sequence_length(cl: CoreLoop, xs, axes):
    """COUNT for Scan 9: the extent of every scan input on its scan axis, which must agree.
    The scan inputs arrive with the scan axis first (`scan_axis_first`)."""
    where, rule = cl.where, cl.rule

    def length(*values):
        lens = [np.shape(v)[0] for v in values]
        if any(L != lens[0] for L in lens):
            raise EvaluationError(where, rule, f"scan inputs have lengths {lens} on their scan "
                                  "axes", "give every scan input the same sequence length")
        return (np.array(lens[0], np.int64),)

    return cl.function(length, xs, TensorType(np.int64, ()), "sequence_length")


def scan_axis_first(cl: CoreLoop, x, axis: int, what: str):
    """A Scan 9 input with its scan axis moved to the front. With a known rank the axis is
    checked now (and nothing moves when it is 0); with an unknown rank when the value
    arrives. An axis outside [-r, r-1] is refused (`onnx/attributes`)."""
    where, rank = cl.where, x.type.rank

    def bad(r):
        return ModelError(where, "onnx/attributes", f"attribute scan_input_axes holds {axis}, "
                          f"out of range for {what} of rank {r}", "use an axis in [-r, r-1]")

    if rank is not None:
        a = axis + rank if axis < 0 else axis
        if not 0 <= a < rank:
            raise bad(rank)
        if a == 0:
            return x
        ty = TensorType(x.type.dtype, (x.type.shape[a],) + x.type.shape[:a] + x.type.shape[a + 1:])
    else:
        ty = x.type

    def move(v):
        r = np.ndim(v)
        a = axis + r if axis < 0 else axis
        if not 0 <= a < r:
            raise bad(r)
        return (np.moveaxis(v, a, 0),)

    return cl.function(move, [x], ty, f"scan_axis_first:{what}")


def scan_input_count(node, where: str, rule: str, inputs: int) -> int:
    """M, the number of scan inputs, which every Scan opset requires: at least 1 and at most
    the node's inputs (`onnx/attributes`)."""
    m = attr(node, "num_scan_inputs")
    if m is None or m < 1:
        raise ModelError(where, "onnx/attributes", "attribute num_scan_inputs is missing or "
                         f"< 1 (rule {rule})", "set num_scan_inputs to the number of scan inputs")
    if m > inputs:
        raise ModelError(where, "onnx/attributes", f"attribute num_scan_inputs is {m}, but "
                         f"the node has {inputs} inputs (rule {rule})",
                         "set num_scan_inputs to the number of scan inputs")
    return m


def lower_scan9(low: Lowering, node, scope: Scope, where: str) -> None:
    """`onnx/scan9`, in the phases every loop lowering follows (`coreloop.py`)."""
    rule = "onnx/scan9"
    body = body_attribute(low, node, where, rule)
    m = scan_input_count(node, where, rule, len(node.input))
    ins = [scope.lookup(x, where) if x else None for x in node.input]
    n = len(ins) - m
    if any(x is None for x in ins):
        raise ModelError(where, rule, f"has {len(ins)} inputs (some omitted) for "
                         f"{m} scan inputs", "give N initial states then M scan inputs")
    if len(body.input) != n + m:
        raise ModelError(where, rule, f"its body takes {len(body.input)} inputs; with {n} "
                         f"states and {m} scan inputs it must take {n + m}",
                         "make the body's inputs match the node's inputs")
    k = len(body.output) - n
    check_outputs(node, where, rule, len(body.output))
    ints = scan_attributes(node, where, rule, m, k)
    in_axes, in_dirs = ints("scan_input_axes", m), directions(ints, "scan_input_directions", m,
                                                              where, rule)
    out_axes = ints("scan_output_axes", max(k, 0))
    out_dirs = directions(ints, "scan_output_directions", max(k, 0), where, rule)
    cl = CoreLoop(low, scope, node, where, rule, "")
    body = state_hints(cl, body, n)
    # 1. trip limits: COUNT = the scan inputs' common length, each scan axis moved first
    xs = [scan_axis_first(cl, scan_input_typed(cl, x, body.input[n + i], f"input:{x.name}"),
                          in_axes[i], f"scan input {x.name!r}")
          for i, x in enumerate(ins[n:])]
    cl.nested_count(sequence_length(cl, xs, in_axes))
    # 2. carried values: the states (those carried unchanged read as invariants in 4.)
    unchanged = unchanged_states(body, n)
    recs = scan_states(cl, body, ins[:n])
    # 3. iterated inputs: the scan inputs, each in its direction
    elements = scan_elements(cl, body, n, [(x, 0, d) for x, d in zip(xs, in_dirs)])
    # 4. the body
    outs = scan_body(cl, body, recs, [scope.onnx_type(x) for x in node.input[:n]], elements,
                     unchanged)
    # 5. back edges: the states' next values
    close_states(cl, body, recs, outs)
    # 6. outputs: the final states, the scan outputs on their axes in their directions
    finals, scans = scan_outputs(cl, body, recs, outs, out_axes, out_dirs)
    bind_results(scope, node, finals + scans)


def scan_input_typed(cl, x, element_info, what):
    """A scan input whose type ONNX's inference left unknown takes its dtype and rank from
    the body's declared element, one axis more; with no rank declared either, its rank comes
    from the value at run time. Only a scan input with no known dtype at all is refused."""
    if isinstance(x.type, TensorType):
        return x
    element = to_ll(element_info.type) if element_info.type.HasField("tensor_type") else None
    if not isinstance(element, TensorType):
        raise UnsupportedError(cl.where, cl.rule, f"scan input {x.name!r} has no known "
                               "element type", "declare the scan input's or the body input's "
                               "element type")
    whole = TensorType(element.dtype, None if element.shape is None
                       else (None,) * (element.rank + 1))
    return cl.function(lambda v: (v,), [x], whole, f"typed:{what}")


def lower_scan8(low: Lowering, node, scope: Scope, where: str) -> None:
    """`onnx/scan8`: a loop over the batch items holding, per item, a loop over its
    sequence; each lowered in the phases every loop lowering follows (`coreloop.py`)."""
    rule = "onnx/scan8"
    body = body_attribute(low, node, where, rule)
    m = scan_input_count(node, where, rule, max(len(node.input) - 1, 0))
    lens = scope.lookup(node.input[0], where) if node.input[0] else None
    ins = [scope.lookup(x, where) if x else None for x in node.input[1:]]
    n = len(ins) - m
    if any(x is None for x in ins):
        raise ModelError(where, rule, "a state or scan input is omitted", "give every one")
    if len(body.input) != n + m:
        raise ModelError(where, rule, f"its body takes {len(body.input)} inputs; with {n} "
                         f"states and {m} scan inputs it must take {n + m}",
                         "make the body's inputs match the node's inputs")
    k = len(body.output) - n
    check_outputs(node, where, rule, len(body.output))
    dirs = directions(scan_attributes(node, where, rule, m, k), "directions", m, where, rule)
    states, xs = ins[:n], ins[n:]
    xs = [batched(low, x, body.input[n + j], where, rule) for j, x in enumerate(xs)]

    # The loop over the batch items.
    batch = CoreLoop(low, scope, node, where, rule, ":batch")
    # 1. trip limits: COUNT = the batch size (axis 0), which every scan input shares
    sizes = batch_and_length(batch, xs)
    batch.nested_count(sizes[0])
    max_len = sizes[1]
    # 2. carried values: none -- each item starts from its own initial states
    # 3. iterated inputs: item b of each scan input, of each initial state, and its length
    #    sequence_lens[b]; a backward scan input's valid prefix reversed (A13)
    xs_b = [batch.iterate(x, 0, False, f"sequence:{body.input[n + j].name}")
            for j, x in enumerate(xs)]
    states_b = [batch.iterate(s, 0, False, f"state0:{body.input[j].name}")
                for j, s in enumerate(states)]
    len_b = sequence_length_of_item(batch, lens, max_len)
    reverse = reversed_prefix if low.reading("A13") == "valid-prefix" else reversed_axis
    xs_b = [reverse(batch, x, len_b, body.input[n + j].name) if d else x
            for j, (x, d) in enumerate(zip(xs_b, dirs))]

    # 4. the body: a loop over item b's sequence, nested in the loop over the items.
    inner = CoreLoop(low, scope, node, where, rule, ":sequence")
    inner.prefix = batch.prefix + "sequence/"
    inner.loop.name = inner.prefix.rstrip("/")
    inner.enclosing = batch
    inner_body = state_hints(inner, body, n)
    #    1. trip limits: COUNT = sequence_lens[b]
    inner.count(len_b)
    #    2. carried values: the states, from item b's initial states
    recs = scan_states(inner, inner_body, states_b)
    #    3. iterated inputs: the elements of item b's sequences, forward
    elements = scan_elements(inner, inner_body, n, [(x, 0, False) for x in xs_b])
    #    4. the body
    outs = scan_body(inner, inner_body, recs, [None] * n, elements)
    #    5. back edges: the states' next values
    close_states(inner, body, recs, outs)
    #    6. outputs: the final states, the scan outputs padded to the longest sequence
    finals_b, scans_b = scan_outputs(inner, inner_body, recs, outs, [0] * k, [False] * k,
                                     length=max_len)

    # 5. back edges: none
    # 6. outputs: each item's final states and scan outputs, stacked over the batch
    finals = [batch.stacked(f, f"final:{body.output[j].name}") for j, f in enumerate(finals_b)]
    scans = [batch.stacked(s, f"scan:{body.output[n + j].name}") for j, s in enumerate(scans_b)]
    bind_results(scope, node, finals + scans)


def batched(low: Lowering, x, element_info, where, rule):
    """A Scan 8 scan input is [batch, sequence, ...]: rank >= 2, checked now when known,
    else when the value arrives (its dtype then comes from the body's declared element)."""
    ty = x.type
    if isinstance(ty, TensorType) and ty.rank is not None:
        if ty.rank < 2:
            raise ModelError(where, rule, f"scan input {x.name!r} is {ty!r}; Scan 8 scan "
                             "inputs are [batch, sequence, ...]", "give rank >= 2 scan inputs")
        return x
    if not isinstance(ty, TensorType):
        element = to_ll(element_info.type) if element_info.type.HasField("tensor_type") else None
        if not isinstance(element, TensorType):
            raise UnsupportedError(where, rule, f"scan input {x.name!r} has no known element "
                                   "type", "declare the scan input's or the body input's type")
        ty = TensorType(element.dtype, None)

    def rank_two(v):
        if np.ndim(v) < 2:
            raise ModelError(where, rule, f"scan input {x.name!r} has shape "
                             f"{list(np.shape(v))}; Scan 8 scan inputs are [batch, sequence, "
                             "...]", "give rank >= 2 scan inputs")
        return (v,)

    layer = low.net.add_function(rank_two, [x], [ty], op="Batched")
    return low.label(layer, x.name + "/batched").get_output(0)


def batch_and_length(cl: CoreLoop, xs):
    """Scan 8's batch size (axis 0) and maximum sequence length (axis 1), which every scan
    input must share."""
    where, rule = cl.where, cl.rule

    def dims(*values):
        shapes = [np.shape(v)[:2] for v in values]
        if any(s != shapes[0] for s in shapes):
            raise EvaluationError(where, rule, f"scan inputs have [batch, sequence] sizes "
                                  f"{[list(s) for s in shapes]}", "give every scan input the "
                                  "same batch size and maximum sequence length")
        return np.array(shapes[0][0], np.int64), np.array(shapes[0][1], np.int64)

    layer = cl.low.net.add_function(dims, xs, [TensorType(np.int64, ()), TensorType(np.int64, ())],
                                    op="BatchAndLength")
    cl.low.label(layer, cl.name("batch_and_length"),
                 {0: cl.name("batch_size"), 1: cl.name("max_sequence_length")})
    return layer.get_output(0), layer.get_output(1)


def sequence_length_of_item(batch: CoreLoop, lens, max_len):
    """sequence_lens[b] (the maximum length when sequence_lens is omitted), checked to lie in
    [0, maximum length]."""
    if lens is None:
        return max_len
    where, rule = batch.where, batch.rule
    item = batch.iterate(lens, 0, False, "sequence_lens[b]")
    shortest = 1 if batch.low.reading("A14") == "refuse" else 0

    def checked(length, longest):
        if not shortest <= int(length) <= int(longest):
            raise EvaluationError(where, rule, f"sequence_lens holds {int(length)}, outside "
                                  f"[{shortest}, {int(longest)}]" + (" (reading A14=refuse)"
                                                                      if shortest else ""),
                                  "give lengths within the sequence axis")
        return (np.asarray(length, np.int64).reshape(()),)

    return batch.function(checked, [item, max_len], TensorType(np.int64, ()), "length[b]")


def reversed_prefix(batch: CoreLoop, x, length, what: str):
    """A reversed Scan 8 input of one batch item (A13 "valid-prefix", the default): its first
    sequence_lens[b] elements in reverse order, then the unused rest, so a forward iterator
    reads x[len-1-t]. The core's reverse iterator is not used: under A2=guide it would start
    at the padded end."""
    def reverse(v, L):
        L = int(L)
        return (np.concatenate([v[:L][::-1], v[L:]], axis=0),)

    return batch.function(reverse, [x, length], x.type, f"reversed:{what}")


def reversed_axis(batch: CoreLoop, x, length, what: str):
    """A13 reading "padded-axis": the whole sequence axis reversed, padding first."""
    return batch.function(lambda v, _L: (v[::-1].copy(),), [x, length], x.type,
                          f"reversed:{what}")


def lower_scan(low: Lowering, node, scope: Scope, where: str) -> None:
    """Scan 8 and Scan 9+ differ (sequence_lens and batch axis vs axes and directions)."""
    version = scope.opsets.get("", 0)
    (lower_scan8 if version < 9 else lower_scan9)(low, node, scope, where)
