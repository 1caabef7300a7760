"""A campaign's parts: the backend it runs on and the programs it draws (`runner_for`,
`campaign_strategy`), exploring programs (any range of indices, anywhere) into a `Tally`, and
finishing merged tallies into a `Report` (shrinking each signature's first instance within a
`ShrinkBudget`, then grouping by root cause)."""
from __future__ import annotations

import contextlib
import functools
import time
from collections import Counter
from typing import Optional

import attrs
import numpy as np

from .backends import formats_of
from .costs import Costs
from .isolation import Isolated
from .plugins import is_backend, make_backend
from .subject import subjects
from .grouping import merge_by_root_cause, root_cause
from .op_faults import op_fault
from .op_types import body_op_types
from .errorkey import _error_key
from .reducing import Reduction, reduce_finding
from .report import Disagreement, Refusal, Report
from .known import draw_avoiding, program_shape
from .shrinking import (INTERRUPTED, ShrinkBudget, abort_if_asked, hang_limit, shrink,
                        time_limit)


COUNTED = ("generated", "examples", "agreements", "instances", "invalid", "not_exportable",
           "redrawn")  # what a Tally and a Report count alike


def add_up(into, other) -> None:
    """Add `other`'s counts, kinds, coverage, op types and errors to `into` (two tallies, or
    two reports), and whether it stopped."""
    for name in COUNTED:
        setattr(into, name, getattr(into, name) + getattr(other, name))
    into.by_kind.update(other.by_kind)
    into.coverage |= other.coverage
    into.op_types |= other.op_types
    into.internal_errors += other.internal_errors
    into.harness_errors += other.harness_errors
    into.stopped = into.stopped or other.stopped


@attrs.define
class Tally:
    """What exploring some programs found: counts, and per signature the first instance
    (index, portable subject, choices, outcome); tallies of shards merge."""

    generated: int = 0
    examples: int = 0
    agreements: int = 0
    instances: int = 0
    invalid: int = 0
    not_exportable: int = 0
    by_kind: Counter = attrs.Factory(Counter)
    coverage: set = attrs.Factory(set)
    op_types: set = attrs.Factory(set)  # ONNX op types inside the bodies of programs run
    internal_errors: list = attrs.Factory(list)  # lazyloop failed: `problem` records
    harness_errors: list = attrs.Factory(list)   # lazyloop's adapter failed: the same
    refusals: dict = attrs.Factory(dict)      # reason -> [count, first index, subject, rules]
    first_seen: dict = attrs.Factory(dict)    # signature -> (index, subject, choices, outcome)
    counts: Counter = attrs.Factory(Counter)  # signature -> instances
    redrawn: int = 0  # draws replaced because their shape matched a known cause (known.py)
    stopped: Optional[str] = None  # "max-time" or "interrupted": a partial exploration
    slowest: float = 0.0  # seconds of the backend's slowest answer (what is normal for it)
    costs: Costs = attrs.Factory(Costs)  # what exploring cost, by part (costs.py)

    def add(self, index, subject, choices, out) -> None:
        self.generated += 1
        self.by_kind[subject.kind] += 1
        if out.internal:
            self.internal_errors.append(problem(index, subject, out.internal))
        if out.status == "harness-error":  # counted apart, as lazyloop's fault
            self.harness_errors.append(problem(index, subject, out.error))
            return
        if out.status == "invalid":
            self.invalid += 1
            return
        if out.status == "not-exportable":
            self.not_exportable += 1
            return
        self.examples += 1
        self.coverage.update(out.rules)
        if out.status != "unsupported":
            self.op_types.update(bodies_op_types(subject))
        if out.status == "agree":
            self.agreements += 1
        elif out.status == "unsupported":
            entry = self.refusals.setdefault(_error_key(out.error or ""),
                                             [0, index, subject.portable(), out.rules])
            entry[0] += 1
        else:
            self.instances += 1
            sig = out.signature(subject)
            self.counts[sig] += 1
            if sig not in self.first_seen or index < self.first_seen[sig][0]:
                self.first_seen[sig] = (index, subject.portable(), choices, out)

    def merge(self, other: "Tally") -> "Tally":
        add_up(self, other)
        self.counts.update(other.counts)
        self.slowest = max(self.slowest, other.slowest)
        self.costs.merge(other.costs)
        for reason, (n, index, subject, rules) in other.refusals.items():
            mine = self.refusals.get(reason)
            if mine is None or index < mine[1]:
                self.refusals[reason] = [n + (mine[0] if mine else 0), index, subject, rules]
            else:
                mine[0] += n
        for sig, seen in other.first_seen.items():
            if sig not in self.first_seen or seen[0] < self.first_seen[sig][0]:
                self.first_seen[sig] = seen
        return self


def bodies_op_types(subject) -> list:
    """The ONNX op types inside the loop and branch bodies of a program's model (none for
    other formats): what the report's `op_types` gathers over the programs run."""
    if subject.format != "onnx":
        return []
    try:
        model = subject.model()
    except Exception:  # noqa: BLE001 -- it ran, so it was built; nothing to add otherwise
        return []
    return body_op_types(model) if hasattr(model, "graph") else []


def problem(index: int, subject, text: str) -> dict:
    """A failure of lazyloop itself (or of its adapter) on program `index`: the program, its
    kind, the error's last line and the whole text (a traceback is stored, not printed)."""
    lines = (text or "").strip().splitlines() or ["?"]
    return {"program": index, "kind": subject.kind, "error": lines[-1],
            "traceback": text, "subject": repr(subject)}


_KEEPING = []  # the temporary folder hypothesis keeps its files in, while a campaign runs


@contextlib.contextmanager
def hypothesis_files_in_temp():
    """While exploring and shrinking, hypothesis keeps its files (its cache of constants, any
    example database) in a temporary folder removed afterwards, never in the current folder
    (no `.hypothesis/` left behind). Nested uses share the outermost folder."""
    if _KEEPING:
        yield _KEEPING[-1]
        return
    import tempfile

    from hypothesis.configuration import set_hypothesis_home_dir
    with tempfile.TemporaryDirectory(prefix="lazyloop-hypothesis-") as home:
        _KEEPING.append(home)
        set_hypothesis_home_dir(home)
        try:
            yield home
        finally:
            set_hypothesis_home_dir(None)
            _KEEPING.pop()


def edge_arithmetic(fn):
    """`fn` under numpy's error state that ignores overflow, invalid operations and division
    by zero: a campaign's programs make such values on purpose (edge values, narrow integer
    types wrapping around), lazyloop's answer, the backend's and their comparison take them
    as they are, and numpy's RuntimeWarnings about them -- pointing into generated trips and
    kernels -- would only clutter the user's terminal. The error state decides whether numpy
    warns, never a value; a check that wants them raised sets its own (`strict_numpy`)."""
    @functools.wraps(fn)
    def quietly(*args, **kwargs):
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            return fn(*args, **kwargs)
    return quietly


@edge_arithmetic
@hypothesis_files_in_temp()
def explore(checker, strategy, seed: int, indices, progress=None, total=None,
            deadline: Optional[float] = None, known=None) -> Tally:
    """Check programs `indices` of the campaign seeded `seed` (each drawn from (seed, i),
    drawn again while it matches a cause of `known`, a `known.KnownCauses`). Past `deadline`
    (a time.monotonic() value; --max-time) or on Ctrl-C the exploration stops and the tally
    says so (`stopped`). Programs go through the checker's pipeline: each is drawn and
    prepared while the backend answers the one before (`Checker.prepare`); the backend
    gets them one at a time, in index order, as when each is checked alone."""
    tally = Tally()
    before = checker.costs.copy()
    flying = None  # (index, subject, choices, question): sent, its answer not taken yet

    def land():
        nonlocal flying
        if flying is not None:
            index, subject, choices, question = flying
            flying = None
            tally.add(index, subject, choices, checker.conclude(question))
            if progress:
                progress("generate", tally.generated, total or len(indices), tally)
    try:
        for index in indices:
            if deadline is not None and time.monotonic() > deadline:
                tally.stopped = "max-time"
                break
            abort_if_asked()
            if INTERRUPTED.is_set():  # Ctrl-C, as the command line's handler marks it
                tally.stopped = "interrupted"
                break
            with tally.costs.timing("generation"):
                subject, choices, redraws = draw_avoiding(strategy, seed, index, known)
            tally.redrawn += redraws
            question = checker.prepare(subject)  # while the backend answers the one before
            land()
            checker.send(question)
            flying = (index, subject, choices, question)
        land()
    except KeyboardInterrupt:
        tally.stopped = "interrupted"
    finally:
        checker.discard()  # a question left unanswered (Ctrl-C, an error) is not counted
    tally.slowest = max(tally.slowest, checker.slowest)
    tally.costs.merge(checker.costs.since(before))
    return tally


@edge_arithmetic
@hypothesis_files_in_temp()
def finish(tally: Tally, checker, strategy, backend_name: str, seed: int, shrink_it: bool,
           budget: ShrinkBudget = ShrinkBudget(), progress=None) -> Report:
    """The report of a (merged) tally: each signature's first instance shrunk (in index
    order, so the result does not depend on how the programs were split) within `budget`,
    then one disagreement per root cause. A stopped (partial) tally is reported unshrunk;
    Ctrl-C while shrinking keeps what was reached and leaves the rest unshrunk. The
    backend's version is the checker's backend's (`schema.backend_version`), however the
    programs were explored."""
    from .schema import backend_version
    started = time.perf_counter()
    report = Report(backend_name, seed, stopped=tally.stopped, costs=tally.costs.copy())
    report.backend_version = backend_version(checker.backend)
    shrink_it = shrink_it and tally.stopped is None
    for name in ("generated", "examples", "agreements", "instances", "invalid",
                 "not_exportable", "internal_errors", "harness_errors", "by_kind", "redrawn"):
        setattr(report, name, getattr(tally, name))
    report.coverage = frozenset(tally.coverage)
    report.op_types = frozenset(tally.op_types)
    report.unsupported = [Refusal(reason, n, subject, rules) for reason, (n, _, subject, rules)
                          in sorted(tally.refusals.items(), key=lambda kv: kv[1][1])]
    found = sorted(tally.first_seen.items(), key=lambda kv: kv[1][0])
    disagreements = []
    stage = _Stage(budget)
    runner = checker.backend
    with time_limit(runner, hang_limit(runner.timeout, tally.slowest)
                    if isinstance(runner, Isolated) else None):
        for k, (sig, (index, subject, choices, out)) in enumerate(found):
            if progress:
                progress("shrink", k, len(found), tally)
            minimal, mout, shrunk, how = subject, out, False, "off"
            if shrink_it:
                tick = progress and (lambda k=k: progress("shrink", k, len(found), tally))
                minimal, mout, shrunk, how = stage.shrink(strategy, checker, sig, choices, tick)
            if mout is None or mout.status != "disagree":  # not run again: as explored
                minimal, mout, shrunk = subject, out, False
            # an op that disagrees alone, outside any loop: an op fault, whose case is the op
            fault = op_fault([minimal, subject], checker)
            if fault is not None:
                if fault.program is not minimal:  # met in the first program only
                    minimal, mout, shrunk = subject, out, False
                reduction = alone_case(minimal, fault)
            else:  # a finding whose shrinking was cut by Ctrl-C, time or hangs keeps its
                # program's model: editing it would meet the same end
                reduction = stage.reduce(minimal, mout, checker,
                                         shrink_it and how in ("complete", "steps"))
            record = (minimal, mout, checker, sig, index, tally.counts[sig], shrunk, how)
            disagreements.append(_disagreement(*record, reduction=reduction,
                                               op=fault and fault.op))
    abort_if_asked()
    if stage.interrupted:
        report.stopped = "interrupted"
    report.disagreements = merge_by_root_cause(disagreements)
    report.costs.add("finishing", time.perf_counter() - started)
    if progress:
        progress("done", len(found), len(found), tally)
    return report


class _Stage:
    """The shrink stage: its total wall-time budget, and whether Ctrl-C ended it (then the
    remaining signatures are not shrunk)."""

    def __init__(self, budget: ShrinkBudget):
        self.budget = budget
        total = budget.total_seconds
        self.deadline = None if total is None else time.monotonic() + total
        self.interrupted = False
        self.used = {}  # what shrinking the current signature spent (steps, hangs)

    def shrink(self, strategy, checker, sig, choices, tick=None):
        """(minimal, outcome, shrunk?, why shrinking ended) for one signature; the minimal
        program and its outcome are None when nothing was reached."""
        if self.interrupted or INTERRUPTED.is_set():
            self.interrupted = True
            return None, None, False, "interrupted"
        now = time.monotonic()
        if self.deadline is not None and now > self.deadline:
            return None, None, False, "time"
        ends = [d for d in (self.deadline, self.budget.seconds and now + self.budget.seconds)
                if d is not None]
        self.used = {}
        try:
            result = shrink(strategy, checker, sig, choices, self.budget,
                            min(ends) if ends else None, tick, self.used)
        except KeyboardInterrupt:
            result = (None, None, False, "interrupted")
        self.interrupted = result[3] == "interrupted"
        return result

    def reduce(self, subject, out, checker, wanted: bool) -> Reduction:
        """The finding's model reduced (reducing.py), unless Ctrl-C or the stage's time
        ended the stage; a reduction cut by them keeps what it reached."""
        if not wanted or self.interrupted or INTERRUPTED.is_set() or (
                self.deadline is not None and time.monotonic() > self.deadline):
            return reduce_finding(subject, out, checker, 0)
        return reduce_finding(subject, out, checker, self.budget.model_steps,
                              stop=lambda: INTERRUPTED.is_set() or (
                                  self.deadline is not None and
                                  time.monotonic() > self.deadline),
                              hangs=self.budget.hangs - self.used.get("hangs", 0))


def alone_case(program, fault) -> Reduction:
    """An op fault's case: the op alone (`op_faults`), in place of a reduced model."""
    from .minimize import node_count
    try:
        before = node_count(program.model())
    except Exception:  # noqa: BLE001 -- a program that cannot be built again
        before = 0
    return Reduction(fault.subject, fault.outcome, before,
                     node_count(fault.subject.model()), "op-alone")


def _disagreement(subject, out, checker, sig, index, count, shrunk, shrinking="off",
                  reduction=None, op=None) -> Disagreement:
    """The record of one minimal disagreement: the program `subject` shrunk to, and the case
    its model was reduced to (`reduction`; the program's own model when nothing was kept; for
    an op fault of `op`, the op alone). Its explanation is looked for on the case, where
    nothing unrelated to the difference is left (always, also after Ctrl-C: it runs lazyloop
    only, and a verdict must not depend on whether the run was interrupted)."""
    case, cout = subject, out
    if reduction is not None and reduction.subject is not None:
        case, cout = reduction.subject, reduction.outcome
    expected, defined, rules = case.expectation()
    checker.attribute(case, cout)
    rules = frozenset(out.rules or rules)
    if case is not subject and cout.rules:  # dead code is what minimising removes: whether
        # anything is left unforced is the minimal case's trace's to say (laziness/dead)
        rules = (rules - {"laziness/dead"}) | (frozenset(cout.rules) & {"laziness/dead"})
    d = Disagreement(model=case.model(), feeds=case.feeds, expected=expected,
                     actual=cout.actual, rules=rules, ambiguity=cout.ambiguity,
                     defined=defined, differences=cout.differences, error=cout.error,
                     subject=subject, signature=sig, found_after=index,
                     occurrences=count, shrunk=shrunk, shrinking=shrinking,
                     root_cause=root_cause(case, cout, op), symptom=cout.symptom,
                     reading=cout.reading, op=op, shape=case_shape(case))
    if reduction is not None:
        d.nodes_before, d.nodes_after = reduction.nodes_before, reduction.nodes_after
        d.minimising = reduction.ended
    return d


def case_shape(case) -> tuple:
    """The shape of a minimal case (known.py), sorted: what a baseline matches programs by."""
    try:
        return tuple(sorted(program_shape(case.model(), case.feeds)))
    except Exception:  # noqa: BLE001 -- a case that cannot be built again has none
        return ()


def runner_for(b, isolate: bool, timeout: float, memory_mb: float):
    """(the backend to run programs on, whether this call owns it and must close it)."""
    if isinstance(b, Isolated):
        return b, False
    if isolate:
        return Isolated(b, timeout=timeout, memory_mb=memory_mb), True
    return (make_backend(b) if isinstance(b, str) or not is_backend(b) else b), False


@contextlib.contextmanager
def running(b, isolate: bool, timeout: float, memory_mb: float):
    """The backend to run programs on (`runner_for`), closed at the end when this call made
    it."""
    runner, owned = runner_for(b, isolate, timeout, memory_mb)
    try:
        yield runner
    finally:
        if owned:
            runner.close()


def campaign_strategy(runner, formats=None, kinds=None):
    """(formats, the strategy of subjects) for a campaign on `runner`."""
    formats = tuple(formats or formats_of(runner))
    return formats, subjects(formats, kinds or getattr(runner, "kinds", None))
