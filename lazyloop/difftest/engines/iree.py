"""IREE as a backend (`iree`, extra `[iree]`): the ONNX model is shape-inferred and imported
with IREE's own ONNX importer (`iree.compiler.extras.onnx_importer`, what
`iree-import-onnx` runs), compiled for `llvm-cpu` in this process (`iree.compiler.api`:
no `iree-compile` binary) and run with `iree.runtime` on the `local-sync` driver.

Conventions the adapter handles (each found by experiment, spec/51-difftest.md):
- float64 is kept: the compiler demotes f64 to f32 by default
  (`--iree-input-demote-f64-to-f32`), after which a float64 feed is refused at run time
  ("buffer view byte length 8 exceeds backing buffer byte length 4");
- unsigned integers come back as the signed type of their width (a uint8 output arrives
  as int8: 200 + 200 as -112): read back as the declared type;
- 0-D values travel as 0-D numpy arrays (IREE's VM refuses a Python number) and come back
  with shape [];
- inputs by position, in the order of the graph's inputs without initializers (the
  importer's function arguments); outputs by position, in the graph's output order.
"""
from __future__ import annotations

import re

import numpy as np

from ..backends import LoadFailed, Unsupported, _onnx_proto, says_unsupported
from ..feeding import in_engine_order

# the compiler's flags: the CPU it runs on, and float64 kept
COMPILE_FLAGS = ("--iree-hal-target-device=local",
                 "--iree-hal-local-target-device-backends=llvm-cpu",
                 "--iree-llvmcpu-target-cpu=host",
                 "--iree-input-demote-f64-to-f32=false")
# the first opset of the default domain from which IREE's ONNX import converts an op
FIRST_OPSET = {"Loop": 13, "Scan": 11}


class IreeBackend:
    """IREE (iree-base-compiler + iree-base-runtime): import, compile for llvm-cpu, run."""

    name = "iree"
    format = "onnx"
    formats = ("onnx",)
    # what it compiles: counted Loops, Scans from opset 11 on (bodies of any op too), If
    kinds = ("onnx-loop-m-cond", "onnx-scan11", "onnx-if", "onnx-scan-if", "onnx-schema-scan")

    def __init__(self):
        import iree.compiler.api  # noqa: F401 -- missing: the extra is not installed
        import iree.runtime as rt
        from importlib.metadata import version
        self._rt = rt
        self.version = version("iree-base-compiler")
        self._device = rt.get_driver("local-sync").create_default_device()

    def run(self, model, feeds):
        proto = _onnx_proto(model)
        refusals(proto)
        takes, bytecode = compile_onnx(proto)
        rt = self._rt
        context = rt.SystemContext(config=rt.Config(device=self._device))
        module = rt.VmModule.copy_buffer(context.instance, bytecode)
        context.add_vm_module(module)
        function = context.modules.module[entry(module.function_names, proto.graph.name)]
        results = function(*in_engine_order(proto, takes, feeds))
        if not isinstance(results, (tuple, list)):
            results = (results,)
        return {out.name: as_declared(value, out)
                for out, value in zip(proto.graph.output, results)}


def entry(names, graph_name: str) -> str:
    """The compiled function that runs the graph: named after it (the importer's function),
    else the one synchronous function the module exports (a name MLIR had to change)."""
    if graph_name in names:
        return graph_name
    public = [n for n in names if not n.startswith("__") and not n.endswith("$async")]
    if len(public) != 1:
        raise LoadFailed(f"iree: no compiled function for graph {graph_name!r} in {names}")
    return public[0]


def refusals(proto) -> None:
    """What IREE's ONNX import does not convert, refused before it is asked (its converter
    would leave the node unconverted: "failed to legalize operation 'torch.operator'"):
    a Loop below opset 13 or a Scan below opset 11 (no conversion is registered
    there); a Loop without both M and cond (`onnx/loop` rows (M, ""), ("", cond), ("", ""));
    a Loop with scan outputs."""
    opset = next((o.version for o in proto.opset_import if o.domain in ("", "ai.onnx")), 0)
    for node in _nodes(proto.graph):
        first = FIRST_OPSET.get(node.op_type, 0)
        if opset < first:
            raise Unsupported(f"iree: {node.op_type} is not supported below opset {first}")
        if node.op_type != "Loop":
            continue
        if not all(name for name in list(node.input[:2]) + [""] * (2 - len(node.input))):
            raise Unsupported("iree: a Loop without both M and cond is not supported")
        if len(node.output) > len(node.input) - 2:
            raise Unsupported("iree: a Loop with scan outputs is not supported")


def _nodes(graph):
    for node in graph.node:
        yield node
        for a in node.attribute:
            for g in ([a.g] if a.HasField("g") else []) + list(a.graphs):
                yield from _nodes(g)


def compile_onnx(proto):
    """(the input names the compiled function takes, in order; its VM bytecode). The model
    is shape-inferred as `iree-import-onnx` does, imported into MLIR and compiled; a failure
    is `Unsupported` when the compiler leaves an ONNX op unconverted or says it does not
    support something, else `LoadFailed` with its diagnostics."""
    import onnx
    from iree.compiler.api import Session
    try:
        proto = onnx.shape_inference.infer_shapes(proto, data_prop=True)
    except Exception as exc:
        raise LoadFailed(f"iree: ONNX shape inference failed: {exc}") from None
    session = Session()
    try:
        session.set_flags(*COMPILE_FLAGS)
        return _import_and_compile(session, proto)
    finally:
        session.close()  # before the Python objects of its MLIR context go


def _import_and_compile(session, proto):
    from iree.compiler.api import Output, Source
    from iree.compiler.extras import onnx_importer
    said = []
    session.context.enable_multithreading(False)
    session.context.attach_diagnostic_handler(lambda d: said.append(str(d.message)) or True)
    try:
        info = onnx_importer.ModelInfo(proto)
        module = info.create_module(context=session.context)
        onnx_importer.NodeImporter.define_function(info.main_graph, module.operation) \
            .import_all()
        takes = list(info.main_graph.input_map)
        text = module.operation.get_asm(binary=True)
        del module
    except Exception as exc:
        raise _failure("import", [f"{type(exc).__name__}: {exc}"] + said) from None
    # (importing the module into the invocation directly crashes iree 3.13: the bytecode
    # goes through a buffer instead)
    with session.invocation() as invocation:
        if not (invocation.parse_source(Source.wrap_buffer(session, text))
                and invocation.execute()):
            raise _failure("compile", said)
        with Output.open_membuffer() as output:
            invocation.output_vm_bytecode(output)
            return takes, bytes(output.map_memory())


_UNCONVERTED = re.compile(r"failed to legalize operation 'torch.operator'"
                          r".*?name = \"onnx\.(\w+)\"", re.DOTALL)


def _failure(stage: str, said) -> Exception:
    text = "; ".join(said[:3]) or "no diagnostics"
    left = _UNCONVERTED.search(text)
    if left:
        return Unsupported(f"iree {stage}: onnx.{left.group(1)} is not supported in this "
                           f"form (IREE's ONNX import left it unconverted)")
    text = f"iree {stage}: {text}"
    return Unsupported(text) if says_unsupported(Exception(text)) else LoadFailed(text)


def as_declared(value, out) -> np.ndarray:
    """An output as the ONNX graph declares it: IREE hands unsigned integers back as the
    signed type of their width (uint8 arrives as int8), read here as the declared type."""
    import onnx
    array = np.asarray(value.to_host() if hasattr(value, "to_host") else value)
    declared = onnx.helper.tensor_dtype_to_np_dtype(out.type.tensor_type.elem_type)
    if array.dtype != declared and array.dtype.itemsize == declared.itemsize \
            and array.dtype.kind in "iu" and declared.kind in "iu":
        array = array.view(declared)
    return array
