"""`lazyloop check`: the command-line front of the differential tester.

Everything the user gives is checked before the campaign starts (options, --out created and
written to, --json/--junit writable, the baseline readable, the backend started); the
campaign then runs with a progress line, can be cut short by Ctrl-C (while exploring or
shrinking) or --max-time (the report so far is still written), and its exit status follows
the verdict of `lazyloop.difftest.schema.judge` (0 nothing new, 1 findings that count, 2
nothing ran, 3 lazyloop failed, 130 interrupted with no finding that counts).
"""
from __future__ import annotations

import contextlib
import os
import re
import shlex
import signal
import sys
import threading

from ..difftest.backends import BACKENDS
from ..difftest.cases import Context, write_case
from ..difftest.check_campaign import check
from ..difftest.isolation import DEFAULT_MEMORY_MB
from ..difftest.plugins import plugin_spec
from ..difftest.schema import FAIL_ON, check_document, judge, lazyloop_version
from ..difftest.shrinking import (DEFAULT_MINIMIZE_STEPS, DEFAULT_SHRINK_HANGS,
                                   DEFAULT_SHRINK_SECONDS, DEFAULT_SHRINK_STEPS,
                                   DEFAULT_SHRINK_TOTAL_SECONDS, abort_if_asked)

from .backend import close_backend, start_backend

EXIT_INTERNAL = 3
DEFAULT_PROGRAMS = 200  # --examples without --model
DEFAULT_FEEDS = 50      # --examples per --model
SCHEDULER_TIMEOUT = 5  # seconds a --scheduler address may take to answer


def subject_kinds():
    """Every kind `--kind` may name: core programs and each dialect kind of the strategies."""
    from ..strategies.dialects import ONNX_KINDS, ONNX_NAMED_KINDS, OPENVINO_KINDS
    return ("core", *ONNX_KINDS, *ONNX_NAMED_KINDS, *OPENVINO_KINDS)


def build_parser():
    from .common import (Parser, add_tolerance_options, non_negative_float, non_negative_int,
                         positive_float, positive_int)
    parser = Parser(prog="lazyloop check",
                    description="differential-test a backend against lazyloop: generate loop "
                                "programs, run them on the backend, shrink what differs")
    parser.add_argument("--backend", required=True, metavar="NAME",
                        help=f"the backend to test: one of {', '.join(sorted(BACKENDS))}, a "
                             f"name an installed package registers in the entry-point group "
                             f"lazyloop.backends, or module:factory (a callable returning a "
                             f"backend; the module is looked up from the current folder "
                             f"first, as python -m does)")
    parser.add_argument("--examples", type=positive_int, default=None, metavar="N",
                        help=f"programs to generate; with --model, feeds per model (default: "
                             f"{DEFAULT_PROGRAMS}; with --model, {DEFAULT_FEEDS})")
    parser.add_argument("--model", action="append", metavar="PATH",
                        help="check the backend on this model (.onnx or an OpenVINO .xml IR) "
                             "or on every model in this folder, repeatable: feeds are drawn "
                             "from its declared inputs and shrunk, the model is kept "
                             "(default: generated programs)")
    parser.add_argument("--seed", type=non_negative_int, default=0, help="the random seed")
    parser.add_argument("--out", default=None, metavar="DIR",
                        help="write each finding as a case folder and report.json here; the "
                             "folder must be new or empty (see --force) (default: no folder)")
    parser.add_argument("--force", action="store_true",
                        help="reuse a non-empty --out folder, replacing the case folders and "
                             "reports an earlier run left there")
    parser.add_argument("--json", metavar="PATH", default=None,
                        help="write the JSON report (spec/52-report-schema.md) here")
    parser.add_argument("--junit", metavar="PATH", default=None,
                        help="write a JUnit XML report here: one testcase per root cause and "
                             "one for the campaign")
    parser.add_argument("--baseline", metavar="KNOWN.json", default=None,
                        help="a JSON report of an earlier run: its findings are known and do "
                             "not fail this run, so CI fails only on new ones")
    parser.add_argument("--fail-on", choices=sorted(FAIL_ON), default="unexplained",
                        help="which findings make the exit status 1: "
                             + "; ".join(f"{k}: {v}" for k, v in FAIL_ON.items()))
    parser.add_argument("--format", action="append", choices=("onnx", "openvino"),
                        help="restrict to these model formats, repeatable (default: every "
                             "format the backend takes)")
    parser.add_argument("--kind", action="append", choices=subject_kinds(),
                        help="restrict to these program kinds, repeatable (default: all)")
    parser.add_argument("--no-shrink", action="store_true",
                        help="report the first instance of each finding, unshrunk")
    parser.add_argument("--shrink-steps", type=non_negative_int, default=DEFAULT_SHRINK_STEPS,
                        metavar="N", help="new programs the shrinker may run on the backend "
                                          "per finding (steps, not seconds: the same minimal "
                                          "program on any machine)")
    parser.add_argument("--shrink-seconds", type=non_negative_float,
                        default=DEFAULT_SHRINK_SECONDS, metavar="SECONDS",
                        help="wall time the shrinker may spend on one finding; past it the "
                             "finding is reported as far as it was shrunk (0: no limit)")
    parser.add_argument("--shrink-total-seconds", type=non_negative_float,
                        default=DEFAULT_SHRINK_TOTAL_SECONDS, metavar="SECONDS",
                        help="wall time the whole shrink stage may take; findings not reached "
                             "are reported unshrunk (0: no limit)")
    parser.add_argument("--shrink-hangs", type=non_negative_int,
                        default=DEFAULT_SHRINK_HANGS, metavar="N",
                        help="shrink candidates of one finding that may time out (each with "
                             "a shorter time limit than --timeout, from the backend's slowest "
                             "answer) before its shrinking stops")
    parser.add_argument("--minimize-steps", type=non_negative_int,
                        default=DEFAULT_MINIMIZE_STEPS, metavar="N",
                        help="edited models the model-level minimiser may run on the backend "
                             "per finding, after shrinking (0: keep the shrunk program's "
                             "model)")
    parser.add_argument("--max-time", type=positive_float, default=None, metavar="SECONDS",
                        help="stop generating after this long and report what was found so "
                             "far (Ctrl-C does the same) (default: no limit)")
    parser.add_argument("--timeout", type=positive_float, default=60.0, metavar="SECONDS",
                        help="seconds one model may run on the backend before it counts as "
                             "hanging")
    parser.add_argument("--memory-mb", type=positive_float, default=DEFAULT_MEMORY_MB,
                        metavar="MIB", help="resident memory of the backend's process past "
                                            "which it is killed and the program counts as "
                                            "out of memory (oom)")
    parser.add_argument("--no-isolate", dest="isolate", action="store_false",
                        help="run the backend in this process (a crash then ends the run)")
    parser.add_argument("--workers", type=non_negative_int, default=0, metavar="N",
                        help="explore the programs in shards on N local Dask workers (the "
                             "[workers] extra); the same seed gives the same findings "
                             "(default: 0, this process)")
    parser.add_argument("--scheduler", default=None, metavar="ADDRESS",
                        help="address of a running Dask scheduler (tcp://host:8786) to run the "
                             "shards on, which must answer within "
                             f"{SCHEDULER_TIMEOUT} s; its workers need lazyloop and the "
                             "backend installed, a module:factory's module too (default: "
                             "none)")
    add_tolerance_options(parser)
    parser.add_argument("--quiet", action="store_true", help="no progress line")
    return parser


def cli_check(argv) -> int:
    """`lazyloop check --backend NAME ...` (see `lazyloop check --help`)."""
    from .common import guarded
    return guarded("lazyloop check", _check_command, list(argv))


def _check_command(argv) -> int:
    from .common import report_options
    args = build_parser().parse_args(argv)
    args.model = model_paths(args)
    args.examples = args.examples or (DEFAULT_FEEDS if args.model else DEFAULT_PROGRAMS)
    known = report_options(args)
    causes = baseline_shapes(args.baseline, known)
    if args.workers or args.scheduler:
        reach_workers(args.scheduler)
    # a second Ctrl-C stops at once until the report is written, not only while programs run
    with ctrl_c_stops():
        return checked(args, argv, known, causes)


def checked(args, argv, known, causes) -> int:
    """The campaign of `check` and its report (case folders, JSON, JUnit); the exit status."""
    from .common import prepare_out, write_reports
    b = start_backend(args.backend, args.isolate, args.timeout, args.memory_mb,
                      "lazyloop check")
    try:
        programs_exist(b, args)
        if args.out:
            prepare_out(args.out, args.force)
        report = campaign(b, args, causes)
        abort_if_asked()  # a second Ctrl-C whose own raise was swallowed: no report
    finally:
        close_backend(b)
    print(report.summary())
    if report.stopped == "interrupted":
        unshrunk = sum(d.shrinking in ("off", "interrupted") for d in report.disagreements)
        print(f"lazyloop check: interrupted (Ctrl-C) after {report.generated} program(s): "
              f"writing the {len(report.disagreements)} finding(s) so far, {unshrunk} of them "
              f"not shrunk", file=sys.stderr)
    command = "lazyloop check " + " ".join(shlex.quote(a) for a in argv)
    if args.out:
        context = Context(report.backend, report.backend_version, lazyloop_version(),
                          args.seed, command, rerun_backend=shlex.quote(args.backend),
                          plugin=plugin_spec(args.backend))
        for k, d in enumerate(report.disagreements):
            kind = re.sub(r"[^a-z0-9]+", "-", str(d.symptom or d.kind).lower())[:40]
            program = d.subject.kind if d.subject is not None else d.signature[1]
            program = f"op-{d.op}" if d.op else program
            name = f"case_{k:03d}_{program}_{kind}".strip("-")
            write_case(args.out, name, d, context)
            d.case = name
        print(f"\nwrote {len(report.disagreements)} case(s) to {args.out}")
    document = judge(check_document(report, command), args.fail_on, known)
    verdict = write_reports(document, (args.json, args.out and os.path.join(args.out,
                                                                      "report.json")),
                            args.junit)
    if verdict["exit_status"] == 2:
        print("lazyloop check: no program ran on the backend (every generated program was "
              "refused before it)", file=sys.stderr)
    return verdict["exit_status"]


def baseline_shapes(path, known):
    """The known causes of `--baseline` with the shapes programs are matched by (spec/51,
    "New faults before old ones"); a note when none has one (a report that keeps no shapes,
    without its case folders beside it: its causes are known, drawing is as without it)."""
    if not known:
        return None
    from ..difftest.known import load_known
    causes = load_known(path)
    if not causes.shapes:
        print(f"lazyloop check: note: --baseline {path} keeps no shape of its findings and no "
              f"case folder is beside it: its root causes are known, but programs are drawn "
              f"as without it", file=sys.stderr)
    return causes


def reach_workers(address) -> None:
    """--workers/--scheduler need Dask distributed (the [workers] extra); a --scheduler
    address must parse and answer within `SCHEDULER_TIMEOUT` seconds -- all before the
    backend starts."""
    from .common import UsageError
    from distributed import Client
    if address is None:
        return
    from distributed.comm.addressing import parse_address, parse_host_port
    try:
        scheme, location = parse_address(address, strict=False)
        if scheme in ("tcp", "tls"):
            parse_host_port(location)
    except (ValueError, TypeError) as exc:
        raise UsageError(f"--scheduler {address}: not a Dask scheduler address such as "
                         f"tcp://HOST:8786 ({exc})") from None
    try:
        Client(address, timeout=f"{SCHEDULER_TIMEOUT}s").close()
    except (OSError, TimeoutError) as exc:
        raise UsageError(f"--scheduler {address}: no Dask scheduler answered within "
                         f"{SCHEDULER_TIMEOUT} s ({type(exc).__name__}); is it running, "
                         "and is the address right?") from None


def model_paths(args) -> list:
    """The model files of --model (a folder: the .onnx and .xml files in it, sorted), each
    read and its inputs drawable (`model_feeds.declared_inputs`), or one line saying why
    not; --model does not go with --kind, --format, --workers or --scheduler."""
    from .common import UsageError
    if not args.model:
        return None
    for option, given in (("--kind", args.kind), ("--format", args.format),
                          ("--workers", args.workers), ("--scheduler", args.scheduler)):
        if given:
            raise UsageError(f"--model with {option}: a model campaign draws feeds for the "
                             f"given models, in this process; drop {option}")
    paths = []
    for given in args.model:
        if os.path.isdir(given):
            found = sorted(os.path.join(given, f) for f in os.listdir(given)
                           if f.endswith((".onnx", ".xml")))
            if not found:
                raise UsageError(f"--model {given}: the folder holds no .onnx or .xml model")
            paths += found
        else:
            paths.append(given)
    for path in paths:
        model_inputs(path)
    return paths


def model_inputs(path) -> None:
    """Read `path` as `lazyloop run` does (a file that is not a model is one line) and its
    declared inputs (one that cannot be drawn is one line)."""
    from .common import UsageError
    from .inputs import model_format, read_ir_file, read_onnx_file
    from ..core.errors import ModelError
    from ..difftest.model_feeds import declared_inputs
    fmt = model_format(path)
    model = read_onnx_file(path) if fmt == "onnx" else read_ir_file(path)
    try:
        declared_inputs(path, fmt, model)
    except ModelError as exc:
        raise UsageError(str(exc)) from None


def programs_exist(b, args) -> None:
    """--format and --kind must leave something to generate for this backend, and it must
    take the format of each --model."""
    from .common import UsageError
    from ..difftest.backends import formats_of
    from ..difftest.model_feeds import model_format
    from ..difftest.subject import subjects
    takes = formats_of(b)
    for path in args.model or ():
        if model_format(path) not in takes:
            raise UsageError(f"--model {path}: {args.backend} takes {', '.join(takes)} "
                             f"models, not {model_format(path)}")
    wrong = [f for f in args.format or () if f not in takes]
    if wrong:
        raise UsageError(f"--format {wrong[0]}: {args.backend} takes {', '.join(takes)}")
    try:
        subjects(tuple(args.format or takes), args.kind)
    except ValueError:
        raise UsageError(f"--kind {', '.join(args.kind or [])}: no such programs in the "
                         f"formats {', '.join(args.format or takes)}") from None


@contextlib.contextmanager
def ctrl_c_stops():
    """Ctrl-C during a campaign, as a fuzzer takes it: the first only marks the campaign
    interrupted (`INTERRUPTED`) -- exploring and shrinking stop at the next program, a wait
    for an isolated backend ends at once, and the findings so far are reported; raising
    KeyboardInterrupt there instead could land anywhere, also where the report is being
    made, or be swallowed by a library. A second Ctrl-C stops at once: it raises `Abort`,
    which no handler that keeps a partial campaign catches, and nothing is written."""
    from ..difftest.shrinking import ABORTED, INTERRUPTED, Abort

    def interrupted(signum, frame):
        if INTERRUPTED.is_set():
            ABORTED.set()  # seen at the next program even if this raise is swallowed
            raise Abort()
        INTERRUPTED.set()

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    INTERRUPTED.clear()
    ABORTED.clear()
    previous = signal.signal(signal.SIGINT, interrupted)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        INTERRUPTED.clear()


def progress_text(name, stage, done, total, tally, examples, seconds) -> str:
    """The progress line: programs done of all, findings (distinct signatures) so far, the
    outcomes, elapsed seconds; while shrinking, which finding is being shrunk."""
    refused = tally.examples - tally.agreements - tally.instances
    counts = (f"{tally.generated}/{examples} programs, {len(tally.first_seen)} finding(s) "
              f"(agree {tally.agreements}, disagree {tally.instances}, refused {refused})")
    if stage == "shrink":
        what = f"shrinking finding {done + 1}/{total}; "
    else:
        what = "done: " if stage == "done" else ""
    return f"lazyloop check {name}: {what}{counts}, {seconds:.0f} s"


def campaign(b, args, causes=None):
    """`check` with a progress line, nothing written to the current folder (the campaign
    keeps hypothesis' files in a temporary folder, `campaign.hypothesis_files_in_temp`);
    `causes`: the baseline's known causes, drawn less often."""
    import time

    from .common import ProgressLine
    line = ProgressLine(quiet=args.quiet)
    name = getattr(b, "name", args.backend)
    started = time.monotonic()

    def progress(stage, done, total, tally):
        line.update(stage, progress_text(name, stage, done, total, tally, args.examples,
                                         time.monotonic() - started), force=stage == "done")

    try:
        # on Dask the backend travels to the workers as its name; each starts its own
        target = args.backend if args.workers or args.scheduler else b
        return check(target, max_examples=args.examples, seed=args.seed,
                     formats=args.format, kinds=args.kind, shrink=not args.no_shrink,
                     shrink_steps=args.shrink_steps, progress=progress,
                     shrink_seconds=args.shrink_seconds or None,
                     shrink_total_seconds=args.shrink_total_seconds or None,
                     shrink_hangs=args.shrink_hangs, minimize_steps=args.minimize_steps,
                     isolate=args.isolate, timeout=args.timeout, memory_mb=args.memory_mb,
                     workers=args.workers, scheduler=args.scheduler,
                     max_seconds=args.max_time, rtol=args.rtol, atol=args.atol,
                     baseline=causes, models=args.model)
    finally:
        line.close()
