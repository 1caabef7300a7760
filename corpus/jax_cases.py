"""The jax cases of the exporter corpus (see make_corpus.py): `lax.fori_loop`, `lax.scan`,
`lax.while_loop` and `lax.cond` as jax2onnx writes them (a scan becomes a Loop with scan
outputs; `cond` inside a loop becomes an If in the Loop's body), and GRU/LSTM cells scanned
over time, in plain jax and with flax.linen."""
import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

F32, I32 = np.float32, np.int32


def weights(seed, *shapes):
    """Small fixed weights (baked into the model as constants), from a seed."""
    rng = np.random.default_rng(seed)
    return [jnp.asarray(rng.normal(0.0, 0.5, s).astype(F32)) for s in shapes]


# ---- fori_loop ----------------------------------------------------------------------------

def fori_buffer(x):
    """fori_loop(0, 6): row i of a buffer is x * i (dynamic_update_slice per trip)."""
    def body(i, state):
        buf, x = state
        row = (x * i.astype(F32))[None]
        return lax.dynamic_update_slice(buf, row, (i, 0)), x
    return lax.fori_loop(0, 6, body, (jnp.zeros((6, 3), F32), x))[0]


def while_counter(x, n):
    """while_loop counting to n (a model input), what fori_loop(0, n) means (jax2onnx's
    fori_loop wants static bounds): acc = acc * 0.5 + x."""
    def body(s):
        i, acc = s
        return i + 1, acc * 0.5 + x
    return lax.while_loop(lambda s: s[0] < n, body, (jnp.int32(0), jnp.zeros_like(x)))[1]


def fori_buffer_long(x):
    """fori_loop(0, 500) writing each trip's value into a [500, 2] buffer."""
    def body(i, state):
        buf, h, x = state
        h = jnp.tanh(h * 0.9 + x)
        return lax.dynamic_update_slice(buf, h[None], (i, 0)), h, x
    buf, h, _ = lax.fori_loop(0, 500, body, (jnp.zeros((500, 2), F32), jnp.zeros(2, F32), x))
    return buf, h


# ---- scan ---------------------------------------------------------------------------------

def scan_cumsum(xs):
    """lax.scan: running sum carried, every partial sum a scan output."""
    def step(c, x):
        c = c + x
        return c, c
    return lax.scan(step, jnp.zeros(xs.shape[1:], F32), xs)


def scan_flipped(xs):
    """Suffix sums by a scan over xs[::-1], flipped back (jax2onnx refuses reverse=True)."""
    def step(c, x):
        c = c + x
        return c, c * 2.0
    c, ys = lax.scan(step, jnp.zeros(xs.shape[1:], F32), xs[::-1])
    return c, ys[::-1]


def scan_many(xs, ys):
    """Several carried states (sum, product, count) and several scan outputs, over two
    scanned inputs."""
    def step(carry, xy):
        s, p, k = carry
        x, y = xy
        s, p, k = s + x * y, p * (1.0 + 0.1 * x), k + 1
        return (s, p, k), (s, p - y, k)
    init = (jnp.zeros(xs.shape[1:], F32), jnp.ones(xs.shape[1:], F32), jnp.int32(0))
    return lax.scan(step, init, (xs, ys))


def scan_long(freq):
    """A 10^4-step scan of width 2 whose inputs are made in the graph from `freq`:
    h = tanh(0.5 h + sin(t * freq)); every h is a scan output."""
    t = jnp.arange(10_000, dtype=F32)[:, None]
    xs = jnp.sin(t * freq[None, :])
    return lax.scan(lambda h, x: (jnp.tanh(h * 0.5 + x),) * 2, jnp.zeros(2, F32), xs)


def scan_length_only(x):
    """lax.scan with no scanned input (length=8): powers of a matrix applied to x."""
    a = jnp.array([[0.9, -0.2], [0.3, 0.8]], F32)
    return lax.scan(lambda h, _: (a @ h, h), x, None, length=8)


def scan_nested(xs):
    """A scan over rows whose step scans over the row's columns (a Loop in a Loop body)."""
    def row(c, r):
        inner, ys = lax.scan(lambda a, v: (a * 0.5 + v, a), c, r)
        return inner, ys
    return lax.scan(row, jnp.float32(0.0), xs)


def scan_matrix_carry(xs):
    """A matrix carried through a scan: running outer-product sum, its trace per step."""
    def step(m, x):
        m = m * 0.9 + jnp.outer(x, x)
        return m, jnp.trace(m)
    return lax.scan(step, jnp.zeros((xs.shape[1], xs.shape[1]), F32), xs)


# ---- while_loop ---------------------------------------------------------------------------

def while_halve(x):
    """while_loop on the carried value: halve until the sum is at most 1, counting trips."""
    def body(state):
        k, v = state
        return k + 1, v * 0.5
    return lax.while_loop(lambda s: jnp.sum(s[1]) > 1.0, body, (jnp.int32(0), x))


def while_newton(a):
    """Newton's iteration for sqrt(a) until the update is small, at most 50 trips."""
    def cond(s):
        k, y, dy = s
        return jnp.logical_and(k < 50, jnp.max(jnp.abs(dy)) > 1e-5)

    def body(s):
        k, y, _ = s
        nxt = 0.5 * (y + a / y)
        return k + 1, nxt, nxt - y
    return lax.while_loop(cond, body, (jnp.int32(0), a, jnp.ones_like(a)))


def while_nested(n):
    """Nested while loops: for i < n: for j < i: total += i * j (a Loop in a Loop body)."""
    def outer(s):
        i, total = s

        def inner(t):
            j, acc = t
            return j + 1, acc + i * j
        _, total = lax.while_loop(lambda t: t[0] < i, inner, (jnp.int32(0), total))
        return i + 1, total
    return lax.while_loop(lambda s: s[0] < n, outer, (jnp.int32(0), jnp.int32(0)))[1]


def while_collatz(x):
    """Collatz steps of each element (while_loop with a cond inside: an If in the body)."""
    def body(s):
        k, v = s
        v = lax.cond(v % 2 == 0, lambda u: u // 2, lambda u: 3 * u + 1, v)
        return k + 1, v
    return lax.while_loop(lambda s: s[1] != 1, body, (jnp.int32(0), x))[0]


# ---- cond inside loops --------------------------------------------------------------------

def cond_in_fori(x):
    """lax.cond in a fori_loop body: add x on even trips, subtract a half on odd ones."""
    def body(i, state):
        acc, x = state
        return lax.cond(i % 2 == 0, lambda a: a + x, lambda a: a - 0.5, acc), x
    return lax.fori_loop(0, 7, body, (jnp.zeros_like(x), x))[0]


def cond_in_scan(xs):
    """lax.cond in a scan step on the scanned value: a clipped running sum."""
    def step(c, x):
        c = lax.cond(jnp.sum(c + x) > 3.0, lambda a: a * 0.5, lambda a: a + x, c)
        return c, c
    return lax.scan(step, jnp.zeros(xs.shape[1:], F32), xs)


def nested_cond_in_scan(xs, k):
    """A lax.cond in a branch of a lax.cond in a scan step (If in an If in the Loop body;
    jax2onnx refuses lax.switch with more than two branches)."""
    def inner(a):
        return lax.cond(a[0] > 0, lambda b: b * 0.5, lambda b: -b, a)

    def step(c, x):
        c = lax.cond(k > 0, inner, lambda a: a + 1.0, c + x)
        return c, jnp.sum(c)
    return lax.scan(step, jnp.zeros(xs.shape[1:], F32), xs)


def top_cond(x):
    """lax.cond outside any loop (an If in the main graph)."""
    return lax.cond(jnp.sum(x) > 0, lambda v: jnp.cumsum(v), lambda v: v * v, x)


# ---- recurrent cells ----------------------------------------------------------------------

GRU_W = weights(1, (3, 12), (4, 12), (12,))
LSTM_W = weights(2, (3, 16), (4, 16), (16,))


def gru_scan(xs):
    """A plain-jax GRU cell (input 3, hidden 4) scanned over time."""
    wx, wh, b = GRU_W

    def cell(h, x):
        gx, gh = x @ wx + b, h @ wh
        r = jax.nn.sigmoid(gx[:4] + gh[:4])
        z = jax.nn.sigmoid(gx[4:8] + gh[4:8])
        n = jnp.tanh(gx[8:] + r * gh[8:])
        h = (1.0 - z) * n + z * h
        return h, h
    return lax.scan(cell, jnp.zeros(4, F32), xs)


def lstm_scan(xs):
    """A plain-jax LSTM cell (input 3, hidden 4) scanned over time: two carried states."""
    wx, wh, b = LSTM_W

    def cell(state, x):
        h, c = state
        g = x @ wx + h @ wh + b
        i, f, o = (jax.nn.sigmoid(g[k:k + 4]) for k in (0, 4, 8))
        c = f * c + i * jnp.tanh(g[12:])
        h = o * jnp.tanh(c)
        return (h, c), h
    return lax.scan(cell, (jnp.zeros(4, F32), jnp.zeros(4, F32)), xs)


def flax_scanned(cell_cls, seed):
    """A flax.linen cell (hidden 4) with initialised parameters, its `apply` scanned over
    time by lax.scan, batch 1 (jax2onnx fails to trace flax's own nn.RNN wrapper, and writes
    a Gemm of a rank-1 input, which ONNX's checker refuses, for an unbatched cell)."""
    cell = cell_cls(features=4)
    x0 = jnp.zeros((1, 3), F32)
    carry0 = cell.initialize_carry(jax.random.PRNGKey(0), x0.shape)
    params = cell.init(jax.random.PRNGKey(seed), carry0, x0)

    def fn(xs):
        return lax.scan(lambda c, x: cell.apply(params, c, x), carry0, xs)
    return fn


def flax_cases():
    import flax.linen as nn
    rng = np.random.default_rng(7)
    xs = rng.normal(size=(12, 1, 3)).astype(F32)
    return [("flax_gru", flax_scanned(nn.GRUCell, 3), {"xs": xs},
             "flax.linen GRUCell(4) scanned over 12 steps"),
            ("flax_lstm", flax_scanned(nn.LSTMCell, 4), {"xs": xs},
             "flax.linen LSTMCell(4) scanned over 12 steps")]


def seq(seed, *shape):
    return np.random.default_rng(seed).normal(size=shape).astype(F32)


CASES = [
    ("fori_buffer", fori_buffer, {"x": np.array([1.0, -2.0, 0.5], F32)},
     "fori_loop(0, 6) writing row i of a buffer (dynamic_update_slice)"),
    ("fori_buffer_long", fori_buffer_long, {"x": np.array([0.3, -0.2], F32)},
     "fori_loop(0, 500) writing a [500, 2] buffer, a recurrence carried too"),
    ("while_counter", while_counter,
     {"x": np.array([1.0, 2.0], F32), "n": np.array(9, I32)},
     "while_loop counting to n, a model input, with x read from outside"),
    ("scan_cumsum", scan_cumsum, {"xs": seq(1, 6, 2)},
     "lax.scan: running sum, carried and as scan output"),
    ("scan_flipped", scan_flipped, {"xs": seq(2, 5, 3)},
     "lax.scan over xs[::-1]: suffix sums"),
    ("scan_many", scan_many, {"xs": seq(3, 7, 2), "ys": seq(4, 7, 2)},
     "lax.scan with 3 carried states, 2 scanned inputs, 3 scan outputs"),
    ("scan_long", scan_long, {"freq": np.array([0.01, 0.003], F32)},
     "lax.scan of 10^4 steps, width 2, inputs made in the graph"),
    ("scan_length_only", scan_length_only, {"x": np.array([1.0, 0.0], F32)},
     "lax.scan(length=8) with no scanned input: matrix powers"),
    ("scan_nested", scan_nested, {"xs": seq(5, 4, 3)},
     "a scan whose step scans a row (Loop in a Loop body)"),
    ("scan_matrix_carry", scan_matrix_carry, {"xs": seq(6, 6, 3)},
     "a [3, 3] matrix carried through a scan, its trace per step"),
    ("while_halve", while_halve, {"x": np.array([7.0, 5.0], F32)},
     "while_loop on the carried value, counting trips"),
    ("while_newton", while_newton, {"a": np.array([2.0, 9.0, 0.25], F32)},
     "while_loop: Newton's sqrt until converged, at most 50 trips"),
    ("while_nested", while_nested, {"n": np.array(6, I32)},
     "nested while_loops (Loop in a Loop body)"),
    ("while_collatz", while_collatz, {"x": np.array(27, I32)},
     "while_loop with lax.cond in the body (If in a Loop body): Collatz steps of 27"),
    ("cond_in_fori", cond_in_fori, {"x": np.array([1.0, 2.0], F32)},
     "lax.cond on the trip parity in a fori_loop body"),
    ("cond_in_scan", cond_in_scan, {"xs": seq(7, 8, 2)},
     "lax.cond on the carried value in a scan step"),
    ("nested_cond_in_scan", nested_cond_in_scan, {"xs": seq(8, 6, 2), "k": np.array(1, I32)},
     "lax.cond in a lax.cond branch in a scan step"),
    ("top_cond", top_cond, {"x": np.array([1.0, -3.0, 4.0], F32)},
     "lax.cond outside loops (If in the main graph)"),
    ("gru_scan", gru_scan, {"xs": seq(9, 10, 3)},
     "plain-jax GRU cell (3 -> 4) scanned over 10 steps"),
    ("lstm_scan", lstm_scan, {"xs": seq(10, 10, 3)},
     "plain-jax LSTM cell (3 -> 4) scanned over 10 steps: two carried states"),
]

CASES += flax_cases()
