"""How much of a corpus model's time is its kernels (issue 25): a measurement, not a test.

    OPENBLAS_NUM_THREADS=1 python benchmarks/kernel_share.py [MODEL.onnx ...]

For each model (default: every one of tests/corpus with an onnxruntime answer) it lowers the
model, wraps the function and batched form of every Map node's kernel so that one evaluation
records each kernel call with its arguments, and then times, as interleaved medians:
- `lazyloop`: `lazyloop.onnx.evaluate(lowered, feeds)` as users call it (no wrappers);
- `kernels`: the recorded calls replayed one after the other in a plain Python loop -- the
  kernels as lazyloop binds them, none of the streams, schedules, checks or stacking around them;
- `onnxruntime`: one session of one thread.
`kernels / onnxruntime` is what the bound kernels alone cost against onnxruntime: a floor for
any evaluator that calls them one node at a time from Python; `lazyloop / kernels` is what the
machinery around them adds. Speed is reported here, never asserted.
"""
from __future__ import annotations

import os
import sys

if __name__ == "__main__":
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import attrs  # noqa: E402
import numpy as np  # noqa: E402


def recorded_calls(lowered, feeds):
    """[(function, args)] of one evaluation of `lowered`'s plan, its kernels wrapped for that
    evaluation. `lowered` is one lowering kept for recording alone: what an evaluation keeps
    with the lowered model (its prepared machines, a loop's runner and the schedules it
    keeps) stays bound to the wrappers, so the model timed must be lowered apart."""
    from lazyloop.core.evaluate import plan_of
    from lazyloop.core.plan import Map
    import lazyloop.onnx as lo

    calls = []
    plan = plan_of(lowered.network, lowered.resolved)

    def recording(fn, batched=False):
        if batched:
            def wrapper(args, flags):
                calls.append((fn, (args, flags)))
                return fn(args, flags)
        else:
            def wrapper(*args):
                calls.append((fn, args))
                return fn(*args)
        return wrapper

    saved = {}
    for node in plan.nodes.values():
        if isinstance(node, Map):
            k = node.kernel
            saved[node.id] = k
            changes = {"function": recording(k.function)}
            if k.single is not None:
                changes["single"] = recording(k.single)
            if k.batched is not None:
                changes["batched"] = recording(k.batched, True)
            object.__setattr__(node, "kernel", attrs.evolve(k, **changes))
    plan.derived.clear()
    try:
        lo.evaluate(lowered, feeds)
    finally:
        for node in plan.nodes.values():
            if node.id in saved:
                object.__setattr__(node, "kernel", saved[node.id])
        plan.derived.clear()
    return calls


def replay(calls):
    for fn, args in calls:
        fn(*args)


def measure(path, budget=0.2):
    import statistics
    import lazyloop.onnx as lo
    from lazyloop.bench.corpus import feeds_and_readings, session_of, case_of, CLOCK
    feeds, readings = feeds_and_readings(path)
    calls = recorded_calls(lo.lower(path, readings), feeds)  # a lowering of its own
    lowered = lo.lower(path, readings)
    session = session_of(path)
    ort_feeds = {k: np.asarray(v) for k, v in feeds.items()}
    session.run(None, ort_feeds)
    for _ in range(3):
        lo.evaluate(lowered, feeds)
    sides = [lambda: lo.evaluate(lowered, feeds), lambda: replay(calls),
             lambda: session.run(None, ort_feeds)]
    times = [[], [], []]
    while len(times[0]) < 5 or (max(map(sum, times)) < budget and len(times[0]) < 300):
        for fn, kept in zip(sides, times):
            start = CLOCK()
            fn()
            kept.append(CLOCK() - start)
    ll, kn, ort = (statistics.median(t) for t in times)
    return case_of(path), len(calls), ll, kn, ort


def main(argv):
    from lazyloop.bench.corpus import corpus_paths, geometric_mean
    paths = argv or corpus_paths()
    rows = []
    print(f"{'case':42} {'calls':>6} {'lazyloop':>9} {'kernels':>9} {'ort':>8} "
          f"{'ll/ort':>7} {'kern/ort':>8} {'ll/kern':>7}")
    for path in paths:
        try:
            case, n, ll, kn, ort = measure(path)
        except Exception as exc:  # noqa: BLE001 -- a model onnxruntime refuses has no ratio
            print(f"{path}: {type(exc).__name__}")
            continue
        rows.append((ll / ort, kn / ort, ll / kn))
        print(f"{case:42} {n:6d} {ll*1e3:9.3f} {kn*1e3:9.3f} {ort*1e3:8.3f} "
              f"{ll/ort:7.2f} {kn/ort:8.2f} {ll/kn:7.2f}")
    if rows:
        print(f"\ngeometric means over {len(rows)} models: lazyloop/onnxruntime "
              f"{geometric_mean([r[0] for r in rows]):.2f}x, kernels alone/onnxruntime "
              f"{geometric_mean([r[1] for r in rows]):.2f}x, lazyloop/kernels "
              f"{geometric_mean([r[2] for r in rows]):.2f}x")


if __name__ == "__main__":
    main(sys.argv[1:])
