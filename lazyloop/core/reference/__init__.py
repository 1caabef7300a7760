"""The specification, executable and standing alone: what the rules of spec/10-17 mean.

* `rules` -- one small function per rule, on values (`stream/map`, `iterator/forward`,
  `trip/while`, `output/concat`, ...), each raising its rule's error;
* `steps` -- the step table: for each kind of plan node, one entry saying which elements its
  element needs and how it is made from them, for the reference machine, the engine's
  schedules and their compiled trips alike;
* `machine` -- the demand-driven reference machine: forcing stack, memo, trace.

Nothing here imports the engine (`lazyloop.core.engine`), which is checked against this
package (`laziness/modes`).
"""
from .machine import Activation, ForceEvent, Machine
from .steps import STEPS

__all__ = ["Machine", "Activation", "ForceEvent", "STEPS"]
