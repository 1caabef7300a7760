"""lazyloop against onnxruntime on the exporter corpus (issue 25), from the command line:
for every committed model, the ratio of `lazyloop.onnx.evaluate`'s time to onnxruntime's,
and which evaluator ran each of its loops (the engine, or the reference and why).

    OPENBLAS_NUM_THREADS=1 python corpus/speed.py                 # every model of tests/corpus
    python corpus/speed.py tests/corpus/jax2onnx/*.onnx           # some of them
    python corpus/speed.py --budget 0.1                           # seconds per model and side

The measuring lives in `lazyloop.bench.corpus` (`corpus_ratios(paths) -> rows`, `summary`,
`report`), which `lazyloop bench --only corpus` runs too (its rows r1-r4). Speed is reported,
never asserted.
"""
from __future__ import annotations

import os

if __name__ == "__main__":  # one BLAS thread, set before numpy is imported
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import sys  # noqa: E402


def main(argv=None) -> int:
    from lazyloop.bench.corpus import corpus_paths, corpus_ratios, report
    parser = argparse.ArgumentParser(description="lazyloop vs onnxruntime on the corpus")
    parser.add_argument("paths", nargs="*", help="models (default: every one of tests/corpus)")
    parser.add_argument("--budget", type=float, default=0.2,
                        help="seconds of timed calls per model and side (default 0.2)")
    args = parser.parse_args(argv)
    print(report(corpus_ratios(args.paths or corpus_paths(), args.budget)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
