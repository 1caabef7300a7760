"""Lowering once for repeated evaluation (less fixed cost per call).

`lazyloop.onnx.evaluate(model, feeds)` given a model (not a `Lowered`) would lower it on every
call: about a millisecond for a small model, far more than evaluating a short loop. The last
few lowered models are kept, keyed by a digest of the serialized model and the readings, so
evaluating the same model again starts at once. A model changed in place serializes
differently, so it is lowered afresh; lowering is a pure function of the bytes and the
readings, so a kept lowering is the one a new lowering would give.
"""
from __future__ import annotations

import hashlib
from collections import OrderedDict

KEEP = 4  # lowered models kept (each holds its initializers)

_kept: "OrderedDict[tuple, object]" = OrderedDict()


def lowered(model, readings, lower):
    """`lower(model, readings)`, or the lowering kept from an earlier call."""
    from .lowering import load_model

    proto = load_model(model)
    if any(t.data_location == t.EXTERNAL for t in proto.graph.initializer):
        return lower(proto, readings)  # its values live in files the bytes do not cover
    try:
        data = proto.SerializeToString()
    except Exception:  # noqa: BLE001 -- too large to serialize (2 GiB): lower it each time
        return lower(proto, readings)
    key = (hashlib.blake2b(data, digest_size=16).digest(),
           repr(sorted((readings or {}).items())))
    found = _kept.get(key)
    if found is None:
        found = _kept[key] = lower(proto, readings)
        while len(_kept) > KEEP:
            _kept.popitem(last=False)
    else:
        _kept.move_to_end(key)
    return found
