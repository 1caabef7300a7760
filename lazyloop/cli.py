"""The `lazyloop` command.

    lazyloop run MODEL (.onnx | .xml) [--input NAME=FILE.npy|LITERAL ...] [--save DIR]
    lazyloop explain MODEL [--input ...] [--max-columns N]
    lazyloop bench [--quick]
    lazyloop check --backend NAME --examples N --seed S --out DIR
    lazyloop conformance export DIR | run --backend NAME
"""
from __future__ import annotations

import argparse
import ast
import os
import sys
from collections import defaultdict

import numpy as np

from .core.errors import LazyLoopError

EXIT_INTERNAL = 3  # lazyloop itself failed (not the model, not the backend)
EXIT_USAGE = 2


def load_model(path):
    """Lower a model file onto the core by its extension."""
    if not os.path.exists(path):
        raise SystemExit(f"lazyloop: no such file: {path}")
    if path.endswith(".onnx"):
        from . import onnx as frontend
    elif path.endswith(".xml"):
        from . import openvino as frontend
    else:
        raise SystemExit(f"lazyloop: {path}: expected a .onnx model or an OpenVINO .xml IR")
    return frontend.lower(path)


def parse_inputs(pairs, network):
    """NAME=FILE.npy, or NAME=LITERAL (a Python literal read with the input's dtype)."""
    declared = {network.get_input(i).name: network.get_input(i) for i in range(network.num_inputs)}
    feeds = {}
    for pair in pairs or []:
        if "=" not in pair:
            raise SystemExit(f"lazyloop: --input wants NAME=FILE.npy or NAME=VALUE, got {pair!r}")
        name, text = pair.split("=", 1)
        if text.endswith(".npy") and os.path.exists(text):
            feeds[name] = np.load(text)
            continue
        try:
            literal = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            raise SystemExit(f"lazyloop: --input {name}: {text!r} is neither a .npy file nor a "
                             "literal") from None
        dtype = declared[name].dtype if name in declared and declared[name].dtype else None
        feeds[name] = np.asarray(literal, dtype=dtype)
    return feeds


def show_value(name, value, defined):
    print(f"{name}:", end=" ")
    if isinstance(value, np.ndarray):
        print(f"shape={list(value.shape)} dtype={value.dtype}")
        if defined is not None and not np.all(defined):
            undefined = int(np.size(defined) - np.count_nonzero(defined))
            print(f"  ({undefined} undefined positions, shown as --)")
            print(np.ma.array(value, mask=~np.asarray(defined, bool)))
        else:
            print(value)
    else:
        print(repr(value))


def cmd_run(args):
    lowered = load_model(args.model)
    from .core.evaluate import run
    feeds = lowered.core_feeds(parse_inputs(args.input, lowered.network))
    result = run(lowered.network, feeds, max_trips=args.max_trips, trace=False)
    outputs = lowered.user_outputs(result.outputs)
    masks = lowered.user_outputs(result.defined)
    for name, value in outputs.items():
        show_value(name, value, masks.get(name))
    if args.save:
        os.makedirs(args.save, exist_ok=True)
        for name, value in outputs.items():
            if isinstance(value, np.ndarray):
                safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in name)
                np.save(os.path.join(args.save, f"{safe}.npy"), value)
        print(f"saved {len(outputs)} outputs to {args.save}")
    return 0


def explain_table(evaluation, max_columns=16):
    """Per loop activation: each stream by iteration, what was forced (in which order) and
    which rule asked for it first; then what each stream is."""
    plan = evaluation.plan
    lines = []
    by_run = defaultdict(list)
    for order, event in enumerate(evaluation.trace):
        if event.loop is not None:
            by_run[(event.loop, event.activation)].append((order, event))
    for loop_name, runs in evaluation.trips.items():
        streams = [k for k, node in plan.nodes.items() if node.scope == loop_name]
        width = max([len(k) for k in streams] + [6])
        for path, n in runs:
            events = by_run.get((loop_name, path), [])
            where = f" at outer indices {list(path)}" if path else ""
            columns = min(n + 1, max_columns)
            lines.append(f"{plan.loops[loop_name]!r}{where}: n = {n} trips")
            lines.append(f"  {'stream':<{width}} {' '.join(f'{i:>5}' for i in range(columns))}"
                         "   asked for by")
            for k in streams:
                forced = {e.index: order for order, e in events if e.stream == k}
                cells = " ".join(f"{'#' + str(forced[i]) if i in forced else '.':>5}"
                                 for i in range(columns))
                askers = sorted({"the trip limits" if e.by[0].startswith("#trips:") else e.by[0]
                                 for _, e in events if e.stream == k and e.by})
                lines.append(f"  {k:<{width}} {cells}   {', '.join(askers) or '-'}")
            lines.append("  (#k: the k-th element forced in the whole run; '.': never forced)")
        lines.append("  where:")
        lines += [f"    {k} = {plan.nodes[k]!r}" for k in streams]
    if not lines:
        lines.append("no loop ran")
    return "\n".join(lines)


def cmd_explain(args):
    lowered = load_model(args.model)
    from .core.evaluate import run
    feeds = lowered.core_feeds(parse_inputs(args.input, lowered.network))
    result = run(lowered.network, feeds, max_trips=args.max_trips, trace=True)
    print(explain_table(result, args.max_columns))
    return 0


def build_parser():
    parser = argparse.ArgumentParser(prog="lazyloop", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name, help_ in (("run", "evaluate a model and print its outputs"),
                        ("explain", "show, per loop, which stream elements were forced and why")):
        p = sub.add_parser(name, help=help_)
        p.add_argument("model", help="an ONNX .onnx model or an OpenVINO .xml IR")
        p.add_argument("--input", action="append", metavar="NAME=FILE.npy|VALUE")
        p.add_argument("--max-trips", type=int, default=10_000_000)
        if name == "run":
            p.add_argument("--save", metavar="DIR", help="write each output as DIR/NAME.npy")
        else:
            p.add_argument("--max-columns", type=int, default=16)
    for name, help_ in (("bench", "measure speed and memory"),
                        ("check", "differential-test a backend against lazyloop"),
                        ("conformance", "export or run the conformance suite")):
        p = sub.add_parser(name, help=help_, add_help=False)
        p.add_argument("rest", nargs=argparse.REMAINDER)
    return parser


def delegated(command):
    """Commands whose options their own module parses."""
    if command == "bench":
        from .bench import main as bench_main
        return lambda rest: bench_main(rest) or 0
    if command == "check":
        from .difftest import cli_check
        return cli_check
    if command == "conformance":
        from .conformance import cli_conformance
        return cli_conformance
    return None


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        if argv and argv[0] in ("bench", "check", "conformance"):
            return delegated(argv[0])(argv[1:])
        args = build_parser().parse_args(argv)
        if args.command == "run":
            return cmd_run(args)
        if args.command == "explain":
            return cmd_explain(args)
    except LazyLoopError as exc:
        print(f"lazyloop: {exc}", file=sys.stderr)
        return 1
    return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
