"""A model lowered onto the core (`Lowered`): one shape for every frontend (ONNX, OpenVINO).

A frontend lowers a model onto a core `Network` and says how its names meet the network's:
each model input is an `InputBinding` (the name a caller feeds it by, other names it answers
to, the core input, its type, and -- ONNX inputs with an initializer -- a default value),
each model output an `OutputBinding`. Its `convert` turns what a caller feeds (a protobuf, an
`openvino.Tensor`, a list) into the value the core takes. Everything after that is shared:
the caller's feeds matched to the bindings (`core_feeds`), the core's outputs named as the
model names them (`user_outputs`), and `evaluate` and `run` -- which resolve the readings
once for the whole evaluation and choose the evaluator by `mode` (`lazyloop.core.evaluate`).
The command line, the differential tester, the notebooks and the bench all evaluate a
lowered model through this one path. A model evaluated again and again with the usual feeds
-- a dict of arrays of the inputs' dtypes and of shapes their types admitted -- skips the
matching and the full check (`feeds_as_given`, rows derived once per plan) and is evaluated
by the plan's evaluation prepared once per mode (`ready`, `lazyloop.core.evaluate.Prepared`);
any other feeds take the full path, which says what is wrong.
"""
from __future__ import annotations

from typing import Callable, Mapping, Optional, Tuple

import attrs
import numpy as np

from .ambiguity import resolve
from .errors import InputError
from .evaluate import evaluate as core_evaluate, prepared, run as core_run
from .feeds import CheckedFeeds, feed_dict, input_table
from .fuel import DEFAULT_MAX_TRIPS
from .plan import compile_network

NO_DEFAULT = object()


@attrs.frozen
class InputBinding:
    name: str                    # the name a caller feeds it by
    core_name: str               # the core network's input
    type: object                 # its declared type (a TensorType or an OpaqueType)
    aliases: Tuple[str, ...] = ()  # other names it answers to (OpenVINO's tensor names)
    default: object = attrs.field(default=NO_DEFAULT, eq=False, repr=False)

    @property
    def required(self) -> bool:
        return self.default is NO_DEFAULT


@attrs.frozen
class OutputBinding:
    name: str       # the model output's name
    core_name: str  # the core network's output


@attrs.frozen
class LoweredRun:
    """`run`'s answer: outputs and `defined` masks (True where a value is defined) keyed by
    the model's output names, and the core's `Evaluation` behind them (its trace, trip
    counts, mode, and `paths`: per loop, "engine" or "reference: <why>")."""
    outputs: dict
    defined: dict
    evaluation: object

    @property
    def paths(self) -> dict:
        """Per loop that ran, "engine" or "reference: <why>" (`Evaluation.paths`)."""
        return self.evaluation.paths


def entry_rows(plan, inputs, convert=None) -> Optional[tuple]:
    """(binding, its dtype, the shapes its type was found to admit) per model input, in the
    plan's input order (`input_table`) -- None when a binding is not the one tensor input of
    the plan it names (an opaque input, an input of the plan no binding feeds), or when
    `convert` does not take an array of its input's dtype as it is (a frontend's `convert`
    decides on an array by its dtype alone; tried once on an empty one): such models'
    feeds take the full path."""
    by_core = {b.core_name: b for b in inputs}
    table = input_table(plan)
    if len(by_core) != len(inputs) or set(by_core) != {row[0] for row in table}:
        return None
    if any(dtype is None for _, _, dtype, _ in table):
        return None
    rows = tuple((by_core[nid], dtype, shapes) for nid, _, dtype, shapes in table)
    if convert is not None:
        for b, dtype, _ in rows:
            empty = np.empty(0, dtype)
            if convert(empty, b) is not empty:
                return None
    return rows


def _as_is(value, binding):
    return value


@attrs.frozen(repr=False)
class Lowered:
    """A model lowered onto `network`, with the bindings across its boundary, the readings
    it was lowered with (`readings`, as the caller gave them), its frontend (`format`,
    whose rule `rule` input errors cite) and the frontend's `convert(value, binding)`,
    which decides on a numpy array by its dtype alone."""
    network: object
    inputs: Tuple[InputBinding, ...]
    outputs: Tuple[OutputBinding, ...]
    readings: Mapping[str, str] = attrs.field(factory=dict, converter=dict)
    format: str = "onnx"
    rule: str = "onnx/graph"
    convert: Callable = attrs.field(default=_as_is, eq=False)
    model: object = attrs.field(default=None, eq=False)
    # the ambiguities whose reading the lowering asked about (None: not known); a reading of
    # any other lowers the model to the same network
    asked: Optional[frozenset] = attrs.field(default=None, eq=False)
    # derived once: every name a binding answers to, and the readings resolved
    by_name: dict = attrs.field(init=False, eq=False, repr=False)
    resolved: object = attrs.field(init=False, eq=False, repr=False)
    # (plan, its `entry_rows`), derived when first evaluated (`feeds_as_given`)
    entry: object = attrs.field(init=False, default=None, eq=False, repr=False)
    # mode -> the plan's `Prepared` evaluation, its outputs named as the model names them
    runs: dict = attrs.field(init=False, factory=dict, eq=False, repr=False)

    def __attrs_post_init__(self):
        by_name = {}
        for b in self.inputs:
            for name in (b.name,) + b.aliases:
                by_name.setdefault(name, b)
        object.__setattr__(self, "by_name", by_name)
        object.__setattr__(self, "resolved", resolve(self.readings))

    def __repr__(self):
        return (f"Lowered({self.format}, inputs={[b.name for b in self.inputs]}, "
                f"outputs={[b.name for b in self.outputs]})")

    @property
    def model_inputs(self) -> tuple:
        return tuple(b.name for b in self.inputs)

    @property
    def model_outputs(self) -> tuple:
        return tuple(b.name for b in self.outputs)

    def core_feeds(self, user_feeds) -> dict:
        """The caller's feeds, keyed by input name (or an alias), as the network's feeds;
        an input not fed takes its default, else it is an error, as is a name the model
        does not have or an input fed twice (the frontend's `rule`)."""
        by_name = self.by_name
        feeds, unknown = {}, []
        for key, value in feed_dict(user_feeds).items():
            b = by_name.get(key)
            if b is None:
                unknown.append(key)
            elif b.core_name in feeds:
                raise InputError(f"input {b.name!r}", self.rule, "is fed twice (by "
                                 f"{key!r} too)", "feed every input once")
            else:
                feeds[b.core_name] = self.convert(value, b)
        if unknown:
            raise InputError(f"inputs {sorted(unknown)}", self.rule,
                             "are not inputs of the model",
                             f"its inputs are {[b.name for b in self.inputs]}")
        for b in self.inputs:
            if b.core_name not in feeds:
                if b.required:
                    raise InputError(f"input {b.name!r}", self.rule, "no value was fed",
                                     f"feed {b.name!r} as {b.type!r}")
                feeds[b.core_name] = b.default
        return feeds

    def user_outputs(self, core_outputs) -> dict:
        """The core's outputs keyed by the model's output names, in model output order."""
        return {o.name: core_outputs[o.core_name] for o in self.outputs}

    def feeds_as_given(self, feeds) -> Optional[CheckedFeeds]:
        """The caller's feeds as `core_feeds` then `check_feeds` answer them, in the usual
        case -- a dict feeding every input by its name an array of its input's dtype, of a
        shape its type was found to admit (which `convert` takes as it is) -- else None: the
        full path matches, converts and checks them, and says what is wrong (`rule`,
        `stream/shape`). The inputs' rows are derived once per plan (`entry`)."""
        plan = compile_network(self.network, self.resolved)  # the cached plan, unless changed
        rows = self.entry
        if rows is None or rows[0] is not plan:
            rows = (plan, entry_rows(plan, self.inputs, self.convert))
            object.__setattr__(self, "entry", rows)
        rows = rows[1]
        if rows is None or feeds.__class__ is not dict or len(feeds) != len(rows):
            return None
        ndarray = np.ndarray
        checked = CheckedFeeds()
        for b, dtype, shapes in rows:
            value = feeds.get(b.name)
            if value.__class__ is not ndarray or value.shape not in shapes:
                return None
            if value.dtype is not dtype and value.dtype != dtype:
                return None  # (`convert` takes an array of its dtype as it is: `entry_rows`)
            value = value.view()  # read-only for the call, the caller's array untouched:
            value.setflags(write=False)  # nothing keeps it past the call (outputs are copies)
            checked[b.core_name] = value
        return checked

    def ready(self, mode):
        """The `Prepared` evaluation of the plan the usual call evaluates (`entry`'s) in
        `mode`, its outputs named as the model names them: made when a mode is first asked
        for, kept while the plan is the same (issue 25, "plan once, run many")."""
        plan = self.entry[0]
        found = self.runs.get(mode) if mode.__class__ is str else None
        if found is None or found.plan is not plan:
            ids = dict(plan.outputs)
            found = prepared(plan, self.resolved, mode,
                             tuple((o.name, ids[o.core_name]) for o in self.outputs))
            self.runs[mode] = found
        return found

    def evaluate(self, feeds, max_trips: int = DEFAULT_MAX_TRIPS, readings=None,
                 max_seconds=None, mode: str = "fast") -> dict:
        """{output name: value}; `readings` None: the ones it was lowered with."""
        if readings is None:  # the usual call: feeds as given, the lowering's readings
            checked = self.feeds_as_given(feeds)
            if checked is not None:
                return self.ready(mode)(checked, max_trips, max_seconds)
        readings = self.resolved if readings is None else resolve(readings)
        return self.user_outputs(core_evaluate(self.network, self.core_feeds(feeds),
                                               max_trips, readings, max_seconds, mode))

    def run(self, feeds, max_trips: int = DEFAULT_MAX_TRIPS, readings=None, trace=False,
            max_seconds=None, mode: Optional[str] = None) -> LoweredRun:
        """As `evaluate`, also with the `defined` masks and the core's `Evaluation` (its
        forcing trace when `trace`, which only mode "reference" records; by default the
        mode is "reference" with a trace, "fast" without)."""
        readings = self.resolved if readings is None else resolve(readings)
        ev = core_run(self.network, self.core_feeds(feeds), max_trips, readings, trace,
                      max_seconds, mode)
        return LoweredRun(self.user_outputs(ev.outputs), self.user_outputs(ev.defined), ev)
