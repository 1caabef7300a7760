"""Loop-5 and TensorIterator-1 as core loops (`openvino/loop5`, `openvino/tensor-iterator`),
lowered in the phases every loop lowering of lazyloop follows (ONNX Loop, Scan 9 and Scan 8 in
`lazyloop.onnx` read the same way):

1. trip limits -- the trip count as COUNT (negative: no limit) and the execution condition as
   WHILE over recurrence(initial condition, body condition); a TensorIterator runs as many
   trips as its sliced inputs have chunks; the current iteration, recurrence(0, i + 1);
2. carried values -- merged inputs become recurrences (their next value is set in phase 5);
   invariant inputs are the outer tensors themselves (`stream/invariant`);
3. iterated inputs -- sliced inputs become iterators over their chunks (`openvino/slice`);
4. the body -- its nodes lowered by the graph's own lowering, in the loop's scope;
5. back edges -- each merged input's next value, and the body's execution condition;
6. outputs -- concatenated (`openvino/concat`), by last iteration, or by a given iteration.

The ports that carry whole tensors (chunks, concatenations, outputs by iteration) are lowered
by `ports.Ports`; the graph's lowering (`lowering.Lowerer`) is the collaborator that holds the
network, the readings and the values lowered so far.
"""
from __future__ import annotations

import numpy as np

from ..core.enums import ElementWiseOperation, TripLimit
from ..core.errors import LazyLoopError, ModelError, UnsupportedError
from ..core.types import TensorType
from .ports import Ports, _hold_last
from .types import describe, numpy_dtype, tensor_type
from .values import BOOL, INTS, SCALAR_SHAPES, _constant_value, _key, _scalar_value


class LoopLowerer:
    """Lowers the loop nodes of one model, in phases, through `graph` (the model's
    `lowering.Lowerer`: its `net`, `readings`, `env`, `value`, `function`, `scalar` and
    `lower_ops`)."""

    def __init__(self, graph):
        self.graph = graph
        self.net = graph.net
        self.readings = graph.readings
        self.ports = Ports(graph)

    def loop_name(self, node):
        """The core loop takes the model's node name, so fuel and trip messages name it
        (`openvino/loop5`); a name already taken (a nested body reusing it) gets a suffix."""
        name, taken = node.get_friendly_name(), {lp.name for lp in self.net.loops[:-1]}
        k = 1
        while name in taken:
            k += 1
            name = f"{node.get_friendly_name()}#{k}"
        return name

    # -- `openvino/loop5` and `openvino/tensor-iterator` ---------------------------------------
    def lower(self, node, tensor_iterator=False):
        where = describe(node)
        rule = "openvino/tensor-iterator" if tensor_iterator else "openvino/loop5"
        body = node.get_function()
        params, results = list(body.get_parameters()), list(body.get_results())
        outer = [self.graph.value(v, where) for v in node.input_values()]
        cur_idx, cond_idx = (-1, -1) if tensor_iterator else tuple(node.get_special_body_ports())
        roles = parameter_roles(node, params, cur_idx, where, rule)
        if not tensor_iterator:
            check_loop_limits(outer, where)
            if cond_idx < 0 or cond_idx >= len(results):
                raise ModelError(where, "openvino/loop5", "the body has no execution_condition "
                                 "result (special body port)", "mark the body's condition "
                                 "Result with purpose=\"execution_condition\"")
            cv = _constant_value(node.input_value(1))
            if cv is not None and not bool(cv.reshape(-1)[0]) and self.readings["A22"] == "inference":
                return self.lower_as_inferred(node, where)
        loop = self.net.add_loop()
        loop.name = self.loop_name(node)
        # the sliced inputs' chunks, cut outside the loop: a TensorIterator's trip count
        chunks = {idx: self.ports.chunks(node, role,
                                         self.source(role, params[idx], outer, where, rule),
                                         param_where(where, params[idx]))
                  for idx, role in sorted(roles.items()) if role_kind(role) == "Slice"}

        # 1. trip limits, and the current iteration
        if tensor_iterator:
            condition = None
            loop.add_trip_limit(self.tensor_iterator_count(node, chunks.values(), where),
                                TripLimit.COUNT)
        else:
            condition = self.trip_limits(node, loop, outer[0], outer[1])
        if cur_idx >= 0:
            self.graph.env[_key(params[cur_idx].output(0))] = self.current_iteration(
                loop, params[cur_idx], where)
        # 2. carried values
        back_edges = self.carried_values(loop, roles, params, outer, where, rule)
        # 3. iterated inputs
        self.iterated_inputs(loop, roles, params, chunks, where, tensor_iterator)
        # 4. the body
        self.graph.lower_ops(body.get_ordered_ops())
        # 5. back edges
        result_of_back_edge = self.close_back_edges(back_edges, results, where, rule)
        if condition is not None:
            self.close_condition(node, condition, results[cond_idx], where)
        # 6. outputs
        self.outputs(node, loop, results, result_of_back_edge, where, rule)

    # -- 1. trip limits ----------------------------------------------------------------------
    def trip_limits(self, node, loop, trip, cond0):
        """trip count -> COUNT (negative: no limit, A4 by profile); the execution condition
        -> WHILE over recurrence(initial condition, body condition), the body condition
        set in phase 5 (`close_condition`). Returns that recurrence."""
        loop.add_trip_limit(trip, TripLimit.COUNT)
        name = node.get_friendly_name()
        cond = loop.add_recurrence(self.graph.scalar(cond0, f"{name}:execution_condition"))
        cond.get_output(0).name = f"{name}:condition"
        keep_going = cond.get_output(0)
        if self.readings["A21"] == "infinite":
            def infinite(count, first):
                return (np.array(bool(_scalar_value(count) < 0 and _scalar_value(first))),)
            ignore = self.graph.function(infinite, [trip, cond0], [TensorType(BOOL, ())],
                                         "openvino/loop5:infinite",
                                         f"{name}:infinite").get_output(0)
            keep_going = self.net.add_elementwise(keep_going, ignore,
                                                  ElementWiseOperation.OR).get_output(0)
        loop.add_trip_limit(keep_going, TripLimit.WHILE)
        return cond

    # -- 2. carried values -------------------------------------------------------------------
    def carried_values(self, loop, roles, params, outer, where, rule):
        """Merged inputs -> recurrences from their input (next value: phase 5); invariant
        inputs -> the outer tensor itself (`stream/invariant`). Returns the back edges, as
        (recurrence, body result index, body Parameter)."""
        back_edges = []
        for idx, role in sorted(roles.items()):
            kind = role_kind(role)
            if kind not in ("Merged", "Invariant"):
                continue
            p = params[idx]
            src = self.source(role, p, outer, where, rule)
            if kind == "Merged":
                rec = loop.add_recurrence(self.declared(src, p, param_where(where, p), rule))
                rec.get_output(0).name = p.get_friendly_name()
                back_edges.append((rec, role.body_value_index, p))
                self.graph.env[_key(p.output(0))] = rec.get_output(0)
            else:
                self.graph.env[_key(p.output(0))] = src
        return back_edges

    def source(self, role, p, outer, where, rule):
        """The outer tensor a port-mapped Parameter reads; its element type must be the
        Parameter's."""
        src = outer[role.input_index]
        pwhere = param_where(where, p)
        if numpy_dtype(p.get_element_type(), pwhere) != src.dtype:
            raise ModelError(pwhere, rule, f"is {p.get_element_type().get_type_name()} but "
                             f"its input is {src.dtype}", "give both the same element type")
        return src

    # -- 3. iterated inputs ------------------------------------------------------------------
    def iterated_inputs(self, loop, roles, params, chunks, where, tensor_iterator):
        """Sliced inputs -> iterators over their chunks (A24 "hold-last": the last chunk
        again past the end); any other port kind is refused."""
        counter = None  # an int64 trip index, made when A24 needs one
        for idx, role in sorted(roles.items()):
            p = params[idx]
            kind = role_kind(role)
            if kind == "Slice":
                w, axis, _ = chunks[idx]
                if not tensor_iterator and self.readings["A24"] == "hold-last":
                    if counter is None:
                        counter = self.trip_index(loop)
                    t = self.graph.function(
                        _hold_last(axis), [w, counter],
                        [TensorType(w.dtype, None if w.shape is None else
                                    w.shape[:axis] + w.shape[axis + 1:])],
                        "openvino/slice:hold-last", p.get_friendly_name()).get_output(0)
                else:
                    t = loop.add_iterator(w, axis=axis).get_output(0)
                    t.name = p.get_friendly_name()
                self.graph.env[_key(p.output(0))] = t
            elif kind not in ("Merged", "Invariant", "current_iteration"):
                raise UnsupportedError(param_where(where, p), "openvino/loop5",
                                       f"input description {type(role).__name__} is not "
                                       "known", "use sliced, merged or invariant inputs")

    # -- 5. back edges -----------------------------------------------------------------------
    def close_back_edges(self, back_edges, results, where, rule):
        """Each merged input's recurrence takes its body result as next value (`recurrence/
        def`). Returns {result index: the first recurrence it feeds}."""
        result_of_back_edge = {}
        for rec, r_idx, p in back_edges:
            if not 0 <= r_idx < len(results):
                raise ModelError(where, rule, f"back edge from result {r_idx}: the body has "
                                 f"{len(results)} results", "fix the back edge")
            nxt = self.graph.value(results[r_idx].input_value(0), where)
            try:
                rec.set_input(1, nxt)
            except LazyLoopError as exc:
                raise ModelError(f"{where} back edge {results[r_idx].get_friendly_name()!r} -> "
                                 f"{p.get_friendly_name()!r}", rule, exc.problem,
                                 "give the Result the Parameter's shape and element type") from None
            result_of_back_edge.setdefault(r_idx, rec)
        return result_of_back_edge

    def close_condition(self, node, condition, cond_result, where):
        """The execution condition's next value: the body's execution_condition result."""
        body_cond = self.graph.value(cond_result.input_value(0), where)
        if body_cond.dtype != BOOL or body_cond.shape not in SCALAR_SHAPES + (None,):
            raise ModelError(f"{where} execution_condition result", "openvino/loop5",
                             f"is {body_cond.type!r}",
                             "give a scalar or 1-element boolean condition")
        condition.set_input(1, self.graph.scalar(body_cond,
                                                 f"{node.get_friendly_name()}:body_condition"))

    # -- 6. outputs ---------------------------------------------------------------------------
    def outputs(self, node, loop, results, result_of_back_edge, where, rule):
        """Each output description: concatenated (`openvino/concat`), or the value of the
        last (or a given) iteration (`ports.Ports`)."""
        for d in node.get_output_descriptions():
            kind = type(d).__name__
            if kind == "ConcatOutputDescription":
                t = self.ports.concatenated(loop, d, results, where, rule)
            elif kind == "BodyOutputDescription":
                t = self.ports.last_iteration(loop, d, results, result_of_back_edge, where, rule)
            else:
                raise UnsupportedError(where, rule, f"output description {kind} is not known",
                                       "use concatenated or last-iteration outputs")
            t.name = f"{node.get_friendly_name()}:{d.output_index}"
            self.graph.env[_key(node.output(d.output_index))] = t

    # -- 2. a carried value's declared type ---------------------------------------------------
    def declared(self, src, param, pwhere, rule):
        """A back edge's stream takes its body Parameter's type -- dtype, and rank and static
        dims where known (`structure/shapes`) -- not its initial value's shape, so a carried
        value may change shape from trip to trip, as OpenVINO re-infers it."""
        want = tensor_type(param.get_element_type(), param.get_partial_shape(), pwhere)
        if src.type == want:
            return src
        return self.graph.function(lambda v: (v,), [src], [want], f"{rule}:declared",
                                   f"{param.get_friendly_name()}:declared").get_output(0)

    # -- 1. the current iteration -------------------------------------------------------------
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

    # -- 1. trip limits of a TensorIterator --------------------------------------------------
    def tensor_iterator_count(self, node, windows, where):
        """`openvino/tensor-iterator`: n = the number of chunks, which every sliced input must
        agree on; without sliced inputs, the count OpenVINO inferred."""
        windows = list(windows)
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
        return self.graph.function(count, [w for w, _, _ in windows],
                                   [TensorType(np.int64, ())], "openvino/tensor-iterator:count",
                                   f"{node.get_friendly_name()}:trips").get_output(0)

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
            self.graph.env[_key(node.output(k))] = c.get_output(0)


def role_kind(role) -> str:
    """"Merged", "Invariant" or "Slice" for a port-map input description."""
    return type(role).__name__.replace("InputDescription", "") if role != "current_iteration" \
        else role


def param_where(where, p) -> str:
    return f"{where} body Parameter {p.get_friendly_name()!r}"


def parameter_roles(node, params, cur_idx, where, rule):
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
            raise ModelError(param_where(where, p), rule,
                             "is neither port-mapped nor the current_iteration input",
                             "map it in the port map")
    return roles


def check_loop_limits(outer, where):
    """`openvino/loop5`: trip count int32/int64, execution condition bool; () or (1,)."""
    trip, cond0 = outer[0], outer[1]
    if trip.dtype not in INTS or trip.shape not in SCALAR_SHAPES + (None,):
        raise ModelError(where, "openvino/loop5", f"trip count is {trip.type!r}",
                         "give a scalar or 1-element int32/int64 trip count")
    if cond0.dtype != BOOL or cond0.shape not in SCALAR_SHAPES + (None,):
        raise ModelError(where, "openvino/loop5", f"execution condition is {cond0.type!r}",
                         "give a scalar or 1-element boolean execution condition")
