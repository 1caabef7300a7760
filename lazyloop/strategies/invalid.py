"""Invalid programs: for each structure rule (and a few runtime rules) a family of small
programs that break it in named ways, registered in `FAMILIES`, and the strategies
`invalid_programs()` and `invalid_networks()` that draw them."""
from __future__ import annotations

from typing import Optional, Tuple

import attrs
import numpy as np
from hypothesis import strategies as st

from .programs import InvalidProgram, Member, Ref
from .writer import FLOAT, INT, Value, Writer


@attrs.frozen
class Handles:
    """A loop of a broken program: its name, scope, input, iterator, recurrence, trips."""
    ref: str
    scope: Tuple[str, ...]
    x: Value
    it: Value
    rec: Optional[Value]
    n: int


class Broken:
    """The scaffolding of small programs around one loop, to be broken in one named way:
    loops with an iterator and a recurrence, their outputs, a loop nested in one, a WHILE
    counter -- written through `w`, the program's `Writer`."""

    def __init__(self, w: Writer):
        self.w = w

    def loop(self, n: int, shape=(2,), limit="count", reverse=False):
        """A loop over a fresh input with a float recurrence; returns its handles."""
        ref = self.w.call("network", "add_loop", result="loop")
        scope = (ref,)
        x = self.w.input((max(n, 1),) + tuple(shape))
        if limit == "count":
            self.w.call(ref, "add_trip_limit", Ref(self.w.int_constant(n).ref),
                      Member(("TripLimit", "COUNT")), result=None)
        it = self.w.layer("add_iterator", Ref(x.ref), target=ref, axis=0, reverse=reverse,
                        dtype=FLOAT, shape=shape, scope=scope, kind="iterator")
        init = self.w.constant(np.zeros(shape, np.float32))
        rec = self.w.layer("add_recurrence", Ref(init.ref), target=ref, dtype=FLOAT,
                         shape=shape, scope=scope, kind="recurrence")
        return Handles(ref, scope, x, it, rec, n)

    def close(self, h, nxt=None):
        nxt = nxt or self.w.tanh(self.w.elementwise(h.rec, h.it, "SUM"))
        self.w.call(h.rec.layer, "set_input", 1, Ref(nxt.ref), result=None)
        return nxt

    def output(self, h, value, kind="CONCATENATE", length=None):
        args = (Ref(value.ref), Member(("LoopOutput", kind)))
        if kind != "LAST_VALUE":
            args += (0,)
        out = self.w.layer("add_loop_output", *args, target=h.ref, dtype=value.dtype,
                         shape=value.shape, scope=(), kind="loop-output")
        if kind != "LAST_VALUE":
            length = self.w.int_constant(h.n) if length is None else length
            if length != "unset":
                self.w.call(out.layer, "set_input", 1, Ref(length.ref), result=None)
        return out

    def inner(self, h):
        """A loop nested in `h`: one trip over `h`'s iterator element (a boundary layer reads
        a stream of `h`, so the nesting is plain)."""
        ref = self.w.call("network", "add_loop", result="loop")
        self.w.call(ref, "add_trip_limit", Ref(self.w.int_constant(1).ref),
                  Member(("TripLimit", "COUNT")), result=None)
        scope = h.scope + (ref,)
        it = self.w.layer("add_iterator", Ref(h.it.ref), target=ref, axis=0, reverse=False,
                        dtype=FLOAT, shape=(), scope=scope, kind="iterator")
        return attrs.evolve(h, ref=ref, scope=scope, it=it, rec=None, n=1)

    def counter_while(self, h, bound):
        c = self.w.layer("add_recurrence", Ref(self.w.int_constant(0).ref), target=h.ref,
                       dtype=INT, shape=(), scope=h.scope, kind="counter")
        self.w.call(c.layer, "set_input", 1,
                  Ref(self.w.elementwise(c, self.w.int_constant(1), "SUM").ref), result=None)
        cond = self.w.elementwise(c, self.w.int_constant(bound), "LESS")
        return c, cond

    def broken(self, rule, variant) -> InvalidProgram:
        """The program written so far, as the one breaking `rule` in the way `variant`."""
        return InvalidProgram(tuple(self.w.steps), tuple(self.w.inputs), rule, variant)


def _family(rule):
    """Register a composite strategy for `rule`: `fn(draw, w, s)` writes a program through
    the writer `w` and the scaffolding `s` and returns the variant's name."""
    def wrap(fn):
        @st.composite
        def strategy(draw):
            s = Broken(Writer(draw))
            variant = fn(draw, s.w, s)
            return s.broken(rule, variant)
        strategy.__name__ = strategy.__qualname__ = fn.__name__
        FAMILIES[rule] = strategy
        return strategy
    return wrap


FAMILIES = {}
small_trips = st.integers(1, 3)


@_family("structure/acyclic")
def acyclic_breaks(draw, w: Writer, s: Broken):
    """A layer's input set, after the fact, to a layer downstream of it: a cycle that is not
    a recurrence's input 1."""
    h = s.loop(draw(small_trips))
    first = w.elementwise(h.it, h.it, "SUM")
    last = first
    length = draw(st.integers(0, 2))  # 0: the layer reads its own output
    for _ in range(length):
        last = w.tanh(last)
    s.close(h)
    w.call(first.layer, "set_input", 1, Ref(last.ref), result=None)
    w.mark(s.output(h, last))
    return "self-loop" if length == 0 else f"cycle of {length + 1} layers"


@_family("structure/exit")
def exit_breaks(draw, w: Writer, s: Broken):
    """Data leaving a loop other than through its loop output layers."""
    h = s.loop(draw(small_trips))
    s.close(h)
    variant = draw(st.sampled_from(["mark-stream", "mix-with-outside", "loop-in-loop-marked"]))
    if variant == "mark-stream":
        w.mark(h.it)
    elif variant == "mix-with-outside":
        w.mark(w.elementwise(h.it, w.constant(np.ones((2,), np.float32)), "SUM"))
    else:
        # a loop iterating over the first one's stream is nested in it; marking its output
        # takes a stream of the first loop out of it
        hi = s.inner(h)
        w.mark(s.output(hi, hi.it))
    return variant


@_family("structure/limits")
def limits_breaks(draw, w: Writer, s: Broken):
    variant = draw(st.sampled_from(["no-limit", "two-counts", "two-whiles"]))
    h = s.loop(draw(small_trips), limit="none" if variant != "two-counts" else "count")
    s.close(h)
    if variant == "two-counts":
        w.call(h.ref, "add_trip_limit", Ref(w.int_constant(1).ref),
               Member(("TripLimit", "COUNT")), result=None)
    elif variant == "two-whiles":
        for bound in (h.n, h.n + 1):
            _, cond = s.counter_while(h, bound)
            w.call(h.ref, "add_trip_limit", Ref(cond.ref), Member(("TripLimit", "WHILE")),
                   result=None)
    w.mark(s.output(h, h.rec, "LAST_VALUE"))
    return variant


@_family("structure/recurrence")
def recurrence_breaks(draw, w: Writer, s: Broken):
    variant = draw(st.sampled_from(["next-unset", "init-from-inside", "next-from-outside"]))
    h = s.loop(draw(small_trips))
    if variant == "next-unset":
        pass
    elif variant == "init-from-inside":
        s.close(h)
        bad = w.layer("add_recurrence", Ref(h.it.ref), target=h.ref, dtype=FLOAT, shape=(2,),
                      scope=h.scope)
        s.close(attrs.evolve(h, rec=bad))
    else:
        s.close(h, w.constant(np.ones((2,), np.float32)))
    w.mark(s.output(h, h.rec, "LAST_VALUE"))
    return variant


@_family("structure/while-input")
def while_input_breaks(draw, w: Writer, s: Broken):
    variant = draw(st.sampled_from(["from-iterator", "from-outer-recurrence",
                                    "from-loop-output"]))
    n = draw(small_trips)
    if variant == "from-iterator":
        h = s.loop(n, limit="none")
        s.close(h)
        cond = w.elementwise(w.reduce_all(h.it), w.constant(np.zeros((), np.float32)),
                             "GREATER")
        w.call(h.ref, "add_trip_limit", Ref(cond.ref), Member(("TripLimit", "WHILE")),
               result=None)
        w.mark(s.output(h, h.rec, "LAST_VALUE"))
        return variant
    h = s.loop(n)
    s.close(h)
    c, cond = s.counter_while(h, n)  # a recurrence of the outer loop
    hi = s.inner(h)
    if variant == "from-outer-recurrence":
        w.call(hi.ref, "add_trip_limit", Ref(cond.ref), Member(("TripLimit", "WHILE")),
               result=None)
        w.mark(s.output(h, s.output(hi, hi.it)))
    else:
        # outer WHILE on the last value of an inner loop
        ic = w.layer("add_recurrence", Ref(c.ref), target=hi.ref, dtype=INT, shape=(),
                     scope=hi.scope)
        w.call(ic.layer, "set_input", 1, Ref(w.elementwise(ic, w.int_constant(1), "SUM").ref),
               result=None)
        last = s.output(hi, ic, "LAST_VALUE")
        cond2 = w.elementwise(last, w.int_constant(n + 1), "LESS")
        w.call(h.ref, "add_trip_limit", Ref(cond2.ref), Member(("TripLimit", "WHILE")),
               result=None)
        w.mark(s.output(h, h.rec, "LAST_VALUE"))
    return variant


@_family("structure/last-value")
def last_value_breaks(draw, w: Writer, s: Broken):
    variant = draw(st.sampled_from(["of-iterator", "of-map", "of-outer-recurrence"]))
    h = s.loop(draw(small_trips))
    nxt = s.close(h)
    if variant == "of-iterator":
        w.mark(s.output(h, h.it, "LAST_VALUE"))
    elif variant == "of-map":
        w.mark(s.output(h, nxt, "LAST_VALUE"))
    else:
        hi = s.inner(h)
        w.mark(s.output(h, s.output(hi, h.rec, "LAST_VALUE")))
    return variant


@_family("structure/length")
def length_breaks(draw, w: Writer, s: Broken):
    variant = draw(st.sampled_from(["unset", "not-constant", "float", "not-0d",
                                    "from-inside"]))
    h = s.loop(draw(small_trips))
    s.close(h)
    if variant == "unset":
        length = "unset"
    elif variant == "not-constant":
        length = w.input((), INT, np.array(h.n, np.int32))
    elif variant == "float":
        length = w.constant(np.array(h.n, np.float32))
    elif variant == "not-0d":
        length = w.constant(np.array([h.n, h.n], np.int32))
    else:
        c, _ = s.counter_while(h, h.n)
        length = c
    w.mark(s.output(h, h.it, length=length))
    return variant


@_family("structure/nesting")
def nesting_breaks(draw, w: Writer, s: Broken):
    """Two loops, each using a value defined inside the other."""
    variant = draw(st.sampled_from(["both-outputs", "mutual-inits", "back-edge-from-inner"]))
    a = s.loop(draw(small_trips))
    s.close(a)
    if variant == "back-edge-from-inner":
        # b iterates over a's stream; a's recurrence takes its next value from b's stream
        b = s.inner(a)
        rec = w.layer("add_recurrence", Ref(w.constant(np.zeros((), np.float32)).ref),
                      target=a.ref, dtype=FLOAT, shape=(), scope=a.scope)
        w.call(rec.layer, "set_input", 1, Ref(w.tanh(b.it).ref), result=None)
        w.mark(s.output(a, rec, "LAST_VALUE"))
        return variant
    b = s.loop(draw(small_trips))
    s.close(b)
    if variant == "both-outputs":
        # a layer reading both loops' streams, collected by both loops
        mixed = w.elementwise(a.it, b.it, "SUM")
        w.mark(s.output(a, mixed))
        w.mark(s.output(b, mixed))
        return variant
    # each loop carries in the other's iterator as a recurrence's initial value
    for this, other in ((a, b), (b, a)):
        rec = w.layer("add_recurrence", Ref(other.it.ref), target=this.ref, dtype=FLOAT,
                      shape=(2,), scope=this.scope)
        w.call(rec.layer, "set_input", 1, Ref(w.tanh(rec).ref), result=None)
        w.mark(s.output(this, rec, "LAST_VALUE"))
    return variant


@_family("recurrence/def")
def recurrence_def_breaks(draw, w: Writer, s: Broken):
    """A recurrence whose next value differs from its initial value in shape or dtype."""
    variant = draw(st.sampled_from(["shape", "dtype"]))
    h = s.loop(draw(small_trips))
    if variant == "shape":
        s.close(h, w.reduce_all(h.it))
    else:
        s.close(h, w.cast(h.it, INT))
    w.mark(s.output(h, h.rec, "LAST_VALUE"))
    return variant


@_family("profile/tensorrt-dtypes")
def dtype_breaks(draw, w: Writer, s: Broken):
    """A loop value that is neither FP32/FP16 nor bool/int32/int64."""
    variant = draw(st.sampled_from(["float64", "int8", "uint8"]))
    h = s.loop(draw(small_trips))
    s.close(h)
    odd = w.cast(h.it, variant)
    w.mark(s.output(h, odd))
    return variant


# runtime rules: the network builds; forcing the elements breaks the rule

@_family("iterator/bounds")
def bounds_breaks(draw, w: Writer, s: Broken):
    """More trips than the iterated axis has elements, and the iterator is read."""
    h = s.loop(draw(small_trips))
    s.close(h)
    short = w.input((h.n - 1, 2))  # one element short of the n trips
    it = w.layer("add_iterator", Ref(short.ref), target=h.ref, axis=0,
                 reverse=draw(st.booleans()), dtype=FLOAT, shape=(2,), scope=h.scope)
    w.mark(s.output(h, it))
    return "short-axis"


@_family("output/concat")
def concat_length_breaks(draw, w: Writer, s: Broken):
    """A CONCATENATE/REVERSE length smaller than the trip count."""
    n = draw(small_trips)
    h = s.loop(n)
    s.close(h)
    kind = draw(st.sampled_from(["CONCATENATE", "REVERSE"]))
    w.mark(s.output(h, h.it, kind, length=w.int_constant(draw(st.integers(0, n - 1)))))
    return kind.lower()


@_family("trip/count")
def count_breaks(draw, w: Writer, s: Broken):
    """A COUNT that is negative (TensorRT profile: an error, A4) or not a 0-D int."""
    variant = draw(st.sampled_from(["negative", "float", "vector"]))
    h = s.loop(1, limit="none")
    s.close(h)
    t = {"negative": lambda: w.int_constant(-draw(st.integers(1, 3))),
         "float": lambda: w.constant(np.array(1.0, np.float32)),
         "vector": lambda: w.constant(np.array([1], np.int32))}[variant]()
    w.call(h.ref, "add_trip_limit", Ref(t.ref), Member(("TripLimit", "COUNT")), result=None)
    w.mark(s.output(h, h.rec, "LAST_VALUE"))
    return variant


STRUCTURE_RULES = ("structure/acyclic", "structure/exit", "structure/limits",
                   "structure/recurrence", "structure/while-input", "structure/last-value",
                   "structure/length", "structure/nesting", "recurrence/def",
                   "profile/tensorrt-dtypes")


def invalid_programs(rules=None):
    """`InvalidProgram`s, one family per rule (all registered families by default)."""
    rules = tuple(FAMILIES) if rules is None else tuple(rules)
    return st.one_of([FAMILIES[r]() for r in rules])


def invalid_networks(rules=None):
    """(build, rule) pairs: `build()` returns (network, feeds) and building or evaluating
    raises a `LazyLoopError` whose `.rule` is `rule`. `build.__self__` is the
    `InvalidProgram`, with its recipe."""
    return invalid_programs(rules).map(lambda p: (p.build, p.rule))
