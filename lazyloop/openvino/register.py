"""The OpenVINO frontend's entries of the ambiguity register (IDs A20-A29).

They live in the one register, `lazyloop/ambiguity.py`, and are selected like every other
entry: ``readings={"A20": "exclusive"}``. spec/ambiguities.md describes each with its sources.
"""
from __future__ import annotations

from ..core.ambiguity import REGISTER

OPENVINO_IDS = ("A20", "A21", "A22", "A23", "A24")
OPENVINO_REGISTER = {k: REGISTER[k] for k in OPENVINO_IDS}

