"""The graph optimisers people run before deploying, as backends: the model is optimised
with the tool's Python API and its default passes (what its command line does without
options), then run on onnxruntime's CPU execution provider.

- `onnxslim` (extra `[onnxslim]`): `onnxslim.slim(model)`;
- `onnxsim` (extra `[onnxsim]`): `onnxsim.simplify(model)` (no `check_n`, subgraphs left
  as they are: `include_subgraph=False`, its defaults);
- `onnxoptimizer` (extra `[onnxoptimizer]`): `onnxoptimizer.optimize(model)` (its fuse and
  elimination passes).

A loop the optimiser breaks is a finding of the optimiser; an optimiser that fails on a
valid model is a finding too (`LoadFailed`) unless it says it does not support something
(`Unsupported`). So is an optimised model that no longer takes an input the model declares
(`InputLost`): a program feeding it as the model says would be refused.
"""
from __future__ import annotations

from importlib.metadata import version

from ..backends import OnnxRuntimeBackend, _onnx_proto, refusal_or_failure
from ..feeding import in_engine_order, onnx_inputs


def slim(model):
    import onnxslim
    return onnxslim.slim(model)


def simplify(model):
    import onnxsim
    simplified, _ = onnxsim.simplify(model)  # without check_n nothing was checked
    return simplified


def optimize(model):
    import onnxoptimizer
    return onnxoptimizer.optimize(model)


# backend name -> (the distribution, its module, how it optimises a ModelProto)
OPTIMISERS = {"onnxslim": ("onnxslim", "onnxslim", slim),
              "onnxsim": ("onnxsim", "onnxsim", simplify),
              "onnxoptimizer": ("onnxoptimizer", "onnxoptimizer", optimize)}


class OptimisedOnnxRuntime:
    """Optimise the model with tool `name` (a key of `OPTIMISERS`), run it on onnxruntime."""

    format = "onnx"
    formats = ("onnx",)

    def __init__(self, name: str):
        import importlib
        distribution, module, self._optimise = OPTIMISERS[name]
        importlib.import_module(module)  # missing: the ImportError names the extra's module
        self.name = name
        self.runtime = OnnxRuntimeBackend()
        self.version = f"{version(distribution)} (onnxruntime {version('onnxruntime')})"

    def optimised(self, model):
        """The tool's optimisation of `model` (a ModelProto); its failure is `Unsupported`
        when it says it does not support something, else `LoadFailed`."""
        try:
            return self._optimise(_onnx_proto(model))
        except Exception as exc:
            raise refusal_or_failure(exc) from None

    def run(self, model, feeds):
        proto = _onnx_proto(model)
        optimised = self.optimised(proto)
        takes = onnx_inputs(optimised)[0]
        given = in_engine_order(proto, takes, feeds, unread_may_go=False)
        return self.runtime.run(optimised, dict(zip(takes, given)))

