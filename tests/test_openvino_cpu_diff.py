"""Differential test: lazyloop against OpenVINO's CPU plugin on the same Loop-5 and
TensorIterator-1 models (lazyloop/openvino/examples.py).

The CPU plugin runs in a child process (some models crash it). Positions lazyloop marks
undefined (A3) are not compared. Every case either agrees, or is a known disagreement listed
in spec/40-openvino-lowering.md ("Disagreements with the CPU plugin") under its D-number,
with the ambiguity it comes from when there is one. A known disagreement that no longer
reproduces is skipped with a note to update the spec.
rules: openvino/loop5, openvino/tensor-iterator, openvino/slice, openvino/concat
"""
from typing import Callable, List, Optional

import attrs
import numpy as np
import pytest

ov = pytest.importorskip("openvino")

import lazyloop as ll  # noqa: E402
import lazyloop.openvino as llov  # noqa: E402
from lazyloop.openvino import examples as ex  # noqa: E402
from lazyloop.openvino.cpu import run_cases  # noqa: E402

F = np.float32
X0 = np.array([[1, 2]], F)
ROWS = np.arange(4, dtype=F).reshape(4, 1)
TI = {"X": ROWS, "H0": np.zeros((1, 1), F), "B": np.full((1, 1), 10, F)}


@attrs.frozen
class Known:
    id: str                      # D-number in spec/40-openvino-lowering.md
    kind: str                    # the classification the CPU plugin shows ("a|b": either)
    ambiguity: Optional[str]     # register ID it comes from, or None for a plugin bug


@attrs.frozen
class Case:
    id: str
    build: Callable
    feeds: List[dict]
    known: Optional[Known] = None


def _tmp(name):
    import tempfile
    return tempfile.mkdtemp(prefix="lazyloop-ov-") + "/" + name


def limits(t, c=True):
    return {"X": X0, "T": np.array(t), "C": np.array(c)}


CASES = [
    # -- agreement -----------------------------------------------------------------------------
    Case("counted", lambda: ex.counter_loop(trip=3), [{"X": X0}]),
    Case("while-minus-one", lambda: ex.counter_loop(trip=-1, limit=2), [{"X": X0}]),
    Case("both-limits", lambda: ex.counter_loop(limit=2, feed_limits=True),
         [limits(5), limits(2), limits(-3)]),
    Case("int32-one-element", lambda: ex.counter_loop(feed_limits=True, trip_dtype=np.int32,
                                                      limit_shape=(1,)),
         [{"X": X0, "T": np.array([3], np.int32), "C": np.array([True])}]),
    Case("iteration-i32-scalar", lambda: ex.counter_loop(iteration_type=ov.Type.i32,
                                                         iteration_shape=()), [{"X": X0}]),
    Case("zero-trips-fed", lambda: ex.counter_loop(feed_limits=True),
         [limits(0), limits(3, False)], Known("A3", "agree-modulo-undefined", "A3")),
    Case("constant-zero-count-computed-condition", lambda: ex.counter_loop(trip=0, limit=2),
         [{"X": X0}], Known("A3", "agree-modulo-undefined", "A3")),
    Case("scalars", ex.scalar_loop, [{"X": np.array(10, F), "T": np.array(4)}]),
    Case("scalars-zero-trips", ex.scalar_loop, [{"X": np.array(10, F), "T": np.array(0)}],
         Known("A3", "agree-modulo-undefined", "A3")),
    Case("concat-axis0", lambda: ex.scan_loop([1, 2], 0), [{"X": np.array([10, 20], F),
                                                            "T": np.array(3)}]),
    Case("concat-axis1", lambda: ex.scan_loop([2, 1], 1), [{"X": np.array([10, 20], F),
                                                            "T": np.array(3)}]),
    Case("concat-axis1-static", lambda: ex.scan_loop([2, 1], 1, feed_trip=False),
         [{"X": np.array([10, 20], F)}]),
    Case("while", ex.while_loop, [{"X": np.array(3, F), "T": np.array(-1), "C": np.array(True)},
                                  {"X": np.array(3, F), "T": np.array(3), "C": np.array(True)}]),
    Case("while-false-first", ex.while_loop,
         [{"X": np.array(3, F), "T": np.array(-1), "C": np.array(False)}]),
    Case("sliced", ex.sliced_loop, [{"X": ROWS, "T": np.array(4)},
                                    {"X": ROWS, "T": np.array(2)}]),
    Case("sliced-reversed", lambda: ex.sliced_loop(start=-1, stride=-1, end=0),
         [{"X": ROWS, "T": np.array(4)}]),
    Case("sliced-part2", lambda: ex.sliced_loop(stride=2, part=2, with_cat=False),
         [{"X": ROWS, "T": np.array(2)}]),
    Case("sliced-reversed-part2", lambda: ex.sliced_loop(start=-1, stride=-2, part=2, end=0,
                                                         with_cat=False),
         [{"X": ROWS, "T": np.array(2)}]),
    Case("sliced-stride2-part1", lambda: ex.sliced_loop(stride=2, part=1),
         [{"X": ROWS, "T": np.array(2)}]),
    Case("sliced-past-the-end", ex.sliced_loop, [{"X": ROWS, "T": np.array(6)}]),
    Case("ti", ex.tensor_iterator, [TI]),
    Case("ti-reversed", lambda: ex.tensor_iterator(start=-1, stride=-1, end=0), [TI]),
    Case("ti-part2", lambda: ex.tensor_iterator(rows=6, stride=2, part=2),
         [{"X": np.arange(6, dtype=F).reshape(6, 1), "H0": np.zeros((2, 1), F),
           "B": np.full((1, 1), 10, F)}]),
    Case("ti-dynamic", lambda: ex.tensor_iterator(dynamic_rows=True), [dict(TI, X=ROWS[:2])]),
    Case("nested", ex.nested_loop, [{"X": np.array([[1, 2], [3, 4], [5, 6]], F)}]),
    Case("nested-inner-zero", lambda: ex.nested_loop(0),
         [{"X": np.array([[1, 2], [3, 4], [5, 6]], F)}]),
    Case("onnx-reader-loop", lambda: ex.onnx_loop(_tmp("loop.onnx")),
         [{"M": np.array(4), "C": np.array(True), "Y": np.array([1, 2], F)}]),
    Case("onnx-reader-loop-false-first", lambda: ex.onnx_loop(_tmp("loop.onnx")),
         [{"M": np.array(-1), "C": np.array(False), "Y": np.array([1, 2], F)}]),
    # -- known disagreements (spec/40-openvino-lowering.md) --------------------------------------
    Case("D1-constant-zero-count", lambda: ex.counter_loop(trip=0), [{"X": X0}],
         Known("D1", "cpu-crashes", None)),
    Case("D2-constant-false-condition", lambda: ex.counter_loop(trip=3, cond=False),
         [{"X": X0}], Known("D2", "cpu-refuses-to-compile", "A22")),
    Case("D3-negative-axis-dynamic", lambda: ex.scan_loop([2, 1], -1),
         [{"X": np.array([10, 20], F), "T": np.array(3)}], Known("D3", "differs", None)),
    Case("D3-negative-axis-static", lambda: ex.scan_loop([2, 1], -1, feed_trip=False),
         [{"X": np.array([10, 20], F)}], Known("D3", "cpu-fails", None)),
    # the unnormalised axis reads past its buffer: the plugin fails, returns garbage, or
    # (seen on a loaded machine) dies of SIGSEGV in its worker process
    Case("D3-negative-axis-first", lambda: ex.scan_loop([1, 2], -2),
         [{"X": np.array([10, 20], F), "T": np.array(3)}],
         Known("D3", "cpu-fails|differs|cpu-crashes", None)),
    Case("D4-stale-after-zero-trips", lambda: ex.counter_loop(feed_limits=True),
         [limits(3), limits(0)], Known("D4", "differs", None)),
    Case("D4-stale-onnx-reader-loop", lambda: ex.onnx_loop(_tmp("loop.onnx")),
         [{"M": np.array(4), "C": np.array(True), "Y": np.array([1, 2], F)},
          {"M": np.array(-1), "C": np.array(False), "Y": np.array([1, 2], F)}],
         Known("D4", "differs", None)),
    Case("D5-slice-start-ignored-loop", lambda: ex.sliced_loop(start=1),
         [{"X": ROWS, "T": np.array(3)}], Known("D5", "differs", None)),
    Case("D5-slice-start-ignored-ti", lambda: ex.tensor_iterator(start=1), [TI],
         Known("D5", "differs", None)),
    Case("D5-slice-start-ignored-reversed", lambda: ex.sliced_loop(start=-2, stride=-1, end=0),
         [{"X": ROWS, "T": np.array(3)}], Known("D5", "differs", None)),
    Case("D6-slice-end-inclusive", lambda: ex.tensor_iterator(start=1, end=2), [TI],
         Known("D6", "cpu-refuses-to-compile", "A20")),
    Case("D7-overlapping-chunks", lambda: ex.sliced_loop(stride=1, part=2, with_cat=False),
         [{"X": ROWS, "T": np.array(3)}], Known("D7", "differs", "A23")),
    Case("D7-gapped-chunks", lambda: ex.sliced_loop(stride=3, part=1, with_cat=False),
         [{"X": ROWS, "T": np.array(2)}], Known("D7", "cpu-fails", "A23")),
    Case("D8-concat-wide-result", lambda: ex.counter_loop(trip=3, concat_axis=1), [{"X": X0}],
         Known("D8", "cpu-refuses-to-compile", None)),
    Case("D8-concat-wide-result-dynamic", lambda: ex.sliced_loop(stride=2, part=2),
         [{"X": ROWS, "T": np.array(2)}], Known("D8", "cpu-fails", None)),
    Case("D9-ti-zero-chunks", lambda: ex.tensor_iterator(dynamic_rows=True),
         [dict(TI, X=np.zeros((0, 1), F))], Known("D9", "cpu-fails", "A5")),
]

BOTH_REFUSE_OK = {"sliced-past-the-end"}  # A24 default "error": both sides fail


@pytest.fixture(scope="module")
def cpu_results():
    results = run_cases([(case.build(), case.feeds) for case in CASES])
    return {case.id: r for case, r in zip(CASES, results)}


def lazyloop_side(model, feeds):
    try:
        r = llov.run(model, feeds)
        return r.outputs, r.defined, None
    except ll.LazyLoopError as exc:
        return None, None, exc


def compare(outputs, defined, cpu_arrays):
    """'agree', 'agree-modulo-undefined' or 'differs: ...'."""
    undefined_seen = False
    for (name, want), got in zip(outputs.items(), cpu_arrays):
        mask = defined[name]
        if got.shape != want.shape or got.dtype != want.dtype:
            return f"differs: {name} is {got.dtype}{list(got.shape)} on CPU, " \
                   f"{want.dtype}{list(want.shape)} in lazyloop"
        if not mask.all():
            undefined_seen = True
        a, b = want[mask], got[mask]
        same = np.allclose(a, b, rtol=1e-5, atol=1e-6, equal_nan=True) \
            if want.dtype.kind == "f" else np.array_equal(a, b)
        if not same:
            return f"differs: {name} is {got.tolist()} on CPU, {want.tolist()} in lazyloop"
    return "agree-modulo-undefined" if undefined_seen else "agree"


def classify(case, cpu):
    """The first way the CPU plugin and lazyloop part, over the case's feed sets."""
    model = case.build()
    if cpu.status == "crash":
        return "cpu-crashes", cpu.message
    if cpu.status == "timeout":
        return "cpu-hangs", cpu.message
    results = []
    for k, feeds in enumerate(case.feeds):
        outputs, defined, err = lazyloop_side(model, feeds)
        if cpu.status == "compile-error":
            results.append(("both-refuse" if err else "cpu-refuses-to-compile", cpu.message))
            continue
        run = cpu.runs[k]
        if err is not None:
            results.append(("both-refuse" if run.status != "ok" else "lazyloop-refuses", str(err)))
        elif run.status != "ok":
            results.append(("cpu-fails", run.message))
        else:
            verdict = compare(outputs, defined, run.outputs)
            results.append((verdict.split(":")[0], verdict))
    for kind, detail in results:
        if kind not in ("agree", "agree-modulo-undefined"):
            return kind, detail
    kinds = {kind for kind, _ in results}
    return ("agree-modulo-undefined" if "agree-modulo-undefined" in kinds else "agree"), ""


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_against_cpu_plugin(case, cpu_results):
    kind, detail = classify(case, cpu_results[case.id])
    known = case.known
    if known is None:
        allowed = {"agree", "both-refuse"} if case.id in BOTH_REFUSE_OK else {"agree"}
        assert kind in allowed, f"new disagreement with the CPU plugin ({kind}): {detail}"
        return
    if kind == "agree":
        pytest.skip(f"{known.id} no longer reproduces on OpenVINO {ov.__version__}: "
                    "update spec/40-openvino-lowering.md")
    assert kind in known.kind.split("|"), f"{known.id}: expected {known.kind}, saw {kind}: {detail}"


def test_every_disagreement_names_its_ambiguity_or_none():
    # the report: each known disagreement is either a plugin bug (None) or a register entry
    from lazyloop.core.ambiguity import REGISTER
    for case in CASES:
        if case.known and case.known.ambiguity:
            assert case.known.ambiguity in REGISTER


# -- OpenVINO's reference implementation (the Loop node's own evaluate) ------------------------

def reference_loop(model, feeds):
    """Run the model's Loop node through OpenVINO's reference implementation (Node.evaluate
    of the Loop itself): inputs in the Loop's input order."""
    loop = next(n for n in model.get_ordered_ops() if n.get_type_name() == "Loop")
    params = {p.get_friendly_name(): p for p in model.get_parameters()}
    inputs = []
    for v in loop.input_values():
        node = v.get_node()
        if node.get_type_name() == "Parameter":
            inputs.append(ov.Tensor(np.asarray(feeds[node.get_friendly_name()])))
        else:
            inputs.append(ov.Tensor(np.asarray(node.get_data())))
    assert params
    outputs = [ov.Tensor(loop.get_output_element_type(k), ov.Shape([0]))
               for k in range(loop.get_output_size())]
    loop.evaluate(outputs, inputs)
    return [np.array(t.data) for t in outputs]


def test_reference_implementation_agrees_on_trips():
    m = ex.counter_loop(feed_limits=True)
    got = reference_loop(m, limits(3))
    want = llov.evaluate(m, limits(3))
    for a, b in zip(got, want.values()):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("feeds", [limits(0), limits(3, False)], ids=["count-0", "false-first"])
def test_reference_implementation_refuses_zero_trips(feeds):
    # A5: OpenVINO's reference implementation refuses zero trips; lazyloop runs them by
    # default (as the CPU plugin does) and refuses them under the reading A5="refuse"
    m = ex.counter_loop(feed_limits=True)
    with pytest.raises(Exception, match="[Zz]ero count of iteration"):
        reference_loop(m, feeds)
    llov.evaluate(m, feeds)
    with pytest.raises(ll.EvaluationError):
        llov.evaluate(m, feeds, readings={"A5": "refuse"})
