"""The command line in CI: exit statuses, --fail-on, --baseline, the JSON and JUnit reports,
early checks of --out, one run per folder, the progress line, Ctrl-C and --max-time, and
nothing left in the current folder. Every test drives `python -m lazyloop` as a user would.

The findings used here are real ones (spec/50-findings.md): with seed 3, 15 ONNX Scan 9+
programs make onnxruntime fail on a zero-length scan and crash with SIGFPE (ORT-1); 15 Scan 8
programs meet an onnxruntime refusal that ambiguity A14 explains.
"""
import json
import os
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

import pytest

pytest.importorskip("onnxruntime")
pytest.importorskip("hypothesis")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def cli(*args, cwd, timeout=300):
    env = dict(os.environ, PYTHONPATH=ROOT)
    return subprocess.run([sys.executable, "-m", "lazyloop", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)


# seed 3 since programs are drawn from (seed, i) (the tester's generator): program 0 crashes
SCAN9 = ["check", "--backend", "onnxruntime", "--examples", "15", "--seed", "3", "--kind",
         "onnx-scan9", "--no-shrink"]
SCAN8 = ["check", "--backend", "onnxruntime", "--examples", "15", "--seed", "0", "--kind",
         "onnx-scan8", "--no-shrink"]


@pytest.fixture(scope="module")
def scan9_run(tmp_path_factory):
    """One campaign with unexplained findings, its JSON and JUnit reports and case folders."""
    cwd = tmp_path_factory.mktemp("scan9")
    done = cli(*SCAN9, "--out", "out", "--json", "report.json", "--junit", "junit.xml",
               cwd=cwd)
    return cwd, done


def test_unexplained_findings_exit_1_and_the_baseline_makes_them_known(scan9_run, tmp_path):
    cwd, done = scan9_run
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    # the same campaign against its own report as baseline: nothing new, exit 0
    again = cli(*SCAN9, "--baseline", str(cwd / "report.json"), "--json", "again.json",
                cwd=tmp_path)
    assert again.returncode == 0, again.stdout[-2000:]
    doc = json.loads((tmp_path / "again.json").read_text())
    # programs shaped like its findings were drawn again (spec/51, "New faults before old
    # ones"): the known causes were met by no program this time
    base = json.loads((cwd / "report.json").read_text())
    assert doc["programs"]["redrawn"] > 0
    assert doc["known_causes"] == {f["root_cause"]: 0 for f in base["findings"]}
    assert all(f["known"] and not f["counts"] for f in doc["findings"])
    # a baseline that keeps no shapes: the same programs, the findings known, none counts
    for f in base["findings"]:
        f["shape"], f["case"] = [], None
    (tmp_path / "old.json").write_text(json.dumps(base))
    old = cli(*SCAN9, "--baseline", "old.json", "--json", "old-again.json", cwd=tmp_path)
    assert old.returncode == 0, old.stdout[-2000:]
    doc = json.loads((tmp_path / "old-again.json").read_text())
    assert doc["findings"] and all(f["known"] and not f["counts"] for f in doc["findings"])
    assert doc["verdict"]["known"] == len(doc["findings"])
    assert doc["programs"]["redrawn"] == 0


def test_fail_on_chooses_what_counts(tmp_path):
    # the Scan 8 finding is explained by A14: not counted by default, counted by --fail-on any
    assert cli(*SCAN8, "--quiet", cwd=tmp_path).returncode == 0
    done = cli(*SCAN8, "--quiet", "--fail-on", "any", "--json", "r.json", cwd=tmp_path)
    assert done.returncode == 1
    doc = json.loads((tmp_path / "r.json").read_text())
    assert [f["ambiguity"] for f in doc["findings"]] == ["A14"]
    assert doc["verdict"] == {"fail_on": "any", "counted": 1, "known": 0, "explained": 1,
                              "op_faults": 0, "exit_status": 1}


def test_json_report_schema(scan9_run):
    cwd, _ = scan9_run
    doc = json.loads((cwd / "report.json").read_text())
    assert doc["schema_version"] == 2 and doc["command"] == "check"
    assert doc["backend"]["name"] == "onnxruntime"
    import onnxruntime
    assert doc["backend"]["version"] == onnxruntime.__version__
    import lazyloop
    assert doc["lazyloop_version"] == lazyloop.__version__ and doc["seed"] == 3
    p = doc["programs"]
    assert p["generated"] == 15 and p["run"] + p["refused"] == 15
    assert set(doc["outcomes"]) == {"agree", "disagree", "crash", "hang", "oom",
                                    "unsupported", "refused-by-spec"}
    # every program run has one outcome
    assert sum(v for k, v in doc["outcomes"].items() if k != "refused-by-spec") == p["run"]
    crash = [f for f in doc["findings"] if f["outcome"] == "crash"]
    assert crash and crash[0]["crash_signal"] == "SIGFPE"
    for f in doc["findings"]:
        assert set(f) >= {"root_cause", "rules", "ambiguity", "crash_signal", "case"}
        assert (cwd / "out" / f["case"] / "model.onnx").exists()
    assert json.loads((cwd / "out" / "report.json").read_text())["findings"] == doc["findings"]


def test_junit_has_one_testcase_per_root_cause_and_one_for_the_campaign(scan9_run):
    cwd, _ = scan9_run
    doc = json.loads((cwd / "report.json").read_text())
    suite = ET.parse(cwd / "junit.xml").getroot().find("testsuite")
    names = [c.get("name") for c in suite.findall("testcase")]
    assert names == ["campaign"] + [f["root_cause"] for f in doc["findings"]]
    failed = [c.get("name") for c in suite.findall("testcase") if c.find("failure") is not None]
    assert failed == [f["root_cause"] for f in doc["findings"] if f["counts"]]


def test_case_folder_names_its_provenance_and_reruns(scan9_run):
    cwd, _ = scan9_run
    doc = json.loads((cwd / "report.json").read_text())
    finding = doc["findings"][0]
    readme = (cwd / "out" / finding["case"] / "README.md").read_text()
    assert f"backend: onnxruntime {doc['backend']['version']}" in readme
    assert f"lazyloop: {doc['lazyloop_version']}" in readme and "seed: 3" in readme
    assert "lazyloop check --backend onnxruntime --examples 15" in readme
    assert f"lazyloop run {finding['case']} --backend onnxruntime" in readme
    # re-running the case: lazyloop matches what it saved, the backend still fails
    done = cli("run", finding["case"], "--backend", "onnxruntime", cwd=cwd / "out")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "lazyloop against the saved expected outputs: same" in done.stdout
    assert "onnxruntime: failed" in done.stdout or "DIFFERENT" in done.stdout


def test_out_folder_is_checked_first_and_holds_one_run(tmp_path):
    (tmp_path / "file").write_text("x")
    done = cli("check", "--backend", "onnxruntime", "--examples", "5", "--out", "file/sub",
               cwd=tmp_path)
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "--out file/sub: cannot write there" in done.stderr
    out = tmp_path / "out"
    out.mkdir()
    (out / "case_000_old").mkdir()
    (out / "notes.txt").write_text("mine")
    done = cli("check", "--backend", "onnxruntime", "--examples", "5", "--out", "out",
               cwd=tmp_path)
    assert done.returncode == 2 and "not empty" in done.stderr
    assert "Traceback" not in done.stderr
    done = cli("check", "--backend", "onnxruntime", "--examples", "5", "--out", "out",
               "--force", "--quiet", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    # the old case folder is gone; the user's file stays; anything else is this run's
    entries = set(os.listdir(out))
    assert "case_000_old" not in entries and {"notes.txt", "report.json"} <= entries
    assert all(e.startswith("case_") for e in entries - {"notes.txt", "report.json"})


@pytest.mark.parametrize("args, says", [
    (["--examples", "0"], "--examples: must be at least 1, got 0"),
    (["--examples", "-5"], "--examples: must be at least 1, got -5"),
    (["--kind", "onnx-lop"], "--kind: invalid choice: 'onnx-lop'"),
    (["--backend", "no-such"], "unknown backend"),
    (["--format", "openvino"], "--format openvino: onnxruntime takes onnx"),
    (["--kind", "openvino-loop"], "--kind openvino-loop: no such programs in the formats onnx"),
    (["--rtol", "-1"], "--rtol: must be 0 or more, got -1"),
    (["--max-time", "0"], "--max-time: must be more than 0, got 0"),
    (["--json", "file/x.json"], "--json file/x.json: cannot write there"),
    (["--baseline", "file"], "--baseline file: cannot read it"),
])
def test_usage_errors_are_one_line_exit_2(tmp_path, args, says):
    (tmp_path / "file").write_text("not json")
    base = ["check", "--backend", "onnxruntime", "--out", "o"]
    done = cli(*base, *args, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and says in done.stderr, done.stderr
    assert not (tmp_path / "o").exists()  # nothing created before every check passed


def test_the_hooks_example_zero_is_one_line(tmp_path):
    done = cli("check", "--backend", "onnxruntime", "--examples", "0", "--out", "DIR",
               cwd=tmp_path)
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "Traceback" not in done.stderr and done.stdout == ""


def test_progress_lines_without_carriage_returns_and_nothing_left_in_cwd(tmp_path):
    done = cli("check", "--backend", "onnxruntime", "--examples", "6", "--seed", "1",
               "--shrink-steps", "20", cwd=tmp_path)
    assert done.returncode in (0, 1), done.stderr  # seed 1 meets onnxruntime's known faults
    assert "\r" not in done.stderr
    lines = done.stderr.splitlines()
    assert lines[-1].startswith("lazyloop check onnxruntime: done: 6/6 programs, ")
    assert os.listdir(tmp_path) == []  # no .hypothesis/, no stray files


def test_max_time_ends_with_a_partial_report(tmp_path):
    done = cli("check", "--backend", "onnxruntime", "--examples", "100000", "--max-time", "3",
               "--quiet", "--json", "r.json", cwd=tmp_path)
    assert done.returncode in (0, 1), done.stderr
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["stopped"] == "max-time" and not doc["complete"]
    assert 0 < doc["programs"]["generated"] < 100000
    assert "stopped early" in done.stdout


def test_ctrl_c_ends_with_a_partial_report(tmp_path):
    env = dict(os.environ, PYTHONPATH=ROOT)
    proc = subprocess.Popen([sys.executable, "-m", "lazyloop", "check", "--backend",
                             "onnxruntime", "--examples", "100000", "--json", "r.json",
                             "--out", "out"], cwd=tmp_path, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    first = proc.stderr.readline()  # the first progress line: the campaign is running
    assert first.startswith("lazyloop check onnxruntime: ") and "/100000 programs" in first
    time.sleep(2)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["stopped"] == "interrupted" and doc["programs"]["generated"] > 0
    # findings that count: 1; none: 130, an interrupted run's status (never 0)
    assert proc.returncode == (1 if doc["verdict"]["counted"] else 130), err
    assert doc["verdict"]["exit_status"] == proc.returncode
    assert "lazyloop check: interrupted (Ctrl-C) after" in err
    assert (tmp_path / "out" / "report.json").exists()


def test_conformance_run_exits_1_on_failures_and_writes_reports(tmp_path):
    # onnx-reference fails cases no ambiguity explains (spec/50-findings.md: REF-1 and more)
    done = cli("conformance", "run", "--backend", "onnx-reference", "--json", "c.json",
               "--junit", "c.xml", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    doc = json.loads((tmp_path / "c.json").read_text())
    assert doc["command"] == "conformance" and doc["schema_version"] == 2
    fails = [f for f in doc["findings"] if f["ambiguity"] is None]
    assert fails and all(f["root_cause"].startswith("conformance/") for f in fails)
    again = cli("conformance", "run", "--backend", "onnx-reference", "--baseline", "c.json",
                cwd=tmp_path)
    assert again.returncode == 0
    cases = ET.parse(tmp_path / "c.xml").getroot().find("testsuite").findall("testcase")
    assert len(cases) == 1 + len(doc["findings"])


def test_conformance_on_the_spec_itself_exits_0(tmp_path):
    done = cli("conformance", "run", "--backend", "lazyloop", "--case", "fibonacci",
               "--case", "concat_padding", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr


def test_report_to_json_in_python():
    import lazyloop.difftest as dt
    report = dt.check(dt.backend("lazyloop"), max_examples=5, seed=0, shrink=False)
    doc = json.loads(report.to_json())
    assert doc["schema_version"] == 2 and doc["backend"]["name"] == "lazyloop"
    assert doc["programs"]["generated"] == 5 and doc["findings"] == []
    assert doc["verdict"]["exit_status"] == 0


@pytest.mark.parametrize("argv", [[], ["bench", "--bogus"], ["conformance"],
                                  ["conformance", "run", "--backend", "no-such"],
                                  ["explain", "m.onnx", "--max-events", "0"]])
def test_every_command_answers_a_mistake_in_one_line(tmp_path, argv):
    done = cli(*argv, cwd=tmp_path)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "Traceback" not in done.stderr and "usage:" not in done.stderr


def test_a_backend_whose_package_is_missing_names_the_extra(tmp_path):
    # the isolated child cannot import the backend's package: one line naming the extra
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, os.path.join(ROOT, "tests")]))
    done = subprocess.run([sys.executable, "-m", "lazyloop", "check", "--backend",
                           "planted:needs_openvino", "--examples", "3"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [
        "lazyloop check: --backend planted:needs_openvino: this needs 'openvino', which is "
        "not installed: install lazyloop[openvino]"]
