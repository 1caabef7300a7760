"""Smoke test of `python -m lazyloop.bench`: the quick run prints its table and writes JSON.
No timing is asserted (timings are the benchmark's output, not a property of the spec)."""
import json

from lazyloop import bench


def test_quick_bench_prints_the_table(capsys, tmp_path):
    out_file = tmp_path / "bench.json"
    assert bench.main(["--quick", "--json", str(out_file)]) == 0
    text = capsys.readouterr().out
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
