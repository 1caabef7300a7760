"""lazyloop: the executable specification of loops in ML graph IRs.

TensorRT's formal semantics of loops, made executable: every tensor inside a loop is a
memoised lazy stream, boundary layers are stream combinators, trip limits decide how many
elements are forced. ONNX Loop/Scan and OpenVINO Loop-5 are lowered onto the same core.
"""
from .core.ambiguity import REGISTER as AMBIGUITIES
from .core.enums import (ActivationType, ElementWiseOperation, LayerType, LoopOutput,
                         MatrixOperation, ReduceOperation, TripLimit, UnaryOperation)
from .core.errors import (EvaluationError, FuelExhausted, InputError, IteratorOutOfBounds,
                          LazyLoopError, LengthTooShort, ModelError, NegativeTripCount, NeverEnds,
                          ShapeError, StreamShapeChanged, StructureError, UnsupportedError)
from .core.evaluate import Evaluation, ForceEvent, evaluate, run
from .core.network import Network
from .core.plan import compile_network
from .core.types import (OpaqueType, TensorType, bool, float16, float32, float64, int8, int16,
                         int32, int64, uint8)

__version__ = "0.2.0"

__all__ = [
    "AMBIGUITIES", "ActivationType", "ElementWiseOperation", "LayerType", "LoopOutput",
    "MatrixOperation", "ReduceOperation", "TripLimit", "UnaryOperation", "EvaluationError",
    "FuelExhausted", "InputError", "IteratorOutOfBounds", "LazyLoopError", "LengthTooShort",
    "ModelError", "NegativeTripCount", "NeverEnds", "ShapeError", "StreamShapeChanged", "StructureError",
    "UnsupportedError", "Evaluation", "ForceEvent", "evaluate", "run", "Network",
    "compile_network", "OpaqueType", "TensorType", "bool", "float16", "float32", "float64",
    "int8", "int16", "int32", "int64", "uint8",
]
