"""`python -m lazyloop.strategies.save_catalogue`: search the calls of every op at the schema
programs' opset and save the answer with the package (op_catalogue.py says when it is used)."""
from __future__ import annotations

from .onnx_op_search import defined_ops, search
from .onnx_schema_draw import SCHEMA_OPSET
from .op_catalogue import SAVED, write


def searched(opset: int) -> dict:
    """{op: its calls} for every op with at least one call at `opset`, searched afresh."""
    table = {op: search(op, opset) for op in defined_ops(opset)}
    return {op: calls for op, calls in table.items() if calls}


def main() -> None:
    write(SCHEMA_OPSET, searched(SCHEMA_OPSET))
    print(f"wrote {SAVED}")


if __name__ == "__main__":
    main()
