"""Lowering an `openvino.Model` onto a core network of profile "openvino".

Rules (spec/40-openvino-lowering.md spells each out):
- `openvino/model`  Parameters -> inputs, Constants -> constants, Results -> outputs
- `openvino/node`   every other op -> a function layer running OpenVINO's Node.evaluate
- `openvino/loop5`  Loop-5 -> a core loop (trip count, conditions, current iteration,
                    back edges, invariants, outputs by last iteration)
- `openvino/tensor-iterator`  TensorIterator-1 -> the same, its trip count from its slices
- `openvino/slice`  sliced inputs -> an iterator over the chunks, each keeping the rank
- `openvino/concat` concatenated outputs -> CONCATENATE on a new axis, merged into the
                    existing one
"""
from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import attrs
import numpy as np
import openvino as ov

from ..core.enums import ElementWiseOperation, LoopOutput, TripLimit
from ..core.errors import InputError, LazyLoopError, ModelError, UnsupportedError
from ..core.evaluate import feed_dict
from ..core.network import Network
from ..core.types import TensorType
from .kernels import kernel_for
from .types import compatible, describe, numpy_dtype, output_type, relaxed, tensor_type

INTS = (np.dtype(np.int32), np.dtype(np.int64))
BOOL = np.dtype(np.bool_)
SCALAR_SHAPES = ((), (1,))


# ------------------------------------------------------------------------------------------
# The result of lowering
# ------------------------------------------------------------------------------------------

@attrs.frozen
class InputBinding:
    core_name: str        # the core network's input name
    names: Tuple[str, ...]  # names a caller may feed it by: friendly name, then tensor names
    type: TensorType


@attrs.frozen
class OutputBinding:
    user_name: str  # the model output's tensor name
    core_name: str  # the core network's output name


@attrs.define
class Lowered:
    """A model lowered onto the core: `network` (profile "openvino") plus the maps between
    the model's names and the network's."""

    network: Network
    model: object
    inputs: Tuple[InputBinding, ...]
    outputs: Tuple[OutputBinding, ...]
    readings: dict  # the frontend readings (A20-A24) the lowering used

    def core_feeds(self, user_feeds) -> dict:
        """Feeds keyed by Parameter name (friendly name or any tensor name) -> feeds keyed by
        the core network's input names."""
        by_name = {}
        for b in self.inputs:
            for n in b.names:
                by_name.setdefault(n, b)
        out = {}
        for key, value in feed_dict(user_feeds).items():
            b = by_name.get(key)
            if b is None:
                raise InputError(f"feed {key!r}", "openvino/model", "no Parameter of the model "
                                 "has this name", f"feed one of {[b.names[0] for b in self.inputs]}")
            if b.core_name in out:
                raise InputError(f"feed {key!r}", "openvino/model",
                                 f"Parameter {b.names[0]!r} is fed twice",
                                 "feed every Parameter once")
            out[b.core_name] = _feed_value(value, b)
        return out

    def user_outputs(self, core_outputs) -> dict:
        """Core outputs -> one entry per model output, in model output order, keyed by the
        output's tensor name."""
        return {o.user_name: core_outputs[o.core_name] for o in self.outputs}


def _feed_value(value, binding: InputBinding):
    if isinstance(value, ov.Tensor):
        value = np.array(value.data, copy=True)
    if not isinstance(value, (np.ndarray, np.generic)):
        try:
            value = np.asarray(value, dtype=binding.type.dtype)
        except (TypeError, ValueError) as exc:
            raise InputError(f"Parameter {binding.names[0]!r}", "openvino/model",
                             f"cannot be read as {binding.type!r}: {exc}",
                             "feed a numpy array") from None
    return value


# ------------------------------------------------------------------------------------------
# Helpers shared by the rules
# ------------------------------------------------------------------------------------------

def _key(output) -> tuple:
    return (output.get_node().get_instance_id(), output.get_index())


def _scalar_value(v) -> np.ndarray:
    """A () or (1,) tensor's one element as a 0-D array."""
    return np.asarray(v).reshape(())


def _constant_value(output) -> Optional[np.ndarray]:
    node = output.get_node()
    if node.get_type_name() == "Constant":
        return np.asarray(node.get_data())
    return None


class SliceRule:
    """`openvino/slice`: the chunks of one sliced input, each keeping the input's rank.

    Chunk i holds `part` elements along `axis`. With stride > 0 chunk i starts at
    lo + i*stride, chunks running up to `hi`; with stride < 0 chunk i ends at hi - i*|stride|,
    chunks running down to `lo`. [lo, hi) comes from start and end (A20).
    """

    def __init__(self, where, axis, start, stride, part, end, reading):
        self.where, self.axis = where, axis
        self.start, self.stride, self.part, self.end = start, stride, part, end
        self.reading = reading

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
        if hi - lo < self.part:
            return []
        count = (hi - lo - self.part) // step + 1
        if self.stride > 0:
            return [lo + i * step for i in range(count)]
        return [hi - self.part - i * step for i in range(count)]

    def count(self, dim: Optional[int]) -> Optional[int]:
        return None if dim is None else len(self.starts(dim))

    def __call__(self, x):
        """All chunks, stacked on a new axis `axis` (the chunk's own axis follows it)."""
        x = np.asarray(x)
        a = self.axis
        chunks = [np.take(x, np.arange(s, s + self.part), axis=a) for s in self.starts(x.shape[a])]
        if not chunks:
            return (np.empty(x.shape[:a] + (0, self.part) + x.shape[a + 1:], x.dtype),)
        return (np.stack(chunks, axis=a),)


def _merge_axes(axis):
    """Merge axes `axis` (the trips) and `axis + 1` (the body's axis) into one (`openvino/concat`)."""
    def merge(v):
        v = np.asarray(v)
        shape = v.shape[:axis] + (v.shape[axis] * v.shape[axis + 1],) + v.shape[axis + 2:]
        return (v.reshape(shape),)
    return merge


def _hold_last(axis):
    """A24 reading "hold-last": chunk min(i, count - 1), as OpenVINO's reference does."""
    def take(w, i):
        count = np.shape(w)[axis]
        if count == 0:
            raise ModelError("sliced input", "openvino/slice", "there is no chunk to hold",
                             "give the sliced input at least one chunk")
        return (np.take(w, min(int(np.asarray(i)), count - 1), axis=axis),)
    return take


# ------------------------------------------------------------------------------------------
# The lowering
# ------------------------------------------------------------------------------------------

class Lowerer:
    def __init__(self, readings: dict):
        self.net = Network(profile="openvino")
        self.readings = readings
        self.env: Dict[tuple, object] = {}

    # -- values ------------------------------------------------------------------------------
    def value(self, output, user: str):
        t = self.env.get(_key(output))
        if t is None:
            node = output.get_node()
            raise ModelError(user, "openvino/model",
                             f"reads {describe(node)} output {output.get_index()}, which is "
                             "not defined where it is read",
                             "connect body values through Parameters and Results only")
        return t

    def function(self, fn, inputs, types, op, name=None):
        layer = self.net.add_function(fn, inputs, types, op=op)
        if name:
            for k in range(layer.num_outputs):
                layer.get_output(k).name = name if layer.num_outputs == 1 else f"{name}:{k}"
        return layer

    def scalar(self, t, name):
        """A () or (1,) tensor as a 0-D tensor (conditions of `openvino/loop5`)."""
        if t.shape == ():
            return t
        return self.function(lambda v: (_scalar_value(v),), [t], [TensorType(t.dtype, ())],
                             "openvino/loop5:scalar", name).get_output(0)

    # -- `openvino/model` ----------------------------------------------------------------------
    def lower_model(self, model) -> Lowered:
        if len(model.get_sinks()):
            raise UnsupportedError(f"model {model.get_friendly_name()!r}", "openvino/model",
                                   "the model has sinks (Assign: state kept between runs)",
                                   "lazyloop evaluates pure models only")
        inputs, taken = [], set()
        for p in model.get_parameters():
            where = describe(p)
            friendly = p.get_friendly_name()
            core = friendly
            k = 1
            while core in taken:
                k, core = k + 1, f"{friendly}#{k}"
            taken.add(core)
            ty = tensor_type(p.get_element_type(), p.get_partial_shape(), where)
            t = self.net.add_input(core, ty.dtype, ty.shape)
            self.env[_key(p.output(0))] = t
            names = (friendly,) + tuple(sorted(n for n in p.output(0).get_names() if n != friendly))
            inputs.append(InputBinding(core, names, t.type))
        self.lower_ops(model.get_ordered_ops())
        outputs, used = [], set()
        for k, (out, result) in enumerate(zip(model.outputs, model.get_results())):
            names = out.get_names()
            user = out.get_any_name() if names else result.get_friendly_name()
            base, j = user, 1
            while user in used:
                j, user = j + 1, f"{base}#{j}"
            used.add(user)
            src = self.value(result.input_value(0), describe(result))
            ident = self.net.add_identity(src)
            core = f"output:{k}"
            ident.get_output(0).name = core
            self.net.mark_output(ident.get_output(0))
            outputs.append(OutputBinding(user, core))
        return Lowered(self.net, model, tuple(inputs), tuple(outputs), dict(self.readings))

    def lower_ops(self, ops):
        for node in ops:
            kind = node.get_type_name()
            if kind == "Parameter":
                if _key(node.output(0)) not in self.env:
                    raise ModelError(describe(node), "openvino/loop5",
                                     "this body Parameter is neither port-mapped nor the "
                                     "current_iteration input", "map it in the port map")
            elif kind == "Result":
                continue
            elif kind == "Constant":
                self.lower_constant(node)
            elif kind == "Loop":
                self.lower_loop(node)
            elif kind == "TensorIterator":
                self.lower_loop(node, tensor_iterator=True)
            elif kind == "If":
                self.lower_if(node)
            else:
                self.lower_node(node)

    def lower_constant(self, node):
        where = describe(node)
        dtype = numpy_dtype(node.get_element_type(), where)
        shape = tuple(node.get_output_shape(0))
        data = np.array(node.get_data(), dtype=dtype).reshape(shape)
        layer = self.net.add_constant(shape, data)
        layer.get_output(0).name = node.get_friendly_name()
        self.env[_key(node.output(0))] = layer.get_output(0)

    # -- `openvino/node` -----------------------------------------------------------------------
    def lower_node(self, node):
        where = describe(node)
        inputs = [self.value(v, where) for v in node.input_values()]
        types = [output_type(node.output(k), where) for k in range(node.get_output_size())]
        # OpenVINO inferred the node's shapes from its own view of the inputs; where lazyloop's
        # view differs (A22: zero trips against shape inference), keep only dtypes and ranks.
        if any(not compatible(t.type, node.get_input_partial_shape(i))
               for i, t in enumerate(inputs)):
            types = [relaxed(t) for t in types]
        layer = self.function(kernel_for(node), inputs, types, node.get_type_name(),
                              node.get_friendly_name())
        for k in range(node.get_output_size()):
            self.env[_key(node.output(k))] = layer.get_output(k)

    # -- `openvino/if` --------------------------------------------------------------------------
    def lower_if(self, node):
        """If-8 -> a core if-conditional: each branch body's nodes become ordinary layers read
        through the conditional's inputs, and per element only the taken branch's are forced
        (inside a loop, per trip)."""
        where = describe(node)
        outer = [self.value(v, where) for v in node.input_values()]
        conditional = self.net.add_if_conditional()
        conditional.set_condition(outer[0])
        branches = []
        for index, body in ((0, node.get_then_body()), (1, node.get_else_body())):
            params = body.get_parameters()
            for d in node.get_input_descriptions(index):
                entry = conditional.add_input(outer[d.input_index]).get_output(0)
                self.env[_key(params[d.body_parameter_index].output(0))] = entry
            self.lower_ops(body.get_ordered_ops())
            results = body.get_results()
            branches.append({d.output_index: self.value(results[d.body_value_index].input_value(0),
                                                       where)
                             for d in node.get_output_descriptions(index)})
        for k in range(node.get_output_size()):
            if k not in branches[0] or k not in branches[1]:
                raise ModelError(where, "openvino/if", f"output {k} is missing from a branch",
                                 "give both bodies a Result for every output")
            self.env[_key(node.output(k))] = conditional.add_output(branches[0][k],
                                                                    branches[1][k]).get_output(0)

    # -- `openvino/loop5` and `openvino/tensor-iterator` ---------------------------------------
    def lower_loop(self, node, tensor_iterator=False):
        where = describe(node)
        rule = "openvino/tensor-iterator" if tensor_iterator else "openvino/loop5"
        body = node.get_function()
        params, results = list(body.get_parameters()), list(body.get_results())
        outer = [self.value(v, where) for v in node.input_values()]
        cur_idx, cond_idx = (-1, -1) if tensor_iterator else tuple(node.get_special_body_ports())

        roles = self.parameter_roles(node, params, cur_idx, where, rule)

        if not tensor_iterator:
            trip, cond0 = self.check_loop_limits(node, outer, where)
            if cond_idx < 0 or cond_idx >= len(results):
                raise ModelError(where, "openvino/loop5", "the body has no execution_condition "
                                 "result (special body port)", "mark the body's condition "
                                 "Result with purpose=\"execution_condition\"")
            cv = _constant_value(node.input_value(1))
            if cv is not None and not bool(cv.reshape(-1)[0]) and self.readings["A22"] == "inference":
                return self.lower_as_inferred(node, where)

        loop = self.net.add_loop()
        counter = None  # an int64 trip index, made when a rule needs one
        back_edges, windows = [], []
        for idx, role in sorted(roles.items()):
            p = params[idx]
            pkey = _key(p.output(0))
            if role == "current_iteration":
                self.env[pkey] = self.current_iteration(loop, p, where)
                continue
            src = outer[role.input_index]
            pwhere = f"{where} body Parameter {p.get_friendly_name()!r}"
            if numpy_dtype(p.get_element_type(), pwhere) != src.dtype:
                raise ModelError(pwhere, rule, f"is {p.get_element_type().get_type_name()} but "
                                 f"its input is {src.dtype}", "give both the same element type")
            kind = type(role).__name__
            if kind == "MergedInputDescription":
                rec = loop.add_recurrence(src)
                rec.get_output(0).name = p.get_friendly_name()
                back_edges.append((rec, role.body_value_index, p))
                self.env[pkey] = rec.get_output(0)
            elif kind == "InvariantInputDescription":
                self.env[pkey] = src  # stream/invariant: the outer tensor itself
            elif kind == "SliceInputDescription":
                w, axis, count = self.chunks(node, role, src, pwhere)
                windows.append((w, axis, count))
                if not tensor_iterator and self.readings["A24"] == "hold-last":
                    if counter is None:
                        counter = self.trip_index(loop)
                    t = self.function(_hold_last(axis), [w, counter],
                                      [TensorType(w.dtype, w.shape[:axis] + w.shape[axis + 1:])],
                                      "openvino/slice:hold-last", p.get_friendly_name()).get_output(0)
                else:
                    it = loop.add_iterator(w, axis=axis)
                    t = it.get_output(0)
                    t.name = p.get_friendly_name()
                self.env[pkey] = t
            else:
                raise UnsupportedError(pwhere, rule, f"input description {kind} is not known",
                                       "use sliced, merged or invariant inputs")

        self.lower_ops(body.get_ordered_ops())

        result_of_back_edge = {}
        for rec, r_idx, p in back_edges:
            if not 0 <= r_idx < len(results):
                raise ModelError(where, rule, f"back edge from result {r_idx}: the body has "
                                 f"{len(results)} results", "fix the back edge")
            nxt = self.value(results[r_idx].input_value(0), where)
            try:
                rec.set_input(1, nxt)
            except LazyLoopError as exc:
                raise ModelError(f"{where} back edge {results[r_idx].get_friendly_name()!r} -> "
                                 f"{p.get_friendly_name()!r}", rule, exc.problem,
                                 "give the Result the Parameter's shape and element type") from None
            result_of_back_edge.setdefault(r_idx, rec)

        if tensor_iterator:
            loop.add_trip_limit(self.tensor_iterator_count(node, windows, where), TripLimit.COUNT)
        else:
            self.loop_limits(node, loop, trip, cond0, results[cond_idx], where)

        for d in node.get_output_descriptions():
            kind = type(d).__name__
            if kind == "ConcatOutputDescription":
                t = self.concatenated(loop, d, results, where, rule)
            elif kind == "BodyOutputDescription":
                t = self.last_iteration(loop, d, results, result_of_back_edge, where, rule)
            else:
                raise UnsupportedError(where, rule, f"output description {kind} is not known",
                                       "use concatenated or last-iteration outputs")
            t.name = f"{node.get_friendly_name()}:{d.output_index}"
            self.env[_key(node.output(d.output_index))] = t

    def parameter_roles(self, node, params, cur_idx, where, rule):
        """Each body Parameter has exactly one source: a port-map input or the iteration."""
        roles = {}
        for d in node.get_input_descriptions():
            idx = d.body_parameter_index
            if not 0 <= idx < len(params):
                raise ModelError(where, rule, f"port map names body Parameter {idx}; the body "
                                 f"has {len(params)}", "fix the port map")
            if idx in roles:
                raise ModelError(where, rule, f"body Parameter {params[idx].get_friendly_name()!r}"
                                 " is mapped twice", "map every body Parameter once")
            roles[idx] = d
        if cur_idx >= 0:
            if cur_idx >= len(params):
                raise ModelError(where, rule, f"current_iteration names body Parameter {cur_idx};"
                                 f" the body has {len(params)}", "fix the special body ports")
            if cur_idx in roles:
                raise ModelError(where, rule, "the current_iteration Parameter is also "
                                 "port-mapped", "leave the current_iteration Parameter out of "
                                 "the port map: the Loop feeds it")
            roles[cur_idx] = "current_iteration"
        for idx, p in enumerate(params):
            if idx not in roles:
                raise ModelError(f"{where} body Parameter {p.get_friendly_name()!r}", rule,
                                 "is neither port-mapped nor the current_iteration input",
                                 "map it in the port map")
        return roles

    def check_loop_limits(self, node, outer, where):
        """`openvino/loop5`: trip count int32/int64, execution condition bool; () or (1,)."""
        trip, cond0 = outer[0], outer[1]
        if trip.dtype not in INTS or trip.shape not in SCALAR_SHAPES:
            raise ModelError(where, "openvino/loop5", f"trip count is {trip.type!r}",
                             "give a scalar or 1-element int32/int64 trip count")
        if cond0.dtype != BOOL or cond0.shape not in SCALAR_SHAPES:
            raise ModelError(where, "openvino/loop5", f"execution condition is {cond0.type!r}",
                             "give a scalar or 1-element boolean execution condition")
        return trip, cond0

    def loop_limits(self, node, loop, trip, cond0, cond_result, where):
        """trip count -> COUNT (negative: no limit, A4 by profile); execution condition and the
        body's execution_condition result -> WHILE over recurrence(cond0, body condition)."""
        body_cond = self.value(cond_result.input_value(0), where)
        if body_cond.dtype != BOOL or body_cond.shape not in SCALAR_SHAPES:
            raise ModelError(f"{where} execution_condition result", "openvino/loop5",
                             f"is {body_cond.type!r}",
                             "give a scalar or 1-element boolean condition")
        loop.add_trip_limit(trip, TripLimit.COUNT)
        name = node.get_friendly_name()
        cond = loop.add_recurrence(self.scalar(cond0, f"{name}:execution_condition"))
        cond.get_output(0).name = f"{name}:condition"
        cond.set_input(1, self.scalar(body_cond, f"{name}:body_condition"))
        keep_going = cond.get_output(0)
        if self.readings["A21"] == "infinite":
            def infinite(count, first):
                return (np.array(bool(_scalar_value(count) < 0 and _scalar_value(first))),)
            ignore = self.function(infinite, [trip, cond0], [TensorType(BOOL, ())],
                                   "openvino/loop5:infinite", f"{name}:infinite").get_output(0)
            keep_going = self.net.add_elementwise(keep_going, ignore,
                                                  ElementWiseOperation.OR).get_output(0)
        loop.add_trip_limit(keep_going, TripLimit.WHILE)

    def current_iteration(self, loop, param, where):
        """current_iteration = recurrence(0, i + 1) of the Parameter's declared dtype and shape
        (() or (1,); a dynamic shape reads as (1,), as OpenVINO's reference does)."""
        pwhere = f"{where} current_iteration Parameter {param.get_friendly_name()!r}"
        dtype = numpy_dtype(param.get_element_type(), pwhere)
        if dtype not in INTS:
            raise ModelError(pwhere, "openvino/loop5", f"is {dtype}",
                             "declare it int32 or int64")
        ps = param.get_partial_shape()
        rank = None if ps.rank.is_dynamic else ps.rank.get_length()
        if rank == 0:
            shape = ()
        elif rank is None or (rank == 1 and (ps[0].is_dynamic or ps[0].get_length() == 1)):
            shape = (1,)
        else:
            raise ModelError(pwhere, "openvino/loop5", f"has shape {ps}",
                             "declare it a scalar or a 1-element 1-D tensor")
        zero = self.net.add_constant(shape, np.zeros(shape, dtype)).get_output(0)
        one = self.net.add_constant(shape, np.ones(shape, dtype)).get_output(0)
        rec = loop.add_recurrence(zero)
        rec.get_output(0).name = param.get_friendly_name()
        nxt = self.net.add_elementwise(rec.get_output(0), one, ElementWiseOperation.SUM)
        rec.set_input(1, nxt.get_output(0))
        return rec.get_output(0)

    def trip_index(self, loop):
        zero = self.net.add_constant((), np.array(0, np.int64)).get_output(0)
        one = self.net.add_constant((), np.array(1, np.int64)).get_output(0)
        rec = loop.add_recurrence(zero)
        rec.set_input(1, self.net.add_elementwise(rec.get_output(0), one,
                                                  ElementWiseOperation.SUM).get_output(0))
        return rec.get_output(0)

    # -- `openvino/slice` ------------------------------------------------------------------------
    def chunks(self, node, d, src, where):
        """The chunks of a sliced input stacked on a new axis, for an iterator to walk."""
        rank = src.type.rank
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
        rule = SliceRule(where, axis, d.start, d.stride, d.part_size, d.end, self.readings["A20"])
        shape = src.shape
        count = rule.count(shape[axis])
        wtype = TensorType(src.dtype, shape[:axis] + (count, d.part_size) + shape[axis + 1:])
        w = self.function(rule, [src], [wtype], "openvino/slice",
                          f"{node.get_friendly_name()}:chunks{d.input_index}").get_output(0)
        return w, axis, count

    def tensor_iterator_count(self, node, windows, where):
        """`openvino/tensor-iterator`: n = the number of chunks, which every sliced input must
        agree on; without sliced inputs, the count OpenVINO inferred."""
        if not windows:
            n = node.get_num_iterations()
            if n < 0:
                raise ModelError(where, "openvino/tensor-iterator", "has no sliced input and "
                                 "OpenVINO inferred no trip count", "slice at least one input")
            return self.net.add_constant((), np.array(n, np.int64)).get_output(0)
        counts = {c for _, _, c in windows}
        if None not in counts:
            if len(counts) > 1:
                raise ModelError(where, "openvino/tensor-iterator", f"sliced inputs give "
                                 f"different trip counts {sorted(counts)}",
                                 "slice every input into the same number of chunks")
            return self.net.add_constant((), np.array(counts.pop(), np.int64)).get_output(0)
        axes = [a for _, a, _ in windows]

        def count(*ws):
            found = sorted({np.shape(w)[a] for w, a in zip(ws, axes)})
            if len(found) > 1:
                raise ModelError(where, "openvino/tensor-iterator", f"sliced inputs give "
                                 f"different trip counts {found}",
                                 "slice every input into the same number of chunks")
            return (np.array(found[0], np.int64),)
        return self.function(count, [w for w, _, _ in windows], [TensorType(np.int64, ())],
                             "openvino/tensor-iterator:count",
                             f"{node.get_friendly_name()}:trips").get_output(0)

    # -- outputs ---------------------------------------------------------------------------------
    def concatenated(self, loop, d, results, where, rule):
        """`openvino/concat`: every trip's value concatenated along an EXISTING axis (negative:
        from the end); stride < 0 puts the trips in reverse order. A scalar result stacks
        into [n]."""
        value = self.value(results[d.body_value_index].input_value(0), where)
        ty = value.type
        if not isinstance(ty, TensorType):
            raise UnsupportedError(where, "openvino/concat", f"result {d.body_value_index} is "
                                   f"{ty!r}", "concatenate tensors only")
        if abs(d.stride) != d.part_size and self.readings["A23"] == "refuse":
            raise ModelError(where, "openvino/concat", f"|stride| = {abs(d.stride)} differs "
                             f"from part_size = {d.part_size}", "reading A23=refuse refuses it")
        kind = LoopOutput.REVERSE if d.stride < 0 else LoopOutput.CONCATENATE
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
        return self.function(_merge_axes(axis), [stacked], [merged], "openvino/concat").get_output(0)

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
            source = self.value(results[d.body_value_index].input_value(0), where)
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
        y = self.value(results[d.body_value_index].input_value(0), where)
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

    def lower_as_inferred(self, node, where):
        """A22 reading "inference": a Loop whose execution condition is a constant false gives
        empty arrays of the shapes OpenVINO's shape inference declared."""
        for k in range(node.get_output_size()):
            ps = node.get_output_partial_shape(k)
            if not ps.is_static:
                raise ModelError(where, "openvino/loop5", f"output {k} has no static inferred "
                                 f"shape ({ps})", "reading A22=inference needs static shapes")
            shape = tuple(ps.to_shape())
            dtype = numpy_dtype(node.get_output_element_type(k), where)
            c = self.net.add_constant(shape, np.zeros(shape, dtype))
            c.get_output(0).name = f"{node.get_friendly_name()}:{k}"
            self.env[_key(node.output(k))] = c.get_output(0)


def lower_model(model, readings: dict) -> Lowered:
    return Lowerer(readings).lower_model(model)
