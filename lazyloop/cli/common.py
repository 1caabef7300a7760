"""What every `lazyloop` command shares: the exit statuses, a parser that answers a user's
mistake with one line, option types that validate numbers, the message for a missing extra,
the output folder (one run per folder) and the progress line.

Exit statuses (README "Command line"):
  0  ran and found nothing new
  1  findings not explained by a registered ambiguity (check, conformance run), or the model
     or feeds were refused by the specification, or (run with a backend or a case folder)
     something differs that no registered ambiguity explains
  2  usage or input error: bad options, unreadable or unwritable paths, a file that is not a
     model, a bad --input, a backend that is not installed, cannot start or is not a backend,
     a --scheduler that does not answer, a run in which no program ran
  3  lazyloop itself failed (a bug: the traceback is printed)
  130 interrupted (Ctrl-C); `check` then writes its reports and exits 1 if a finding counts
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import time

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3
EXIT_INTERRUPTED = 130
EXIT_PIPE = 141  # the reader of the output went away (`| head`): as the shell's SIGPIPE status

EXIT_EPILOG = ("exit status: 0 nothing new found; 1 findings not explained by a registered "
               "ambiguity (check, conformance run), or the model/feeds refused by the "
               "specification or a difference no ambiguity explains (run, explain); 2 usage "
               "or input error (also a file that is not a model); 3 lazyloop itself failed; "
               "130 interrupted by Ctrl-C (check: when no finding counts); 141 the output's "
               "reader closed it (| head)")


class UsageError(Exception):
    """A user's mistake: printed as one line, exit status 2."""


class DefaultsShown(argparse.HelpFormatter):
    """Help text with the default appended, unless there is none to show (None), the option
    is a switch taking no value (--force, --no-isolate: its default is only "not given") or
    the text already says it. A default of 0 is shown."""

    def _get_help_string(self, action):
        text = action.help or ""
        if (action.default is not None and action.default is not argparse.SUPPRESS
                and action.nargs != 0 and "default" not in text and action.option_strings):
            text += " (default: %(default)s)"
        return text


class Parser(argparse.ArgumentParser):
    """argparse, with every default shown in --help and errors raised as `UsageError` (one
    line, no usage dump)."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", DefaultsShown)
        kwargs.setdefault("epilog", EXIT_EPILOG)
        super().__init__(*args, **kwargs)

    def error(self, message):
        raise UsageError(f"{message} (see {self.prog} --help)")


def positive_int(text: str) -> int:
    value = _number(text, int)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {text}")
    return value


def non_negative_int(text: str) -> int:
    value = _number(text, int)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {text}")
    return value


def positive_float(text: str) -> float:
    value = _number(text, float)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be more than 0, got {text}")
    return value


def non_negative_float(text: str) -> float:
    value = _number(text, float)
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {text}")
    return value


FLOAT_DTYPES = ("float16", "float32", "float64")


def tolerance_value(text: str):
    """`--rtol`/`--atol`: a number (every float dtype) or DTYPE=NUMBER (that dtype only)."""
    dtype, _, number = text.rpartition("=")
    if dtype and dtype not in FLOAT_DTYPES:
        raise argparse.ArgumentTypeError(f"{dtype!r} is not a float dtype; give one of "
                                         f"{', '.join(FLOAT_DTYPES)}")
    return dtype or "*", non_negative_float(number)


class Tolerances(argparse.Action):
    """Gathers repeated `--rtol`/`--atol` values into {dtype name or "*": number} (what
    `difftest.comparing.tolerance` takes)."""

    def __call__(self, parser, namespace, value, option_string=None):
        given = dict(getattr(namespace, self.dest) or {})
        given[value[0]] = value[1]
        setattr(namespace, self.dest, given)


def add_tolerance_options(parser) -> None:
    """--rtol and --atol, each a number or DTYPE=NUMBER, repeatable."""
    from ..difftest.comparing import TOLERANCES
    for option, k, what in (("--rtol", 0, "relative"), ("--atol", 1, "absolute")):
        own = "; ".join(f"{d} {t[k]:g}" for d, t in TOLERANCES.items())
        parser.add_argument(option, type=tolerance_value, action=Tolerances, default=None,
                            metavar="[DTYPE=]X",
                            help=f"{what} float tolerance of comparisons, for every float "
                                 f"dtype or, as DTYPE=X, for one (repeatable) (default: "
                                 f"{own})")


def _number(text, kind):
    try:
        value = kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{'an integer' if kind is int else 'a number'} is "
                                         f"needed, got {text!r}") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise argparse.ArgumentTypeError(f"a finite number is needed, got {text!r}")
    return value


# the extra that installs a module lazyloop imports only when a command needs it
EXTRA_OF_MODULE = {"onnx": "onnx", "onnxruntime": "onnx", "ml_dtypes": "onnx",
                   "hypothesis": "onnx", "openvino": "openvino", "tract": "tract",
                   "matplotlib": "notebooks", "networkx": "notebooks", "nbclient": "notebooks",
                   "nbformat": "notebooks", "dask": "workers", "distributed": "workers",
                   "iree": "iree", "MNN": "mnn", "_tools": "mnn", "onnxslim": "onnxslim",
                   "onnxsim": "onnxsim", "onnxoptimizer": "onnxoptimizer"}


def missing_extra(exc: ImportError) -> str:
    """The one line for a module that is not installed: which extra brings it."""
    module = (getattr(exc, "name", None) or str(exc)).split(".")[0]
    extra = EXTRA_OF_MODULE.get(module)
    if extra is None:
        return f"{exc} (install lazyloop[all] for every optional part)"
    return f"this needs {module!r}, which is not installed: install lazyloop[{extra}]"


def guarded(prog: str, command, *args) -> int:
    """Run `command(*args)`, mapping what escapes to one line and an exit status."""
    from ..core.errors import InputError, LazyLoopError
    from ..difftest.shrinking import Abort
    try:
        return command(*args)
    except Abort:  # a second Ctrl-C during `check`: nothing written
        return _say(prog, "stopped at once (a second Ctrl-C): no report written",
                    EXIT_INTERRUPTED)
    except UsageError as exc:
        return _say(prog, str(exc), EXIT_USAGE)
    except InputError as exc:  # feeds that do not match the model: the user's input
        return _say(prog, str(exc), EXIT_USAGE)
    except LazyLoopError as exc:  # the specification refused the model or its feeds
        return _say(prog, str(exc), EXIT_FINDINGS)
    except ImportError as exc:
        return _say(prog, missing_extra(exc), EXIT_USAGE)
    except KeyboardInterrupt:
        return _say(prog, "interrupted", EXIT_INTERRUPTED)
    except BrokenPipeError:
        return output_closed()
    except Exception as exc:  # lazyloop itself failed: the one place a traceback is shown
        import traceback
        traceback.print_exc()
        return _say(prog, f"internal error (a bug in lazyloop, please report it): "
                          f"{type(exc).__name__}: {exc}", EXIT_INTERNAL)


def output_closed() -> int:
    """The program reading the output closed it (`lazyloop run ... | head`): not an error of
    the user's or of lazyloop's; stop quietly, as a program the shell's SIGPIPE ends does.
    What is still buffered for the closed pipe is dropped, so that Python's own flush at
    exit does not fail on it again."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):  # no file descriptor behind stdout (a test's capture)
        pass
    return EXIT_PIPE


def _say(prog, text, status):
    print(f"{prog}: {' '.join(str(text).split())}", file=sys.stderr)
    return status


# ------------------------------------------------------------------------------------------
# Output folders: created and written to before the work, one run per folder
# ------------------------------------------------------------------------------------------


def prepare_out(directory: str, force: bool) -> str:
    """Create `directory` (or accept an empty one) and prove it writable, before any work.
    A non-empty folder is refused unless `force`, which removes what an earlier run wrote
    there (case_* folders, report.json, junit.xml) and leaves anything else alone."""
    if os.path.isdir(directory) and os.listdir(directory):
        if not force:
            raise UsageError(f"--out {directory}: the folder is not empty (an earlier run?); "
                             "choose a new folder or pass --force to replace its cases")
        for entry in os.listdir(directory):
            path = os.path.join(directory, entry)
            if entry.startswith("case_") and os.path.isdir(path):
                shutil.rmtree(path)
            elif entry in ("report.json", "junit.xml"):
                os.remove(path)
    return writable_folder("--out", directory)


def writable_folder(option: str, directory: str) -> str:
    """Create `directory` if need be and prove it writable, before any work."""
    if os.path.exists(directory) and not os.path.isdir(directory):
        raise UsageError(f"{option} {directory}: exists and is not a folder")
    try:
        os.makedirs(directory, exist_ok=True)
        probe = os.path.join(directory, ".lazyloop-write-test")
        with open(probe, "w") as f:
            f.write("ok")
        os.remove(probe)
    except OSError as exc:
        raise UsageError(f"{option} {directory}: cannot write there ({exc.strerror})") from None
    return directory


def writable_file(option: str, path):
    """Fail now, not after the work, if `path` cannot be written."""
    if path is None:
        return None
    parent = os.path.dirname(os.path.abspath(path))
    try:
        os.makedirs(parent, exist_ok=True)
        existed = os.path.exists(path)
        with open(path, "a"):
            pass
        if not existed:
            os.remove(path)
    except OSError as exc:
        raise UsageError(f"{option} {path}: cannot write there ({exc.strerror})") from None
    return path


# ------------------------------------------------------------------------------------------
# The progress line
# ------------------------------------------------------------------------------------------


class ProgressLine:
    """One progress line on stderr. On a terminal it is redrawn in place (at most 5 times a
    second); elsewhere (CI logs, files) a plain line is printed when a stage starts and then
    every `every` seconds, never a carriage return."""

    def __init__(self, quiet: bool = False, every: float = 5.0, stream=None):
        self.stream = stream or sys.stderr
        self.quiet = quiet
        self.terminal = bool(getattr(self.stream, "isatty", lambda: False)())
        self.every = 0.2 if self.terminal else every
        self.last = 0.0
        self.stage = None
        self.drawn = False

    def update(self, stage: str, text: str, force: bool = False) -> None:
        if self.quiet:
            return
        now = time.monotonic()
        if stage == self.stage and now - self.last < self.every and not force:
            return
        self.stage, self.last = stage, now
        if self.terminal:
            self.stream.write(f"\r\x1b[K{text}")
            self.drawn = True
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.terminal and self.drawn:
            self.stream.write("\n")
            self.stream.flush()
        self.drawn = False


def report_options(args) -> frozenset:
    """`--json`, `--junit` and `--baseline` of `check` and `conformance run`, checked before
    any work: the report paths writable, the baseline read (its known root causes)."""
    from ..difftest.schema import StaleBaseline, load_baseline
    writable_file("--json", args.json)
    writable_file("--junit", args.junit)
    if not args.baseline:
        return frozenset()
    try:
        return load_baseline(args.baseline)
    except StaleBaseline as exc:  # one line; the run goes on with nothing known
        print(f"lazyloop: --baseline {args.baseline} is stale: {exc}", file=sys.stderr)
        return frozenset()
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise UsageError(f"--baseline {args.baseline}: cannot read it as a lazyloop JSON "
                         f"report ({exc})") from None


def write_reports(document, json_paths, junit_path) -> dict:
    """Write the judged report as JSON to each of `json_paths` and as JUnit to `junit_path`,
    print the verdict line; the verdict (its `exit_status` is the command's)."""
    from ..difftest.schema import junit_xml, to_json
    for path in filter(None, json_paths):
        with open(path, "w", encoding="utf-8") as f:
            f.write(to_json(document))
    if junit_path:
        with open(junit_path, "w", encoding="utf-8") as f:
            f.write(junit_xml(document))
    verdict = document["verdict"]
    ops = verdict.get("op_faults", 0)
    print(f"\nverdict: {verdict['counted']} finding(s) count (--fail-on {verdict['fail_on']}; "
          f"{verdict['known']} known from the baseline, {verdict['explained']} explained by "
          f"an ambiguity{f', {ops} op fault(s)' if ops else ''}); exit status "
          f"{verdict['exit_status']}")
    return verdict
