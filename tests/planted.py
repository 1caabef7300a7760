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


class ZeroScans:
    """Two planted faults in one backend: every Loop runs one trip too many, and every
    Scan's outputs come back as zeros."""

    name = "two-faults"
    format = "onnx"
    formats = ("onnx",)

    def __init__(self):
        self.loops = dt.TripCountPlusOne(dt.backend("lazyloop"))

    def run(self, model, feeds):
        import numpy as np
        out = self.loops.run(model, feeds)
        if any(n.op_type == "Scan" for n in model.graph.node):
            out = {k: np.zeros_like(v) for k, v in out.items()}
        return out


class Hungry:
    """Allocates `mib` MiB and holds it on every model (a backend that runs out of memory)."""

    name = "hungry"
    format = "onnx"
    formats = ("onnx",)

    def __init__(self, mib):
        self.mib = mib

    def run(self, model, feeds):
        import time

        import numpy as np
        block = np.ones(self.mib * 2**20, np.uint8)  # touched: resident
        time.sleep(60)
        return {"never": block[:1]}


class SlowStart:
    """Takes `seconds` to start (like an import of a big runtime), then is correct."""

    name = "slow-start"
    format = "onnx"
    formats = ("onnx",)

    def __init__(self, seconds=2.0):
        import time
        time.sleep(seconds)
        self.inner = dt.backend("lazyloop")

    def run(self, model, feeds):
        return self.inner.run(model, feeds)


class RefusesAll:
    name = "refuses-all"
    format = "onnx"
    formats = ("onnx",)

    def run(self, model, feeds):
        raise dt.Unsupported("NOT_IMPLEMENTED: no loops here")


class FailsToCompile:
    """Fails while loading every model with an internal error (not a refusal)."""

    name = "fails-to-compile"
    format = "onnx"
    formats = ("onnx",)

    def run(self, model, feeds):
        raise dt.backends.refusal_or_failure(RuntimeError("Assertion `rank >= 0` failed"))


class CounterInInt8:
    """A runtime that keeps a Loop's trip count in 8 bits: M is cast to int8 and back, so a
    300-trip loop runs 44 trips and a 1000-trip loop none."""

    name = "counter-in-int8"
    format = "onnx"
    formats = ("onnx",)

    def __init__(self):
        self.inner = dt.backend("lazyloop")

    def run(self, model, feeds):
        import onnx
        from onnx import TensorProto, helper
        model = onnx.ModelProto.FromString(model.SerializeToString())
        nodes = []
        for k, node in enumerate(model.graph.node):
            if node.op_type == "Loop" and node.input[0]:
                narrow, wide = f"__m8_{k}", f"__m64_{k}"
                nodes.append(helper.make_node("Cast", [node.input[0]], [narrow],
                                              to=TensorProto.INT8))
                nodes.append(helper.make_node("Cast", [narrow], [wide], to=TensorProto.INT64))
                node.input[0] = wide
            nodes.append(node)
        del model.graph.node[:]
        model.graph.node.extend(nodes)
        return self.inner.run(model, feeds)


class SwappedIf:
    """A runtime that takes an If's else branch when the condition holds and its then branch
    when it does not (in every graph, bodies too)."""

    name = "swapped-if"
    format = "onnx"
    formats = ("onnx",)

    def __init__(self):
        self.inner = dt.backend("lazyloop")

    def run(self, model, feeds):
        import onnx
        model = onnx.ModelProto.FromString(model.SerializeToString())

        def swap(graph):
            for node in graph.node:
                branches = {a.name: a for a in node.attribute}
                for a in node.attribute:
                    if a.type == onnx.AttributeProto.GRAPH:
                        swap(a.g)
                if node.op_type == "If":
                    then, other = branches["then_branch"], branches["else_branch"]
                    g = onnx.GraphProto()
                    g.CopyFrom(then.g)
                    then.g.CopyFrom(other.g)
                    other.g.CopyFrom(g)
        swap(model.graph)
        return self.inner.run(model, feeds)
