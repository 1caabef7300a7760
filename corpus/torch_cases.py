"""The torch cases of the exporter corpus (see make_corpus.py): TorchScript loops exported by
torch's TorchScript-based ONNX exporter (`torch.onnx.export(..., dynamo=False)`)."""
from typing import List

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


CASES = [
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
