"""`lazyloop explain`: per loop activation, which stream elements were forced, in which
order and at whose request -- bounded: beyond `max_events` forced elements the remaining
activations are summarised, not drawn."""
from __future__ import annotations

from collections import defaultdict

from .common import EXIT_OK
from .evaluating import progress_while, traced
from .inputs import load_model, parse_inputs


def explain_table(evaluation, max_columns=16, max_events=2000):
    """The forcing table of every loop activation until `max_events` forced elements have
    been shown; then one line per loop saying how many activations and elements are left."""
    plan = evaluation.plan
    lines = []
    by_run = defaultdict(list)
    for order, event in enumerate(evaluation.trace):
        if event.loop is not None:
            by_run[(event.loop, event.activation)].append((order, event))
    shown = 0
    for loop_name, runs in evaluation.trips.items():
        streams = [k for k, node in plan.nodes.items() if node.scope == loop_name]
        width = max([len(k) for k in streams] + [6])
        left_runs = left_events = 0
        for path, n in runs:
            events = by_run.get((loop_name, path), [])
            if shown >= max_events:
                left_runs += 1
                left_events += len(events)
                continue
            shown += len(events)
            lines += activation_table(plan, loop_name, path, n, events, streams, width,
                                      max_columns)
        if left_runs:
            lines.append(f"  ... {left_runs} more activation(s) of {loop_name} with "
                         f"{left_events} forced element(s) not drawn (--max-events)")
        lines.append("  where:")
        lines += [f"    {k} = {plan.nodes[k]!r}" for k in streams]
    if not lines:
        lines.append("no loop ran")
    return "\n".join(lines)


def activation_table(plan, loop_name, path, n, events, streams, width, max_columns):
    where = f" at outer indices {list(path)}" if path else ""
    columns = min(n + 1, max_columns)
    more = f" (first {columns} indices shown)" if n + 1 > columns else ""
    lines = [f"{plan.loops[loop_name]!r}{where}: n = {n} trips{more}",
             f"  {'stream':<{width}} {' '.join(f'{i:>5}' for i in range(columns))}"
             "   asked for by"]
    for k in streams:
        forced = {e.index: order for order, e in events if e.stream == k}
        cells = " ".join(f"{'#' + str(forced[i]) if i in forced else '.':>5}"
                         for i in range(columns))
        askers = sorted({"the trip limits" if e.by[0].startswith("#trips:") else e.by[0]
                         for _, e in events if e.stream == k and e.by})
        lines.append(f"  {k:<{width}} {cells}   {', '.join(askers) or '-'}")
    lines.append("  (#k: the k-th element forced in the whole run; '.': never forced)")
    return lines


def cmd_explain(args) -> int:
    lowered = load_model(args.model)
    feeds = parse_inputs(args.input, lowered)
    result = progress_while(f"lazyloop: evaluating {args.model} with its forcing trace",
                            lambda: traced(lowered, feeds, args.max_trips,
                                           args.max_seconds or None))
    print(explain_table(result, args.max_columns, args.max_events))
    return EXIT_OK
