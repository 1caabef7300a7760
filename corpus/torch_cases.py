"""The torch cases of the exporter corpus (see make_corpus.py): TorchScript loops exported by
torch's TorchScript-based ONNX exporter (`torch.onnx.export(..., dynamo=False)`)."""
from typing import List, Optional

import numpy as np
import torch

F32, I64 = np.float32, np.int64


class CatLoop(torch.nn.Module):
    """A buffer grown with torch.cat on every trip (a decode loop's shape)."""

    def forward(self, x: torch.Tensor, n: torch.Tensor) -> torch.Tensor:
        y = x
        for i in range(int(n)):
            y = torch.cat([y, x * (i + 1)], dim=0)
        return y


class SumLoop(torch.nn.Module):
    """A fixed-shape carried value: acc = acc * 0.5 + x, n times."""

    def forward(self, x: torch.Tensor, n: torch.Tensor) -> torch.Tensor:
        acc = torch.zeros_like(x)
        for _ in range(int(n)):
            acc = acc * 0.5 + x
        return acc


class WhileLoop(torch.nn.Module):
    """A while loop on a tensor condition: double x until its sum reaches the limit."""

    def forward(self, x: torch.Tensor, limit: torch.Tensor) -> torch.Tensor:
        while bool(x.sum() < limit):
            x = x * 2
        return x


class StackList(torch.nn.Module):
    """A Python list appended to on every trip, stacked after the loop (sequence ops)."""

    def forward(self, x: torch.Tensor, n: torch.Tensor) -> torch.Tensor:
        outs: List[torch.Tensor] = []
        h = x
        for _ in range(int(n)):
            h = torch.tanh(h + 1.0)
            outs.append(h)
        return torch.stack(outs, dim=0)


class BreakLoop(torch.nn.Module):
    """A for loop left early with break."""

    def forward(self, x: torch.Tensor, n: torch.Tensor) -> torch.Tensor:
        for _ in range(int(n)):
            x = x + x
            if bool(x.sum() > 40.0):
                break
        return x


class ListOut(torch.nn.Module):
    """A list built in the loop (prepending with insert(0, ...)) is the model's output."""

    def forward(self, x: torch.Tensor, n: torch.Tensor) -> List[torch.Tensor]:
        outs: List[torch.Tensor] = []
        for i in range(int(n)):
            outs.insert(0, x * float(i))
        return outs


class OptionalCarry(torch.nn.Module):
    """An Optional[Tensor] that enters as None and is filled on the first trip."""

    def forward(self, x: torch.Tensor, n: torch.Tensor) -> torch.Tensor:
        y: Optional[torch.Tensor] = None
        for _ in range(int(n)):
            if y is None:
                y = x
            else:
                y = y * 2.0 + x
        if y is None:
            return torch.zeros_like(x)
        return y


class SplitLoop(torch.nn.Module):
    """torch.split into a list, the loop reads it back piece by piece."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        parts = torch.split(x, 2)
        acc = torch.zeros(2)
        for p in parts:
            acc = acc + p
        return acc


CASES = [
    ("list_out", ListOut(), {"x": np.array([1.0, 2.0], F32), "n": np.array(3, I64)},
     "a list built with insert(0, ...) per trip is the model's output"),
    ("optional_carry", OptionalCarry(), {"x": np.array([1.0, 3.0], F32),
                                         "n": np.array(3, I64)},
     "an Optional[Tensor] entering as None, filled on trip 0"),
    ("split_loop", SplitLoop(), {"x": np.arange(6, dtype=F32)},
     "torch.split into a list, summed by a loop over it"),
    ("cat_loop", CatLoop(), {"x": np.array([[1.0, 2.0]], F32), "n": np.array(3, I64)},
     "torch.cat grows a carried buffer per trip"),
    ("sum_loop", SumLoop(), {"x": np.array([1.0, -2.0, 4.0], F32), "n": np.array(5, I64)},
     "for loop with a fixed-shape carried value"),
    ("while_loop", WhileLoop(), {"x": np.array([1.0, 0.5], F32), "limit": np.array(20.0, F32)},
     "while loop on a tensor condition"),
    ("stack_list", StackList(), {"x": np.array([0.0, 1.0], F32), "n": np.array(3, I64)},
     "list.append per trip, torch.stack after the loop"),
    ("break_loop", BreakLoop(), {"x": np.array([1.0, 2.0], F32), "n": np.array(10, I64)},
     "for loop with break"),
]

# TorchScript declares cat_loop's carried body input with the first trip's static dims [1, 2]
# though torch.cat grows it (spec/50, EXP-3): checked under A17 "hint", as onnxruntime reads it
READINGS = {"cat_loop": {"A17": "hint"}}
