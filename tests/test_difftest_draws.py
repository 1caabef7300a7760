"""Program i of seed s does not depend on the sources loaded in the process (difftest/
provider.py): hypothesis's pool of constants read from local modules (an editable install
of lazyloop, the user's script, a plug-in) stays out of campaign draws, so one process,
Dask workers and any install draw the same programs.

rules: onnx/loop
"""
import subprocess
import sys

import pytest

pytest.importorskip("onnx")
pytest.importorskip("hypothesis")
providers = pytest.importorskip("hypothesis.internal.conjecture.providers")
if not hasattr(providers.HypothesisProvider, "_maybe_draw_constant"):
    pytest.skip("this hypothesis has no pool of local constants", allow_module_level=True)

from hypothesis.internal.constants_ast import Constants  # noqa: E402

from lazyloop.difftest.shrinking import draw_program  # noqa: E402
from lazyloop.difftest.subject import subjects  # noqa: E402

INDICES = range(24)
# what a local module could hold (hypothesis leaves out integers under 100 in size, the
# infinities and zeros): sizes, limits and odd floats, as lazyloop's own sources do
POOL = Constants(integers={-100, 120, 256, 1000, 1024, 4096, 40_000, 100_000, 10_000_000},
                 floats={-2.0, -0.5, 1e-5, 0.01, 0.125, 0.25, 1.0, 1.5, 3.0, 60.0, 512.0, 1e9})


def forced_pool(monkeypatch, pool):
    """hypothesis's local pool replaced by `pool` (and its cache of allowed constants
    emptied, so that the pool is read again)."""
    monkeypatch.setattr(providers, "_get_local_constants", lambda: pool)
    providers.CONSTANTS_CACHE.cache.clear()


def keys(strategy, seed=0):
    return [draw_program(strategy, seed, i)[0].key() for i in INDICES]


def plain_hypothesis_keys(strategy, seed=0):
    """The same draws with hypothesis's own provider (the pool in)."""
    import random

    from hypothesis.internal.conjecture.data import ConjectureData

    from lazyloop.difftest.shrinking import _draw
    return [_draw(ConjectureData(random=random.Random(f"lazyloop:{seed}:{i}")), strategy).key()
            for i in INDICES]


def test_a_pool_of_local_constants_does_not_change_program_i(monkeypatch):
    # rule: onnx/loop -- the same programs with no local constants and with many
    strategy = subjects(("onnx",))
    try:
        forced_pool(monkeypatch, Constants())
        empty, plain_empty = keys(strategy), plain_hypothesis_keys(strategy)
        forced_pool(monkeypatch, POOL)
        full, plain_full = keys(strategy), plain_hypothesis_keys(strategy)
    finally:
        providers.CONSTANTS_CACHE.cache.clear()
    assert full == empty
    # with no local module, lazyloop draws exactly what hypothesis draws ...
    assert empty == plain_empty
    # ... and the pool would have changed some of these programs (the check can fail)
    assert plain_full != plain_empty


SCRIPT = """
import sys
from lazyloop.difftest.shrinking import draw_program
from lazyloop.difftest.subject import subjects
LIMITS = [101, 131, 257, 1009, 4099, 65537, -129, 0.3, 0.7, 1.5, -2.25, 6.5, 1e-3, 1e-9, 3e8]
strategy = subjects(("onnx",))
for i in range(24):
    print(repr(draw_program(strategy, 0, i)[0].key()))
"""


def test_program_i_is_the_same_in_a_process_whose_script_holds_constants(tmp_path):
    # rule: onnx/loop -- a user's script is a local module: its constants would enter
    # hypothesis's pool; the programs it draws are this process's
    script = tmp_path / "campaign_script.py"
    script.write_text(SCRIPT)
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         check=True, timeout=300).stdout
    strategy = subjects(("onnx",))
    assert out.splitlines() == [repr(k) for k in keys(strategy)]
