"""Recipes for OpenVINO Loop-5 programs using every kind of port: trip count, execution
condition, current iteration, merged, invariant and sliced inputs, and last-value and
concatenated outputs (`openvino/loop5`)."""
from __future__ import annotations

from typing import Optional, Tuple

import attrs
import numpy as np
from hypothesis import strategies as st

from .recipes import DialectProgram, axes, values


@attrs.frozen
class OvLoopRecipe:
    """One OpenVINO Loop-5 node with every kind of port:

    - trip count (`trip`, -1 = no limit; a Constant or a Parameter, int64/int32, shape
      () or [1]) and execution condition (`exec_cond`, Constant or Parameter);
    - the body's execution_condition Result: constant true, or current_iteration+1 < `stop`;
    - the current_iteration Parameter (`current`: None, or (dtype, shape));
    - merged inputs with back edges (`merged`: (shape, update) each);
    - an invariant input `w` (`invariant`), read by merged updates "add-outer";
    - sliced inputs (`sliced`: (axis, part_size, reverse) each, over `chunks` chunks);
    - outputs (`outputs`: (kind, source, axis)): kind "last" (iteration value -1) or "concat"
      (concatenated slices on `axis`), source "merged:k" (the back-edged Result), "sliced:k"
      (the chunk, no back edge), "iter" (current iteration as a [1] float, no back edge).
    """

    trip: int = 2
    trip_source: str = "const"
    trip_dtype: str = "int64"
    trip_shape: Tuple[int, ...] = ()
    exec_cond: bool = True
    cond_source: str = "const"
    body_cond: str = "true"
    stop: int = 2
    current: Optional[Tuple[str, Tuple[int, ...]]] = None
    merged: Tuple[Tuple[Tuple[int, ...], str], ...] = ()
    invariant: bool = False
    sliced: Tuple[Tuple[int, int, bool], ...] = ()
    chunks: int = 2
    outputs: Tuple[Tuple[str, str, int], ...] = ()
    seed: int = 0
    format = "openvino"
    kind = "openvino-loop"

    def rules(self):
        return {"openvino/loop5"}

    def trips(self) -> int:
        n = 0
        go = self.exec_cond
        while go and (self.trip < 0 or n < self.trip):
            n += 1
            if self.body_cond == "iter":
                go = n < self.stop
        return n

    def features(self):
        f = {f"trip-{self.trip_source}", f"body-cond-{self.body_cond}"}
        if self.trips() == 0:
            f.add("zero-trips")
        if self.trip < 0:
            f.add("no-trip-limit")
        if self.current is not None:
            f.add("current-iteration")
        if self.sliced:
            f.add("sliced-input")
        if any(r for _, _, r in self.sliced):
            f.add("reverse-slice")
        if any(p > 1 for _, p, _ in self.sliced):
            f.add("part-size")
        if self.invariant:
            f.add("invariant-input")
        if self.merged:
            f.add("back-edge")
        for kind, src, axis in self.outputs:
            f.add(f"output-{kind}-{src.split(':')[0]}")
            if axis < 0:
                f.add("negative-axis")
        return f

    def program(self) -> DialectProgram:
        return DialectProgram(self)

    def build(self):
        import openvino as ov
        import openvino.opset13 as ops
        params, feeds = [], {}

        def source(name, value, kind):
            if kind == "param":
                p = ops.parameter(list(np.shape(value)), np.asarray(value).dtype, name=name)
                p.output(0).get_tensor().set_names({name})
                params.append(p)
                feeds[name] = np.asarray(value)
                return p.output(0)
            return ops.constant(np.asarray(value)).output(0)

        trip = source("trip", np.full(self.trip_shape, self.trip, self.trip_dtype),
                      self.trip_source)
        cond = source("cond", np.full(self.trip_shape, self.exec_cond, np.bool_),
                      self.cond_source)
        w = None
        if self.invariant or any(u == "add-outer" for _, u in self.merged):
            w = source("w", values((), self.seed + 7), "param")
        body_params, results = [], []
        cur = None
        current = self.current
        if self.body_cond == "iter" and current is None:
            current = ("int64", ())
        if any(src == "iter" for _, src, _ in self.outputs) and current is None:
            current = ("int64", ())
        if current is not None:
            cur = ops.parameter(list(current[1]), np.dtype(current[0]), name="current")
            body_params.append(cur)
        cond_out = ops.constant(np.full((), True)).output(0)
        if self.body_cond == "iter":
            nxt = ops.add(cur, ops.constant(np.ones(current[1], current[0])))
            cond_out = ops.less(nxt, ops.constant(np.full(current[1], self.stop,
                                                          current[0]))).output(0)
        results.append(ops.result(cond_out))
        w_in = None
        if w is not None:
            w_in = ops.parameter([], np.float32, name="w_in")
            body_params.append(w_in)
        merged_params, merged_results = [], []
        for k, (shape, update) in enumerate(self.merged):
            p = ops.parameter(list(shape), np.float32, name=f"m{k}")
            body_params.append(p)
            if update == "tanh":
                nxt = ops.tanh(p)
            elif update == "half":
                nxt = ops.multiply(p, ops.constant(np.float32(0.5)))
            elif update == "add-iter" and cur is not None:
                nxt = ops.tanh(ops.add(p, ops.convert(cur, np.float32)))
            else:
                nxt = ops.tanh(ops.add(p, w_in)) if w_in is not None else ops.tanh(p)
            r = ops.result(nxt)
            results.append(r)
            merged_params.append(p)
            merged_results.append(r)
        sliced_params, sliced_sources = [], []
        for k, (axis, part, rev) in enumerate(self.sliced):
            full = [2, 2]
            a = axis % 2
            full[a] = part * self.chunks
            x = source(f"x{k}", values(tuple(full), self.seed + k), "param")
            chunk = list(full)
            chunk[a] = part
            p = ops.parameter(chunk, np.float32, name=f"chunk{k}")
            body_params.append(p)
            sliced_params.append(p)
            sliced_sources.append((x, axis, part, rev))
        out_results = []
        for kind, src, axis in self.outputs:
            if src.startswith("merged") and self.merged:
                k = int(src.split(":")[1]) % len(self.merged)
                r = merged_results[k]
            elif src.startswith("sliced") and self.sliced:
                k = int(src.split(":")[1]) % len(self.sliced)
                r = ops.result(ops.tanh(sliced_params[k]))
                results.append(r)
            else:
                it = ops.reshape(ops.convert(cur, np.float32),
                                 ops.constant(np.array([1], np.int64)), False)
                r = ops.result(it)
                results.append(r)
            out_results.append(r)
        body = ov.Model(results, body_params, "loop_body")
        loop = ops.loop(trip, cond)
        loop.set_function(body)
        loop.set_special_body_ports([body_params.index(cur) if cur is not None else -1, 0])
        if w_in is not None:
            loop.set_invariant_input(w_in, w)
        for k, (shape, _) in enumerate(self.merged):
            init = source(f"m{k}_init", values(shape, self.seed + 20 + k), "param")
            loop.set_merged_input(merged_params[k], init, merged_results[k].output(0))
        for p, (x, axis, part, rev) in zip(sliced_params, sliced_sources):
            if rev:
                loop.set_sliced_input(p, x, -1, -1, part, 0, axis)
            else:
                loop.set_sliced_input(p, x, 0, 1, part, -1, axis)
        outputs = []
        for j, ((kind, _, axis), r) in enumerate(zip(self.outputs, out_results)):
            if kind == "last":
                out = loop.get_iter_value(r.output(0), -1)
            else:
                out = loop.get_concatenated_slices(r.output(0), 0, 1, 1, -1, axis)
            res = ops.result(out)
            outputs.append(res)
        model = ov.Model(outputs, params, "openvino_loop_program")
        for j, out in enumerate(model.outputs):
            out.get_tensor().set_names({f"out{j}"})
        return model, feeds


@st.composite
def openvino_loop_recipes(draw):
    trip = draw(st.sampled_from((2, 1, 0, 3, -1)))
    body_cond = draw(st.sampled_from(("true", "iter")))
    if trip < 0:
        body_cond = "iter"  # something must end the loop
    stop = draw(st.integers(0, 3))
    merged = tuple(draw(st.lists(st.tuples(st.sampled_from(((2,), (1, 2), ())),
                                           st.sampled_from(("tanh", "half", "add-iter",
                                                            "add-outer"))), max_size=2)))
    sliced = tuple(draw(st.lists(st.tuples(st.sampled_from((0, 1, -1, -2)),
                                           st.sampled_from((1, 2)), st.booleans()),
                                 max_size=2)))
    current = None
    if draw(st.booleans()):
        current = (draw(st.sampled_from(("int64", "int32"))), draw(st.sampled_from(((), (1,)))))
    exec_cond = draw(st.sampled_from((True, False)))
    n_max = 0
    go = exec_cond
    while go and (trip < 0 or n_max < trip):
        n_max += 1
        go = body_cond == "true" or n_max < stop
        if n_max > 8:
            break
    outputs = []
    sources = ["iter"] + [f"merged:{k}" for k in range(len(merged))] + \
        [f"sliced:{k}" for k in range(len(sliced))]
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(("concat", "last")))
        src = draw(st.sampled_from(sources))
        rank = 1
        if src.startswith("merged"):
            rank = max(len(merged[int(src.split(":")[1])][0]), 1)
        elif src.startswith("sliced"):
            rank = 2
        axis = draw(axes(-rank, rank - 1)) if kind == "concat" else 0
        if kind == "concat" and src.startswith("merged") and \
                not merged[int(src.split(":")[1])][0]:
            kind = "last"  # a 0-D value cannot be concatenated along an existing axis
        outputs.append((kind, src, axis))
    shape_kind = draw(st.sampled_from(((), (1,))))
    return OvLoopRecipe(
        trip=trip, trip_source=draw(st.sampled_from(("const", "param"))),
        trip_dtype=draw(st.sampled_from(("int64", "int32"))), trip_shape=shape_kind,
        exec_cond=exec_cond, cond_source=draw(st.sampled_from(("const", "param"))),
        body_cond=body_cond, stop=stop, current=current, merged=merged,
        invariant=draw(st.booleans()), sliced=sliced, chunks=max(n_max, 1),
        outputs=tuple(outputs), seed=draw(st.integers(0, 3)))


def openvino_loops():
    """OpenVINO Loop-5 programs with every port kind (`openvino/loop5`)."""
    return openvino_loop_recipes().map(DialectProgram)
