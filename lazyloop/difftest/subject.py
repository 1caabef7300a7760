"""Subjects: one generated program in one model format, with lazyloop's expected outputs.

Also the hypothesis strategy that draws them (`subjects`) and `plan_rules`, which reads the
core rules a compiled plan exercises.
"""
from __future__ import annotations

import attrs

from ..core.errors import LazyLoopError
from .backends import _frontend


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
            self.__dict__["_model"] = self._make_model()
        return self.__dict__["_model"]

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

    # -- the expectation --------------------------------------------------------------------
    def expectation(self):
        """(outputs, defined masks, rules); raises Invalid when lazyloop refuses it."""
        if "_expect" not in self.__dict__:
            self.__dict__["_expect"] = self._expect()
        return self.__dict__["_expect"]

    def _expect(self):
        import numpy as np

        from ..core.evaluate import run
        try:
            with np.errstate(over="ignore"):  # narrow types wrap around on purpose
                return self._expect_quietly(run)
        except LazyLoopError as exc:
            raise Invalid(str(exc)) from None

    def _expect_quietly(self, run):
        if self.kind == "core":
            ev = run(self.program.net, self.program.feeds, max_trips=100_000)
            outputs, defined, plan, trace = ev.outputs, ev.defined, ev.plan, ev.trace
        else:
            r = _frontend(self.format).run(self.model(), self.feeds, max_trips=100_000)
            outputs, defined = r.outputs, r.defined
            plan, trace = r.evaluation.plan, r.evaluation.trace
        rules = set(getattr(self.program, "rules", ()))
        rules |= plan_rules(plan, trace)
        if self.kind == "core" and self.format != "core":
            rules.add({"onnx": "onnx/loop", "openvino": "openvino/loop5"}[self.format])
            if self.format == "onnx" and dict(self.options).get("scan"):
                from ..core.export import Structure
                s = Structure(self.program.net)
                if any(s.scan_fit(loop) is not None for loop in self.program.net.loops):
                    rules.add("onnx/scan9")
        return outputs, defined, frozenset(rules)

def plan_rules(plan, trace=None) -> set:
    """The core rules a compiled plan exercises (read from its nodes and loops)."""
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
        elif isinstance(node, IfOutput):
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
    if trace is not None:
        forced = {e.stream for e in trace}
        if any(nid not in forced for nid, n in plan.nodes.items() if n.scope is not None):
            rules.add("laziness/dead")
    return rules


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
