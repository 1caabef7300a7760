"""Sliders for the notebooks: re-run a loop with other parameters and step through its
forcing trace. In a live kernel with ipywidgets, `explore` shows sliders that redraw the
forcing grid (`Sliders`); elsewhere (a static view of a notebook, or
``LAZYLOOP_STATIC_WIDGETS`` set, as notebooks/build.py does so that committed notebooks show
pictures) it draws a static grid of the same plot for a few settings."""
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
    value), whole traces. Returns the `Sliders` (live) or the grid's Axes (static)."""
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


def option_label(name: str, value) -> str:
    """How a slider shows one of its values: `None` (no such limit, e.g. no COUNT) as
    "no NAME" in capitals, any other value as its text."""
    return f"no {name.upper()}" if value is None else str(value)


class Sliders:
    """What `explore` shows in a live kernel: one slider per parameter (`controls`), the
    trace-step slider (`stepper`, 0: the whole trace) and the forcing grid of the current
    setting, redrawn whenever a slider moves. A slider's options are labelled
    (`option_label`) and stand for positions in the parameter's values, so any value, `None`
    included, can be offered. `drawn` counts the figures drawn and `title` is the last one's
    title; `error` is what stopped the last redraw (also shown under the sliders), or None."""

    def __init__(self, run, params, streams=None, step=True):
        import ipywidgets as widgets
        self.run, self.streams = run, streams
        self.values = {name: list(values) for name, values in params.items()}
        self.controls = {name: widgets.SelectionSlider(
            options=[(option_label(name, v), k) for k, v in enumerate(values)], index=0,
            description=name) for name, values in self.values.items()}
        self.stepper = widgets.IntSlider(value=0, min=0, max=0, description="trace step")
        self.output = widgets.Output()
        self.sliders = list(self.controls.values()) + ([self.stepper] if step else [])
        self.box = widgets.VBox(self.sliders + [self.output])
        self.drawn, self.title, self.error = 0, None, None
        self._drawing = False
        for slider in self.sliders:
            slider.observe(self.redraw, names="value")
        self.redraw()

    def setting(self) -> dict:
        """{parameter: the value its slider stands at}."""
        return {name: self.values[name][c.value] for name, c in self.controls.items()}

    def redraw(self, *_):
        """Evaluate the current setting and draw its forcing grid, up to the trace step."""
        if self._drawing:  # the step slider clamped to a shorter trace: this redraw reads it
            return
        self._drawing = True
        try:
            self.error = None
            figure, self.title = self._figure()
        except Exception as exc:  # shown where the figure would be, kept for whoever asks
            self.error = exc
            with self.output:
                self.output.clear_output(wait=True)
                print(f"cannot draw this setting: {type(exc).__name__}: {exc}")
            return
        finally:
            self._drawing = False
        from IPython.display import display
        with self.output:
            self.output.clear_output(wait=True)
            display(figure)
        self.drawn += 1

    def _figure(self):
        import matplotlib.pyplot as plt
        ev = self.run(**self.setting())
        self.stepper.max = len(ev.trace)
        upto = self.stepper.value if self.stepper in self.sliders and self.stepper.value \
            else None
        title = ", ".join(f"{name}={c.label}" for name, c in self.controls.items()) \
            + (f": the first {upto} of {len(ev.trace)} forcings" if upto else "")
        ax = plot_trace(ev, streams=self.streams, columns=_columns(ev), upto=upto, title=title)
        plt.close(ax.figure)  # not shown by the inline backend: the output widget shows it
        return ax.figure, title

    def __repr__(self):
        return f"Sliders({', '.join(self.controls)}, trace step)"


def _sliders(run, params, streams, step):
    from IPython.display import display
    sliders = Sliders(run, params, streams, step)
    display(sliders.box)
    return sliders
