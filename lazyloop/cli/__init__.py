"""The `lazyloop` command.

    lazyloop run MODEL|CASE_DIR [--input NAME=FILE.npy|FILE.pb|VALUE ...] [--backend NAME]
    lazyloop explain MODEL [--input ...] [--max-columns N] [--max-events N]
    lazyloop check --backend NAME [--examples N] [--seed S] [--out DIR] [--json F] [--junit F]
    lazyloop conformance export DIR | run --backend NAME | list
    lazyloop bench [--quick]
    lazyloop --version

The commands live in their own modules (`run`, `explain`, `check`, `conformance`); `common` holds the exit statuses, the one-line
errors, the output folder and the progress line; `evaluating` is where the commands meet the
evaluators; `inputs` reads models and feeds.
"""
from __future__ import annotations

import argparse
import sys

from .common import (EXIT_USAGE, Parser, add_tolerance_options, guarded, non_negative_float,
                     positive_int)
from .evaluating import DEFAULT_MAX_SECONDS, DEFAULT_MAX_TRIPS


def _version() -> str:
    from .. import __version__
    return __version__


def add_model_options(p, name):
    p.add_argument("model", help="an ONNX .onnx model or an OpenVINO .xml IR, or a case "
                   "folder written by `lazyloop check` or `lazyloop conformance export` "
                   "(model + test_data_set_*; "
                   + ("every data set is run" if name == "run" else
                      "explained with the inputs of its first data set") + ")")
    p.add_argument("--input", action="append", metavar="NAME=FILE.npy|FILE.pb|VALUE",
                   help="feed one model input (repeat per input): a .npy file, an ONNX "
                        "TensorProto .pb file, or a Python literal such as 5, 2.5, True or "
                        "[[1, 2], [3, 4]], read with the input's declared dtype (3.5 for an "
                        "integer input is refused)")
    p.add_argument("--max-trips", type=positive_int, default=DEFAULT_MAX_TRIPS, metavar="N",
                   help="fuel: the most trips any one loop run may take before the run stops "
                        "with an error (a runaway loop ends here)")
    p.add_argument("--max-seconds", type=non_negative_float, default=DEFAULT_MAX_SECONDS,
                   metavar="SECONDS",
                   help="wall-time budget of the evaluation; past it the run stops with a "
                        "fuel error saying how far it got (0: no budget)")


def build_parser():
    parser = Parser(prog="lazyloop", description="the executable specification of loops in "
                    "ML graph IRs")
    parser.add_argument("--version", action="version", version=f"lazyloop {_version()}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    p = sub.add_parser("run", help="evaluate a model (or re-run a saved case) and print its "
                                   "outputs, undefined positions as --")
    add_model_options(p, "run")
    p.add_argument("--save", metavar="DIR", default=None,
                   help="also write each output as DIR/NAME.npy (default: not saved)")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="also say, per loop, whether it ran on the engine (its per-trip "
                        "schedule) or on the reference machine, and why")
    p.add_argument("--backend", default=None, metavar="NAME",
                   help="also run the model on this backend (in a child process) and print "
                        "what differs from lazyloop, and which registered ambiguity explains "
                        "it: a built-in name, a registered one, or module:factory (the "
                        "module looked up from the current folder first, as python -m does)")
    p.add_argument("--timeout", type=non_negative_float, default=60.0, metavar="SECONDS",
                   help="with --backend: seconds the backend may run before it counts as "
                        "hanging")
    add_tolerance_options(p)
    p = sub.add_parser("explain", help="show, per loop, which stream elements were forced "
                                       "and why (the forcing trace, bounded)")
    add_model_options(p, "explain")
    p.add_argument("--max-columns", type=positive_int, default=16, metavar="N",
                   help="iterations shown per loop activation")
    p.add_argument("--max-events", type=positive_int, default=2000, metavar="N",
                   help="forced elements drawn in tables; further loop activations are "
                        "summarised in one line each")
    for name, help_ in (("check", "differential-test a backend against lazyloop "
                                  "(lazyloop check --help)"),
                        ("conformance", "export or run the hand-computed conformance suite "
                                        "(lazyloop conformance --help)"),
                        ("bench", "measure speed and memory (lazyloop bench --help)")):
        p = sub.add_parser(name, help=help_, add_help=False)
        p.add_argument("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    return parser


def delegated(command):
    """Commands whose options their own module parses."""
    if command == "bench":
        from ..bench import main as bench_main
        return lambda rest: bench_main(rest, Parser) or 0
    if command == "check":
        from .check import cli_check
        return cli_check
    from .conformance import cli_conformance
    return cli_conformance


def dispatch(argv) -> int:
    if argv and argv[0] in ("bench", "check", "conformance"):
        return delegated(argv[0])(argv[1:])
    args = build_parser().parse_args(argv)
    if args.command == "run":
        from .run import cmd_run
        return cmd_run(args)
    if args.command == "explain":
        from .explain import cmd_explain
        return cmd_explain(args)
    return EXIT_USAGE  # pragma: no cover -- argparse refuses other commands


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    prog = "lazyloop" + (f" {argv[0]}" if argv and not argv[0].startswith("-") else "")
    return guarded(prog, dispatch, argv)


__all__ = ["main", "build_parser"]
