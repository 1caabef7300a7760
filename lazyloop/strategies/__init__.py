"""Hypothesis strategies for random loop programs -- valid ones, and ones that break a rule.

A program is *data*: a tuple of builder calls (`Call`, `SetAttr`) that `replay` performs on any
object with TensorRT's network-definition API -- a `lazyloop.Network`, a `tensorrt`
INetworkDefinition, or a test's own interpreter -- with enums and dtypes looked up on an `api`
module (`lazyloop` or `tensorrt`). Generation draws simple choices (how many trips, which limit,
which values to combine) and writes the calls; shrinking those choices shrinks the program.

    from lazyloop.strategies import networks, invalid_networks

    @given(networks())
    def test_something(program):
        result = ll.run(program.net, program.feeds)
        program.rules          # the rule IDs the program exercises, e.g. "trip/while"
        program.source()       # the program as Python code for `tensorrt`

    @given(invalid_networks())
    def test_refused(case):
        build, rule = case     # build() -> (net, feeds); building or running raises `rule`

Valid programs keep to the TensorRT profile: float32 values in [-2, 2] bounded by tanh, clip
and max in recurrences; int32 counters; WHILE limits on a counter recurrence compared with a
constant bound, so every loop terminates; iterators long enough for every trip that runs.

Where things are: `programs` (programs as data, `replay`), `writer` (small strategies and the
call writer), `loop_parts` and `valid` (valid programs, `networks`), `invalid` (one family of
broken programs per rule), and the dialect recipes in `onnx_loop`, `onnx_scan`, `onnx_wide`,
`onnx_sequences`, `onnx_carried`, `onnx_corners`, `onnx_edges`, `openvino_loop` and
`recipes`, gathered by `dialects`; bodies of any ONNX op in `onnx_schema` and
`onnx_schema_draw`, whose calls `onnx_ops` records and `onnx_op_search` finds (with the hand
ranges of `op_ranges`). Every name is re-exported here.
"""
from __future__ import annotations

# the dialect-level programs (ONNX Loop in every mode, Scan 8 and 9+, OpenVINO Loop-5 with
# every port kind) are part of this public module too
from .dialects import (DialectProgram, dialect_programs, onnx_const_loops,  # noqa: F401
                       onnx_count_loops, onnx_grow_loops, onnx_half_chains, onnx_loops,
                       onnx_one_loops, onnx_scan8s, onnx_scans, onnx_schema_loops,
                       onnx_schema_scans, onnx_seq_loops, onnx_short_scans, onnx_wide_loops,
                       openvino_loops)
from .invalid import (FAMILIES, STRUCTURE_RULES, Broken, Handles, acyclic_breaks,  # noqa: F401
                      bounds_breaks, concat_length_breaks, count_breaks, dtype_breaks,
                      exit_breaks, invalid_networks, invalid_programs, last_value_breaks,
                      length_breaks, limits_breaks, nesting_breaks, recurrence_breaks,
                      recurrence_def_breaks, small_trips, while_input_breaks)
from .loop_parts import LoopParts, LoopState  # noqa: F401
from .programs import (Array, Call, InvalidProgram, Member, Program, Ref,  # noqa: F401
                       SetAttr, replay, source)
from .valid import KNOWN_CORE_BUGS, ProgramBuilder, networks  # noqa: F401
from .writer import (BOOL, EW, FLOAT, INT, LoopPlan, Value, Writer,  # noqa: F401
                     activations, binary_ops, body_op_kinds, counter_styles, deepest,
                     element_shapes, float_arrays, limit_kinds, loop_plans, output_kinds,
                     paddings, recurrence_kinds, trip_counts, unary_ops, values_in_range,
                     visible_in, weights_in_range)

__all__ = ["Ref", "Member", "Array", "Call", "SetAttr", "replay", "source", "Program",
           "InvalidProgram", "networks", "invalid_networks", "invalid_programs", "FAMILIES",
           "STRUCTURE_RULES", "KNOWN_CORE_BUGS", "LoopPlan", "loop_plans", "activations",
           "float_arrays", "DialectProgram", "dialect_programs", "onnx_loops", "onnx_scans",
           "onnx_scan8s", "openvino_loops", "onnx_seq_loops", "onnx_grow_loops",
           "onnx_one_loops", "onnx_schema_loops", "onnx_schema_scans", "onnx_count_loops",
           "onnx_wide_loops", "onnx_half_chains", "onnx_short_scans", "onnx_const_loops"]
