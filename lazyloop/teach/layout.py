"""Where each node of a diagram goes: columns by data-flow depth, one band of rows per loop
(nested loops inside their parent's band), then a pass that reduces edge crossings."""
from __future__ import annotations

from .graph import _Graph

# ------------------------------------------------------------------------------------------
# Layout: columns by data-flow depth, nested horizontal bands by loop
# ------------------------------------------------------------------------------------------

def _layout(g: _Graph):
    """Positions for the nodes and rectangles for the loops.

    Columns follow the longest path from a source, back edges left out (they are the only
    cycles, `structure/acyclic`). Every loop gets a horizontal band of rows; a nested loop's
    band lies inside its parent's, so loop boxes nest and never cover a node of another scope.
    """
    import networkx as nx

    dag = nx.DiGraph()
    dag.add_nodes_from(g.nodes)
    dag.add_edges_from((a, b) for a, b, back in g.edges if not back)
    if not nx.is_directed_acyclic_graph(dag):  # a rejected network may have a cycle
        dag = nx.DiGraph(nx.bfs_tree(dag.to_undirected(), next(iter(g.nodes)))) if g.nodes else dag
        dag.add_nodes_from(g.nodes)
    order = list(nx.topological_sort(dag))
    column, lower = {}, {}
    for _ in range(2 + len(g.parents)):  # loop outputs sit right of everything in their loop
        for nid in order:
            preds = list(dag.predecessors(nid))
            column[nid] = max(1 + max((column[p] for p in preds), default=-1), lower.get(nid, 0))
        changed = False
        for nid, (_, kind, box) in g.nodes.items():
            if kind == "loop_output" and box is not None:
                inside = [column[m] for m, (_, k, b) in g.nodes.items()
                          if k != "loop_output" and _within(b, box, g.parents)]
                want = 1 + max(inside, default=-1)
                if want > lower.get(nid, 0):
                    lower[nid] = want
                    changed = True
        if not changed:
            break
    # constants and inputs sit just before their first reader
    for nid, (_, kind, _) in g.nodes.items():
        succ = [column[s] for s in dag.successors(nid)]
        if kind in ("constant", "input") and succ:
            column[nid] = max(column[nid], min(succ) - 1)

    children = {None: []}
    for loop in g.parents:
        children.setdefault(loop, [])
    for loop, parent in g.parents.items():
        children.setdefault(parent, []).append(loop)
    members = {}
    for nid, (_, _, box) in g.nodes.items():
        members.setdefault(box if box in children else None, []).append(nid)

    pos, boxes, row = {}, {}, [0.0]
    with_back_edges = {g.nodes[b][2] for a, b, back in g.edges if back}

    def depth_below(scope):
        return 1 + max((depth_below(c) for c in children.get(scope, [])), default=0)

    def place(scope, level):
        top = row[0]
        if scope is not None:
            row[0] += 0.55  # room for the loop's title
        mine = members.get(scope, [])
        by_column = {}
        for nid in sorted(mine, key=lambda n: (column[n], str(n))):
            by_column.setdefault(column[nid], []).append(nid)
        height = max((len(v) for v in by_column.values()), default=0)
        for col, nids in by_column.items():
            for k, nid in enumerate(nids):
                pos[nid] = (col * 1.7, -(row[0] + k + (height - len(nids)) / 2.0))
        row[0] += height
        for child in children.get(scope, []):
            row[0] += 0.35
            place(child, level + 1)
            row[0] += 0.35
        if scope in with_back_edges:
            row[0] += 0.6  # room for the back edges, drawn underneath the loop's layers
        if scope is not None:
            inner = _subtree_nodes(scope, children, members)
            cols = [column[n] for n in inner] or [0]
            pad = 0.55 + 0.18 * (depth_below(scope) - 1)
            boxes[scope] = (min(cols) * 1.7 - pad, -(row[0] - 0.5 + 0.05),
                            (max(cols) - min(cols)) * 1.7 + 2 * pad, row[0] - top + 0.1, level)

    place(None, 0)
    _untangle(g, pos, column, members)
    return pos, boxes


def _untangle(g: _Graph, pos, column, members, rounds: int = 3):
    """Reorder the nodes that share a column and a band by the mean height of their
    neighbours (the barycentre heuristic), so that fewer edges cross."""
    neighbours = {n: [] for n in g.nodes}
    for a, b, back in g.edges:
        if not back:
            neighbours[a].append(b)
            neighbours[b].append(a)
    groups = {}
    for scope, nids in members.items():
        for nid in nids:
            groups.setdefault((scope, column[nid]), []).append(nid)
    for _ in range(rounds):
        for nids in groups.values():
            if len(nids) < 2:
                continue
            slots = sorted(pos[n][1] for n in nids)[::-1]
            def centre(n):
                ys = [pos[m][1] for m in neighbours[n]]
                return -(sum(ys) / len(ys)) if ys else 0.0
            for nid, y in zip(sorted(nids, key=centre), slots):
                pos[nid] = (pos[nid][0], y)


def _within(scope, loop, parents) -> bool:
    """True when `scope` is `loop` or a loop nested in it."""
    seen = set()
    while scope is not None and scope not in seen:
        if scope == loop:
            return True
        seen.add(scope)
        scope = parents.get(scope)
    return False


def _subtree_nodes(scope, children, members):
    out = list(members.get(scope, []))
    for c in children.get(scope, []):
        out += _subtree_nodes(c, children, members)
    return out
