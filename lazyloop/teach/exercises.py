"""The exercises of the teaching notebooks: for each, the rule it exercises, a hint that points
at the rule (never at the answer), and the expected answer worked out without lazyloop (plain
Python or numpy, from the same small inputs the notebook uses).

A notebook's ✎ cell ships as ``answer_k = ...``; its check cell calls
``teach.exercise("NN.k", answer_k)``. The reference answers live outside the notebooks
(notebooks/solutions.py); the test suite makes ``exercise`` use them by setting
``LAZYLOOP_SOLUTIONS`` to that file, so a clean run checks every exercise green.
"""
from __future__ import annotations

import os
import runpy
from typing import Callable, Dict, Tuple

import attrs
import numpy as np

from .notebook import _matches


@attrs.frozen
class Exercise:
    key: str
    rule: str        # the rule ID (or ambiguity) that decides the answer
    hint: str        # what to re-read, said without giving the answer away
    expected: Callable[[], object]
    parts: Tuple[str, ...] = ()   # the names of a tuple answer's parts (a dict names its own)


EXERCISES: Dict[str, Exercise] = {}


def _exercise(key: str, rule: str, hint: str, parts: Tuple[str, ...] = ()):
    def register(fn):
        EXERCISES[key] = Exercise(key, rule, hint, fn, parts)
        return fn
    return register


X = np.arange(12, dtype=np.float32).reshape(4, 3)   # the matrix of notebooks 01 and 06
X3 = X + 1                                          # notebook 03's


def _while_trips(x, step, keep_going):
    """A WHILE loop by `trip/while`: (n, final value, indices at which the condition is read)."""
    checks, n = [], 0
    while True:
        checks.append(n)
        if not keep_going(x):
            return n, x, checks
        x, n = step(x), n + 1


def _collatz_step(x):
    return x // 2 if x % 2 == 0 else 3 * x + 1


# ---- 01 streams and forcing ---------------------------------------------------------------

@_exercise("01.1", "output/last", "LAST_VALUE reads one element of the recurrence: which one, "
           "for n trips? Then follow `recurrence/def` back to the initial value.")
def _():
    return set(range(3 + 1))


@_exercise("01.2", "iterator/bounds", "an out-of-range row is an error only when some output's "
           "rule forces it (`laziness/dead`); which rows does scaled_rows ask for at each count?")
def _():
    rows = 4
    # scaled_rows concatenates one row per trip: `count` trips force rows 0 .. count-1
    return {count: count > rows for count in (3, 4, 5, 6)}


@_exercise("01.3", "iterator/reverse", "element i of a reversed iterator is the slice L-1-i "
           "along the axis, L being that axis' extent (not the trip count).")
def _():
    return X[:, 3 - 1 - 1]


# ---- 02 trip limits -----------------------------------------------------------------------

@_exercise("02.1", "trip/while", "n is the least index whose condition is false; the "
           "condition is read once per trip and once more.",
           parts=("n", "LAST_VALUE(x)", "condition elements forced"))
def _():
    n, last, checks = _while_trips(1, lambda x: 3 * x, lambda x: x < 100)
    return (n, last, len(checks))


@_exercise("02.2", "trip/both", "with both limits, the count is looked at before the "
           "condition at every index (A40's default reading).")
def _():
    count, limit = 4, 6                    # counter(count=4, limit=6): keep_going = i < 6
    forced, j = [], 0
    while j != count:                      # the count first ...
        forced.append(j)                   # ... then the condition's element j
        if not j < limit:
            break
        j += 1
    return forced


@_exercise("02.3", "onnx/loop", "the condition is a recurrence: element k+1 is computed on "
           "trip k, here from the value before its update.")
def _():
    i, c, n = 0, True, 0
    while c:
        c = i < 5
        i, n = i + 1, n + 1
    return n


# ---- 03 outputs ---------------------------------------------------------------------------

@_exercise("03.1", "output/concat", "the elements are stacked on a new axis at `axis`; "
           "positions past n along it are padding, undefined.")
def _():
    out = np.full((3, 4), np.nan)
    out[:, :2] = np.stack([X3[0], X3[1]], axis=1)
    return out


@_exercise("03.2", "output/reverse", "REVERSE writes the n elements in reverse order; "
           "where does the padding go under the default reading of A1?")
def _():
    defined = np.zeros((4, 3), bool)
    defined[:2] = True
    return defined


@_exercise("03.3", "structure/last-value", "in the relaxed profiles the last value of a "
           "body result is the one from the last trip that ran; trip n never runs.",
           parts=("the value lazyloop gives", "v_n"))
def _():
    n = 2
    return (X3[n - 1], X3[n])


# ---- 04 nesting and conditionals ----------------------------------------------------------

@_exercise("04.1", "structure/nesting", "the inner loop runs once per row, in its own "
           "activation; count per activation with `output/last`, then add up.")
def _():
    rows, cols = 4, 2                      # row_sums(rows=4, cols=2)
    return rows * (cols + 1)


@_exercise("04.2", "trip/while", "the loop condition is read at every trip and once more, "
           "at n.")
def _():
    n, _, checks = _while_trips(5, _collatz_step, lambda x: x != 1)
    return len(checks)


@_exercise("04.3", "laziness/dead", "lazily, an element is computed only when the taken branch "
           "asks for it; eagerly (A10), every body node outside a branch runs on every trip.")
def _():
    trips, rows = 4, 3
    taken = [i for i in range(trips) if i < 2]           # trips whose true branch reads row i
    return {"lazy": taken, "eager": "runs" if trips <= rows else "error"}


# ---- 05 LSTM ------------------------------------------------------------------------------

TEXT = "lazy streams, forced in order"


@_exercise("05.1", "output/concat", "which elements of h does each marked output read? "
           "CONCATENATE stacks the next values of trips 0 .. n-1; only LAST_VALUE reads the "
           "state after the last trip.")
def _():
    seq = 7                                # char_model(seq=7, outputs=("states",))
    return seq                             # states needs h_next_0 .. h_next_6: h_0 .. h_6


@_exercise("05.2", "output/concat", "one element per trip, each of the state's shape, stacked "
           "on a new leading axis.")
def _():
    return (7, 1, 16)


@_exercise("05.3", "recurrence/def", "`states` stacks the recurrence's next value h', and "
           "h'_t is the next element of h.")
def _():
    return 4 + 1


# ---- 06 four dialects ---------------------------------------------------------------------

@_exercise("06.1", "onnx/loop", "a scan output stacks one body result per trip, here the "
           "running sum after each row.")
def _():
    return np.cumsum(X[:2], axis=0)


@_exercise("06.2", "A4", "look up each dialect's default reading of a negative trip count "
           "with teach.show_ambiguity('A4'), then ask what the OpenVINO body slices.")
def _():
    return {"TensorRT": "error", "ONNX Loop": 0, "OpenVINO Loop": "error"}


@_exercise("06.3", "output/last", "the final carried value is LAST_VALUE of the carried "
           "stream.")
def _():
    return list(range(3 + 1))


# ---- 07 differential testing --------------------------------------------------------------

@_exercise("07.1", "onnx/scan9", "no rows, no trips: what is the last value of a recurrence "
           "after zero trips?")
def _():
    return [-0.5, 3.0]                     # the state s fed to the Scan, unchanged


@_exercise("07.2", "trip/both", "run the body, c <- tanh(c + i), by hand from v0 and compare "
           "each trip's value with both answers; with a condition that stays true, n = M.")
def _():
    c, values = np.float32(-1.0), []
    for i in range(4):
        c = np.tanh(c + np.float32(i))
        values.append(float(c))
    backend_value = 0.9773191809654236          # the backend's answer, shown in the notebook
    trips = 1 + int(np.argmin([abs(v - backend_value) for v in values]))
    return {"right": "lazyloop", "backend_trips": trips}


@_exercise("07.3", "output/concat", "the comparison looks only at positions lazyloop defines; "
           "padding is undefined.", parts=("agree for [1, 2, 7]", "agree for [1, 3, 7]"))
def _():
    defined = np.array([True, True, False])
    expected = np.array([1, 2, 0], np.float32)
    return tuple(bool(np.allclose(np.asarray(a, np.float32)[defined], expected[defined]))
                 for a in ([1, 2, 7], [1, 3, 7]))


# ---- checking -----------------------------------------------------------------------------

def _solution(key):
    """The reference answer, when the test run asks for it (LAZYLOOP_SOLUTIONS=solutions.py)."""
    path = os.environ.get("LAZYLOOP_SOLUTIONS")
    if not path:
        return Ellipsis
    return runpy.run_path(path)["SOLUTIONS"].get(key, Ellipsis)


def parts_feedback(ex: Exercise, answer, expected) -> str:
    """For an answer in parts (a dict, or a tuple whose parts the exercise names): which
    parts are right and which are not yet, never what the wrong ones should be."""
    if isinstance(expected, dict):
        if not isinstance(answer, dict):
            return f"Answer with a dict with the keys {list(expected)}."
        said = [f"{k!r}: " + ("missing" if k not in answer else
                              "right" if _matches(answer[k], v, 1e-5, 1e-6) else "not yet")
                for k, v in expected.items()]
        said += [f"{k!r}: not asked" for k in answer if k not in expected]
        return "; ".join(said) + "."
    if ex.parts:
        if not isinstance(answer, (tuple, list)) or len(answer) != len(expected):
            return f"Answer with {len(expected)} parts: ({', '.join(ex.parts)})."
        return "; ".join(f"{name}: " + ("right" if _matches(a, e, 1e-5, 1e-6) else "not yet")
                         for name, a, e in zip(ex.parts, answer, expected)) + "."
    return ""


def exercise(key: str, answer) -> bool:
    """Check the answer to exercise `key`. Unanswered (``...``): say so and return False.
    Wrong: raise an AssertionError with a hint naming the rule, never the expected value;
    for an answer in parts, say which parts are right (`parts_feedback`).
    Right: say so and return True (the notebook then shows what lazyloop computes)."""
    ex = EXERCISES[key]
    if answer is Ellipsis:
        answer = _solution(key)
    if answer is Ellipsis:
        print(f"✎ exercise {key}: not answered yet: replace the ... in the cell above")
        return False
    expected = ex.expected()
    if not _matches(answer, expected, 1e-5, 1e-6):
        where = (f"teach.rule_text({ex.rule!r})" if "/" in ex.rule
                 else f"teach.show_ambiguity({ex.rule!r})")
        parts = parts_feedback(ex, answer, expected)
        raise AssertionError(f"exercise {key}: not yet. {parts + ' ' if parts else ''}"
                             f"Hint (`{ex.rule}`): {ex.hint} {where} shows the rule.")
    print(f"correct: exercise {key} (`{ex.rule}`)")
    return True
