"""The torch dynamo cases of the exporter corpus (see make_corpus.py): torch's control-flow
operators (`torch.cond`, `while_loop`, `scan`) as `torch.onnx.export(..., dynamo=True)` writes
them: If, Loop (a while loop: trip count omitted, condition carried) and Scan. A plain Python
`for` is unrolled by torch.export, so it has no case here; torch 2.13's exporter refuses a
torch.cond inside a while_loop body (its inliner's opset check) and the `map` operator, so
those have none either. A case may end with the options given to `torch.onnx.export`."""
import numpy as np
import torch
from torch._higher_order_ops.scan import scan
from torch._higher_order_ops.while_loop import while_loop

F32, I64 = np.float32, np.int64


def seq(seed, *shape):
    return np.random.default_rng(seed).normal(size=shape).astype(F32)


class CondTop(torch.nn.Module):
    """torch.cond on the input's sum (an If in the main graph)."""

    def forward(self, x):
        return torch.cond(x.sum() > 0, lambda v: v.cumsum(0), lambda v: v * v, (x,))


class CondNested(torch.nn.Module):
    """torch.cond in a branch of torch.cond (an If in an If)."""

    def forward(self, x, y):
        def inner(v, w):
            return torch.cond(w.sum() > 0, lambda a, b: a + b, lambda a, b: a - b, (v, w))
        return torch.cond(x.sum() > 0, inner, lambda v, w: v * 0.0, (x, y))


class WhileCounter(torch.nn.Module):
    """while_loop counting to n: acc = acc * 0.5 + x."""

    def forward(self, x, n):
        def cond(i, acc):
            return i < n

        def body(i, acc):
            return i + 1, acc * 0.5 + x
        return while_loop(cond, body, (torch.zeros_like(n), torch.zeros_like(x)))


class WhileValue(torch.nn.Module):
    """while_loop on the carried value: triple x until its sum passes a limit."""

    def forward(self, x, limit):
        def cond(k, v):
            return v.sum() < limit

        def body(k, v):
            return k + 1, v * 3.0
        return while_loop(cond, body, (torch.tensor(0), x))


class WhileNested(torch.nn.Module):
    """while_loop in a while_loop body: sum of i * j for j < i < n."""

    def forward(self, n):
        def outer_cond(i, total):
            return i < n

        def outer_body(i, total):
            def inner_cond(j, acc):
                return j < i

            def inner_body(j, acc):
                return j + 1, acc + i * j
            _, total = while_loop(inner_cond, inner_body, (torch.zeros_like(i), total))
            return i + 1, total
        return while_loop(outer_cond, outer_body, (torch.zeros_like(n), torch.zeros_like(n)))


class ScanCumsum(torch.nn.Module):
    """scan: running sum carried, every partial sum doubled as a scan output."""

    def forward(self, xs):
        def step(c, x):
            c = c + x
            return c, c * 2.0
        return scan(step, torch.zeros(xs.shape[1:]), xs)


class ScanReverse(torch.nn.Module):
    """scan(reverse=True): suffix sums."""

    def forward(self, xs):
        def step(c, x):
            c = c + x
            return c, c.clone()
        return scan(step, torch.zeros(xs.shape[1:]), xs, reverse=True)


class ScanMany(torch.nn.Module):
    """scan with several carried states and scanned inputs and several scan outputs."""

    def forward(self, xs, ys):
        def step(carry, inputs):
            s, p = carry
            x, y = inputs
            s, p = s + x * y, p * (1.0 + 0.1 * x)
            return (s, p), (s.clone(), p - y, (s * p).sum(0, keepdim=True))
        return scan(step, (torch.zeros(xs.shape[1:]), torch.ones(xs.shape[1:])), (xs, ys))


class ScanCond(torch.nn.Module):
    """torch.cond on the carried value in a scan step (an If in a Scan body)."""

    def forward(self, xs):
        def step(c, x):
            c = torch.cond((c + x).sum() > 3.0, lambda a, b: a * 0.5, lambda a, b: a + b,
                           (c, x))
            return c, c.clone()
        return scan(step, torch.zeros(xs.shape[1:]), xs)


class ScanDynamic(torch.nn.Module):
    """scan over a time axis exported as dynamic (dim_param "T")."""

    def forward(self, xs):
        def step(c, x):
            c = c * 0.5 + x
            return c, c.clone()
        return scan(step, torch.zeros(xs.shape[1:]), xs)


class ScanOfWhile(torch.nn.Module):
    """A while_loop in a scan step (a Loop in a Scan body): per element, halvings until
    below 1."""

    def forward(self, xs):
        def step(total, x):
            def cond(k, v):
                return v.abs().sum() > 1.0

            def body(k, v):
                return k + 1, v * 0.5
            k, v = while_loop(cond, body, (torch.zeros((), dtype=torch.int64), x))
            return total + k, v.clone()
        return scan(step, torch.zeros((), dtype=torch.int64), xs)


class ScanLong(torch.nn.Module):
    """A 10^4-step scan of width 2 whose inputs are made in the graph from `freq`."""

    def forward(self, freq):
        t = torch.arange(10_000, dtype=torch.float32)[:, None]
        xs = torch.sin(t * freq[None, :])

        def step(h, x):
            h = torch.tanh(h * 0.5 + x)
            return h, h.clone()
        return scan(step, torch.zeros(2), xs)


class ScanCell(torch.nn.Module):
    """An nn.GRUCell or nn.LSTMCell (3 -> 4, batch 1) scanned over time."""

    def __init__(self, cell):
        super().__init__()
        torch.manual_seed(0)
        self.cell = cell

    def forward(self, xs):
        if isinstance(self.cell, torch.nn.LSTMCell):
            def step(state, x):
                h, c = self.cell(x, state)
                return (h, c), h.clone()
            return scan(step, (torch.zeros(1, 4), torch.zeros(1, 4)), xs)

        def step(h, x):
            h = self.cell(x, h)
            return h, h.clone()
        return scan(step, torch.zeros(1, 4), xs)


def cell(kind):
    torch.manual_seed(5)
    return ScanCell(kind(3, 4))


CASES = [
    ("cond_top", CondTop(), {"x": np.array([1.0, -3.0, 4.0], F32)},
     "torch.cond outside loops (If in the main graph)"),
    ("cond_nested", CondNested(), {"x": np.array([1.0, 2.0], F32),
                                   "y": np.array([-1.0, 0.5], F32)},
     "torch.cond in a branch of torch.cond"),
    ("while_counter", WhileCounter(), {"x": np.array([1.0, 2.0], F32), "n": np.array(7, I64)},
     "while_loop counting to n, reading x from outside"),
    ("while_value", WhileValue(), {"x": np.array([1.0, 0.5], F32),
                                   "limit": np.array(100.0, F32)},
     "while_loop on the carried value"),
    ("while_nested", WhileNested(), {"n": np.array(6, I64)},
     "while_loop in a while_loop body"),
    ("scan_cumsum", ScanCumsum(), {"xs": seq(11, 6, 2)},
     "scan: running sum, scan output"),
    ("scan_reverse", ScanReverse(), {"xs": seq(12, 5, 3)},
     "scan(reverse=True): suffix sums"),
    ("scan_many", ScanMany(), {"xs": seq(13, 7, 2), "ys": seq(14, 7, 2)},
     "scan with 2 carried states, 2 scanned inputs, 3 scan outputs"),
    ("scan_cond", ScanCond(), {"xs": seq(15, 8, 2)},
     "torch.cond on the carried value in a scan step"),
    ("scan_dynamic", ScanDynamic(), {"xs": seq(18, 9, 2)},
     "scan whose time axis is dynamic in the model", {"dynamic_shapes": {"xs": {0: "T"}}}),
    ("scan_of_while", ScanOfWhile(), {"xs": 8.0 * seq(19, 5, 2)},
     "a while_loop in a scan step"),
    ("scan_long", ScanLong(), {"freq": np.array([0.01, 0.003], F32)},
     "scan of 10^4 steps, width 2, inputs made in the graph"),
    ("scan_gru", cell(torch.nn.GRUCell), {"xs": seq(16, 10, 1, 3)},
     "nn.GRUCell (3 -> 4) scanned over 10 steps"),
    ("scan_lstm", cell(torch.nn.LSTMCell), {"xs": seq(17, 10, 1, 3)},
     "nn.LSTMCell (3 -> 4) scanned over 10 steps: two carried states"),
]
