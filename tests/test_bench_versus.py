"""`lazyloop bench --only versus`: the side-by-side rows are printed with their targets, and
every evaluator agrees on every model. No timing is asserted."""
import json

import pytest

from lazyloop import bench

pytest.importorskip("onnx")


def test_quick_versus_rows(capsys, tmp_path):
    # rule: laziness/fixed-point -- the v8 row answers a 2^63-1-trip Loop: y = 10
    out_file = tmp_path / "versus.json"
    assert bench.main(["--quick", "--only", "versus", "--json", str(out_file)]) == 0
    text = capsys.readouterr().out
    rows = {row["key"]: row for row in json.loads(out_file.read_text())["rows"]}
    assert sorted(rows, key=lambda k: int(k[1:])) == [f"v{k}" for k in range(1, 13)]
    assert "RESULTS DIFFER" not in text
    for key in ("v1", "v4", "v5", "v6", "v10", "v11"):  # rows with targets over onnxruntime
        assert rows[key]["target"] is not None and rows[key]["met"] is None  # quick: unjudged
    assert rows["v8"]["values"]["y"] == 10.0
    assert rows["v12"]["target"] is None and rows["v12"]["values"]["agree"]  # the floor agrees with ort
