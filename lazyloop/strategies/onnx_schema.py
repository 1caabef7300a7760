"""Loop programs whose bodies hold ONNX ops drawn from their schemas (`onnx_ops`).

A recipe (`OnnxSchemaRecipe`) is plain data: the construct around the body and the body's
calls (`BodyCall`: an `OpCall`, where each of its data inputs comes from, where each of its
outputs goes). Constructs:

- `loop`: one Loop of `trips` trips (M a constant or an input; cond omitted or true);
- `scan`: one Scan (opset 9+ semantics) of length `trips`;
- `loop-if`, `scan-if`: the calls inside the then branch of an If in the Loop's or the
  Scan's body, taken on every other trip (the else branch gives zeros or keeps the value);
- `loop-loop`: the calls inside a Loop of `inner` trips inside a Loop of `trips` trips.

A data input comes from `step` (a loop-carried value, or a Scan state, that moves on by a
small step each trip, staying in the input's domain: `onnx_ops.step_of`), `scan` (an element
of a Scan input holding the same values), `fixed` (an outer-scope value, the same every
trip) or `prev:J:K` (output K of call J, this trip). An output goes to `scan` (stacked: a
scan output; only outputs whose shape does not depend on the values), `carried` (a carried
value or state the body overwrites: its last value, and its initial value after zero trips),
`both`, or `none` (read by a later call only).
"""
from __future__ import annotations

from typing import Tuple

import attrs
import numpy as np

from .onnx_ops import (OpCall, advance, constant_node, make_model, port_values,
                       run_reference, step_of, value_info)
from .recipes import DialectProgram

CONSTRUCTS = ("loop", "scan", "loop-if", "scan-if", "loop-loop")
KIND_OF = {"loop": "onnx-schema-loop", "loop-if": "onnx-schema-loop",
           "loop-loop": "onnx-schema-loop", "scan": "onnx-schema-scan",
           "scan-if": "onnx-schema-scan"}


@attrs.frozen
class BodyCall:
    """One call of the body: `sources` per data input (in input order), `sinks` per output."""
    call: OpCall
    sources: Tuple[str, ...]
    sinks: Tuple[str, ...]


@attrs.frozen
class OnnxSchemaRecipe:
    """A loop construct around body calls drawn from the op schemas (module docstring)."""
    construct: str = "loop"
    calls: Tuple[BodyCall, ...] = ()
    trips: int = 2
    inner: int = 1
    m_source: str = "const"
    cond: str = "omit"
    seed: int = 0
    format = "onnx"

    @property
    def kind(self) -> str:
        return KIND_OF[self.construct]

    @property
    def opset(self) -> int:
        return self.calls[0].call.opset

    def rules(self):
        rules = {"onnx/node"}
        rules |= {"onnx/scan9"} if self.construct.startswith("scan") else {"onnx/loop"}
        if self.construct.endswith("-if"):
            rules.add("onnx/if")
        return rules

    def features(self):
        f = {f"op-{c.call.op}" for c in self.calls} | {f"construct-{self.construct}"}
        f |= {f"dtype-{p.dtype}" for c in self.calls for p in c.call.inputs if p.dtype}
        if self.trips == 0:
            f.add("zero-trips")
        if any(s.startswith("prev") for c in self.calls for s in c.sources):
            f.add("chained-ops")
        if any(not c.call.static(k) for c in self.calls for k in range(len(c.sinks))):
            f.add("value-dependent-shape")
        return f

    def op_types(self):
        """The op types this recipe draws from the schemas (not the helpers around them)."""
        return sorted({c.call.op for c in self.calls})

    def program(self) -> DialectProgram:
        return DialectProgram(self)

    def build(self):
        return _Builder(self).model()

    @property
    def trips_run(self) -> int:
        """How many times the body's calls run (the inner Loop's trips times the outer's)."""
        return self.trips * (self.inner if self.construct == "loop-loop" else 1)

    def call_values(self, trips=None):
        """(trip, j, arguments, results) of every call on every trip the program runs (or on
        `trips` trips), in order: the values it reads -- a moving value as it stands that
        trip, a fixed one as fed, an earlier call's output -- and its outputs by its reference
        kernel (None where the kernel fails on them: `onnx_ops.run_reference`; then
        nothing more is computed)."""
        firsts = {(j, k): port_values(p, k, self.seed) for j, bc in enumerate(self.calls)
                  for k, p in bc.call.data}
        moving = dict(firsts)
        for t in range(self.trips_run if trips is None else trips):
            outputs = {}
            for j, bc in enumerate(self.calls):
                sources = dict(zip([k for k, _ in bc.call.data], bc.sources))
                args = [_argument(p, sources.get(k), firsts[(j, k)] if p.role == "data" else
                                  None, moving.get((j, k)), outputs)
                        for k, p in enumerate(bc.call.inputs)]
                results = run_reference(bc.call, args)
                yield t, j, args, results
                if results is None:
                    return
                outputs.update({(j, k): r for k, r in enumerate(results)})
            moving = {(j, k): advance(v, step_of(v.dtype.name,
                                                 self.calls[j].call.inputs[k].domain))
                      for (j, k), v in moving.items()}

    def alone(self, j: int, trip: int = 0):
        """(model, feeds): call j alone, outside any loop (`OpCall.alone`), fed the values it
        reads on `trip` of this program."""
        for t, jj, args, _ in self.call_values(trips=trip + 1):
            if (t, jj) == (trip, j):
                call = self.calls[j].call
                return call.alone({f"x{k}": args[k] for k, _ in call.data})
        raise ValueError(f"call {j} does not run on trip {trip}")


# ------------------------------------------------------------------------------------------
# Building the model
# ------------------------------------------------------------------------------------------

def _argument(port, source, first, moving, outputs):
    """The value a call's input reads on one trip (see `OnnxSchemaRecipe.call_values`)."""
    if port.role == "const":
        return np.array(port.value, port.dtype)
    if port.role == "none":
        return None
    if source == "fixed":
        return first
    if source.startswith("prev"):
        _, j, k = source.split(":")
        return outputs[(int(j), int(k))]
    return moving


def _zeros(dtype, shape):
    return np.zeros(tuple(0 if d is None else d for d in shape), dtype)


class _Builder:
    """Writes one recipe as an ONNX model: main graph, loop bodies, feeds."""

    def __init__(self, recipe: OnnxSchemaRecipe):
        self.r = recipe
        self.feeds = {}
        self.inputs = []           # main graph inputs (value infos)
        self.steps = []            # (key, port, first value) of the values moving each trip
        self.scans_in = []         # (key, port, first element) of the Scan inputs

    # -- the values the calls read -----------------------------------------------------------
    def _source_names(self, prefix, call_prefix):
        """{(j, k): name the call reads} for every data input, declaring what it needs."""
        r, names = self.r, {}
        for j, bc in enumerate(r.calls):
            for (k, port), src in zip(bc.call.data, bc.sources):
                first = port_values(port, k, r.seed)
                key = f"{j}_{k}"
                if src == "fixed":
                    names[(j, k)] = f"w{key}"
                    self._input(f"w{key}", first)
                elif src == "scan":
                    names[(j, k)] = f"{prefix}e{key}"
                    self.scans_in.append((key, port, first))
                elif src == "step":
                    names[(j, k)] = f"{prefix}v{key}_in"
                    self.steps.append((key, port, first))
                else:
                    _, jj, kk = src.split(":")
                    names[(j, k)] = f"{call_prefix}y{jj}_{kk}"
        return names

    def _input(self, name, value):
        self.inputs.append(value_info(name, value.dtype.name, value.shape))
        self.feeds[name] = value

    def _calls(self, names, prefix):
        """The nodes of the calls (constants first) and [(j, k, output name)] of outputs."""
        nodes, outs = [], []
        for j, bc in enumerate(self.r.calls):
            consts, ins = bc.call.const_nodes(f"{prefix}k{j}_")
            ins = [names.get((j, k), n) for k, n in enumerate(ins)]
            out = [f"{prefix}y{j}_{k}" for k in range(len(bc.call.outputs))]
            nodes += consts + [bc.call.node(ins, out)]
            outs += [(j, k, o) for k, o in enumerate(out)]
        return nodes, outs

    def _sink_list(self):
        """[(j, k, dtype, shape, how)] with how "scan" or "carried", in output order."""
        out = []
        for j, bc in enumerate(self.r.calls):
            for k, sink in enumerate(bc.sinks):
                dtype, shape = bc.call.outputs[k]
                if sink in ("carried", "both"):
                    out.append((j, k, dtype, shape, "carried"))
                if sink in ("scan", "both"):
                    out.append((j, k, dtype, shape, "scan"))
        return out

    @staticmethod
    def _update(name, port, nxt):
        """The nodes moving a step value on by one trip (`onnx_ops.step_of`)."""
        step = step_of(port.dtype, port.domain)
        if step[0] != "Add":
            return [_node(step[0], [name], [nxt])]
        return [constant_node(nxt + "_step", np.array(step[1], port.dtype)),
                _node("Add", [name, nxt + "_step"], [nxt])]

    # -- one body ------------------------------------------------------------------------------
    def body(self, prefix: str):
        """(nodes, inputs, carried outputs, scan outputs) of the innermost body, without a
        Loop's iteration number and condition. In an If construct the calls sit in the then
        branch, their names prefixed once more."""
        in_if = self.r.construct.endswith("-if")
        call_prefix = prefix + "t_" if in_if else prefix
        names = self._source_names(prefix, call_prefix)
        call_nodes, outs = self._calls(names, call_prefix)
        nodes, b_in, b_carried, b_scan, keep = [], [], [], [], {}
        for key, port, _ in self.steps:
            name = f"{prefix}v{key}_in"
            b_in.append(value_info(name, port.dtype, port.shape))
            nodes += self._update(name, port, f"{prefix}v{key}_next")
            b_carried.append(value_info(f"{prefix}v{key}_next", port.dtype, port.shape))
        for j, k, dtype, shape, how in self._sink_list():
            out = f"{prefix}y{j}_{k}"
            if how == "carried":
                keep[out] = f"{prefix}o{j}_{k}_in"
                b_in.append(value_info(keep[out], dtype, shape))
                b_carried.append(value_info(out, dtype, shape))
            else:
                b_scan.append(value_info(out, dtype, shape))
        if in_if:
            nodes += self._in_if(prefix, call_nodes, outs, keep, b_in, b_carried)
            return nodes, b_in, b_carried, b_scan
        return call_nodes + nodes, b_in, b_carried, b_scan

    def _in_if(self, prefix, call_nodes, outs, keep, b_in, b_carried):
        """The If holding the calls in its then branch, on a bool that flips every trip
        (a carried value or state of its own, first of all); the else branch keeps each
        carried output and gives zeros for the others."""
        from onnx import helper
        flip = f"{prefix}flip_in"
        b_in.insert(0, value_info(flip, "bool", ()))
        b_carried.insert(0, value_info(f"{prefix}flip_next", "bool", ()))
        self.steps.insert(0, ("flip", None, np.array(True)))
        then_nodes, then_out, else_nodes, else_out, if_out = list(call_nodes), [], [], [], []
        for j, k, inner in outs:
            if self.r.calls[j].sinks[k] == "none":
                continue
            dtype, shape = self.r.calls[j].call.outputs[k]
            out = f"{prefix}y{j}_{k}"
            then_nodes.append(_node("Identity", [inner], [out + "_then"]))
            then_out.append(value_info(out + "_then", dtype, shape))
            if out in keep:
                else_nodes.append(_node("Identity", [keep[out]], [out + "_else"]))
            else:
                else_nodes.append(constant_node(out + "_else", _zeros(dtype, shape)))
            else_out.append(value_info(out + "_else", dtype, shape))
            if_out.append(out)
        then = helper.make_graph(then_nodes, f"{prefix}then", [], then_out)
        other = helper.make_graph(else_nodes, f"{prefix}else", [], else_out)
        return [_node("Not", [flip], [f"{prefix}flip_next"]),
                helper.make_node("If", [flip], if_out, then_branch=then, else_branch=other)]

    # -- the constructs --------------------------------------------------------------------------
    def model(self):
        r = self.r
        if r.construct.startswith("scan"):
            graph = self._scan()
        else:
            graph = self._loop()
        return make_model(graph, r.opset), self.feeds

    def _count(self, nodes, name, value):
        if self.r.m_source == "input":
            self._input(name, np.array(value, np.int64))
        else:
            nodes.append(constant_node(name, np.array(value, np.int64)))

    def _loop(self):
        from onnx import helper
        r = self.r
        nested = r.construct == "loop-loop"
        nodes, b_in, b_carried, b_scan = self.body("i_" if nested else "b_")
        if nested:  # the body above is the inner loop's; the outer body runs it
            inner = self._loop_node("i_", nodes, b_in, b_carried, b_scan, r.inner, "b_")
            nodes, b_in, b_carried, b_scan = inner
        main = []
        self._count(main, "M", r.trips)
        if r.cond == "true":
            main.append(constant_node("cond", np.array(True)))
        init = self._initial_values()
        body = helper.make_graph(
            [_node("Identity", ["b_cond_in"], ["b_cond_out"])] + nodes, "schema_loop_body",
            [value_info("b_iter", "int64", ()), value_info("b_cond_in", "bool", ())] + b_in,
            [value_info("b_cond_out", "bool", ())] + b_carried + b_scan)
        finals = [f"{v.name}_final" for v in b_carried]
        stacked = [f"{v.name}_stacked" for v in b_scan]
        main.append(helper.make_node("Loop", ["M", "cond" if r.cond == "true" else ""] + init,
                                     finals + stacked, body=body))
        return helper.make_graph(main, "onnx_schema_program", self.inputs,
                                 self._outputs(finals, b_carried, stacked, b_scan))

    def _loop_node(self, prefix, nodes, b_in, b_carried, b_scan, trips, outer):
        """The inner Loop of `trips` trips as a node of the outer body (prefix `outer`):
        its carried values enter from the outer body's, and leave as the outer body's."""
        from onnx import helper
        count = f"{outer}inner_M"
        cond = [_node("Identity", [f"{prefix}cond_in"], [f"{prefix}cond_out"])]
        body = helper.make_graph(
            cond + nodes, "schema_inner_body",
            [value_info(f"{prefix}iter", "int64", ()), value_info(f"{prefix}cond_in", "bool", ())]
            + b_in, [value_info(f"{prefix}cond_out", "bool", ())] + b_carried + b_scan)
        outer_in = [value_info(v.name.replace(prefix, outer, 1), *_type_of(v)) for v in b_in]
        outer_carried = [value_info(v.name.replace(prefix, outer, 1) + "_out", *_type_of(v))
                         for v in b_carried]
        outer_scan = [value_info(v.name.replace(prefix, outer, 1) + "_stack", _type_of(v)[0],
                                 (trips,) + _type_of(v)[1]) for v in b_scan]
        loop = helper.make_node("Loop", [count, ""] + [v.name for v in outer_in],
                                [v.name for v in outer_carried + outer_scan], body=body)
        outer_nodes = [constant_node(count, np.array(trips, np.int64)), loop]
        return outer_nodes, outer_in, outer_carried, outer_scan

    def _initial_values(self):
        """Main-graph inputs for the carried values, in body order: step values, then the
        carried sinks (zeros: what they hold after zero trips)."""
        names = []
        for key, port, first in self.steps:
            self._input(f"v{key}", first)
            names.append(f"v{key}")
        for j, k, dtype, shape, how in self._sink_list():
            if how == "carried":
                self._input(f"o{j}_{k}_init", _zeros(dtype, shape))
                names.append(f"o{j}_{k}_init")
        return names

    def _outputs(self, finals, carried, stacked, scans):
        outs = [value_info(n, *_type_of(v)) for n, v in zip(finals, carried)]
        outs += [value_info(n, _type_of(v)[0], (None,) + _type_of(v)[1])
                 for n, v in zip(stacked, scans)]
        return outs

    def _scan(self):
        from onnx import helper
        r = self.r
        nodes, b_in, b_carried, b_scan = self.body("b_")
        init = self._initial_values()
        if not self.scans_in:  # a Scan needs a scan input: one nobody reads
            self.scans_in.append(("unused", None, np.zeros((), np.float32)))
        elems = []
        for key, port, first in self.scans_in:
            values, x = [], first
            for _ in range(r.trips):
                values.append(x)
                x = advance(x, step_of(port.dtype, port.domain)) if port else x
            stacked = np.stack(values) if values else np.zeros((0,) + first.shape, first.dtype)
            self._input(f"xs{key}", stacked)
            elems.append(value_info(f"b_e{key}", first.dtype.name, first.shape))
        body = helper.make_graph(nodes, "schema_scan_body", b_in + elems, b_carried + b_scan)
        finals = [f"{v.name}_final" for v in b_carried]
        stacked = [f"{v.name}_stacked" for v in b_scan]
        main = [helper.make_node("Scan", init + [f"xs{key}" for key, _, _ in self.scans_in],
                                 finals + stacked, body=body, num_scan_inputs=len(elems))]
        return helper.make_graph(main, "onnx_schema_program", self.inputs,
                                 self._outputs(finals, b_carried, stacked, b_scan))


def _node(op, inputs, outputs, **kw):
    from onnx import helper
    return helper.make_node(op, inputs, outputs, **kw)


def _type_of(vi):
    """(dtype name, shape) of a tensor value info."""
    from onnx import helper
    t = vi.type.tensor_type
    dims = tuple(d.dim_value if d.HasField("dim_value") else None for d in t.shape.dim)
    return helper.tensor_dtype_to_np_dtype(t.elem_type).name, dims
