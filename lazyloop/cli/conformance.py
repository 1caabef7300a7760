"""`lazyloop conformance export DIR | run --backend NAME | list`: the command line of the
conformance suite. `run` writes the same versioned JSON report as `lazyloop check`
(spec/52-report-schema.md: every failing or ambiguous case is a finding whose root cause is
`conformance/<case>`), takes the same --fail-on and --baseline, and exits by the same verdict.
"""
from __future__ import annotations

import shlex
import sys

from ..conformance import CASES, export_suite, run_suite, table


def build_parser():
    from .common import Parser, positive_float
    from ..difftest.schema import FAIL_ON
    parser = Parser(prog="lazyloop conformance",
                    description="the hand-computed conformance suite")
    sub = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    p = sub.add_parser("export", help="write the cases in the ONNX backend-test layout")
    p.add_argument("directory", help="where to write one folder per case")
    p.add_argument("--case", action="append", help="only these cases, repeatable "
                   "(default: all)")
    p = sub.add_parser("run", help="run the cases against a backend")
    p.add_argument("--backend", required=True, metavar="NAME",
                   help="the backend to run: a built-in name, a name an installed package "
                        "registers (lazyloop.backends), or module:factory, looked up from "
                        "the current folder first, as python -m does")
    p.add_argument("--case", action="append", help="only these cases, repeatable "
                   "(default: all)")
    p.add_argument("--format", choices=("onnx", "openvino", "core"),
                   help="the model format to give the backend (default: its first)")
    p.add_argument("--no-isolate", dest="isolate", action="store_false",
                   help="run the backend in this process (a crash then ends the run)")
    p.add_argument("--timeout", type=positive_float, default=60.0, metavar="SECONDS",
                   help="seconds one case may run before it counts as hanging")
    p.add_argument("--json", metavar="PATH", help="write the JSON report here")
    p.add_argument("--junit", metavar="PATH", help="write a JUnit XML report here")
    p.add_argument("--baseline", metavar="KNOWN.json",
                   help="a JSON report of an earlier run: its findings do not fail this run")
    p.add_argument("--fail-on", choices=sorted(FAIL_ON), default="unexplained",
                   help="which findings make the exit status 1 (as for lazyloop check)")
    sub.add_parser("list", help="list the cases and their rules")
    return parser


def cli_conformance(argv) -> int:
    from .common import guarded
    return guarded("lazyloop conformance", _command, list(argv))


def _command(argv) -> int:
    from .common import UsageError
    args = build_parser().parse_args(argv)
    unknown = [n for n in (getattr(args, "case", None) or []) if n not in CASES]
    if unknown:
        raise UsageError(f"unknown cases {unknown} (see lazyloop conformance list)")
    if args.action == "list":
        for c in CASES.values():
            amb = f"  [{', '.join(c.ambiguities)}]" if c.ambiguities else ""
            print(f"{c.name:<36} {c.format:<9} {', '.join(c.rules)}{amb}")
        return 0
    if args.action == "export":
        try:
            paths = export_suite(args.directory, args.case)
        except OSError as exc:
            raise UsageError(f"{args.directory}: cannot write there ({exc.strerror})") from None
        print(f"wrote {len(paths)} cases to {args.directory}")
        return 0
    return run_command(args, argv)


def run_command(args, argv) -> int:
    from .backend import close_backend, start_backend
    from .common import report_options, write_reports
    from ..difftest.schema import backend_version, judge
    known = report_options(args)
    import time
    b = start_backend(args.backend, args.isolate, args.timeout, prog="lazyloop conformance")
    start = time.monotonic()
    try:
        results = run_suite(b, args.case, args.format)
    finally:
        close_backend(b)
    print(table(results, getattr(b, "name", args.backend)))
    command = "lazyloop conformance " + " ".join(shlex.quote(a) for a in argv)
    document = conformance_document(results, args.backend, command, backend_version(b))
    document["seconds"] = round(time.monotonic() - start, 3)
    document = judge(document, args.fail_on, known)
    verdict = write_reports(document, (args.json,), args.junit)
    if verdict["exit_status"] == 2:
        print("lazyloop conformance: no case ran on the backend", file=sys.stderr)
    return verdict["exit_status"]


def conformance_document(results, backend_name: str, command=None, version=None) -> dict:
    """The suite's results in the report schema of spec/52-report-schema.md (`version`: the
    backend's, as `schema.backend_version` gives it)."""
    from ..difftest.schema import OUTCOMES, SCHEMA_VERSION, lazyloop_version
    outcomes = dict.fromkeys(OUTCOMES, 0)
    findings = []
    for r in results:
        if r.status in ("pass", "unsupported"):
            outcomes["agree" if r.status == "pass" else "unsupported"] += 1
            continue
        outcome = ("crash" if "process died" in r.detail else
                   "hang" if "no answer within" in r.detail else "disagree")
        outcomes[outcome] += 1
        signal = r.detail.split("signal ", 1)[1].split(")")[0] if "signal " in r.detail \
            else None
        findings.append({"root_cause": f"conformance/{r.case}", "outcome": outcome,
                         "kind": "conformance", "rules": list(r.rules),
                         "ambiguity": ", ".join(r.ambiguities) or None,
                         "crash_signal": signal, "case": r.case, "occurrences": 1,
                         "found_after": None, "shrunk": False, "differences": [r.detail],
                         "error": None})
    ran = sum(r.status != "unsupported" for r in results)
    return {"schema_version": SCHEMA_VERSION, "command": "conformance", "invocation": command,
            "lazyloop_version": lazyloop_version(),
            "backend": {"name": backend_name, "version": version},
            "seed": None, "complete": True, "stopped": None, "seconds": 0.0,
            "programs": {"generated": len(results), "run": ran,
                         "agreed": outcomes["agree"], "refused": 0, "not_exportable": 0},
            "outcomes": outcomes, "findings": findings,
            "unsupported": [{"reason": r.detail[:300], "count": 1} for r in results
                            if r.status == "unsupported"],
            "coverage": sorted({rule for r in results if r.status != "unsupported"
                                for rule in r.rules}),
            "internal_errors": [], "harness_errors": []}
