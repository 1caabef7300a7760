"""`lazyloop check`: the command-line front of the differential tester."""
from __future__ import annotations

import os
import re
import sys

from .backends import BACKENDS, backend
from .cases import write_case
from .checking import check
from .isolation import DEFAULT_MEMORY_MB, BackendStartFailed, Isolated
from .plugins import factory_of
from .shrinking import DEFAULT_SHRINK_STEPS


EXIT_INTERNAL = 3


def cli_check(argv) -> int:
    """`lazyloop check --backend NAME --examples N --seed S --out DIR`."""
    import argparse
    parser = argparse.ArgumentParser(prog="lazyloop check",
                                     description="differential-test a backend against lazyloop")
    parser.add_argument("--backend", required=True,
                        help=f"one of {sorted(BACKENDS)}, a name registered in the entry-point "
                             f"group lazyloop.backends, or module:factory")
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
    parser.add_argument("--shrink-steps", type=int, default=DEFAULT_SHRINK_STEPS,
                        help="programs the shrinker may run per disagreement")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument("--no-isolate", dest="isolate", action="store_false",
                        help="run the backend in this process (a crash ends the run)")
    parser.add_argument("--timeout", type=float, default=60.0,
                        help="seconds one model may run before it counts as hanging")
    parser.add_argument("--memory-mb", type=float, default=DEFAULT_MEMORY_MB,
                        help="resident memory of the backend's process that counts as OOM")
    parser.add_argument("--workers", type=int, default=0,
                        help="run shards on N Dask workers (a LocalCluster)")
    parser.add_argument("--scheduler", default=None,
                        help="address of a running Dask scheduler to run the shards on")
    args = parser.parse_args(list(argv))
    parallel = bool(args.workers or args.scheduler)
    try:
        if parallel:
            factory_of(args.backend)  # a name nothing answers to is a usage error here too
            b = args.backend
        elif args.isolate:
            b = Isolated(args.backend, timeout=args.timeout, memory_mb=args.memory_mb)
        else:
            b = backend(args.backend)
    except KeyError as exc:
        print(f"lazyloop check: {exc.args[0]}", file=sys.stderr)
        return 2
    except (ImportError, BackendStartFailed) as exc:
        print(f"lazyloop check: backend {args.backend!r} is not installed or did not start "
              f"({exc})", file=sys.stderr)
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
                       shrink_steps=args.shrink_steps, progress=None if parallel else progress,
                       isolate=args.isolate, timeout=args.timeout, memory_mb=args.memory_mb,
                       workers=args.workers, scheduler=args.scheduler)
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
            write_case(args.out, name.strip("-"), d, report)
        print(f"\nwrote {len(report.disagreements)} case(s) to {args.out}")
    return 0
