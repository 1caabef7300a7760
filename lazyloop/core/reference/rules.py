"""The rules of the specification on values: one small function per rule, citing its ID.

Each function says what one rule makes of the values it is given -- an element of a map, of
an iterator, whether a WHILE element lets a trip run, the length and stacking of an output --
and raises the rule's error. Nothing here forces anything: the step table (`steps.py`) says
which elements each kind of node needs, and the reference machine (`machine.py`) and the
engine both call these functions to make the element from them. `Trips` is the pseudo-node
whose element is the trip count of one run of a loop.
"""
from __future__ import annotations

import attrs
import numpy as np

from ..enums import LoopOutput
from ..errors import (EvaluationError, IteratorOutOfBounds, LengthTooShort,
                      NegativeTripCount)
from ..plan import Node
from ..types import TensorType
from ..undefined import Partial, filled, join, mapped, split, whole_mask


@attrs.frozen(repr=False)
class Trips(Node):
    """Pseudo-node: the trip count n of one activation of `loop`."""
    loop: str = ""

    def __repr__(self):
        return f"Trips({self.loop})"


# -- stream/map -------------------------------------------------------------------------------

def map_element(node, args):
    """`stream/map`: the node's kernel applied to its arguments' elements. Undefined
    arguments (`Partial`) pass their raw values to the kernel, and the result gets the mask
    `undefined.mapped` gives it (spec/13-outputs.md, "Propagation")."""
    masks = [a.mask for a in args if type(a) is Partial]
    if not masks:
        return node.fn(*args)
    value = node.fn(*[a.value if type(a) is Partial else a for a in args])
    return mapped(value, masks, node.positionwise, node.multi)


def kernel_refused(node, k, exc) -> EvaluationError:
    """`stream/map`: a kernel raised on element k of a map; the error names the stream."""
    return EvaluationError(f"stream {node.id!r} ({node!r})", "stream/map",
                           f"its function refused element {k}: {type(exc).__name__}: {exc}",
                           "give this layer inputs its operation accepts at that element "
                           "(the error above says which)")


# -- iterator/forward, iterator/reverse, iterator/bounds --------------------------------------

def axis_extent(node, value) -> int:
    """The extent of an iterator's axis; an input of unknown rank (relaxed profiles) may turn
    out to have too few axes, found when its value arrives (`iterator/forward`)."""
    shape = np.shape(value)
    if node.axis >= len(shape):
        raise EvaluationError(f"iterator {node.id!r} ({node!r})", "iterator/forward",
                              f"axis {node.axis} is out of range for a value of shape "
                              f"{list(shape)}", "iterate over an axis the value has")
    return shape[node.axis]


def check_index(node, i, index, extent):
    """`iterator/bounds`: trip i of an iterator reads an index inside the iterated axis."""
    if not 0 <= index < extent:
        raise IteratorOutOfBounds(f"iterator {node.id!r} ({node!r})", "iterator/bounds",
                                  f"trip {i} asks for index {index} of an axis of extent "
                                  f"{extent}", "limit the trips to the iterated extent")


def iterator_element(node, whole, i, index=None):
    """Element i of an iterator over `whole`: `iterator/forward`, slice i along the axis;
    `iterator/reverse` (A2 "guide"), slice L-1-i of an axis of extent L, unless `index` is
    given (A2 "api-reference" computes it from the COUNT); `iterator/bounds`, an index
    outside the axis is an error. Where `whole` is undefined somewhere, the element carries
    the same slice of its mask."""
    if whole.__class__ is Partial:
        value, mask = whole.value, whole.mask
    else:
        value, mask = whole, None
    extent = axis_extent(node, value)
    if index is None:
        index = extent - 1 - i if node.reverse else i
    check_index(node, i, index, extent)
    axis = node.axis
    element = value[index] if axis == 0 else np.take(value, index, axis=axis)
    if mask is None:
        return element
    return join(element, np.take(np.broadcast_to(mask, np.shape(value)), index, axis=axis))


def iterator_elements(node, whole, length):
    """Elements 0 .. length-1 of an iterator at once, stacked on a new first axis (views of
    `whole`, and of its mask where it is undefined somewhere), as `iterator_element` gives
    them one by one; None when an index would be out of bounds (then the elements are made
    one by one, and `iterator/bounds` names the first that fails)."""
    value, mask = split(whole)
    if not isinstance(value, np.ndarray) or node.axis >= value.ndim:
        return None
    if length > value.shape[node.axis]:
        return None

    def rows(array):
        stacked = np.moveaxis(array, node.axis, 0)
        return stacked[::-1][:length] if node.reverse else stacked[:length]
    if mask is None:
        return rows(value)
    return join(rows(value), rows(np.broadcast_to(mask, value.shape)))


def index_by_count(node, loop, count, i) -> int:
    """A2 "api-reference": a reverse iterator reads index M-1-i, M the COUNT limit."""
    if loop.count is None:
        raise EvaluationError(f"iterator {node.id!r}", "iterator/reverse",
                              "reading A2=api-reference needs a COUNT limit",
                              "add a COUNT limit or use A2=guide")
    return int(np.asarray(split(count)[0]).reshape(-1)[0]) - 1 - i


# -- trip/count, trip/while -------------------------------------------------------------------

def count_limit(loop, c, negative: str, profile: str):
    """`trip/count`: the COUNT limit's value, `c`; a negative count is read by A4 (`negative`,
    the reading): an error, zero trips, or None (no limit)."""
    value, mask = split(c)
    if mask is not None and not np.all(mask):
        raise EvaluationError(f"COUNT input {loop.count!r} of {loop.name}", "trip/count",
                              "the count is undefined", "give the loop a defined count")
    count = int(np.asarray(value).reshape(-1)[0])
    if count >= 0:
        return count
    if negative == "by-profile":
        negative = {"tensorrt": "error", "onnx": "zero-trips", "openvino": "no-limit"}[profile]
    if negative == "error":
        raise NegativeTripCount(f"COUNT input {loop.count!r} of {loop.name}", "trip/count",
                                f"the count is {count}", "give a count >= 0")
    return 0 if negative == "zero-trips" else None


def while_holds(loop, j, x) -> bool:
    """`trip/while`: whether element j of the WHILE input lets trip j run. A loop is not
    decided on an undefined value: an undefined element is an error."""
    value, mask = split(x)
    if mask is not None and not np.all(mask):
        raise EvaluationError(f"WHILE input {loop.while_!r} of {loop.name}", "trip/while",
                              f"its element {j} is undefined",
                              "do not decide a loop on an undefined value")
    return bool(np.asarray(value).reshape(-1)[0])


def zero_trips_refused(loop: str, n: int, profile: str, reading: str) -> None:
    """A5 "refuse": OpenVINO's reference implementation refuses a loop of zero trips."""
    if n == 0 and profile == "openvino" and reading == "refuse":
        raise EvaluationError(loop, "openvino/loop5", "the loop runs zero trips",
                              "reading A5=refuse refuses it; A5=execute runs it")


# -- output/last, output/concat, output/reverse -----------------------------------------------

def output_length(node, n, length) -> int:
    """`output/concat`: how many elements a CONCATENATE/REVERSE output holds after n trips:
    n, or the value of its length input (`length()` reads it), which may not be less."""
    if node.length is None:
        return n
    size = int(np.asarray(split(length())[0]).reshape(-1)[0])
    if size < n:
        raise LengthTooShort(f"loop output {node.id!r} ({node!r})", "output/concat",
                             f"length {size} is less than the {n} trips",
                             "make the length at least the trip count")
    return size


def stacked_whole(node, values):
    """`output/concat`, `output/reverse` when every element is defined and no padding is
    due: the values (a list, or one array of them stacked) on a new axis at the output's
    axis, in reverse order for REVERSE -- or None when they stack to another dtype than the
    output's (then `stack`'s general path makes it)."""
    out = np.stack(values) if isinstance(values, list) else values  # read-only: shared
    if out.dtype != getattr(node.type, "dtype", None):
        return None
    out = out[::-1] if node.kind is LoopOutput.REVERSE else out
    return np.ascontiguousarray(np.moveaxis(out, 0, node.axis) if node.axis else out)


def stack(node, elements, length, padding: str):
    """`output/concat`, `output/reverse`: n elements stacked on a new axis, post-padded to
    `length` with undefined values; REVERSE puts the values in reverse order (where the
    padding goes is A1, `padding`). `elements` is a list, or -- from the engine's batches --
    one array of stacked defined elements or a `Partial` of values and masks."""
    ty = node.type
    if ty.shape is None:  # elements of unknown rank and none forced: rank node.axis
        elem_shape = (0,) * node.axis
    else:
        elem_shape = tuple(ty.shape[:node.axis] + ty.shape[node.axis + 1:])
    if isinstance(elements, np.ndarray):
        values, masks = elements, True
    elif type(elements) is Partial:
        values, masks = elements.value, elements.mask
    else:
        values = [np.asarray(split(e)[0]) for e in elements]
        masks = [split(e)[1] for e in elements]
    n = len(values)
    whole = masks is True or isinstance(masks, list) and all(m is None for m in masks)
    if whole and 0 < n == length and isinstance(ty, TensorType):  # no padding, all defined
        out = stacked_whole(node, values)
        if out is not None:
            return out
    if len(values):
        elem_shape = np.shape(values[0])
    elem_shape = tuple(0 if d is None else d for d in elem_shape)
    dtype = ty.dtype if isinstance(ty, TensorType) else np.float32
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
        if padding == "reverse-all":
            out, mask = out[::-1], mask[::-1]
        else:
            out[:n], mask[:n] = out[:n][::-1], mask[:n][::-1]
    out = np.ascontiguousarray(np.moveaxis(out, 0, node.axis))
    mask = np.ascontiguousarray(np.moveaxis(mask, 0, node.axis))
    return join(out, mask)


# -- values no source defines, and if-conditionals --------------------------------------------

def undefined_element(node, reading: str):
    """A3: a last-trip value after zero trips is undefined (or, read as "error", refused)."""
    if reading == "error":
        raise EvaluationError(f"stream {node.id!r}", "openvino/loop5",
                              "the last-trip value of a loop that ran zero trips is read",
                              "reading A3=error refuses it; A3=undefined masks it")
    ty = node.type
    if isinstance(ty, TensorType):
        shape = tuple(0 if d is None else d for d in ty.shape or ())
        return Partial(filled(shape, ty.dtype), np.zeros(shape, bool))
    return Partial(None, False)


def condition_of(c):
    """An if-conditional's condition element: (whether its raw value takes the `then`
    branch, whether it is defined)."""
    value, mask = split(c)
    return bool(np.asarray(value).reshape(-1)[0]), mask is None or bool(np.all(mask))


def if_element(node, c, branch):
    """An if-conditional's element from its condition's element `c`: the taken branch's
    element, `branch(ref)` forcing it -- only that branch is forced (`laziness/dead`). An
    undefined condition takes neither branch where the type is static: the element is wholly
    undefined (else the raw value's branch, wholly undefined)."""
    then, defined = condition_of(c)
    if not defined and static_type(node):
        return undefined_branch(node)
    taken = branch(node.then if then else node.orelse)
    return taken if defined else undefined_branch(node, taken)


def undefined_branch(node, taken=None):
    """The element of an if-conditional whose condition is undefined: wholly undefined --
    the type's fill where the type is static, else the raw value of the branch `taken`."""
    ty = node.type
    if taken is None:
        return Partial(filled(ty.shape, ty.dtype), np.zeros(ty.shape, bool))
    raw = split(taken)[0]
    return Partial(raw, whole_mask(raw, False))


def static_type(node) -> bool:
    return isinstance(node.type, TensorType) and node.type.is_static
