"""README, "Layout": no import circles. The import graph of `lazyloop/` is read from the
source (`imports.graph`: imports inside functions count, relative imports resolved, `import
a.b` is an edge to `a.b`) and must have no circle -- between modules, nor between the
packages of `lazyloop/` (`lazyloop.cli` and `lazyloop.bench` are two packages), nor between
the parts of the core (`lazyloop.core.reference` and `lazyloop.core.engine`)."""
import pytest

from imports import graph


def circles(edges) -> list:
    """The strongly connected components of more than one node (Tarjan, iteratively), each
    as a circle of its members in an order the edges follow."""
    index, low, on, stack, found = {}, {}, set(), [], []
    for root in edges:
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(walk(edges, set(component)))
    return found


def walk(edges, members) -> list:
    """A circle through the members of one component, as a list a -> b -> ... -> a."""
    start = min(members)
    path, seen = [start], {start}
    node = start
    while True:
        nxt = sorted(m for m in edges.get(node, ()) if m in members)
        back = [m for m in nxt if m == start]
        if back and len(path) > 1:
            return path + [start]
        fresh = [m for m in nxt if m not in seen]
        if not fresh:
            return path + [nxt[0]]
        node = fresh[0]
        path.append(node)
        seen.add(node)


def collapsed(edges, depth) -> dict:
    """The graph of packages: each module named by its first `depth` parts."""
    def name(module):
        return ".".join(module.split(".")[:depth])
    out = {}
    for module, targets in edges.items():
        out.setdefault(name(module), set()).update(
            name(t) for t in targets if name(t) != name(module))
    return out


def test_the_detector_names_a_circle():
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert circles(edges) == [["a", "b", "c", "a"]]
    assert circles({"a": {"b"}, "b": set()}) == []


@pytest.mark.parametrize("level", ["modules", "packages", "core parts"])
def test_no_import_circles(level):
    edges = graph()
    if level == "packages":
        edges = collapsed(edges, 2)
    elif level == "core parts":
        edges = collapsed({m: t for m, t in edges.items() if m.startswith("lazyloop.core.")}, 3)
    found = circles(edges)
    assert found == [], "import circles: " + "; ".join(" -> ".join(c) for c in found)
