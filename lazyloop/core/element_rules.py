"""The element rules of the reference machine, one generator per kind of plan node.

Each rule receives a node, an activation and an index, `yield`s the elements it needs as
``(node id, activation, index)`` and returns the element's value; `machine.Machine` drives the
generators. `Trips` is the pseudo-node whose rule counts the trips of one loop activation.
"""
from __future__ import annotations

import attrs
import numpy as np

from .enums import LoopOutput
from .errors import (EvaluationError, IteratorOutOfBounds, LazyLoopError, LengthTooShort,
                     NegativeTripCount)
from .fuel import CLOCK_EVERY
from .plan import Node
from .types import TensorType
from .undefined import Partial, filled, join, mapped, split, whole_mask


@attrs.frozen(repr=False)
class Trips(Node):
    """Pseudo-node: the trip count n of one activation of `loop`."""
    loop: str = ""

    def __repr__(self):
        return f"Trips({self.loop})"


def guarded_map_step(node, apply, finish):
    """A map's element step for the fast path: element k is `finish(k, apply(k))`, and a
    kernel that raises is named as the reference names it (`stream/map`)."""
    def compute(k):
        try:
            value = apply(k)
        except LazyLoopError:
            raise
        except Exception as exc:
            raise kernel_refused(node, k, exc) from None
        return finish(k, value)
    return compute


def kernel_refused(node, k, exc) -> EvaluationError:
    """`stream/map`: a kernel raised on element k of a map; the error names the stream."""
    return EvaluationError(f"stream {node.id!r} ({node!r})", "stream/map",
                           f"its function refused element {k}: {type(exc).__name__}: {exc}",
                           "give this layer inputs its operation accepts at that element "
                           "(the error above says which)")


class ElementRules:
    """The rules half of `machine.Machine`, apart from its driver: the methods read the
    machine's `plan`, `nodes`, `feeds`, `readings`, `max_trips`, `trips` and `fast`, and call
    its `activation` and `run_schedule`."""

    def rule_input(self, node, act, i):
        return self.feeds[node.id]
        yield  # pragma: no cover -- makes this a generator

    def rule_const(self, node, act, i):
        return node.value
        yield  # pragma: no cover

    def rule_undefined(self, node, act, i):
        """A3: a last-trip value after zero trips is undefined."""
        if self.readings["A3"] == "error":
            raise EvaluationError(f"stream {node.id!r}", "openvino/loop5",
                                  "the last-trip value of a loop that ran zero trips is read",
                                  "reading A3=error refuses it; A3=undefined masks it")
        ty = node.type
        if isinstance(ty, TensorType):
            shape = tuple(0 if d is None else d for d in ty.shape or ())
            return Partial(filled(shape, ty.dtype), np.zeros(shape, bool))
        return Partial(None, False)
        yield  # pragma: no cover

    def rule_map(self, node, act, i):
        """`stream/map`: element i of every argument, then the layer's function."""
        args = []
        for ref in node.args:
            args.append(None if ref is None else (yield (ref, act, i)))
        try:
            return apply_map(node, args)
        except LazyLoopError:
            raise
        except Exception as exc:  # a kernel refused its element: name it, do not leak it
            raise kernel_refused(node, i, exc) from None

    def rule_project(self, node, act, i):
        whole = yield (node.call, act, i)
        return whole[node.k]

    def rule_iterator(self, node, act, i):
        """`iterator/forward`, `iterator/reverse`, `iterator/bounds`."""
        whole = yield (node.source, act, i)
        value, mask = split(whole)
        extent = axis_extent(node, value)
        index = i
        if node.reverse and self.readings["A2"] == "api-reference":
            index = yield from self.reverse_by_count(node, act, i)
        elif node.reverse:
            index = extent - 1 - i
        check_index(node, i, index, extent)
        return iterator_element(value, mask, index, node.axis)

    def reverse_by_count(self, node, act, i):
        """A2 "api-reference": a reverse iterator reads index M-1-i, M the COUNT limit."""
        count_ref = self.plan.loops[act.loop].count
        if count_ref is None:
            raise EvaluationError(f"iterator {node.id!r}", "iterator/reverse",
                                  "reading A2=api-reference needs a COUNT limit",
                                  "add a COUNT limit or use A2=guide")
        count = yield (count_ref, act.parent, act.index)
        return int(np.asarray(split(count)[0]).reshape(-1)[0]) - 1 - i

    def rule_recurrence(self, node, act, i):
        """`recurrence/def`: ⟨X, Y0, Y1, ...⟩."""
        if i == 0:
            return (yield (node.init, act.parent, act.index))
        return (yield (node.next, act, i - 1))

    def rule_if(self, node, act, i):
        """Force the condition's element, then only the taken branch's. An undefined
        condition takes neither branch: the element is wholly undefined."""
        c = yield (node.cond, act, i)
        value, mask = split(c)
        if mask is not None and not np.all(mask) and isinstance(node.type, TensorType) \
                and node.type.is_static:
            return Partial(filled(node.type.shape, node.type.dtype),
                           np.zeros(node.type.shape, bool))
        taken = yield ((node.then if bool(np.asarray(value).reshape(-1)[0]) else node.orelse), act, i)
        if mask is None or np.all(mask):
            return taken
        raw = split(taken)[0]
        return Partial(raw, whole_mask(raw, False))

    def rule_trips(self, node, act, i):
        """`trip/count`, `trip/while`, `trip/both`: iterate j = 0, 1, ...; stop at the count,
        else force the WHILE input's element j and stop when it is false. With both limits
        the count is looked at first (A40 "count-first"); A40 "condition-first" forces the
        WHILE input's element j before it looks at the count, element `count` included."""
        loop = self.plan.loops[node.loop]
        count = None
        if loop.count is not None:
            count = yield from self.count_limit(loop, act)
        self.fuel.before_first_trip(loop, count)
        condition_first = self.readings["A40"] == "condition-first"
        j = 0
        while True:
            if count is not None and j >= count and not condition_first:
                break
            if loop.while_ is not None:
                if not while_holds(loop, j, (yield (loop.while_, act, j))):
                    break
            if count is not None and j >= count:
                break
            if j >= self.max_trips:
                raise self.fuel.exhausted(loop, count)
            j += 1
            if not j % CLOCK_EVERY:
                self.fuel.check_clock(loop, count, j)
        self.ran(loop.name, act.path, j)
        if self.readings["A10"] == "eager":
            yield from self.force_everything(loop.name, act, j)
        return j

    def ran(self, loop, path, n):
        """Record that an activation of `loop` ran n trips (A5 "refuse": OpenVINO's reference
        implementation refuses zero trips)."""
        if n == 0 and self.plan.profile == "openvino" and self.readings["A5"] == "refuse":
            raise EvaluationError(loop, "openvino/loop5", "the loop runs zero trips",
                                  "reading A5=refuse refuses it; A5=execute runs it")
        if self.trips is not None:
            self.trips[loop].append((tuple(ix for _, ix in path), n))

    def count_limit(self, loop, act):
        return self.count_value(loop, (yield (loop.count, act.parent, act.index)))

    def count_value(self, loop, c):
        """The COUNT limit's value; a negative count is read by A4 (None: no limit)."""
        value, mask = split(c)
        if mask is not None and not np.all(mask):
            raise EvaluationError(f"COUNT input {loop.count!r} of {loop.name}", "trip/count",
                                  "the count is undefined", "give the loop a defined count")
        count = int(np.asarray(value).reshape(-1)[0])
        if count >= 0:
            return count
        reading = self.readings["A4"]
        if reading == "by-profile":
            reading = {"tensorrt": "error", "onnx": "zero-trips", "openvino": "no-limit"}[
                self.plan.profile]
        if reading == "error":
            raise NegativeTripCount(f"COUNT input {loop.count!r} of {loop.name}", "trip/count",
                                    f"the count is {count}", "give a count >= 0")
        return 0 if reading == "zero-trips" else None

    def force_everything(self, loop, act, n):
        """A10 reading "eager": every stream of the loop on every trip that ran."""
        members = [k for k, nd in self.nodes.items() if nd.scope == loop and not isinstance(nd, Trips)]
        for j in range(n):
            for k in members:
                yield (k, act, j)

    def rule_loop_output(self, node, act, i):
        """`output/last`, `output/concat`, `output/reverse`."""
        if self.fast:  # a loop nested in another gets a schedule per outer element
            done = yield from self.scheduled(node, act, i)
            if done is not None:
                return done
        run = self.activation(node.loop, act, i)
        n = yield (f"#trips:{node.loop}", run, 0)
        if node.kind is LoopOutput.LAST_VALUE:
            return (yield (node.source, run, n))
        elements = []
        for j in range(n):
            elements.append((yield (node.source, run, j)))
        length = n
        if node.length is not None:
            length = int(np.asarray(split((yield (node.length, act, i)))[0]).reshape(-1)[0])
            if length < n:
                raise LengthTooShort(f"loop output {node.id!r} ({node!r})", "output/concat",
                                     f"length {length} is less than the {n} trips",
                                     "make the length at least the trip count")
        return self.stack(node, elements, length)

    def stack(self, node, elements, length):
        """Stack n elements on a new axis, post-padded to `length` with undefined values;
        REVERSE puts the values in reverse order (padding placement: A1)."""
        ty = node.type
        if ty.shape is None:  # elements of unknown rank and none forced: rank node.axis
            elem_shape = (0,) * node.axis
        else:
            elem_shape = tuple(ty.shape[:node.axis] + ty.shape[node.axis + 1:])
        if isinstance(elements, np.ndarray):  # a batch of defined elements (core/batch.py)
            values, masks = elements, True
        elif type(elements) is Partial:  # a batch with a mask per element (core/batch.py)
            values, masks = elements.value, elements.mask
        else:
            values = [np.asarray(split(e)[0]) for e in elements]
            masks = [split(e)[1] for e in elements]
        if len(values):
            elem_shape = np.shape(values[0])
        elem_shape = tuple(0 if d is None else d for d in elem_shape)
        dtype = ty.dtype if isinstance(ty, TensorType) else np.float32
        n = len(values)
        out = filled((length,) + elem_shape, dtype)
        mask = np.zeros((length,) + elem_shape, bool)
        if n:
            out[:n] = values if isinstance(values, np.ndarray) else np.stack(values)
            if isinstance(masks, list):
                mask[:n] = True
                for j, m in enumerate(masks):
                    if m is not None:
                        mask[j] = np.broadcast_to(m, elem_shape)
            else:
                mask[:n] = masks
        if node.kind is LoopOutput.REVERSE:
            if self.readings["A1"] == "reverse-all":
                out, mask = out[::-1], mask[::-1]
            else:
                out[:n], mask[:n] = out[:n][::-1], mask[:n][::-1]
        out = np.ascontiguousarray(np.moveaxis(out, 0, node.axis))
        mask = np.ascontiguousarray(np.moveaxis(mask, 0, node.axis))
        return join(out, mask)


def axis_extent(node, value) -> int:
    """The extent of an iterator's axis; an input of unknown rank (relaxed profiles) may turn
    out to have too few axes, found when its value arrives (`iterator/forward`)."""
    shape = np.shape(value)
    if node.axis >= len(shape):
        raise EvaluationError(f"iterator {node.id!r} ({node!r})", "iterator/forward",
                              f"axis {node.axis} is out of range for a value of shape "
                              f"{list(shape)}", "iterate over an axis the value has")
    return shape[node.axis]


def apply_map(node, args):
    """`stream/map`: the node's function of its arguments' elements. Undefined arguments
    (`Partial`) pass their raw values to the kernel, and the result gets the mask
    `undefined.mapped` gives it (spec/13-outputs.md, "Propagation")."""
    masks = [a.mask for a in args if type(a) is Partial]
    if not masks:
        return node.fn(*args)
    value = node.fn(*[a.value if type(a) is Partial else a for a in args])
    return mapped(value, masks, node.positionwise, node.multi)


def check_index(node, i, index, extent):
    """`iterator/bounds`: trip i of an iterator reads an index inside the iterated axis."""
    if not 0 <= index < extent:
        raise IteratorOutOfBounds(f"iterator {node.id!r} ({node!r})", "iterator/bounds",
                                  f"trip {i} asks for index {index} of an axis of extent "
                                  f"{extent}", "limit the trips to the iterated extent")


def iterator_element(value, mask, index, axis):
    """`iterator/forward`: slice `index` of `value` along `axis`, undefined where the same
    slice of its mask (None: wholly defined), broadcast to the value, is False."""
    element = np.take(value, index, axis=axis)
    if mask is None:
        return element
    return join(element, np.take(np.broadcast_to(mask, np.shape(value)), index, axis=axis))


def while_holds(loop, j, x) -> bool:
    """`trip/while`: whether element j of the WHILE input lets trip j run. A loop is not
    decided on an undefined value: an undefined element is an error."""
    value, mask = split(x)
    if mask is not None and not np.all(mask):
        raise EvaluationError(f"WHILE input {loop.while_!r} of {loop.name}", "trip/while",
                              f"its element {j} is undefined",
                              "do not decide a loop on an undefined value")
    return bool(np.asarray(value).reshape(-1)[0])
