"""If-8 as a core if-conditional (`openvino/if`)."""
from __future__ import annotations

from ..core.errors import ModelError
from .types import describe
from .values import _key


class IfLowerer:
    """Lowers If nodes through `graph` (the model's `lowering.Lowerer`: its `net`, `env`,
    `value` and `lower_ops`)."""

    def __init__(self, graph):
        self.graph = graph

    # -- `openvino/if` --------------------------------------------------------------------------
    def lower(self, node):
        """If-8 -> a core if-conditional: each branch body's nodes become ordinary layers read
        through the conditional's inputs, and per element only the taken branch's are forced
        (inside a loop, per trip)."""
        where = describe(node)
        outer = [self.graph.value(v, where) for v in node.input_values()]
        conditional = self.graph.net.add_if_conditional()
        conditional.set_condition(outer[0])
        branches = []
        for index, body in ((0, node.get_then_body()), (1, node.get_else_body())):
            params = body.get_parameters()
            for d in node.get_input_descriptions(index):
                entry = conditional.add_input(outer[d.input_index]).get_output(0)
                self.graph.env[_key(params[d.body_parameter_index].output(0))] = entry
            self.graph.lower_ops(body.get_ordered_ops())
            results = body.get_results()
            branches.append({d.output_index: self.graph.value(results[d.body_value_index].input_value(0),
                                                       where)
                             for d in node.get_output_descriptions(index)})
        for k in range(node.get_output_size()):
            if k not in branches[0] or k not in branches[1]:
                raise ModelError(where, "openvino/if", f"output {k} is missing from a branch",
                                 "give both bodies a Result for every output")
            self.graph.env[_key(node.output(k))] = conditional.add_output(branches[0][k],
                                                                    branches[1][k]).get_output(0)
