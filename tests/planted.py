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


class _LoopRewrite:
    """Correct (lazyloop's frontend) but for `rewrite(k, loop, body, before, after)`, applied
    to every Loop of the main graph: it may edit the node and its body and add nodes to
    `before` and `after` it."""

    format = "onnx"
    formats = ("onnx",)

    def __init__(self):
        self.inner = dt.backend("lazyloop")

    def run(self, model, feeds):
        import onnx
        model = onnx.ModelProto.FromString(model.SerializeToString())
        nodes = []
        for k, node in enumerate(model.graph.node):
            before, after = [], []
            if node.op_type == "Loop":
                body = next(a.g for a in node.attribute if a.name == "body")
                self.rewrite(k, node, body, before, after)
            nodes += before + [node] + after
        del model.graph.node[:]
        model.graph.node.extend(nodes)
        return self.inner.run(model, feeds)

    @staticmethod
    def _carried(node, body, kind):
        """(k, initial value, body input) of each carried value whose body input's type is
        of `kind` ("sequence_type", "tensor_type")."""
        for k, init in enumerate(node.input[2:]):
            b_in = body.input[2 + k]
            if b_in.type.WhichOneof("value") == kind and k < len(node.output):
                yield k, init, b_in

    @staticmethod
    def _before_use(body, names, make):
        """Body inputs `names` reach the body's nodes through `make(hidden, name)`: the nodes
        computing `name` from the input, renamed `hidden`."""
        head = []
        for name in names:
            hidden = f"__planted_{name}"
            for b_in in body.input:
                if b_in.name == name:
                    b_in.name = hidden
            head += make(hidden, name)
        old = list(body.node)
        del body.node[:]
        body.node.extend(head + old)

    @classmethod
    def _prepend(cls, body, names, target):
        """Body inputs `names` reach the body reshaped to `target` (a list of dims)."""
        import numpy as np
        from onnx import helper, numpy_helper

        def reshape(hidden, name):
            shape = f"{hidden}_shape"
            return [helper.make_node("Constant", [], [shape], value=numpy_helper.from_array(
                        np.array(target, np.int64), shape + "_value")),
                    helper.make_node("Reshape", [hidden, shape], [name])]
        cls._before_use(body, names, reshape)


class CounterInInt8(_LoopRewrite):
    """A runtime that keeps a Loop's trip count in 8 bits: M is cast to int8 and back, so a
    300-trip loop runs 44 trips and a 1000-trip loop none."""

    name = "counter-in-int8"

    def rewrite(self, k, node, body, before, after):
        from onnx import TensorProto, helper
        if not node.input[0]:
            return
        narrow, wide = f"__m8_{k}", f"__m64_{k}"
        before.append(helper.make_node("Cast", [node.input[0]], [narrow], to=TensorProto.INT8))
        before.append(helper.make_node("Cast", [narrow], [wide], to=TensorProto.INT64))
        node.input[0] = wide


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


# ------------------------------------------------------------------------------------------
# Planted faults in the constructs of the new generators (issue 14 point 3): each rewrites
# the model's top-level Loops, then runs it on lazyloop's own evaluator.
# ------------------------------------------------------------------------------------------

class SequenceNotFedBack(_LoopRewrite):
    """A Loop's carried sequence comes out as it went in (the initial list): the body's
    updates are not fed back."""

    name = "sequence-not-fed-back"

    def rewrite(self, k, node, body, before, after):
        from onnx import helper
        for j, init, _ in list(self._carried(node, body, "sequence_type")):
            out = node.output[j]
            node.output[j] = f"__planted_lost_{k}_{j}"
            after.append(helper.make_node("Identity", [init], [out]))


class GrowingAtInitialShape(_LoopRewrite):
    """A Loop's carried tensor comes out cut to the shape it entered with (a runtime that
    allocates the final value once, from the initial shape): a value that grew is truncated."""

    name = "growing-at-initial-shape"

    def rewrite(self, k, node, body, before, after):
        from onnx import helper
        for j, init, _ in list(self._carried(node, body, "tensor_type")):
            out, grown = node.output[j], f"__planted_grown_{k}_{j}"
            shape, zeros = f"{grown}_shape", f"{grown}_zeros"
            node.output[j] = grown
            after += [helper.make_node("Shape", [init], [shape]),
                      helper.make_node("Sub", [shape, shape], [zeros]),
                      helper.make_node("Slice", [grown, zeros, shape], [out])]


class OneElementAsScalar(_LoopRewrite):
    """A Loop body's iteration number and condition input declared [1] arrive as 0-D
    scalars (a runtime that reads the operator text's 'scalar' literally)."""

    name = "one-element-as-scalar"

    def rewrite(self, k, node, body, before, after):
        def one(v):
            dims = v.type.tensor_type.shape.dim
            return v.type.tensor_type.HasField("shape") and [d.dim_value for d in dims] == [1]
        self._prepend(body, [v.name for v in body.input[:2] if one(v)], [])


class UnknownRankFlattened(_LoopRewrite):
    """A Loop body's carried inputs declared with no shape (unknown rank) arrive flattened
    to one dimension (a runtime that assumes rank 1 when none is declared)."""

    name = "unknown-rank-flattened"

    def rewrite(self, k, node, body, before, after):
        unknown = [b_in.name for _, _, b_in in self._carried(node, body, "tensor_type")
                   if not b_in.type.tensor_type.HasField("shape")]
        self._prepend(body, unknown, [-1])


class SleepsOnLoop:
    """Correct (lazyloop's frontend) except that it sleeps `seconds` on every model with a
    Loop (`carried_only`: with a Loop that carries a value): a backend that hangs. Each model it is given is noted as one line in `log` (a file:
    the backend runs in a child process)."""

    name = "sleeps-on-loop"
    format = "onnx"
    formats = ("onnx",)

    def __init__(self, log, seconds=60.0, carried_only=False):
        self.log, self.seconds, self.carried_only = log, seconds, carried_only
        self.inner = dt.backend("lazyloop")

    def run(self, model, feeds):
        import time
        with open(self.log, "a") as f:
            f.write(f"{len(model.graph.node)}\n")
        if any(n.op_type == "Loop" and (len(n.input) > 2 or not self.carried_only)
               for n in model.graph.node):
            time.sleep(self.seconds)
        return self.inner.run(model, feeds)


class SlowLoopPlusOne:
    """Every ONNX Loop runs one trip too many, and every model takes `seconds` (a slow
    backend: its shrinking is long enough to be interrupted)."""

    name = "slow-loop-plus-one"
    format = "onnx"
    formats = ("onnx",)

    def __init__(self, seconds=0.3):
        self.seconds = seconds
        self.inner = loop_plus_one()

    def run(self, model, feeds):
        import time
        time.sleep(self.seconds)
        return self.inner.run(model, feeds)


def needs_openvino():
    """A backend factory whose package is missing: what `--backend openvino` meets where
    OpenVINO is not installed."""
    raise ModuleNotFoundError("No module named 'openvino'", name="openvino")


# ------------------------------------------------------------------------------------------
# Planted faults in the corners exporters hit (issue 22 point 2): each one's kind shows only
# in programs of its corner. They rewrite the model (or the answer) and run it on lazyloop's
# own evaluator.
# ------------------------------------------------------------------------------------------

def _types(model):
    """{value name: elem type} of a model's values, by ONNX's inference (bodies too)."""
    import onnx
    inferred = onnx.shape_inference.infer_shapes(model)
    types = {}

    def walk(graph):
        for vi in list(graph.input) + list(graph.output) + list(graph.value_info):
            types[vi.name] = vi.type.tensor_type.elem_type
        for node in graph.node:
            for a in node.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    walk(a.g)
    walk(inferred.graph)
    return types


class Int64KeptIn32Bits(_LoopRewrite):
    """An engine that keeps a Loop's int64 carried values in 32 bits: each enters every trip
    (and leaves the loop) cast through int32, so values past 2^31 wrap."""

    name = "int64-kept-in-32-bits"

    def run(self, model, feeds):
        self.types = _types(model)
        return super().run(model, feeds)

    def rewrite(self, k, node, body, before, after):
        from onnx import TensorProto, helper
        wide = [b_in.name for b_in in body.input[2:] if
                self.types.get(b_in.name) == TensorProto.INT64]
        self._before_use(body, wide, self._narrowed)
        for j, out in enumerate(node.output[:len(node.input) - 2]):
            if self.types.get(out) == TensorProto.INT64:
                node.output[j] = f"__wide_{k}_{j}"
                after += [helper.make_node("Cast", [node.output[j]], [f"__narrow_{k}_{j}"],
                                           to=TensorProto.INT32),
                          helper.make_node("Cast", [f"__narrow_{k}_{j}"], [out],
                                           to=TensorProto.INT64)]

    @staticmethod
    def _narrowed(hidden, name):
        from onnx import TensorProto, helper
        return [helper.make_node("Cast", [hidden], [hidden + "_32"], to=TensorProto.INT32),
                helper.make_node("Cast", [hidden + "_32"], [name], to=TensorProto.INT64)]


class IterationWrappedAt2p15(_LoopRewrite):
    """An engine that keeps a Loop's iteration number in 16 signed bits: the body reads it
    modulo 2^15 (trip 32768 reads 0)."""

    name = "iteration-wrapped-at-2^15"

    def rewrite(self, k, node, body, before, after):
        import numpy as np
        from onnx import helper, numpy_helper

        def wrapped(hidden, name):
            return [helper.make_node("Constant", [], [hidden + "_m"],
                                     value=numpy_helper.from_array(np.array(2 ** 15, np.int64),
                                                                   hidden + "_mv")),
                    helper.make_node("Mod", [hidden, hidden + "_m"], [name])]
        self._before_use(body, [body.input[0].name], wrapped)


class ConstantLoopsFoldedWithoutCondition(_LoopRewrite):
    """A constant folder that unrolls a Loop whose trip count and condition are constants
    (Constant nodes or initializers) M times, forgetting the condition: the loop runs M trips
    even when its condition stops it earlier."""

    name = "constant-loops-folded-without-condition"

    def run(self, model, feeds):
        """What the folder knows to be constant: Constant nodes, initializers, the Shape of an
        input of static shape, and every node (not a Loop) reading only constants."""
        g = model.graph
        static = {vi.name for vi in g.input if all(
            d.HasField("dim_value") for d in vi.type.tensor_type.shape.dim)}
        known = {i.name for i in g.initializer}
        for n in g.node:
            if n.op_type == "Constant" or (n.op_type == "Shape" and n.input[0] in static) or (
                    n.op_type != "Loop" and n.input and all(x in known for x in n.input)):
                known |= set(n.output)
        self.constants = known
        return super().run(model, feeds)

    def rewrite(self, k, node, body, before, after):
        m, cond = node.input[0], node.input[1]
        if m in self.constants and cond in self.constants:
            node.input[1] = ""  # lazyloop's default A15 reading: the body's condition ignored


class _Inner:
    format = "onnx"
    formats = ("onnx",)

    def __init__(self):
        self.inner = dt.backend("lazyloop")


class HalfComputedInFloat32(_Inner):
    """An engine that computes float16 models in float32 between nodes: every float16 value
    is widened (inputs, constants, casts), and only the outputs are rounded back to float16."""

    name = "half-computed-in-float32"

    def run(self, model, feeds):
        import numpy as np
        import onnx
        from onnx import TensorProto, numpy_helper
        model = onnx.ModelProto.FromString(model.SerializeToString())
        half = {o.name for o in model.graph.output
                if o.type.tensor_type.elem_type == TensorProto.FLOAT16}

        def widen_type(vi):
            if vi.type.tensor_type.elem_type == TensorProto.FLOAT16:
                vi.type.tensor_type.elem_type = TensorProto.FLOAT

        def walk(graph):
            for vi in list(graph.input) + list(graph.output) + list(graph.value_info):
                widen_type(vi)
            for t in graph.initializer:
                if t.data_type == TensorProto.FLOAT16:
                    t.CopyFrom(numpy_helper.from_array(
                        numpy_helper.to_array(t).astype(np.float32), t.name))
            for node in graph.node:
                for a in node.attribute:
                    if a.type == onnx.AttributeProto.GRAPH:
                        walk(a.g)
                    elif a.name == "to" and a.i == TensorProto.FLOAT16:
                        a.i = TensorProto.FLOAT
                    elif a.type == onnx.AttributeProto.TENSOR and \
                            a.t.data_type == TensorProto.FLOAT16:
                        a.t.CopyFrom(numpy_helper.from_array(
                            numpy_helper.to_array(a.t).astype(np.float32), a.t.name))
        walk(model.graph)
        wide = {k: (v.astype(np.float32) if getattr(v, "dtype", None) == np.float16 else v)
                for k, v in feeds.items()}
        out = self.inner.run(model, wide)
        return {k: (v.astype(np.float16) if k in half else v) for k, v in out.items()}


class EmptyAsOneRow(_Inner):
    """An engine that never returns an empty tensor: an output with a zero extent comes back
    with one row of zeros there (zero-trip scan outputs of 1 row)."""

    name = "empty-as-one-row"

    def run(self, model, feeds):
        import numpy as np
        out = self.inner.run(model, feeds)
        return {k: (np.zeros(tuple(d or 1 for d in v.shape), v.dtype)
                    if isinstance(v, np.ndarray) and v.size == 0 and v.ndim else v)
                for k, v in out.items()}


class ScalarAsOneElement(_Inner):
    """An engine that returns 0-D outputs with shape [1]."""

    name = "scalar-as-one-element"

    def run(self, model, feeds):
        import numpy as np
        out = self.inner.run(model, feeds)
        return {k: (v.reshape(1) if isinstance(v, np.ndarray) and v.ndim == 0 else v)
                for k, v in out.items()}


class RenamesInputs(_Inner):
    """An engine that renames graph inputs whose names hold characters other than letters,
    digits and '_' (as some converters make them identifiers): fed by their names, such
    inputs are unknown to it and never arrive."""

    name = "renames-inputs"

    def run(self, model, feeds):
        import re

        import onnx
        model = onnx.ModelProto.FromString(model.SerializeToString())
        plain = {}
        for vi in model.graph.input:
            new = re.sub(r"[^A-Za-z0-9_]", "_", vi.name)
            plain[vi.name] = new
        for node in model.graph.node:
            node.input[:] = [plain.get(n, n) for n in node.input]
        for vi in model.graph.input:
            vi.name = plain[vi.name]

        def inner_reads(graph):
            for node in graph.node:
                node.input[:] = [plain.get(n, n) for n in node.input]
                for a in node.attribute:
                    if a.type == onnx.AttributeProto.GRAPH:
                        inner_reads(a.g)
        for node in model.graph.node:
            for a in node.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    inner_reads(a.g)
        known = {vi.name for vi in model.graph.input}
        return self.inner.run(model, {k: v for k, v in feeds.items() if k in known})


# ------------------------------------------------------------------------------------------
# Planted faults with one symptom each (issue 21): whatever program meets them, they show the
# same kind of difference, so each must give one root cause.
# ------------------------------------------------------------------------------------------

def _add_one(value):
    """`value` + 1 in its own dtype (integers wrap), element by element in a sequence; bool,
    float16 (whose large values cannot hold + 1) and empty optionals as they are."""
    import numpy as np
    if value is None:
        return None
    if isinstance(value, (list, tuple)):
        return [_add_one(v) for v in value]
    value = np.asarray(value)
    if value.dtype in (np.bool_, np.float16):
        return value
    with np.errstate(over="ignore"):
        return (value + np.ones((), value.dtype)).astype(value.dtype)


class AddsOne:
    """Correct (lazyloop's own frontend) except that 1 is added to every output (but bool and
    float16 ones): one fault, shown as a constant offset by whatever program meets it."""

    name = "adds-one"
    format = "onnx"
    formats = ("onnx",)

    def __init__(self):
        self.inner = dt.backend("lazyloop")

    def run(self, model, feeds):
        return {k: _add_one(v) for k, v in self.inner.run(model, feeds).items()}


class AddsOneToScans(AddsOne):
    """Two planted faults with different symptoms: 1 is added to every numeric output of a
    model with a Scan (a constant offset), and every float32 output of a model with a Loop
    comes back as float64 (a wrong dtype)."""

    name = "adds-one-to-scans"

    def run(self, model, feeds):
        import numpy as np
        out = self.inner.run(model, feeds)
        ops = {n.op_type for n in model.graph.node}
        if "Scan" in ops:
            out = {k: _add_one(v) for k, v in out.items()}
        if "Loop" in ops:
            out = {k: np.asarray(v, np.float64) if getattr(v, "dtype", None) == np.float32
                   else v for k, v in out.items()}
        return out


class Scan8ReadForward:
    """onnxruntime, with a planted fault in Scan 8: the `directions` attribute is dropped, so
    a reversed scan input is read forward. onnxruntime has a Scan 8 fault of its own (it
    refuses a `sequence_lens` entry of 0: A14), which the planted one must not slip into."""

    name = "onnxruntime+scan8-read-forward"
    format = "onnx"
    formats = ("onnx",)

    def __init__(self):
        self.inner = dt.backend("onnxruntime")

    def run(self, model, feeds):
        import onnx
        model = onnx.ModelProto.FromString(model.SerializeToString())
        for node in model.graph.node:
            if node.op_type == "Scan":
                kept = [a for a in node.attribute if a.name != "directions"]
                del node.attribute[:]
                node.attribute.extend(kept)
        return self.inner.run(model, feeds)


class SlowSaturatingScansPlusOne:
    """Two faults, each with one symptom, on a slow backend (0.2 s a model): integer overflow
    saturates (A30 `saturate`: a finding an ambiguity explains) and every Scan output comes
    back plus one (a finding that counts)."""

    name = "slow-saturating-scans-plus-one"
    format = "onnx"
    formats = ("onnx",)

    def __init__(self, seconds=0.2):
        self.seconds = seconds

    def run(self, model, feeds):
        import time

        import lazyloop.onnx as lo
        time.sleep(self.seconds)
        out = lo.evaluate(model, feeds, max_trips=100_000, readings={"A30": "saturate"})
        if any(n.op_type == "Scan" for n in model.graph.node):
            out = {k: _add_one(v) for k, v in out.items()}
        return out


class OpSwapped:
    """Correct (lazyloop's frontend) except that every `old` node, in any graph, computes
    `new` instead (`Max` as `Min`): a fault of one op, wherever it stands (an op fault)."""

    format = "onnx"
    formats = ("onnx",)

    def __init__(self, old="Max", new="Min", inner=None):
        self.old, self.new = old, new
        self.name = f"{old}-as-{new}"
        self.inner = inner or dt.backend("lazyloop")

    def run(self, model, feeds):
        import onnx
        model = onnx.ModelProto.FromString(model.SerializeToString())

        def swap(graph):
            for node in graph.node:
                if node.op_type == self.old:
                    node.op_type = self.new
                for a in node.attribute:
                    for g in ([a.g] if a.HasField("g") else []) + list(a.graphs):
                        swap(g)
        swap(model.graph)
        return self.inner.run(model, feeds)


class ConstantOutputsRefused:
    """`inner`, except that a model returning a `Constant`'s value through an `Identity` is
    refused (an engine that cannot return a constant of some dtype: IREE's 8-bit constants,
    IREE-11) -- a fault of its own, outside the op and the loop."""

    format = "onnx"
    formats = ("onnx",)

    def __init__(self, inner):
        self.inner = inner
        self.name = f"{inner.name}-refusing-constant-outputs"

    def run(self, model, feeds):
        made = {o for n in model.graph.node if n.op_type == "Constant" for o in n.output}
        passed = {o for n in model.graph.node if n.op_type == "Identity" and n.input[0] in made
                  for o in n.output}
        if passed & {o.name for o in model.graph.output}:
            raise RuntimeError("cannot return a constant")
        return self.inner.run(model, feeds)


def op_and_loop_faults():
    """Two planted faults: every Loop runs one trip too many, and every Max is a Min."""
    return OpSwapped(inner=dt.TripCountPlusOne(dt.backend("lazyloop")))


class WrongFromThreeTrips:
    """Correct (lazyloop's frontend) but on a Loop whose trip count is fed 3 or more: then it
    runs one trip too many (a fault that shows only for some feeds of one model)."""

    name = "wrong-from-three-trips"
    format = "onnx"
    formats = ("onnx",)

    def __init__(self):
        self.right = dt.backend("lazyloop")
        self.wrong = dt.TripCountPlusOne(self.right)

    def run(self, model, feeds):
        import numpy as np
        counts = [n.input[0] for n in model.graph.node if n.op_type == "Loop" and n.input]
        many = any(np.size(feeds.get(c, ())) and np.asarray(feeds[c]).reshape(-1)[0] >= 3
                   for c in counts)
        return (self.wrong if many else self.right).run(model, feeds)
