"""Non-control-flow ONNX nodes: ONNX's own reference kernels, bound once per node.

Rule `onnx/node`: every ONNX node that is not Loop, Scan or If is the reference kernel of
`onnx.reference.ops` for its domain, op type and opset, applied element-wise over the streams
of its inputs (`stream/map`). The kernel object is built once, when the node is lowered; a
call goes straight to its inner `_run` method with the node's attributes already resolved, so
nothing is re-validated per trip (DESIGN §7). lazyloop writes a kernel itself only where
the reference one is wrong (`OWN_KERNELS`: Optional, Softsign, SequenceInsert,
QLinearMatMul; QLinearConv on ConvInteger's kernel; OneHot's float indices and
NonMaxSuppression's scalar limits), and says why in spec/30. Sequence and optional nodes,
the reference's or its own, are bound to the list or numpy operation they are
(`sequence_kernels.py`), the usual cases only.
"""
from __future__ import annotations

import inspect
from typing import Callable, Optional

import attrs
import numpy as np

from ..core.errors import EvaluationError, LazyLoopError
from ..core.kernel import Kernel, elementwise, kernel_of
from ..core.result_types import of_ufunc
from .batched_kernels import batched_form, with_batched
from .numpy_kernels import as_arrays, attributes_of, direct, with_single
from .requantise import qlinear_conv, qlinear_matmul
from .sequence_kernels import sequence_kernel

_ndarray = np.ndarray

# Domains whose kernels live in onnx.reference.ops.<module>.load_op
_KERNEL_MODULES = {
    "": "onnx.reference.ops",
    "ai.onnx": "onnx.reference.ops",
    "ai.onnx.ml": "onnx.reference.ops.aionnxml",
    "ai.onnx.preview": "onnx.reference.ops.aionnx_preview",
    "ai.onnx.preview.training": "onnx.reference.ops.aionnx_preview_training",
    "experimental": "onnx.reference.ops.experimental",
}


def _quiet(*_args, **_kwargs):
    return None


def kernel_class(domain: str, op_type: str, version: int):
    """The reference kernel class, or None when onnx.reference has none for this op."""
    import importlib

    module = _KERNEL_MODULES.get(domain)
    if module is None:
        return None
    load_op = importlib.import_module(module).load_op
    try:
        return load_op("" if domain == "ai.onnx" else domain, op_type, version)
    except Exception:  # noqa: BLE001 -- "no kernel" is an answer here, not a failure
        return None


def as_value(x):
    """Kernels may return numpy scalars; the streams hold arrays (0-D for scalars)."""
    if isinstance(x, (_ndarray, list)) or x is None:
        return x
    if isinstance(x, (np.generic, bool, int, float, complex, str, bytes)):
        return np.array(x)
    return x


def _fix(results):
    return tuple(as_value(r) for r in results)


# ------------------------------------------------------------------------------------------
# The kernels lazyloop writes itself, because the reference one is wrong (spec/30, onnx/node)
# ------------------------------------------------------------------------------------------

def optional_kernel(x=None):
    """Optional(x): an optional holding x; Optional<type>() with no input: the empty optional.

    The reference kernel returns `[x]` (and `[None]` for the empty optional): it wraps the
    value in a list, so an optional tensor reads back as a one-element sequence and an empty
    optional counts as holding an element for its own OptionalHasElement (`x is not None`).
    lazyloop's values for optionals are the held value itself, or None."""
    return (x,)


def softsign_kernel(x):
    """Softsign(x) = x / (1 + |x|). The reference kernel computes it in place on |x|, which
    for a 0-D input is a numpy scalar, not an array, so it fails on every scalar."""
    return (np.asarray(x / (1 + np.abs(x)), dtype=x.dtype),)


def sequence_insert_kernel(seq, tensor, position=None):
    """SequenceInsert(S, T, position) (rule `onnx/sequences`): a new list, S unchanged, with T
    at `position`, which lies in [-n, n] for a list of n elements (negative counts from the
    end; n, or no position, appends). The reference kernel takes the position modulo n: it
    fails on the empty list and turns "append at n" into "prepend"."""
    n = len(seq)
    if position is None:
        at = n
    else:
        at = int(np.asarray(position).reshape(-1)[0])
        if not -n <= at <= n:
            raise ValueError(f"position {at} is outside [-{n}, {n}] for a sequence of {n}")
        at = at + n if at < 0 else at
    return (list(seq[:at]) + [tensor] + list(seq[at:]),)


def scalar_limits_as_vectors(fn: Callable) -> Callable:
    """NonMaxSuppression with its limits (max_output_boxes_per_class, iou_threshold,
    score_threshold: scalars by the operator's text) handed to the reference kernel as `[1]`:
    the kernel reads element 0 of each and fails on a 0-D one (spec/50, REF-10)."""
    def call(*args):
        return fn(*[np.reshape(a, (1,)) if k >= 2 and isinstance(a, _ndarray) and a.ndim == 0
                    else a for k, a in enumerate(args)])
    return call


def indices_as_int64(fn: Callable) -> Callable:
    """OneHot with its indices cast to int64 first, as the operator's text says for
    non-integer indices (-1.75 is -1, the last class); the reference kernel adds `depth` to
    negative float indices without the cast and then matches no class (spec/50, LL-1)."""
    def call(indices, *rest):
        if isinstance(indices, _ndarray) and indices.dtype.kind == "f":
            indices = indices.astype(np.int64)
        return fn(indices, *rest)
    return call


OWN_KERNELS = {("", "Optional"): optional_kernel, ("", "Softsign"): softsign_kernel,
               ("", "SequenceInsert"): sequence_insert_kernel,
               ("", "QLinearMatMul"): qlinear_matmul}


def bind(node, opsets: dict, where: str) -> Optional[Kernel]:
    """The node's kernel record -- its function: fn(*input values) -> tuple of output
    values -- or None when there is no reference kernel. The kernel is instantiated here,
    once (rule `onnx/node`)."""
    domain = node.domain or ""
    own = OWN_KERNELS.get(("" if domain == "ai.onnx" else domain, node.op_type))
    if own is not None:
        slow = _bound_call(own, {}, where)
        return sequence_kernel(node.op_type, {}, slow, where) or kernel_of(slow)
    version = opsets.get(domain, opsets.get("ai.onnx" if domain == "" else domain))
    cls = kernel_class(domain, node.op_type, version)
    if cls is None:
        return None
    run_params = {"log": _quiet, "opsets": opsets, "verbose": 0, "new_ops": None,
                  "existing_functions": {}, "evaluator_cls": None}
    kernel = cls(node, run_params)
    if getattr(kernel, "has_linked_attribute", False) or kernel.need_context():
        return None  # the caller resolves function attributes / subgraphs before binding
    if node.op_type == "QLinearConv" and domain in ("", "ai.onnx"):
        return kernel_of(_bound_call(qlinear_conv(conv_integer_like(node, version, run_params)),
                                     {}, where))
    slow = kernel_of(_bound_reference(kernel, where))
    if not takes_its_attributes(kernel):  # refused on every call: the reference's refusal
        return slow
    if domain == "ai.onnx.ml" and node.op_type in ML_DIRECT:
        return direct(node.op_type, len(node.input), slow.function, where, kernel) or slow
    if domain not in ("", "ai.onnx"):
        return slow
    sequence = sequence_kernel(node.op_type, attributes_of(kernel), slow.function, where)
    if sequence is not None:  # lists and optionals: onnx/sequences
        return sequence
    if node.op_type == "NonMaxSuppression":
        return kernel_of(scalar_limits_as_vectors(slow.function))
    if node.op_type == "OneHot":
        return kernel_of(indices_as_int64(slow.function))
    form = batched_form(node.op_type, len(node.input), kernel, slow.function)  # stream/map
    fast = direct(node.op_type, len(node.input), slow.function, where, kernel, form)
    if fast is not None:
        return fast
    if form is not None:
        return with_batched(slow.function, form)
    return attrs.evolve(slow, pure=node.op_type not in RANDOM_OPS)


#: ai.onnx.ml ops with a direct binding (`numpy_kernels.direct`)
ML_DIRECT = frozenset(("ArrayFeatureExtractor",))

#: default-domain ops whose reference kernel draws random values: not `pure`
RANDOM_OPS = frozenset(("RandomNormal", "RandomNormalLike", "RandomUniform",
                        "RandomUniformLike", "Multinomial", "Bernoulli", "Dropout"))


def conv_integer_like(node, version: int, run_params: dict) -> Callable:
    """The reference ConvInteger kernel's run, with `node`'s convolution attributes (a
    QLinearConv's accumulator: requantise.qlinear_conv)."""
    from onnx import helper

    conv = helper.make_node("ConvInteger", ["x", "w", "x_zero_point", "w_zero_point"], ["y"])
    conv.attribute.extend(node.attribute)
    return kernel_class("", "ConvInteger", version)(conv, run_params).run


def _bound_reference(kernel, where: str) -> Callable:
    """The reference kernel's call, through the fewest of its layers that keep its meaning."""
    runner = public_run_of(kernel)
    if runner.__module__ not in ("onnx.reference.op_run", "onnx.reference.ops._op"):
        return _bound_call(kernel.run, {}, where)
    fct = binary_numpy_function(kernel)
    if fct is not None:
        return _bound_binary(fct, where)
    if runner.__module__ == "onnx.reference.ops._op":
        return _bound_call(kernel._run, {}, where)
    attributes = {name: getattr(kernel, name) for name in kernel.attributes_names_}
    return _bound_call(kernel._run, attributes, where)


def public_run_of(kernel):
    """The class that defines the kernel's public `run`, which says how `_run` is called:

    - `OpRun.run` passes the node's attributes to `_run` as keywords;
    - the unary and binary bases of `onnx.reference.ops._op` (OpRunUnary, OpRunBinary and
      their Num variants) check dtypes, then call `_run` with the inputs only (the kernel reads
      its attributes from itself);
    - a kernel's own `run` (Max and Min, whose variadic form lives there and not in `_run`)
      is part of its semantics: lazyloop calls that `run`, as `_run` alone is wrong for one
      input or for more than two."""
    for klass in type(kernel).__mro__:
        if "run" in klass.__dict__:
            return klass
    return object


def takes_its_attributes(kernel) -> bool:
    """Whether the reference kernel's `_run` takes every attribute its `run` would pass it:
    `OpRun.run` passes all the node's attributes as keywords, so one the op's opset does
    not define (Shape's `end` before opset 15, Reshape's `allowzero` before 14, Split's
    `num_outputs` before 18) makes every call fail. Such a node is left to the reference
    kernel, whose refusal it is (`onnx/node`), not bound directly to an answer."""
    if public_run_of(kernel).__module__ != "onnx.reference.op_run":
        return True  # the unary and binary bases pass no attributes
    parameters = inspect.signature(kernel._run).parameters
    if any(p.kind is p.VAR_KEYWORD for p in parameters.values()):
        return True
    return set(getattr(kernel, "attributes_names_", ())) <= set(parameters)


def binary_numpy_function(kernel):
    """For the binary numpy kernels (Add, Sub, Mul, Div, Pow, ...) whose `_run` is exactly
    `(numpy_fct(a, b),)` followed by the scalar-to-array fix, the kernel's `numpy_fct`: the
    whole of what the kernel computes (its fix is applied by `_bound_binary`)."""
    from onnx.reference.ops._op import OpRunBinaryNumpy

    if isinstance(kernel, OpRunBinaryNumpy) and type(kernel)._run is OpRunBinaryNumpy._run:
        return kernel.numpy_fct
    return None


def _failed(where, exc):
    return EvaluationError(where, "onnx/node",
                           f"the reference kernel raised {type(exc).__name__}: {exc}",
                           "give the node input values its operator accepts (the kernel's "
                           "message says which it refused)")


def _bound_binary(fct, where: str) -> Callable:
    """The binary numpy kernel as one layer: `fct(a, b)`, its value an array (a numpy
    scalar made a 0-D one; by the ufunc itself where it takes `out=...`), numpy's error
    named as the node's (`onnx/node`)."""
    asarray = np.asarray
    ufunc = isinstance(fct, np.ufunc)
    if as_arrays(fct):
        def single(a, b):
            try:
                return fct(a, b, out=...)
            except Exception as exc:  # noqa: BLE001 -- reported as a typed error naming the node
                raise _failed(where, exc) from exc
    else:
        def single(a, b):
            try:
                r = fct(a, b)
            except Exception as exc:  # noqa: BLE001
                raise _failed(where, exc) from exc
            return r if type(r) is _ndarray else asarray(r)

    # per element it is fct(a, b), so batched it is too
    return with_single(single, where, reads_only=ufunc,
                       batched=elementwise(fct) if ufunc else None,
                       ufunc=fct if ufunc and fct.nin == 2 and fct.nout == 1 else None,
                       gives=of_ufunc(fct) if ufunc else None)


def not_a_tuple(run, res) -> TypeError:
    """The reference's refusal of a kernel answering something other than a tuple of outputs
    (`OpRun.run` checks it: GridSample and Col2Im answer a bare array for an empty batch).
    Its first element is never read as an answer: for a bare array that is its first row."""
    owner = getattr(run, "__self__", None)
    name = type(owner).__name__ if owner is not None else getattr(run, "__name__", "kernel")
    return TypeError(f"the kernel of {name} answered {type(res).__name__}, not a tuple of "
                     "outputs (ONNX's reference refuses such an answer)")


def _bound_call(run, attributes: dict, where: str) -> Callable:
    def failed(exc):
        return _failed(where, exc)

    if attributes:
        def call(*args):
            try:
                res = run(*args, **attributes)
            except LazyLoopError:
                raise
            except Exception as exc:  # noqa: BLE001 -- reported as a typed error naming the node
                raise failed(exc) from exc
            if res.__class__ is not tuple:
                raise failed(not_a_tuple(run, res))
            for r in res:
                if type(r) is not _ndarray:
                    return _fix(res)
            return res
    else:
        def call(*args):
            try:
                res = run(*args)
            except LazyLoopError:
                raise
            except Exception as exc:  # noqa: BLE001
                raise failed(exc) from exc
            if res.__class__ is not tuple:
                raise failed(not_a_tuple(run, res))
            for r in res:
                if type(r) is not _ndarray:
                    return _fix(res)
            return res
    call.__qualname__ = f"kernel[{where}]"
    return call


def strings_as_objects(fn: Callable, outputs) -> Callable:
    """ONNX string tensors are numpy object arrays (onnx.helper.tensor_dtype_to_np_dtype);
    some reference kernels return fixed-width unicode arrays instead. For a node with string
    outputs (positions `outputs`), those become object arrays, so that every element of a
    string stream has the one dtype the stream declares (`structure/shapes`)."""
    def call(*args):
        res = fn(*args)
        if any(isinstance(res[k], _ndarray) and res[k].dtype.kind == "U" for k in outputs
               if k < len(res)):
            res = tuple(r.astype(object) if k in outputs and isinstance(r, _ndarray)
                        and r.dtype.kind == "U" else r for k, r in enumerate(res))
        return res

    return call
