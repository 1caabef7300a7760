"""The dialect conformance cases: ONNX Loop/Scan and OpenVINO Loop models built from recipes
of `lazyloop.strategies.dialects`, registered in `CASES` with hand-computed outputs."""
from __future__ import annotations

import numpy as np

from .builders import X32
from .registry import Expected, U, dialect_case

# -- dialect cases ---------------------------------------------------------------------------

def _dialect_cases():
    from ..strategies.dialects import (OnnxLoopRecipe, OnnxScan8Recipe, OnnxScanRecipe,
                                     OvLoopRecipe)
    dialect_case(
        "onnx_loop_omitted_cond", ["onnx/loop"], "onnx",
        OnnxLoopRecipe(mode="M,", count=3, body_cond="pass", scans=(("cond", 0),)),
        {"w": np.float32(0)}, {"s0_stacked": Expected([1, 1, 1])}, ambiguities=("A9",),
        note="M = 3, cond omitted; the body stacks its condition input as a float: true "
             "on every trip (A9)")
    dialect_case(
        "onnx_loop_zero_trips_scan_output", ["onnx/loop", "output/concat"], "onnx",
        OnnxLoopRecipe(mode="M,cond", count=0, scans=(("vector", 0),)),
        {"w": np.float32(0)}, {"s0_stacked": Expected([], shape=(0, 2))},
        note="M = 0: the scan output of [2] elements is empty, shape [0, 2]")
    dialect_case(
        "onnx_loop_negative_m", ["onnx/loop", "trip/count"], "onnx",
        OnnxLoopRecipe(mode="M,cond", count=-1, carried=(((2,), "half"),)),
        {"w": np.float32(0), "v0": np.array([4, 8], np.float32)},
        {"v0_final": Expected([4, 8])}, ambiguities=("A4",),
        note="M = -1 runs zero trips in the ONNX profile (A4)")
    dialect_case(
        "onnx_scan_reverse_axis1", ["onnx/scan9", "iterator/reverse"], "onnx",
        OnnxScanRecipe(length=3, element=(2,), inputs=((1, 1),), outputs=(("input", 0, 0),)),
        {"x0": np.array([[1, 2, 3], [4, 5, 6]], np.float32)},
        {"o0_stacked": Expected([[6, 12], [4, 10], [2, 8]])},
        note="scan axis 1, backwards: the columns last first, doubled")
    dialect_case(
        "onnx_scan_output_axis1_prepend", ["onnx/scan9", "output/reverse"], "onnx",
        OnnxScanRecipe(length=3, element=(2,), inputs=((0, 0),),
                       outputs=(("input", 1, 1),)),
        {"x0": np.array(X32, np.float32)},
        {"o0_stacked": Expected([[10, 6, 2], [12, 8, 4]])},
        note="rows doubled, prepended along output axis 1")
    dialect_case(
        "onnx_scan_zero_length", ["onnx/scan9", "output/concat"], "onnx",
        OnnxScanRecipe(length=0, element=(2,), inputs=((0, 0),), states=1,
                       outputs=(("input", 0, 0),)),
        {"s0": np.array([1, 2], np.float32), "x0": np.zeros((0, 2), np.float32)},
        {"s0_final": Expected([1, 2]), "o0_stacked": Expected([], shape=(0, 2))},
        note="a zero-length scan input: zero trips, the state unchanged, an empty output")
    dialect_case(
        "onnx_scan_zero_length_axis1", ["onnx/scan9", "output/concat"], "onnx",
        OnnxScanRecipe(length=0, element=(2,), inputs=((1, 0),), states=1,
                       outputs=(("input", 0, 0),)),
        {"s0": np.array([1, 2], np.float32), "x0": np.zeros((2, 0), np.float32)},
        {"s0_final": Expected([1, 2]), "o0_stacked": Expected([], shape=(0, 2))},
        note="a zero-length scan input on axis 1")
    dialect_case(
        "onnx_scan8_padding", ["onnx/scan8", "output/concat"], "onnx",
        OnnxScan8Recipe(batch=2, length=2, element=(), lens=(2, 1), directions=(0,),
                        states=0, outputs=("input",)),
        {"sequence_lens": np.array([2, 1], np.int64),
         "x0": np.array([[1, 2], [3, 4]], np.float32)},
        {"o0_stacked": Expected([[2, 4], [6, U]])},
        note="the second sequence is 1 long: its second output step is padding")
    dialect_case(
        "onnx_scan8_empty_sequence", ["onnx/scan8", "output/concat", "output/last"], "onnx",
        OnnxScan8Recipe(batch=2, length=2, element=(), lens=(0, 2), directions=(0,),
                        states=1, outputs=("input",)),
        {"sequence_lens": np.array([0, 2], np.int64),
         "s0": np.array([0.5, 0], np.float32),
         "x0": np.array([[1, 2], [0, 0]], np.float32)},
        {"s0_final": Expected([0.5, 0]), "o0_stacked": Expected([[U, U], [0, 0]])},
        ambiguities=("A14",),
        note="a sequence of length 0: its state is the initial one, its outputs padding "
             "(A14 'zero-trips'; onnxruntime refuses such lengths)")
    dialect_case(
        "openvino_zero_trips", ["openvino/loop5", "output/last"], "openvino",
        OvLoopRecipe(trip=0, trip_source="param", merged=(((2,), "half"),),
                     outputs=(("last", "merged:0", 0),)),
        {"trip": np.array(0, np.int64), "m0_init": np.array([4, 8], np.float32)},
        {"out0": Expected([4, 8])}, ambiguities=("A5",),
        note="trip count 0: the back-edged value is its initial value (A5 'execute')")
    dialect_case(
        "openvino_reverse_slices", ["openvino/loop5", "iterator/reverse", "output/concat"],
        "openvino",
        OvLoopRecipe(trip=2, sliced=((0, 1, True),), chunks=2,
                     outputs=(("concat", "sliced:0", 0),)),
        {"x0": np.array([[0, 0], [1, 1]], np.float32)},
        {"out0": Expected([[0.7615942, 0.7615942], [0, 0]])},
        note="chunks of a [2, 2] input, last first, through tanh (tanh 1 = 0.7615942)")


_dialect_cases()
