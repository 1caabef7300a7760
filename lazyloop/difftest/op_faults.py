"""Op faults apart from loop faults (spec/51-difftest.md, "Op faults").

A backend that disagrees on a program whose body holds ops drawn from the schemas
(`OnnxSchemaRecipe`) may be wrong about the loop -- or about one op, wherever it stands. To
tell them apart, each body call is run alone, outside any loop (`OnnxSchemaRecipe.alone`: the
call as the only node of a model, fed the values it reads on one trip of the program), on
the same backend, and compared with lazyloop's answer for that one-node model. When the
backend disagrees there too, and does not on a control of the same outputs without the op
(each output an `Identity` of a graph input fed lazyloop's answer: an engine wrong on any
model, such as one adding 1 to every output, is wrong there too, and its fault is not the
op's), the finding is an **op fault**: its case is the op alone, its root cause names the op
(`op:Mod`) and it is grouped apart from the loop faults. Otherwise it stays a loop fault.

The finding's shrunk program is tried first, then the program that first met it (shrinking
may have moved the finding to a program of another kind, whose body holds no schema call).
"""
from __future__ import annotations

from typing import Optional

import attrs

from .reducing import ReducedModel
from .shrinking import INTERRUPTED
from .subject import Subject

ALONE_KIND = "op-alone"  # the kind of a one-node program made of a body call


@attrs.frozen
class OpFault:
    """Body call `call` of `program`, alone on the values of trip `trip`, disagrees on the
    backend: `subject` is that one-node program (kind "op-alone"), `outcome` what it showed."""

    op: str
    subject: Subject
    outcome: object
    call: int
    trip: int
    program: Subject


def schema_recipe(subject):
    """The `OnnxSchemaRecipe` of a subject whose body holds schema calls, else None."""
    from ..strategies.onnx_schema import OnnxSchemaRecipe
    recipe = getattr(getattr(subject, "program", None), "recipe", None)
    return recipe if isinstance(recipe, OnnxSchemaRecipe) else None


def alone_subject(recipe, j: int, trip: int) -> Optional[Subject]:
    """Call j of `recipe` alone on the values it reads on `trip`, as a program to check;
    None where the reference kernels stop before that trip (nothing to feed it)."""
    try:
        model, feeds = recipe.alone(j, trip)
    except ValueError:
        return None
    return Subject(ALONE_KIND, "onnx", ReducedModel.of("onnx", model, feeds))


def op_fault(subjects, checker) -> Optional[OpFault]:
    """The first body call of `subjects` (schema programs; others are passed over) that
    disagrees alone on the checker's backend, on any trip its program runs (trip 0 for a
    program that runs none: the values it would read); None when every call agrees alone,
    is refused, or no subject holds schema calls."""
    seen = set()
    for subject in subjects:
        recipe = schema_recipe(subject)
        if recipe is None or repr(recipe) in seen:
            continue
        seen.add(repr(recipe))
        for j, bc in enumerate(recipe.calls):
            for trip in range(max(1, recipe.trips_run)):
                if INTERRUPTED.is_set():
                    return None
                alone = alone_subject(recipe, j, trip)
                if alone is None:
                    break
                out = checker.outcome(alone)
                if out.status != "disagree":
                    continue
                if checker.outcome(control(alone)).status == "disagree":
                    return None  # wrong without the op as well: not the op's fault
                return OpFault(bc.call.op, alone, out, j, trip, subject)
    return None


def control(alone: Subject) -> Subject:
    """The one-node program's outputs without its op: each an `Identity` of a graph input
    fed lazyloop's answer (same names, types and values). Fed, not a `Constant`: an engine
    that cannot return a constant of some dtype (IREE's 8-bit constants, IREE-11) would fail
    the control for a reason of its own and clear the op it got wrong."""
    import copy

    from onnx import helper

    from ..strategies.onnx_ops import make_model
    model = alone.model()
    expected, _, _ = alone.expectation()
    inputs, nodes, feeds = [], [], {}
    for out in model.graph.output:
        given = copy.deepcopy(out)
        given.name = f"{out.name}_value"
        inputs.append(given)
        nodes.append(helper.make_node("Identity", [given.name], [out.name]))
        feeds[given.name] = expected[out.name]
    graph = helper.make_graph(nodes, "control", inputs, list(model.graph.output))
    opset = next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
    return Subject(ALONE_KIND, "onnx", ReducedModel.of("onnx", make_model(graph, opset), feeds))
