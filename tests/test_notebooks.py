"""The teaching notebooks: built from their jupytext sources, current, and answerable.

Each notebook is written as ``notebooks/NN_name.py`` (jupytext percent format) and built into
``NN_name.ipynb`` with its outputs by ``python notebooks/build.py``. Here every source is run in a
fresh kernel twice: as shipped (exercises unanswered), whose outputs must match the committed
ones (text normalised, images by presence), and with the reference answers of
notebooks/solutions.py filled in (``LAZYLOOP_SOLUTIONS``), where every exercise must check green.
Each notebook is executed in memory: the files are never rewritten by the test.
"""
from __future__ import annotations

import importlib.util
import pathlib
import re

import pytest

FOLDER = pathlib.Path(__file__).resolve().parent.parent / "notebooks"
NOTEBOOKS = sorted(FOLDER.glob("[0-9][0-9]_*.ipynb"))
SOURCES = sorted(FOLDER.glob("[0-9][0-9]_*.py"))
OPTIONAL_IMPORTS = ("onnxruntime", "openvino", "onnx")


def _build():
    spec = importlib.util.spec_from_file_location("notebooks_build", FOLDER / "build.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _ids():
    return [p.stem for p in SOURCES]


def _code(nb) -> str:
    return "\n".join(c.source for c in nb.cells if c.cell_type == "code")


def test_there_are_notebooks_each_with_its_source():
    assert len(SOURCES) >= 7, [p.name for p in SOURCES]
    numbers = [p.name[:2] for p in SOURCES]
    assert numbers == sorted(numbers) and all(n.isdigit() for n in numbers)
    assert [p.stem for p in NOTEBOOKS] == [p.stem for p in SOURCES]


@pytest.mark.parametrize("path", SOURCES, ids=_ids())
def test_committed_notebook_is_built_from_its_source(path):
    nbformat = pytest.importorskip("nbformat")
    pytest.importorskip("jupytext")
    build = _build()
    committed = nbformat.read(path.with_suffix(".ipynb"), as_version=4)
    assert build.cell_sources(committed) == build.cell_sources(build.read_source(path)), \
        f"{path.name}: the .ipynb differs from its source: run python notebooks/build.py"
    code = [c for c in committed.cells if c.cell_type == "code"]
    assert code and all(c.execution_count is not None for c in code), \
        f"{path.name}: execute the notebook and save it with its outputs"
    errors = [o for c in code for o in c.outputs if o.output_type == "error"]
    assert not errors, f"{path.name}: committed with an error output"
    prose = "\n".join(c.source for c in committed.cells if c.cell_type == "markdown")
    assert re.search(r"`[a-z]+/[a-z0-9-]+`", prose), f"{path.name}: cites no rule ID"
    assert "glossary" in prose.lower() and "you will be able to" in prose.lower(), \
        f"{path.name}: opens with what the learner will be able to do, links the glossary"


@pytest.mark.parametrize("path", SOURCES, ids=_ids())
def test_exercises_ship_unanswered(path):
    pytest.importorskip("jupytext")
    build = _build()
    nb = build.read_source(path)
    exercises = [c.source for c in nb.cells if c.cell_type == "code" and "✎" in c.source]
    assert len(exercises) >= 3, f"{path.name}: fewer than three exercises"
    for source in exercises:
        answers = re.findall(r"^answer_\w+ = (.*)$", source, re.M)
        assert answers and all(a.strip() == "..." for a in answers), source
    checks = re.findall(r"teach\.exercise\(\"(\d\d\.\d+)\"", _code(nb))
    assert len(checks) == len(exercises) and all(k.startswith(path.name[:2]) for k in checks)


def _run(path, solutions):
    nbformat = pytest.importorskip("nbformat")
    pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    pytest.importorskip("matplotlib")
    pytest.importorskip("jupytext")
    build = _build()
    nb = build.read_source(path)
    source = _code(nb)
    for module in OPTIONAL_IMPORTS:
        if re.search(rf"^\s*(import|from)\s+{module}\b", source, re.M):
            pytest.importorskip(module)
    return build, nbformat, build.execute(nb, solutions=solutions)


@pytest.mark.parametrize("path", SOURCES, ids=_ids())
def test_committed_outputs_match_a_fresh_run(path):
    build, nbformat, fresh = _run(path, solutions=False)
    committed = nbformat.read(path.with_suffix(".ipynb"), as_version=4)
    new, old = build.normalised_outputs(fresh), build.normalised_outputs(committed)
    cells = [c.source for c in fresh.cells if c.cell_type == "code"]
    for source, a, b in zip(cells, new, old):
        assert a == b, f"{path.name}: outputs are stale at the cell\n{source[:300]}\n" \
                       "rebuild with python notebooks/build.py"
    text = "\n".join(o[2] for c in new for o in c if o[0] == "stream")
    assert "not answered yet" in text and "correct: exercise" not in text


@pytest.mark.parametrize("path", SOURCES, ids=_ids())
def test_notebook_runs_with_the_solutions_filled_in(path):
    build, _, fresh = _run(path, solutions=True)
    text = "\n".join(o[2] for c in build.normalised_outputs(fresh) for o in c if o[0] == "stream")
    keys = re.findall(r"teach\.exercise\(\"(\d\d\.\d+)\"", _code(fresh))
    assert keys and all(f"correct: exercise {k}" in text for k in keys), text[-2000:]
    assert "not answered yet" not in text


def test_a_wrong_answer_gets_a_hint_naming_the_rule_not_the_value(monkeypatch):
    # rule: output/last -- exercise 01.1 expects {0, 1, 2, 3} (acc_0 ... acc_3 for n = 3)
    from lazyloop import teach
    from lazyloop.teach.exercises import EXERCISES
    monkeypatch.delenv("LAZYLOOP_SOLUTIONS", raising=False)
    with pytest.raises(AssertionError) as err:
        teach.exercise("01.1", {1, 2, 3})
    assert "`output/last`" in str(err.value) and "0, 1, 2, 3" not in str(err.value)
    assert teach.exercise("01.1", ...) is False
    assert teach.exercise("01.1", [3, 2, 1, 0]) is True
    for ex in EXERCISES.values():   # no hint gives its value away
        assert repr(ex.expected()) not in ex.hint


def test_an_answer_in_parts_hears_which_parts_are_right(monkeypatch):
    # rule: trip/while -- exercise 02.1: x = 1, 3, 9, 27, 81 are < 100 and 243 is not, so
    # n = 5, LAST_VALUE(x) = 243 and the condition is read at 0 .. 5: six elements
    from lazyloop import teach
    monkeypatch.delenv("LAZYLOOP_SOLUTIONS", raising=False)
    with pytest.raises(AssertionError) as err:
        teach.exercise("02.1", (5, 243, 5))
    said = str(err.value)
    assert "n: right; LAST_VALUE(x): right; condition elements forced: not yet." in said
    assert "`trip/while`" in said and " 6" not in said
    with pytest.raises(AssertionError, match="Answer with 3 parts"):
        teach.exercise("02.1", (5, 243))
    # A4 -- exercise 06.2: a dict is judged key by key, missing and extra keys named
    with pytest.raises(AssertionError) as err:
        teach.exercise("06.2", {"TensorRT": "error", "ONNX Loop": 1, "Scan": 0})
    said = str(err.value)
    assert "'TensorRT': right; 'ONNX Loop': not yet; 'OpenVINO Loop': missing; " \
           "'Scan': not asked." in said and "'ONNX Loop': 0" not in said
    # a shape is one answer, not parts (exercise 05.2)
    with pytest.raises(AssertionError) as err:
        teach.exercise("05.2", (7, 16))
    assert "right" not in str(err.value) and "parts" not in str(err.value)


def test_the_solutions_answer_every_exercise():
    import runpy

    from lazyloop.teach.exercises import EXERCISES
    solutions = runpy.run_path(str(FOLDER / "solutions.py"))["SOLUTIONS"]
    assert solutions.keys() == EXERCISES.keys()


# ------------------------------------------------------------------------------------------
# The helpers the notebooks lean on (lazyloop/teach.py), checked quickly and headless
# ------------------------------------------------------------------------------------------

def _counter(limit=3):
    """i = 0, 1, 2, ... with WHILE(i < limit) and LAST_VALUE(i)."""
    import numpy as np

    import lazyloop as ll
    net = ll.Network()

    def const(v):
        return net.add_constant((), np.array(v, np.int32)).get_output(0)
    loop = net.add_loop()
    rec = loop.add_recurrence(const(0))
    rec.get_output(0).name = "i"
    rec.set_input(1, net.add_elementwise(rec.get_output(0), const(1),
                                         ll.ElementWiseOperation.SUM).get_output(0))
    keep = net.add_elementwise(rec.get_output(0), const(limit), ll.ElementWiseOperation.LESS)
    keep.get_output(0).name = "keep_going"
    loop.add_trip_limit(keep.get_output(0), ll.TripLimit.WHILE)
    net.mark_output(loop.add_loop_output(rec.get_output(0), ll.LoopOutput.LAST_VALUE).get_output(0))
    return net


def test_teach_forced_and_pictures(monkeypatch):
    # rule: trip/while -- the condition is forced at 0..n, n = 3, and nothing after it
    pytest.importorskip("networkx")
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    import lazyloop as ll
    from lazyloop import teach
    net = _counter()
    ev = ll.run(net, {})
    assert teach.forced(ev, "keep_going") == [0, 1, 2, 3]
    assert teach.forced(ev, "i", activation=None) == {(): [0, 1, 2, 3]}
    assert teach.draw_network(net) is not None
    assert teach.plot_trace(ev) is not None
    assert teach.draw_plan(ev.plan) is not None
    assert "WHILE(keep_going)" in teach.outline(ev.plan)
    plt.close("all")


def test_teach_masked_and_check():
    import numpy as np

    from lazyloop import teach
    assert teach.masked(np.array([1.25, 2.0, np.nan]), [True, True, False]) == "[1.25 2.   ?   ]"
    assert teach.masked(np.array([7, -1]), [False, True]) == "[ ? -1]"
    teach.check({0, 1, 2}, {2, 1, 0})
    teach.check(([0.0, 1.0], [0.0, 1.0, 2.0]), ([0, 1], [0, 1, 2]))
    teach.check(np.array([1.0, np.nan]), np.array([1.0, np.nan]))
    with pytest.raises(teach.ExerciseNotAnswered):
        teach.check(..., 3)
    with pytest.raises(AssertionError):
        teach.check([1, 2], [1, 2, 3])
    with pytest.raises(AssertionError):
        teach.check({"a": "error"}, {"a": 0})


def test_rule_text_finds_the_spec_at_the_repo_root():
    # rule: trip/while -- the section that defines it, from spec/12-trip-limits.md
    from lazyloop import teach
    text = teach.rule_text("trip/while")
    assert text.startswith("12-trip-limits.md:") and "`trip/while`" in text
    assert "no section" in teach.rule_text("no/such-rule")


def test_explore_without_a_live_kernel_draws_a_static_grid():
    # rule: trip/while -- limit 1: i is forced at 0, 1 (n = 1); limit 3: at 0..3 (n = 3)
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    import lazyloop as ll
    from lazyloop import teach
    axes = teach.explore(lambda limit: ll.run(_counter(limit), {}), {"limit": [1, 2, 3]})
    titles = [ax.get_title(loc="left") for ax in axes.flat]
    assert titles == ["limit=1", "limit=3"]
    assert teach.forced(ll.run(_counter(1), {}), "i") == [0, 1]
    plt.close("all")


def test_saved_campaign_findings_replay_on_lazyloop():
    # rule: trip/both -- the planted Loop's minimal program (M = 2, cond true) stacks [0, 1]
    # rule: iterator/reverse -- the planted Scan reads [[-1, -.75], [-.5, -.25]] last row first
    pytest.importorskip("onnx")
    import numpy as np

    from lazyloop.teach import campaign, planted
    report = campaign.load_report(FOLDER / "data" / "planted" / "report.json")
    assert report["schema_version"] == 1 and report["backend"]["name"] == "planted-faults"
    by_construct = {f.key[1]: f for f in report.findings}
    assert set(by_construct) == {("Loop",), ("Scan",)}
    loop, scan = by_construct[("Loop",)], by_construct[("Scan",)]
    run = campaign.replay(loop)
    assert campaign.still_expected(loop, run)
    assert np.array_equal(run.outputs["s0_stacked"], np.array([0.0, 1.0], np.float32))
    actual = campaign.actual(loop, planted.two_faults())
    assert actual["s0_stacked"].tolist() == [0.0, 1.0, 2.0]   # one trip too many
    # the Scan doubles each row; reversed, lazyloop stacks row 1 then row 0
    x = np.array([[-1, -0.75], [-0.5, -0.25]], np.float32)
    assert np.array_equal(scan.feeds["x0"], x)
    assert np.array_equal(scan.expected["o0_stacked"], 2 * x[::-1])
    assert np.array_equal(campaign.actual(scan, planted.two_faults())["o0_stacked"], 2 * x)


@pytest.mark.parametrize("text, says", [
    ("not json", "not JSON"),
    ('{"findings": []}', "no schema_version"),
    ('{"schema_version": 3, "findings": []}', "schema_version is 3"),
    ('{"schema_version": 1, "command": "conformance", "backend": {}, "seed": null, '
     '"programs": {}, "outcomes": {}, "findings": []}', "not a `lazyloop check` report"),
])
def test_a_file_that_is_not_a_check_report_is_refused_clearly(tmp_path, text, says):
    from lazyloop.core.errors import LazyLoopError
    from lazyloop.teach import campaign
    path = tmp_path / "report.json"
    path.write_text(text)
    with pytest.raises(LazyLoopError) as info:
        campaign.load_report(path)
    assert says in str(info.value) and "report.json" in str(info.value)
    with pytest.raises(campaign.ReportError, match="cannot read"):
        campaign.load_report(tmp_path / "missing.json")
