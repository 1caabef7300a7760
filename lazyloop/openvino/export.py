"""A core network as an equivalent OpenVINO model (Loop-5 for loops).

    ov_model = lazyloop.openvino.export.export(net, iterator="slice")

How each core construct is written (rule IDs in parentheses; `openvino/loop5` throughout):

* a loop is a `Loop` (opset 5) node. COUNT is the trip count input (-1 when the loop has no
  COUNT: no limit), WHILE the execution condition: X0 computed before the loop from the
  recurrences' initial values, and the body's condition result X_{i+1} from their next values
  (`trip/while`, `trip/both`); without WHILE both are the constant true.
* a body cannot read values of the enclosing graph: every value from outside a loop enters
  it through an invariant input (`stream/invariant`), at every level of nesting.
* a recurrence is a merged input (a back edge from the Result of its next value,
  `recurrence/def`); LAST_VALUE of it is the iteration value of that Result on the last trip,
  i.e. X_n; after zero trips OpenVINO returns the initial value (A5 "execute").
* an iterator is a sliced input of part size 1 (stride -1 from the end when reversed) on its
  axis, squeezed back to the element rank (``iterator="slice"``), or a Gather of the
  current-iteration port (``iterator="gather"``): `iterator/forward`, `iterator/reverse`.
* CONCATENATE/REVERSE: the element is unsqueezed at the output axis and concatenated along it
  (Loop-5 concatenates along an existing axis), reversed with a Slice of step -1 for REVERSE,
  then post-padded with Pad to the length (`output/concat`, `output/reverse`, A1 default).
* an if-conditional output is a Select of the two branch values (``conditional="select"``,
  the default) or an If node whose branches return the chosen value (``conditional="if"``).

Loops, scopes and outputs are built here; each single layer's node comes from
`export_layers.LayerTranslation`.
"""
from __future__ import annotations

from typing import Dict, Optional

import numpy as np

from ..core.enums import LayerType, LoopOutput
from ..core.types import TensorType
from ..core.export import NotExportable, TargetRefused
from ..core.export import Structure
from .export_layers import INT64_MIN, LayerTranslation, _ops


def sliced_shape(inferred, itl) -> list:
    """The shape of a sliced input's body Parameter: OpenVINO's inferred shape of the iterated
    value with the iterated axis cut to one chunk (`openvino/loop5`). OpenVINO's shape
    inference may give that value a rank the network's tensor does not have (the output of a
    loop whose condition folds to false is inferred `[0]`, A22); then there is no axis to
    slice and the target refuses the network (`TargetRefused`, counted as unsupported)."""
    rank = len(itl.get_input(0).shape)
    if inferred.rank.is_static and inferred.rank.get_length() != rank:
        raise TargetRefused(f"iterator {itl.name!r}", "openvino/loop5",
                            f"OpenVINO infers its input as {inferred} (rank "
                            f"{inferred.rank.get_length()}) where the network's tensor has "
                            f"rank {rank}, so axis {itl.axis} cannot be sliced (A22: the "
                            "shapes OpenVINO infers for a loop that runs zero trips)",
                            "a limitation of OpenVINO's shape inference, not of the network")
    shape = list(inferred) if inferred.rank.is_static else [-1] * rank
    shape[itl.axis] = 1
    return shape


def partial_shape(ty):
    import openvino as ov
    if not isinstance(ty, TensorType):
        raise NotExportable("tensor", "stream/shape", f"has the non-tensor type {ty!r}",
                            "export tensors only")
    return ov.PartialShape([-1 if d is None else int(d) for d in ty.shape])


class Body:
    """One OpenVINO graph under construction: the model itself, or a loop/branch body.
    Values from enclosing graphs are imported as Parameters (invariant inputs)."""

    def __init__(self, exporter: "Exporter", scope: Optional[str], parent: Optional["Body"]):
        self.x = exporter
        self.scope = scope
        self.parent = parent
        self.params = []
        self.local: Dict[int, object] = {}  # id(tensor) -> ov Output in this graph
        self.invariants = []  # (parameter, outer ov Output)

    def value(self, tensor):
        """`stream/invariant`: a tensor of this scope, or one imported from outside."""
        key = id(tensor)
        if key in self.local:
            return self.local[key]
        if self.parent is None:  # pragma: no cover -- the scope order guarantees it
            raise NotExportable(f"tensor {tensor.name!r}", "structure/nesting",
                                "is read before it is computed", "")
        outer = self.parent.value(tensor)
        param = _ops().parameter(outer.get_partial_shape(), outer.get_element_type(),
                                 name=self.x.fresh(f"inv_{tensor.name}"))
        self.params.append(param)
        self.invariants.append((param, outer))
        self.local[key] = param.output(0)
        return self.local[key]


class Exporter:
    """One export of a network: the walk over its scopes, its loops as Loop-5 nodes; the
    layers are translated by its collaborator `layers` (export_layers.LayerTranslation)."""

    def __init__(self, net, iterator: str = "slice", conditional: str = "select"):
        if iterator not in ("slice", "gather"):
            raise NotExportable("export", "openvino/loop5", f"unknown iterator mode {iterator!r}",
                                "use iterator='slice' or iterator='gather'")
        if conditional not in ("select", "if"):
            raise NotExportable("export", "openvino/loop5",
                                f"unknown conditional mode {conditional!r}",
                                "use conditional='select' or conditional='if'")
        self.net = net
        self.s = Structure(net)
        self.iterator_mode = iterator
        self.conditional_mode = conditional
        self.layers = LayerTranslation(conditional)
        self.counter = 0

    def fresh(self, base: str) -> str:
        self.counter += 1
        return f"{base}_{self.counter}"

    def export(self):
        import openvino as ov
        ops = _ops()
        root = Body(self, None, None)
        params = []
        for t in self.net._inputs:
            p = ops.parameter(partial_shape(t.type), np.dtype(t.dtype), name=t.name)
            p.output(0).get_tensor().set_names({t.name})
            params.append(p)
            root.local[id(t)] = p.output(0)
        self.emit_scope(root, None)
        results, seen = [], set()
        for t in self.net._outputs:
            out = root.value(t)
            key = (out.get_node().get_friendly_name(), out.get_index())
            if key in seen or t.producer is None:  # a second name for one value: a copy
                out = ops.convert(out, out.get_element_type()).output(0)
            seen.add(key)
            res = ops.result(out, name=self.fresh(f"result_{t.name}"))
            out.get_tensor().set_names({t.name})
            results.append(res)
        model = ov.Model(results, params, "lazyloop_export")
        for res, t in zip(model.outputs, self.net._outputs):
            res.get_tensor().set_names({t.name})
        return model

    def emit_scope(self, body: Body, scope) -> None:
        for kind, obj in self.s.items(scope):
            if kind == "layer":
                self.emit_layer(body, obj)
            else:
                self.emit_loop(body, obj)

    # -- layers -------------------------------------------------------------------------------
    def emit_layer(self, body: Body, layer, subst=None) -> None:
        def arg(t):
            if subst is not None and id(t) in subst:
                return subst[id(t)]
            return body.value(t)
        ins = [None if t is None else arg(t) for t in layer.inputs()]
        out = self.layers.translate(body, layer, ins)
        out = out.output(0) if hasattr(out, "output") else out
        if subst is not None:
            subst[id(layer._outputs[0])] = out
        else:
            body.local[id(layer._outputs[0])] = out

    # -- loops --------------------------------------------------------------------------------
    def while_value(self, body: Body, loop, x, values):
        subst = {id(rec.get_output(0)): values[id(rec)] for rec in loop.recurrences}
        if id(x) in subst:
            return subst[id(x)]
        for layer in self.s.while_cone(loop, x):
            self.emit_layer(body, layer, subst)
        return subst[id(x)] if id(x) in subst else body.value(x)

    def emit_loop(self, outer: Body, loop) -> None:
        """`openvino/loop5`: the loop as a Loop-5 node in the graph of its parent scope."""
        import openvino as ov
        ops = _ops()
        count = self.s.count(loop)
        trip = outer.value(count) if count is not None else ops.constant(np.int64(-1)).output(0)
        x = self.s.while_input(loop)
        if x is not None:
            inits = {id(rec): outer.value(rec.get_input(0)) for rec in loop.recurrences}
            start = self.while_value(outer, loop, x, inits)
        else:
            start = ops.constant(np.bool_(True)).output(0)
        body = Body(self, loop.name, outer)
        merged = []  # (parameter, init output, recurrence)
        for rec in loop.recurrences:
            init = outer.value(rec.get_input(0))
            p = ops.parameter(init.get_partial_shape(), init.get_element_type(),
                              name=self.fresh(rec.name))
            body.params.append(p)
            body.local[id(rec.get_output(0))] = p.output(0)
            merged.append((p, init, rec))
        current = None
        sliced = []  # (parameter, source output, iterator layer)
        for itl in loop.iterators:
            src = outer.value(itl.get_input(0))
            if self.iterator_mode == "gather":
                if current is None:
                    current = ops.parameter([], np.int64, name=self.fresh("current_iteration"))
                    body.params.append(current)
                data = body.value(itl.get_input(0))
                index = current.output(0)
                if itl.reverse:
                    dim = ops.gather(ops.shape_of(data), ops.constant(np.int64(itl.axis)),
                                     ops.constant(np.int64(0)))
                    index = ops.subtract(ops.subtract(dim, ops.constant(np.int64(1))), index)
                elem = ops.gather(data, index, ops.constant(np.int64(itl.axis)))
                body.local[id(itl.get_output(0))] = elem.output(0)
                continue
            shape = sliced_shape(src.get_partial_shape(), itl)
            p = ops.parameter(ov.PartialShape(shape), src.get_element_type(),
                              name=self.fresh(itl.name))
            body.params.append(p)
            elem = ops.squeeze(p, ops.constant(np.array([itl.axis], np.int64)))
            body.local[id(itl.get_output(0))] = elem.output(0)
            sliced.append((p, src, itl))
        self.emit_scope(body, loop.name)
        if x is not None:
            nexts = {id(rec): body.value(rec.get_input(1)) for rec in loop.recurrences}
            cond_out = self.while_value(body, loop, x, nexts)
        else:
            cond_out = ops.constant(np.bool_(True)).output(0)
        results = [ops.result(cond_out)]
        next_results = []
        for p, init, rec in merged:
            r = ops.result(body.value(rec.get_input(1)))
            results.append(r)
            next_results.append(r)
        out_results = {}
        for o in loop.outputs:
            src = body.value(o.get_input(0))
            if o.kind is LoopOutput.LAST_VALUE:
                prod = o.get_input(0).producer
                if prod is not None and prod.type is LayerType.RECURRENCE and prod.loop is loop:
                    continue  # read from the recurrence's back-edge Result
                r = ops.result(src)
            else:
                r = ops.result(ops.unsqueeze(src, ops.constant(np.array([o.axis], np.int64))))
            results.append(r)
            out_results[id(o)] = r
        # the body's parameters are final only now: invariants were imported while emitting
        node = ops.loop(trip, start)
        model = ov.Model(results, body.params, self.fresh(f"{loop.name}_body"))
        node.set_function(model)
        iter_index = body.params.index(current) if current is not None else -1
        node.set_special_body_ports([iter_index, 0])
        for p, init, rec in merged:
            node.set_merged_input(p, init, next_results[merged.index((p, init, rec))].output(0))
        for p, src, itl in sliced:
            if itl.reverse:
                node.set_sliced_input(p, src, -1, -1, 1, 0, itl.axis)
            else:
                node.set_sliced_input(p, src, 0, 1, 1, -1, itl.axis)
        for p, value in body.invariants:
            node.set_invariant_input(p, value)
        rec_result = {id(rec): next_results[k] for k, (_, _, rec) in enumerate(merged)}
        for o in loop.outputs:
            if o.kind is LoopOutput.LAST_VALUE:
                r = out_results.get(id(o)) or rec_result[id(o.get_input(0).producer)]
                value = node.get_iter_value(r.output(0), -1)
            else:
                value = node.get_concatenated_slices(out_results[id(o)].output(0), 0, 1, 1, -1,
                                                     o.axis)
                value = self.finish_output(outer, o, value)
            outer.local[id(o.get_output(0))] = value.output(0) if hasattr(value, "output") else value

    def finish_output(self, outer: Body, o, x):
        """REVERSE: reverse the trips on the output axis; then post-pad to the length."""
        ops = _ops()
        arr = lambda v: ops.constant(np.array(v, np.int64))  # noqa: E731
        axis = o.axis
        if o.kind is LoopOutput.REVERSE:
            x = ops.slice(x, arr([-1]), arr([INT64_MIN]), arr([-1]), arr([axis]))
        length = o.get_input(1) if o.num_inputs > 1 else None
        if length is None:
            return x
        # The pads are built from the runtime shape of x, not from OpenVINO's static shape of
        # it: after a loop that provably runs zero trips OpenVINO infers a concatenation of
        # rank 1, and a Pad sized for the true rank would be refused while building.
        y = ops.convert(ops.reshape(outer.value(length), arr([1]), False), np.int64)
        shape = ops.shape_of(x, "i64")
        n = ops.gather(shape, arr([axis]), ops.constant(np.int64(0)))
        amount = ops.subtract(y, n)
        rank_now = ops.squeeze(ops.shape_of(shape, "i64"), arr([0]))
        positions = ops.range(ops.constant(np.int64(0)), rank_now, ops.constant(np.int64(1)),
                              "i64")
        zero = ops.constant(np.int64(0))
        pads_end = ops.select(ops.equal(positions, ops.constant(np.int64(axis))), amount, zero)
        pads_begin = ops.multiply(pads_end, zero)
        return static(ops.pad(x, pads_begin, pads_end, "constant"), o.get_output(0).type)


def static(padded, ty):
    """`output/concat`: a padded output keeps the static shape the network gives it. OpenVINO
    infers unknown dimensions for a Pad whose pads are computed; a loop that stacks it would
    then declare an element of unknown dimensions, and after zero trips its empty
    concatenation would have extent 0 where the network's has the element's dimensions. A
    Reshape to the network's shape (a no-op at run time) keeps them -- where OpenVINO agrees
    on the rank (after a constant-false condition it infers rank 1: A22)."""
    shape = getattr(ty, "shape", None)
    inferred = padded.get_output_partial_shape(0)
    if shape is None or None in shape or inferred.is_static or inferred.rank.is_dynamic or \
            inferred.rank.get_length() != len(shape):
        return padded
    ops = _ops()
    return ops.reshape(padded, ops.constant(np.array(shape, np.int64)), False)


def export(net, iterator: str = "slice", conditional: str = "select"):
    """The openvino.Model equivalent to `net` (see the module docstring). `conditional`:
    "select" writes an if-conditional output as a Select of both branches (equal values:
    branches of generated programs do not fail), "if" as an If node.

    OpenVINO validates every node as it is built; when it refuses one of a valid network
    (its shape inference of a Loop that runs zero trips, for example) the export raises
    `TargetRefused` with OpenVINO's message."""
    exporter = Exporter(net, iterator=iterator, conditional=conditional)
    try:
        return exporter.export()
    except RuntimeError as exc:
        raise TargetRefused("OpenVINO model construction", "openvino/loop5",
                            f"OpenVINO refused a node: {str(exc).strip()[:600]}",
                            "a limitation of OpenVINO, not of the network") from None
