"""Write the campaign reports notebook 7 replays (notebooks/data/campaign_*.json).

    PYTHONPATH=. python notebooks/data/make_campaign.py

Each report is one seeded run of ``lazyloop.difftest.check`` against a backend, saved with
what a reader needs to replay it without rerunning hypothesis: the counts, the outcome of
every generated program by kind, and for each distinct disagreement its minimal program (ONNX
models as serialized bytes, base64; OpenVINO models as their outline text), the feeds,
lazyloop's expected values with their masks, the backend's values or error, the rules the
program exercises, and the size of each smaller failing program the shrinker found, in order.

The shrinking is time-bounded, so a rerun may shrink differently; the committed report is
what notebook 7 reads. (When the CLI's ``lazyloop check --json`` report lands, this script
should write that schema instead.)
"""
from __future__ import annotations

import base64
import json
import pathlib
import sys
from collections import Counter

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent


def _array(v):
    a = np.asarray(v)
    return {"dtype": str(a.dtype), "shape": list(a.shape),
            "values": np.where(np.isnan(a), None, a).tolist() if a.dtype.kind == "f"
            else a.tolist()}


def _size(model) -> int:
    """A program's size: its nodes, those of nested graphs included (ONNX), or its ops."""
    import onnx
    if isinstance(model, onnx.ModelProto):
        def count(graph):
            n = 0
            for node in graph.node:
                n += 1
                for attr in node.attribute:
                    if attr.type == onnx.AttributeProto.GRAPH:
                        n += count(attr.g)
            return n
        return count(model.graph)
    return len(model.get_ordered_ops())


def _program(model):
    import onnx
    if isinstance(model, onnx.ModelProto):
        import onnx.printer
        return {"format": "onnx", "text": onnx.printer.to_text(model.graph),
                "bytes": base64.b64encode(model.SerializeToString()).decode()}
    from lazyloop import teach
    return {"format": "openvino", "text": teach.openvino_outline(model)}


def campaign(backend, name, **options):
    """Run one campaign, recording every program the checker runs (to follow the shrinking)."""
    import lazyloop.difftest as dt
    from lazyloop.difftest import checking

    seen = []   # (signature, size) of each disagreeing program the shrinker checked, in order
    outcomes = Counter()   # (kind, status) of the generated programs
    stage = ["generate"]
    original = checking.Checker.outcome

    def progress(name, done, total, report):
        stage[0] = name

    def outcome(self, subject):
        out = original(self, subject)
        if stage[0] == "generate":
            outcomes[subject.kind, out.status] += 1
        if out.status == "disagree" and stage[0] == "shrink":
            try:
                seen.append((out.signature(subject), _size(subject.model())))
            except Exception:
                pass
        return out

    checking.Checker.outcome = outcome
    try:
        report = dt.check(backend, progress=progress, **options)
    finally:
        checking.Checker.outcome = original
    findings = []
    for d in report.disagreements:
        sizes = [s for sig, s in seen if sig == d.signature]
        findings.append({
            "subject_kind": d.subject.kind if d.subject else "?",
            "signature": list(d.signature),
            "differences": [{"output": x.output, "kind": x.kind, "detail": x.detail}
                            for x in d.differences],
            "error": (d.error or "").strip()[:400] or None,
            "ambiguity": d.ambiguity,
            "rules": sorted(d.rules),
            "shrunk": d.shrunk,
            "found_after": d.found_after,
            "occurrences": d.occurrences,
            "shrink_sizes": sizes,   # each failing program the shrinker met, in order
            "program": _program(d.model),
            "feeds": {k: _array(v) for k, v in d.feeds.items()},
            "expected": {k: _array(v) for k, v in d.expected.items()},
            "defined": {k: np.broadcast_to(np.asarray(m), np.shape(d.expected[k])).tolist()
                        for k, m in d.defined.items() if k in d.expected},
            "actual": None if d.actual is None else {k: _array(v) for k, v in d.actual.items()},
        })
    return {"backend": name, "seed": report.seed, "options": {k: v for k, v in options.items()
                                                             if k != "kinds"},
            "kinds": list(options.get("kinds") or []),
            "generated": report.generated, "examples": report.examples,
            "agreements": report.agreements, "instances": report.instances,
            "unsupported": report.unsupported_count, "invalid": report.invalid,
            "not_exportable": report.not_exportable,
            "outcomes": [[kind, status, n] for (kind, status), n in sorted(outcomes.items())],
            "findings": findings}


def main():
    import onnxruntime
    import openvino

    import lazyloop.difftest as dt
    versions = {"onnxruntime": onnxruntime.__version__,
                "openvino": openvino.__version__.split("-")[0]}
    ort = dt.Isolated("onnxruntime")
    try:
        runs = {
            "campaign_planted_fault_seed0.json": campaign(
                dt.TripCountPlusOne(ort), "onnxruntime with a planted fault (M + 1 trips)",
                max_examples=25, seed=0, kinds=("onnx-loop",), shrink_steps=100),
            "campaign_onnxruntime_seed0.json": campaign(
                ort, "onnxruntime " + versions["onnxruntime"], max_examples=60, seed=0,
                shrink_steps=100),
        }
    finally:
        ort.close()
    ov = dt.Isolated("openvino")
    try:
        runs["campaign_openvino_seed1.json"] = campaign(
            ov, "openvino " + versions["openvino"] + " CPU", max_examples=12, seed=1,
            formats=("openvino",), shrink_steps=100)
    finally:
        ov.close()
    for name, data in runs.items():
        data["versions"] = versions
        (HERE / name).write_text(json.dumps(data, indent=1) + "\n")
        print(name, len(data["findings"]), "findings", file=sys.stderr)


if __name__ == "__main__":
    main()
