"""Re-minimise the committed seed-0 case folders with today's tester, in place.

    python findings/reminimise.py BACKEND [BACKEND ...]

For each case folder of findings/cases-BACKEND-seed0.tar.gz: the case's model is run on the
backend again (isolated), its symptom and explanation computed, the model reduced while both
hold (lazyloop.difftest.reducing, at most 300 edited models), and the folder written again:
the reduced model, its inputs and lazyloop's expected outputs, a README with the symptom,
the reading that explains it and the node counts before and after, and today's repro.py. The
README keeps the program the campaign shrank to. A case whose finding no longer reproduces,
a hang, a memory kill or a model the backend's reader cannot read back is kept as it was,
with today's repro.py. `findings/minimised-seed0.json` records what was done to each case (run
again, the script keeps the node count a case had before its first minimising).
"""
import json
import os

import attrs
import shutil
import sys
import tarfile
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

KEPT = ("hang", "oom")  # re-run as found: each run costs the whole time limit


class Program:
    """The program a case was shrunk to, as its README showed it."""

    def __init__(self, kind: str, text: str):
        self.kind, self.text = kind, text

    def __repr__(self):
        return self.text


def old_program(case: str) -> str:
    text = open(os.path.join(case, "README.md"), encoding="utf-8").read()
    part = text.split("## The program", 1)[1].split("## For an upstream issue", 1)[0]
    return part.strip().strip("`").strip()


def renewed(case: str, backend: str) -> str:
    """Today's repro.py for a case kept as it was ('' when written, else why not)."""
    from lazyloop.difftest.cases import write_repro_for_case
    try:
        write_repro_for_case(case, backend)
        return ""
    except Exception as exc:  # noqa: BLE001 -- e.g. an IR its own reader refuses
        return f"; its repro.py kept ({type(exc).__name__})"


def reminimise(backend: str, report: dict, folder: str, summary: list,
               before: dict) -> None:
    import lazyloop.difftest as dt
    from lazyloop.difftest.cases import Context, write_case
    from lazyloop.difftest.checking import Checker
    from lazyloop.difftest.grouping import key_text, root_cause
    from lazyloop.difftest.reducing import reduce_finding
    from lazyloop.difftest.report import Disagreement
    from lazyloop.difftest.schema import lazyloop_version
    from tests.findings_cases import case_subject

    runner = dt.Isolated(backend, timeout=10)
    checker = Checker(runner)
    context = Context(backend, report["backend"]["version"], lazyloop_version(), 0,
                      report["invocation"], rerun_backend=backend)
    try:
        for finding in report["findings"]:
            case = os.path.join(folder, finding["case"])
            row = {"case": finding["case"], "outcome": finding["outcome"]}
            summary.append(row)
            if finding["outcome"] in KEPT:
                row["kept"] = f"a {finding['outcome']}: not run again" + renewed(case, backend)
                continue
            subject = case_subject(case)
            out = checker.outcome(subject)
            if out.status != "disagree" or (finding["outcome"] == "crash" and
                                            out.symptom.kind != "crash"):
                row["kept"] = f"does not reproduce as found ({out.status}: " \
                              f"{(out.error or '')[:200]})" + renewed(case, backend)
                continue
            reduction = reduce_finding(subject, out, checker, 300)
            # a case minimised by an earlier run of this script keeps its first count
            reduction = attrs.evolve(reduction, nodes_before=before.get(
                finding["case"], reduction.nodes_before))
            final, fout = subject, out
            if reduction.subject is not None:
                final, fout = reduction.subject, reduction.outcome
            checker.attribute(final, fout)
            expected, defined, rules = final.expectation()
            program = Program(finding["kind"], old_program(case))
            d = Disagreement(model=final.model(), feeds=final.feeds, expected=expected,
                             actual=fout.actual, rules=frozenset(finding["rules"]) or rules,
                             ambiguity=fout.ambiguity, defined=defined,
                             differences=fout.differences, error=fout.error,
                             subject=program,
                             signature=("disagree", finding["kind"], str(fout.symptom)),
                             found_after=finding["found_after"],
                             occurrences=finding["occurrences"], shrunk=finding["shrunk"],
                             shrinking=finding["shrinking"],
                             root_cause=root_cause(final, fout), symptom=fout.symptom,
                             reading=fout.reading, nodes_before=reduction.nodes_before,
                             nodes_after=reduction.nodes_after, minimising=reduction.ended)
            program.format = final.format
            shutil.rmtree(case)
            write_case(folder, finding["case"], d, context)
            row.update(symptom=str(fout.symptom), explained_by=fout.reading,
                       nodes_before=reduction.nodes_before, nodes_after=reduction.nodes_after,
                       minimising=reduction.ended, root_cause=key_text(d.root_cause))
            print(finding["case"][:8], reduction.nodes_before, "->", reduction.nodes_after,
                  fout.symptom, fout.reading or "", flush=True)
    finally:
        runner.close()


def main(backends) -> None:
    path = os.path.join(HERE, "minimised-seed0.json")
    done = json.load(open(path)) if os.path.exists(path) else {}
    for backend in backends:
        report = json.load(open(os.path.join(HERE, f"report-{backend}-seed0.json")))
        archive = os.path.join(HERE, f"cases-{backend}-seed0.tar.gz")
        with tempfile.TemporaryDirectory() as tmp:
            with tarfile.open(archive) as tar:
                tar.extractall(tmp, filter="data")
            summary = []
            before = {r["case"]: r["nodes_before"] for r in done.get(backend, ())
                      if "nodes_before" in r}
            reminimise(backend, report, os.path.join(tmp, backend), summary, before)
            with tarfile.open(archive, "w:gz") as tar:
                tar.add(os.path.join(tmp, backend), arcname=backend)
        done[backend] = summary
        with open(path, "w", encoding="utf-8") as f:
            json.dump(done, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1:])
