"""The corners exporters' models hit (issue 22 point 2): each corner's programs are what
they promise (hand-computed values), and each catches a planted fault of its kind within
200 programs of the default mix.

rules: onnx/loop, onnx/scan9, trip/count, trip/both
"""
import numpy as np
import pytest

pytest.importorskip("onnx")
pytest.importorskip("hypothesis")

import lazyloop.difftest as dt  # noqa: E402
from lazyloop.strategies.onnx_corners import (OnnxCountLoopRecipe,  # noqa: E402
                                              OnnxHalfChainRecipe, OnnxWideLoopRecipe)
from lazyloop.strategies.onnx_edges import OnnxConstLoopRecipe, OnnxShortScanRecipe  # noqa: E402
from lazyloop.strategies.onnx_loop import OnnxLoopRecipe  # noqa: E402
from tests import planted  # noqa: E402


def expect(recipe):
    p = recipe.program()
    outputs, _, rules = dt.Subject(recipe.kind, "onnx", p).expectation()
    return p, outputs, rules


def test_a_loop_of_forty_thousand_trips_reads_every_iteration_number():
    # rule: trip/count -- i runs 0..39999: its sum is 39999 * 40000 / 2, its last value 39999
    _, out, rules = expect(OnnxCountLoopRecipe(count=40000, reads=("sum", "last", "float")))
    assert out["sum_next_final"] == 39999 * 40000 // 2
    assert out["last_next_final"] == 39999
    assert np.array_equal(out["i_float_stacked"], np.arange(40000, dtype=np.float32))
    assert "onnx/loop" in rules


def test_int64_values_carried_past_two_to_the_31():
    # rule: onnx/loop -- 2^31 + 5 doubled twice, -2^31 - 7 plus the iteration numbers 0, 1
    _, out, _ = expect(OnnxWideLoopRecipe(count=2, starts=(2 ** 31 + 5,), update="double",
                                          scan=True))
    assert out["v0_final"] == (2 ** 31 + 5) * 4
    assert list(out["v0_stacked"]) == [(2 ** 31 + 5) * 2, (2 ** 31 + 5) * 4]
    _, out, _ = expect(OnnxWideLoopRecipe(count=2, starts=(-(2 ** 31) - 7,), update="add-iter"))
    assert out["v0_final"] == -(2 ** 31) - 7 + 0 + 1


def test_a_float16_chain_rounds_between_nodes():
    # rule: onnx/loop -- x = -1.875: (x + 1024) is 1022.125, which float16 rounds to 1022
    # (its spacing there is 0.5 ... rounded to the nearest even: 1022), so the step gives -2;
    # computed in float32 it would give back -1.875
    _, out, _ = expect(OnnxHalfChainRecipe(trips=1, shape=(), steps=("absorb",)))
    assert out["x_final"].dtype == np.float16 and out["x_final"] == -2.0


def test_zero_and_one_trip_scans_keep_every_output_kind():
    # rule: onnx/scan9 -- zero trips: states as fed (0-D stays 0-D), stacked outputs of 0
    # rows (the last-axis one [2, 0]); one trip: one row, the element e = [-2, -1.75]
    _, out, _ = expect(OnnxShortScanRecipe(length=0))
    assert out["s_final"].shape == () and out["s_final"] == 0.5
    assert out["stacked-scalar_out"].shape == (0,)
    assert out["stacked-vector_out"].shape == (0, 2)
    assert out["stacked-last-axis_out"].shape == (2, 0)
    _, out, _ = expect(OnnxShortScanRecipe(length=1, loop=True))
    assert out["s_final"].shape == () and out["s_final"] == 0.5 - 3.75
    assert np.array_equal(out["stacked-reversed_out"], [[2.0, 1.75]])
    assert out["stacked-last-axis_out"].shape == (2, 1)


def test_a_constant_loop_stops_by_its_condition_and_keeps_exporter_names():
    # rule: trip/both -- M = 4, the body goes on while i + 1 < 2: trips 0, 1; each adds
    # i + 1/2 to v0 = -2 (0-D): -2 + 0.5 + 1.5 = 0; the trip count read from x's shape
    p, out, _ = expect(OnnxConstLoopRecipe(count=4, stop=2, via_shape=True, names="tf"))
    assert list(p.feeds) == ["x:0"]
    assert out["v0_final:0"] == 0.0
    assert np.array_equal(out["i_stacked:0"], [0.5, 1.5])


def test_exporter_names_keep_the_program_the_same():
    # rule: onnx/loop -- renaming every value changes no output
    base = expect(OnnxLoopRecipe(count=3, carried=(((2,), "add-iter"),)))[1]
    for style in ("torch", "digits"):
        p, out, _ = expect(OnnxLoopRecipe(count=3, carried=(((2,), "add-iter"),), names=style))
        assert [np.asarray(v).tolist() for v in out.values()] == \
            [np.asarray(v).tolist() for v in base.values()]
    assert list(p.feeds) == ["1", "2"]


# ------------------------------------------------------------------------------------------
# Planted faults: each caught within 200 programs of the default mix (here: 60), by its corner
# ------------------------------------------------------------------------------------------

def kinds_caught(backend):
    # 60 programs: the smallest round number within which every corner catches its fault
    # on seed 0 (each corner is met 3 to 6 times there)
    report = dt.check(backend, max_examples=60, seed=0, shrink=False, isolate=False)
    kinds = set()
    for d in report.disagreements:
        kinds |= {s[1] for s in (d.signature,) + d.also_seen_as}
    return kinds, report


@pytest.mark.parametrize("fault, corner", [
    (planted.Int64KeptIn32Bits, "onnx-wide-loop"),
    (planted.IterationWrappedAt2p15, "onnx-count-loop"),
    (planted.HalfComputedInFloat32, "onnx-half-chain"),
    (planted.EmptyAsOneRow, "onnx-short-scan"),
    (planted.ScalarAsOneElement, "onnx-short-scan"),
    (planted.ConstantLoopsFoldedWithoutCondition, "onnx-const-loop"),
    (planted.RenamesInputs, "onnx-loop"),  # the `names` option of onnx-loop
])
def test_each_corner_catches_a_planted_fault_of_its_kind(fault, corner):
    # rule: onnx/loop -- the campaign meets the fault in the corner made for it
    kinds, report = kinds_caught(fault())
    assert corner in kinds, report.summary()
