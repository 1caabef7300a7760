"""The engines users deploy in the built-in backend table: each name resolves, a missing
package names the extra that brings it, adapters hand engines writable C-contiguous copies,
and the program kind made for counted-loop engines (`onnx-loop-m-cond`) draws only Loops
with both M and cond and no scan output, outside the default mix.

rules: onnx/loop
"""
import sys

import numpy as np
import pytest

from lazyloop.cli.common import missing_extra
from lazyloop.difftest import engines
from lazyloop.difftest.backends import BACKENDS
from lazyloop.difftest.feeding import in_engine_order, writable
from lazyloop.difftest.plugins import factory_of

ENGINES = {"iree": "iree", "mnn": "MNN", "onnxslim": "onnxslim", "onnxsim": "onnxsim",
           "onnxoptimizer": "onnxoptimizer"}  # backend name -> the module it needs


@pytest.mark.parametrize("name", sorted(ENGINES))
def test_each_engine_is_built_in(name):
    assert name in BACKENDS
    assert callable(factory_of(name))


@pytest.mark.parametrize("name, module", sorted(ENGINES.items()))
def test_a_missing_package_names_its_extra(monkeypatch, name, module):
    for loaded in [m for m in sys.modules if m == module or m.startswith(module + ".")]:
        monkeypatch.delitem(sys.modules, loaded)
    monkeypatch.setitem(sys.modules, module, None)  # as if it were not installed
    with pytest.raises(ModuleNotFoundError, match=rf"install lazyloop\[{name}\]"):
        getattr(engines, f"{name}_backend")()
    assert missing_extra(ImportError(name=module)).endswith(f"install lazyloop[{name}]")


def _model(*names, read=None):
    """An ONNX model declaring float inputs `names`, whose one node reads `read` (default:
    all of them)."""
    from onnx import TensorProto, helper
    read = names if read is None else read
    node = helper.make_node("Sum", list(read), ["y"])
    return helper.make_model(helper.make_graph(
        [node], "g", [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in names],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)]))


def test_engines_get_writable_c_contiguous_copies_of_every_input():
    feeds = {"a": np.arange(6, dtype=np.float32).reshape(2, 3).T, "b": np.array(2.0)}
    feeds["a"].flags.writeable = False
    given = in_engine_order(_model("a", "b"), ["b", "a"], feeds)  # in the engine's order
    assert [g.shape for g in given] == [(), (3, 2)]
    for g, name in zip(given, ["b", "a"]):
        assert g.flags.writeable and g.flags.c_contiguous
        assert np.array_equal(g, feeds[name]) and not np.shares_memory(g, feeds[name])
    assert writable(np.float32(1.5)).shape == ()


def test_an_input_the_engine_does_not_take_is_lost_not_skipped():
    import lazyloop.difftest as dt
    feeds = {"w": np.array(1.0), "v0": np.array(2.0)}
    with pytest.raises(dt.InputLost, match="the engine lost input `v0`"):
        in_engine_order(_model("w", "v0"), ["w"], feeds)
    with pytest.raises(dt.InputLost, match=r"asks for input \['u'\], which the model does not"):
        in_engine_order(_model("w", "v0"), ["w", "v0", "u"], feeds)  # an input it made up
    # an input nothing reads: an engine may leave it out, a graph optimiser may not
    unread = _model("w", "v0", read=["w"])
    assert len(in_engine_order(unread, ["w"], feeds)) == 1
    with pytest.raises(dt.InputLost, match="the engine lost input `v0`"):
        in_engine_order(unread, ["w"], feeds, unread_may_go=False)


def test_counted_loops_have_both_m_and_cond_and_no_scan_output():
    pytest.importorskip("hypothesis")
    from lazyloop.difftest.shrinking import draw_program
    from lazyloop.difftest.subject import subjects
    from lazyloop.strategies.dialects import ONNX_KINDS, dialect_kinds
    strategy = subjects(("onnx",), ["onnx-loop-m-cond"])
    for i in range(40):
        subject, _ = draw_program(strategy, 0, i)
        loop = next(n for n in subject.model().graph.node if n.op_type == "Loop")
        assert subject.kind == "onnx-loop-m-cond"
        assert loop.input[0] and loop.input[1]  # M and cond
        assert len(loop.output) == len(loop.input) - 2  # carried values only
        assert subject.program.recipe.opset >= 13
    assert dialect_kinds("onnx") == ONNX_KINDS  # the default mix does not draw them
    assert "onnx-loop-m-cond" in dialect_kinds("onnx", ["onnx-loop-m-cond"])


def test_engine_kinds_leave_out_what_the_engine_refuses():
    # rule: onnx/scan9 -- IREE converts Scan from opset 11 on: its Scans are drawn there;
    # MNN's If programs hold no 8-bit values (its 8-bit arithmetic fails outside any If)
    pytest.importorskip("hypothesis")
    from lazyloop.difftest.shrinking import draw_program
    from lazyloop.difftest.subject import subjects
    scans = subjects(("onnx",), ["onnx-scan11"])
    ifs = subjects(("onnx",), ["onnx-if-no-8bit"])
    for i in range(30):
        assert draw_program(scans, 0, i)[0].program.recipe.opset >= 11
        assert draw_program(ifs, 0, i)[0].program.recipe.dtype not in ("int8", "uint8")
