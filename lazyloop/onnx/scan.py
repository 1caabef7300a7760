"""ONNX Scan lowered onto core loops (rules onnx/scan9 and onnx/scan8).

Scan 9+ is one loop of COUNT = the scan inputs' common length, with iterators on any axis and
direction. Scan 8 is an outer loop over the batch (axis 0) holding an inner loop of
sequence_lens[b] trips, whose outputs are padded (undefined) to the longest sequence.
"""
from __future__ import annotations

import numpy as np

from ..core.errors import EvaluationError, ModelError, UnsupportedError
from ..core.types import TensorType
from .coreloop import CoreLoop, attr, bind_results, check_outputs
from .graph import graph_attribute
from .scope import Lowering, Scope
from .types import to_ll


def scan_trips(cl: CoreLoop, body, inits, init_types, sources, out_axes, out_reverse,
               length=None):
    """What Scan 9 and Scan 8's inner loop share: states as recurrences, scan inputs as
    iterators (`sources` = [(tensor, axis, reverse)]), outputs stacked on `out_axes`."""
    n = len(inits)
    recs = [cl.carried(v, f"state:{body.input[j].name}") for j, v in enumerate(inits)]
    its = [cl.iterate(x, axis, rev, f"element:{body.input[n + j].name}")
           for j, (x, axis, rev) in enumerate(sources)]
    outs = cl.body(body, [(r.get_output(0), tp) for r, tp in zip(recs, init_types)] +
                   [(t, None) for t in its])
    k = len(body.output) - n
    if k < 0:
        raise ModelError(cl.where, cl.rule, f"its body gives {len(body.output)} outputs; with "
                         f"{n} states it must give at least {n}", "make the body's outputs match")
    for j, r in enumerate(recs):
        cl.close(r, outs[j], f"state {j}")
    finals = [cl.last(r.get_output(0), f"final:{body.output[j].name}")
              for j, r in enumerate(recs)]
    scans = [cl.stacked(outs[n + j], f"scan:{body.output[n + j].name}",
                        axis=out_axes[j], reverse=out_reverse[j], length=length,
                        declared=body.output[n + j].type) for j in range(k)]
    return finals, scans


def scan_attributes(node, where, rule, m: int, k: int):
    def ints(name, count, default=0):
        v = list(attr(node, name, [default] * count))
        if len(v) != count:
            raise ModelError(where, rule, f"{name} has {len(v)} entries, expected {count}",
                             f"give {name} one entry per scan input or output ({count})")
        return [int(x) for x in v]
    return ints


def sequence_length(cl: CoreLoop, xs, axes):
    """COUNT for Scan 9: the extent of every scan input on its scan axis, which must agree."""
    where, rule = cl.where, cl.rule
    norm = [a + len(x.type.shape) if a < 0 else a for x, a in zip(xs, axes)]

    def length(*values):
        lens = [np.shape(v)[a] for v, a in zip(values, norm)]
        if any(L != lens[0] for L in lens):
            raise EvaluationError(where, rule, f"scan inputs have lengths {lens} on their scan "
                                  "axes", "give every scan input the same sequence length")
        return (np.array(lens[0], np.int64),)

    return cl.function(length, xs, TensorType(np.int64, ()), "sequence_length")


def scan_input_count(node, where: str, rule: str) -> int:
    """M, the number of scan inputs, which every Scan opset requires (at least 1)."""
    m = attr(node, "num_scan_inputs")
    if m is None or m < 1:
        raise ModelError(where, rule, "num_scan_inputs is missing or < 1",
                         "set num_scan_inputs to the number of scan inputs")
    return m


def lower_scan9(low: Lowering, node, scope: Scope, where: str) -> None:
    rule = "onnx/scan9"
    body = graph_attribute(node, "body", where, rule)
    m = scan_input_count(node, where, rule)
    ins = [scope.lookup(x, where) if x else None for x in node.input]
    n = len(ins) - m
    if n < 0 or any(x is None for x in ins):
        raise ModelError(where, rule, f"has {len(ins)} inputs (some omitted) for "
                         f"{m} scan inputs", "give N initial states then M scan inputs")
    if len(body.input) != n + m:
        raise ModelError(where, rule, f"its body takes {len(body.input)} inputs; with {n} "
                         f"states and {m} scan inputs it must take {n + m}",
                         "make the body's inputs match the node's inputs")
    k = len(body.output) - n
    check_outputs(node, where, rule, len(body.output))
    ints = scan_attributes(node, where, rule, m, k)
    in_axes, in_dirs = ints("scan_input_axes", m), ints("scan_input_directions", m)
    out_axes, out_dirs = ints("scan_output_axes", max(k, 0)), ints("scan_output_directions", max(k, 0))
    cl = CoreLoop(low, scope, node, where, rule, "")
    xs = [scan_input_typed(cl, x, body.input[n + i], f"input:{x.name}")
          for i, x in enumerate(ins[n:])]
    cl.nested_count(sequence_length(cl, xs, in_axes))
    finals, scans = scan_trips(cl, body, ins[:n], [scope.onnx_type(x) for x in node.input[:n]],
                               [(x, a, bool(d)) for x, a, d in zip(xs, in_axes, in_dirs)],
                               out_axes, [bool(d) for d in out_dirs])
    bind_results(scope, node, finals + scans)


def scan_input_typed(cl, x, element_info, what):
    """A scan input whose type ONNX's inference left unknown (a Loop's output read through an
    If, say) takes its rank from the body's declared element, one axis more (checked when the
    value arrives); with neither known it is refused."""
    if isinstance(x.type, TensorType):
        return x
    element = to_ll(element_info.type) if element_info.type.HasField("tensor_type") else None
    if not isinstance(element, TensorType):
        raise UnsupportedError(cl.where, cl.rule, f"scan input {x.name!r} has no known rank",
                               "declare the scan input's shape or the body input's")
    whole = TensorType(element.dtype, (None,) * (element.rank + 1))
    return cl.function(lambda v: (v,), [x], whole, f"typed:{what}")


def lower_scan8(low: Lowering, node, scope: Scope, where: str) -> None:
    rule = "onnx/scan8"
    body = graph_attribute(node, "body", where, rule)
    m = scan_input_count(node, where, rule)
    if len(node.input) < 1 + m:
        raise ModelError(where, rule, f"has {len(node.input)} inputs for {m} scan inputs",
                         "give sequence_lens (\"\" to omit), N states, then M scan inputs")
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
    dirs = scan_attributes(node, where, rule, m, k)("directions", m)
    states, xs = ins[:n], ins[n:]
    for x in xs:
        if not (isinstance(x.type, TensorType) and x.type.rank >= 2):
            raise ModelError(where, rule, f"scan input {x.name!r} is {x.type!r}; Scan 8 scan "
                             "inputs are [batch, sequence, ...]", "give rank >= 2 scan inputs")

    batch = CoreLoop(low, scope, node, where, rule, ":batch")
    sizes = batch_and_length(batch, xs)
    batch.nested_count(sizes[0])
    max_len = sizes[1]
    xs_b = [batch.iterate(x, 0, False, f"sequence:{body.input[n + j].name}")
            for j, x in enumerate(xs)]
    states_b = [batch.iterate(s, 0, False, f"state0:{body.input[j].name}")
                for j, s in enumerate(states)]
    len_b = sequence_length_of_item(batch, lens, max_len)
    reverse = reversed_prefix if low.reading("A13") == "valid-prefix" else reversed_axis
    xs_b = [reverse(batch, x, len_b, body.input[n + j].name) if d else x
            for j, (x, d) in enumerate(zip(xs_b, dirs))]

    inner = CoreLoop(low, scope, node, where, rule, ":sequence")
    inner.prefix = batch.prefix + "sequence/"
    inner.loop.name = inner.prefix.rstrip("/")
    inner.enclosing = batch
    inner.count(len_b)
    finals_b, scans_b = scan_trips(inner, body, states_b, [None] * n,
                                   [(x, 0, False) for x in xs_b], [0] * k, [False] * k,
                                   length=max_len)
    finals = [batch.stacked(f, f"final:{body.output[j].name}") for j, f in enumerate(finals_b)]
    scans = [batch.stacked(s, f"scan:{body.output[n + j].name}") for j, s in enumerate(scans_b)]
    bind_results(scope, node, finals + scans)


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
