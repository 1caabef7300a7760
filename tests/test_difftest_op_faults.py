"""Op faults apart from loop faults: a body op that disagrees alone, outside any loop, is an op
fault -- its case is the op alone, its root cause names the op, and `--fail-on loop` leaves
it out of the verdict -- while a fault of the loop stays a loop fault (spec/51, "Op faults").
The report's `op_types` lists the op types met inside bodies.

rules: onnx/loop, onnx/node
"""
import json

import numpy as np
import pytest

pytest.importorskip("hypothesis")

import lazyloop.difftest as dt  # noqa: E402
from lazyloop.difftest.campaign import Tally, finish  # noqa: E402
from lazyloop.difftest.checking import Checker  # noqa: E402
from lazyloop.difftest.op_faults import op_fault  # noqa: E402
from lazyloop.difftest.schema import check_document, judge  # noqa: E402
from lazyloop.difftest.subject import Subject  # noqa: E402
from lazyloop.strategies.onnx_op_search import signatures  # noqa: E402
from lazyloop.strategies.onnx_schema import BodyCall, OnnxSchemaRecipe  # noqa: E402

from tests import planted  # noqa: E402


def schema_program(op: str, arity: int, sources, trips: int = 2) -> Subject:
    """A Loop of `trips` trips whose body is one call of `op` with `arity` data inputs."""
    call = next(c for c in signatures(op, 21) if len(c.data) == arity
                and c.inputs[0].dtype == "float32")
    recipe = OnnxSchemaRecipe(construct="loop", trips=trips,
                              calls=(BodyCall(call, tuple(sources), ("carried",)),))
    return Subject("onnx-schema-loop", "onnx", recipe.program())


def one_finding(subject, backend):
    """The report of a campaign that met `subject` alone (not shrunk)."""
    checker = Checker(backend)
    tally = Tally()
    tally.add(0, subject, (), checker.outcome(subject))
    report = finish(tally, checker, None, backend.name, 0, shrink_it=False)
    assert len(report.disagreements) == 1, report.summary()
    return report


def test_a_body_op_wrong_alone_is_an_op_fault_whose_case_is_the_op():
    # Max computed as Min, and every Loop one trip too long: the Max of the body is wrong
    # alone too (by hand: max(x, w) != min(x, w) where they differ), so the finding is an
    # op fault, its case the one Max node and its key names the op
    subject = schema_program("Max", 2, ("step", "fixed"))
    report = one_finding(subject, planted.op_and_loop_faults())
    d = report.disagreements[0]
    assert d.op == "Max" and d.fault == "op"
    assert [n.op_type for n in d.model.graph.node] == ["Max"]
    x0, x1 = (d.feeds[i.name] for i in d.model.graph.input)
    assert np.array_equal(d.expected["y0"], np.maximum(x0, x1))
    assert np.array_equal(d.actual["y0"], np.minimum(x0, x1))
    assert d.root_cause[1] == ("op:Max",) and d.minimising == "op-alone"
    assert d.nodes_before > d.nodes_after == 1
    summary = report.summary()
    assert "op faults (a body op disagrees alone)" in summary and "[op fault: Max]" in summary


def test_an_engine_that_cannot_return_a_constant_still_has_its_op_fault_found():
    # the control of the op alone feeds lazyloop's answer as an input: an engine refusing
    # to return a constant (IREE-11's root) would have failed a control made of a Constant,
    # and the Max it computes as Min would have stayed a loop fault
    subject = schema_program("Max", 2, ("step", "fixed"))
    report = one_finding(subject, planted.ConstantOutputsRefused(planted.op_and_loop_faults()))
    d = report.disagreements[0]
    assert d.op == "Max" and d.fault == "op"
    x0, x1 = (d.feeds[i.name] for i in d.model.graph.input)
    assert np.array_equal(d.actual["y0"], np.minimum(x0, x1))


def test_a_fault_of_the_loop_in_a_schema_body_stays_a_loop_fault():
    # every Loop one trip too long: the body's Neg alone agrees, so it is the loop's fault
    subject = schema_program("Neg", 1, ("step",))
    report = one_finding(subject, planted.op_and_loop_faults())
    d = report.disagreements[0]
    assert d.op is None and d.fault == "loop" and "Loop" in d.root_cause[1]
    assert op_fault([subject], Checker(planted.op_and_loop_faults())) is None


def test_op_faults_are_listed_apart_and_fail_on_loop_does_not_count_them():
    op = one_finding(schema_program("Max", 2, ("step", "fixed")), planted.op_and_loop_faults())
    loop = one_finding(schema_program("Neg", 1, ("step",)), planted.op_and_loop_faults())
    op.disagreements += loop.disagreements
    document = check_document(op)
    faults = {f["fault"]: f for f in document["findings"]}
    assert faults["op"]["op"] == "Max" and faults["op"]["root_cause"].startswith("onnx | op:Max |")
    assert faults["loop"]["op"] is None
    by_default = judge(json.loads(json.dumps(document)), "unexplained")
    assert by_default["verdict"]["counted"] == 2 and by_default["verdict"]["op_faults"] == 1
    loops_only = judge(json.loads(json.dumps(document)), "loop")
    assert [f["fault"] for f in loops_only["findings"] if f["counts"]] == ["loop"]
    assert loops_only["verdict"]["exit_status"] == 1


def test_the_report_lists_the_op_types_met_inside_bodies():
    # a planted loop fault on schema Loops: no finding is an op fault, and op_types holds
    # the body ops of the programs run (at least the Identity of every Loop's condition)
    report = dt.check(dt.TripCountPlusOne(dt.backend("lazyloop")), max_examples=12, seed=0,
                      kinds=["onnx-schema-loop"], shrink=False, isolate=False)
    assert report.disagreements and all(d.op is None for d in report.disagreements)
    document = check_document(report)
    assert "Identity" in document["op_types"] and len(document["op_types"]) > 5
    assert document["op_types"] == sorted(document["op_types"])
