"""The notebooks as a learner runs them: the committed ``.ipynb`` executed in a live kernel
with ipywidgets, as ``jupyter nbconvert --to notebook --execute`` does it (nbconvert's
ExecutePreprocessor, in the notebooks folder, the kernel named in the notebook), with none of
the switches notebooks/build.py sets (no ``LAZYLOOP_STATIC_WIDGETS``, no Agg backend): the
sliders of `teach.explore` are the live ones. Every other cell must show what the committed
notebook shows (text normalised, images by presence). In the same kernel, after the notebook,
each `teach.explore` cell is run again and every one of its sliders is set to each of its values,
as a learner's frontend sets them (by position): each time the forcing grid must be redrawn,
titled with the new setting, without an error.

tests/test_notebooks.py checks the committed outputs (static pictures) and the exercises."""
from __future__ import annotations

import ast
import importlib.util
import inspect
import pathlib
import re

import pytest

FOLDER = pathlib.Path(__file__).resolve().parent.parent / "notebooks"
NOTEBOOKS = sorted(FOLDER.glob("[0-9][0-9]_*.ipynb"))
SWITCHES = ("LAZYLOOP_STATIC_WIDGETS", "LAZYLOOP_SOLUTIONS", "LAZYLOOP_STRICT_DIAGRAMS",
            "MPLBACKEND")
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def _build():
    spec = importlib.util.spec_from_file_location("notebooks_build", FOLDER / "build.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def drive_every_slider(sliders):
    """Run in the kernel: move each slider of a `teach.interactive.Sliders` through all of its
    positions (the parameters' sliders, then the trace step over the last setting's trace);
    returns the titles drawn. Fails at the first position that does not redraw cleanly."""
    titles = []

    def moved(slider, position, label):
        before = sliders.drawn
        if hasattr(slider, "index"):
            slider.index = position
        else:
            slider.value = position
        assert sliders.error is None, f"{label}: {sliders.error!r}"
        assert sliders.drawn == before + 1, f"{label}: not redrawn"
        titles.append(sliders.title)

    for name, slider in sliders.controls.items():
        first = slider.index
        for position, (label, _) in enumerate(slider.options):
            if position != first:
                moved(slider, position, f"{name}={label}")
                assert f"{name}={label}" in sliders.title, sliders.title
        moved(slider, first, f"{name} back to {slider.options[first][0]}")
    for step in range(1, sliders.stepper.max + 1):
        moved(sliders.stepper, step, f"trace step {step}")
        assert f"the first {step} of {sliders.stepper.max} forcings" in sliders.title
    return titles


def _explore_cells(nb):
    """The code cells that are one `teach.explore(...)` expression (a trailing ; allowed)."""
    cells = []
    for cell in nb.cells:
        if cell.cell_type == "code" and "teach.explore(" in cell.source:
            body = ast.parse(cell.source).body
            assert len(body) == 1 and isinstance(body[0], ast.Expr), \
                "a teach.explore cell holds only the call (so this test can drive it)"
            cells.append(cell.source.strip().rstrip(";"))
    return cells


def _driving_cell(nbformat, calls):
    lines = [inspect.getsource(drive_every_slider), "_drawn = []"]
    for call in calls:
        lines += [f"_sliders = ({call})",
                  "assert type(_sliders).__name__ == 'Sliders', "
                  "f'no live sliders: {type(_sliders)}'",
                  "_drawn.append(drive_every_slider(_sliders))"]
    lines.append("print('drove', [len(t) for t in _drawn], 'redraws')")
    return nbformat.v4.new_code_cell("\n".join(lines))


@pytest.fixture
def learners_environment(monkeypatch):
    for name in SWITCHES:
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs_in_a_live_kernel_as_nbconvert_executes_it(path, learners_environment):
    nbformat = pytest.importorskip("nbformat")
    pytest.importorskip("ipywidgets")
    pytest.importorskip("matplotlib")
    preprocessors = pytest.importorskip("nbconvert.preprocessors")
    nb = nbformat.read(path, as_version=4)
    for module in ("onnxruntime", "openvino", "onnx"):
        if any(re.search(rf"^\s*(import|from)\s+{module}\b", c.source, re.M)
               for c in nb.cells if c.cell_type == "code"):
            pytest.importorskip(module)
    calls = _explore_cells(nb)
    if calls:
        nb.cells.append(_driving_cell(nbformat, calls))
    # what `jupyter nbconvert --to notebook --execute` runs: the notebook's own kernel, in
    # the notebook's folder (a hang guard, not a speed test)
    runner = preprocessors.ExecutePreprocessor(timeout=600)
    try:
        runner.preprocess(nb, {"metadata": {"path": str(FOLDER)}})
    except preprocessors.CellExecutionError as exc:
        pytest.fail(f"{path.name} fails in a live kernel:\n{str(exc)[-3000:]}")
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    # what the learner sees is what the notebook was committed with: every cell's outputs
    # (text normalised, images by presence) but the sliders', live here and static there
    build = _build()
    committed = nbformat.read(path, as_version=4)
    cells = [c for c in committed.cells if c.cell_type == "code"]
    live, saved = build.normalised_outputs(nb), build.normalised_outputs(committed)
    for cell, a, b in zip(cells, live, saved):
        if "teach.explore(" not in cell.source:
            assert a == b, \
                f"{path.name}: a live kernel shows other outputs at\n{cell.source[:300]}"
    if calls:  # the sliders were live widgets, and every position was drawn
        assert any(WIDGET_VIEW in o.get("data", {}) for o in outputs), \
            f"{path.name}: no live widget was shown"
        said = "".join(o.get("text", "") for o in nb.cells[-1].outputs)
        assert said.startswith("drove") and "[]" not in said, said


def test_sliders_label_none_and_redraw_each_setting():
    # rule: trip/count -- `count` None stands for "no COUNT": the WHILE limit alone decides n
    pytest.importorskip("ipywidgets")
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import lazyloop as ll
    from lazyloop.teach.interactive import Sliders
    from test_notebooks import _counter

    runs = []

    def run(count, limit):
        runs.append((count, limit))
        return ll.run(_counter(limit), {})

    sliders = Sliders(run, {"count": [None, 0, 2], "limit": [3, 1]})
    assert [label for label, _ in sliders.controls["count"].options] == ["no COUNT", "0", "2"]
    assert sliders.title == "count=no COUNT, limit=3" and sliders.setting() == \
        {"count": None, "limit": 3}
    titles = drive_every_slider(sliders)
    assert "count=2, limit=3" in titles and "count=no COUNT, limit=1" in titles
    # every slider went back to its first position: the step slider spans that trace
    assert sliders.setting() == {"count": None, "limit": 3}
    assert sliders.stepper.max == len(ll.run(_counter(3), {}).trace)
    assert (None, 3) in runs and (2, 3) in runs and (None, 1) in runs
