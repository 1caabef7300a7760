"""The step table: for each kind of plan node, one entry saying how its element i is made.

An entry states, in one place, everything every evaluator needs to know about its kind:

* `reads(node)` -- the streams of its own loop its element i reads, as (node id, offset):
  element i + offset (a map reads its arguments at i, a recurrence its next value at i - 1).
  The engine's demand analysis and read-only marking follow these edges;
* `branches(node)` -- the streams of which element i reads exactly *one*, chosen by what
  it reads (an if-conditional's two branches, at i): the demand analysis forces them on
  demand, never ahead;
* `indexed` -- whether element i depends on i itself, not only on the elements it reads
  (an iterator's slice i): a loop forcing such a stream never reaches a fixed point;
* `force(m, node, act, i)` -- the reference: a generator that `yield`s each element it
  needs, as (node id, activation, index), to the machine `m` that drives it, and returns
  the element, made by the rule functions of `rules.py`;
* `step(s, node, finish)` -- the engine's per-trip step, or None for a kind the schedule
  does not run: a function k -> element k, bound once per run of a loop, reading its inputs
  through the schedule `s` (`s.reader(ref)`: k -> element k of ref; `s.invariant_reader`,
  `s.invariant`, `s.inner_element`, and `s.masked`, whether elements may be undefined) and
  storing through `finish(k, value)`;
* `emit(e, depth, c, node, level, low)` -- the same step as Python text, for the engine's
  compiled trips (`e` writes it: `e.read(depth, ref, index, target, level)` and
  `e.emit(depth, line)`), leaving element j<level> in v<level>.

The three forms of an entry compute the same value by the same rule functions; on defined
values a map's element is its kernel's value (`rules.map_element` without masks), which the
engine calls directly. The law that they agree is checked on generated programs in every
mode (`tests/test_modes.py`). A new kind of node is one entry here, its plan node, and its
tests.
"""
from __future__ import annotations

from ..errors import LazyLoopError
from ..fuel import CLOCK_EVERY
from ..plan import Const, IfOutput, Input, Iterator, LoopOut, Map, Project, Recurrence, Undefined
from . import rules
from .rules import Trips


class Step:
    """An entry of the table (the defaults: reads nothing of its own loop, not scheduled)."""

    indexed = False

    def reads(self, node):
        return ()

    def branches(self, node):
        return ()

    def force(self, m, node, act, i):  # pragma: no cover -- every kind defines it
        raise NotImplementedError

    step = None
    emit = None


class InputStep(Step):
    """A network input: the value fed (`stream/shape`, checked when fed)."""

    def force(self, m, node, act, i):
        return m.feeds[node.id]
        yield  # pragma: no cover -- makes this a generator


class ConstStep(Step):
    def force(self, m, node, act, i):
        return node.value
        yield  # pragma: no cover


class UndefinedStep(Step):
    """A3: a value no source defines."""

    def force(self, m, node, act, i):
        return rules.undefined_element(node, m.readings["A3"])
        yield  # pragma: no cover


class MapStep(Step):
    """`stream/map`: element i of every argument, then the kernel."""

    def reads(self, node):
        return tuple((a, 0) for a in node.args if a is not None)

    def force(self, m, node, act, i):
        args = []
        for ref in node.args:
            args.append(None if ref is None else (yield (ref, act, i)))
        try:
            return rules.map_element(node, args)
        except LazyLoopError:
            raise
        except Exception as exc:  # a kernel refused its element: name it, do not leak it
            raise rules.kernel_refused(node, i, exc) from None

    def step(self, s, node, finish):
        readers = [s.reader(a) for a in node.args]
        if s.masked:  # arguments may be undefined: the rule's masks
            def apply(k):
                return rules.map_element(node, [r(k) for r in readers])
        elif len(readers) == 1:  # defined arguments: the kernel's value itself
            fn, (r0,) = node.fn, readers
            apply = lambda k: fn(r0(k))  # noqa: E731
        elif len(readers) == 2:
            fn, (r0, r1) = node.fn, readers
            apply = lambda k: fn(r0(k), r1(k))  # noqa: E731
        else:
            fn = node.fn
            apply = lambda k: fn(*[r(k) for r in readers])  # noqa: E731
        return guarded(node, apply, finish)

    def emit(self, e, depth, c, node, level, low=0):
        names = [f"a{level}_{p}" for p in range(len(node.args))]
        for name, ref in zip(names, node.args):
            e.read(depth, ref, f"j{level}", name, level)
        e.emit(depth, f"v{level} = f{c}({', '.join(names)})")


def guarded(node, apply, finish):
    """A map's step: element k is `finish(k, apply(k))`, and a kernel that raises is named
    as `MapStep.force` names it (`stream/map`)."""
    def compute(k):
        try:
            value = apply(k)
        except LazyLoopError:
            raise
        except Exception as exc:
            raise rules.kernel_refused(node, k, exc) from None
        return finish(k, value)
    return compute


class ProjectStep(Step):
    """Output k of a kernel with several outputs: element i of the call, its part k."""

    def reads(self, node):
        return ((node.call, 0),)

    def force(self, m, node, act, i):
        whole = yield (node.call, act, i)
        return whole[node.k]

    def step(self, s, node, finish):
        call, part = s.reader(node.call), node.k

        def compute(k):
            return finish(k, call(k)[part])
        return compute

    def emit(self, e, depth, c, node, level, low=0):
        e.read(depth, node.call, f"j{level}", f"v{level}", level)
        e.emit(depth, f"v{level} = v{level}[{node.k}]")


class IteratorStep(Step):
    """`iterator/forward`, `iterator/reverse`, `iterator/bounds`: the iterated tensor (an
    invariant), then its slice (A2 "api-reference": the index from the COUNT)."""

    indexed = True

    def force(self, m, node, act, i):
        whole = yield (node.source, act, i)
        index = None
        if node.reverse and m.readings["A2"] == "api-reference":
            loop = m.plan.loops[act.loop]
            count = None if loop.count is None else (
                yield (loop.count, act.parent, act.index))
            index = rules.index_by_count(node, loop, count, i)
        return rules.iterator_element(node, whole, i, index)

    def step(self, s, node, finish):
        whole, element = s.invariant_reader(node.source), rules.iterator_element

        def compute(k):
            return finish(k, element(node, whole(k), k))
        return compute

    def emit(self, e, depth, c, node, level, low=0):
        e.read(depth, node.source, "0", f"w{level}", level)  # the invariant
        e.emit(depth, f"v{level} = ITERATE(N[{c}], w{level}, j{level})")


class RecurrenceStep(Step):
    """`recurrence/def`: <X, Y0, Y1, ...> -- element 0 is the initial value, read where the
    loop runs; element i + 1 is element i of the next value."""

    def reads(self, node):
        return ((node.next, -1),)

    def force(self, m, node, act, i):
        if i == 0:
            return (yield (node.init, act.parent, act.index))
        return (yield (node.next, act, i - 1))

    def step(self, s, node, finish):
        init, nxt = s.invariant_reader(node.init), s.reader(node.next)

        def compute(k):
            return finish(k, init(k) if k == 0 else nxt(k - 1))
        return compute

    def emit(self, e, depth, c, node, level, low=0):
        j, v = f"j{level}", f"v{level}"
        if low >= 1:  # never element 0 here
            e.read(depth, node.next, f"{j} - 1", v, level)
            return
        e.emit(depth, f"if {j} == 0:")
        e.read(depth + 1, node.init, "0", v, level)
        e.emit(depth, "else:")
        e.read(depth + 1, node.next, f"{j} - 1", v, level)


class LoopOutStep(Step):
    """`output/last`, `output/concat`, `output/reverse`: the run of the loop for this
    element of the enclosing scope (`structure/nesting`), made by the machine's
    `loop_output` -- the reference's reading, or the engine's schedule."""

    def force(self, m, node, act, i):
        return (yield from m.loop_output(node, act, i))

    def step(self, s, node, finish):
        inner = s.inner_element

        def compute(k):
            return finish(k, inner(node, k))
        return compute

    def emit(self, e, depth, c, node, level, low=0):
        e.emit(depth, f"v{level} = INNER(N[{c}], j{level})")


class IfStep(Step):
    """An if-conditional's output: the condition's element, then only the taken branch's
    (`laziness/dead`). An undefined condition takes neither branch where the type is static:
    the element is wholly undefined (else the raw value's branch, wholly undefined)."""

    def reads(self, node):
        return ((node.cond, 0),)

    def branches(self, node):
        return (node.then, node.orelse)

    def force(self, m, node, act, i):
        c = yield (node.cond, act, i)
        then, defined = rules.condition_of(c)
        if not defined and rules.static_type(node):
            return rules.undefined_branch(node)
        taken = yield ((node.then if then else node.orelse), act, i)
        return taken if defined else rules.undefined_branch(node, taken)

    def step(self, s, node, finish):
        cond, then, orelse = s.reader(node.cond), s.reader(node.then), s.reader(node.orelse)
        if s.masked:  # the condition may be undefined: as `force` reads it
            def compute(k):
                return finish(k, rules.if_element(node, cond(k), lambda ref: (
                    then if ref == node.then else orelse)(k)))
            return compute

        def compute(k):  # a defined condition: a bool of one element
            return finish(k, then(k) if cond(k) else orelse(k))
        return compute

    def emit(self, e, depth, c, node, level, low=0):
        j, v = f"j{level}", f"v{level}"
        e.read(depth, node.cond, j, v, level)
        e.emit(depth, f"if {v}:")
        e.read(depth + 1, node.then, j, v, level)
        e.emit(depth, "else:")
        e.read(depth + 1, node.orelse, j, v, level)


class TripsStep(Step):
    """`trip/count`, `trip/while`, `trip/both`: the trip count n of one run of a loop --
    iterate j = 0, 1, ...: stop at the count, else force the WHILE input's element j and
    stop when it is false. With both limits the count is looked at first (A40
    "count-first"); A40 "condition-first" forces the WHILE input's element j before it
    looks at the count, element `count` included. The fuel refuses a loop still running
    after `max_trips` trips."""

    def force(self, m, node, act, i):
        loop = m.plan.loops[node.loop]
        count = None
        if loop.count is not None:
            c = yield (loop.count, act.parent, act.index)
            count = rules.count_limit(loop, c, m.readings["A4"], m.plan.profile)
        m.fuel.before_first_trip(loop, count)
        condition_first = m.readings["A40"] == "condition-first"
        j = 0
        while True:
            if count is not None and j >= count and not condition_first:
                break
            if loop.while_ is not None:
                if not rules.while_holds(loop, j, (yield (loop.while_, act, j))):
                    break
            if count is not None and j >= count:
                break
            if j >= m.max_trips:
                raise m.fuel.exhausted(loop, count)
            j += 1
            if not j % CLOCK_EVERY:
                m.fuel.check_clock(loop, count, j)
        m.ran(loop.name, act.path, j)
        if m.readings["A10"] == "eager":  # every stream of the loop on every trip that ran
            yield from m.force_everything(loop.name, act, j)
        return j


STEPS = {Input: InputStep(), Const: ConstStep(), Undefined: UndefinedStep(), Map: MapStep(),
         Project: ProjectStep(), Iterator: IteratorStep(), Recurrence: RecurrenceStep(),
         LoopOut: LoopOutStep(), IfOutput: IfStep(), Trips: TripsStep()}


def entry(node) -> Step:
    """The table's entry for a node's kind."""
    return STEPS[type(node)]
