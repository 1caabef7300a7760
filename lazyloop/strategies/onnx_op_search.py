"""Searching the calls of each ONNX op that a loop body may hold: generate, then filter.

`catalogue(opset)` lists every op of the default domain that ONNX defines at that opset and
that has a kernel in ONNX's reference implementation (`onnx.reference.ops`), except those
`op_ranges.LEFT_OUT` names. `signatures(op, opset)` are the calls of one op a body may hold:
input types chosen from the schema's type constraints, data shapes, constant inputs and
attribute values tried simplest first (`op_ranges` supplies the ranges a schema does not
give), each kept only when ONNX's shape inference (`infer_node_outputs`) types its outputs
and the reference kernel, run on the values a program will feed it on every trip it may run,
returns finite values of those types (`onnx_ops.run_reference`).
"""
from __future__ import annotations

import functools
import itertools
from typing import Tuple

import attrs
import numpy as np

from . import op_ranges as R
from .op_catalogue import saved
from .onnx_ops import (DTYPES, TENSOR_TYPES, OpCall, Port, advance, freeze, port_values,
                       run_reference, step_of, tensor_type)

# the most type assignments and calls kept per op, and the candidates tried per assignment
MAX_ASSIGNMENTS, MAX_PER_ASSIGNMENT, MAX_TRIES = 8, 3, 40
TRIPS_CHECKED = 4     # a call is checked on the values of trips 0 to 3
SEEDS = (0, 1)        # and on both value patterns a program may feed


# ------------------------------------------------------------------------------------------
# Schemas
# ------------------------------------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def schema(op: str, opset: int):
    import onnx.defs
    try:
        s = onnx.defs.get_schema(op, opset, "")
    except Exception:  # noqa: BLE001 -- not defined at this opset
        return None
    return None if s.deprecated else s


@functools.lru_cache(maxsize=None)
def has_kernel(op: str, opset: int) -> bool:
    from onnx.reference.ops import load_op
    try:
        load_op("", op, opset)
    except Exception:  # noqa: BLE001 -- no kernel is an answer
        return False
    return True


def _allowed(s, type_str: str):
    """The drawn dtypes an input of type `type_str` may have, simplest first."""
    if type_str in TENSOR_TYPES:
        return [TENSOR_TYPES[type_str]]
    for c in s.type_constraints:
        if c.type_param_str == type_str:
            allowed = {TENSOR_TYPES[t] for t in c.allowed_type_strs if t in TENSOR_TYPES}
            return [d for d in DTYPES if d in allowed]
    return []


def _assignments(s, data_types, const_types):
    """Dtype assignments {type string: dtype}, simplest first: the first data input's
    constraint through each of its dtypes, the others at their first, then the others
    varied; constants' own constraints take their first dtype (int64 first)."""
    fixed = {t: _allowed(s, t)[0] for t in const_types if t not in data_types and _allowed(s, t)}
    if not data_types:
        return [fixed]
    choices = [_allowed(s, t) for t in data_types]
    if not all(choices):
        return []
    first = [dict(zip(data_types, [d] + [c[0] for c in choices[1:]])) for d in choices[0]]
    rest = [dict(zip(data_types, combo)) for combo in itertools.product(*choices)]
    seen, out = set(), []
    for a in first + rest:
        key = tuple(sorted(a.items()))
        if key not in seen:
            seen.add(key)
            out.append({**fixed, **a})
    return out[:MAX_ASSIGNMENTS]


def _attribute_sets(op, s, shapes):
    """Attribute dicts to try, simplest first: the hand-written ones (`op_ranges.ATTRS`),
    else none, then each generic value of one attribute, then pairs."""
    if op in R.ATTRS:
        return R.ATTRS[op](shapes)
    if any(a.required for a in s.attributes.values()):
        return []
    singles = [{name: v} for name in sorted(s.attributes) if name in R.GENERIC_ATTRS
               and name not in R.NEVER_ATTRS for v in R.attribute_values(op, name)]
    pairs = [{**a, **b} for a, b in itertools.combinations(singles, 2)
             if not set(a) & set(b)]
    return [{}] + singles + pairs[:4]


# ------------------------------------------------------------------------------------------
# Candidate calls
# ------------------------------------------------------------------------------------------

_PROBE = ((2, 3),)


def _const_names(op: str) -> set:
    """The inputs `op_ranges.CONSTS` makes constants (or optional data) for this op."""
    make = R.CONSTS.get(op)
    if make is None:
        return set()
    names = set()
    for shapes in R.SHAPES.get(op, [_PROBE]):
        for consts in make(shapes):
            names |= set(consts)
    return names


def _shape_grid(op: str, s, n_data: int):
    if op in R.SHAPES:
        return R.SHAPES[op]
    if op in R.NO_DATA or n_data == 0:
        return [()]
    if s.inputs and s.inputs[-1].option.name == "Variadic":
        return [(shape[0],) * n for shape in R.UNARY_SHAPES for n in (1, 2, 3)]
    return {1: R.UNARY_SHAPES, 2: R.BINARY_SHAPES, 3: R.TERNARY_SHAPES}.get(n_data, [])


def _ports(op, s, shapes, consts, assignment):
    """The input ports of one candidate (None when the schema and the candidate disagree)."""
    formal = list(s.inputs)
    variadic = bool(formal) and formal[-1].option.name == "Variadic"
    if variadic:
        formal = formal[:-1] + [formal[-1]] * max(1, len(shapes) - len(formal) + 1)
    domains = R.DOMAINS.get(op, {})
    ports, data = [], iter(shapes)
    for f in formal:
        dtype = assignment.get(f.type_str) or (_allowed(s, f.type_str) or [None])[0]
        if f.name in consts:
            v = consts[f.name]
            if v is None:
                ports.append(Port("none"))
            elif isinstance(v, R.Data):
                ports.append(Port("data", dtype, tuple(v.shape), domains.get(f.name, "any")))
            else:
                a = np.array(v, dtype)
                ports.append(Port("const", dtype, a.shape, value=freeze(a)))
        elif f.option.name == "Optional":
            ports.append(Port("none"))
        else:
            shape = next(data, None)
            if shape is None or dtype is None:
                return None
            ports.append(Port("data", dtype, tuple(shape), domains.get(f.name, "any")))
    if next(data, None) is not None:
        return None
    while ports and ports[-1].role == "none":
        ports.pop()
    return tuple(ports)


def candidates(op: str, opset: int):
    """Candidate calls of `op` (without outputs), simplest first, in groups: one list per
    dtype assignment."""
    s = schema(op, opset)
    consts_of = R.CONSTS.get(op, lambda shapes: [{}])
    const_names = _const_names(op)
    required = [f for f in s.inputs if f.option.name == "Single"]
    n_data = len([f for f in required if f.name not in const_names])
    if s.inputs and s.inputs[-1].option.name == "Variadic":
        n_data += 1
    data_types, const_types = [], []
    for f in s.inputs:
        target = const_types if f.name in const_names else data_types
        if f.type_str not in target:
            target.append(f.type_str)
    data_types = [t for t in data_types if t not in TENSOR_TYPES]
    groups = []
    for assignment in _assignments(s, data_types, const_types):
        group = []
        for shapes in _shape_grid(op, s, n_data):
            for consts in consts_of(shapes):
                for attributes in _attribute_sets(op, s, shapes):
                    ports = _ports(op, s, shapes, consts, assignment)
                    if ports is not None:
                        group.append((ports, tuple(sorted(
                            (k, freeze(v)) for k, v in attributes.items()))))
        groups.append(group)
    return groups


# ------------------------------------------------------------------------------------------
# Filtering: shape inference, then the reference kernel
# ------------------------------------------------------------------------------------------

def _n_outputs(op, s, ports, attributes) -> int:
    formal = list(s.outputs)
    if formal and formal[-1].option.name == "Variadic":
        consts = {f.name: p.value for f, p in zip(s.inputs, ports) if p.role == "const"}
        return R.output_count(op, consts, dict(attributes))
    required = len([f for f in formal if f.option.name == "Single"])
    return required + R.OPTIONAL_OUTPUTS.get(op, 0)


def infer_outputs(op, opset, ports, attributes, n_out):
    """[(dtype, shape)] of the outputs by ONNX's shape inference, or None when it refuses
    the call or cannot type an output."""
    import onnx.shape_inference as si
    from onnx import helper, numpy_helper
    names = [f"x{k}" if p.role != "none" else "" for k, p in enumerate(ports)]
    try:
        node = OpCall(op, opset, ports, attributes).node(names, [f"y{j}" for j in range(n_out)])
    except ValueError:  # an attribute value onnx.helper cannot type (an empty list)
        return None
    types = {n: helper.make_tensor_type_proto(tensor_type(p.dtype), list(p.shape))
             for n, p in zip(names, ports) if n}
    data = {n: numpy_helper.from_array(np.array(p.value, p.dtype)) for n, p in
            zip(names, ports) if p.role == "const"}
    try:
        out = si.infer_node_outputs(schema(op, opset), node, types, data)
    except Exception:  # noqa: BLE001 -- refused: the candidate is dropped
        return None
    result = []
    for j in range(n_out):
        t = out.get(f"y{j}")
        if t is None or not t.tensor_type.elem_type or not t.tensor_type.HasField("shape"):
            return None
        dtype = helper.tensor_dtype_to_np_dtype(t.tensor_type.elem_type).name
        if dtype not in DTYPES:
            return None
        dims = tuple(d.dim_value if d.HasField("dim_value") else None
                     for d in t.tensor_type.shape.dim)
        result.append((dtype, dims))
    return result


def run_checked(call: OpCall):
    """The call with its outputs' shapes settled (a dimension that changed between trips
    becomes None), or None: its reference kernel is run on the values of trips
    0..TRIPS_CHECKED-1 for every seed a program may use (`run_reference` says what fails)."""
    seen = [set() for _ in call.outputs]
    for seed in SEEDS:
        args = [port_values(p, k, seed) if p.role == "data" else
                np.array(p.value, p.dtype) if p.role == "const" else None
                for k, p in enumerate(call.inputs)]
        for _ in range(TRIPS_CHECKED):
            results = run_reference(call, args)
            if results is None:
                return None
            for j, r in enumerate(results[:len(call.outputs)]):
                seen[j].add(r.shape)
            args = [advance(a, step_of(p.dtype, p.domain)) if p.role == "data" else a
                    for a, p in zip(args, call.inputs)]
    outputs = tuple((dtype, tuple(d if len({s[i] for s in shapes}) == 1 else None
                                  for i, d in enumerate(dims)))
                    for (dtype, dims), shapes in zip(call.outputs, seen))
    return attrs.evolve(call, outputs=outputs)


@functools.lru_cache(maxsize=None)
def signatures(op: str, opset: int) -> Tuple[OpCall, ...]:
    """The valid calls of `op` at `opset`, simplest first (see the module docstring): the
    answer saved with the package where it was saved for this very search (op_catalogue),
    else searched."""
    table = saved(opset)
    if table is not None:
        return table.get(op, ())
    return search(op, opset)


def search(op: str, opset: int) -> Tuple[OpCall, ...]:
    """The valid calls of `op` at `opset`, searched: generated, then filtered."""
    s = schema(op, opset)
    if s is None or op in R.LEFT_OUT or not has_kernel(op, opset):
        return ()
    kept = []
    for group in candidates(op, opset):
        found = 0
        for ports, attributes in group[:MAX_TRIES]:
            rule = R.TEXT_RULES.get(op)
            if rule and not rule([p.dtype for p in ports], dict(attributes)):
                continue
            n_out = _n_outputs(op, s, ports, attributes)
            outputs = n_out and infer_outputs(op, opset, ports, attributes, n_out)
            if not outputs:
                continue
            call = run_checked(OpCall(op, opset, ports, attributes, tuple(outputs)))
            if call is not None and call not in kept:
                kept.append(call)
                found += 1
                if found == MAX_PER_ASSIGNMENT:
                    break
    return tuple(kept)


def defined_ops(opset: int):
    """Ops of the default domain defined at `opset` (not deprecated), by name."""
    import onnx.defs
    names = {s.name for s in onnx.defs.get_all_schemas_with_history() if s.domain == ""}
    return sorted(n for n in names if schema(n, opset) is not None)


@functools.lru_cache(maxsize=None)
def catalogue(opset: int) -> Tuple[str, ...]:
    """The ops a body may hold at `opset`, simplest first (fewest inputs, then by name)."""
    ops = [op for op in defined_ops(opset) if signatures(op, opset)]
    return tuple(sorted(ops, key=lambda op: (len(signatures(op, opset)[0].inputs), op)))


def left_out(opset: int) -> dict:
    """{op: why it is not drawn} for every op defined at `opset` that is not drawn."""
    why = {}
    for op in defined_ops(opset):
        if op in R.LEFT_OUT:
            why[op] = R.LEFT_OUT[op]
        elif not has_kernel(op, opset):
            why[op] = "no kernel in onnx.reference (a function op, expanded by evaluators)"
        elif not signatures(op, opset):
            why[op] = "no call found that shape inference and the reference kernel accept"
    return why
