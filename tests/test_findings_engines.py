"""The committed campaigns against the engines users deploy (findings/cases-ENGINE-seedS.tar.gz,
findings/faults-engines.json): each distinct fault judged by hand is still met when its case
folder is run again with `lazyloop run CASE --backend ENGINE` (spec/50-findings.md, "Engines
users deploy"; spec/51-difftest.md, "Engines users deploy").

A few cases per engine (its own faults marked `retest`, one case each); each engine's part skips
when its package is missing.

rules: onnx/loop, onnx/scan9, onnx/if
"""
import json
import os
import tarfile

import pytest

from tests.findings_cases import FINDINGS

pytest.importorskip("onnx")
FAULTS = json.load(open(os.path.join(FINDINGS, "faults-engines.json"), encoding="utf-8"))
# the package whose absence skips an engine's part
PACKAGES = {"iree": "iree.runtime", "mnn": "MNN", "onnxslim": "onnxslim",
            "onnxsim": "onnxsim", "onnxoptimizer": "onnxoptimizer"}


def judged(engine: str) -> list:
    """(campaign, case name, fault ID) of each of the engine's own faults, one case each."""
    return [(entry["campaign"], entry["case"], fault_id)
            for fault_id, entry in FAULTS["faults"].items()
            if entry["engine"] == engine and entry["retest"]]


def unpacked_case(campaign: str, case: str, into: str) -> str:
    folder = os.path.join(into, campaign)
    if not os.path.isdir(folder):
        with tarfile.open(os.path.join(FINDINGS, f"cases-{campaign}.tar.gz")) as tar:
            tar.extractall(into, filter="data")
    return os.path.join(folder, case)


@pytest.mark.parametrize("engine", sorted({f["engine"] for f in FAULTS["faults"].values()}))
def test_each_judged_fault_is_met_again_with_lazyloop_run(engine, tmp_path, capsys):
    # rule: onnx/loop -- exit status 1: the engine still differs from lazyloop (or fails) on
    # the minimal case, and lazyloop still gives the expected outputs saved in the folder
    pytest.importorskip(PACKAGES[engine])
    from lazyloop.cli import main
    for campaign, case, fault_id in judged(engine):
        folder = unpacked_case(campaign, case, str(tmp_path))
        capsys.readouterr()
        assert main(["run", folder, "--backend", engine]) == 1, (fault_id, folder)
        said = capsys.readouterr().out
        assert "lazyloop against the saved expected outputs: same" in said, (fault_id, said)
        assert FAULTS["faults"][fault_id]["shows"] in said, (fault_id, said)


@pytest.mark.parametrize("engine", ["onnxslim", "onnxsim", "onnxoptimizer"])
def test_a_case_judged_onnxruntimes_own_differs_on_onnxruntime_alone(engine, tmp_path):
    # rule: onnx/loop -- the optimiser is not blamed: the original model on onnxruntime
    # differs from lazyloop as the optimised one does (the float16 chain, first of its kind)
    pytest.importorskip(PACKAGES[engine])
    from lazyloop.cli import main
    campaign = f"{engine}-seed0"
    case = next(c for c, label in sorted(FAULTS["cases"][campaign].items())
                if label.startswith("onnxruntime (") and "half-chain" in c)
    folder = unpacked_case(campaign, case, str(tmp_path))
    assert main(["run", folder, "--backend", "onnxruntime"]) == 1, folder
    assert main(["run", folder, "--backend", engine]) == 1, folder


def test_every_judged_case_is_in_its_campaign_report():
    for fault_id, entry in FAULTS["faults"].items():
        with open(os.path.join(FINDINGS, f"report-{entry['campaign']}.json")) as f:
            report = json.load(f)
        cases = {finding["case"] for finding in report["findings"]}
        assert entry["case"] in cases, fault_id
    for campaign, cases in FAULTS["cases"].items():
        with open(os.path.join(FINDINGS, f"report-{campaign}.json")) as f:
            report = json.load(f)
        assert set(cases) == {finding["case"] for finding in report["findings"]}, campaign
