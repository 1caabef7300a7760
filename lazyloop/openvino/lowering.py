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

The model-level rules and ordinary ops are here (`Lowerer`, which holds the network, the
readings and every value lowered so far); Loop-5 and TensorIterator-1 are lowered by its
`loops` (`loop.LoopLowerer`, their sliced and concatenated ports by `ports.Ports`), If-8 by its
`ifs` (`conditional.IfLowerer`): collaborators that lower through it.
"""
from __future__ import annotations

from typing import Dict

import numpy as np

from ..core.ambiguity import resolve
from ..core.errors import ModelError, UnsupportedError
from ..core.lowered import InputBinding, Lowered, OutputBinding
from ..core.network import Network
from ..core.types import TensorType
from .conditional import IfLowerer
from .kernels import kernel_for
from .loop import LoopLowerer
from .lowered import as_core_value
from .types import (compatible, describe, numpy_dtype, other_rank, output_type, relaxed,
                    tensor_type)
from .values import _key, _scalar_value


class Lowerer:
    """Lowers one model: `env` maps each OpenVINO output to the core tensor that holds it;
    loops and If nodes are lowered by its collaborators `loops` and `ifs`."""

    def __init__(self, readings=None):
        self.net = Network(profile="openvino")
        self.given = dict(readings or {})  # as the caller gave them
        self.readings = resolve(readings)
        self.env: Dict[tuple, object] = {}
        self.unsure: set = set()  # outputs whose shape OpenVINO may have inferred otherwise
        self.loops = LoopLowerer(self)
        self.ifs = IfLowerer(self)

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
            aliases = tuple(sorted(n for n in p.output(0).get_names() if n != friendly))
            inputs.append(InputBinding(friendly, core, t.type, aliases))
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
        return Lowered(self.net, tuple(inputs), tuple(outputs), self.given, "openvino",
                       "openvino/model", as_core_value, model)

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
                self.loops.lower(node)
            elif kind == "TensorIterator":
                self.loops.lower(node, tensor_iterator=True)
            elif kind == "If":
                self.ifs.lower(node)
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
        # view differs (A22: zero trips against shape inference), or an input was inferred from
        # such a view (a ShapeOf of it, a Range of that, ...), keep only dtypes, and ranks
        # where both views agree on them.
        unsure = [not compatible(t.type, node.get_input_partial_shape(i))
                  or _key(v) in self.unsure
                  for i, (t, v) in enumerate(zip(inputs, node.input_values()))]
        if any(unsure):
            any_rank = any(isinstance(t.type, TensorType) and (
                t.type.shape is None or other_rank(t.type, node.get_input_partial_shape(i)))
                for i, t in enumerate(inputs))
            types = [relaxed(t, any_rank) for t in types]
            self.unsure.update(_key(node.output(k)) for k in range(node.get_output_size()))
        layer = self.function(kernel_for(node, self.readings["A30"], trusted=not any(unsure)),
                              inputs, types, node.get_type_name(), node.get_friendly_name())
        for k in range(node.get_output_size()):
            self.env[_key(node.output(k))] = layer.get_output(k)


def lower_model(model, readings=None) -> Lowered:
    return Lowerer(readings).lower_model(model)


__all__ = ["Lowerer", "lower_model"]
