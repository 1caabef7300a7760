"""ONNX's own backend node cases that contain a Loop or a Scan node (anywhere: in the graph, in
a subgraph, in a model-local function) pass through `lazyloop.onnx.evaluate`, at each case's
own tolerance. rules: onnx/loop, onnx/scan9, onnx/scan8, onnx/node, onnx/if

The expected outputs are ONNX's (computed by its test generators), not lazyloop's.
"""
from __future__ import annotations

import warnings

import numpy as np
import onnx
import pytest

import lazyloop.onnx as lo

EXPECTED_CASES = 31


def has_loop_or_scan(graph) -> bool:
    for node in graph.node:
        if node.op_type in ("Loop", "Scan"):
            return True
        for a in node.attribute:
            if a.type == onnx.AttributeProto.GRAPH and has_loop_or_scan(a.g):
                return True
            if a.type == onnx.AttributeProto.GRAPHS and any(has_loop_or_scan(g) for g in a.graphs):
                return True
    return False


def load_cases():
    from onnx.backend.test.loader import load_node_model_tests

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # the case generators warn about their own numerics
        cases = load_node_model_tests()
    return [c for c in cases if has_loop_or_scan(c.model.graph)
            or any(has_loop_or_scan(f) for f in c.model.functions)]


CASES = load_cases()


def test_there_are_31_cases():
    assert len(CASES) == EXPECTED_CASES, sorted(c.name for c in CASES)


def assert_close(got, expected, rtol, atol, where):
    if expected is None:
        assert got is None, where
        return
    if isinstance(expected, list):
        assert isinstance(got, list) and len(got) == len(expected), f"{where}: {got!r}"
        for k, (g, e) in enumerate(zip(got, expected)):
            assert_close(g, e, rtol, atol, f"{where}[{k}]")
        return
    assert isinstance(got, np.ndarray), f"{where}: got {type(got).__name__}"
    assert got.dtype == expected.dtype, f"{where}: dtype {got.dtype} != {expected.dtype}"
    assert got.shape == expected.shape, f"{where}: shape {got.shape} != {expected.shape}"
    if expected.dtype.kind in "biuOSU":
        np.testing.assert_array_equal(got, expected, err_msg=where)
    else:
        np.testing.assert_allclose(got.astype(np.float64), expected.astype(np.float64),
                                   rtol=rtol, atol=atol, err_msg=where)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_backend_case(case):
    model = case.model
    for k, (inputs, expected) in enumerate(case.data_sets):
        feeds = {vi.name: value for vi, value in zip(model.graph.input, inputs)}
        got = lo.evaluate(model, feeds)
        assert list(got) == [o.name for o in model.graph.output]
        for name, e in zip(got, expected):
            assert_close(got[name], e, case.rtol, case.atol, f"{case.name} data set {k} {name}")
