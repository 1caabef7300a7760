"""ONNX's sequence and optional kernels bound straight to the list or numpy operation they
are (rules `onnx/node`, `onnx/sequences`).

A sequence is a Python list of arrays and an optional is the value it holds or None
(`onnx/sequences`). ONNX's reference kernels for these ops are a line or two each --
`seq[index]`, `len(seq)`, `list(data)`, `np.concatenate(seq, axis)` -- behind the layers of
dispatch every reference kernel has, and ConcatFromSequence with `new_axis` = 1 adds an axis
to each element by `np.expand_dims`, one call per element, before concatenating. Here the
same values are made directly: stacking is one numpy call, the others the list operation
itself. Each function takes the usual case -- a list, arrays of the kinds the operator names,
positions and axes within range -- and hands anything else to the node's slow call (the
reference kernel's, or lazyloop's own where the reference is wrong: SequenceInsert, Optional),
so that the value or the refusal is exactly that call's, never a new answer.

`stream/memo`: a list these kernels give is a new list; the arrays in it are the arrays they
were given (or views of them, SplitToSequence's pieces), never written. The kernels that put
arrays into a list say they may keep what they read (not `reads_only`), so the engine marks
those arrays read-only when it stores them, as it does for the reference kernels.
"""
from __future__ import annotations

from typing import Callable, Optional

import numpy as np

from ..core.errors import EvaluationError
from ..core.kernel import Kernel
from .numpy_kernels import with_single

_ndarray = np.ndarray
_WHOLE = slice(None)
_INT64 = np.int64
_integer = np.integer


def integral(x) -> bool:
    """Whether x is an integer array or numpy integer scalar (a Loop's iteration number is
    one), which the reference kernels read as Python reads an index."""
    return (x.__class__ is _ndarray or isinstance(x, _integer)) and x.dtype.kind in "iu"


def sequence_empty(attributes, slow, where):
    def single():
        """SequenceEmpty: a new empty list (its `dtype` names the type of the elements the
        list may later hold; no element has it yet)."""
        return []
    return single


def sequence_construct(attributes, slow, where):
    def single(*tensors):
        """SequenceConstruct: a new list of the inputs, in order, as they are."""
        return list(tensors)
    return single


def sequence_length(attributes, slow, where):
    def single(seq):
        """SequenceLength: the list's length as a 0-D int64 array (anything but a list:
        the reference refuses it)."""
        if seq.__class__ is list:
            return np.array(len(seq), _INT64)
        return slow(seq)[0]
    return single


def sequence_at(attributes, slow, where):
    def single(seq, position):
        """SequenceAt: the reference's `seq[position]` itself -- for a list, the element at
        an integer 0-D position (an array or numpy scalar) in [-n, n), negative counting
        from the end -- when it is an array; any position Python's indexing refuses, and an
        element that is not an array, the slow call's answer or refusal."""
        if seq.__class__ is list:
            try:
                value = seq[position]
            except (IndexError, TypeError):
                value = None
            if value.__class__ is _ndarray:
                return value
        return slow(seq, position)[0]
    return single


def sequence_insert(attributes, slow, where):
    def single(seq, tensor, *position):
        """SequenceInsert (lazyloop's kernel, `sequence_insert_kernel`): a new list with the
        tensor itself appended, or inserted before the element at an integer position in
        [-n, n] (n: at the end) -- what `list.insert` does for such positions; other
        positions (past either end, not integers), the slow call's answer or refusal."""
        if seq.__class__ is list:
            at = position[0] if position else None
            if at is None:
                return [*seq, tensor]
            if integral(at) and at.size == 1:
                at = at.item()
                if -len(seq) <= at <= len(seq):
                    longer = list(seq)
                    longer.insert(at, tensor)
                    return longer
        return slow(seq, tensor, *position)[0]
    return single


def concat_from_sequence(attributes, slow, where):
    """ConcatFromSequence: with `new_axis` = 0, the reference's `np.concatenate(seq, axis)`,
    the call itself; with `new_axis` = 1, `stacked`. An axis that is not an integer is
    left to the reference."""
    axis = attributes.get("axis")
    if not isinstance(axis, int):
        return None
    if attributes.get("new_axis", 0) == 1:
        return stacked(axis, slow)

    def single(seq):
        if seq.__class__ is list:
            try:
                return np.concatenate(seq, axis)
            except Exception:  # noqa: BLE001 -- the reference kernel reports it
                pass
        return slow(seq)[0]
    return single


def stacked(axis: int, slow):
    def single(seq):
        """ConcatFromSequence with `new_axis` = 1: the reference gives each element a new
        axis of length 1 at `axis` of the result's rank and concatenates along it, which
        succeeds only for elements of one shape, and then is `np.stack(seq, axis)` (what
        np.stack is); at axis 0, `np.array(seq)`, the same stack in one call. Elements of
        one shape and one dtype go this way; the empty list, other elements and an axis
        out of range go to the reference kernel."""
        if seq.__class__ is list and seq and seq[0].__class__ is _ndarray:
            first = seq[0]
            shape, dtype = first.shape, first.dtype
            for element in seq:
                if (element.__class__ is not _ndarray or element.shape != shape
                        or element.dtype != dtype):
                    break
            else:
                if axis == 0 or axis == -first.ndim - 1:
                    return np.array(seq)
                try:
                    return np.stack(seq, axis)
                except Exception:  # noqa: BLE001 -- an axis out of range: the reference's
                    pass
        return slow(seq)[0]
    return single


def split_to_sequence(attributes, slow, where):
    """SplitToSequence: the reference's pieces of the input along `axis` -- views of it,
    one per length of `lengths_of` in order -- and, with no split and keepdims = 0, each
    length-1 piece without the axis, which is the input indexed at that position along it
    (with `...` after it: a 0-D view, as the reference's reshape gives, never the numpy
    scalar a vector indexed by a position alone is). An input of rank 0, an axis out of
    range, and splits `lengths_of` does not read, go to the reference kernel."""
    axis, keepdims = attributes.get("axis", 0), attributes.get("keepdims", 1)
    if not isinstance(axis, int):
        return None

    def single(x, *split):
        if x.__class__ is _ndarray and -x.ndim <= axis < x.ndim:
            at = axis % x.ndim
            given = split[0] if split else None
            if given is not None and integral(given):
                refused = split_refused(given, x.shape[at])
                if refused:
                    raise EvaluationError(where, "onnx/sequences", refused,
                                          "give split lengths as SplitToSequence's text says")
            lengths = lengths_of(given, x.shape[at])
            if lengths is not None:
                if given is None and not keepdims:
                    places = [(k, ...) for k in range(x.shape[at])]
                else:
                    places, start = [], 0
                    for length in lengths:
                        places.append(slice(start, start + length))
                        start += length
                if at == 0:  # x[place] is x[(place,)]
                    return [x[place] for place in places]
                lead = (_WHOLE,) * at
                return [x[lead + (place if place.__class__ is tuple else (place,))]
                        for place in places]
        return slow(x, *split)[0]
    return single


def split_refused(split, dim: int) -> str:
    """Why SplitToSequence's operator text refuses an integer `split` of an axis of `dim`
    elements ("" where it does not): a 0-D split must be positive, a 1-D split's lengths may
    not be negative and must sum to the axis. ONNX's reference kernel slices such splits
    anyway (a split [4] of 5 elements gives one piece of 4, -1 an empty list, 0 a
    ZeroDivisionError) and onnxruntime refuses them: lazyloop refuses them, as the text
    does. (The text asks both "only positive numbers" and "all values >= 0": a 1-D length
    of 0 is read as the second says, an empty piece, as onnxruntime reads it.)"""
    if split.ndim == 0:
        return "" if int(split) > 0 else f"a scalar split must be positive, not {int(split)}"
    if split.ndim != 1:
        return ""  # the reference's refusal of a split of another rank
    lengths = split.tolist()
    if min(lengths, default=0) < 0:
        return f"split {lengths} has a negative length"
    if sum(lengths) != dim:
        return f"split {lengths} sums to {sum(lengths)}, not the axis' {dim} elements"
    return ""


def lengths_of(split, dim: int) -> Optional[list]:
    """The lengths of SplitToSequence's pieces of an axis of `dim` elements, for a split
    `split_refused` let through: no split, all 1; a 0-D integer k (positive), k each and
    what is left last; a 1-D list of integers (>= 0, summing to dim), those. None for any
    other split (not integers, another rank: the reference reads those its own way, or
    refuses them)."""
    if split is None:
        return [1] * dim
    if not integral(split):
        return None
    if split.ndim == 0:
        count, left = divmod(dim, int(split))
        return [int(split)] * count + ([left] if left else [])
    return split.tolist() if split.ndim == 1 else None


def optional(attributes, slow, where):
    def single(*held):
        """Optional (lazyloop's kernel, `optional_kernel`): the value it holds -- an array
        or a list -- itself, or None for the empty optional."""
        value = held[0] if held else None
        if value is None or value.__class__ is _ndarray or value.__class__ is list:
            return value
        return slow(*held)[0]
    return single


def optional_has_element(attributes, slow, where):
    def single(*optional):
        """OptionalHasElement: whether the optional (or the tensor or list standing for
        one) holds a value -- the reference's `np.array(x is not None)`; no input: false."""
        return np.array(bool(optional) and optional[0] is not None)
    return single


def optional_get_element(attributes, slow, where):
    def single(x):
        """OptionalGetElement: the held array or list itself; the empty optional (None),
        refused by the reference kernel, and other values go to it."""
        if x.__class__ is _ndarray or x.__class__ is list:
            return x
        return slow(x)[0]
    return single


#: op type -> (binder(attributes, slow, where) -> one-value function or None, whether the function
#: only reads its arguments, whether it may return one of them itself)
SEQUENCE_OPS = {
    "SequenceEmpty": (sequence_empty, True, False),
    "SequenceConstruct": (sequence_construct, False, False),
    "SequenceLength": (sequence_length, True, False),
    "SequenceAt": (sequence_at, True, False),
    "SequenceInsert": (sequence_insert, False, False),
    "ConcatFromSequence": (concat_from_sequence, True, False),
    "SplitToSequence": (split_to_sequence, False, False),
    "Optional": (optional, True, True),
    "OptionalHasElement": (optional_has_element, True, False),
    "OptionalGetElement": (optional_get_element, True, True)}


def sequence_kernel(op_type: str, attributes: dict, slow: Callable,
                    where: str) -> Optional[Kernel]:
    """The direct binding of a default-domain sequence or optional node, or None (`slow`:
    the node's call as bound without it, which every case the direct one does not take is
    handed to)."""
    entry = SEQUENCE_OPS.get(op_type)
    if entry is None:
        return None
    binder, reads_only, passes_input = entry
    single = binder(attributes, slow, where)
    if single is None:
        return None
    return with_single(single, where, reads_only=reads_only, passes_input=passes_input)
