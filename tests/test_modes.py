"""One `mode` chooses the evaluator, and every mode gives the reference's answer (rule:
laziness/modes, spec/14-laziness.md): generated programs of every kind -- core programs,
ONNX Loop / Scan 9 / Scan 8 (and the other ONNX recipes) and OpenVINO Loop-5 -- are evaluated
in every mode and their outputs, defined masks and errors (class and rule) compared, except
exactly where spec/14 lets them differ. The reference stands alone: it evaluates the
hand-computed conformance cases with the engine made unimportable."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import given

import lazyloop as ll
from lazyloop.core.evaluate import MODES
from lazyloop.strategies import networks
from nets import SUM, const, counted, last

OTHERS = tuple(m for m in MODES if m != "reference")


# ------------------------------------------------------------------------------------------
# The argument
# ------------------------------------------------------------------------------------------

def test_the_engine_has_one_option_set_per_mode():
    # rule: laziness/modes -- the modes are the reference and the engine's options
    from lazyloop.core.engine import OPTIONS
    assert set(OPTIONS) == set(MODES) - {"reference"}


@pytest.mark.parametrize("mode", MODES)
def test_every_mode_evaluates_and_runs(mode):
    # rule: laziness/modes -- 5 trips of i += 1: 5, in every mode
    (value,) = ll.evaluate(counted(5), {}, mode=mode).values()
    assert int(value) == 5
    result = ll.run(counted(5), {}, mode=mode, trace=mode == "reference")
    assert int(list(result.outputs.values())[0]) == 5 and result.mode == mode
    assert (result.trace is None) == (mode != "reference")


def test_run_defaults_follow_the_trace():
    # rule: laziness/modes -- with a trace the reference, without one the fast path; an
    # untraced run has no trace (None), which is not a run that forced nothing ([])
    assert ll.run(counted(5), {}).mode == "reference"
    untraced = ll.run(counted(5), {}, trace=False)
    assert untraced.mode == "fast" and untraced.trace is None
    assert ll.run(counted(5), {}, trace=False, mode="reference").trace is None


@pytest.mark.parametrize("bad", ["quick", "", 3, "Reference"])
def test_a_bad_mode_is_refused(bad):
    # rule: laziness/modes
    for call in (lambda: ll.evaluate(counted(5), {}, mode=bad),
                 lambda: ll.run(counted(5), {}, mode=bad)):
        with pytest.raises(ll.InputError) as info:
            call()
        assert info.value.rule == "laziness/modes" and info.value.where == "mode"
        assert "reference" in info.value.fix


@pytest.mark.parametrize("mode", OTHERS)
def test_a_trace_is_asked_of_the_reference_only(mode):
    # rule: laziness/modes -- a trace in another mode is refused, saying what to do
    for trace in (True, 10, []):
        with pytest.raises(ll.InputError) as info:
            ll.run(counted(5), {}, trace=trace, mode=mode)
        assert info.value.rule == "laziness/modes" and "trace" in str(info.value)
        assert 'mode="reference"' in info.value.fix


def test_the_frontends_take_a_mode():
    # rule: laziness/modes -- lazyloop.onnx and lazyloop.openvino evaluate in every mode
    onnx = pytest.importorskip("onnx")
    import lazyloop.onnx as lo
    from lazyloop.strategies.dialects import OnnxLoopRecipe
    model, feeds = OnnxLoopRecipe(mode="M,cond", count=3, carried=(((2,), "half"),)).build()
    answers = [lo.evaluate(model, feeds, mode=m) for m in MODES]
    runs = [lo.run(model, feeds, mode=m, trace=m == "reference") for m in MODES]
    for a, r in zip(answers, runs):
        assert same_values(a, answers[0]) and same_values(r.outputs, answers[0])
    assert [r.evaluation.mode for r in runs] == list(MODES)
    with pytest.raises(ll.InputError):
        lo.run(model, feeds, trace=True, mode="fast")
    with pytest.raises(ll.InputError):
        lo.evaluate(model, feeds, mode="slow")
    assert onnx


# ------------------------------------------------------------------------------------------
# The law
# ------------------------------------------------------------------------------------------

def same_values(a, b) -> bool:
    """Equal outputs: arrays of one dtype and shape with equal values (NaN equal to NaN, so
    that filled undefined positions compare), lists element by element, None as None."""
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same_values(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(map(same_values, a, b))
    if a is None or b is None:
        return a is None and b is None
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype == object:
        return all(same_values(x, y) for x, y in zip(a.ravel(), b.ravel()))
    return np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")


def outcome(evaluate):
    """("answer", outputs, defined) or ("error", class, rule, the error)."""
    try:
        with np.errstate(all="ignore"):
            result = evaluate()
    except ll.LazyLoopError as error:
        return ("error", type(error), error.rule, error)
    return ("answer", result.outputs, result.defined)


def settled(plan, feeds, mode, readings=None):
    """Whether the engine in `mode`, evaluating again, ends some loop early at a fixed point
    (`laziness/fixed-point`), by its log of schedule runs."""
    def ask():
        from lazyloop.core.engine import OPTIONS, EngineMachine
        from lazyloop.core.evaluate import check_feeds
        machine = EngineMachine(plan, check_feeds(plan, feeds), readings=readings,
                                options=OPTIONS[mode], log=[])
        with np.errstate(all="ignore"):
            for _, nid in plan.outputs:
                machine.demand(nid)
        return any(run.settled for run in machine.log)
    return ask


def meets(reference_alone, error) -> bool:
    """The reference, forcing the outputs one at a time (each on a fresh machine), meets an
    error of `error`'s class and rule at one of them."""
    return any(type(e) is type(error) and e.rule == error.rule for e in reference_alone())


def check_law(reference, other, reference_alone, engine_settled):
    """Mode law for one program: `other` is the reference's answer, or differs only where
    spec/14 (`laziness/modes`) says it may:

    1. the reference runs into the fuel (`FuelExhausted`, not `NeverEnds`) where the engine,
       seeing a fixed point, answers or says the loop never ends (`NeverEnds`);
    2. both fail, and the engine's error is one the reference meets too when it forces the
       outputs one at a time: of several failing elements, another is met first.
    """
    if reference[0] == "answer" and other[0] == "answer":
        assert same_values(other[1], reference[1]), "the outputs differ"
        assert same_values(other[2], reference[2]), "the defined masks differ"
        return "same"
    if reference[0] == "error" and other[0] == "error" and reference[1:3] == other[1:3]:
        return "same"
    if (reference[0] == "error" and reference[1] is ll.FuelExhausted
            and (other[0] == "error" and other[1] is ll.NeverEnds
                 or other[0] == "answer" and engine_settled())):
        return "fixed point"
    if reference[0] == "error" and other[0] == "error" and meets(reference_alone, other[3]):
        return "another failing element first"
    raise AssertionError(f"the modes disagree: reference {reference[:3]}, other {other[:3]}")


def core_alone(plan, feeds):
    """The reference's error at each output forced alone (`check_law`, exception 2)."""
    def errors():
        from lazyloop.core.evaluate import Machine, check_feeds
        found = []
        for _, nid in plan.outputs:
            try:
                with np.errstate(all="ignore"):
                    Machine(plan, check_feeds(plan, feeds)).demand(nid)
            except ll.LazyLoopError as error:
                found.append(error)
        return found
    return errors


@given(networks())
def test_every_mode_gives_the_reference_answer_on_core_programs(program):
    # rule: laziness/modes -- generated core programs (nested loops, conditionals, undefined
    # values among them), every mode against the reference
    plan = ll.compile_network(program.net)
    reference = outcome(lambda: ll.run(plan, program.feeds, mode="reference", trace=False))
    for mode in OTHERS:
        other = outcome(lambda: ll.run(plan, program.feeds, mode=mode, trace=False))
        check_law(reference, other, core_alone(plan, program.feeds),
                  settled(plan, program.feeds, mode))


def dialect_law(program, frontend):
    from lazyloop.core.export import TargetRefused
    try:
        model = program.model
    except TargetRefused:  # the library refused to build this program: nothing to evaluate
        return
    try:  # a model lazyloop refuses before evaluating it is no test of the modes
        lowered = frontend.lower(model)
        plan = ll.compile_network(lowered.network)
        core_feeds = lowered.core_feeds(program.feeds)
    except ll.LazyLoopError:
        return
    reference = outcome(lambda: lowered.run(program.feeds, mode="reference"))
    for mode in OTHERS:
        check_law(reference, outcome(lambda: lowered.run(program.feeds, mode=mode)),
                  core_alone(plan, core_feeds), settled(plan, core_feeds, mode))


def onnx_kinds():
    """Every ONNX kind of program the strategies draw (none without hypothesis and onnx)."""
    try:
        from lazyloop.strategies.dialects import ONNX_KINDS
    except ImportError:
        return []
    return sorted(ONNX_KINDS)


@pytest.mark.parametrize("kind", onnx_kinds())
def test_every_mode_gives_the_reference_answer_on_onnx_programs(kind):
    # rule: laziness/modes, onnx/loop, onnx/scan9, onnx/scan8 -- every ONNX recipe kind
    pytest.importorskip("onnx")
    import lazyloop.onnx as lo
    from lazyloop.strategies.dialects import ONNX_KINDS

    @given(ONNX_KINDS[kind]())
    def law(program):
        dialect_law(program, lo)
    law()


def test_every_mode_gives_the_reference_answer_on_openvino_programs():
    # rule: laziness/modes, openvino/loop5 -- OpenVINO Loop-5 recipes (every port kind)
    pytest.importorskip("openvino")
    import lazyloop.openvino as llov
    from lazyloop.strategies.dialects import openvino_loops

    @given(openvino_loops())
    def law(program):
        dialect_law(program, llov)
    law()


def test_the_exceptions_are_met_and_no_others():
    # rule: laziness/modes, laziness/fixed-point -- exception 1 is met (y = min(y + 1, 3)
    # WHILE y < 10: the reference runs into the fuel, the engine says it never ends), and an
    # ordinary disagreement is not excused by either exception
    net = ll.Network()
    loop = net.add_loop()
    y = loop.add_recurrence(const(net, 0.0, np.float32))
    step = net.add_elementwise(y.get_output(0), const(net, 1.0, np.float32), SUM).get_output(0)
    y.set_input(1, net.add_elementwise(step, const(net, 3.0, np.float32),
                                       ll.ElementWiseOperation.MIN).get_output(0))
    loop.add_trip_limit(net.add_elementwise(y.get_output(0), const(net, 10.0, np.float32),
                                            ll.ElementWiseOperation.LESS).get_output(0),
                        ll.TripLimit.WHILE)
    net.mark_output(last(loop, y.get_output(0)))
    plan = ll.compile_network(net)
    reference = outcome(lambda: ll.run(plan, {}, max_trips=500, trace=False, mode="reference"))
    fast = outcome(lambda: ll.run(plan, {}, max_trips=500, trace=False))
    assert reference[1] is ll.FuelExhausted and fast[1] is ll.NeverEnds
    assert check_law(reference, fast, core_alone(plan, {}),
                     settled(plan, {}, "fast")) == "fixed point"
    answer = ("answer", {"y": np.float32(3)}, {"y": np.bool_(True)})
    counts = ll.compile_network(counted(5))
    with pytest.raises(AssertionError):  # a value where the reference fails, no fixed point
        check_law(outcome(lambda: ll.run(counts, {}, max_trips=2, trace=False,
                                         mode="reference")), answer, lambda: [],
                  settled(counts, {}, "fast"))
    with pytest.raises(AssertionError):  # an error the reference never meets
        other = ("error", ll.IteratorOutOfBounds, "iterator/bounds",
                 ll.IteratorOutOfBounds("x", "iterator/bounds", "made up"))
        check_law(("error", ll.LengthTooShort, "output/concat", None), other, lambda: [],
                  lambda: False)


# ------------------------------------------------------------------------------------------
# The reference stands alone
# ------------------------------------------------------------------------------------------

ALONE = textwrap.dedent('''
    import json, sys
    import numpy as np

    class NoEngine:
        """Refuses every module of the engine."""
        def find_spec(self, name, path=None, target=None):
            if name == "lazyloop.core.engine" or name.startswith("lazyloop.core.engine."):
                raise ImportError(f"{name} is made unimportable")
            return None

    sys.meta_path.insert(0, NoEngine())
    import lazyloop as ll
    from lazyloop.conformance.cases import CASES
    from lazyloop.core.export import NotExportable, TargetRefused

    def frontend(fmt):
        if fmt == "onnx":
            import lazyloop.onnx as f
        else:
            import lazyloop.openvino as f
        return f

    def export(net, fmt):
        if fmt == "onnx":
            from lazyloop.onnx.export import export as e
        else:
            from lazyloop.openvino.export import export as e
        return e(net)

    results = []
    for case in CASES.values():
        runs = []
        if case.format == "core":
            runs.append(("core", lambda: ll.run(case.network(), case.inputs, mode="reference")))
            native = "core"
            for fmt in sys.argv[1:]:
                try:
                    model = export(case.network(), fmt)
                except (NotExportable, TargetRefused):
                    continue
                runs.append((fmt, lambda m=model, f=fmt: frontend(f).run(
                    m, case.inputs, mode="reference")))
        elif case.format in sys.argv[1:]:
            runs.append((case.format, lambda: frontend(case.format).run(
                case.model(), case.inputs, mode="reference")))
            native = case.format
        for fmt, run in runs:
            r = run()
            ok = True
            for name, (want, mask) in case.expected_arrays().items():
                got, defined = np.asarray(r.outputs[name]), np.asarray(r.defined[name])
                ok &= got.shape == want.shape
                ok &= bool(np.allclose(got[mask], want[mask], equal_nan=True))
                if fmt == native:  # an exported model may define what the case leaves undefined
                    ok &= bool((defined == mask).all())
            results.append([case.name, fmt, ok])
    engine = sorted(m for m in sys.modules if m.startswith("lazyloop.core.engine"))
    print(json.dumps({"results": results, "engine": engine}))
''')


def test_the_reference_evaluates_without_the_engine(tmp_path):
    # rule: laziness/modes -- the hand-computed conformance cases, as core networks, exported
    # to ONNX and to OpenVINO and lowered back, and the dialect cases: mode "reference" gives
    # every hand-computed value with the engine's modules unimportable, and imports none
    formats = [f for f in ("onnx", "openvino") if _importable(f)]
    script = tmp_path / "alone.py"
    script.write_text(ALONE)
    done = subprocess.run([sys.executable, str(script), *formats], capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["engine"] == []
    failed = [r for r in report["results"] if not r[2]]
    assert failed == [] and len(report["results"]) >= 42
    assert {fmt for _, fmt, _ in report["results"]} == {"core", *formats}


def _importable(name) -> bool:
    try:
        __import__(name)
    except ImportError:
        return False
    return True


def test_the_reference_package_imports_nothing_of_the_engine():
    # rule: laziness/modes -- read from the source, imports inside functions included
    from imports import graph
    found = {m: sorted(t for t in targets if t.startswith("lazyloop.core.engine"))
             for m, targets in graph().items() if m.startswith("lazyloop.core.reference")}
    assert {m: t for m, t in found.items() if t} == {}


def situations(plan, machine) -> set:
    """What the engine's runs of a program met that its demand no longer decides alone."""
    from lazyloop.core.plan import IfOutput
    found = set()
    for loop, d in machine.scheduled_loops.items():
        if any(isinstance(n, IfOutput) for n in d.members.values()):
            found.add("an if-conditional in the loop")
        if d.outputs != frozenset(plan.loops[loop].outputs):
            found.add("outputs nobody needs left out")
        if any(len(outs) > 1 for outs in d.runs.values()):
            found.add("an inner loop's outputs made by one run")
        if plan.loops[loop].parent and plan.loops[loop].while_:
            found.add("a nested WHILE loop")
        if any(d.cond_edges.get(k) for k in d.inner):
            found.add("an inner loop reading the loop only in some runs")
        if d.chains:
            found.add("a cycle forced only on demand")
    return found


def test_the_law_holds_where_the_engine_runs_on_demand():
    # rule: laziness/modes, laziness/dead, stream/memo -- generated programs, nested two
    # deep, whose loops the engine runs with an if-conditional inside (a branch's elements
    # made on demand), with outputs nobody needs, with an inner loop's outputs made by one
    # run, nested WHILE loops, an inner loop reading the enclosing one only in some runs, a
    # cycle forced only on demand: in every mode the reference's outputs, masks and errors,
    # and in every loop the engine ran, exactly the elements the reference forced, once each
    from hypothesis import HealthCheck, settings
    from nets import on_engine
    met = set()

    @settings(max_examples=1000, database=None, derandomize=True, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(networks(max_depth=2))
    def law(program):
        plan = ll.compile_network(program.net)
        try:
            _, machine = on_engine(plan, program.feeds)
        except ll.LazyLoopError:
            return
        found = situations(plan, machine)
        if not found:
            return
        met.update(found)
        reference = ll.run(plan, program.feeds)
        for mode in OTHERS:
            other = outcome(lambda: ll.run(plan, program.feeds, mode=mode, trace=False))
            assert check_law(("answer", reference.outputs, reference.defined), other,
                             core_alone(plan, program.feeds), lambda: False) == "same"
            _, machine = on_engine(plan, program.feeds, mode=mode)
            for loop in machine.scheduled_loops:
                forced = [r if len(r) == 3 else r + ((),) for r in machine.record
                          if plan.nodes[r[0]].scope == loop]
                assert len(forced) == len(set(forced))
                assert set(forced) == {(e.stream, e.index, e.activation)
                                       for e in reference.trace if e.loop == loop}

    law()
    assert met == {"an if-conditional in the loop", "outputs nobody needs left out",
                   "an inner loop's outputs made by one run", "a nested WHILE loop",
                   "an inner loop reading the loop only in some runs",
                   "a cycle forced only on demand"}
