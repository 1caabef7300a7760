"""The engine: faster evaluation of the same specification, checked against it.

The reference machine (`lazyloop.core.reference`) is the definition; the engine is the
reference machine with loop outputs made on per-trip schedules (`machine.EngineMachine`):
a static demand analysis (`demand`), the schedule that runs it (`schedule`), its ordinary trips
compiled (`compiled`), map streams batched (`batch`), fixed points (`fixpoint`), masked steps
(`masked_steps`) and read-only marking (`readonly`). Every element is made by the reference's
step table. The reference imports nothing from here; `lazyloop.core.evaluate` chooses by mode.
"""
from .compiled import HOT_TRIPS
from .machine import EngineMachine, Options

#: the engine's modes (`lazyloop.core.evaluate.MODES`) and how each runs a scheduled loop
OPTIONS = {"fast": Options(),                                    # compiled once hot, batched
           "schedule": Options(compile_after=None, batch=False),  # step by step
           "compiled": Options(compile_after=0)}                  # compiled from trip 0

__all__ = ["EngineMachine", "Options", "OPTIONS", "HOT_TRIPS"]
