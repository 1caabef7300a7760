"""The README's builder example runs and prints what the README says it prints."""
import pathlib
import re

import numpy as np

README = pathlib.Path(__file__).resolve().parent.parent / "README.md"


def test_builder_example_matches_its_comment():
    # rule: output/last -- [2,3,5] + [4,6,8] summed by a recurrence over two trips
    text = README.read_text()
    block = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    code = block.split("ll.evaluate(")[0]
    namespace = {}
    exec(code, namespace)  # noqa: S102 -- the README's own example
    ll, net = namespace["ll"], namespace["net"]
    result = ll.evaluate(net, {"x": np.array([[2, 3, 5], [4, 6, 8]], np.float32)})
    shown = re.search(r"# \{'(\w+)': array\(\[([^\]]*)\]", block)
    assert list(result) == [shown.group(1)]
    expected = [float(v) for v in shown.group(2).replace(".", ".0").split(",")]
    np.testing.assert_array_equal(result[shown.group(1)], expected)
    np.testing.assert_array_equal(expected, [6, 9, 13])
