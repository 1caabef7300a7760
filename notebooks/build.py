"""Build the teaching notebooks from their sources.

Each notebook is written as a jupytext percent-format source, ``notebooks/NN_name.py``: that is
the file to edit and review. ``python notebooks/build.py`` turns every source into
``NN_name.ipynb`` and executes it in a fresh kernel (outputs committed with the notebook);
``python notebooks/build.py 03`` rebuilds only the notebooks whose name starts with ``03``.

Exercise cells ship unanswered (``answer_k = ...``); the built notebooks show the learner's view.
tests/test_notebooks.py runs each source again, once as shipped (its outputs must match the
committed ones, see ``normalised_outputs``) and once with ``LAZYLOOP_SOLUTIONS`` pointing at
``solutions.py``, where every exercise must check green.
"""
from __future__ import annotations

import os
import pathlib
import re
import sys

HERE = pathlib.Path(__file__).resolve().parent
SOLUTIONS = HERE / "solutions.py"
PER_CELL_TIMEOUT = 600  # seconds: a hang guard, not a speed test (a notebook takes well under a minute)


def sources():
    """The notebook sources, in order."""
    return sorted(HERE.glob("[0-9][0-9]_*.py"))


def read_source(path):
    """The notebook a jupytext source describes (no outputs)."""
    import jupytext
    nb = jupytext.read(path)
    nb.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python",
                                 "name": "python3"}
    nb.metadata.pop("jupytext", None)
    return nb


def execute(nb, solutions: bool = False):
    """Run `nb` in a fresh kernel, in the notebooks folder, with the Agg backend; with
    `solutions`, the exercises are answered from solutions.py (LAZYLOOP_SOLUTIONS)."""
    import nbclient
    saved = {k: os.environ.get(k) for k in ("MPLBACKEND", "LAZYLOOP_SOLUTIONS", "PYTHONPATH",
                                            "LAZYLOOP_STRICT_DIAGRAMS", "LAZYLOOP_STATIC_WIDGETS")}
    os.environ["MPLBACKEND"] = "Agg"
    os.environ["LAZYLOOP_STRICT_DIAGRAMS"] = "1"   # every diagram drawn is checked (teach.layout)
    os.environ["LAZYLOOP_STATIC_WIDGETS"] = "1"    # committed notebooks show static grids
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [str(HERE.parent)] + [p for p in [saved["PYTHONPATH"]] if p])
    if solutions:
        os.environ["LAZYLOOP_SOLUTIONS"] = str(SOLUTIONS)
    else:
        os.environ.pop("LAZYLOOP_SOLUTIONS", None)
    try:
        client = nbclient.NotebookClient(nb, timeout=PER_CELL_TIMEOUT, kernel_name="python3",
                                         resources={"metadata": {"path": str(HERE)}})
        client.execute()
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return nb


_VOLATILE = [
    (re.compile(r" at 0x[0-9a-fA-F]+"), " at 0x…"),
    (re.compile(r"<Figure size [^>]*>"), "<Figure>"),
    (re.compile(r"\d+(\.\d+)? ?(ms|µs|us|s)\b(?= *(elapsed|per|$))"), "<time>"),
]


def _normal_text(text: str) -> str:
    for pattern, replacement in _VOLATILE:
        text = pattern.sub(replacement, text)
    return "\n".join(line.rstrip() for line in text.strip().splitlines())


def normalised_outputs(nb):
    """What a cell's outputs say, comparable across runs: the text of streams, results and
    errors with addresses and timings blanked; images only by their presence."""
    cells = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        outs = []
        for out in cell.get("outputs", []):
            kind = out["output_type"]
            if kind == "stream":   # chunks of a stream may be split differently run to run
                if outs and outs[-1][0] == "stream" and outs[-1][1] == out["name"]:
                    outs[-1] = ("stream", out["name"], outs[-1][2] + out["text"])
                else:
                    outs.append(("stream", out["name"], out["text"]))
            elif kind == "error":
                outs.append(("error", out["ename"], out["evalue"]))
            else:
                data = out.get("data", {})
                images = sorted(k for k in data if k.startswith("image/"))
                if images:
                    outs.append(("image",))
                elif "text/plain" in data:
                    outs.append(("text", data["text/plain"]))
        merged = [o if o[0] == "image" else o[:-1] + (_normal_text(o[-1]),) for o in outs]
        cells.append(merged)
    return cells


def cell_sources(nb):
    """The notebook's cells as (type, source), the part that must match the .py source."""
    return [(c.cell_type, c.source.strip()) for c in nb.cells]


def build(path):
    import nbformat
    nb = execute(read_source(path))
    target = path.with_suffix(".ipynb")
    nbformat.write(nb, target)
    return target


def main(argv):
    chosen = [p for p in sources() if not argv or any(p.name.startswith(a) for a in argv)]
    for path in chosen:
        print("building", build(path).name, flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
