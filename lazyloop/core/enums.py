"""Enumerations, with TensorRT's member names so tensorrt code runs unchanged."""
from enum import Enum


class TripLimit(Enum):
    COUNT = 0
    WHILE = 1


class LoopOutput(Enum):
    LAST_VALUE = 0
    CONCATENATE = 1
    REVERSE = 2


class ElementWiseOperation(Enum):
    SUM = 0
    PROD = 1
    MAX = 2
    MIN = 3
    SUB = 4
    DIV = 5
    POW = 6
    FLOOR_DIV = 7
    AND = 8
    OR = 9
    XOR = 10
    EQUAL = 11
    GREATER = 12
    LESS = 13


class UnaryOperation(Enum):
    EXP = 0
    LOG = 1
    SQRT = 2
    RECIP = 3
    ABS = 4
    NEG = 5
    SIN = 6
    COS = 7
    TAN = 8
    SINH = 9
    COSH = 10
    ASIN = 11
    ACOS = 12
    ATAN = 13
    ASINH = 14
    ACOSH = 15
    ATANH = 16
    CEIL = 17
    FLOOR = 18
    ERF = 19
    NOT = 20
    SIGN = 21
    ROUND = 22


class ActivationType(Enum):
    RELU = 0
    SIGMOID = 1
    TANH = 2
    LEAKY_RELU = 3
    ELU = 4
    SELU = 5
    SOFTSIGN = 6
    SOFTPLUS = 7
    CLIP = 8
    HARD_SIGMOID = 9
    SCALED_TANH = 10
    THRESHOLDED_RELU = 11


class MatrixOperation(Enum):
    NONE = 0
    TRANSPOSE = 1
    VECTOR = 2


class ReduceOperation(Enum):
    SUM = 0
    PROD = 1
    MAX = 2
    MIN = 3
    AVG = 4


class LayerType(Enum):
    CONSTANT = "constant"
    ELEMENTWISE = "elementwise"
    UNARY = "unary"
    ACTIVATION = "activation"
    MATRIX_MULTIPLY = "matrix_multiply"
    IDENTITY = "identity"
    SHUFFLE = "shuffle"
    SLICE = "slice"
    CONCATENATION = "concatenation"
    SELECT = "select"
    CAST = "cast"
    REDUCE = "reduce"
    GATHER = "gather"
    FUNCTION = "function"
    TRIP_LIMIT = "trip_limit"
    ITERATOR = "iterator"
    RECURRENCE = "recurrence"
    LOOP_OUTPUT = "loop_output"
    CONDITION = "condition"
    CONDITIONAL_INPUT = "conditional_input"
    CONDITIONAL_OUTPUT = "conditional_output"
