"""Backends with planted faults, importable as ``tests.planted:NAME`` (module:factory) by the
tests of the differential tester."""
import os

import lazyloop.difftest as dt


def loop_plus_one():
    """Every ONNX Loop runs one trip too many (a planted fault)."""
    return dt.TripCountPlusOne(dt.backend("lazyloop"))


class AbortsOnScan:
    """Correct (lazyloop's own frontend) except that it kills its process with SIGABRT on
    every model with a Scan, as a native crash would."""

    name = "aborts-on-scan"
    format = "onnx"
    formats = ("onnx",)

    def __init__(self):
        self.inner = dt.backend("lazyloop")

    def run(self, model, feeds):
        if any(n.op_type == "Scan" for n in model.graph.node):
            os.abort()
        return self.inner.run(model, feeds)
