"""`lazyloop explain`: per loop activation, which stream elements were forced, in which
order and at whose request -- bounded: the trace keeps only what is drawn (`DrawnTrace`),
and beyond `max_events` forced elements the remaining activations are summarised."""
from __future__ import annotations

import os
from collections import Counter, defaultdict

from .common import EXIT_OK, UsageError
from .evaluating import progress_while, traced
from .inputs import load_model, parse_inputs, read_case_folder


class _Activation:
    __slots__ = ("cells", "askers", "events")

    def __init__(self):
        self.cells = {}                  # (stream, index) -> order in the whole run
        self.askers = defaultdict(set)   # stream -> who asked for its elements
        self.events = 0


class DrawnTrace:
    """What `explain` draws of the forcing trace, kept while the run goes (a trace sink for
    `ll.run(trace=sink)`). Loop activations are drawn in the order they first force an
    element, until `max_events` elements are kept; a drawn activation keeps, per stream, the
    order of the elements at indices below `max_columns` and who asked for them. Everything
    else is only counted (per loop), so what is kept does not grow with the trips."""

    def __init__(self, max_columns: int = 16, max_events: int = 2000):
        self.max_columns, self.max_events = max_columns, max_events
        self.seen = 0                    # events of the whole run
        self.kept = 0                    # cells kept, over all drawn activations
        self.drawn = {}                  # (loop, activation path) -> _Activation
        self.per_loop = Counter()        # loop -> elements forced in it

    def append(self, event) -> None:
        order, self.seen = self.seen, self.seen + 1
        if event.loop is None:
            return
        self.per_loop[event.loop] += 1
        key = (event.loop, event.activation)
        act = self.drawn.get(key)
        if act is None:
            if self.kept + len(self.drawn) >= self.max_events:
                return
            act = self.drawn[key] = _Activation()
        act.events += 1
        if event.index < self.max_columns:
            act.cells[(event.stream, event.index)] = order
            self.kept += 1
        if event.by:
            act.askers[event.stream].add("the trip limits" if event.by[0].startswith("#trips:")
                                         else event.by[0])

    def __iter__(self):  # the events themselves are not kept
        return iter(())


def explain_table(evaluation, drawn: DrawnTrace, max_columns=16):
    """The forcing table of every drawn loop activation, then per loop one line saying how
    many activations and forced elements were not drawn."""
    plan = evaluation.plan
    lines = []
    for loop_name, runs in evaluation.trips.items():
        streams = [k for k, node in plan.nodes.items() if node.scope == loop_name]
        width = max([len(k) for k in streams] + [6])
        left_runs, left_events = 0, drawn.per_loop[loop_name]
        for path, n in runs:
            act = drawn.drawn.get((loop_name, path))
            if act is None:
                left_runs += 1
                continue
            left_events -= act.events
            lines += activation_table(plan, loop_name, path, n, act, streams, width,
                                      max_columns)
        if left_runs:
            lines.append(f"  ... {left_runs} more activation(s) of {loop_name} with "
                         f"{left_events} forced element(s) not drawn (--max-events)")
        lines.append("  where:")
        lines += [f"    {k} = {plan.nodes[k]!r}" for k in streams]
    if not lines:
        lines.append("no loop ran")
    return "\n".join(lines)


def activation_table(plan, loop_name, path, n, act, streams, width, max_columns):
    where = f" at outer indices {list(path)}" if path else ""
    columns = min(n + 1, max_columns)
    more = f" (first {columns} indices shown)" if n + 1 > columns else ""
    lines = [f"{plan.loops[loop_name]!r}{where}: n = {n} trips{more}",
             f"  {'stream':<{width}} {' '.join(f'{i:>5}' for i in range(columns))}"
             "   asked for by"]
    for k in streams:
        cells = " ".join(f"{'#' + str(act.cells[k, i]) if (k, i) in act.cells else '.':>5}"
                         for i in range(columns))
        askers = sorted(act.askers.get(k, ()))
        lines.append(f"  {k:<{width}} {cells}   {', '.join(askers) or '-'}")
    lines.append("  (#k: the k-th element forced in the whole run; '.': never forced)")
    return lines


def cmd_explain(args) -> int:
    """A model with its --input feeds, or a case folder with the inputs of its first data
    set."""
    model = args.model
    if os.path.isdir(model):
        if args.input:
            raise UsageError("a case folder brings its own inputs: --input does not apply")
        case = read_case_folder(model)
        data = case.data_sets[0]
        model = case.model_path
        lowered = load_model(model)
        feeds = data.inputs
        print(f"case {case.directory}: {os.path.basename(model)} with the inputs of "
              f"{data.name}\n")
    else:
        lowered = load_model(model)
        feeds = parse_inputs(args.input, lowered)
    drawn = DrawnTrace(args.max_columns, args.max_events)
    result = progress_while(f"lazyloop: evaluating {model} with its forcing trace",
                            lambda: traced(lowered, feeds, args.max_trips,
                                           args.max_seconds or None, drawn))
    print(explain_table(result, drawn, args.max_columns))
    return EXIT_OK
