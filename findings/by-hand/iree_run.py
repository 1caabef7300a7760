"""Run an ONNX model on IREE without lazyloop, as its documentation does it: the command
`iree-import-onnx` (with `--opset-version` left alone), `iree.compiler.tools.compile_file`
for llvm-cpu (float64 kept) and `iree.runtime` on local-sync. Inputs by position."""
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import onnx


def iree_run(model: onnx.ModelProto, feeds: list):
    import iree.compiler.tools as tools
    import iree.runtime as rt
    with tempfile.TemporaryDirectory() as tmp:
        path, mlir = os.path.join(tmp, "m.onnx"), os.path.join(tmp, "m.mlir")
        onnx.save(model, path)
        importer = os.path.join(os.path.dirname(sys.executable), "iree-import-onnx")
        done = subprocess.run([importer, path, "-o", mlir], capture_output=True, text=True)
        if done.returncode:
            return "import failed: " + done.stderr.strip().splitlines()[-1][:200]
        try:
            vmfb = tools.compile_file(mlir, target_backends=["llvm-cpu"], extra_args=[
                "--iree-llvmcpu-target-cpu=host", "--iree-input-demote-f64-to-f32=false"])
        except tools.CompilerToolError as exc:
            return compile_failure(str(exc))
    module = rt.load_vm_flatbuffer(vmfb, driver="local-sync")
    try:
        out = getattr(module, model.graph.name)(*[np.asarray(f) for f in feeds])
    except Exception as exc:
        return f"run failed: {type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
    out = out if isinstance(out, (tuple, list)) else (out,)
    return [declared(np.asarray(o.to_host() if hasattr(o, "to_host") else o), d)
            for o, d in zip(out, model.graph.output)]


def declared(value: np.ndarray, output) -> np.ndarray:
    """The runtime hands unsigned integers back as the signed type of their width (uint8 as
    int8): the same bits seen as the output's declared type."""
    dtype = onnx.helper.tensor_dtype_to_np_dtype(output.type.tensor_type.elem_type)
    if value.dtype.kind + dtype.kind in ("iu", "ui") and value.dtype.itemsize == dtype.itemsize:
        return value.view(dtype)
    return value


def compile_failure(text: str) -> str:
    """iree-compile's failure in one line: its first diagnostic (an `error:` or an `LLVM
    ERROR` line, not the stack dump's), and the signal when the compiler died of one."""
    code = next((l.split(":")[1].strip() for l in text.splitlines()
                 if l.startswith("Error code:")), "")
    died = {"-6": " (iree-compile died: SIGABRT)", "-11": " (iree-compile died: SIGSEGV)"}
    lines = [re.sub(r"^\S+\.mlir:\d+:\d+: ", "", l.strip()) for l in text.splitlines()
             if "error:" in l or l.startswith("LLVM ERROR")]
    return "compile failed" + died.get(code, "") + ": " + (lines[0] if lines else text)[:300]
