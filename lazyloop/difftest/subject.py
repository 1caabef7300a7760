"""Subjects: one generated program in one model format, with lazyloop's expected outputs.

Also the hypothesis strategy that draws them (`subjects`) and `plan_rules`, which reads the
core rules a compiled plan exercises.
"""
from __future__ import annotations

import attrs

from ..core.errors import LazyLoopError
from .backends import _frontend
from .costs import spent


class Invalid(Exception):
    """lazyloop refuses the program (a LazyLoopError while evaluating it): not a test."""


class NotExported(Exception):
    """The exporter says the program has no translation in the target format."""


class Refused(Exception):
    """The target library refused to construct the model (counted as unsupported)."""


@attrs.frozen(slots=False, repr=False)
class Subject:
    """`kind` is "core" (a core program exported to `format` with `options`) or a dialect
    kind ("onnx-loop", "onnx-scan9", "onnx-scan8", "openvino-loop")."""

    kind: str
    format: str
    program: object
    options: tuple = ()

    def __repr__(self):
        opts = f", options={dict(self.options)!r}" if self.options else ""
        return f"Subject({self.kind!r}, {self.format!r}{opts},\n  {self.program!r})"

    def key(self) -> str:
        return repr(self)

    def portable(self) -> "Subject":
        """A copy without cached networks and models, cheap to pickle."""
        program = self.program
        if self.kind == "core":
            from ..strategies import Program
            p = program
            program = Program(p.steps, p.inputs, p.outputs, p.rules, p.features)
        else:
            program = type(program)(program.recipe)
        return Subject(self.kind, self.format, program, self.options)

    # -- the model --------------------------------------------------------------------------
    def model(self):
        if "_model" not in self.__dict__:
            with spent(self.building, "export"):
                self.__dict__["_model"] = self._make_model()
        return self.__dict__["_model"]

    @property
    def building(self) -> dict:
        """Seconds spent building this subject's model ("export") and lowering it
        ("lowering") since `take_building` last took them (costs.py)."""
        return self.__dict__.setdefault("_building", {})

    def take_building(self) -> dict:
        """`building`, emptied: each second is counted once."""
        return self.__dict__.pop("_building", {})

    def _make_model(self):
        from ..core.export import NotExportable, TargetRefused
        try:
            if self.kind != "core":
                return self.program.model
            if self.format == "core":  # the builder calls themselves (TensorRT replay)
                return self.program
            if self.format == "onnx":
                from ..onnx.export import export
            else:
                from ..openvino.export import export
            return export(self.program.net, **dict(self.options))
        except NotExportable as exc:
            raise NotExported(str(exc)) from None
        except TargetRefused as exc:
            raise Refused(str(exc)) from None

    @property
    def feeds(self) -> dict:
        return dict(self.program.feeds)

    # -- the expectation ---------------------------------------------------------------------
    def expectation(self):
        """(outputs, defined masks, rules) in mode "fast", with the rules the plan's structure
        exercises (no trace: `plan_rules`); raises Invalid when lazyloop refuses it. The same
        for every kind of program; a disagreement is confirmed by `confirmation`."""
        if "_expect" not in self.__dict__:
            outputs, defined, plan, trace = self._evaluate("fast")
            self.__dict__["_expect"] = (outputs, defined, self.rules_of(plan, trace))
        return self.__dict__["_expect"]

    def confirmation(self):
        """(outputs, defined masks, rules) of the reference evaluator, whose trace says what
        was forced: asked only for a disagreement, before it is reported. Raises
        `ModesDisagree` -- a lazyloop bug -- where the reference's answer is not the fast
        one's, except where spec/14 lets them differ (`laziness/modes`: a fixed point the
        fast path answered where the reference runs into the fuel, whose rules are the
        structure's and `laziness/fixed-point`)."""
        if "_confirmed" not in self.__dict__:
            outputs, defined, rules = self.expectation()
            try:
                ref_outputs, ref_defined, plan, trace = self._evaluate("reference")
            except Invalid as exc:
                if not self.__dict__.get("_fuel"):
                    raise ModesDisagree(f"mode \"reference\" refuses the program ({exc}) "
                                        "where mode \"fast\" answers") from None
                confirmed = (outputs, defined, rules | {"laziness/fixed-point"})
            else:
                mismatch = differing(ref_outputs, outputs) or differing(ref_defined, defined)
                if mismatch:
                    raise ModesDisagree(f"modes \"reference\" and \"fast\" give different "
                                        f"{mismatch}")
                confirmed = (ref_outputs, ref_defined, self.rules_of(plan, trace))
            self.__dict__["_confirmed"] = confirmed
        return self.__dict__["_confirmed"]

    def _evaluate(self, mode):
        """(outputs, defined masks, plan, trace) of the program in `mode` (a trace only in
        "reference"), within the tester's fuel; a LazyLoopError is Invalid (a FuelExhausted
        noted in `_fuel`)."""
        import numpy as np

        from ..core.errors import FuelExhausted
        from ..core.fuel import EXPECTATION_MAX_TRIPS
        traced = mode == "reference"
        try:
            with np.errstate(over="ignore"):  # narrow types wrap around on purpose
                if self.kind == "core":
                    from ..core.evaluate import run
                    ev = run(self.program.net, self.program.feeds, EXPECTATION_MAX_TRIPS,
                             trace=traced, mode=mode)
                    return ev.outputs, ev.defined, ev.plan, ev.trace
                r = self.lowered().run(self.feeds, EXPECTATION_MAX_TRIPS, trace=traced,
                                       mode=mode)
                return r.outputs, r.defined, r.evaluation.plan, r.evaluation.trace
        except LazyLoopError as exc:
            self.__dict__["_fuel"] = isinstance(exc, FuelExhausted)
            raise Invalid(str(exc)) from None

    def exported_answer(self) -> dict:
        """lazyloop's fast answer on the model a core program was exported to, lowered back
        (what `checking.export_differences` holds against the program's own answer)."""
        import numpy as np

        from ..core.fuel import EXPECTATION_MAX_TRIPS
        with np.errstate(over="ignore"):
            return self.lowered().run(self.feeds, EXPECTATION_MAX_TRIPS).outputs

    def lowered(self):
        """The dialect model (or the model a core program was exported to) lowered onto the
        core, once."""
        if "_lowered" not in self.__dict__:
            model = self.model()
            with spent(self.building, "lowering"):
                self.__dict__["_lowered"] = _frontend(self.format).lower(model)
        return self.__dict__["_lowered"]

    def rules_of(self, plan, trace) -> frozenset:
        """The rules the program exercises: its own, the plan's (`plan_rules`: with a
        reference trace, `laziness/dead` only where something was not forced), and those of
        the export of a core program."""
        rules = set(getattr(self.program, "rules", ()))
        rules |= plan_rules(plan, trace)
        if self.kind == "core" and self.format != "core":
            rules.add({"onnx": "onnx/loop", "openvino": "openvino/loop5"}[self.format])
            if self.format == "onnx" and dict(self.options).get("scan"):
                from ..core.export import Structure
                s = Structure(self.program.net)
                if any(s.scan_fit(loop) is not None for loop in self.program.net.loops):
                    rules.add("onnx/scan9")
        return frozenset(rules)


class ModesDisagree(Exception):
    """The reference evaluator and the fast path give different answers for one program: a
    lazyloop bug (`laziness/modes`), reported as lazyloop's own failure."""


def differing(a, b):
    """What differs between two {name: value} dicts (names, dtypes, shapes, values; NaN
    equal to NaN), or None."""
    import numpy as np
    if a.keys() != b.keys():
        return f"outputs ({sorted(a)} and {sorted(b)})"
    for name in a:
        x, y = a[name], b[name]
        if isinstance(x, list) or isinstance(y, list) or x is None or y is None:
            same = type(x) is type(y) and (x is None or len(x) == len(y) and all(
                differing({0: u}, {0: v}) is None for u, v in zip(x, y)))
        else:
            x, y = np.asarray(x), np.asarray(y)
            same = x.dtype == y.dtype and x.shape == y.shape and (
                np.array_equal(x, y, equal_nan=x.dtype.kind in "fc") if x.dtype != object
                else all(differing({0: u}, {0: v}) is None for u, v in zip(x.ravel(), y.ravel())))
        if not same:
            return f"values of {name!r}"
    return None


def plan_rules(plan, trace=None) -> set:
    """The core rules a compiled plan exercises, read from its nodes and loops. `trace` (a
    reference evaluation's forcing trace) adds `laziness/dead` exactly when some node was
    not forced; without one (None: no trace was recorded -- not "nothing was forced"), an
    if-conditional stands for it (each element forces one branch)."""
    from ..core.enums import LoopOutput
    from ..core.plan import IfOutput, Iterator, LoopOut, Recurrence
    rules = {"stream/shape", "stream/map", "stream/memo"}
    if plan.loops:
        rules |= {"structure/acyclic", "structure/exit", "structure/limits",
                  "structure/recurrence", "structure/shapes"}
    for lp in plan.loops.values():
        if lp.count and lp.while_:
            rules.add("trip/both")
        elif lp.count:
            rules.add("trip/count")
        elif lp.while_:
            rules.add("trip/while")
        if lp.parent is not None:
            rules.add("structure/nesting")
    for node in plan.nodes.values():
        if isinstance(node, Iterator):
            rules.add("iterator/reverse" if node.reverse else "iterator/forward")
        elif isinstance(node, Recurrence):
            rules |= {"recurrence/def", "stream/order"}
        elif isinstance(node, LoopOut):
            rules.add({LoopOutput.LAST_VALUE: "output/last",
                       LoopOutput.CONCATENATE: "output/concat",
                       LoopOutput.REVERSE: "output/reverse"}[node.kind])
            if node.length is not None:
                rules.add("structure/length")
        elif isinstance(node, IfOutput) and trace is None:
            rules.add("laziness/dead")
        for ref in node.inputs():
            if ref is not None and node.scope is not None and plan.nodes[ref].scope != node.scope:
                rules.add("stream/invariant")
    if plan.profile == "tensorrt" and plan.loops:
        rules.add("profile/tensorrt-dtypes")
        for lp in plan.loops.values():
            if lp.while_:
                rules.add("structure/while-input")
            if any(plan.nodes[o].kind is LoopOutput.LAST_VALUE for o in lp.outputs):
                rules.add("structure/last-value")
    if trace is not None and dead_computations(plan, {e.stream for e in trace}):
        rules.add("laziness/dead")
    return rules


def dead_computations(plan, forced) -> set:
    """The nodes of `plan` a run left unforced that compute something (`laziness/dead`):
    constants and inputs compute nothing, and a recurrence that only feeds itself -- a loop's
    iteration number that the body never reads -- is a counter nobody reads, not a dead
    computation."""
    from ..core.plan import Const, Input, Recurrence
    unforced = {nid for nid, n in plan.nodes.items()
                if nid not in forced and not isinstance(n, (Const, Input))}
    reads = reads_of(plan)
    readers = {}
    for nid in plan.nodes:
        for r in reads(nid):
            readers.setdefault(r, set()).add(nid)
    for nid in sorted(unforced):
        if nid in unforced and isinstance(plan.nodes[nid], Recurrence):
            unforced -= unread_cycle(reads, readers, nid, unforced)
    return unforced


def reads_of(plan):
    """`reads(nid)`: the nodes node `nid` of `plan` reads, a recurrence's next value too."""
    from ..core.plan import Recurrence

    def reads(nid):
        node = plan.nodes[nid]
        back = (node.next,) if isinstance(node, Recurrence) else ()
        return [r for r in (*node.inputs(), *back) if r is not None]
    return reads


def unread_cycle(reads, readers: dict, rec: str, among: set) -> set:
    """The cycle through recurrence `rec` (the nodes of `among` it reads and that read it,
    its next-value chain) when no node outside the cycle reads a member; else the empty set.
    `readers` maps each node to the nodes that read it."""
    read_by_rec = reads_closure(reads, rec, among)
    if rec not in read_by_rec:
        return set()
    cycle = {n for n in read_by_rec if rec in reads_closure(reads, n, among)} | {rec}
    outside = {r for n in cycle for r in readers.get(n, ())} - cycle
    return set() if outside else cycle


def reads_closure(reads, start: str, among: set) -> set:
    """Every node of `among` that `start` reads, directly or through others of `among`."""
    seen, frontier = set(), [start]
    while frontier:
        for r in reads(frontier.pop()):
            if r in among and r not in seen:
                seen.add(r)
                frontier.append(r)
    return seen


# ------------------------------------------------------------------------------------------
# Generating subjects
# ------------------------------------------------------------------------------------------


def onnx_export_options():
    from hypothesis import strategies as st
    return st.tuples(
        st.tuples(st.just("scan"), st.sampled_from((False, True))),
        st.tuples(st.just("cond"), st.sampled_from(("omit", "true"))),
        st.tuples(st.just("opset"), st.sampled_from((17, 13, 19, 21))))


def openvino_export_options():
    from hypothesis import strategies as st
    return st.tuples(
        st.tuples(st.just("iterator"), st.sampled_from(("slice", "gather"))),
        st.tuples(st.just("conditional"), st.sampled_from(("select", "if"))))


def subjects(formats=("onnx",), kinds=None):
    """A strategy of `Subject`s in the given formats (all kinds by default)."""
    from hypothesis import strategies as st

    from ..strategies import dialects as ds
    from ..strategies import networks
    parts = []
    for fmt in formats:
        if fmt == "core":  # core programs handed over as builder calls (lazyloop.tensorrt.replay)
            if kinds is None or "core" in kinds:
                parts.append(st.builds(Subject, st.just("core"), st.just("core"),
                                       networks(max_depth=1), st.just(())))
            continue
        options = onnx_export_options() if fmt == "onnx" else openvino_export_options()
        table = {"core": st.builds(Subject, st.just("core"), st.just(fmt),
                                   networks(max_depth=1), options)}
        for kind, strategy in ds.dialect_kinds(fmt, kinds).items():
            table[kind] = st.builds(Subject, st.just(kind), st.just(fmt), strategy())
        parts += [s for k, s in table.items() if kinds is None or k in kinds]
    if not parts:
        raise ValueError(f"no subjects for formats {formats} and kinds {kinds}")
    return st.one_of(parts)
