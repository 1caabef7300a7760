"""Saved differential-testing campaigns, for notebook 7: load a report written by
notebooks/data/make_campaign.py, replay a finding's minimal program on lazyloop, and plot the
outcomes, expected against actual values, and the shrinking.

A report is plain JSON: counts, ``outcomes`` ([kind, status, count] of every generated
program) and ``findings``, one per distinct disagreement (see the script's docstring).
"""
from __future__ import annotations

import base64
import json
import pathlib
from typing import Mapping, Optional

import numpy as np

STATUS_COLOURS = {"agree": "#93c47d", "disagree": "#e06666", "unsupported": "#cccccc",
                  "invalid": "#eeeeee", "not-exportable": "#eeeeee"}


def load_report(path) -> dict:
    """A saved campaign report, with its arrays as numpy arrays."""
    data = json.loads(pathlib.Path(path).read_text())
    for f in data["findings"]:
        for part in ("feeds", "expected", "actual"):
            if f.get(part) is not None:
                f[part] = {k: as_array(v) for k, v in f[part].items()}
        f["defined"] = {k: np.asarray(v, bool) for k, v in f["defined"].items()}
    return data


def as_array(spec: Mapping) -> np.ndarray:
    """An array saved as {dtype, shape, values} (None stands for an undefined NaN)."""
    values = spec["values"]
    if spec["dtype"].startswith("float"):
        values = np.asarray(values if values != [] else np.zeros(0), dtype=object)
        values = np.where(values == None, np.nan, values)  # noqa: E711 (element-wise)
    return np.asarray(values, dtype=spec["dtype"]).reshape(spec["shape"])


def model_of(finding):
    """The minimal program as an ONNX ModelProto (None for an OpenVINO program, saved as its
    outline text only)."""
    program = finding["program"]
    if program["format"] != "onnx":
        return None
    import onnx
    return onnx.load_from_string(base64.b64decode(program["bytes"]))


def replay(finding):
    """Evaluate a finding's minimal ONNX program with lazyloop, with its trace: the frontend's
    run (``.outputs`` by the model's output names, ``.evaluation`` with the plan and trace)."""
    import lazyloop.onnx
    model = model_of(finding)
    if model is None:
        raise ValueError("only ONNX programs are saved in a replayable form")
    return lazyloop.onnx.run(model, finding["feeds"], trace=True)


def still_expected(finding, run) -> bool:
    """True when lazyloop, today, gives the values the report saved (where they are defined)."""
    for name, want in finding["expected"].items():
        got = np.asarray(run.outputs[name])
        mask = np.broadcast_to(finding["defined"].get(name, True), want.shape)
        if got.shape != want.shape or not np.allclose(got[mask], want[mask], equal_nan=True):
            return False
    return True


def plot_outcomes(reports: Mapping[str, dict], ax=None):
    """One stacked bar per backend and program kind: how many generated programs agreed,
    disagreed or were refused."""
    import matplotlib.pyplot as plt
    bars = []   # (label, {status: n})
    for backend, report in reports.items():
        kinds = {}
        for kind, status, n in report["outcomes"]:
            kinds.setdefault(kind, {})[status] = n
        for kind, counts in sorted(kinds.items()):
            bars.append((f"{backend}\n{kind}", counts))
    if ax is None:
        _, ax = plt.subplots(figsize=(max(6, 1.15 * len(bars) + 2), 3.6))
    statuses = [s for s in STATUS_COLOURS if any(s in c for _, c in bars)]
    bottom = np.zeros(len(bars))
    for status in statuses:
        heights = np.array([c.get(status, 0) for _, c in bars], float)
        ax.bar(range(len(bars)), heights, bottom=bottom, color=STATUS_COLOURS[status],
               edgecolor="#555555", linewidth=0.5, label=status)
        bottom += heights
    ax.set_xticks(range(len(bars)))
    ax.set_xticklabels([label for label, _ in bars], fontsize=7)
    ax.set_ylabel("generated programs")
    ax.legend(fontsize=8, frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.set_title("outcomes per backend and program kind", fontsize=10, loc="left")
    return ax


def _grid(value) -> np.ndarray:
    a = np.asarray(value, float)
    if a.ndim == 0:
        return a.reshape(1, 1)
    return a.reshape(-1, a.shape[-1]) if a.ndim > 1 else a.reshape(1, -1)


def _heatmap(ax, value, defined, title, limits=(0.0, 1.0)):
    from matplotlib.patches import Rectangle
    grid = _grid(value)
    if grid.size == 0:
        ax.set_axis_off()
        ax.set_title(title, fontsize=9, loc="left")
        ax.text(0.5, 0.5, f"empty, shape {list(np.shape(value))}", transform=ax.transAxes,
                ha="center", va="center", fontsize=9)
        return
    mask = np.broadcast_to(np.asarray(defined, bool), np.shape(value)).reshape(grid.shape) \
        if defined is not None else np.ones(grid.shape, bool)
    shown = np.ma.masked_array(grid, ~mask)
    low, high = limits
    ax.imshow(shown, cmap="Blues", aspect="auto", vmin=low - 0.25 * (high - low + 1e-9),
              vmax=high + 1e-9)
    for (r, c), v in np.ndenumerate(grid):
        if mask[r, c]:
            dark = v > low + 0.6 * (high - low)
            ax.text(c, r, f"{v:.3g}", ha="center", va="center", fontsize=8,
                    color="white" if dark else "black")
        else:
            ax.add_patch(Rectangle((c - 0.5, r - 0.5), 1, 1, fc="#eeeeee", ec="#999999",
                                   hatch="//", lw=0.5))
            ax.text(c, r, "?", ha="center", va="center", fontsize=9, color="#666666")
    ax.set_title(title, fontsize=9, loc="left")
    ax.set_xticks(range(grid.shape[1]))
    ax.set_yticks(range(grid.shape[0]))


def plot_expected_actual(finding, title: Optional[str] = None):
    """Each output of a finding: lazyloop's expected value (undefined positions hatched, `?`)
    beside the backend's value, or the backend's error."""
    import matplotlib.pyplot as plt
    names = list(finding["expected"])
    seen = [np.asarray(v, float)[np.broadcast_to(finding["defined"].get(k, True), np.shape(v))]
            for k, v in finding["expected"].items()]
    seen += [np.asarray(v, float).ravel() for v in (finding.get("actual") or {}).values()]
    values = np.concatenate([s.ravel() for s in seen]) if seen else np.zeros(0)
    values = values[np.isfinite(values)]
    limits = (float(values.min()), float(values.max())) if values.size else (0.0, 1.0)
    fig, axes = plt.subplots(len(names), 2, figsize=(9, 1.2 + 1.3 * len(names)), squeeze=False)
    for row, name in zip(axes, names):
        want = finding["expected"][name]
        _heatmap(row[0], want, finding["defined"].get(name),
                 f"{name}: expected (lazyloop), shape {list(want.shape)}", limits)
        actual = (finding.get("actual") or {}).get(name)
        if actual is None:
            row[1].set_axis_off()
            row[1].text(0, 0.5, "backend: " + _wrap_error(finding.get("error")),
                        fontsize=8, va="center", transform=row[1].transAxes, wrap=True)
        else:
            _heatmap(row[1], actual, None,
                     f"{name}: actual (backend), shape {list(actual.shape)}", limits)
    fig.suptitle(title or finding["signature"][2][:90], fontsize=10, x=0.01, ha="left")
    fig.tight_layout()
    return axes


def _wrap_error(text, width=60) -> str:
    import textwrap
    text = (text or "no value").split("Status Message:")[-1].strip()
    return "\n".join(textwrap.wrap(text[:240], width))


def plot_shrinking(findings: Mapping[str, dict], ax=None):
    """Program size (nodes, nested graphs included) of each failing program the shrinker met,
    in order, with the smallest so far as a line."""
    import matplotlib.pyplot as plt
    if ax is None:
        _, ax = plt.subplots(figsize=(8, 3.2))
    for label, f in findings.items():
        sizes = f["shrink_sizes"]
        line = ax.plot(range(len(sizes)), np.minimum.accumulate(sizes), lw=2, label=label)[0]
        ax.plot(range(len(sizes)), sizes, "o", ms=3, color=line.get_color(), alpha=0.5)
    ax.set_xlabel("failing program met while shrinking (in order)")
    ax.set_ylabel("program size (nodes)")
    ax.set_title("shrinking: dots are failing candidates, lines the smallest so far",
                 fontsize=10, loc="left")
    ax.legend(fontsize=7, frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return ax
