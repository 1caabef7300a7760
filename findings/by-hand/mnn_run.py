"""Run an ONNX model on MNN without lazyloop: MNN's converter as the `mnn` wheel builds it
(`_tools.mnnconvert`, never the `MNN.tools` wrapper, which installs packages and uploads
logs), then `MNN.nn.load_module_from_file` and `Module.forward`. Feeds are float32, int32
or uint8 arrays (what `MNN.expr.const` reads), by position."""
import os
import sys
import tempfile

import numpy as np
import onnx

sys.modules["MNN.tools"] = None  # never import the wrapper
import MNN.expr as F  # noqa: E402
import MNN.nn as nn  # noqa: E402
import _tools  # noqa: E402

KINDS = {np.dtype(np.float32): F.float, np.dtype(np.int32): F.int, np.dtype(np.uint8): F.uint8}


def mnn_run(model: onnx.ModelProto, feeds: list):
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = os.path.join(tmp, "m.onnx"), os.path.join(tmp, "m.mnn")
        onnx.save(model, src)
        _tools.mnnconvert(["mnnconvert", "-f", "ONNX", "--modelFile", src, "--MNNModel", dst,
                           "--bizCode", "byhand"])
        if not os.path.exists(dst):
            return "convert failed"
        module = nn.load_module_from_file(dst, [], [])
    given = [F.const(np.ascontiguousarray(f), list(np.shape(f)), F.NCHW, KINDS[np.asarray(f).dtype])
             for f in feeds]
    return [np.array(v.read()) for v in module.forward(given)]
