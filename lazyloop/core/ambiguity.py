"""The ambiguity register, as code.

Where the source documents disagree or say nothing, lazyloop does not pick silently. Each
entry names the rule it touches, the readings (one is the default) and where each comes from.
A caller selects another reading with ``readings={"A1": "reverse-all"}`` on any evaluate
call. spec/ambiguities.md holds the same entries in prose; a test keeps the two in step.
"""
from __future__ import annotations

from typing import Mapping, Optional

import attrs

from .errors import LazyLoopError


@attrs.frozen
class Ambiguity:
    id: str
    rule: str
    question: str
    readings: Mapping[str, str]  # reading name -> where it comes from
    default: str


REGISTER = {a.id: a for a in [
    Ambiguity("A1", "output/reverse",
              "REVERSE with a length Y > n: where does the padding go?",
              {"padding-after": "the formal semantics pads CONCATENATE after the values; "
                                "REVERSE is 'similar' with the order reversed",
               "reverse-all": "reverse the whole padded CONCATENATE result (padding first)"},
              "padding-after"),
    Ambiguity("A2", "iterator/reverse",
              "reverse iterator: which element is element i?",
              {"guide": "developer guide: X[L-1-i], L the extent of the iterated axis",
               "api-reference": "API reference: gather(t, M-1-i), M the COUNT trip count"},
              "guide"),
    Ambiguity("A3", "openvino/loop5",
              "OpenVINO output by last iteration of a result without back edge, after zero trips",
              {"undefined": "nothing was produced, so the value is undefined (masked)",
               "error": "refuse, like OpenVINO's reference implementation refuses zero trips"},
              "undefined"),
    Ambiguity("A4", "trip/count",
              "negative COUNT limit",
              {"by-profile": "TensorRT: runtime error; ONNX: zero trips (its reference "
                             "evaluator); OpenVINO: no count limit (-1 means infinite)",
               "error": "a runtime error in every profile",
               "zero-trips": "zero trips in every profile",
               "no-limit": "no count limit in every profile"},
              "by-profile"),
    Ambiguity("A5", "openvino/loop5",
              "OpenVINO loop that runs zero trips (count 0 or a false first condition)",
              {"execute": "run it: initial values, empty concatenations (the CPU plugin, "
                          "given a trip count of 0 at run time)",
               "refuse": "a runtime error (OpenVINO's reference implementation)"},
              "execute"),
    Ambiguity("A6", "profile/tensorrt-dtypes",
              "'the loop API supports only FP32 and FP16' vs a bool WHILE recurrence example",
              {"profile": "floating point loop values FP32/FP16; bool and int32/int64 allowed",
               "fp-only": "every loop value FP32 or FP16 (the sentence read literally)"},
              "profile"),
    Ambiguity("A7", "onnx/loop",
              "does the ONNX Loop return its final condition?",
              {"signature": "operator signature: carried values then scan outputs",
               "sample": "the documented sample lists the condition first"},
              "signature"),
    Ambiguity("A8", "onnx/loop",
              "ONNX Loop scan outputs: concatenated or stacked?",
              {"stack": "stacked on a new axis 0 (pseudo-code, onnxruntime, onnx/onnx#3122)",
               "concatenate": "concatenated along the existing axis 0 (the prose)"},
              "stack"),
    Ambiguity("A9", "onnx/loop",
              "ONNX Loop with cond omitted: what does the body's condition input receive?",
              {"true": "true on every trip",
               "undefined": "nothing: the input is undefined and reading it is masked"},
              "true"),
    Ambiguity("A10", "laziness/dead",
              "a layer that fails on a value nobody reads",
              {"lazy": "TensorRT's lazy semantics never forces it: no error",
               "eager": "every layer runs on every trip, as ONNX/OpenVINO runtimes do"},
              "lazy"),

    # -- ONNX frontend (A11-A19) ------------------------------------------------------------
    Ambiguity("A11", "onnx/loop",
              "an ONNX Loop carried value whose shape changes from trip to trip",
              {"allow": "each carried value is checked only against the body's declared type "
                        "(dtype; rank and static dims where declared), as every runtime and "
                        "exporter treats them; the Loop text constrains only scan outputs",
               "error": "structure/shapes read strictly: a carried value keeps its initial "
                        "shape on every trip"},
              "allow"),
    Ambiguity("A12", "onnx/loop",
              "zero trips and a scan output whose declared element shape is not static",
              {"zero-extent": "unknown dimensions become 0 (as onnxruntime gives)",
               "error": "no element gives a shape (ONNX's reference evaluator fails)"},
              "zero-extent"),
    Ambiguity("A13", "onnx/scan8",
              "Scan 8 in reverse when sequence_lens[b] is shorter than the sequence axis",
              {"valid-prefix": "element t is x[len-1-t]: the valid items reversed "
                               "(onnxruntime, DESIGN)",
               "padded-axis": "element t is x[T-1-t]: the whole axis reversed, padding first"},
              "valid-prefix"),
    Ambiguity("A14", "onnx/scan8",
              "Scan 8 with a sequence_lens entry of 0",
              {"zero-trips": "the batch item runs zero trips: its states stay initial, its "
                             "scan outputs are all padding (the text allows lengths up to "
                             "the maximum and names no minimum)",
               "refuse": "an error, as onnxruntime refuses lengths below 1"},
              "zero-trips"),
    Ambiguity("A15", "onnx/loop",
              "ONNX Loop with cond omitted whose body's condition output turns false",
              {"ignore": "the operator text: the body's condition is computed and ignored "
                         "(`cond = ...; // ignored`); only M (or fuel) ends the loop",
               "honour": "onnxruntime: the loop stops after the trip whose condition output "
                         "is false (onnxscript compiles `break` into this)"},
              "ignore"),
    Ambiguity("A16", "onnx/loop",
              "a Loop condition, trip count or iteration number of shape [1]",
              {"one-element": "ONNX's checker and every runtime accept one-element tensors; "
                              "the body's condition input holds the condition's one element "
                              "in the shape the body declares for it (as onnxruntime feeds "
                              "it), in the value's own shape when undeclared",
               "scalar": "the operator text says scalars: anything but 0-D is refused"},
              "one-element"),
    Ambiguity("A17", "onnx/declared",
              "a carried body input declared with static dims that later trips break",
              {"constraint": "ONNX's IR: a declared shape is a promise about every value "
                             "bound to it; a value that breaks it is refused (ModelError)",
               "hint": "onnxruntime: a carried input's declared dims are not checked; its "
                       "dtype and rank still are (TorchScript declares the first trip's "
                       "shape for a value torch.cat grows)"},
              "constraint"),
    Ambiguity("A18", "onnx/declared",
              "an ONNX Loop carried input declared with one element of rank 1 ([1]) whose "
              "initial value is 0-D",
              {"as-given": "the declaration is a hint (onnxruntime, ONNX's reference "
                           "evaluator; ONNX's checker accepts it, the Loop's inference drops "
                           "carried shapes): the body receives the 0-D value",
               "constraint": "ONNX's IR: a declared shape fixes the rank, and a scalar is not "
                             "a vector of length 1: refused (ModelError)"},
              "as-given"),
    # -- OpenVINO frontend (A20-A29) ----------------------------------------------------------
    Ambiguity("A20", "openvino/slice",
              "sliced input: is `end` included, and what does a negative start/end mean?",
              {"inclusive": "TensorIterator shape inference: [start, end] both included; a "
                            "negative v means dim + v",
               "exclusive": "the CPU plugin's trip count: a negative v means dim + 1 + v and "
                            "the far border is excluded"},
              "inclusive"),
    Ambiguity("A21", "openvino/loop5",
              "the Loop-5 mode table labels inputs (-1, true) both 'infinite' and 'do-while'",
              {"body-decides": "the body's execution_condition decides every next trip "
                               "(OpenVINO reference and CPU plugin)",
               "infinite": "(-1, true) ignores the body's condition; only max_trips ends it"},
              "body-decides"),
    Ambiguity("A22", "openvino/loop5",
              "constant-false execution condition: shape inference declares other output "
              "shapes than zero trips produce",
              {"execution": "what zero trips produce: initial values, empty concatenations "
                            "of the body's rank",
               "inference": "empty arrays of the shapes OpenVINO's shape inference declares"},
              "execution"),
    Ambiguity("A23", "openvino/slice",
              "sliced input or concatenated output whose |stride| differs from part_size",
              {"windows": "chunk i is the part_size elements from start + i*stride "
                          "(overlapping or with gaps)",
               "refuse": "a model error: the CPU plugin cuts |stride| elements per trip, the "
                         "reference ignores part_size",
               "stride-cut": "the CPU plugin: each trip takes |stride| elements (chunk i from "
                             "start + i*|stride|) into a part_size chunk whose other elements "
                             "are undefined; a concatenated result must be |stride| long"},
              "windows"),
    Ambiguity("A24", "openvino/loop5",
              "a Loop with a sliced input that runs more trips than the input has chunks",
              {"error": "forcing a chunk past the end is iterator/bounds (the CPU plugin "
                        "fails too)",
               "hold-last": "OpenVINO's reference implementation keeps feeding the last chunk"},
              "error"),
    # -- kernels of every dialect (A30-A39) ----------------------------------------------------
    Ambiguity("A30", "stream/map",
              "integer Add, Sub, Mul, Neg or Abs whose exact result leaves the dtype's range",
              {"wrap": "two's-complement wrap-around: numpy, onnxruntime, ONNX's reference "
                       "evaluator, OpenVINO's Node.evaluate (the operator texts are silent)",
               "saturate": "clamp to the dtype's range: OpenVINO's CPU plugin on int8 and "
                           "uint8, tract's `x * x` on 8-bit types (spec/50 NARROW-1)"},
              "wrap"),
    Ambiguity("A31", "onnx/node",
              "an ONNX Resize of an integer tensor: how its weighted average becomes an integer",
              {"round": "to the nearest integer, half to even, clamped to the dtype's range "
                        "(ONNX's reference evaluator; the operator text is silent)",
               "truncate": "toward zero, clamped to the dtype's range (onnxruntime, spec/50 "
                           "ORT-7)"},
              "round"),
    # -- the core, continued (A40-A49) ---------------------------------------------------------
    Ambiguity("A40", "trip/both",
              "a loop with both a COUNT and a WHILE limit: n, and is X_count read?",
              {"count-first": "n = min(count, least j with X_j false), the count looked at "
                              "first: X_count is never forced (ONNX Loop's `i < M && cond`)",
               "condition-first": "the same n, the condition read first at every index, as "
                                  "`while (x(j) && j < count)`: X_count is forced too"},
              "count-first"),
]}


class UnknownReading(LazyLoopError):
    pass


class Readings(dict):
    """A full reading table, resolved and checked: `resolve` returns it as it is, so that an
    evaluation resolves the caller's readings once, however many parts read them."""


def resolve(readings: Optional[Mapping[str, str]]) -> Readings:
    """The full reading table: defaults overridden by the caller's choices."""
    if type(readings) is Readings:
        return readings
    chosen = {a.id: a.default for a in REGISTER.values()}
    if readings is not None and not isinstance(readings, Mapping):
        raise UnknownReading("readings", "ambiguity/register",
                             f"is a {type(readings).__name__}, not a mapping",
                             'pass a dict such as {"A1": "reverse-all"}')
    for key, value in (readings or {}).items():
        entry = REGISTER.get(key)
        if entry is None:
            raise UnknownReading(f"readings[{key!r}]", "ambiguity/register",
                                 "no such ambiguity", f"use one of {sorted(REGISTER)}")
        if value not in entry.readings:
            raise UnknownReading(f"readings[{key!r}]", entry.rule,
                                 f"unknown reading {value!r}",
                                 f"use one of {sorted(entry.readings)}")
        chosen[key] = value
    return Readings(chosen)
