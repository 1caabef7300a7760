"""The tester's oracle is the reference (rules: laziness/modes, laziness/dead): a program's
expectation comes from the fast mode, every disagreement is confirmed by the reference
evaluator before it is reported, the rules a finding carries are read from the reference's
trace (never from an absent one), and a program on which the two modes differ is reported as
lazyloop's own failure."""
import numpy as np
import pytest

import lazyloop as ll
from lazyloop.core.kernel import Kernel
from lazyloop.difftest.checking import Checker
from lazyloop.difftest.subject import Subject, plan_rules
from nets import kernel_over_rows

pytest.importorskip("hypothesis")


class OffByOne:
    """A planted fault: lazyloop's own answer (mode "reference"), every float output + 1."""
    name, format = "off-by-one", "onnx"

    def run(self, model, feeds):
        import lazyloop.onnx as lo
        out = lo.run(model, feeds, mode="reference").outputs
        return {k: v + np.float32(1) if np.asarray(v).dtype.kind == "f" else v
                for k, v in out.items()}


def onnx_subject(recipe):
    from lazyloop.strategies.dialects import DialectProgram
    return Subject(recipe.kind, "onnx", DialectProgram(recipe))


def test_no_dead_value_no_laziness_dead():
    # rule: laziness/dead -- a Scan with a state and a scan output, every lowered node
    # forced: the finding does not carry laziness/dead (an untraced run is no evidence)
    pytest.importorskip("onnx")
    from lazyloop.strategies.dialects import OnnxScanRecipe
    subject = onnx_subject(OnnxScanRecipe(length=3, element=(2,), inputs=((0, 0),), states=1,
                                          outputs=(("input", 0, 0),)))
    out = Checker(OffByOne(), attribute=False).outcome(subject)
    assert out.status == "disagree"
    assert "laziness/dead" not in out.rules
    assert {"onnx/scan9", "recurrence/def", "iterator/forward"} <= out.rules
    # the expectation's own rules come from the structure alone: no laziness/dead either
    assert "laziness/dead" not in subject.expectation()[2]


def doubling_loop(unread_neg: bool):
    """Loop(M, "", x) whose body doubles x and never reads its iteration number; with
    `unread_neg` it also computes Neg(x) that nothing reads."""
    from onnx import TensorProto, helper
    f2 = [2]
    nodes = [helper.make_node("Add", ["x_in", "x_in"], ["x_out"])]
    if unread_neg:
        nodes.append(helper.make_node("Neg", ["x_in"], ["unread"]))
    body = helper.make_graph(
        nodes, "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("c", TensorProto.BOOL, []),
         helper.make_tensor_value_info("x_in", TensorProto.FLOAT, f2)],
        [helper.make_tensor_value_info("c", TensorProto.BOOL, []),
         helper.make_tensor_value_info("x_out", TensorProto.FLOAT, f2)])
    graph = helper.make_graph(
        [helper.make_node("Loop", ["M", "", "x"], ["y"], body=body)], "g",
        [helper.make_tensor_value_info("M", TensorProto.INT64, []),
         helper.make_tensor_value_info("x", TensorProto.FLOAT, f2)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, f2)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def traced_doubling(unread_neg: bool):
    import lazyloop.onnx as lo
    feeds = {"M": np.array(3, np.int64), "x": np.array([1.0, -2.0], np.float32)}
    run = lo.lower(doubling_loop(unread_neg)).run(feeds, mode="reference", trace=True)
    np.testing.assert_array_equal(run.outputs["y"], [8.0, -16.0])  # x doubled three times
    return run.evaluation


def test_an_unread_iteration_number_is_not_a_dead_computation():
    # rule: laziness/dead -- the body never reads its iteration number: the lowered counter
    # is never forced, but a counter nobody reads (a recurrence feeding only itself)
    # computes nothing a backend could get wrong: no laziness/dead
    pytest.importorskip("onnx")
    ev = traced_doubling(unread_neg=False)
    unforced = set(ev.plan.nodes) - {e.stream for e in ev.trace}
    assert any(n.endswith("/iteration") for n in unforced)  # the counter was not forced
    assert "laziness/dead" not in plan_rules(ev.plan, ev.trace)


def test_a_body_value_nobody_reads_gives_laziness_dead():
    # rule: laziness/dead -- the body also computes Neg(x) and nothing reads it: the
    # reference never forces it, and the trace says so (an untraced run is no evidence)
    pytest.importorskip("onnx")
    ev = traced_doubling(unread_neg=True)
    assert "laziness/dead" in plan_rules(ev.plan, ev.trace)
    assert "laziness/dead" not in plan_rules(ev.plan, None)


def test_a_dead_value_reaches_the_finding():
    # rule: laziness/dead -- a generated Loop whose body casts its iteration number and never
    # reads the cast: the finding carries laziness/dead
    pytest.importorskip("onnx")
    from lazyloop.strategies.dialects import OnnxLoopRecipe
    subject = onnx_subject(OnnxLoopRecipe(mode="M,cond", count=3, carried=(((2,), "half"),)))
    out = Checker(OffByOne(), attribute=False).outcome(subject)
    assert out.status == "disagree" and "laziness/dead" in out.rules and "onnx/loop" in out.rules


def test_only_a_disagreement_pays_for_the_reference():
    # rule: laziness/modes -- an agreement is never evaluated by the reference
    pytest.importorskip("onnx")
    from lazyloop.strategies.dialects import OnnxLoopRecipe

    class Same(OffByOne):
        def run(self, model, feeds):
            import lazyloop.onnx as lo
            return lo.evaluate(model, feeds)
    subject = onnx_subject(OnnxLoopRecipe(mode="M,cond", count=3, carried=(((2,), "half"),)))
    assert Checker(Same(), attribute=False).outcome(subject).status == "agree"
    assert "_confirmed" not in subject.__dict__
    Checker(OffByOne(), attribute=False).outcome(subject)
    assert "_confirmed" in subject.__dict__


class Held:
    """A core program as the tester holds one: a network, its feeds and its rules."""

    def __init__(self, net, feeds, rules=()):
        self.net, self.feeds, self.rules = net, feeds, tuple(rules)


class TheReference:
    """A backend that gives the reference evaluator's answer to a core program."""
    name, format, formats = "the-reference", "core", ("core",)

    def run(self, program, feeds):
        return ll.run(program.net, feeds, mode="reference", trace=False).outputs


def lying_batches():
    """y_t = 2 x_t over 13 rows (a run the engine batches wholly, `FEWEST_WHOLE` or more),
    by a kernel whose batched form is wrong in its middle row (the engine checks only the
    first and last): the fast mode's answer is not the reference's."""
    def wrong_in_the_middle(args, flags):
        out = np.array(args[0] * np.float32(2))
        out[len(out) // 2] += 1
        return out
    double = Kernel(lambda v: (v * np.float32(2),), batched=wrong_in_the_middle)
    return (kernel_over_rows(double, 13, 1, "Double"),
            {"x": np.arange(13, dtype=np.float32).reshape(13, 1)})


def test_modes_that_disagree_are_lazyloops_own_failure():
    # rule: laziness/modes -- the backend gives the reference's answer; the fast mode (a
    # kernel that breaks its batched form's promise) does not: confirming the disagreement
    # finds the two modes apart, and the program is reported as lazyloop's failure
    net, feeds = lying_batches()
    reference = ll.run(net, feeds, mode="reference").outputs
    assert not np.array_equal(list(ll.evaluate(net, feeds).values())[0],
                              list(reference.values())[0])  # the lie is seen by the fast mode
    subject = Subject("core", "core", Held(net, feeds))
    out = Checker(TheReference(), attribute=False).outcome(subject)
    assert out.status == "invalid" and out.internal.startswith("ModesDisagree")
    assert "laziness/modes" in out.internal


def test_a_campaign_counts_a_mode_mismatch_as_lazyloops_failure():
    # rule: laziness/modes -- the report lists it among lazyloop's own failures (exit 3)
    from lazyloop.difftest.campaign import Tally
    net, feeds = lying_batches()
    subject = Subject("core", "core", Held(net, feeds))
    tally = Tally()
    tally.add(0, subject, None, Checker(TheReference(), attribute=False).outcome(subject))
    assert tally.invalid == 1 and tally.instances == 0
    assert len(tally.internal_errors) == 1 and "ModesDisagree" in tally.internal_errors[0]["error"]


def counting_loop():
    """A loop of 4 trips whose last value is the counter after its last step: 4."""
    from nets import counted
    return counted(4)


def test_an_export_that_means_something_else_is_the_harness_fault_not_a_finding():
    # rule: onnx/loop -- the model handed to the backend is the export of the program; where
    # lazyloop's own answer on that model is not the program's (here the export's trip count
    # was changed from 4 to 5), the backend -- onnxruntime, which answers that model right
    # (5) -- is not judged: the outcome is a harness error naming the export, counted apart
    pytest.importorskip("onnxruntime")
    import lazyloop.difftest as dt
    from onnx import numpy_helper
    from lazyloop.difftest.campaign import Tally
    net = counting_loop()
    subject = Subject("core", "onnx", Held(net, {}))
    model = subject.model()
    assert list(ll.run(net, {}).outputs.values()) == [4]  # the program, by its rules
    bumped = 0
    for node in model.graph.node:  # the trip count the exporter wrote (a Constant): 4 -> 5
        value = numpy_helper.to_array(node.attribute[0].t) if node.op_type == "Constant" else None
        if value is not None and value.size == 1 and value.item() == 4:
            node.attribute[0].t.CopyFrom(numpy_helper.from_array(value + 1))
            bumped += 1
    assert bumped == 1
    assert dt.backend("onnxruntime").run(model, {})[model.graph.output[0].name] == 5
    out = Checker(dt.backend("onnxruntime"), attribute=False).outcome(subject)
    assert out.status == "harness-error", out
    assert "export" in out.error and "spec/51" in out.error
    tally = Tally()
    tally.add(0, subject, None, out)
    assert len(tally.harness_errors) == 1 and tally.instances == 0


def test_a_faithful_export_leaves_the_finding_to_the_backend():
    # rule: onnx/loop -- the same program and its unchanged export against onnxruntime with a
    # planted fault (one trip too many: 5 where the program says 4) is the backend's finding
    pytest.importorskip("onnxruntime")
    import lazyloop.difftest as dt
    subject = Subject("core", "onnx", Held(counting_loop(), {}))
    out = Checker(dt.TripCountPlusOne(dt.backend("onnxruntime")), attribute=False).outcome(subject)
    assert out.status == "disagree" and out.symptom.kind == "offset", out
