"""The distinct faults of IREE (spec/50, "Engines users deploy"), each shown without
lazyloop: a model built by hand, run on IREE (`iree_run.py`: iree-import-onnx, llvm-cpu,
iree.runtime), on onnxruntime and on ONNX's reference evaluator, beside the answer
computed by hand with numpy.
Needs numpy, onnx, onnxruntime, iree-base-compiler and iree-base-runtime."""
import numpy as np
import onnxruntime as ort
from onnx import TensorProto as T
from onnx import helper as h

from common import model, on_ort, on_reference, shown
from common import value as v
from iree_run import iree_run

F = T.FLOAT


def const(name, x):
    return h.make_node("Constant", [], [name], value=h.make_tensor(name + "_v", F, [], [x]))


def scan_identity(shape, elem=F, **attrs):
    """Scan 11 over x (of `shape`, scanned on axis 0) whose body passes each element out:
    y = x in scan order."""
    body = h.make_graph([h.make_node("Identity", ["e"], ["o"])], "body",
                        [v("e", elem, shape[1:])], [v("o", elem, shape[1:])])
    return model([h.make_node("Scan", ["x"], ["y"], body=body, num_scan_inputs=1, **attrs)],
                 [v("x", elem, shape)], [v("y", elem, shape)], 11)


def iree_1():
    """scan_output_directions = [1]: the stacked output must be in reverse order."""
    x = np.array([1, 2, 3], np.float32)
    return scan_identity([3], scan_output_directions=[1]), [x], [x[::-1]]


def iree_2():
    """scan_input_directions = [1]: elements must be read from the end; the body's state
    s' = 2 s + e tells the orders apart."""
    body = h.make_graph([const("two", 2.0),
                         h.make_node("Mul", ["s", "two"], ["s2"]),
                         h.make_node("Add", ["s2", "e"], ["s_next"])], "body",
                        [v("s", F, []), v("e", F, [])], [v("s_next", F, [])])
    m = model([h.make_node("Scan", ["s0", "x"], ["s_final"], body=body, num_scan_inputs=1,
                           scan_input_directions=[1])],
              [v("s0", F, []), v("x", F, [3])], [v("s_final", F, [])], 11)
    x, s = np.array([1, 2, 3], np.float32), np.float32(0)
    for e in x[::-1]:
        s = 2 * s + e
    return m, [np.array(0, np.float32), x], [np.array(s)]


def iree_3():
    """Loop(M=1, cond=false): cond is false on entry, so the body never runs and the
    carried value comes out as it went in."""
    body = h.make_graph([h.make_node("Identity", ["c"], ["c_out"]),
                         const("half", 0.5),
                         h.make_node("Mul", ["a", "half"], ["a_next"])], "body",
                        [v("i", T.INT64, []), v("c", T.BOOL, []), v("a", F, [])],
                        [v("c_out", T.BOOL, []), v("a_next", F, [])])
    m = model([h.make_node("Loop", ["M", "cond", "a0"], ["a_final"], body=body)],
              [v("M", T.INT64, []), v("cond", T.BOOL, []), v("a0", F, [])],
              [v("a_final", F, [])], 13)
    return m, [np.array(1, np.int64), np.array(False), np.array(-1, np.float32)], \
        [np.array(-1, np.float32)]


def iree_4(n=1):
    """A Scan over a length-1 input: its stacked scan output comes back as zeros, whatever
    the body -- here an If on int8 values, Add(e, e) of 5 is 10 and IREE gives 0 (the same
    If alone, outside the Scan, gives 10). Over two elements (n=2) the model answers right."""
    i8 = T.INT8
    then = h.make_graph([h.make_node("Add", ["e", "e"], ["t"])], "then", [], [v("t", i8, [])])
    other = h.make_graph([h.make_node("Mul", ["e", "e"], ["u"])], "else", [], [v("u", i8, [])])
    body = h.make_graph([h.make_node("Cast", ["e"], ["ef"], to=F), const("zero", 0.0),
                         h.make_node("Greater", ["ef", "zero"], ["p"]),
                         h.make_node("If", ["p"], ["y"], then_branch=then, else_branch=other)],
                        "body", [v("e", i8, [])], [v("y", i8, [])])
    m = model([h.make_node("Scan", ["x"], ["ys"], body=body, num_scan_inputs=1)],
              [v("x", i8, [n])], [v("ys", i8, [n])], 21)
    x = np.array([5, 3][:n], np.int8)
    return m, [x], [x + x]


def iree_4_float():
    """IREE-4 with the simplest body: a float Scan of Identity over one element gives 0."""
    x = np.array([1.5], np.float32)
    return scan_identity([1]), [x], [x]


def iree_5():
    """A Loop's output declared [?, ?] while its carried value is [1, 3] (valid: the
    declaration may be less precise): the compile fails ("unresolved materialization")."""
    body = h.make_graph([h.make_node("Identity", ["c"], ["c_out"]),
                         h.make_node("Neg", ["b"], ["b_next"])], "body",
                        [v("i", T.INT64, []), v("c", T.BOOL, []), v("b", F, [1, 3])],
                        [v("c_out", T.BOOL, []), v("b_next", F, [1, 3])])
    m = model([h.make_node("Loop", ["M", "cond", "b0"], ["b_final"], body=body)],
              [v("M", T.INT64, []), v("cond", T.BOOL, []), v("b0", F, [1, 3])],
              [v("b_final", F, [None, None])], 13)
    return m, [np.array(1, np.int64), np.array(True), np.ones([1, 3], np.float32)], \
        [-np.ones([1, 3], np.float32)]


def iree_6():
    """A Loop whose body computes its condition (i + 1 < 3) and whose cond is a graph
    input: the compile fails ("null operand found"); with cond a constant true it works.
    M = 5: three trips, so a = -a three times."""
    body = h.make_graph([h.make_node("Constant", [], ["one"], value=h.make_tensor("o", T.INT64, [], [1])),
                         h.make_node("Constant", [], ["stop"], value=h.make_tensor("s", T.INT64, [], [3])),
                         h.make_node("Add", ["i", "one"], ["i1"]),
                         h.make_node("Less", ["i1", "stop"], ["c_out"]),
                         h.make_node("Neg", ["a"], ["a_next"])], "body",
                        [v("i", T.INT64, []), v("c", T.BOOL, []), v("a", F, [])],
                        [v("c_out", T.BOOL, []), v("a_next", F, [])])
    m = model([h.make_node("Loop", ["M", "cond", "a0"], ["a_final"], body=body)],
              [v("M", T.INT64, []), v("cond", T.BOOL, []), v("a0", F, [])],
              [v("a_final", F, [])], 19)
    return m, [np.array(5, np.int64), np.array(True), np.array(1, np.float32)], \
        [np.array(-1, np.float32)]


def iree_9():
    """A Loop(M = 5, cond = constant true) whose body's condition turns false after the
    second trip (i + 1 < 2): two trips halve 1 to 0.25; IREE runs all five (0.03125)."""
    body = h.make_graph([h.make_node("Constant", [], ["one"], value=h.make_tensor("o", T.INT64, [], [1])),
                         h.make_node("Constant", [], ["stop"], value=h.make_tensor("s", T.INT64, [], [2])),
                         h.make_node("Add", ["i", "one"], ["i1"]),
                         h.make_node("Less", ["i1", "stop"], ["c_out"]),
                         const("half", 0.5), h.make_node("Mul", ["a", "half"], ["a_next"])], "body",
                        [v("i", T.INT64, []), v("c", T.BOOL, []), v("a", F, [])],
                        [v("c_out", T.BOOL, []), v("a_next", F, [])])
    m = model([h.make_node("Constant", [], ["cond"], value=h.make_tensor("cv", T.BOOL, [], [True])),
               h.make_node("Loop", ["M", "cond", "a0"], ["a_final"], body=body)],
              [v("M", T.INT64, []), v("a0", F, [])], [v("a_final", F, [])], 19)
    return m, [np.array(5, np.int64), np.array(1, np.float32)], [np.array(0.25, np.float32)]


def iree_7():
    """scan_output_axes = [1]: the stacked output is the elements side by side (x
    transposed); IREE gives zeros."""
    body = h.make_graph([h.make_node("Identity", ["e"], ["o"])], "body",
                        [v("e", F, [2])], [v("o", F, [2])])
    m = model([h.make_node("Scan", ["x"], ["y"], body=body, num_scan_inputs=1,
                           scan_output_axes=[1])],
              [v("x", F, [3, 2])], [v("y", F, [2, 3])], 11)
    x = np.arange(6, dtype=np.float32).reshape(3, 2)
    return m, [x], [x.T]


def iree_8():
    """A zero-length Scan over axis 1 (x of shape [2, 0]): no trip, the state comes out as
    it went in; the compile fails ("unresolved target materialization"). Over axis 0 it
    works."""
    body = h.make_graph([h.make_node("Add", ["s", "e"], ["s_next"])], "body",
                        [v("s", F, [2]), v("e", F, [2])], [v("s_next", F, [2])])
    m = model([h.make_node("Scan", ["s0", "x"], ["s_final"], body=body, num_scan_inputs=1,
                           scan_input_axes=[1])],
              [v("s0", F, [2]), v("x", F, [2, 0])], [v("s_final", F, [2])], 11)
    s0 = np.array([1.5, 2], np.float32)
    return m, [s0, np.zeros([2, 0], np.float32)], [s0]


def iree_10(to=np.uint16):
    """A Scan whose scan output is uint16 (or uint64): each float element cast to the type
    and stacked, y = x; the compiler aborts ("Unhandled type in getScalarTypeForType: ui16")
    while converting the Scan. uint8 and uint32 scan outputs compile (`to=np.uint8`)."""
    elem = h.np_dtype_to_tensor_dtype(np.dtype(to))
    body = h.make_graph([h.make_node("Cast", ["e"], ["o"], to=elem)], "body",
                        [v("e", F, [])], [v("o", elem, [])])
    m = model([h.make_node("Scan", ["x"], ["y"], body=body, num_scan_inputs=1)],
              [v("x", F, [3])], [v("y", elem, [3])], 21)
    return m, [np.array([1, 2, 3], np.float32)], [np.array([1, 2, 3], to)]


def iree_10_state():
    """IREE-10's control: uint16 scanned in and carried as a state (s' = s + e), with no
    scan output, compiles and answers right (1 + 1 + 2 + 3 = 7)."""
    u16 = T.UINT16
    body = h.make_graph([h.make_node("Add", ["s", "e"], ["s_next"])], "body",
                        [v("s", u16, []), v("e", u16, [])], [v("s_next", u16, [])])
    m = model([h.make_node("Scan", ["s0", "x"], ["s_final"], body=body, num_scan_inputs=1)],
              [v("s0", u16, []), v("x", u16, [3])], [v("s_final", u16, [])], 21)
    return m, [np.array(1, np.uint16), np.array([1, 2, 3], np.uint16)], \
        [np.array(7, np.uint16)]


def iree_11(dtype=np.uint8):
    """A Scan over a zero-length axis 0 (x of shape [0, 2]) whose body passes its element
    out: no trip, y is empty [0, 2]. On uint8 (or uint32) the compile fails ("inferred
    type(s) '...si8>' are incompatible with return type(s) '...ui8>'"); on int8 or float
    it works (`dtype=np.int8`)."""
    elem = h.np_dtype_to_tensor_dtype(np.dtype(dtype))
    return scan_identity([0, 2], elem), [np.zeros([0, 2], dtype)], [np.zeros([0, 2], dtype)]


def iree_11_constant(fed=False):
    """IREE-11 without a loop: an output that is a uint8 constant (Constant [1, 2] through
    Identity) fails to compile the same way; added to a graph input it compiles (`fed`)."""
    u8 = T.UINT8
    k = h.make_node("Constant", [], ["k"], value=h.make_tensor("kv", u8, [2], [1, 2]))
    x = np.array([5, 6], np.uint8)
    if fed:
        return model([k, h.make_node("Add", ["x", "k"], ["y"])], [v("x", u8, [2])],
                     [v("y", u8, [2])], 21), [x], [x + np.array([1, 2], np.uint8)]
    return model([k, h.make_node("Identity", ["k"], ["y"])], [], [v("y", u8, [2])], 21), \
        [], [np.array([1, 2], np.uint8)]


def iree_12(results=("a", "b", "y"), of_element="Neg", nest="scan-if"):
    """A Scan whose body's If (its condition a state fed true and passed on) yields three
    results: two carried values, a scalar a and a [2] b (then -a, -b; else a, b), and a
    stacked value of the scan element y (then Neg(e); else 0). It compiles; the call fails
    ("indirect buffer reference slot 0 is out range of the declared binding capacity").
    Any two of the three results run, as does y = e (`of_element="Identity"`), the If alone
    (`nest="if"`: -a, -b, -e once) and the Scan with the then branch's ops as its body, no If
    (`nest="scan"`). From a = 1.5, b = [1.5, 1.5] over x = [-2, -1.75]: two negations leave
    a and b as they were, y = -x."""
    shapes = {"a": [], "b": [2]}
    then, other, then_out, else_out, states, outer = [], [], [], [], [], []
    for r in results:
        if r == "y":
            then.append(h.make_node(of_element, ["e"], ["then_y"]))
            other.append(const("else_y", 0.0))
            then_out.append(v("then_y", F, [])), else_out.append(v("else_y", F, []))
            continue
        then.append(h.make_node("Neg", [r], ["then_" + r]))
        other.append(h.make_node("Identity", [r], ["else_" + r]))
        then_out.append(v("then_" + r, F, shapes[r])), else_out.append(v("else_" + r, F, shapes[r]))
        states.append(r)
    nexts = [r if r == "y" else r + "_next" for r in results]
    choose = h.make_node("If", ["f"], nexts, then_branch=h.make_graph(then, "then", [], then_out),
                         else_branch=h.make_graph(other, "else", [], else_out))
    start = [np.full(shapes[r], 1.5, np.float32) for r in states]
    x = np.array([-2, -1.75], np.float32)
    if nest == "if":
        m = model([choose], [v("f", T.BOOL, [])] + [v(r, F, shapes[r]) for r in states]
                  + [v("e", F, [])], [v(n, F, shapes.get(r, [])) for n, r in zip(nexts, results)],
                  21)
        return m, [np.array(True)] + start + [np.array(x[0])], [-a for a in start] + [np.array(-x[0])]
    stacked = [v("y", F, [])] if "y" in results else []
    flow, named = ([h.make_node("Identity", ["f"], ["f_next"])] + then, "then_{}") \
        if nest == "scan" else ([h.make_node("Identity", ["f"], ["f_next"]), choose], "{}_next")
    body = h.make_graph(flow, "body", [v("f", T.BOOL, [])] + [v(r, F, shapes[r]) for r in states]
                        + [v("e", F, [])],
                        [v("f_next", T.BOOL, [])]
                        + [v(named.format(r), F, shapes[r]) for r in states]
                        + ([v("then_y", F, [])] if stacked and nest == "scan" else stacked))
    outs = ["f_final"] + [r + "_final" for r in states] + (["ys"] if stacked else [])
    m = model([h.make_node("Scan", ["f0"] + [r + "0" for r in states] + ["x"], outs, body=body,
                           num_scan_inputs=1)],
              [v("f0", T.BOOL, [])] + [v(r + "0", F, shapes[r]) for r in states] + [v("x", F, [2])],
              [v(r + "_final", F, shapes[r]) for r in states] + ([v("ys", F, [2])] if stacked
                                                                 else []), 21)
    ys = [-x if of_element == "Neg" else x] if stacked else []
    return m, [np.array(True)] + start + [x], start + ys


if __name__ == "__main__":
    from importlib.metadata import version
    print("iree-base-compiler", version("iree-base-compiler"), "onnxruntime", ort.__version__)
    ort.set_default_logger_severity(4)  # its errors come back as one line each
    for name, make in [("IREE-1", iree_1), ("IREE-2", iree_2), ("IREE-3", iree_3),
                       ("IREE-4", iree_4), ("IREE-4, two elements", lambda: iree_4(2)),
                       ("IREE-4, float Identity", iree_4_float), ("IREE-5", iree_5),
                       ("IREE-6", iree_6), ("IREE-7", iree_7), ("IREE-8", iree_8),
                       ("IREE-9", iree_9), ("IREE-10", iree_10),
                       ("IREE-10, uint64", lambda: iree_10(np.uint64)),
                       ("IREE-10, uint8 (compiles)", lambda: iree_10(np.uint8)),
                       ("IREE-10, uint16 as a state (compiles)", iree_10_state),
                       ("IREE-11", iree_11), ("IREE-11, uint32", lambda: iree_11(np.uint32)),
                       ("IREE-11, int8 (compiles)", lambda: iree_11(np.int8)),
                       ("IREE-11, float (compiles)", lambda: iree_11(np.float32)),
                       ("IREE-11 without a loop: a uint8 constant output", iree_11_constant),
                       ("IREE-11's control: x + a uint8 constant (compiles)",
                        lambda: iree_11_constant(fed=True)),
                       ("IREE-12", iree_12),
                       ("IREE-12 without a (runs)", lambda: iree_12(("b", "y"))),
                       ("IREE-12 without b (runs)", lambda: iree_12(("a", "y"))),
                       ("IREE-12 without y (runs)", lambda: iree_12(("a", "b"))),
                       ("IREE-12 with y = e (runs)", lambda: iree_12(of_element="Identity")),
                       ("IREE-12's If alone (runs)", lambda: iree_12(nest="if")),
                       ("IREE-12 without the If (runs)", lambda: iree_12(nest="scan"))]:
        m, feeds, expected = make()
        # onnxruntime dies with SIGFPE on a zero-length Scan over axis 1 (ORT-2, spec/50)
        theirs = "not run (ORT-2)" if name == "IREE-8" else shown(on_ort(m, feeds))
        print(f"{name}: by hand {shown(expected)}; onnxruntime {theirs}; "
              f"onnx.reference {shown(on_reference(m, feeds))}; "
              f"iree {shown(iree_run(m, feeds))}", flush=True)
