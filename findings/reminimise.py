"""Minimise a committed case folder again, from the model it holds, and write it anew.

    python findings/reminimise.py OUT_FOLDER CASE [CASE ...] [--backend NAME] [--steps N]
        [--shows SYMPTOM ...] [--pack TARBALL]

(from the repository, with the campaign's cases unpacked: `tar xzf
findings/cases-openvino-seed0.tar.gz -C /tmp` gives /tmp/openvino/case_*). For a case whose
model-level minimising could not run when its campaign wrote it (an IR the minimiser could
not write back, a campaign stopped by its time limit), or whose saved expectation is not
lazyloop's answer on the saved model: the folder's model and inputs are checked again on the
backend (the symptom must be the one the campaign's report recorded, or one named by
`--shows`: what the case shows today where the error normaliser changed since, or where the
engine answers with memory it never wrote), reduced as the campaign reduces a finding
(`lazyloop.difftest.reducing.reduce_finding`: the same symptom, explained by the same
reading), and the case is written again in place: its model, lazyloop's expected outputs on
that model, repro.py and the README (whose first line, command, seed and program are kept:
the program is the one the campaign shrunk, from which the model was reduced).

The backend is the one of the campaign's report (OUT_FOLDER/report.json) unless `--backend`
says. The report's entry of each case -- in OUT_FOLDER/report.json and its copy
findings/report-BACKEND-seedS.json -- gets its new node count, how minimising ended and the
new loop constructs and case digest in its root-cause key (its symptom stays as the campaign
normalised it). `--pack` packs OUT_FOLDER again into TARBALL, as the campaigns'
cases-*.tar.gz are packed.
"""
import argparse
import json
import os
import re
import shutil
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


NOTE = ("- minimised again from the case the campaign wrote, by `python findings/reminimise.py` "
        "(issue 21): the model, and the expected outputs, which are lazyloop's answer on it")


def campaign_report(out_folder: str) -> dict:
    with open(os.path.join(out_folder, "report.json"), encoding="utf-8") as f:
        return json.load(f)


def record_in_report(out_folder: str, name: str, nodes_after: int, ended: str,
                     key: tuple) -> None:
    """The report's entry of case `name` after minimising it again -- its node count, how
    minimising ended and its root-cause key (`key`: the case's loop constructs and digest
    anew, the symptom as the campaign normalised it) -- in the folder's report.json and in
    its copy findings/report-BACKEND-seedS.json."""
    from lazyloop.difftest.grouping import key_text
    report = campaign_report(out_folder)
    entry = finding_of(report, name)
    entry["nodes"]["after"] = nodes_after
    entry["minimising"] = ended
    fmt, constructs, _, digest = key
    entry["root_cause"] = key_text((fmt, constructs, entry["symptom"], digest))
    text = json.dumps(report, indent=2) + "\n"
    copy = os.path.join(ROOT, "findings",
                        f"report-{report['backend']['name']}-seed{report['seed']}.json")
    for path in (os.path.join(out_folder, "report.json"), copy):
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)


def pack(out_folder: str, tarball: str) -> None:
    """OUT_FOLDER packed as the campaigns pack it: its name at the top, files sorted, owned
    by root."""
    import tarfile

    def as_root(info):
        info.uid = info.gid = 0
        info.uname = info.gname = "root"
        return info
    parent, top = os.path.split(os.path.abspath(out_folder))
    with tarfile.open(tarball, "w:gz") as tar:
        tar.add(os.path.join(parent, top), top, recursive=False, filter=as_root)
        for folder, dirs, files in os.walk(os.path.join(parent, top)):
            dirs.sort()
            for entry in dirs + sorted(files):
                path = os.path.join(folder, entry)
                tar.add(path, os.path.relpath(path, parent), recursive=False, filter=as_root)


def finding_of(report: dict, case: str) -> dict:
    return next(f for f in report["findings"] if f["case"] == case)


def kept_parts(readme: str) -> dict:
    """The old README's lines that say where the case came from."""
    return {"found": re.search(r"^Found by .*$", readme, re.M).group(0),
            "command": re.search(r"^- found by: `(.*)`$", readme, re.M).group(1),
            "program": readme[readme.index("## The program"):
                              readme.index("```", readme.index("```",
                                           readme.index("## The program")) + 3) + 3]}


def reminimise(out_folder: str, name: str, backend=None, steps: int = 400, shows=()) -> str:
    import lazyloop.difftest as dt
    from lazyloop.difftest.campaign import _disagreement
    from lazyloop.difftest.cases import Context, write_case
    from lazyloop.difftest.checking import Checker
    from lazyloop.difftest.reducing import reduce_finding
    from lazyloop.difftest.schema import backend_version, lazyloop_version
    from tests.findings_cases import case_subject
    case = os.path.join(out_folder, name)
    with open(os.path.join(case, "README.md"), encoding="utf-8") as f:
        old = kept_parts(f.read())
    report = campaign_report(out_folder)
    recorded = finding_of(report, name)
    backend = backend or report["backend"]["name"]
    runner = dt.Isolated(backend, timeout=20)
    try:
        checker = Checker(runner)
        subject = case_subject(case)
        out = checker.outcome(subject)
        checker.attribute(subject, out)
        if str(out.symptom) not in (recorded["symptom"], *shows):
            raise SystemExit(f"{name}: shows {out.symptom}, not {recorded['symptom']}")
        reduction = reduce_finding(subject, out, checker, steps)
        sig = ("disagree", recorded["kind"], recorded["symptom"])
        d = _disagreement(subject, out, checker, sig, recorded["found_after"],
                          recorded["occurrences"], recorded["shrunk"], recorded["shrinking"],
                          reduction, recorded.get("op"))
        d.nodes_before = recorded["nodes"]["before"]  # the shrunk program's model
        if reduction.subject is not None:
            d.subject = reduction.subject
        version = backend_version(runner)
    finally:
        runner.close()
    context = Context(backend, version, lazyloop_version(), report["seed"], old["command"])
    with tempfile.TemporaryDirectory() as tmp:
        written = write_case(tmp, name, d, context)
        with open(os.path.join(written, "README.md"), encoding="utf-8") as f:
            text = f.read()
        start = text.index("## The program")
        end = text.index("```", text.index("```", start) + 3) + 3
        text = text[:start] + old["program"] + text[end:]
        text = re.sub(r"^Found by .*$", lambda _: old["found"], text, count=1, flags=re.M)
        text = re.sub(r"^(- model: .*)$", lambda m: m.group(1) + "\n" + NOTE, text, count=1,
                      flags=re.M)
        with open(os.path.join(written, "README.md"), "w", encoding="utf-8") as f:
            f.write(text)
        shutil.rmtree(case)
        shutil.copytree(written, case)
    record_in_report(out_folder, name, d.nodes_after or reduction.nodes_before, reduction.ended,
                     d.root_cause)
    print(f"{name}: {reduction.nodes_before} -> {d.nodes_after or reduction.nodes_before} "
          f"nodes (minimising: {reduction.ended}); symptom {d.symptom}, explained by "
          f"{d.reading}")
    return case


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_folder")
    parser.add_argument("cases", nargs="+")
    parser.add_argument("--backend", help="the backend (default: the report's)")
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--shows", action="append", default=[],
                        help="a symptom the case may show today besides the recorded one")
    parser.add_argument("--pack", help="pack OUT_FOLDER again into this tarball")
    args = parser.parse_args(argv)
    for name in args.cases:
        reminimise(args.out_folder, name, args.backend, args.steps, tuple(args.shows))
    if args.pack:
        pack(args.out_folder, args.pack)


if __name__ == "__main__":
    main()
