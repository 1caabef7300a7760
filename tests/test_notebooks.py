"""The teaching notebooks run from top to bottom, each in a fresh kernel, without errors.

Every notebook ends with exercises whose check cells assert against values computed without
lazyloop (by hand, plain Python or numpy) and whose cells carry a worked answer, so a clean run
also means every exercise checks green. The notebooks are committed with their outputs; the
second test keeps it so (and keeps error outputs out of the committed files).

Each notebook is executed in memory: the files are never rewritten by the test.
"""
from __future__ import annotations

import os
import pathlib
import re

import pytest

NOTEBOOKS = sorted((pathlib.Path(__file__).resolve().parent.parent / "notebooks").glob("*.ipynb"))
PER_CELL_TIMEOUT = 120  # seconds; a whole notebook takes well under a minute
OPTIONAL_IMPORTS = ("onnxruntime", "openvino", "onnx")


def _ids():
    return [p.stem for p in NOTEBOOKS]


def _code(nb) -> str:
    return "\n".join(c.source for c in nb.cells if c.cell_type == "code")


def test_there_are_notebooks():
    assert len(NOTEBOOKS) >= 7, [p.name for p in NOTEBOOKS]
    numbers = [p.name[:2] for p in NOTEBOOKS]
    assert numbers == sorted(numbers) and all(n.isdigit() for n in numbers)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids())
def test_committed_with_outputs_and_exercises(path):
    nbformat = pytest.importorskip("nbformat")
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and all(c.execution_count is not None for c in code), \
        f"{path.name}: execute the notebook and save it with its outputs"
    errors = [o for c in code for o in c.outputs if o.output_type == "error"]
    assert not errors, f"{path.name}: committed with an error output"
    text = _code(nb)
    assert "teach.check(" in text, f"{path.name}: no checked exercise"
    # every rule family the notebook teaches is cited by ID in its prose
    prose = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    assert re.search(r"`[a-z]+/[a-z0-9-]+`", prose), f"{path.name}: cites no rule ID"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids())
def test_notebook_runs_top_to_bottom(path, monkeypatch):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    pytest.importorskip("matplotlib")
    pytest.importorskip("networkx")
    nb = nbformat.read(path, as_version=4)
    source = _code(nb)
    for module in OPTIONAL_IMPORTS:
        if re.search(rf"^\s*(import|from)\s+{module}\b", source, re.M):
            pytest.importorskip(module)
    monkeypatch.setenv("MPLBACKEND", "Agg")  # the kernel inherits the environment
    client = nbclient.NotebookClient(nb, timeout=PER_CELL_TIMEOUT, kernel_name="python3",
                                     resources={"metadata": {"path": str(path.parent)}})
    client.execute()  # raises CellExecutionError, naming the cell, on the first error
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert not [o for o in cell.outputs if o.output_type == "error"], cell.source[:200]


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


def test_teach_draws_a_rejected_network():
    # rule: structure/nesting -- the picture of a network that is refused says why
    pytest.importorskip("networkx")
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    import lazyloop as ll
    from lazyloop import teach
    net = ll.Network()
    zero = net.add_constant((), np.array(0, np.float32)).get_output(0)
    two = net.add_constant((), np.array(2, np.int32)).get_output(0)
    a, b = net.add_loop(), net.add_loop()
    a.add_trip_limit(two, ll.TripLimit.COUNT)
    b.add_trip_limit(two, ll.TripLimit.COUNT)
    ra, rb = a.add_recurrence(zero), b.add_recurrence(zero)
    ra.set_input(1, net.add_elementwise(ra.get_output(0), rb.get_output(0),
                                        ll.ElementWiseOperation.SUM).get_output(0))
    rb.set_input(1, net.add_elementwise(rb.get_output(0), ra.get_output(0),
                                        ll.ElementWiseOperation.SUM).get_output(0))
    ax = teach.draw_network(net)
    assert "structure/nesting" in ax.get_title(loc="left")
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
