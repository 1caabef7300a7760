"""The diagrams of the teaching notebooks (lazyloop/teach: graph, layout, routing,
diagram_check, draw), checked on their geometry without drawing, and drawn headless.
Every diagram the notebooks draw is checked the same way while they run
(LAZYLOOP_STRICT_DIAGRAMS, set by notebooks/build.py), so tests/test_notebooks.py covers
those too."""
from __future__ import annotations

import pytest

from test_notebooks import _counter


def test_teach_draws_a_rejected_network():
    # rule: structure/nesting -- the picture of a network that is refused says why
    pytest.importorskip("networkx")
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from lazyloop import teach
    ax = teach.draw_network(_tangled())
    assert "structure/nesting" in ax.get_title(loc="left")
    plt.close("all")


# ------------------------------------------------------------------------------------------
# Diagram geometry (lazyloop/teach/layout.py), checked without drawing. Every diagram the
# notebooks draw is checked the same way while they run (LAZYLOOP_STRICT_DIAGRAMS, set by
# notebooks/build.py), so the two notebook runs above cover them all.
# ------------------------------------------------------------------------------------------

def _two_recurrences():
    """a and b swap roles each trip: a' = b, b' = a + b (Fibonacci), COUNT 5."""
    import numpy as np

    import lazyloop as ll
    net = ll.Network()

    def const(v, dtype=np.int32):
        return net.add_constant((), np.array(v, dtype)).get_output(0)
    loop = net.add_loop()
    loop.add_trip_limit(const(5), ll.TripLimit.COUNT)
    a, b = loop.add_recurrence(const(0)), loop.add_recurrence(const(1))
    a.get_output(0).name, b.get_output(0).name = "a", "b"
    total = net.add_elementwise(a.get_output(0), b.get_output(0), ll.ElementWiseOperation.SUM)
    total.get_output(0).name = "a_plus_b"
    a.set_input(1, b.get_output(0))
    b.set_input(1, total.get_output(0))
    net.mark_output(loop.add_loop_output(a.get_output(0), ll.LoopOutput.LAST_VALUE).get_output(0))
    return net


def _halve_or_triple():
    """x' = x / 2 if x is even else 3x + 1, WHILE x != 1: an if-conditional in a loop."""
    import numpy as np

    import lazyloop as ll
    E = ll.ElementWiseOperation
    net = ll.Network()

    def const(v):
        return net.add_constant((), np.array(v, np.int32)).get_output(0)
    loop = net.add_loop()
    x = loop.add_recurrence(net.add_input("start", ll.int32, ()))
    half = net.add_elementwise(x.get_output(0), const(2), E.FLOOR_DIV).get_output(0)
    even = net.add_elementwise(net.add_elementwise(half, const(2), E.PROD).get_output(0),
                               x.get_output(0), E.EQUAL).get_output(0)
    cond = net.add_if_conditional()
    cond.set_condition(even)
    x_in = cond.add_input(x.get_output(0)).get_output(0)
    halved = net.add_elementwise(x_in, const(2), E.FLOOR_DIV).get_output(0)
    tripled = net.add_elementwise(net.add_elementwise(x_in, const(3), E.PROD).get_output(0),
                                  const(1), E.SUM).get_output(0)
    x_next = cond.add_output(halved, tripled).get_output(0)
    x_next.name = "x_next"
    x.set_input(1, x_next)
    one = net.add_elementwise(x.get_output(0), const(1), E.EQUAL).get_output(0)
    loop.add_trip_limit(net.add_unary(one, ll.UnaryOperation.NOT).get_output(0),
                        ll.TripLimit.WHILE)
    net.mark_output(loop.add_loop_output(x.get_output(0), ll.LoopOutput.LAST_VALUE).get_output(0))
    return net


def _lstm():
    """build_lstm's loop over an input sequence: the widest diagram of the notebooks."""
    import lazyloop as ll
    from lazyloop.models import LSTMWeights, build_lstm
    net = ll.Network()
    x = net.add_input("x", ll.float32, (5, 1, 8))
    out = build_lstm(net, x, LSTMWeights.random(8, 16, seed=3))
    out.sequence.name, out.hidden.name = "states", "h_final"
    net.mark_output(out.sequence)
    net.mark_output(out.hidden)
    return net


def _tangled():
    """Two loops that read each other's recurrence (rejected by structure/nesting)."""
    import numpy as np

    import lazyloop as ll
    net = ll.Network()
    zero = net.add_constant((), np.array(0, np.float32)).get_output(0)
    two = net.add_constant((), np.array(2, np.int32)).get_output(0)
    a, b = net.add_loop(), net.add_loop()
    a.add_trip_limit(two, ll.TripLimit.COUNT)
    b.add_trip_limit(two, ll.TripLimit.COUNT)
    ra, rb = a.add_recurrence(zero), b.add_recurrence(zero)
    ra.set_input(1, net.add_elementwise(ra.get_output(0), rb.get_output(0),
                                        ll.ElementWiseOperation.SUM).get_output(0))
    rb.set_input(1, net.add_elementwise(rb.get_output(0), ra.get_output(0),
                                        ll.ElementWiseOperation.SUM).get_output(0))
    net.mark_output(a.add_loop_output(ra.get_output(0), ll.LoopOutput.LAST_VALUE).get_output(0))
    return net


def _segments(edge):
    return list(zip(edge.points, edge.points[1:]))


def _along(s, t):
    """Two axis-parallel segments on one line that share more than a point."""
    (a, b), (c, d) = s, t
    if a[1] == b[1] == c[1] == d[1]:
        return min(max(a[0], b[0]), max(c[0], d[0])) > max(min(a[0], b[0]), min(c[0], d[0]))
    if a[0] == b[0] == c[0] == d[0]:
        return min(max(a[1], b[1]), max(c[1], d[1])) > max(min(a[1], b[1]), min(c[1], d[1]))
    return False


@pytest.mark.parametrize("build_net", [_counter, _two_recurrences, _halve_or_triple, _lstm,
                                       _tangled])
def test_diagram_geometry_routes_edges_around_nodes(build_net):
    # rule: recurrence/def -- each back edge runs from the layer computing the recurrence's
    # next value (its second input) to the recurrence, labelled next
    pytest.importorskip("networkx")
    from lazyloop.core.enums import LayerType
    from lazyloop.teach.graph import _network_graph
    from lazyloop.teach.diagram_check import problems, segment_hits_box
    from lazyloop.teach.layout import layout
    net = build_net()
    g = _network_graph(net)
    geo = layout(g)
    assert problems(g, geo) == []
    for e in geo.edges:   # independently of problems(): no segment through another node's box
        for p, q in zip(e.points, e.points[1:]):
            assert not any(segment_hits_box(p, q, box) for box in geo.nodes.values())
    want = {(("layer", layer.get_input(1).producer.name), ("layer", layer.name))
            for layer in net.layers if layer.type is LayerType.RECURRENCE}
    backs = [e for e in geo.edges if e.back]
    assert {(e.source, e.target) for e in backs} == want
    for e in backs:
        x0, y0, x1, y1 = geo.nodes[e.source]
        assert e.label == "next" and x0 <= e.points[0][0] <= x1 and y0 <= e.points[0][1] <= y1
    # independently of problems(): one arrowhead per input, and a back edge has its own
    # wire: no stretch of it runs along a forward edge, not even one of the same value
    ends = [(e.target, e.points[-1]) for e in geo.edges]
    assert len(set(ends)) == len(ends)
    for b in backs:
        for f in geo.edges:
            if not f.back:
                assert not any(_along(s, t) for s in _segments(b) for t in _segments(f))


def test_if_branches_are_true_and_false_regions():
    # rule: laziness/dead -- the branch layers of an if-conditional sit in their own regions
    pytest.importorskip("networkx")
    from lazyloop.teach.graph import _network_graph
    from lazyloop.teach.layout import layout
    g = _network_graph(_halve_or_triple())
    geo = layout(g)
    branches = {name: [n for n, (_, _, box) in g.nodes.items() if box == name]
                for name, (_, _, kind) in geo.scopes.items() if kind == "branch"}
    assert set(branches) == {"x_next: true", "x_next: false"}
    captions = {name: sorted(g.nodes[n][0].split("\n")[0] for n in nodes if
                             g.nodes[n][1] == "layer") for name, nodes in branches.items()}
    assert captions == {"x_next: true": ["floor_div"], "x_next: false": ["prod", "sum"]}


# ------------------------------------------------------------------------------------------
# The strict check itself (lazyloop/teach/diagram_check.py), on geometries made by hand
# ------------------------------------------------------------------------------------------

def _geometry(edges, scopes=None, width=4.0):
    """Nodes a (left), b and c (right, one above the other), d (far right), and `edges`
    given as (source, target, points)."""
    from lazyloop.teach.layout import Edge, Geometry
    nodes = {"a": (0.0, -0.2, 0.5, 0.2), "b": (2.0, 0.3, 2.5, 0.7), "c": (2.0, -0.7, 2.5, -0.3),
             "d": (3.5, -0.2, 4.0, 0.2)}
    return Geometry(nodes, [Edge(s, t, False, tuple(p)) for s, t, p in edges], scopes or {},
                    width, 1.5)


@pytest.mark.parametrize("edges, says", [
    # two values on one vertical track, overlapping: reads as one wire
    ([("a", "b", [(0.5, 0.0), (1.0, 0.0), (1.0, 0.5), (2.0, 0.5)]),
      ("d", "c", [(3.5, 0.1), (3.2, 0.1), (3.2, 1.0), (1.0, 1.0), (1.0, -0.5), (2.0, -0.5)])],
     "run along each other"),
    # end to end on one line, a small jog between them: reads as one wire
    ([("b", "c", [(2.5, 0.5), (2.8, 0.5), (2.8, -0.9), (1.9, -0.9), (1.9, -0.5), (2.0, -0.5)]),
      ("a", "d", [(0.5, 0.0), (1.0, 0.0), (1.0, 1.1), (2.9, 1.1), (2.9, 0.45), (3.2, 0.45),
                  (3.2, 0.0), (3.5, 0.0)])],
     "run along each other"),
    # a wire that bends on another value's wire: a false connection
    ([("a", "d", [(0.5, 0.0), (3.5, 0.0)]),
      ("b", "c", [(2.5, 0.5), (2.8, 0.5), (2.8, 0.0), (2.8, -0.5), (2.5, -0.5)])],
     "touch"),
    # two inputs of c with one arrowhead
    ([("a", "c", [(0.5, 0.0), (1.5, 0.0), (1.5, -0.5), (2.0, -0.5)]),
      ("b", "c", [(2.5, 0.5), (2.7, 0.5), (2.7, 0.9), (1.8, 0.9), (1.8, -0.49),
                  (2.0, -0.49)])],
     "share one arrowhead"),
    # a wire that overshoots its turn and comes back: a dangling stub
    ([("a", "b", [(0.5, 0.0), (1.4, 0.0), (1.2, 0.0), (1.2, 0.5), (2.0, 0.5)])],
     "doubles back"),
])
def test_the_strict_check_finds_wires_that_read_wrongly(edges, says):
    from lazyloop.teach.diagram_check import edge_problems, wire_problems
    geo = _geometry(edges)
    found = edge_problems(geo) + wire_problems(geo)
    assert any(says in p for p in found), found


def test_the_strict_check_lets_wires_cross_and_fan_out():
    # crossings are fine; one value's wires may share their track (a fan-out)
    from lazyloop.teach.diagram_check import edge_problems, wire_problems
    geo = _geometry([
        ("a", "b", [(0.5, 0.0), (1.5, 0.0), (1.5, 0.5), (2.0, 0.5)]),
        ("a", "c", [(0.5, 0.0), (1.5, 0.0), (1.5, -0.5), (2.0, -0.5)]),
        ("b", "d", [(2.5, 0.5), (3.0, 0.5), (3.0, 0.05), (3.5, 0.05)]),
        ("c", "d", [(2.5, -0.5), (3.2, -0.5), (3.2, 0.9), (3.1, 0.9), (3.1, -0.08),
                    (3.5, -0.08)])])
    assert edge_problems(geo) + wire_problems(geo) == []


def test_the_strict_check_finds_a_wire_on_a_loop_border_and_a_diagram_too_wide():
    from lazyloop.teach.diagram_check import READABLE_WIDTH, width_problems, wire_problems
    along_border = _geometry([("a", "d", [(0.5, 0.0), (1.0, 0.0), (1.0, 1.2), (3.0, 1.2),
                                          (3.0, 0.0), (3.5, 0.0)])],
                             scopes={"loop0": ((1.8, -1.0, 2.8, 1.2), 1, "loop")})
    assert any("border of loop0" in p for p in wire_problems(along_border))
    assert width_problems(_geometry([], width=READABLE_WIDTH + 0.1))
    assert width_problems(_geometry([], width=READABLE_WIDTH - 0.1)) == []


def test_a_wide_diagram_is_drawn_at_most_max_width_with_its_legend_below():
    pytest.importorskip("networkx")
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from lazyloop import teach
    from lazyloop.teach.diagram_check import MAX_WIDTH
    ax = teach.draw_network(_lstm())
    width = ax.figure.get_size_inches()[0]
    assert teach.geometry(_lstm()).width > MAX_WIDTH >= width
    legend = ax.get_legend().get_window_extent(ax.figure.canvas.get_renderer())
    assert legend.y1 <= ax.get_window_extent().y0 + 1    # below the diagram, not beside it
    plt.close("all")
