"""The ONNX models of the side-by-side section (`versus`): one small model per kind of loop
the issue on speed names, each with its feeds. Built with `onnx.helper`; onnx is needed.

Every builder returns ``(model, feeds)``; the feeds are fixed by a seed, so that every
evaluator sees the same values.
"""
from __future__ import annotations

import numpy as np

FLOAT, INT64, BOOL = 1, 7, 9  # onnx.TensorProto's element types


def _model(nodes, inputs, outputs, initializers=()):
    import onnx
    from onnx import helper

    graph = helper.make_graph(nodes, "versus", inputs, outputs, initializer=list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def _info(name, elem, shape):
    from onnx import helper
    return helper.make_tensor_value_info(name, elem, shape)


def _scalar(name, elem, value):
    from onnx import helper
    return helper.make_tensor(name, elem, [], [value])


def _array(name, value):
    from onnx import numpy_helper
    return numpy_helper.from_array(np.asarray(value), name)


def loop_body(nodes, carried, extra_outputs=(), tag=""):
    """A Loop body graph: inputs (i, cond_in, *carried), outputs (cond_out, *carried'),
    `carried` a list of (name, elem, shape); a carried `y` goes out as `y_out`. `tag`
    keeps the names of a nested body apart from its enclosing body's."""
    from onnx import helper
    inputs = [_info(f"i{tag}", INT64, []), _info(f"cond_in{tag}", BOOL, [])]
    inputs += [_info(f"{n}_in", e, s) for n, e, s in carried]
    outputs = [_info(f"cond_out{tag}", BOOL, [])]
    outputs += [_info(f"{n}_out", e, s) for n, e, s in carried] + list(extra_outputs)
    nodes = [helper.make_node("Identity", [f"cond_in{tag}"], [f"cond_out{tag}"])] + list(nodes)
    return helper.make_graph(nodes, "body", inputs, outputs)


def counter(trips):
    """A scalar counter: y = y + 1, M = trips (the exporters' usual for loop)."""
    from onnx import helper
    body = loop_body([helper.make_node("Add", ["y_in", "one"], ["y_out"])],
                     [("y", FLOAT, [])])
    model = _model([helper.make_node("Loop", ["M", "cond", "y0"], ["y"], body=body)],
                   [_info("y0", FLOAT, [])], [_info("y", FLOAT, [])],
                   [_scalar("M", INT64, trips), _scalar("cond", BOOL, True),
                    _scalar("one", FLOAT, 1.0)])
    return model, {"y0": np.array(0.0, np.float32)}


def ten_ops(trips):
    """A 10-op body on a carried [8] vector that reads the iteration number (so that it
    never reaches a fixed point): Cast(i), then Mul, Add, Sub, Max, Min, Abs, Neg, Add, Tanh
    (each value stays bounded)."""
    from onnx import helper
    ops = [("Mul", "a"), ("Add", "fi"), ("Sub", "a"), ("Max", "b"), ("Min", "fi"),
           ("Abs", None), ("Neg", None), ("Add", "b"), ("Tanh", None)]
    nodes, prev = [helper.make_node("Cast", ["i"], ["fi"], to=FLOAT)], "y_in"
    for k, (op, other) in enumerate(ops):
        out = "y_out" if k == len(ops) - 1 else f"t{k}"
        nodes.append(helper.make_node(op, [prev] + ([other] if other else []), [out]))
        prev = out
    body = loop_body(nodes, [("y", FLOAT, [8])])
    model = _model([helper.make_node("Loop", ["M", "cond", "y0"], ["y"], body=body)],
                   [_info("y0", FLOAT, [8])], [_info("y", FLOAT, [8])],
                   [_scalar("M", INT64, trips), _scalar("cond", BOOL, True),
                    _array("a", np.linspace(0.5, 0.9, 8, dtype=np.float32)),
                    _array("b", np.linspace(-0.1, 0.1, 8, dtype=np.float32))])
    return model, {"y0": np.linspace(-1, 1, 8, dtype=np.float32)}


def _scan(body, n_states, inputs, outputs, initializers=(), state_names=("s0",)):
    from onnx import helper
    node = helper.make_node("Scan", list(state_names[:n_states]) + ["x"],
                            [o.name for o in outputs], body=body, num_scan_inputs=1)
    return _model([node], inputs, outputs, initializers)


def cumsum(trips, width=4):
    """A cumulative-sum Scan: s = s + x_t, scan output s (prefix sums of the rows of x)."""
    from onnx import helper
    body = helper.make_graph(
        [helper.make_node("Add", ["s_in", "x_t"], ["s_out"]),
         helper.make_node("Identity", ["s_out"], ["y_t"])], "body",
        [_info("s_in", FLOAT, [width]), _info("x_t", FLOAT, [width])],
        [_info("s_out", FLOAT, [width]), _info("y_t", FLOAT, [width])])
    model = _scan(body, 1, [_info("s0", FLOAT, [width]), _info("x", FLOAT, [trips, width])],
                  [_info("s", FLOAT, [width]), _info("y", FLOAT, [trips, width])])
    rng = np.random.default_rng(0)
    return model, {"s0": np.zeros(width, np.float32),
                   "x": rng.standard_normal((trips, width)).astype(np.float32)}


def map_like(trips, width=16):
    """A map-like Scan: per row, y_t = Tanh(MatMul(x_t, W)); no state."""
    from onnx import helper
    body = helper.make_graph(
        [helper.make_node("MatMul", ["x_t", "W"], ["p"]),
         helper.make_node("Tanh", ["p"], ["y_t"])], "body",
        [_info("x_t", FLOAT, [width])], [_info("y_t", FLOAT, [width])])
    rng = np.random.default_rng(1)
    weights = (rng.standard_normal((width, width)) / width).astype(np.float32)
    model = _scan(body, 0, [_info("x", FLOAT, [trips, width])],
                  [_info("y", FLOAT, [trips, width])], [_array("W", weights)])
    return model, {"x": rng.standard_normal((trips, width)).astype(np.float32)}


def elementwise_map(trips, width=16):
    """An elementwise map over an iterator: y_t = Relu(Tanh(x_t * a + b) - c), no state."""
    from onnx import helper
    body = helper.make_graph(
        [helper.make_node("Mul", ["x_t", "a"], ["t0"]),
         helper.make_node("Add", ["t0", "b"], ["t1"]),
         helper.make_node("Tanh", ["t1"], ["t2"]),
         helper.make_node("Sub", ["t2", "c"], ["t3"]),
         helper.make_node("Relu", ["t3"], ["y_t"])], "body",
        [_info("x_t", FLOAT, [width])], [_info("y_t", FLOAT, [width])])
    model = _scan(body, 0, [_info("x", FLOAT, [trips, width])],
                  [_info("y", FLOAT, [trips, width])],
                  [_array("a", np.float32(0.5)), _array("b", np.float32(0.1)),
                   _array("c", np.float32(0.2))])
    rng = np.random.default_rng(2)
    return model, {"x": rng.standard_normal((trips, width)).astype(np.float32)}


def nested(outer, inner):
    """Nested Loops, `outer` x `inner` trips of a scalar add: the inner Loop adds 1 to its
    carried value; the outer one carries the running total through it."""
    from onnx import helper
    inner_body = loop_body([helper.make_node("Add", ["z_in", "one"], ["z_out"])],
                           [("z", FLOAT, [])], tag="_inner")
    outer_body = loop_body([helper.make_node("Loop", ["N", "true", "y_in"], ["y_out"],
                                             body=inner_body)], [("y", FLOAT, [])])
    model = _model([helper.make_node("Loop", ["M", "cond", "y0"], ["y"], body=outer_body)],
                   [_info("y0", FLOAT, [])], [_info("y", FLOAT, [])],
                   [_scalar("M", INT64, outer), _scalar("N", INT64, inner),
                    _scalar("cond", BOOL, True), _scalar("true", BOOL, True),
                    _scalar("one", FLOAT, 1.0)])
    return model, {"y0": np.array(0.0, np.float32)}


def lstm_like(steps, batch=4, hidden=32):
    """An LSTM-like Scan body: z = x_t @ Wx + h @ Wh + b; four gates sliced from z; c, h."""
    from onnx import helper
    H = hidden

    def gate(name, k, act):
        return [helper.make_node("Slice", ["z", f"st{k}", f"en{k}", "ax"], [f"{name}_z"]),
                helper.make_node(act, [f"{name}_z"], [name])]
    nodes = [helper.make_node("MatMul", ["x_t", "Wx"], ["zx"]),
             helper.make_node("MatMul", ["h_in", "Wh"], ["zh"]),
             helper.make_node("Add", ["zx", "zh"], ["zs"]),
             helper.make_node("Add", ["zs", "bias"], ["z"])]
    for k, (name, act) in enumerate([("i", "Sigmoid"), ("f", "Sigmoid"), ("g", "Tanh"),
                                     ("o", "Sigmoid")]):
        nodes += gate(name, k, act)
    nodes += [helper.make_node("Mul", ["f", "c_in"], ["fc"]),
              helper.make_node("Mul", ["i", "g"], ["ig"]),
              helper.make_node("Add", ["fc", "ig"], ["c_out"]),
              helper.make_node("Tanh", ["c_out"], ["tc"]),
              helper.make_node("Mul", ["o", "tc"], ["h_out"]),
              helper.make_node("Identity", ["h_out"], ["y_t"])]
    consts = [_array("ax", np.array([1], np.int64))]
    for k in range(4):
        consts += [_array(f"st{k}", np.array([k * H], np.int64)),
                   _array(f"en{k}", np.array([(k + 1) * H], np.int64))]
    rng = np.random.default_rng(3)
    consts += [_array("Wx", (rng.uniform(-.1, .1, (H, 4 * H))).astype(np.float32)),
               _array("Wh", (rng.uniform(-.1, .1, (H, 4 * H))).astype(np.float32)),
               _array("bias", (rng.uniform(-.1, .1, 4 * H)).astype(np.float32))]
    body = helper.make_graph(
        nodes, "body",
        [_info("h_in", FLOAT, [batch, H]), _info("c_in", FLOAT, [batch, H]),
         _info("x_t", FLOAT, [batch, H])],
        [_info("h_out", FLOAT, [batch, H]), _info("c_out", FLOAT, [batch, H]),
         _info("y_t", FLOAT, [batch, H])], initializer=consts)
    model = _scan(body, 2, [_info("h0", FLOAT, [batch, H]), _info("c0", FLOAT, [batch, H]),
                            _info("x", FLOAT, [steps, batch, H])],
                  [_info("h", FLOAT, [batch, H]), _info("c", FLOAT, [batch, H]),
                   _info("y", FLOAT, [steps, batch, H])], state_names=("h0", "c0"))
    return model, {"h0": np.zeros((batch, H), np.float32), "c0": np.zeros((batch, H), np.float32),
                   "x": rng.standard_normal((steps, batch, H)).astype(np.float32)}


def numpy_lstm_like(model, feeds):
    """The trips of `lstm_like`'s Scan written straight in numpy, the input products of all
    steps made in one call as the engine's batched MatMul makes them -- a stack of per-step
    products, each numpy's product of that step's rows (one product of all the stacked rows
    would be faster but sums in another order, so it is not the kernel's value): a floor for
    any evaluator whose products are numpy's. Returns a function of no arguments giving
    (h, c, y)."""
    from onnx import numpy_helper
    body = next(a.g for a in model.graph.node[0].attribute if a.name == "body")
    weights = {t.name: numpy_helper.to_array(t) for t in body.initializer}
    wx, wh, bias = weights["Wx"], weights["Wh"], weights["bias"]
    hidden = wh.shape[0]
    gates = [slice(k * hidden, (k + 1) * hidden) for k in range(4)]

    def sigmoid(v):
        return 1 / (1 + np.exp(-v))

    def trips():
        h, c, x = feeds["h0"], feeds["c0"], feeds["x"]
        inputs = np.matmul(x, wx)
        ys = []
        for zx in inputs:
            z = zx + h @ wh + bias
            i, f, g, o = (sigmoid(z[:, gates[0]]), sigmoid(z[:, gates[1]]),
                          np.tanh(z[:, gates[2]]), sigmoid(z[:, gates[3]]))
            c = f * c + i * g
            h = o * np.tanh(c)
            ys.append(h)
        return h, c, np.stack(ys)
    return trips


def fixed_point(trips=2 ** 63 - 1):
    """A Loop of M = `trips` whose carried value stops changing: y = Min(y + 1, 10); after
    ten trips y stays 10 for ever. The LAST_VALUE is 10 whatever M is past 10."""
    from onnx import helper
    body = loop_body([helper.make_node("Add", ["y_in", "one"], ["t"]),
                      helper.make_node("Min", ["t", "ten"], ["y_out"])], [("y", FLOAT, [])])
    model = _model([helper.make_node("Loop", ["M", "cond", "y0"], ["y"], body=body)],
                   [_info("y0", FLOAT, [])], [_info("y", FLOAT, [])],
                   [_scalar("M", INT64, trips), _scalar("cond", BOOL, True),
                    _scalar("one", FLOAT, 1.0), _scalar("ten", FLOAT, 10.0)])
    return model, {"y0": np.array(0.0, np.float32)}
