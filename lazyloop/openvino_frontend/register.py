"""Ambiguity entries of the OpenVINO frontend (IDs A20-A29, reserved for it).

They have the shape of the core register's entries (`lazyloop.ambiguity.Ambiguity`) and are
selected the same way, ``readings={"A20": "exclusive"}``. Until the core register holds them,
`split_readings` takes them out of a caller's readings before the rest reaches the core.
spec/40-openvino-lowering.md describes each one with its sources.
"""
from __future__ import annotations

from typing import Mapping, Optional, Tuple

from ..ambiguity import REGISTER as CORE_REGISTER
from ..ambiguity import Ambiguity, UnknownReading

OPENVINO_REGISTER = {a.id: a for a in [
    Ambiguity("A20", "openvino/slice",
              "sliced input: is `end` included, and what does a negative start/end mean?",
              {"inclusive": "OpenVINO's TensorIterator shape inference: the borders [start, "
                            "end] are both included; a negative v means dim + v",
               "exclusive": "the CPU plugin's trip count: a negative v means dim + 1 + v and "
                            "the far border is excluded"},
              "inclusive"),
    Ambiguity("A21", "openvino/loop5",
              "Loop-5 mode table: inputs (-1, true) are labelled both 'infinite loop' and "
              "'do-while loop'",
              {"body-decides": "one rule for both rows: the body's execution_condition result "
                               "decides every next trip (OpenVINO reference and CPU plugin)",
               "infinite": "(-1, true) is the infinite row: the body's condition is ignored "
                           "and only max_trips ends the loop"},
              "body-decides"),
    Ambiguity("A22", "openvino/loop5",
              "Loop whose execution condition is a constant false: OpenVINO's shape inference "
              "declares other output shapes than zero trips produce",
              {"execution": "the values zero trips produce: initial values, empty "
                            "concatenations of the body's rank",
               "inference": "empty arrays of the shapes OpenVINO's shape inference declares "
                            "(concatenations [0], last values with a leading 0)"},
              "execution"),
    Ambiguity("A23", "openvino/slice",
              "sliced input or concatenated output whose |stride| differs from part_size",
              {"windows": "chunk i is the part_size elements starting at start + i*stride "
                          "(overlapping or with gaps)",
               "refuse": "a model error, as the CPU plugin refuses it (it cuts |stride| "
                         "elements per trip) and the reference ignores part_size"},
              "windows"),
    Ambiguity("A24", "openvino/loop5",
              "Loop with a sliced input that runs more trips than the input has chunks",
              {"error": "forcing a chunk past the end is an error (iterator/bounds); the CPU "
                        "plugin fails too",
               "hold-last": "OpenVINO's reference implementation keeps feeding the last chunk"},
              "error"),
]}


def resolve_frontend(readings: Optional[Mapping[str, str]]) -> dict:
    """The frontend's reading table: defaults overridden by the caller's choices."""
    chosen = {a.id: a.default for a in OPENVINO_REGISTER.values()}
    for key, value in (readings or {}).items():
        entry = OPENVINO_REGISTER.get(key)
        if entry is None:
            continue
        if value not in entry.readings:
            raise UnknownReading(f"readings[{key!r}]", entry.rule, f"unknown reading {value!r}",
                                 f"use one of {sorted(entry.readings)}")
        chosen[key] = value
    return chosen


def split_readings(readings: Optional[Mapping[str, str]]) -> Tuple[dict, dict]:
    """(readings for the core, readings for this frontend). Entries the core register already
    holds go to the core (as well); A20-A29 are read here."""
    readings = dict(readings or {})
    core = {k: v for k, v in readings.items()
            if k in CORE_REGISTER or k not in OPENVINO_REGISTER}
    return core, resolve_frontend(readings)
