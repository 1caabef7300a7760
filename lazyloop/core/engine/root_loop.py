"""A loop outside loops, run on its schedule by one runner bound once per plan and loop.

When the walk of a value outside loops (`root.py`) reaches an output of a loop whose demand
is static, the reference's driver would make it by the loop's run (`loop_output`); the
engine runs the loop on its schedule instead and stores every output of that run at once
(`output/last`, `output/concat`, `output/reverse`). What that takes besides the run itself
is decided once per plan and loop (`root_loop`, a `RootLoop`): the loop's static demand, the
plan's kept plain schedules of it, and its outputs in the order the schedule answers them,
each with its dtype and the plan's table of the shapes its type was found to admit. An
evaluation's run takes a kept plain schedule at once; a run that records or logs what it
does (the tests'), or of a loop that met an undefined value in this evaluation, takes the
general path (`EngineMachine.schedule_values`), as does the run a plain schedule gives up
on meeting one (`MasksNeeded`).
"""
from __future__ import annotations

import numpy as np

from ..enums import LoopOutput
from ..reference.machine import admitted_shapes
from ..types import TensorType
from .one_run import plain_run
from .schedule import Schedule, pool_of


class RootLoop:
    """How an evaluation runs `demand`'s loop, outside loops, and stores its outputs; called
    as run(machine, output id) -> that output's element."""

    def __init__(self, plan, demand):
        self.demand = demand
        self.loop = demand.loop.name
        self.pool = pool_of(demand, False)  # the plan's kept plain schedules of the loop
        relaxed = plan.profile != "tensorrt"
        self.outputs = tuple(  # (output, stacked, dtype, admitted shapes), as the schedule
            # answers them (`Schedule.outputs`)
            (out, out.kind is not LoopOutput.LAST_VALUE, out.type.dtype,
             admitted_shapes(plan, out.id)) if relaxed and isinstance(out.type, TensorType)
            else (out, out.kind is not LoopOutput.LAST_VALUE, None, ())
            for out in (plan.nodes[o] for o in demand.outputs))

    def __repr__(self):
        return f"root_loop(<plan>, <demand of {self.loop!r}>)"

    def __call__(self, machine, nid):
        """Run the loop, store every output of it as the walk stores a value outside loops
        (`store`), `nid`'s last, and return `nid`'s element."""
        n, values = self.plain_run(machine) or machine.schedule_values(
            self.demand, machine.plan.nodes[nid], machine.root, 0)
        machine.ran(self.loop, (), n, engine=True)
        found = None
        for out, stacked, dtype, shapes in self.outputs:
            value = values[out.id]
            if stacked:
                value = machine.output_value(out, value, n,
                                             lambda out=out: machine.demand(out.length))
            if out.id == nid:
                found = (out, dtype, shapes, value)
            else:
                store(machine, out, dtype, shapes, value)
        return store(machine, *found)

    def plain_run(self, machine):
        """(n, the loop's outputs) of an evaluation's run on a kept plain schedule, taken at
        once; None for a run that records or logs, or of a loop gone masked, or when the
        schedule met an undefined value of this loop (`MasksNeeded`: the loop is marked to
        run masked from now on in this evaluation)."""
        loop = self.loop
        if machine.record is not None or machine.log is not None \
                or loop in machine.masked_loops:
            return None
        machine.scheduled_loops[loop] = self.demand
        try:
            schedule = self.pool.pop().begin(machine, machine.root, 0)
        except IndexError:  # none kept (yet, or taken by a run under way)
            schedule = Schedule(self.demand, machine, machine.root, 0)
        return plain_run(schedule, machine, loop, Schedule.outputs)


def store(machine, out, dtype, shapes, value):
    """`Machine.store` of a loop output's element outside loops, without a trace (the engine
    keeps none): in the usual case -- an array of its stream's dtype and of a shape its type
    was found to admit (`structure/shapes`) -- marked read-only and memoised at once, as the
    compiled walk stores one (`root.py`)."""
    if value.__class__ is np.ndarray and value.dtype == dtype and value.shape in shapes:
        value.setflags(write=False)
        machine.root.memo[out.id] = {0: value}
        return value
    return machine.store(out.id, machine.root, 0, value)


def root_loop(plan, demand) -> RootLoop:
    """The `RootLoop` of `demand`'s loop, made once per plan and demand."""
    key = ("root loop", demand.key)
    found = plan.derived.get(key)
    if found is None:
        found = plan.derived[key] = RootLoop(plan, demand)
    return found
