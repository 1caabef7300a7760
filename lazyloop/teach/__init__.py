"""Pictures and small helpers for the teaching notebooks (notebooks/).

Nothing here is part of the semantics: these functions only *look at* networks, plans and
evaluations. They need matplotlib and networkx (the ``notebooks`` extra).

Public helpers
--------------
- ``draw_network(net)``: a loop network as a diagram: loops as (nested) boxes, boundary
  layers as coloured squares, back edges (a recurrence's next value) dashed.
- ``draw_plan(plan)`` / ``draw_plans({title: plan})``: the same picture for a compiled plan,
  which is what every dialect is lowered to (ONNX, OpenVINO and the TensorRT-style builder).
- ``geometry(net_or_plan)``: the diagram's layout without drawing it (node boxes, routed
  edges, loop and branch boxes; ``teach.diagram_check.problems`` checks it).
- ``plot_trace(evaluation)``: which elements of which streams were forced (the forcing trace of
  ``ll.run``), streams by trip, forced versus never touched, with the trip count n marked.
- ``forced(evaluation, stream)``: the indices of a stream that were forced.
- ``explore(run, params)``: sliders over a loop's parameters and its trace step (ipywidgets,
  live kernels), a static grid of forcing plots elsewhere; ``trace_grid`` is the static one.
- ``print_trace``, ``print_plan``: the trace and the plan as text.
- ``outline(plan)``: a compact text of a plan, loop by loop, for comparing lowerings.
- ``openvino_outline(model)``: an OpenVINO model's ops and its Loops' ports, as text.
- ``masked(value, defined)`` / ``plot_masked``: a value with its undefined positions shown as ``?``
  (hatched grey in every plot; ``undefined_legend(fig)`` says so once per figure).
- ``plot_sequence(values)``: a sequence over time (lines or a heat map), e.g. an LSTM's state.
- ``side_by_side({title: text})``: blocks of text in columns.
- ``show_ambiguity("A4", ...)``: entries of the ambiguity registers (core and frontends).
- ``rule_text("trip/while")``: the section of spec/ that defines a rule.
- ``check(answer, expected)``: compare a value with one computed independently.
- ``exercise("01.1", answer)``: the check of a notebook exercise: a hint naming the rule when
  the answer is wrong, never the expected value (the exercises live in ``teach.exercises``).

The helpers live in submodules (graph/layout/routing/diagram_check/draw: diagrams; plots:
matplotlib plots of traces and values; text: text views; notebook: registers, spec sections,
value checks; exercises: the notebooks' exercises; interactive: sliders) and are reachable as
``teach.NAME``. Two are imported by name: ``lazyloop.teach.campaign`` reads the reports and
case folders ``lazyloop check`` writes (notebook 7), and ``lazyloop.teach.planted`` is a
plug-in backend with two planted faults (``--backend lazyloop.teach.planted:two_faults``).
"""
from __future__ import annotations

from .draw import draw_network, draw_plan, draw_plans, geometry
from .exercises import exercise
from .interactive import explore, trace_grid
from .notebook import ExerciseNotAnswered, check, rule_text, show_ambiguity
from .plots import (forced, loop_streams, plot_masked, plot_sequence, plot_trace,
                    undefined_legend)
from .text import masked, openvino_outline, outline, print_plan, print_trace, side_by_side


__all__ = ["draw_network", "draw_plan", "draw_plans", "geometry", "plot_trace", "forced",
           "loop_streams", "print_trace", "print_plan", "outline", "openvino_outline", "masked",
           "plot_masked", "plot_sequence", "side_by_side", "show_ambiguity", "rule_text", "check",
           "exercise", "explore", "trace_grid", "ExerciseNotAnswered", "undefined_legend"]
