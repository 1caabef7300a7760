"""Hand-written ranges for drawing ONNX ops from their schemas (`onnx_ops`).

A schema says which inputs an op takes, of which types, and which attributes; it gives no
ranges. Most ops need none: `onnx_ops` tries the simple shapes and attribute values below
and keeps what ONNX's shape inference and the reference kernel accept. Written by hand here
is only what filtering cannot find in a few tries:

- `LEFT_OUT`: ops not drawn, and why (nondeterministic ops, control flow, strings,
  sequences and optionals);
- `SHAPES`: the shapes of an op's data inputs, where the op wants particular ranks
  (images, recurrent ops, matrices);
- `CONSTS`: inputs that are constants inside the body (shapes, axes, indices, pads,
  scales), as a function of the data shapes, simplest first. `Data(shape)` turns an
  optional input into a loop-fed input instead;
- `ATTRS`: attribute values an op needs (or that filtering would not find), as a function
  of the data shapes; `GENERIC_ATTRS` holds the values tried for common attribute names;
- `DOMAINS`: the values a data input may take (`positive` for Log, `unit` for Asin, ...),
  so that every value stays finite and means something.

Every function here maps the data shapes (a tuple with one shape per data input) to a list
of candidates, the simplest first.
"""
from __future__ import annotations

import attrs

# ------------------------------------------------------------------------------------------
# What is not drawn, and why
# ------------------------------------------------------------------------------------------

_RANDOM = "nondeterministic: two correct engines give different values"
_STRINGS = "string tensors: values are not numbers (left out for now)"
_SEQUENCES = "sequences and optionals: the onnx-seq-loop kind draws them by hand (left out for now)"
LEFT_OUT = {
    "Bernoulli": _RANDOM, "Multinomial": _RANDOM, "RandomNormal": _RANDOM,
    "RandomNormalLike": _RANDOM, "RandomUniform": _RANDOM, "RandomUniformLike": _RANDOM,
    "Loop": "control flow: the program's own structure", "Scan": "control flow: the "
    "program's own structure", "If": "control flow: the program's own structure",
    "SequenceMap": "a graph attribute (control flow over a sequence)",
    "StringConcat": _STRINGS, "StringNormalizer": _STRINGS, "StringSplit": _STRINGS,
    "RegexFullMatch": _STRINGS, "ImageDecoder": "encoded image bytes",
    "TfIdfVectorizer": "an n-gram pool described by attributes (left out for now)",
    "SequenceAt": _SEQUENCES, "SequenceConstruct": _SEQUENCES, "SequenceEmpty": _SEQUENCES,
    "SequenceErase": _SEQUENCES, "SequenceInsert": _SEQUENCES, "SequenceLength": _SEQUENCES,
    "SplitToSequence": _SEQUENCES, "ConcatFromSequence": _SEQUENCES, "Optional": _SEQUENCES,
    "OptionalGetElement": _SEQUENCES, "OptionalHasElement": _SEQUENCES,
}


@attrs.frozen
class Data:
    """An optional input fed from the loop (like a required data input), of this shape."""
    shape: tuple


@attrs.frozen
class Tensor:
    """A TENSOR attribute's value: a dtype name, a shape and the values, flat."""
    dtype: str
    shape: tuple
    values: tuple


# ------------------------------------------------------------------------------------------
# Value domains of data inputs
# ------------------------------------------------------------------------------------------

# "any": the dtype's small range; "positive": > 0; "unit": |x| < 1; "ge1": >= 1;
# "nonzero": != 0; "small": shift amounts 0..2 (BitShift); "whole": whole numbers, floats too
DOMAINS = {
    "Log": {"input": "positive"}, "Sqrt": {"X": "positive"}, "Reciprocal": {"X": "nonzero"},
    "Acos": {"input": "unit"}, "Asin": {"input": "unit"}, "Atanh": {"input": "unit"},
    "Acosh": {"input": "ge1"}, "Div": {"B": "nonzero"}, "Mod": {"B": "nonzero"},
    "Pow": {"X": "positive", "Y": "small"}, "BitShift": {"Y": "small"},
    "ReduceLogSum": {"data": "positive"}, "LpNormalization": {"input": "positive"},
    "GridSample": {"grid": "unit"}, "Range": {"delta": "nonzero"},
    "ReduceL2": {"data": "positive"},
    # the text says nothing of a fractional index: onnxruntime truncates it to an integer,
    # the reference kernel matches it with no position (all off_value)
    "OneHot": {"indices": "whole"},
}

# ------------------------------------------------------------------------------------------
# Data shapes
# ------------------------------------------------------------------------------------------

UNARY_SHAPES = [((2,),), ((),), ((2, 3),), ((1, 3),), ((3, 1, 2),)]
BINARY_SHAPES = [((2,), (2,)), ((), ()), ((2, 3), (2, 3)), ((2, 3), (3,)), ((2, 1), (1, 3)),
                 ((2, 3), ())]
TERNARY_SHAPES = [((2,), (2,), (2,)), ((), (), ()), ((2, 3), (2, 3), (2, 3)),
                  ((2, 1), (1, 3), (3,))]
IMAGE = (1, 1, 3, 3)
SHAPES = {
    "MatMul": [((2, 3), (3, 2)), ((3,), (3,)), ((2, 3), (3,)), ((2, 2, 3), (3, 2))],
    "MatMulInteger": [((2, 3), (3, 2))],
    "Gemm": [((2, 3), (3, 2))],
    "Det": [((2, 2),), ((3, 2, 2),)],
    "EyeLike": [((2, 3),), ((3, 3),)],
    "Trilu": [((2, 3),), ((3, 3),), ((2, 2, 3),)],
    "GlobalAveragePool": [((1, 2, 3),), ((1, 1, 2, 2),)],
    "GlobalMaxPool": [((1, 2, 3),), ((1, 1, 2, 2),)],
    "DepthToSpace": [((1, 4, 1, 2),)], "SpaceToDepth": [((1, 1, 2, 4),)],
    "LRN": [((1, 3, 2, 2),)],
    "InstanceNormalization": [((1, 2, 3),)], "BatchNormalization": [((1, 2, 3),)],
    "LayerNormalization": [((2, 3),), ((2, 2, 3),)],
    "Conv": [(IMAGE, (1, 1, 2, 2)), ((1, 1, 4), (2, 1, 2))],
    "ConvTranspose": [(IMAGE, (1, 1, 2, 2)), ((1, 1, 3), (1, 2, 2))],
    "ConvInteger": [(IMAGE, (1, 1, 2, 2))],
    "DeformConv": [(IMAGE, (1, 1, 2, 2), (1, 8, 2, 2))],
    "AveragePool": [(IMAGE,), ((1, 1, 4),)], "MaxPool": [(IMAGE,), ((1, 1, 4),)],
    "LpPool": [(IMAGE,), ((1, 1, 4),)], "MaxUnpool": [((1, 1, 2, 2),)],
    "RNN": [((2, 1, 2), (1, 2, 2), (1, 2, 2))],
    "GRU": [((2, 1, 2), (1, 6, 2), (1, 6, 2))],
    "LSTM": [((2, 1, 2), (1, 8, 2), (1, 8, 2))],
    "DFT": [((1, 4, 1),), ((1, 4, 2),)], "STFT": [((1, 8, 1),)],
    "AffineGrid": [((1, 2, 3),)], "GridSample": [((1, 1, 2, 2), (1, 2, 2, 2))],
    "Col2Im": [((1, 4, 4),)], "RoiAlign": [((1, 1, 4, 4),)],
    "NonMaxSuppression": [((1, 1, 3),)],
    "Range": [((), (), ())], "Squeeze": [((1, 3),), ((2, 1),), ((1,),)],
    "ScatterElements": [((2, 3), (2, 3)), ((3,), (3,))], "ScatterND": [((2, 3), (2, 3))],
    "DynamicQuantizeLinear": [((2, 3),), ((4,),)],
    "QLinearMatMul": [((2, 3), (3, 2))], "QLinearConv": [(IMAGE, (1, 1, 2, 2))],
    "Resize": [((1, 1, 2, 2),)], "ReverseSequence": [((2, 3),)],
    "NegativeLogLikelihoodLoss": [((2, 3),)], "SoftmaxCrossEntropyLoss": [((2, 3),)],
    "Einsum": [((2, 3), (3, 2)), ((2, 3),), ((2, 3), (2, 3)), ((3,), (3,))],
    "CenterCropPad": [((2, 3),)], "Compress": [((2, 3),), ((3,),)],
    "Where": TERNARY_SHAPES,
}
# ops with no data input at all (their inputs are all constants here)
NO_DATA = ("ConstantOfShape", "BlackmanWindow", "HammingWindow", "HannWindow",
           "MelWeightMatrix", "Constant")

# ------------------------------------------------------------------------------------------
# Constant inputs, from the data shapes
# ------------------------------------------------------------------------------------------


def _rank(shapes):
    return len(shapes[0]) if shapes else 0


def _perm_indices(shape, axis=0):
    """Indices of `shape` along `axis` that hit every target once per line (a scatter whose
    result does not depend on the order of writes)."""
    import numpy as np
    n = shape[axis]
    grid = np.indices(shape)
    return ((grid[axis] + grid.sum(axis=0) - grid[axis]) % n).tolist()


def _reduce_axes(shapes):
    r = _rank(shapes)
    return [{}, {"axes": [0]}, {"axes": [-1]}] if r else [{}]


def _slices(shapes):
    if not _rank(shapes):
        return []
    return [{"starts": [0], "ends": [1]}, {"starts": [1], "ends": [100]},
            {"starts": [-1], "ends": [-100], "axes": [0], "steps": [-1]},
            {"starts": [0], "ends": [3], "axes": [-1], "steps": [2]}]


def _reshapes(shapes):
    s = shapes[0]
    out = [{"shape": [-1]}, {"shape": list(reversed(s))}, {"shape": [1, -1]}]
    if s:
        out.append({"shape": [0, -1]})
    return out


def _gather(shapes):
    if not _rank(shapes):
        return []
    return [{"indices": [0]}, {"indices": [1, 0]}, {"indices": 0}, {"indices": [[0, -1]]}]


def _gather_elements(shapes):
    s = shapes[0]
    if not s:
        return []
    import numpy as np
    return [{"indices": (np.arange(int(np.prod(s))) % min(s)).reshape(s).tolist()}]


def _pads(shapes):
    r = _rank(shapes)
    if not r:
        return []
    return [{"pads": [0] * r + [1] * r}, {"pads": [1] * (2 * r)},
            {"pads": [1] * r + [0] * r, "constant_value": 1},
            {"pads": [0] * (2 * r - 1) + [-1]}]


def _tiles(shapes):
    r = _rank(shapes)
    return [{"repeats": [2] * r}, {"repeats": [1] * (r - 1) + [2]}] if r else []


def _expands(shapes):
    s = list(shapes[0])
    return [{"shape": [2] + s}, {"shape": [1] * len(s) or [1]}, {"shape": [3, 1] + s}]


def _unsqueezes(shapes):
    return [{"axes": [0]}, {"axes": [-1]}, {"axes": [0, _rank(shapes) + 1]}]


def _squeezes(shapes):
    s = shapes[0]
    return [{}, {"axes": [k for k, d in enumerate(s) if d == 1]}]


def _clips(shapes):
    return [{}, {"min": 0}, {"min": 0, "max": 1}, {"max": 1}]


def _scatter_elements(shapes):
    return [{"indices": _perm_indices(shapes[1])}]


def _scatter_nd(shapes):
    return [{"indices": [[1], [0]]}]


def _top_k(shapes):
    return [{"K": [1]}, {"K": [2]}] if _rank(shapes) else []


def _splits(shapes):
    return [{}, {"split": [1, 1]}]


def _trilu(shapes):
    return [{}, {"k": 1}, {"k": -1}]


def _cumsum(shapes):
    return [{"axis": 0}, {"axis": -1}] if _rank(shapes) else []


def _compress(shapes):
    n = shapes[0][0]
    return [{"condition": [True, False] + [True] * (n - 2)}, {"condition": [False] * n}]


CONSTS = {
    "Reshape": _reshapes, "Expand": _expands, "Tile": _tiles, "Slice": _slices,
    "Squeeze": _squeezes, "Unsqueeze": _unsqueezes, "Pad": _pads, "Gather": _gather,
    "GatherElements": _gather_elements, "GatherND": lambda s: [{"indices": [[0], [1]]},
                                                               {"indices": [[1, 0]]}],
    "ScatterElements": _scatter_elements, "ScatterND": _scatter_nd, "TopK": _top_k,
    "Split": _splits, "Trilu": _trilu, "CumSum": _cumsum, "Compress": _compress,
    "Clip": _clips, "ReduceL1": _reduce_axes, "ReduceL2": _reduce_axes,
    "ReduceLogSum": _reduce_axes, "ReduceLogSumExp": _reduce_axes, "ReduceMax": _reduce_axes,
    "ReduceMean": _reduce_axes, "ReduceMin": _reduce_axes, "ReduceProd": _reduce_axes,
    "ReduceSum": _reduce_axes, "ReduceSumSquare": _reduce_axes,
    "ConstantOfShape": lambda s: [{"input": [2]}, {"input": [2, 3]}, {"input": [0]}],
    "OneHot": lambda s: [{"depth": 3, "values": [0, 1]}, {"depth": 5, "values": [2, -1]}],
    "BlackmanWindow": lambda s: [{"size": 4}, {"size": 5}],
    "HammingWindow": lambda s: [{"size": 4}, {"size": 5}],
    "HannWindow": lambda s: [{"size": 4}, {"size": 5}],
    "MelWeightMatrix": lambda s: [{"num_mel_bins": 2, "dft_length": 8, "sample_rate": 16,
                                   "lower_edge_hertz": 0.0, "upper_edge_hertz": 8.0}],
    "InstanceNormalization": lambda s: [{"scale": [1.0, 0.5], "B": [0.0, 0.25]}],
    "BatchNormalization": lambda s: [{"scale": [1.0, 0.5], "B": [0.0, 0.25],
                                      "input_mean": [0.0, 0.5], "input_var": [1.0, 0.25]}],
    "LayerNormalization": lambda s: [{"Scale": [1.0, 0.5, 2.0]},
                                     {"Scale": [1.0, 0.5, 2.0], "B": [0.0, 0.25, 0.5]}],
    "Conv": lambda s: [{}, {"B": [0.5] * s[1][0]}],
    "ConvTranspose": lambda s: [{}, {"B": [0.5] * s[1][1]}],
    "ConvInteger": lambda s: [{}],
    "MaxUnpool": lambda s: [{"I": [[[[0, 3], [9, 14]]]]}],
    "STFT": lambda s: [{"frame_step": 2, "frame_length": 4}, {"frame_step": 4,
                                                              "frame_length": 4}],
    "AffineGrid": lambda s: [{"size": [1, 1, 2, 2]}, {"size": [1, 1, 3, 2]}],
    "Col2Im": lambda s: [{"image_shape": [3, 3], "block_shape": [2, 2]}],
    "RoiAlign": lambda s: [{"rois": [[0.0, 0.0, 2.0, 2.0]], "batch_indices": [0]}],
    "NonMaxSuppression": lambda s: [
        {"boxes": [[[0.0, 0.0, 1.0, 1.0], [0.0, 0.5, 1.0, 1.5], [0.0, 3.0, 1.0, 4.0]]],
         "max_output_boxes_per_class": [2], "iou_threshold": [0.25]}],
    "QuantizeLinear": lambda s: [{"y_scale": 0.5}, {"y_scale": 0.25, "y_zero_point": 3}],
    "DequantizeLinear": lambda s: [{"x_scale": 0.5}, {"x_scale": 0.25, "x_zero_point": 3}],
    "QLinearMatMul": lambda s: [{"a_scale": 0.5, "a_zero_point": 1, "b_scale": 0.25,
                                 "b_zero_point": 2, "y_scale": 0.5, "y_zero_point": 3}],
    "QLinearConv": lambda s: [{"x_scale": 0.5, "x_zero_point": 1, "w_scale": 0.25,
                               "w_zero_point": 2, "y_scale": 0.5, "y_zero_point": 3}],
    "Resize": lambda s: [{"roi": None, "scales": [1.0, 1.0, 2.0, 2.0]},
                         {"roi": None, "scales": None, "sizes": [1, 1, 3, 3]}],
    "ReverseSequence": lambda s: [{"sequence_lens": [1, 2, 2]}],
    "NegativeLogLikelihoodLoss": lambda s: [{"target": [0, 2]}, {"target": [1, 1],
                                                                  "weight": [1.0, 0.5, 2.0]}],
    "SoftmaxCrossEntropyLoss": lambda s: [{"labels": [0, 2]}],
    "CenterCropPad": lambda s: [{"shape": [1, 2]}, {"shape": [3, 4]}],
    "DFT": lambda s: [{}],
}

# ------------------------------------------------------------------------------------------
# Attributes
# ------------------------------------------------------------------------------------------

# values tried for common attribute names (besides leaving the attribute out)
GENERIC_ATTRS = {
    "axis": (-1, 1, 0), "keepdims": (0,), "select_last_index": (1,), "exclusive": (1,),
    "reverse": (1,), "alpha": (0.5,), "beta": (0.25,), "gamma": (1.5,), "lambd": (1.0,),
    "bias": (0.5,), "fmod": (1,), "largest": (0,), "upper": (0,), "k": (1, -1), "p": (1,),
    "periodic": (0,), "noop_with_empty_axes": (1,), "align_corners": (1,), "onesided": (1,),
    "inverse": (1,), "start": (1, -1), "end": (-1,), "allowzero": (1,),
    "center_point_box": (1,), "detect_negative": (0,), "detect_positive": (0,),
    "new_axis": (1,), "reduction": ("sum", "none", "mean"), "mode": ("reflect", "edge"),
    "sorted": (0,), "num_outputs": (2,), "storage_order": (1,),
}
# where one attribute name means different things for different ops: the values each op's
# text allows (the Scatter texts list none/add/mul/max/min; "sum" and "mean" are the losses')
OP_ATTRS = {("ScatterND", "reduction"): ("none", "add", "mul"),
            ("ScatterElements", "reduction"): ("none", "add", "mul")}


def attribute_values(op: str, name: str) -> tuple:
    """The values tried for attribute `name` of `op`: its own (`OP_ATTRS`) or the generic."""
    return OP_ATTRS.get((op, name), GENERIC_ATTRS[name])


# attributes never drawn: what they select is not deterministic or not a number
NEVER_ATTRS = {"seed", "training_mode", "saturate", "dtype", "output_datatype", "to",
               "output_dtype", "stash_type"}

_DTYPES_TO = (1, 7, 6, 10, 9, 11, 3, 2)  # float, int64, int32, float16, bool, double, int8, uint8
ATTRS = {
    "Cast": lambda s: [{"to": t} for t in _DTYPES_TO],
    "Constant": lambda s: [{"value_float": 0.5}, {"value_ints": (1, 2)}, {"value_int": 3},
                           {"value_floats": (0.25, -1.0)},
                           {"value": Tensor("float16", (2,), (0.5, -2.0))}],
    "ConstantOfShape": lambda s: [{}, {"value": Tensor("int64", (1,), (3,))},
                                  {"value": Tensor("float16", (1,), (0.25,))}],
    "BitShift": lambda s: [{"direction": "RIGHT"}, {"direction": "LEFT"}],
    "Concat": lambda s: [{"axis": 0}, {"axis": -1}],
    "DepthToSpace": lambda s: [{"blocksize": 2}, {"blocksize": 2, "mode": "CRD"}],
    "SpaceToDepth": lambda s: [{"blocksize": 2}],
    "LRN": lambda s: [{"size": 3}, {"size": 1, "alpha": 0.5, "beta": 0.5}],
    "AveragePool": lambda s: [{"kernel_shape": [2] * (len(s[0]) - 2)},
                              {"kernel_shape": [2] * (len(s[0]) - 2),
                               "pads": [1] * (2 * len(s[0]) - 4), "count_include_pad": 1},
                              {"kernel_shape": [2] * (len(s[0]) - 2), "ceil_mode": 1,
                               "strides": [2] * (len(s[0]) - 2)}],
    "MaxPool": lambda s: [{"kernel_shape": [2] * (len(s[0]) - 2)},
                          {"kernel_shape": [2] * (len(s[0]) - 2),
                           "strides": [2] * (len(s[0]) - 2), "ceil_mode": 1}],
    "LpPool": lambda s: [{"kernel_shape": [2] * (len(s[0]) - 2)},
                         {"kernel_shape": [2] * (len(s[0]) - 2), "p": 1}],
    "MaxUnpool": lambda s: [{"kernel_shape": [2, 2], "strides": [2, 2]}],
    "Conv": lambda s: [{}, {"pads": [1] * (2 * len(s[0]) - 4)},
                       {"strides": [2] * (len(s[0]) - 2)}],
    "ConvTranspose": lambda s: [{}, {"strides": [2] * (len(s[0]) - 2)}],
    "ConvInteger": lambda s: [{}],
    "DeformConv": lambda s: [{}],
    "RNN": lambda s: [{"hidden_size": 2}, {"hidden_size": 2, "direction": "reverse"}],
    "GRU": lambda s: [{"hidden_size": 2}, {"hidden_size": 2, "linear_before_reset": 1}],
    "LSTM": lambda s: [{"hidden_size": 2}, {"hidden_size": 2, "direction": "reverse"}],
    "Einsum": lambda s: [{"equation": e} for e in ("ij,jk->ik", "ij->ji", "ij,ij->i",
                                                   "i,i->", "ij->i", "ij,jk")],
    "Transpose": lambda s: [{}, {"perm": [1, 0, 2][:len(s[0])] if len(s[0]) != 2
                                 else [1, 0]}],
    "Split": lambda s: [{"num_outputs": 2}, {"num_outputs": 2, "axis": -1}, {}],
    "Resize": lambda s: [{}, {"mode": "linear"}, {"mode": "nearest",
                                                  "coordinate_transformation_mode":
                                                  "asymmetric"}],
    "RoiAlign": lambda s: [{"output_height": 2, "output_width": 2}],
    "GridSample": lambda s: [{}, {"mode": "nearest"}, {"padding_mode": "border"}],
    "Pad": lambda s: [{}, {"mode": "edge"}, {"mode": "reflect"}],
    "Mod": lambda s: [{}, {"fmod": 1}],
    "TopK": lambda s: [{}, {"largest": 0}, {"axis": 0}],  # sorted=0 leaves the order open
    "Unique": lambda s: [{}, {"sorted": 0}, {"axis": 0}],
}



def _float_mod_needs_fmod(dtypes, attributes):
    return not (dtypes[0].startswith("float") and attributes.get("fmod", 0) != 1)


# what an operator's text requires that neither its shape inference nor its reference
# kernel checks (lazyloop's ONNX frontend refuses the rest): {op: predicate(input dtypes,
# attributes)}
TEXT_RULES = {
    "Mod": _float_mod_needs_fmod,  # "If the input type is floating point, fmod must be 1"
}


# ops whose variadic output count follows from the constants and attributes
def output_count(op: str, consts: dict, attributes: dict) -> int:
    if op == "Split":
        if consts.get("split") is not None:
            return len(consts["split"])
        return attributes.get("num_outputs", 0)
    return 1


# optional outputs that are drawn (the others are left off)
OPTIONAL_OUTPUTS = {"Unique": 3, "RNN": 1, "GRU": 1, "LSTM": 2, "MaxPool": 1,
                    "LayerNormalization": 2, "Dropout": 1, "SoftmaxCrossEntropyLoss": 1}
