"""What a loop forces only in some trips: if-conditionals' branches, and what an inner loop
reads only in some of its runs (`laziness/dead`, spec/17-conditionals.md).

Element i of an if-conditional's output reads the condition's element i, then the element i
of *one* branch, chosen by the condition's value: which branch's elements are forced is not
known before the trip runs. The demand analysis (`demand.py`) splits such streams in two:

* what is forced *whichever* branch is taken -- what both branches read unconditionally, the
  *meet* of the two branches -- is demanded statically, like any other stream (a carried value
  both branches of a `lax.cond` read is forced on every trip, whichever runs);
* the rest -- a branch's own nodes, and the streams an inner loop reads only in some of its
  runs -- is *conditional*: no trip computes it ahead; its element is made when the taken
  branch (or the inner run) asks for it, within the trip, as the reference forces it.

A conditional element reads its inputs at its own index or, through a carried value, one
below: a bounded chain, unless conditional streams form a cycle through a carried value (a
value carried only inside one branch, an iteration number read only in some runs of an
inner loop). Then an element needs every earlier element of the cycle: those `chains` keep
all their elements, as the reference does, and force the missing ones from the lowest up.
`on_demand_lows` says how far below the trip any other on-demand element may read, so that
the schedule's window keeps what it reads. A chain's element is forced by `chain_step`,
from what each stream of the chain reads (`chain_reads`, derived once per demand).
"""
from __future__ import annotations

from ..plan import IfOutput, Recurrence
from ..reference.steps import entry


class NotStatic(Exception):
    """The loop's demand is not one the schedule runs exactly: the reference runs it. The
    message is the reason, as `Evaluation.paths` reports it."""


def reach(members, meets, start, depth) -> frozenset:
    """(stream, offset) pairs element j of `start` forces whatever the values: what it reads
    (`reads`), and what both branches of an if-conditional read (`meets`), transitively, at
    offsets down to -depth (a carried value reads one index lower)."""
    seen, work = set(), [(start, 0)]
    while work:
        k, off = work.pop()
        if (k, off) in seen or k not in members or off < -depth:
            continue
        seen.add((k, off))
        node = members[k]
        for ref, o in entry(node).reads(node):
            work.append((ref, off + o))
        for ref, o in meets.get(k, ()):
            work.append((ref, off + o))
    return frozenset(seen)


def branch_meets(members, depth) -> dict:
    """For each if-conditional output of the loop, the (stream, offset) pairs both of its
    branches force unconditionally: a monotone fixed point, since a branch may hold an
    if-conditional itself (and a carried value may lead back to the same one)."""
    ifs = [k for k, n in members.items() if isinstance(n, IfOutput)]
    meets = {k: frozenset() for k in ifs}
    changed = bool(ifs)
    while changed:
        changed = False
        for k in ifs:
            node = members[k]
            then, orelse = (reach(members, meets, b, depth) for b in entry(node).branches(node))
            found = tops(members, meets, then & orelse)
            if found != meets[k]:
                meets[k] = found
                changed = True
    return meets


def tops(members, meets, found) -> frozenset:
    """The pairs of `found` that no other pair of it reads (what they read follows from
    them): the meet's edges, without the chain each one implies."""
    implied = set()
    for k, off in found:
        node = members[k]
        for ref, o in list(entry(node).reads(node)) + list(meets.get(k, ())):
            implied.add((ref, off + o))
    return frozenset(p for p in found if p not in implied)


def conditional_streams(members, demanded, cond_edges, edges) -> frozenset:
    """The members forced only on demand: reached from a demanded stream through a branch or
    an inner loop's some-run read (`cond_edges`), then through any read, and not demanded
    statically themselves."""
    found, work = set(), [r for k in demanded for r, _ in cond_edges.get(k, ())]
    while work:
        k = work.pop()
        if k in found or k in demanded or k not in members:
            continue
        found.add(k)
        work.extend(r for r, _ in edges[k] + cond_edges.get(k, []))
    return frozenset(found)


def chains(conditional, cond_edges, edges) -> frozenset:
    """Conditional streams that depend on their own earlier values: the cycles among them
    (through a carried value -- the iteration number a nested loop reads only in some
    runs, a value carried only inside a branch). Forcing element k of one forces every
    earlier element of the cycle not forced yet, as the reference does; the schedule keeps
    their elements and forces them so (`Schedule.chain_step`). A cycle that reads anything
    but its own streams and invariants, or that holds a branch, is `NotStatic`."""
    def successors(k):
        return [r for r, _ in edges[k] + cond_edges.get(k, []) if r in conditional]
    found = set()
    for component in cycles(conditional, successors):
        for k in component:
            if cond_edges.get(k) or any(r in edges and r not in component for r, _ in edges[k]):
                raise NotStatic(f"stream {k!r}, forced only in some trips, depends on its "
                                "own earlier values and on other streams of the loop")
        found |= component
    return frozenset(found)


def cycles(nodes, successors) -> list:
    """The strongly connected components of more than one node, or of one node that reads
    itself (Tarjan's algorithm, iteratively)."""
    index, low, on_stack, stack, found, counter = {}, {}, set(), [], [], [0]
    for root in sorted(nodes):
        if root in index:
            continue
        work = [(root, iter(successors(root)))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            k, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter[0]
                    counter[0] += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(successors(nxt))))
                elif nxt in on_stack:
                    low[k] = min(low[k], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[k])
            if low[k] == index[k]:
                component = set()
                while True:
                    x = stack.pop()
                    on_stack.discard(x)
                    component.add(x)
                    if x == k:
                        break
                if len(component) > 1 or k in successors(k):
                    found.append(frozenset(component))
    return found


def on_demand_lows(origins, made, cond_edges, edges, depth, kept=frozenset()) -> dict:
    """How far below the trip an element may be read on demand, per stream. `origins` gives,
    for each statically demanded stream, the lowest index relative to the trip at which it is
    made (by the phases, or as a point demand once the loop stopped); `made`, for those the
    phases make trip by trip, the index relative to the trip up to which they are made. A
    conditional read starts at its reader's index and goes down by the offsets it reads at;
    a read well below what the phases made finds the element kept (the window keeps it), any
    other makes it now, and what it reads in turn. Streams whose elements are all kept
    (`kept`, the chains) are not followed. Deeper than `depth` is `NotStatic`."""
    low = {}
    work = [(r, at + o) for k, at in origins.items() for r, o in cond_edges.get(k, ())]
    while work:
        k, at = work.pop()
        if k not in edges or k in kept or (k in low and low[k] <= at):
            continue
        if at < -depth:
            raise NotStatic(f"stream {k!r} is read on demand too far below the trip")
        low[k] = at
        if k in made and at < made[k] - 1:
            continue  # made by the phases in an earlier trip: kept in the window
        work.extend((r, at + o) for r, o in edges[k] + cond_edges.get(k, []))
    return low


def chain_reads(demand) -> dict:
    """Chain stream -> (offset, below): the (stream of the chain, offset) pairs its element j
    reads -- a carried value its next value at j - 1, for j > 0 (`below` 1); another stream
    what its kind's `reads` says, at any j -- derived once per demand."""
    key = ("chain reads", demand.key)
    derived = demand.plan.derived
    found = derived.get(key)
    if found is None:
        chain, found = demand.chains, {}
        for x in chain:
            node = demand.members[x]
            if isinstance(node, Recurrence):
                pairs, below = [(node.next, -1)], 1
            else:
                pairs, below = entry(node).reads(node), 0
            found[x] = (tuple((r, o) for r, o in pairs if r in chain), below)
        derived[key] = found
    return found


def chain_step(schedule, nid, step):
    """Element k of a chain (`branches.chains`, a cycle of streams forced only on
    demand): the elements of the cycle it needs and no trip made yet are forced first,
    from the deepest up, on an explicit stack (`stream/order`), as the reference forces
    them; then its own, by its step."""
    memo, reads, raw = schedule.memo, chain_reads(schedule.d), schedule.raw

    def compute(k):
        work = [(nid, k)]
        while work:
            x, j = work[-1]
            if j in memo[x]:
                work.pop()
                continue
            pairs, below = reads[x]
            missing = [(r, j + o) for r, o in pairs if j + o not in memo[r]] if j >= below \
                else None
            if missing:
                work.extend(missing)
                continue
            work.pop()
            (step if x == nid else raw[x])(j)
        return memo[nid][k]
    return compute
