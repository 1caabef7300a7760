"""corpus/README.md's table: for every case of the exporter corpus, whether lazyloop (under
the case's readings, and under the default readings), onnxruntime and ONNX's reference
evaluator give the framework's answer. Run by `python corpus/make_corpus.py table`."""
from __future__ import annotations

import os
import sys

BEGIN, END = "<!-- corpus-table:begin -->", "<!-- corpus-table:end -->"


def verdict(run) -> str:
    from tests.corpus_data import differences
    try:
        diffs = run()
    except Exception as exc:  # noqa: BLE001 -- the table records any failure
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        text = str(exc).replace(root + os.sep, "")
        return f"error: {type(exc).__name__}: {text.splitlines()[0][:110]}"
    diffs = differences(*diffs)
    return "right" if not diffs else "wrong: " + "; ".join(
        f"{d.output} {d.kind} ({d.detail[:60]})" for d in diffs[:2])


def rows():
    import numpy as np
    import onnxruntime as ort

    import lazyloop.onnx as lo
    from tests.corpus_data import case_ids, load

    for case in case_ids():
        path, feeds, want, meta = load(case)
        readings = meta["readings"] or None

        def lazyloop_run(readings=readings):
            return want, lo.evaluate(path, feeds, readings=readings)

        def ort_run():
            sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
            got = sess.run(None, {k: np.asarray(v) for k, v in feeds.items()})
            return want, dict(zip(want, got))

        def reference_run():
            from onnx.reference import ReferenceEvaluator
            got = ReferenceEvaluator(path).run(None, feeds)
            return want, dict(zip(want, got))

        default = verdict(lambda: lazyloop_run(None)) if readings else "(same)"
        yield case, meta["about"], meta["readings"], verdict(lazyloop_run), default, \
            verdict(ort_run), verdict(reference_run)


def table() -> str:
    lines = ["| case | what | readings | lazyloop | lazyloop, default readings | onnxruntime "
             "| ONNX reference evaluator |", "|---|---|---|---|---|---|---|"]
    right = [0, 0, 0]
    cases = list(rows())
    for case, about, readings, ll, default, rt, ref in cases:
        right = [r + (v == "right") for r, v in zip(right, (ll, rt, ref))]
        shown = ", ".join(f"{k}={v}" for k, v in readings.items()) or "default"
        lines.append(f"| `{case}` | {about} | {shown} | {ll} | {default} | {rt} | {ref} |"
                     .replace("\n", " "))
    n = len(cases)
    lines.append("")
    lines.append(f"Right: lazyloop {right[0]} of {n}, onnxruntime {right[1]} of {n}, ONNX's "
                 f"reference evaluator {right[2]} of {n}.")
    return "\n".join(lines)


def write_table(corpus: str, readme: str):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    sys.path.insert(0, root)
    text = open(readme).read()
    head, rest = text.split(BEGIN)
    _, tail = rest.split(END)
    body = table()  # first, so that a failure leaves the README as it was
    with open(readme, "w") as f:
        f.write(head + BEGIN + "\n" + body + "\n" + END + tail)
    print(f"table written to {readme}")
