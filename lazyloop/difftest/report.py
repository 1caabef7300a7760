"""Outcomes of single checks, the records of disagreements and refusals, and the campaign
`Report` with its printed summary."""
from __future__ import annotations

from collections import Counter
from typing import List, Optional

import attrs

from .errorkey import _error_key  # noqa: F401 (re-exported)
from .subject import Subject
from .symptom import Symptom


@attrs.define
class Outcome:
    status: str                      # agree, disagree, unsupported, invalid, not-exportable,
                                     # harness-error (lazyloop's adapter failed)
    rules: frozenset = frozenset()
    differences: tuple = ()
    actual: Optional[dict] = None
    error: Optional[str] = None
    ambiguity: Optional[str] = None
    internal: Optional[str] = None   # lazyloop itself crashed: the traceback
    symptom: Optional[Symptom] = None  # what a disagreement shows (symptom.py)
    reading: Optional[str] = None    # the reading whose computed answer explains it
    explained: bool = False          # whether the readings were tried (Checker.attribute)
    refusal: bool = False            # the reading matched by refusing, as the backend failed

    def signature(self, subject) -> tuple:
        """Which instances are shrunk together: those of one program kind that show one
        symptom (shrinking then keeps the symptom and may change the kind)."""
        if self.status != "disagree":
            return (self.status,)
        return ("disagree", subject.kind, str(self.symptom))


@attrs.define
class Disagreement:
    """One distinct disagreement, shrunk: `model` in the backend's format, `feeds`,
    `expected` (lazyloop) and `actual` (backend; None when it failed: see `error`), `rules`
    exercised, `ambiguity` (the register ID of an alternative reading that explains the
    difference, else None)."""

    model: object
    feeds: dict
    expected: dict
    actual: Optional[dict]
    rules: frozenset
    ambiguity: Optional[str]
    defined: dict = attrs.Factory(dict)
    differences: tuple = ()
    error: Optional[str] = None
    subject: Optional[Subject] = None
    signature: tuple = ()
    found_after: int = 0       # examples generated before the first instance
    occurrences: int = 1       # instances in the generation phase
    shrunk: bool = False
    shrinking: str = "off"     # why its shrinking ended: a key of shrinking.SHRINKING
    case: Optional[str] = None  # the case folder it was written to, if any
    root_cause: tuple = ()     # grouping.root_cause of the minimal case
    also_seen_as: tuple = ()   # other signatures with the same root cause
    symptom: Optional[Symptom] = None  # what the backend showed (symptom.py)
    reading: Optional[str] = None      # "A22=inference": the reading whose answer matched
    nodes_before: Optional[int] = None  # nodes of the shrunk program's model
    nodes_after: Optional[int] = None   # nodes of the case after model-level minimising
    minimising: str = "off"    # why model-level minimising ended (reducing.Reduction)
    op: Optional[str] = None   # an op fault: the body op that disagrees alone (op_faults.py)
    shape: tuple = ()          # the minimal case's shape (known.py), sorted traits

    @property
    def fault(self) -> str:
        """"op" when a body op disagrees alone, outside any loop (its case is the op); else
        "loop"."""
        return "op" if self.op else "loop"

    @property
    def kind(self) -> str:
        return self.signature[2] if len(self.signature) > 2 else "?"

    def describe(self) -> str:
        lines = [f"{self.subject.kind if self.subject else '?'}: "
                 + "; ".join(f"{d.output}: {d.kind}: {d.detail}" for d in self.differences)]
        if self.error:
            lines.append(f"backend error: {self.error.strip()[:500]}")
        if self.op:
            lines.append(f"op fault: {self.op} alone, outside any loop, shows it")
        if self.ambiguity:
            lines.append(f"explained by ambiguity {self.reading or self.ambiguity}")
        lines.append(f"rules: {', '.join(sorted(self.rules))}")
        return "\n".join(lines)


@attrs.frozen
class Refusal:
    """A kind of model the backend refused to load or compile: the reason, how often, an
    example subject."""
    reason: str
    count: int
    example: Optional[Subject]
    rules: frozenset


@attrs.define
class Report:
    backend: str
    seed: int
    examples: int = 0                 # programs run against the backend
    agreements: int = 0
    generated: int = 0                # programs drawn (including invalid / not exportable)
    invalid: int = 0
    not_exportable: int = 0
    disagreements: List[Disagreement] = attrs.Factory(list)
    unsupported: List[Refusal] = attrs.Factory(list)
    coverage: frozenset = frozenset()
    instances: int = 0                # disagreeing examples before grouping
    internal_errors: List[dict] = attrs.Factory(list)  # lazyloop failed: program, traceback
    harness_errors: List[dict] = attrs.Factory(list)   # lazyloop's adapter failed
    seconds: float = 0.0
    by_kind: Counter = attrs.Factory(Counter)
    backend_version: Optional[str] = None
    stopped: Optional[str] = None     # None: complete; "interrupted" or "max-time": partial
    backend_spec: Optional[str] = None  # a plug-in's module:factory (plugins.plugin_spec)
    op_types: frozenset = frozenset()  # ONNX op types inside the bodies of programs run
    costs: Optional[object] = None    # what the campaign spent its time on (costs.Costs)
    processes: int = 1                # the processes that explored (Dask workers)
    redrawn: int = 0                  # draws replaced: their shape matched a known cause
    known_shapes: int = 0             # known causes (of a baseline) with a shape to match
    models: tuple = ()                # --model: {path, format, programs, findings} each

    @property
    def ran(self) -> int:
        """Programs the backend actually ran (not refused): agreements and disagreements."""
        return self.agreements + self.instances

    @property
    def unsupported_count(self) -> int:
        return sum(r.count for r in self.unsupported)

    def to_json(self, fail_on: str = "unexplained", baseline=frozenset()) -> str:
        """The versioned JSON report (spec/52-report-schema.md): findings judged by
        `fail_on`, those whose root cause is in `baseline` marked known."""
        from .schema import check_document, judge, to_json
        return to_json(judge(check_document(self), fail_on, frozenset(baseline)))

    def summary(self) -> str:
        return summary_table(self)


# rules that every compiled loop program exercises: they tell no disagreement apart
EVERY_PROGRAM_RULES = frozenset({"stream/shape", "stream/map", "stream/memo",
                                 "structure/acyclic", "structure/exit", "structure/limits",
                                 "structure/recurrence", "structure/shapes"})


def summary_table(report: Report) -> str:
    rows = [("backend", f"{report.backend} {report.backend_version or ''}".strip()),
            ("seed", report.seed),
            ("programs generated", report.generated),
            ("examples (given to the backend)", report.examples),
            ("  ran (not refused)", report.ran),
            ("agreements", report.agreements),
            ("disagreeing examples", report.instances),
            ("distinct disagreements (root causes)", len(report.disagreements)),
            ("  op faults (a body op disagrees alone)",
             sum(1 for d in report.disagreements if d.op)),
            ("  explained by an ambiguity", sum(1 for d in report.disagreements if d.ambiguity)),
            ("unsupported (refused to load/compile)", report.unsupported_count),
            ("invalid for lazyloop (skipped)", report.invalid),
            ("not exportable (skipped)", report.not_exportable),
            ("op types inside loop and branch bodies", len(report.op_types)),
            ("seconds", f"{report.seconds:.1f}")]
    if report.costs is not None and report.costs.seconds["backend"] > 0:
        from .costs import overhead
        rows.append(("tester overhead (wall / the backend's own run)",
                     f"{overhead(report.seconds, report.costs.seconds):.1f}x"))
    if report.known_shapes:
        rows.insert(-1, (f"draws replaced (shaped like one of {report.known_shapes} known "
                         f"causes)", report.redrawn))
    if report.stopped:
        unshrunk = sum(d.shrinking in ("off", "interrupted") for d in report.disagreements)
        rows.append(("stopped early", f"{report.stopped} (a partial report; {unshrunk} "
                                      f"finding(s) not shrunk)"))
    width = max(len(k) for k, _ in rows)
    lines = [f"{k:<{width}}  {v}" for k, v in rows]
    if report.disagreements:
        lines += ["", "disagreements by rule (distinct disagreements whose minimal program "
                      "exercises it; rules every program exercises left out):"]
        by_rule = Counter(r for d in report.disagreements for r in d.rules
                          if r not in EVERY_PROGRAM_RULES)
        for rule, n in sorted(by_rule.items(), key=lambda kv: (-kv[1], kv[0])):
            lines.append(f"  {rule:<28} {n}")
        for title, fault in (("distinct disagreements (loop faults):", "loop"),
                             ("op faults (the op alone, outside any loop, disagrees too):",
                              "op")):
            listed = [(k, d) for k, d in enumerate(report.disagreements) if d.fault == fault]
            if listed:
                lines += ["", title] + [finding_line(k, d) for k, d in listed]
    if report.unsupported:
        lines += ["", "unsupported (reason: count):"]
        for r in sorted(report.unsupported, key=lambda r: -r.count):
            lines.append(f"  {r.count:>4}  {r.reason[:150]}")
    lines += ["", f"rule coverage ({len(report.coverage)}): " + ", ".join(sorted(report.coverage))]
    for title, errors in (("lazyloop internal errors", report.internal_errors),
                          ("harness errors (lazyloop's adapter failed)", report.harness_errors)):
        if errors:
            lines += ["", f"{title}: {len(errors)}"]
            lines += [f"  program {e['program']} ({e['kind']}): {e['error'][:200]}"
                      for e in errors[:5]]
    return "\n".join(lines)


def finding_line(k: int, d: Disagreement) -> str:
    """One finding in the summary: its program kind, symptom, occurrences and notes."""
    amb = f" [ambiguity {d.reading or d.ambiguity}]" if d.ambiguity else ""
    if d.op:
        amb += f" [op fault: {d.op}]"
    if d.shrinking not in ("complete", "off"):
        amb += f" [shrinking cut: {d.shrinking}]"
    if d.nodes_after is not None:
        amb += f" [{d.nodes_before} -> {d.nodes_after} nodes]"
    program = d.subject.kind if d.subject is not None else d.signature[1]
    return (f"  {k}: {program} {d.symptom or d.kind} x{d.occurrences}{amb}: "
            + "; ".join(f"{x.output}: {x.detail}" for x in d.differences)[:160])
