"""Valid TensorRT-profile programs: `ProgramBuilder` writes loop bodies, conditionals, loop
outputs, nested and sequential loops, with `LoopParts` as its collaborator for each loop's
boundary, and `networks()` is the hypothesis strategy that draws them."""
from __future__ import annotations

from typing import Optional, Tuple

import attrs
import numpy as np
from hypothesis import strategies as st

from .loop_parts import LoopParts, LoopState
from .programs import Member, Program, Ref
from .writer import (FLOAT, Value, activations, binary_ops, body_op_kinds, deepest,
                     loop_plans, output_kinds, paddings, unary_ops)


class ProgramBuilder:
    """Draws one valid TensorRT-profile program, loop by loop: the loop's bodies,
    conditionals and outputs here; where each loop sits, its limits, iterators and
    recurrences by its collaborator `parts` (`loop_parts.LoopParts`), which shares its
    writer `w`."""

    def __init__(self, draw, max_depth: int, avoid: frozenset):
        self.parts = LoopParts(draw, max_depth, avoid)
        self.w = self.parts.w
        self.draw = draw
        self.max_depth = max_depth
        self.avoid = avoid

    # -- body -------------------------------------------------------------------------------
    def uses(self, loop: LoopState, *operands: Value):
        """Note the rules reading these operands in the body exercises."""
        self.w.rules.add("stream/map")
        if any(len(v.scope) < len(loop.scope) for v in operands):
            self.w.rules.add("stream/invariant")
            if any(0 < len(v.scope) < len(loop.scope) for v in operands):
                self.w.features.add("invariant-from-outer-loop")

    def may_read(self, loop: LoopState, v: Value) -> bool:
        """Whether a body layer of `loop` may read `v` from outside it, given `avoid`."""
        return len(v.scope) <= len(loop.anchor) or "body-only-nesting" not in self.avoid

    def operand(self, loop: LoopState) -> Value:
        """A float32 value of shape E: a stream of the loop, or an invariant (a value from
        outside it, a new constant, a new input)."""
        outside = [v for v in self.parts.visible(loop.scope[:-1]) if v.dtype == FLOAT
                   and v.shape == loop.shape and self.may_read(loop, v)]
        where = self.draw(st.sampled_from(["loop", "outside", "constant", "input"]))
        if where == "loop" and loop.pool:
            return self.parts.pick(loop.pool)
        if where == "outside" and outside:
            v = self.parts.pick(outside)
            self.parts.read(loop, v)
            return v
        if where == "input":
            return self.w.input(loop.shape)
        return self.w.float_constant(loop.shape)

    def body_op(self, loop: LoopState) -> Value:
        """One layer of the body."""
        w = self.w
        kind = self.draw(body_op_kinds)
        a = self.operand(loop)
        if kind == "matmul" and 1 <= len(a.shape) <= 2:  # TensorRT: batch ranks must agree
            out = w.tanh(w.matmul_square(a))
        elif kind == "unary":
            out = w.unary(a, self.draw(unary_ops))
            w.features.add("unary")
        elif kind == "activation":
            out = w.activation(a, *self.draw(activations()))
            w.features.add("activation")
        elif kind == "select":
            b = self.operand(loop)
            out = self.w.layer("add_select", Ref(w.elementwise(a, b, "GREATER").ref),
                               Ref(a.ref), Ref(b.ref), dtype=FLOAT, shape=a.shape,
                               scope=deepest(a.scope, b.scope))
            w.features.add("select")
        elif kind == "counter" and loop.counter is not None:
            c = w.reshape_to_rank(w.cast(loop.counter, FLOAT), len(loop.shape))
            out = w.elementwise(a, c, self.parts.pick(["SUM", "PROD"]))
            w.features.add("counter-as-data")
        else:
            b = self.operand(loop)
            out = w.elementwise(a, b, self.draw(binary_ops))
            w.features.add("binary")
        self.uses(loop, a)
        if out.scope == loop.scope:
            loop.pool.append(out)
        return out

    def condition(self, loop: LoopState) -> Value:
        """A 0-D bool of this loop: the counter against a bound, or the sign of a sum."""
        w = self.w
        if loop.counter is not None and self.draw(st.booleans()):
            k = self.draw(st.integers(0, max(loop.n_max, 1)))
            return w.elementwise(loop.counter, w.int_constant(k), "LESS")
        streams = [v for v in loop.pool if v.scope == loop.scope]
        x = self.parts.pick(streams) if streams else self.operand(loop)
        s = w.reduce_all(x)
        return w.elementwise(s, w.constant(np.zeros((), np.float32)), "GREATER")

    def conditional(self, loop: LoopState) -> Value:
        """add_if_conditional inside the loop: per trip, only the taken branch is forced."""
        w = self.w
        cond = self.condition(loop)
        a, b = self.operand(loop), self.operand(loop)
        if len(deepest(a.scope, b.scope)) < len(cond.scope):
            # the condition varies per trip while both branches are invariants
            if "invariant-branches" in self.avoid:
                streams = [v for v in loop.pool if v.scope == loop.scope]
                if not streams:
                    return None
                b = self.parts.pick(streams)
            else:
                w.features.add("invariant-branches")
        ifc = w.call("network", "add_if_conditional", result="if")
        w.call(ifc, "set_condition", Ref(cond.ref), result=None)
        a_in = w.layer("add_input", Ref(a.ref), target=ifc, dtype=FLOAT, shape=a.shape,
                       scope=a.scope)
        b_in = w.layer("add_input", Ref(b.ref), target=ifc, dtype=FLOAT, shape=b.shape,
                       scope=b.scope)
        then = w.activation(a_in, *self.draw(activations()))
        orelse = w.unary(b_in, self.draw(unary_ops)) if self.draw(st.booleans()) else b_in
        out = w.layer("add_output", Ref(then.ref), Ref(orelse.ref), target=ifc, dtype=FLOAT,
                      shape=loop.shape, scope=deepest(cond.scope, a.scope, b.scope))
        self.uses(loop, a, b)
        w.features.add("conditional")
        loop.pool.append(out)
        return out

    # -- outputs ----------------------------------------------------------------------------
    def loop_output(self, loop: LoopState, src: Optional[Value] = None) -> Value:
        """A loop output of `src` (drawn by default: a recurrence for LAST_VALUE)."""
        w = self.w
        recs = loop.recurrences + ([loop.counter] if loop.counter else [])
        kind = self.draw(output_kinds)
        if src is not None:
            kind = "CONCATENATE" if kind == "LAST_VALUE" else kind
        elif kind == "LAST_VALUE" and recs:
            src = self.parts.pick(recs)
            out = w.layer("add_loop_output", Ref(src.ref), Member(("LoopOutput", kind)),
                          target=loop.ref, dtype=src.dtype, shape=src.shape,
                          scope=loop.reads, kind="loop-output")
            w.rules.add("output/last")
            return out
        kind = "CONCATENATE" if kind == "LAST_VALUE" else kind
        sources = loop.pool + loop.terminal + recs
        if src is None:
            src = self.parts.pick(sources) if sources else self.operand(loop)
        axis = self.draw(st.integers(0, len(src.shape)))
        pad = self.draw(paddings)
        length = loop.n_max + pad
        shape = src.shape[:axis] + (length,) + src.shape[axis:]
        out = w.layer("add_loop_output", Ref(src.ref), Member(("LoopOutput", kind)), axis,
                      target=loop.ref, dtype=src.dtype, shape=shape, scope=loop.reads,
                      kind="loop-output")
        w.call(out.layer, "set_input", 1, Ref(w.int_constant(length).ref), result=None)
        padded = pad > 0 or loop.varying or not src.defined
        if padded:
            w.features.add("padding")
            w.values[w.values.index(out)] = out = attrs.evolve(out, defined=False)
        w.rules.add("output/concat" if kind == "CONCATENATE" else "output/reverse")
        w.features.add(f"{kind.lower()}-axis-{axis}")
        if len(src.scope) < len(loop.scope):
            w.rules.add("stream/invariant")
        return out

    # -- one loop ---------------------------------------------------------------------------
    def loop(self, scope: Tuple[str, ...], outer: Optional[LoopState]) -> list:
        """Write one loop (and the loops nested in it); returns its output values."""
        w = self.w
        how = self.parts.anchor(outer) if outer is not None else None
        if outer is not None and how is None:
            return []
        plan = self.draw(loop_plans(len(scope), self.max_depth))
        ref = w.call("network", "add_loop", result="loop")
        shape, n, source, carried = self.parts.element_shape(scope, plan, how, outer)
        loop = LoopState(ref, scope + (ref,), shape, 0)
        loop.n_max = self.parts.trip_limits(loop, plan, n, outer if how == "count" else None)
        if loop.varying:
            w.features.add("varying-trips")
        if n == 0 or loop.varying and loop.n_max == 0:
            w.features.add("zero-trips")
        if loop.counter is None and plan.trips and self.draw(st.booleans()):
            loop.counter = attrs.evolve(self.parts.counter(loop, "up", w.int_constant(0)),
                                        top=max(loop.n_max - 1, 0))
        if source is not None:
            self.parts.iterator(loop, source)
        for _ in self.parts.repeat(2 - (source is not None)):
            self.parts.iterator(loop)
        if how == "carry":
            self.parts.recurrence(loop, carried)
        elif how == "body":  # only a body layer mixing an outer stream with one of this
            # loop's, which this loop outputs (so it is this loop that reads the outer one)
            own = [v for v in loop.pool if v.scope == loop.scope] or [self.parts.recurrence(loop)]
            mixed = w.elementwise(carried, self.parts.pick(own), self.draw(binary_ops))
            self.parts.read(loop, carried)
            self.uses(loop, carried)
            loop.pool.append(mixed)
            w.features.add("body-only-nesting")
        for _ in self.parts.repeat(2 - len(loop.recurrences)):
            self.parts.recurrence(loop)
        recs = loop.recurrences
        for _ in self.parts.repeat(3):
            self.body_op(loop)
        if plan.nested:
            fitting = []
            for out in self.loop(loop.scope, loop):
                fits = out.defined and out.dtype == FLOAT and out.shape == loop.shape
                (loop.pool if fits else loop.terminal).append(out)
                fitting += [out] if fits else []
            if len(fitting) >= 2 and self.draw(st.booleans()):  # one body layer reads two
                loop.pool.append(w.elementwise(fitting[0], fitting[1], self.draw(binary_ops)))
                w.features.add("inner-outputs-combined")
        if plan.conditional:
            self.conditional(loop)
        self.parts.close_recurrences(loop, recs)
        streams = [v for v in loop.pool if v.scope == loop.scope]
        if plan.dead and streams:
            w.unary(self.parts.pick(streams), "NEG")  # a layer of the loop that nothing reads
            w.rules.add("laziness/dead")
        outputs = [self.loop_output(loop, mixed)] if how == "body" else []
        outputs += [self.loop_output(loop) for _ in self.parts.repeat(3, at_least=1 - len(outputs))]
        if loop.reads:  # data flow nests it in the loop it reads from
            w.rules.add("structure/nesting")
            w.features.add("nested")
        return outputs

    # -- the whole program ------------------------------------------------------------------
    def needed_outputs(self, outs) -> list:
        """The outputs of a loop outside loops that are marked: all, or some of them, the
        others read by nobody (the weights an exporter carries out of a scan)."""
        if len(outs) < 2 or not self.draw(st.booleans()):
            return outs
        kept = [out for out in outs if self.draw(st.booleans())] or outs[:1]
        for out in outs:
            if out not in kept:
                self.w.values.remove(out)
        if len(kept) < len(outs):
            self.w.rules.add("laziness/dead")
            self.w.features.add("partly-needed-outputs")
        return kept

    def program(self) -> Program:
        w = self.w
        marked, unmarked = [], []
        for k in self.parts.repeat(2, at_least=1):
            if k:
                w.features.add("sequential-loops")
            outs = self.loop((), None)
            if self.draw(st.integers(0, 4)) < 4:
                marked += self.needed_outputs(outs)
            else:  # nobody marks its outputs (or reads them): the loop is never run
                unmarked.append(outs)
                for out in outs:
                    w.values.remove(out)
        if not marked:
            marked = unmarked.pop()
        if unmarked:
            w.rules.add("laziness/dead")
            w.features.add("dead-loop")
        defined = [v for v in marked if v.defined and v.dtype == FLOAT]
        if defined and self.draw(st.booleans()):
            marked.append(w.unary(self.parts.pick(defined), self.draw(unary_ops)))
            w.features.add("after-loop")
        for v in marked:
            w.mark(v)
        return w.program()


# Constructs `networks()` leaves out by default because the core mishandles them (each with
# a minimal repro in tests/test_laws.py). Empty: every bug found so far is fixed. Names that
# `avoid` understands: "body-only-nesting" (a nested loop tied to its outer loop only by a
# body layer reading an outer stream), "invariant-branches" (a conditional whose condition
# is a stream of the loop while both branches are invariants), "count-stops-both" (a loop
# with both limits that its COUNT stops).
KNOWN_CORE_BUGS = frozenset()


@st.composite
def networks(draw, max_depth: int = 1, avoid=KNOWN_CORE_BUGS):
    """Valid TensorRT-profile programs: a `Program` (`.net`, `.feeds`, `.rules`, `.steps`).

    `max_depth` is how deep loops nest (0: no nesting). `avoid` names constructs to leave
    out (see `KNOWN_CORE_BUGS`, the default)."""
    return ProgramBuilder(draw, max_depth, frozenset(avoid)).program()
