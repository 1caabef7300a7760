"""The versioned JSON report of `lazyloop check` and `lazyloop conformance run`
(spec/52-report-schema.md), the verdict that turns it into an exit status (`--fail-on`,
`--baseline`), and its JUnit rendering. One document, built here, feeds all three."""
from __future__ import annotations

import json
import re
from typing import Optional
from xml.sax.saxutils import escape, quoteattr

from .grouping import key_text

SCHEMA_VERSION = 2  # 2: root causes by symptom and minimal case; nodes; readings; errors
OUTCOMES = ("agree", "disagree", "crash", "hang", "oom", "unsupported", "refused-by-spec")
FAIL_ON = {
    "unexplained": "findings no registered ambiguity explains (the default)",
    "any": "every finding, those an ambiguity explains too",
    "crash": "only crashes, hangs and out-of-memory ends of the backend",
    "loop": "loop faults no registered ambiguity explains: op faults (a body op that "
            "disagrees alone, outside any loop) are listed but do not count",
    "never": "no finding (the exit status then only says whether the run worked)",
}
# the Python distribution whose version a built-in backend reports
BACKEND_DISTRIBUTIONS = {"onnxruntime": "onnxruntime", "onnx-reference": "onnx",
                         "openvino": "openvino", "tract": "tract",
                         "iree": "iree-base-compiler", "mnn": "mnn", "onnxslim": "onnxslim",
                         "onnxsim": "onnxsim", "onnxoptimizer": "onnxoptimizer"}


def lazyloop_version() -> str:
    from .. import __version__
    return __version__


def backend_version(b) -> Optional[str]:
    """The version of a backend: its own `version` attribute, else the version of the
    package a built-in backend runs, else lazyloop's for lazyloop's own backends."""
    name = b if isinstance(b, str) else getattr(b, "name", "")
    own = None if isinstance(b, str) else getattr(b, "version", None)
    if own:
        return str(own)
    if name.startswith("lazyloop"):
        return lazyloop_version()
    dist = BACKEND_DISTRIBUTIONS.get(name.split("+")[0])
    if dist is None:
        return None
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version(dist)
    except PackageNotFoundError:
        return None


def outcome_of(d) -> str:
    """disagree, crash, hang or oom: how a finding showed (from the backend's error)."""
    explicit = getattr(d, "outcome", None)
    if explicit in OUTCOMES:
        return explicit
    error = d.error or ""
    if ("MemoryError" in error or "out of memory" in error.lower() or "bad_alloc" in error
            or "memory limit" in error):  # the last: isolation's RSS limit (--memory-mb)
        return "oom"
    if "process died" in error:
        return "crash"
    if "no answer within" in error:
        return "hang"
    return "disagree"


def crash_signal(d) -> Optional[str]:
    match = re.search(r"signal (SIG[A-Z0-9]+|\d+)", d.error or "")
    return match.group(1) if match else None


def root_cause(d) -> str:
    """A finding's key: stable across runs and seeds for one fault (what a baseline lists)."""
    own = getattr(d, "root_cause", None)
    if own:
        return own if isinstance(own, str) else key_text(own)
    return "/".join(str(part) for part in d.signature[1:]) or "unknown"


def finding_entry(d) -> dict:
    symptom = getattr(d, "symptom", None)
    return {"root_cause": root_cause(d), "outcome": outcome_of(d),
            "kind": d.subject.kind if d.subject is not None else None,
            "symptom": None if symptom is None else str(symptom),
            "rules": sorted(d.rules), "ambiguity": d.ambiguity,
            "explained_by": getattr(d, "reading", None),
            "crash_signal": crash_signal(d), "case": d.case,
            "occurrences": d.occurrences, "found_after": d.found_after, "shrunk": d.shrunk,
            "shrinking": getattr(d, "shrinking", "off"),
            "nodes": {"before": getattr(d, "nodes_before", None),
                      "after": getattr(d, "nodes_after", None)},
            "minimising": getattr(d, "minimising", "off"),
            "fault": "op" if getattr(d, "op", None) else "loop",
            "op": getattr(d, "op", None),
            "shape": list(getattr(d, "shape", ())),
            "differences": [f"{x.output}: {x.kind}: {x.detail}" for x in d.differences],
            "error": (d.error or None) and d.error.strip()[:2000]}


def check_document(report, command: Optional[str] = None) -> dict:
    """The JSON document (a dict) of a `check` campaign's `Report`."""
    findings = [finding_entry(d) for d in report.disagreements]
    outcomes = dict.fromkeys(OUTCOMES, 0)
    outcomes["agree"] = report.agreements
    outcomes["unsupported"] = report.unsupported_count
    outcomes["refused-by-spec"] = report.invalid
    for d, f in zip(report.disagreements, findings):
        outcomes[f["outcome"]] += d.occurrences
    return {
        "schema_version": SCHEMA_VERSION, "command": "check",
        "invocation": command, "lazyloop_version": lazyloop_version(),
        "backend": {"name": report.backend, "version": report.backend_version},
        "seed": report.seed, "complete": report.stopped is None, "stopped": report.stopped,
        "seconds": round(report.seconds, 3),
        "programs": {"generated": report.generated, "run": report.examples,
                     "agreed": report.agreements,
                     "refused": report.invalid + report.not_exportable,
                     "not_exportable": report.not_exportable,
                     "redrawn": getattr(report, "redrawn", 0)},
        "outcomes": outcomes, "findings": findings,
        "unsupported": [{"reason": r.reason, "count": r.count} for r in report.unsupported],
        "coverage": sorted(report.coverage),
        "op_types": sorted(getattr(report, "op_types", ())),
        "models": [dict(m) for m in getattr(report, "models", ())],
        "internal_errors": [dict(e) for e in report.internal_errors],
        "harness_errors": [dict(e) for e in getattr(report, "harness_errors", [])],
        "costs": None if report.costs is None else
        report.costs.document(report.seconds, report.processes),
    }


def to_json(document: dict) -> str:
    return json.dumps(document, indent=2, sort_keys=False, default=str) + "\n"


# ------------------------------------------------------------------------------------------
# The verdict: which findings count, and the exit status
# ------------------------------------------------------------------------------------------


class StaleBaseline(ValueError):
    """A baseline written before root causes were keyed by symptom and minimal case
    (`schema_version` 1): its keys cannot name a finding of this version."""


def load_baseline(path: str) -> set:
    """The root-cause keys of an earlier report (its findings are known, not new). A report
    of `schema_version` 1 keyed root causes otherwise (by rules, not by symptom and minimal
    case), and its keys cannot be mapped onto today's: `StaleBaseline`."""
    with open(path, encoding="utf-8") as f:
        document = json.load(f)
    if not isinstance(document, dict) or "findings" not in document:
        raise ValueError("not a lazyloop JSON report (no 'findings')")
    keys = {f["root_cause"] for f in document["findings"]}
    if all(k.startswith("conformance/") for k in keys):
        return keys  # the conformance suite's keys are its case names, in every version
    if document.get("schema_version", 1) < SCHEMA_VERSION:
        raise StaleBaseline(f"it is a schema_version {document.get('schema_version', 1)} "
                            f"report: its root-cause keys predate grouping by symptom and "
                            f"minimal case (schema_version {SCHEMA_VERSION}) and match no "
                            f"finding; take a new baseline with this version")
    return keys


def counts(finding: dict, fail_on: str) -> bool:
    if finding.get("known") or fail_on == "never":
        return False
    if fail_on == "any":
        return True
    if fail_on == "crash":
        return finding["outcome"] in ("crash", "hang", "oom")
    if fail_on == "loop" and finding.get("fault") == "op":
        return False
    return finding["ambiguity"] is None


def judge(document: dict, fail_on: str = "unexplained", known=frozenset()) -> dict:
    """Mark each finding `known` (in the baseline) and `counts` (fails the run), and add the
    `verdict` with its exit status: 3 lazyloop (or its adapter for the backend) failed, 1 a
    finding counts, 130 interrupted (Ctrl-C) with none that counts, 2 nothing ran, else 0."""
    for f in document["findings"]:
        f["known"] = f["root_cause"] in known
        f["counts"] = counts(f, fail_on)
    counted = sum(f["counts"] for f in document["findings"])
    # how many programs met each known cause (0: not met this time)
    document["known_causes"] = {k: sum(f.get("occurrences", 1) for f in document["findings"]
                                       if f["root_cause"] == k) for k in sorted(known)}
    if document.get("internal_errors") or document.get("harness_errors"):
        status = 3
    elif counted:
        status = 1
    elif document.get("stopped") == "interrupted":
        status = 130  # Ctrl-C with nothing that counts: no verdict on what never ran
    else:
        status = 2 if document["programs"]["run"] == 0 else 0
    document["verdict"] = {"fail_on": fail_on, "counted": counted,
                           "known": sum(f["known"] for f in document["findings"]),
                           "explained": sum(f["ambiguity"] is not None
                                            for f in document["findings"]),
                           "op_faults": sum(f.get("fault") == "op"
                                            for f in document["findings"]),
                           "exit_status": status}
    return document


# ------------------------------------------------------------------------------------------
# JUnit: one testcase for the campaign, one per root cause
# ------------------------------------------------------------------------------------------


def junit_xml(document: dict) -> str:
    backend = document["backend"]["name"]
    suite = f"lazyloop {document['command']} {backend}"
    cls = f"lazyloop.{document['command']}.{re.sub(r'[^A-Za-z0-9_-]+', '_', backend)}"
    cases = [_campaign_case(document, cls)]
    for f in document["findings"]:
        body = escape("\n".join(f["differences"] + ([f["error"]] if f["error"] else [])
                                + [f"rules: {', '.join(f['rules'])}",
                                   f"case: {f['case'] or '-'}"]))
        if f["counts"]:
            inner = (f'<failure message={quoteattr(f["outcome"] + ": " + f["root_cause"])}>'
                     f"{body}</failure>")
        else:
            why = ("known (in the baseline)" if f["known"] else
                   f"explained by ambiguity {f['ambiguity']}" if f["ambiguity"] else
                   f"an op fault ({f.get('op')}), not counted (--fail-on loop)"
                   if f.get("fault") == "op" and document["verdict"]["fail_on"] == "loop"
                   else "not counted (--fail-on)")
            inner = f"<skipped message={quoteattr(why)}/><system-out>{body}</system-out>"
        cases.append(f"  <testcase classname={quoteattr(cls)} "
                     f"name={quoteattr(f['root_cause'])}>{inner}</testcase>")
    failures = sum(f["counts"] for f in document["findings"]) + (
        0 if document["verdict"]["exit_status"] in (0, 1, 130) else 1)
    skipped = sum(not f["counts"] for f in document["findings"])
    return ('<?xml version="1.0" encoding="utf-8"?>\n<testsuites>\n'
            f'<testsuite name={quoteattr(suite)} tests="{len(cases)}" failures="{failures}" '
            f'skipped="{skipped}" errors="0" time="{document.get("seconds", 0)}">\n'
            + "\n".join(cases) + "\n</testsuite>\n</testsuites>\n")


def _campaign_case(document, cls) -> str:
    p = document["programs"]
    text = escape(f"lazyloop {document['lazyloop_version']}; backend "
                  f"{document['backend']['name']} {document['backend']['version']}; seed "
                  f"{document.get('seed')}; programs generated {p['generated']}, run "
                  f"{p['run']}, agreed {p['agreed']}; outcomes {document['outcomes']}; "
                  f"stopped: {document.get('stopped') or 'no'}")
    status = document["verdict"]["exit_status"]
    if status in (0, 1, 130):
        return (f"  <testcase classname={quoteattr(cls)} name=\"campaign\">"
                f"<system-out>{text}</system-out></testcase>")
    why = "lazyloop itself failed" if status == 3 else "no program ran"
    return (f"  <testcase classname={quoteattr(cls)} name=\"campaign\">"
            f"<failure message={quoteattr(why)}>{text}</failure></testcase>")
