"""The ports of Loop-5 and TensorIterator-1 that carry whole tensors across trips:
sliced inputs cut into chunks for an iterator (`openvino/slice`), concatenated outputs
(`openvino/concat`), and outputs by last iteration or by a given iteration.

`Ports` lowers them through the model's `lowering.Lowerer`; `SliceRule`, `_merge_axes` and
`_hold_last` are the numpy kernels the lowered network runs for them.
"""
from __future__ import annotations

from typing import List, Optional, Tuple

import numpy as np

from ..core.enums import ElementWiseOperation, LoopOutput
from ..core.errors import ModelError, UnsupportedError
from ..core.types import TensorType
from ..core.undefined import filled, join


class SliceRule:
    """`openvino/slice`: the chunks of one sliced input, each keeping the input's rank.

    Chunk i holds `part` elements along `axis`. With stride > 0 chunk i starts at
    lo + i*stride, chunks running up to `hi`; with stride < 0 chunk i ends at hi - i*|stride|,
    chunks running down to `lo`. [lo, hi) comes from start and end (A20).
    """

    def __init__(self, where, axis, start, stride, part, end, reading, cut=False):
        self.where, self.axis = where, axis
        self.start, self.stride, self.part, self.end = start, stride, part, end
        self.reading = reading
        self.cut = cut  # A23 "stride-cut": |stride| elements per chunk, the rest undefined

    def bounds(self, dim: int) -> Tuple[int, int]:
        """[lo, hi) of the sliced range on an axis of extent `dim` (A20)."""
        if self.reading == "inclusive":  # both borders included, negative v means dim + v
            norm = lambda v: v + dim if v < 0 else v  # noqa: E731
            first, last = norm(self.start), norm(self.end)
            lo, hi = (first, last + 1) if self.stride > 0 else (last, first + 1)
        else:  # "exclusive": negative v means dim + 1 + v, the far border excluded
            norm = lambda v: v + dim + 1 if v < 0 else v  # noqa: E731
            first, last = norm(self.start), norm(self.end)
            lo, hi = (first, last) if self.stride > 0 else (last, first)
        if not (0 <= lo <= dim and 0 <= hi <= dim):
            raise ModelError(self.where, "openvino/slice",
                             f"start={self.start}, end={self.end} fall outside an axis of "
                             f"extent {dim}", "give start and end inside the sliced axis")
        return lo, hi

    def starts(self, dim: int) -> List[int]:
        lo, hi = self.bounds(dim)
        step = abs(self.stride)
        taken = step if self.cut else self.part  # elements each trip takes from the input
        if hi - lo < taken:
            return []
        count = (hi - lo - taken) // step + 1
        if self.stride > 0:
            return [lo + i * step for i in range(count)]
        return [hi - taken - i * step for i in range(count)]

    def count(self, dim: Optional[int]) -> Optional[int]:
        return None if dim is None else len(self.starts(dim))

    def __call__(self, x):
        """All chunks, stacked on a new axis `axis` (the chunk's own axis follows it)."""
        x = np.asarray(x)
        a = self.axis
        starts = self.starts(x.shape[a])
        if not starts:
            return (np.empty(x.shape[:a] + (0, self.part) + x.shape[a + 1:], x.dtype),)
        if self.cut:
            return (self.cut_chunks(x, starts),)
        chunks = [np.take(x, np.arange(s, s + self.part), axis=a) for s in starts]
        return (np.stack(chunks, axis=a),)

    def cut_chunks(self, x, starts):
        """A23 "stride-cut": chunk i holds the |stride| elements from its start, then
        part_size - |stride| undefined ones (or is cut to part_size when |stride| is larger)."""
        a, step = self.axis, abs(self.stride)
        held = min(step, self.part)
        shape = x.shape[:a] + (len(starts), self.part) + x.shape[a + 1:]
        value = filled(shape, x.dtype)
        mask = np.zeros(shape, bool)
        for i, s in enumerate(starts):
            where = (slice(None),) * a + (i, slice(0, held))
            value[where] = np.take(x, np.arange(s, s + held), axis=a)
            mask[where] = True
        return join(value, mask)


def _merge_axes(axis):
    """Merge axes `axis` (the trips) and `axis + 1` (the body's axis) into one (`openvino/concat`)."""
    def merge(v):
        v = np.asarray(v)
        shape = v.shape[:axis] + (v.shape[axis] * v.shape[axis + 1],) + v.shape[axis + 2:]
        return (v.reshape(shape),)
    return merge


def _join_on(axis, where):
    """Per-trip values of dynamic rank stacked on axis 0, joined along their own `axis`
    (negative: from the end; a scalar stacks into [n]) (`openvino/concat`)."""
    def join(v):
        v = np.asarray(v)
        if v.shape[0] == 0 or v.ndim == 1:
            return (v,)
        r = v.ndim - 1
        a = axis + r if axis < 0 else axis
        if not 0 <= a < r:
            raise ModelError(where, "openvino/concat", f"axis {axis} is out of range for a "
                             f"rank {r} result", "concatenate along an existing axis")
        return (np.concatenate(list(v), axis=a),)
    return join


def _hold_last(axis):
    """A24 reading "hold-last": chunk min(i, count - 1), as OpenVINO's reference does."""
    def take(w, i):
        count = np.shape(w)[axis]
        if count == 0:
            raise ModelError("sliced input", "openvino/slice", "there is no chunk to hold",
                             "give the sliced input at least one chunk")
        return (np.take(w, min(int(np.asarray(i)), count - 1), axis=axis),)
    return take



class Ports:
    """Lowers the sliced inputs and the outputs of loop nodes through `graph` (the model's
    `lowering.Lowerer`: its `net`, `readings`, `value` and `function`)."""

    def __init__(self, graph):
        self.graph = graph
        self.net = graph.net
        self.readings = graph.readings

    # -- `openvino/slice` ------------------------------------------------------------------------
    def chunks(self, node, d, src, where):
        """The chunks of a sliced input stacked on a new axis, for an iterator to walk."""
        rank = src.type.rank
        if rank is None:
            return self.chunks_of_unknown_rank(node, d, src, where)
        axis = d.axis + rank if d.axis < 0 else d.axis
        if not 0 <= axis < rank:
            raise ModelError(where, "openvino/slice", f"axis {d.axis} is out of range for "
                             f"rank {rank}", "slice an existing axis")
        if d.stride == 0 or d.part_size <= 0:
            raise ModelError(where, "openvino/slice", f"stride={d.stride}, "
                             f"part_size={d.part_size}", "use a nonzero stride and part_size >= 1")
        if abs(d.stride) != d.part_size and self.readings["A23"] == "refuse":
            raise ModelError(where, "openvino/slice", f"|stride| = {abs(d.stride)} differs from "
                             f"part_size = {d.part_size}", "reading A23=refuse refuses it; "
                             "A23=windows cuts overlapping or gapped chunks")
        cut = abs(d.stride) != d.part_size and self.readings["A23"] == "stride-cut"
        rule = SliceRule(where, axis, d.start, d.stride, d.part_size, d.end, self.readings["A20"],
                         cut)
        shape = src.shape
        count = rule.count(shape[axis])
        wtype = TensorType(src.dtype, shape[:axis] + (count, d.part_size) + shape[axis + 1:])
        w = self.graph.function(rule, [src], [wtype], "openvino/slice",
                          f"{node.get_friendly_name()}:chunks{d.input_index}").get_output(0)
        return w, axis, count

    def chunks_of_unknown_rank(self, node, d, src, where):
        """A sliced input of dynamic rank: its chunks stacked on a new axis 0, the sliced
        axis (negative: from the end) found when the value arrives."""
        reading = self.readings["A20"]

        def cut(x):
            x = np.asarray(x)
            a = d.axis + x.ndim if d.axis < 0 else d.axis
            if not 0 <= a < x.ndim:
                raise ModelError(where, "openvino/slice", f"axis {d.axis} is out of range for "
                                 f"a value of shape {list(x.shape)}", "slice an existing axis")
            (w,) = SliceRule(where, a, d.start, d.stride, d.part_size, d.end, reading)(x)
            return (np.moveaxis(w, a, 0),)

        w = self.graph.function(cut, [src], [TensorType(src.dtype, None)], "openvino/slice",
                          f"{node.get_friendly_name()}:chunks{d.input_index}").get_output(0)
        return w, 0, None

    # -- outputs ---------------------------------------------------------------------------------
    def concatenated(self, loop, d, results, where, rule):
        """`openvino/concat`: every trip's value concatenated along an EXISTING axis (negative:
        from the end); stride < 0 puts the trips in reverse order. A scalar result stacks
        into [n]."""
        value = self.graph.value(results[d.body_value_index].input_value(0), where)
        ty = value.type
        if not isinstance(ty, TensorType):
            raise UnsupportedError(where, "openvino/concat", f"result {d.body_value_index} is "
                                   f"{ty!r}", "concatenate tensors only")
        if abs(d.stride) != d.part_size and self.readings["A23"] == "refuse":
            raise ModelError(where, "openvino/concat", f"|stride| = {abs(d.stride)} differs "
                             f"from part_size = {d.part_size}", "reading A23=refuse refuses it")
        if self.readings["A23"] == "stride-cut":
            self.check_stride_cut(ty, d, where)
        kind = LoopOutput.REVERSE if d.stride < 0 else LoopOutput.CONCATENATE
        if ty.rank is None:   # the axis is found when the values arrive
            stacked = loop.add_loop_output(value, kind, axis=0).get_output(0)
            return self.graph.function(_join_on(d.axis, where), [stacked], [ty],
                                 "openvino/concat").get_output(0)
        if ty.rank == 0:
            if d.axis not in (0, -1):
                raise ModelError(where, "openvino/concat", f"axis {d.axis} for a scalar result",
                                 "use axis 0: scalars concatenate into a 1-D output")
            return loop.add_loop_output(value, kind, axis=0).get_output(0)
        axis = d.axis + ty.rank if d.axis < 0 else d.axis
        if not 0 <= axis < ty.rank:
            raise ModelError(where, "openvino/concat", f"axis {d.axis} is out of range for a "
                             f"rank {ty.rank} result", "concatenate along an existing axis")
        stacked = loop.add_loop_output(value, kind, axis=axis).get_output(0)
        merged = TensorType(ty.dtype, ty.shape[:axis] + (None,) + ty.shape[axis + 1:])
        return self.graph.function(_merge_axes(axis), [stacked], [merged], "openvino/concat").get_output(0)

    @staticmethod
    def check_stride_cut(ty, d, where):
        """A23 "stride-cut": a concatenated result contributes exactly |stride| elements on
        the concatenation axis; one of another (static) extent is refused, as the CPU plugin
        fails on it."""
        if ty.rank is None or ty.rank == 0:
            return
        axis = d.axis + ty.rank if d.axis < 0 else d.axis
        extent = ty.shape[axis] if 0 <= axis < ty.rank else None
        if extent is not None and extent != abs(d.stride):
            raise ModelError(where, "openvino/concat", f"the result is {extent} long on axis "
                             f"{d.axis}, not |stride| = {abs(d.stride)}",
                             "reading A23=stride-cut refuses it; A23=windows joins every "
                             "trip's whole value")

    def last_iteration(self, loop, d, results, result_of_back_edge, where, rule):
        """Output by last iteration: the value the body produced on the last trip, Y_{n-1}.
        A back-edged result reads as LAST_VALUE of its recurrence (the merged Parameter: its
        initial value after zero trips); any other result as LAST_VALUE of a non-recurrence,
        which the core gives as Y_{n-1}, undefined after zero trips (A3)."""
        if d.iteration >= 0:
            return self.iteration_value(loop, d, results, where)
        if d.iteration != -1:
            raise UnsupportedError(where, rule, f"output {d.output_index} asks for iteration "
                                   f"{d.iteration}", "give -1 (the last) or a trip index >= 0")
        rec = result_of_back_edge.get(d.body_value_index)
        if rec is not None:
            source = rec.get_output(0)
        else:
            source = self.graph.value(results[d.body_value_index].input_value(0), where)
            producer = source.producer
            if producer is not None and getattr(producer, "loop", None) is loop and \
                    producer.type.name == "RECURRENCE":
                # The result is a Parameter's stream itself (R_i on trip i): its last trip is
                # R_{n-1}, not the recurrence's final value R_n.
                source = self.net.add_identity(source).get_output(0)
        return loop.add_loop_output(source, LoopOutput.LAST_VALUE).get_output(0)

    def iteration_value(self, loop, d, results, where):
        """Output by iteration k >= 0: the result's value on trip k, undefined when trip k did
        not run. Held lazily: H = <undefined, Z_0, Z_1, ...> with Z_j = (j == k ? Y_j : H_j),
        so Y is forced on trip k only, and the output is H_n."""
        y = self.graph.value(results[d.body_value_index].input_value(0), where)
        k = self.net.add_constant((), np.array(d.iteration, np.int64)).get_output(0)
        one = self.net.add_constant((), np.array(1, np.int64)).get_output(0)
        trip = loop.add_recurrence(self.net.add_constant((), np.array(0, np.int64)).get_output(0))
        trip.set_input(1, self.net.add_elementwise(trip.get_output(0), one,
                                                  ElementWiseOperation.SUM).get_output(0))
        held = loop.add_recurrence(self.net.add_undefined(y.type).get_output(0))
        pick = self.net.add_if_conditional()
        pick.set_condition(self.net.add_elementwise(trip.get_output(0), k,
                                                    ElementWiseOperation.EQUAL).get_output(0))
        held.set_input(1, pick.add_output(y, held.get_output(0)).get_output(0))
        return loop.add_loop_output(held.get_output(0), LoopOutput.LAST_VALUE).get_output(0)
