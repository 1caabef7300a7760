"""The provider program i of a campaign is drawn with: hypothesis's own, blind to the sources
on this machine.

Since about 6.131 hypothesis's default provider now and then (p = 0.05 per integer, float,
bytes or string draw) returns a *constant* instead of a random value. It picks one of two
pools: a fixed list of its own, and the constants it finds in the source files of the
*local* modules loaded in the process -- every module in `sys.modules` that is neither in
the standard library nor under site-packages (an editable install of lazyloop, the user's
script, a plug-in in the current folder), read with `ast` the first time a constant is
wanted and again whenever more modules are loaded. A draw then depends on how lazyloop is
installed, on which modules the process happened to have imported so far (a Dask worker
at program 500 has not imported what one process has), and costs a scan of the sources in
every new process.

`DrawProvider` is hypothesis's provider with the local pool always empty, exactly as when no
local module is loaded: its own fixed constants are still drawn, with the same random
stream. Program i of seed s is then the same in one process or on workers, installed
editable or not (tests/test_difftest_draws.py forces the pool on to show it stays out).
"""
from __future__ import annotations

from hypothesis.internal.conjecture.providers import HypothesisProvider

_ALLOWED = {}  # (choice type, its constraints' key) -> hypothesis's fixed constants allowed


def fixed_constants(choice_type: str, constraints: dict) -> tuple:
    """hypothesis's own constants of `choice_type` that `constraints` allow (its fixed pool;
    the local one is left out), cached as hypothesis caches them."""
    from hypothesis.internal.conjecture.choice import (choice_constraints_key,
                                                       choice_permitted)
    from hypothesis.internal.conjecture.providers import GLOBAL_CONSTANTS
    key = (choice_type, choice_constraints_key(choice_type, constraints))
    if key not in _ALLOWED:
        _ALLOWED[key] = tuple(c for c in GLOBAL_CONSTANTS.set_for_type(choice_type)
                              if choice_permitted(c, constraints))
    return _ALLOWED[key]


class DrawProvider(HypothesisProvider):
    """hypothesis's provider without the pool of local constants (see the module
    docstring): the random values and hypothesis's fixed constants only."""

    def _maybe_draw_constant(self, choice_type, constraints, *, p: float = 0.05):
        source = self._random
        if source.random() > p:  # most draws: no constant at all
            return None
        allowed = fixed_constants(choice_type, constraints)
        if not allowed:
            return None
        # hypothesis first picks a pool among the non-empty ones: here the only one
        pool = source.choice([allowed])
        return source.choice(pool)


def draw_provider():
    """The provider class to draw programs with: `DrawProvider`, or hypothesis's own where
    it has no pool of local constants (releases before it had one)."""
    if hasattr(HypothesisProvider, "_maybe_draw_constant"):
        return DrawProvider
    return HypothesisProvider
