"""Saved differential-testing campaigns, for notebook 7: read the report `lazyloop check`
writes (spec/52-report-schema.md, `schema_version` 1 or 2) with the case folders beside it
(`--out DIR`: DIR/report.json and DIR/case_*), replay a finding's minimal program on lazyloop,
run it again on a backend, and plot outcomes and expected against actual values.

What a report holds is what the schema says: counts, outcomes, and per finding its root-cause
key, kind, rules, ambiguity, differences (as text) and error. The program, its feeds and
lazyloop's expected values (with the masks of defined positions) are in the finding's case
folder; the backend's values are not saved anywhere (a case folder's README shows them as
text), so `actual` runs the backend on the case again.
"""
from __future__ import annotations

import json
import pathlib
from typing import Mapping, Optional

import attrs
import numpy as np

from ..core.errors import InputError
from .plots import hatch_undefined, undefined_legend

SCHEMA_VERSIONS = (1, 2)  # 2 keys root causes by symptom and minimal case (spec/52)
WHERE = "lazyloop.teach.campaign"
CONTROL_PREFIXES = ("trip/", "iterator/", "onnx/", "openvino/")  # rules deciding the trips
STATUS_COLOURS = {"agree": "#93c47d", "disagree": "#e06666", "crash": "#990000",
                  "hang": "#e69138", "oom": "#b4a7d6", "unsupported": "#cccccc",
                  "refused-by-spec": "#eeeeee"}


class ReportError(InputError):
    """A file that is not a `lazyloop check` JSON report of a schema version this reads."""


def _refuse(path, problem: str):
    raise ReportError(f"{WHERE}.load_report({str(path)!r})", "spec/52", problem,
                      "give the report.json that `lazyloop check --out DIR` (or --json PATH) "
                      f"writes, schema_version {' or '.join(map(str, SCHEMA_VERSIONS))}")


@attrs.frozen
class Finding:
    """One finding of a report: `entry` as the report holds it, and its case folder
    (`lazyloop.difftest.cases.SavedCase`), None when the folder is not there."""
    entry: Mapping
    case: Optional[object]

    def __getitem__(self, field):
        return self.entry[field]

    @property
    def key(self) -> tuple:
        """The root cause as (format, loop constructs, control rules, what went wrong);
        constructs and rules as tuples. A schema 1 key is these four parts; a schema 2 key
        (format, constructs, symptom, minimal case) gives the symptom as what went wrong and
        the finding's rules that decide the trips and what each reads as its rules
        (spec/51-difftest.md)."""
        fmt, ops, third, fourth = self.entry["root_cause"].split(" | ", 3)
        split = (lambda text, sep: () if text == "-" else tuple(text.split(sep)))
        if not fourth.startswith("case "):  # schema 1
            return fmt, split(ops, "+"), split(third, ","), fourth
        rules = tuple(r for r in self.entry["rules"] if r.startswith(CONTROL_PREFIXES) or
                      r == "structure/nesting")
        return fmt, split(ops, "+"), rules, third

    def _data(self):
        if self.case is None:
            raise ReportError(f"{WHERE}: finding {self.entry['root_cause']!r}", "spec/52",
                              f"its case folder {self.entry['case']!r} is not beside the "
                              "report", "keep the case folders `lazyloop check --out` wrote")
        return self.case.data_sets[0]

    @property
    def model_path(self) -> str:
        self._data()
        return self.case.model_path

    @property
    def feeds(self) -> dict:
        return self._data().inputs

    @property
    def expected(self) -> dict:
        return self._data().expected

    @property
    def defined(self) -> dict:
        return self._data().defined


@attrs.frozen
class Report:
    """A `lazyloop check` report: `document` is the JSON as written; `findings` wraps each
    finding with its case folder."""
    path: pathlib.Path
    document: Mapping
    findings: tuple

    def __getitem__(self, field):
        return self.document[field]


def load_report(path) -> Report:
    """Read and check a report (`schema_version` 1, `command` "check") and the case folders
    beside it; a wrong file raises `ReportError` saying what is wrong with it."""
    from ..difftest.cases import read_case
    path = pathlib.Path(path)
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        _refuse(path, f"cannot read it ({exc.strerror})")
    except (UnicodeDecodeError, ValueError) as exc:
        _refuse(path, f"it is not JSON ({exc})")
    if not isinstance(document, dict) or "schema_version" not in document:
        _refuse(path, "it is not a lazyloop report (no schema_version)")
    if document["schema_version"] not in SCHEMA_VERSIONS:
        _refuse(path, f"its schema_version is {document['schema_version']!r}; this reader "
                      f"knows {' and '.join(map(str, SCHEMA_VERSIONS))}")
    missing = [k for k in ("command", "backend", "seed", "programs", "outcomes", "findings")
               if k not in document]
    if missing or document["command"] != "check":
        _refuse(path, f"it is not a `lazyloop check` report (command "
                      f"{document.get('command')!r}, missing {missing})")
    findings = []
    for entry in document["findings"]:
        folder = path.parent / entry["case"] if entry.get("case") else None
        case = read_case(str(folder)) if folder is not None and folder.is_dir() else None
        findings.append(Finding(entry, case))
    return Report(path, document, tuple(findings))


def load_model(finding):
    """The finding's minimal program: an ONNX ModelProto, or an OpenVINO model."""
    path = finding.model_path
    if path.endswith(".onnx"):
        import onnx
        return onnx.load(path)
    import openvino as ov
    return ov.Core().read_model(path)


def replay(finding):
    """Evaluate a finding's minimal program with lazyloop, with its trace: the frontend's
    run (``.outputs``, ``.defined``, ``.evaluation`` with the plan and trace)."""
    model = load_model(finding)
    if finding.model_path.endswith(".onnx"):
        import lazyloop.onnx
        return lazyloop.onnx.run(model, finding.feeds, trace=True)
    import lazyloop.openvino
    return lazyloop.openvino.run(model, finding.feeds, trace=True)


def still_expected(finding, run) -> bool:
    """True when lazyloop, today, gives the values the case saved (where they are defined)."""
    from ..difftest.comparing import compare
    return not compare(finding.expected, finding.defined, run.outputs)


def actual(finding, backend) -> dict:
    """The backend's values on the finding's case, run again (a report does not save them);
    `backend` is a backend object (`dt.backend(...)`, `dt.Isolated(...)`). A backend that
    fails raises, as it did in the campaign."""
    fresh = {k: np.array(v) for k, v in finding.feeds.items()}
    return {k: np.asarray(v) for k, v in backend.run(load_model(finding), fresh).items()}


def rule_table(reports: Mapping[str, Report]) -> list:
    """One row per finding: campaign, program kind, what went wrong, the control rules of its
    root-cause key (the rules that decide how many trips run and what each reads), and the
    ambiguity that explains it with that register entry's rule, or '-'."""
    from .notebook import _registers
    register = _registers()
    rows = []
    for name, report in reports.items():
        for f in report.findings:
            _, _, rules, what = f.key
            amb = f["ambiguity"]
            rows.append((name, f["kind"], what, ", ".join(rules) or "-",
                         f"{amb} ({register[amb].rule})" if amb in register else amb or "-"))
    return rows


def print_rule_table(reports: Mapping[str, Report], width: int = 44) -> None:
    rows = [("campaign", "kind", "what went wrong", "control rules", "ambiguity")]
    rows += [(c, k, w if len(w) <= width else w[:width - 1] + "…", r, a)
             for c, k, w, r, a in rule_table(reports)]
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    for row in rows:
        print("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row[:4])), row[4])


def _backend_label(backend: Mapping) -> str:
    return f"{backend['name']} {backend['version'] or ''}".strip()


def plot_outcomes(reports: Mapping[str, Report], ax=None):
    """One stacked bar per campaign: the report's `outcomes`, program by program."""
    import matplotlib.pyplot as plt
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 3.4))
    names = list(reports)
    bottom = np.zeros(len(names))
    for status, colour in STATUS_COLOURS.items():
        heights = np.array([reports[n]["outcomes"].get(status, 0) for n in names], float)
        if heights.any():
            ax.bar(range(len(names)), heights, bottom=bottom, color=colour,
                   edgecolor="#555555", linewidth=0.5, label=status)
            bottom += heights
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels([f"{n}\n{_backend_label(reports[n]['backend'])}" for n in names],
                       fontsize=8)
    ax.set_ylabel("generated programs")
    ax.legend(fontsize=8, frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.set_title("outcomes per campaign", fontsize=10, loc="left")
    return ax


def _grid(value) -> np.ndarray:
    a = np.asarray(value, float)
    if a.ndim == 0:
        return a.reshape(1, 1)
    return a.reshape(-1, a.shape[-1]) if a.ndim > 1 else a.reshape(1, -1)


def _axis_labels(shape, xlabel=None, ylabel=None):
    """The labels of a value drawn as a grid (`_grid`): its last axis across, the others down
    (flattened), unless the caller names them (the trip axis of a stacked output, say)."""
    rank = len(shape)
    if rank <= 1:
        return xlabel or "axis 0", None
    down = "axis 0" if rank == 2 else f"axes 0-{rank - 2}, flattened"
    return xlabel or f"axis {rank - 1}", ylabel or down


def _heatmap(ax, value, defined, title, limits=(0.0, 1.0), xlabel=None, ylabel=None):
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
            hatch_undefined(ax, r, c)
    ax.set_title(title, fontsize=9, loc="left")
    ax.set_xticks(range(grid.shape[1]))
    ax.set_yticks(range(grid.shape[0]))
    across, down = _axis_labels(np.shape(value), xlabel, ylabel)
    ax.set_xlabel(across, fontsize=8)
    if down:
        ax.set_ylabel(down, fontsize=8)


def plot_expected_actual(finding, actual: Optional[Mapping] = None,
                         title: Optional[str] = None, xlabel: Optional[str] = None,
                         ylabel: Optional[str] = None):
    """Each output of a finding: lazyloop's expected value (undefined positions hatched, `?`,
    as in every plot of values: `teach.plots.hatch_undefined`, with one legend)
    beside the backend's value (`actual`, from `actual(finding, backend)`), or, without
    one, the backend's error as the report saved it. The grids' axes are labelled by the
    value's axes, or by `xlabel` (the last axis) and `ylabel` (the others) when given."""
    import matplotlib.pyplot as plt
    expected, defined, actual = finding.expected, finding.defined, actual or {}
    names = list(expected)
    seen = [np.asarray(v, float)[np.broadcast_to(defined.get(k, True), np.shape(v))]
            for k, v in expected.items()]
    seen += [np.asarray(v, float).ravel() for v in actual.values()]
    values = np.concatenate([s.ravel() for s in seen]) if seen else np.zeros(0)
    values = values[np.isfinite(values)]
    limits = (float(values.min()), float(values.max())) if values.size else (0.0, 1.0)
    fig, axes = plt.subplots(len(names), 2, figsize=(9, 1.2 + 1.3 * len(names)), squeeze=False)
    for row, name in zip(axes, names):
        want = expected[name]
        _heatmap(row[0], want, defined.get(name),
                 f"{name}: expected (lazyloop), shape {list(want.shape)}", limits, xlabel, ylabel)
        got = actual.get(name)
        if got is None:
            row[1].set_axis_off()
            row[1].text(0, 0.5, "backend: " + _wrap_error(finding["error"]),
                        fontsize=8, va="center", transform=row[1].transAxes, wrap=True)
        else:
            _heatmap(row[1], got, None,
                     f"{name}: actual (backend), shape {list(np.shape(got))}", limits, xlabel,
                     ylabel)
    fig.suptitle(title or finding["root_cause"][:90], fontsize=10, x=0.01, ha="left")
    fig.tight_layout()
    if any(not np.all(defined.get(k, True)) for k in names):
        undefined_legend(fig, loc="upper left", bbox_to_anchor=(0.01, 0.0))
    return axes


def _wrap_error(text, width=60) -> str:
    import textwrap
    text = (text or "no value").split("Status Message:")[-1].strip()
    return "\n".join(textwrap.wrap(text[:240], width))
