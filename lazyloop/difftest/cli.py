"""`lazyloop check`: the command-line front of the differential tester."""
from __future__ import annotations

import os
import re
import sys

from .backends import BACKENDS, backend
from .cases import write_case
from .checking import check
from .isolation import Isolated


EXIT_INTERNAL = 3


def cli_check(argv) -> int:
    """`lazyloop check --backend NAME --examples N --seed S --out DIR`."""
    import argparse
    parser = argparse.ArgumentParser(prog="lazyloop check",
                                     description="differential-test a backend against lazyloop")
    parser.add_argument("--backend", required=True, help=f"one of {sorted(BACKENDS)}")
    parser.add_argument("--examples", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=None, help="write each disagreement here as an ONNX "
                                                     "backend-test case")
    parser.add_argument("--format", action="append", choices=("onnx", "openvino"),
                        help="restrict to these model formats (default: all the backend takes)")
    parser.add_argument("--kind", action="append",
                        help="restrict to subject kinds: core, onnx-loop, onnx-scan9, "
                             "onnx-scan8, openvino-loop")
    parser.add_argument("--no-shrink", action="store_true")
    parser.add_argument("--shrink-seconds", type=float, default=60.0)
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument("--no-isolate", dest="isolate", action="store_false",
                        help="run the backend in this process (a crash ends the run)")
    parser.add_argument("--timeout", type=float, default=60.0,
                        help="seconds one model may run before it counts as hanging")
    args = parser.parse_args(list(argv))
    try:
        b = Isolated(args.backend, timeout=args.timeout) if args.isolate else backend(args.backend)
    except KeyError as exc:
        print(f"lazyloop check: {exc.args[0]}", file=sys.stderr)
        return 2
    except ImportError as exc:
        print(f"lazyloop check: backend {args.backend!r} is not installed ({exc})",
              file=sys.stderr)
        return 2
    bars = {}

    def progress(stage, done, total, report):
        if args.quiet:
            return
        from tqdm import tqdm
        if stage == "done":
            for bar in bars.values():
                bar.close()
            return
        bar = bars.get(stage)
        if bar is None:
            for other in bars.values():
                other.close()
            bar = bars[stage] = tqdm(total=total, desc=stage, unit="prog", file=sys.stderr)
        bar.n = done
        bar.set_postfix(agree=report.agreements, disagree=report.instances,
                        refused=report.examples - report.agreements - report.instances,
                        refresh=False)
        bar.refresh()

    try:
        report = check(b, max_examples=args.examples, seed=args.seed, formats=args.format,
                       kinds=args.kind, shrink=not args.no_shrink,
                       shrink_seconds=args.shrink_seconds, progress=progress)
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # lazyloop itself failed: the one distinct non-zero status
        import traceback
        traceback.print_exc()
        print(f"lazyloop check: internal error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return EXIT_INTERNAL
    finally:
        for bar in bars.values():
            bar.close()
        if isinstance(b, Isolated):
            b.close()
    print(report.summary())
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        for k, d in enumerate(report.disagreements):
            name = f"case_{k:03d}_{d.signature[1]}_{re.sub(r'[^a-z0-9]+', '-', d.kind.lower())[:40]}"
            write_case(args.out, name.strip("-"), d)
        print(f"\nwrote {len(report.disagreements)} case(s) to {args.out}")
    return 0
