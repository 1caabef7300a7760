"""Sliders for the notebooks: re-run a loop with other parameters and step through its
forcing trace. In a live kernel with ipywidgets, `explore` shows sliders that redraw the
forcing grid; elsewhere (a static view of a notebook, or ``LAZYLOOP_STATIC_WIDGETS`` set, as
notebooks/build.py does so that committed notebooks show pictures) it draws a static grid of
the same plot for a few settings."""
from __future__ import annotations

import itertools
import os
from typing import Callable, Dict, Optional, Sequence

from .plots import plot_trace


def _live() -> bool:
    if os.environ.get("LAZYLOOP_STATIC_WIDGETS"):
        return False
    try:
        import ipywidgets  # noqa: F401
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


def _columns(evaluation) -> int:
    return 2 + max([e.index for e in evaluation.trace] + [0])


def explore(run: Callable[..., object], params: Dict[str, Sequence], streams=None,
            static: Optional[Sequence[dict]] = None, step: bool = True):
    """`run(**values)` returns an `Evaluation` (``ll.run``); `params` gives each parameter's
    values (the first is the starting one). Live: one slider per parameter, and one over the
    trace step (how many elements have been forced so far). Static: the forcing grid for each
    setting in `static` (default: every combination of each parameter's first and last
    value), whole traces."""
    if _live():
        return _sliders(run, params, streams, step)
    settings = list(static) if static is not None else [
        dict(zip(params, combo)) for combo in itertools.product(
            *[sorted({v[0], v[-1]}, key=list(v).index) for v in params.values()])]
    return trace_grid(run, settings, streams)


def trace_grid(run: Callable[..., object], settings: Sequence[dict], streams=None, ncols=2):
    """The forcing grid of `run(**s)` for each setting `s`, in a grid of subplots."""
    import matplotlib.pyplot as plt
    evaluations = [run(**s) for s in settings]
    columns = max(_columns(ev) for ev in evaluations)
    nrows = (len(settings) + ncols - 1) // ncols
    height = max(1.6, 0.38 * len(streams or [None] * 4) + 1.4)
    fig, axes = plt.subplots(nrows, ncols, figsize=(6.5 * ncols, height * nrows), squeeze=False)
    for ax, s, ev in zip(axes.flat, settings, evaluations):
        plot_trace(ev, ax=ax, streams=streams, columns=columns,
                   title=", ".join(f"{k}={v}" for k, v in s.items()))
    for ax in list(axes.flat)[len(settings):]:
        ax.set_axis_off()
    fig.tight_layout()
    return axes


def _sliders(run, params, streams, step):
    import ipywidgets as widgets
    import matplotlib.pyplot as plt
    from IPython.display import display

    controls = {name: widgets.SelectionSlider(options=list(values), value=list(values)[0],
                                              description=name)
                for name, values in params.items()}
    stepper = widgets.IntSlider(value=0, min=0, max=0, description="trace step")
    out = widgets.Output()

    def redraw(*_):
        values = {name: c.value for name, c in controls.items()}
        ev = run(**values)
        stepper.max = len(ev.trace)
        upto = stepper.value if step and stepper.value else None
        with out:
            out.clear_output(wait=True)
            plot_trace(ev, streams=streams, columns=_columns(ev), upto=upto,
                       title=", ".join(f"{k}={v}" for k, v in values.items())
                       + (f": the first {upto} of {len(ev.trace)} forcings" if upto else ""))
            plt.show()

    for c in list(controls.values()) + ([stepper] if step else []):
        c.observe(redraw, names="value")
    redraw()
    display(widgets.VBox(list(controls.values()) + ([stepper] if step else []) + [out]))
