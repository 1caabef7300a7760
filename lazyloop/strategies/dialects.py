"""Hypothesis strategies for loop programs written directly in the dialects: ONNX Loop (every
mode of the operator's table), ONNX Scan 8 and Scan 9+ (directions, axes, sequence lengths,
zero-length inputs), long Loops with narrow-typed counters, If-only programs and If inside
Scan bodies (`onnx_wide`), Loops carrying sequences and optionals (`onnx_sequences`), Loops
whose carried values grow or shrink and Loops with [1] conditions, trip counts and iteration
numbers, declaring unknown ranks and dims (`onnx_carried`), Loops and Scans whose bodies
hold any ONNX op, drawn from the operator schemas (`onnx_schema`, `onnx_schema_draw`), the
corners exporters' models hit (`onnx_corners`, `onnx_edges`: thousands of trips reading the
iteration number, int64 values past 2^31, float16 chains, zero- and one-trip scans feeding
every output kind, loops that fold to constants, exporters' names), and OpenVINO Loop-5
(every port kind).

    from lazyloop.strategies.dialects import onnx_loops, onnx_scans, onnx_scan8s, openvino_loops

    @given(onnx_loops())
    def test_it(p):
        p.model, p.feeds, p.rules      # onnx.ModelProto, {name: array}, rule IDs
        p.recipe                       # the plain data the program is built from

A program is a *recipe*: a frozen record of small choices (which mode, how many carried
values, which axis, ...). `build` turns it into the model and its feeds, so a recipe printed by
hypothesis rebuilds the same program (``OnnxLoopRecipe(...).program()``). Choices are drawn
simplest-first, so shrinking goes towards fewer values, fewer outputs, forward directions,
axis 0 and few trips. Values are multiples of 1/4 in [-2, 2]; bodies only add, scale by 1/2
and take tanh, so results stay finite.

Rule IDs exercised: `onnx/loop`, `onnx/scan9`, `onnx/scan8`, `openvino/loop5`, and the core
rules their lowering uses (the difference tester adds those read from the lowered plan).

The recipes live in `onnx_loop`, `onnx_scan` and `openvino_loop` (what they share in
`recipes`); this module gathers them, names each kind (`ONNX_KINDS`, `OPENVINO_KINDS`) and
draws their union (`dialect_programs`); kinds that only an engine asks for
(`ONNX_NAMED_KINDS`: Loops with both M and cond and no scan output, Scans from opset 11 on,
If without 8-bit types) are drawn only where they are named (`dialect_kinds`).
"""
from __future__ import annotations

from hypothesis import strategies as st

from .onnx_loop import (CARRIED_SHAPES, CARRIED_UPDATES, LOOP_MODES, LOOP_OPSETS,  # noqa: F401
                        SCAN_SOURCES, OnnxLoopRecipe, onnx_counted_loops, onnx_loop_recipes,
                        onnx_loops)
from .onnx_carried import (OnnxGrowLoopRecipe, OnnxOneLoopRecipe, onnx_grow_loops,
                           onnx_one_loops)
from .onnx_scan import (ELEMENT_SHAPES, SCAN9_OPSETS, SCAN_OUTPUT_SOURCES,  # noqa: F401
                        OnnxScan8Recipe, OnnxScanRecipe, onnx_scan11s, onnx_scan8_recipes,
                        onnx_scan8s, onnx_scan_recipes, onnx_scans, state_body)
from .onnx_wide import (OnnxIfRecipe, OnnxLongLoopRecipe, onnx_ifs, onnx_ifs_without_8bit,
                        onnx_long_loops, onnx_scan_ifs)
from .onnx_corners import (OnnxCountLoopRecipe, OnnxHalfChainRecipe,  # noqa: F401
                           OnnxWideLoopRecipe, onnx_count_loops, onnx_half_chains,
                           onnx_wide_loops)
from .onnx_edges import (OnnxConstLoopRecipe, OnnxShortScanRecipe,  # noqa: F401
                         onnx_const_loops, onnx_short_scans)
from .onnx_schema import OnnxSchemaRecipe  # noqa: F401
from .onnx_schema_draw import onnx_schema_loops, onnx_schema_scans
from .onnx_sequences import OnnxSeqLoopRecipe, onnx_seq_loops
from .openvino_loop import OvLoopRecipe, openvino_loop_recipes, openvino_loops
from .recipes import DialectProgram, axes, values  # noqa: F401

# ------------------------------------------------------------------------------------------
# All of them
# ------------------------------------------------------------------------------------------

ONNX_KINDS = {"onnx-loop": onnx_loops, "onnx-scan9": onnx_scans, "onnx-scan8": onnx_scan8s,
              "onnx-long-loop": onnx_long_loops, "onnx-if": onnx_ifs,
              "onnx-scan-if": onnx_scan_ifs, "onnx-seq-loop": onnx_seq_loops,
              "onnx-grow-loop": onnx_grow_loops, "onnx-loop-1d": onnx_one_loops,
              "onnx-schema-loop": onnx_schema_loops, "onnx-schema-scan": onnx_schema_scans,
              "onnx-count-loop": onnx_count_loops, "onnx-wide-loop": onnx_wide_loops,
              "onnx-half-chain": onnx_half_chains, "onnx-short-scan": onnx_short_scans,
              "onnx-const-loop": onnx_const_loops}
OPENVINO_KINDS = {"openvino-loop": openvino_loops}
# kinds drawn only where a backend (its `kinds`) or `--kind` names them: the programs an
# engine runs, kept out of the default mix so that program i of a campaign stays the same
ONNX_NAMED_KINDS = {"onnx-loop-m-cond": onnx_counted_loops, "onnx-scan11": onnx_scan11s,
                    "onnx-if-no-8bit": onnx_ifs_without_8bit}


def dialect_kinds(fmt: str, kinds=None) -> dict:
    """{kind: strategy} of format `fmt`: the default mix, and the named-only kinds that
    `kinds` names."""
    if fmt != "onnx":
        return dict(OPENVINO_KINDS)
    return {**ONNX_KINDS, **{k: v for k, v in ONNX_NAMED_KINDS.items() if k in (kinds or ())}}


def dialect_programs(formats=("onnx", "openvino")):
    """Programs of every dialect kind whose format is in `formats`."""
    parts = []
    if "onnx" in formats:
        parts += [f() for f in ONNX_KINDS.values()]
    if "openvino" in formats:
        parts += [f() for f in OPENVINO_KINDS.values()]
    return st.one_of(parts)


__all__ = ["DialectProgram", "OnnxLoopRecipe", "OnnxScanRecipe", "OnnxScan8Recipe",
           "OnnxLongLoopRecipe", "OnnxIfRecipe", "OnnxSeqLoopRecipe", "OnnxGrowLoopRecipe",
           "OnnxOneLoopRecipe", "onnx_counted_loops", "onnx_scan11s", "onnx_ifs_without_8bit", "onnx_seq_loops", "onnx_grow_loops",
           "onnx_one_loops", "onnx_long_loops", "onnx_ifs", "onnx_scan_ifs",
           "OvLoopRecipe", "onnx_loops", "onnx_scans", "onnx_scan8s", "openvino_loops",
           "dialect_programs", "onnx_loop_recipes", "onnx_scan_recipes", "onnx_scan8_recipes",
           "openvino_loop_recipes", "OnnxSchemaRecipe", "onnx_schema_loops",
           "onnx_schema_scans", "OnnxCountLoopRecipe", "OnnxWideLoopRecipe",
           "OnnxHalfChainRecipe", "OnnxShortScanRecipe", "OnnxConstLoopRecipe",
           "onnx_count_loops", "onnx_wide_loops", "onnx_half_chains", "onnx_short_scans",
           "onnx_const_loops"]
