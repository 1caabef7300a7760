"""Drawing `OnnxSchemaRecipe`s: which ops, which of their calls, where each input comes
from and where each output goes, and the loop around them -- simplest first, so that
shrinking goes towards one call of a simple op, fed by carried values, in one Loop of one
trip.

Each call was checked alone by `onnx_ops` on the values a program feeds it. A program that
chains calls (an output read by a later call) or mixes fixed and moving inputs is checked
once more here, on the values of every trip it will run, with the same reference kernels;
where a value would not be finite, the chain is undone (every input read from a carried
value again, as checked), so every drawn program stays valid without rejecting a draw.
"""
from __future__ import annotations

import functools

import attrs
from hypothesis import strategies as st

from .onnx_op_search import catalogue, signatures
from .onnx_schema import BodyCall, OnnxSchemaRecipe
from .recipes import DialectProgram

SCHEMA_OPSET = 21
MAX_CALLS = 3


def _options_for_source(construct, call, k, port, earlier):
    """Where data input k may come from, simplest first."""
    options = ["step", "fixed"]
    if construct.startswith("scan"):
        options.insert(1, "scan")
    for j, bc in enumerate(earlier):
        for kk, (dtype, shape) in enumerate(bc.call.outputs):
            if dtype == port.dtype and shape == port.shape and port.domain == "any":
                options.append(f"prev:{j}:{kk}")
    return options


@functools.lru_cache(maxsize=None)
def calls_for(construct: str, opset: int):
    """{op: its calls} a body of `construct` may hold. A Scan's states and scan outputs
    keep one shape on every trip (the operator's text), so a Scan body holds only calls whose
    outputs' shapes do not depend on the values."""
    table = {}
    for op in catalogue(opset):
        calls = signatures(op, opset)
        if construct.startswith("scan"):
            calls = tuple(c for c in calls if all(c.static(k) for k in range(len(c.outputs))))
        if calls:
            table[op] = calls
    return table


@st.composite
def body_calls(draw, construct: str, opset: int = SCHEMA_OPSET):
    """1 to MAX_CALLS calls of ops from the catalogue, wired to their sources and sinks."""
    table = calls_for(construct, opset)
    calls = []
    for _ in range(draw(st.integers(1, MAX_CALLS))):
        # one span per call (no choice of its own): a shrinker lowering the count can delete
        # a whole call, any one of them
        calls.append(draw(_body_call(construct, table, tuple(calls))))
    return tuple(_everything_read(calls))


@st.composite
def _body_call(draw, construct: str, table, calls):
    op = draw(st.sampled_from(tuple(table)))
    call = draw(st.sampled_from(table[op]))
    sources = tuple(draw(st.sampled_from(_options_for_source(construct, call, k, p, calls)))
                    for k, p in call.data)
    sinks = tuple(draw(st.sampled_from(("scan", "carried", "both", "none")
                                       if call.static(k) else ("carried", "none")))
                  for k in range(len(call.outputs)))
    return BodyCall(call, sources, sinks)


def _everything_read(calls):
    """Every call has an output that leaves the body or feeds a later call (no dead calls:
    engines run them, the specification does not, so nothing would compare them)."""
    read = {(int(s.split(":")[1])) for bc in calls for s in bc.sources if s.startswith("prev")}
    out = []
    for j, bc in enumerate(calls):
        if j not in read and all(s == "none" for s in bc.sinks):
            first = "scan" if bc.call.static(0) else "carried"
            bc = attrs.evolve(bc, sinks=(first,) + bc.sinks[1:])
        out.append(bc)
    return out


@st.composite
def schema_recipes(draw, constructs, opset: int = SCHEMA_OPSET):
    construct = draw(st.sampled_from(constructs))
    calls = draw(body_calls(construct, opset))
    loop = construct.startswith("loop")
    recipe = OnnxSchemaRecipe(
        construct=construct, calls=calls, trips=draw(st.sampled_from((1, 2, 0, 3))),
        inner=draw(st.sampled_from((1, 2))) if construct == "loop-loop" else 1,
        m_source=draw(st.sampled_from(("const", "input"))) if loop else "const",
        cond=draw(st.sampled_from(("omit", "true"))) if loop else "omit",
        seed=draw(st.integers(0, 1)))
    return finite_or_unchained(recipe)


# ------------------------------------------------------------------------------------------
# Checking a drawn body on every trip it runs
# ------------------------------------------------------------------------------------------

def body_values_ok(recipe: OnnxSchemaRecipe) -> bool:
    """Whether every call, on every trip the program runs, gives finite values of the dtypes
    and (where fixed) the shapes its outputs declare (the reference kernels, as checked)."""
    return all(results is not None for _, _, _, results in recipe.call_values())


def finite_or_unchained(recipe: OnnxSchemaRecipe) -> OnnxSchemaRecipe:
    """The recipe if its body is fine on every trip; else the same calls each reading only
    carried values (or scan elements), as each call was checked alone; else its first call
    alone."""
    if body_values_ok(recipe):
        return recipe
    scan = recipe.construct.startswith("scan")
    alone = tuple(attrs.evolve(bc, sources=tuple("scan" if scan and s == "scan" else "step"
                                                 for s in bc.sources))
                  for bc in recipe.calls)
    unchained = attrs.evolve(recipe, calls=tuple(_everything_read(alone)))
    if body_values_ok(unchained):
        return unchained
    return attrs.evolve(unchained, calls=unchained.calls[:1])


# ------------------------------------------------------------------------------------------
# The program kinds
# ------------------------------------------------------------------------------------------

def onnx_schema_loops():
    """Loops whose bodies hold ops drawn from the schemas: alone, inside an If in the body,
    or inside an inner Loop (kind onnx-schema-loop)."""
    return schema_recipes(("loop", "loop-if", "loop-loop")).map(DialectProgram)


def onnx_schema_scans():
    """Scans whose bodies hold ops drawn from the schemas, alone or inside an If in the
    body (kind onnx-schema-scan)."""
    return schema_recipes(("scan", "scan-if")).map(DialectProgram)
