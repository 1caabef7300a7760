"""Which evaluator ran each loop: `run`'s `paths` (and a lowered model's, and `lazyloop run
--verbose`) say, per loop that ran, "engine" or "reference: <why>" -- the first reason a run
of it took the reference machine (rule: laziness/modes). Values computed by hand."""
import subprocess
import sys

import numpy as np
import pytest

import lazyloop as ll
from nets import LESS, SUM, const, counter, last


def count_to(trips):
    """i = 0, 1, ...; `trips` trips; LAST_VALUE(i) = trips."""
    net = ll.Network()
    loop = net.add_loop()
    loop.add_trip_limit(const(net, trips, np.int32), ll.TripLimit.COUNT)
    i, _ = counter(net, loop)
    out = last(loop, i)
    out.name = "n"
    net.mark_output(out)
    return net, loop


def test_the_engine_runs_a_loop_and_says_so():
    net, loop = count_to(4)
    result = ll.run(net, {}, trace=False)
    assert int(result.outputs["n"]) == 4
    assert result.paths == {loop.name: "engine"}


def test_the_reference_mode_and_a_reading_say_why():
    net, loop = count_to(4)
    assert ll.run(net, {}).paths == {loop.name: 'reference: mode "reference"'}
    eager = ll.run(net, {}, trace=False, readings={"A10": "eager"})
    assert int(eager.outputs["n"]) == 4
    assert eager.paths == {loop.name: "reference: reading A10=eager"}


def test_a_loop_nobody_needs_is_not_listed():
    # rule: laziness/dead -- the second loop ran no run
    net, loop = count_to(3)
    dead = net.add_loop()
    dead.add_trip_limit(const(net, 5, np.int32), ll.TripLimit.COUNT)
    counter(net, dead)
    assert ll.run(net, {}, trace=False).paths == {loop.name: "engine"}


def test_an_output_needed_only_in_some_evaluations():
    # the loop's first output is always needed, its second only when `flag` holds: a run
    # on the schedule, made for the first, would have to run again for the second
    net = ll.Network()
    flag = net.add_input("flag", ll.bool, ())
    loop = net.add_loop()
    loop.add_trip_limit(const(net, 3, np.int32), ll.TripLimit.COUNT)
    i, _ = counter(net, loop)
    doubled, _ = counter(net, loop, step=2)
    first, second = last(loop, i), last(loop, doubled)
    first.name = "n"
    net.mark_output(first)
    choice = net.add_if_conditional()
    choice.set_condition(flag)
    picked = choice.add_output(second, const(net, -1, np.int32)).get_output(0)
    picked.name = "picked"
    net.mark_output(picked)
    for value, want in ((True, 6), (False, -1)):
        result = ll.run(net, {"flag": np.array(value)}, trace=False)
        assert int(result.outputs["n"]) == 3 and int(result.outputs["picked"]) == want
        assert result.paths == {loop.name: f"reference: its output {second.name!r} is needed "
                                           "only in some evaluations"}


def carried_in_a_branch():
    """Outer loop, 4 trips of i: r = r + i is read only by a branch taken while i < 2, so
    forcing r_k needs r_0 .. r_k and i_0 .. i_{k-1} (a cycle read only in some trips that
    reads another stream); y = y + (i < 2 ? r : i) + s, s = a + b, the two outputs of an
    inner loop of 2 trips (a = 1 + 1, b = i + i + i): y = sum over i of
    (0, 0, 2, 3)[i] + 2 + 3 i = 5 + 8 + 18 = 31."""
    net = ll.Network()
    outer = net.add_loop()
    outer.add_trip_limit(const(net, 4, np.int32), ll.TripLimit.COUNT)
    i, _ = counter(net, outer)
    r = outer.add_recurrence(const(net, 0, np.int32))
    r.set_input(1, net.add_elementwise(r.get_output(0), i, SUM).get_output(0))
    choice = net.add_if_conditional()
    choice.set_condition(net.add_elementwise(i, const(net, 2, np.int32), LESS).get_output(0))
    picked = choice.add_output(r.get_output(0), i).get_output(0)
    inner = net.add_loop()
    inner.add_trip_limit(const(net, 2, np.int32), ll.TripLimit.COUNT)
    a = inner.add_recurrence(const(net, 0, np.int32))
    a.set_input(1, net.add_elementwise(a.get_output(0), const(net, 1, np.int32),
                                       SUM).get_output(0))
    b = inner.add_recurrence(i)
    b.set_input(1, net.add_elementwise(b.get_output(0), i, SUM).get_output(0))
    s = net.add_elementwise(last(inner, a.get_output(0)), last(inner, b.get_output(0)),
                            SUM).get_output(0)
    y = outer.add_recurrence(const(net, 0, np.int32))
    step = net.add_elementwise(net.add_elementwise(y.get_output(0), picked, SUM).get_output(0),
                               s, SUM).get_output(0)
    y.set_input(1, step)
    out = last(outer, y.get_output(0))
    out.name = "y"
    net.mark_output(out)
    return net, outer, inner, r


def test_a_value_carried_in_a_branch_and_an_inner_loop_under_the_reference():
    net, outer, inner, r = carried_in_a_branch()
    result = ll.run(net, {}, trace=False)
    assert int(result.outputs["y"]) == 31 == int(ll.run(net, {}).outputs["y"])
    cycle = {r.get_output(0).name, r.get_input(1).name}  # r and r + i: either is named
    assert result.paths == {
        outer.name: next(f"reference: stream {k!r}, forced only in some trips, depends on its "
                         "own earlier values and on other streams of the loop" for k in cycle
                         if k in result.paths[outer.name]),
        inner.name: f"reference: it runs in loop {outer.name!r} on the reference, and 2 of "
                    "its outputs may be needed"}


def test_a_lowered_model_says_which_path_ran():
    pytest.importorskip("onnx")
    import lazyloop.onnx as lo
    from lazyloop.bench.versus_models import nested
    model, feeds = nested(3, 4)
    run = lo.run(model, feeds)
    assert float(run.outputs["y"]) == 12.0
    assert list(run.paths.values()) == ["engine", "engine"]
    assert run.paths == run.evaluation.paths


def test_run_verbose_prints_the_paths(tmp_path):
    pytest.importorskip("onnx")
    import onnx
    from lazyloop.bench.versus_models import nested
    model, _ = nested(3, 4)
    path = tmp_path / "nested.onnx"
    onnx.save(model, str(path))
    done = subprocess.run([sys.executable, "-m", "lazyloop", "run", str(path), "--input",
                           "y0=0.0", "--verbose"], capture_output=True, text=True, timeout=300,
                          cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    at = lines.index("loops (engine: the per-trip schedule; reference: the reference "
                     "machine, and why):")
    assert [line.split(": ")[1] for line in lines[at + 1:]] == ["engine", "engine"]
    quiet = subprocess.run([sys.executable, "-m", "lazyloop", "run", str(path), "--input",
                            "y0=0.0"], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert "loops (" not in quiet.stdout and "12" in quiet.stdout
