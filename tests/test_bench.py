"""Smoke test of `python -m lazyloop.bench`: the quick run prints its table and writes JSON.
No timing is asserted (timings are the benchmark's output, not a property of the spec)."""
import json
import os
import subprocess
import sys

from lazyloop import bench


def test_quick_bench_prints_the_table_and_leaves_nothing_behind(tmp_path):
    # run as a user runs it, in an empty folder: nothing is left there (no .hypothesis/)
    out_file = tmp_path / "bench.json"
    here = tmp_path / "empty"
    here.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([sys.executable, "-m", "lazyloop", "bench", "--quick", "--json",
                           str(out_file)], cwd=here, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr
    assert list(here.iterdir()) == []
    text = done.stdout
    assert "lazyloop bench (quick)" in text
    for header in ("case", "lazyloop", "baseline", "ratio", "target", "met"):
        assert header in text
    for key in ("a1", "a2", "b1", "c1", "c2"):  # counter, reference, LSTM, memory
        assert any(line.startswith(key + " ") for line in text.splitlines()), key
    assert "d" in {line[:1] for line in text.splitlines()}  # the ONNX row, run or skipped
    assert any(line.startswith("e") and "prog/s" in line for line in text.splitlines())
    report = json.loads(out_file.read_text())
    assert report["mode"] == "quick"
    keys = [row["key"] for row in report["rows"]]
    assert keys[:5] == ["a1", "a2", "b1", "c1", "c2"]
    for row in report["rows"]:
        assert row["met"] is None  # quick runs do not judge targets


def test_render_marks_targets():
    rows = [bench.Row("x1", "slow case", "2 us", "1 us", 2.0, 1.5),
            bench.Row("x2", "fast case", "1 us", "10 us", 10.0, 5.0, higher=True),
            bench.Row("x3", "info case", "1 us", "1 us", 1.0, None)]
    text = bench.render(rows, "title")
    lines = {line[:2]: line for line in text.splitlines()}
    assert lines["x1"].rstrip().endswith("NO") and "<= 1.5x" in lines["x1"]
    assert lines["x2"].rstrip().endswith("yes") and ">= 5x" in lines["x2"]
    assert "(info)" in lines["x3"]
