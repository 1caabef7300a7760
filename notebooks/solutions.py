"""Reference answers to the notebooks' exercises, kept out of the notebooks.

The notebooks ship with ``answer_k = ...``; tests/test_notebooks.py runs them with
``LAZYLOOP_SOLUTIONS`` pointing here, so that ``teach.exercise`` checks these answers. The
expected values they are checked against are worked out independently, without lazyloop, in
lazyloop/teach/exercises.py. Peek only after trying.
"""
import numpy as np

SOLUTIONS = {
    "01.1": {0, 1, 2, 3},
    "01.2": {3: False, 4: False, 5: True, 6: True},
    "01.3": [1, 4, 7, 10],
    "02.1": (5, 243, 6),
    "02.2": [0, 1, 2, 3],
    "02.3": 6,
    "03.1": np.array([[1, 4, np.nan, np.nan], [2, 5, np.nan, np.nan], [3, 6, np.nan, np.nan]]),
    "03.2": np.array([[True] * 3, [True] * 3, [False] * 3, [False] * 3]),
    "03.3": ([4, 5, 6], [7, 8, 9]),
    "04.1": 12,
    "04.2": 6,
    "04.3": {"lazy": [0, 1], "eager": "error"},
    "05.1": 7,
    "05.2": (7, 1, 16),
    "05.3": 5,
    "06.1": np.array([[0, 1, 2], [3, 5, 7]]),
    "06.2": {"TensorRT": "error", "ONNX Loop": 0, "OpenVINO Loop": "error"},
    "06.3": [0, 1, 2, 3],
    "07.1": [-0.5, 3.0],
    "07.2": {"right": "lazyloop", "backend_trips": 3},
    "07.3": (True, False),
}
