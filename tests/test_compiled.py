"""The schedule's ordinary trips, compiled (lazyloop/core/engine/compiled.py): the same
elements, values and errors as the step-by-step schedule and the reference evaluator (rules:
laziness/dead, stream/memo, stream/map, laziness/modes). Mode "compiled" compiles every
scheduled loop from its first trip; "fast" once a run reaches HOT_TRIPS; "schedule" never."""
import numpy as np
import pytest
from hypothesis import given

import lazyloop as ll
from lazyloop.core.engine import compiled
from lazyloop.core.engine import HOT_TRIPS
from lazyloop.core.plan import compile_network
from lazyloop.strategies import networks
from nets import (ENGINE_MODES, LESS, SUM, concat, const, counter, last, on_engine,
                  refused_as_the_reference)
from test_batch import agree
from test_laws import run_fast


def compiled_runs(machine):
    """The loops whose runs of a schedule ran compiled trips."""
    return [run.loop for run in machine.log if run.compiled]


@given(networks())
def test_compiled_trips_equal_the_reference(program):
    # rule: laziness/dead, stream/memo -- generated programs, every trip compiled: the values
    # and the set of forced elements are the reference evaluator's
    plan = compile_network(program.net)
    reference = ll.run(plan, program.feeds)
    values, record, ran = run_fast(plan, program.feeds, mode="compiled")
    for name, value in reference.outputs.items():
        np.testing.assert_array_equal(values[name], value, err_msg=name)
    for loop in ran:
        forced = [r if len(r) == 3 else r + ((),) for r in record
                  if plan.nodes[r[0]].scope == loop]
        assert len(forced) == len(set(forced))
        assert set(forced) == {(e.stream, e.index, e.activation) for e in reference.trace
                               if e.loop == loop}


def test_the_compiled_law_is_not_vacuous():
    # rule: laziness/dead -- the law above runs compiled trips (a loop whose trips run: no
    # batch takes their work)
    _, machine = agree(counter_loop(300), {}, mode="compiled")
    assert compiled_runs(machine)


def counter_loop(trips, limit="count"):
    """y = 0; repeat: y = (y + 1) + 1 (int32); LAST_VALUE(y) = 2 * trips. Two adds, so that
    no accumulation makes y (engine/accumulate.py) and the trips run."""
    net = ll.Network()
    loop = net.add_loop()
    if limit == "count":
        loop.add_trip_limit(const(net, trips, np.int32), ll.TripLimit.COUNT)
    i, i_next = counter(net, loop)
    y = loop.add_recurrence(const(net, 0, np.int32))
    one = const(net, 1, np.int32)
    y1 = net.add_elementwise(y.get_output(0), one, SUM).get_output(0)
    y.set_input(1, net.add_elementwise(y1, one, SUM).get_output(0))
    if limit == "while":
        loop.add_trip_limit(net.add_elementwise(i, const(net, trips, np.int32),
                                                ll.ElementWiseOperation.LESS).get_output(0),
                            ll.TripLimit.WHILE)
    net.mark_output(last(loop, y.get_output(0)))
    return net


@pytest.mark.parametrize("limit", ["count", "while"])
def test_a_hot_loop_is_compiled_and_exact(limit):
    # rule: trip/count, trip/while -- mode "fast" compiles a loop once a run of it is hot
    # (1000 trips), not a run shorter than HOT_TRIPS (50 trips), which mode "compiled"
    # compiles from its first trip; 2 * trips either way
    values, machine = on_engine(counter_loop(1000, limit), {})
    assert int(list(values.values())[0]) == 2000 and compiled_runs(machine)
    values, machine = on_engine(counter_loop(HOT_TRIPS - 14, limit), {})
    assert int(list(values.values())[0]) == 2 * (HOT_TRIPS - 14) and not compiled_runs(machine)
    values, machine = on_engine(counter_loop(HOT_TRIPS - 14, limit), {}, mode="compiled")
    assert int(list(values.values())[0]) == 2 * (HOT_TRIPS - 14) and compiled_runs(machine)
    values, machine = on_engine(counter_loop(1000, limit), {}, mode="schedule")
    assert int(list(values.values())[0]) == 2000 and not compiled_runs(machine)
    agree(counter_loop(200, limit), {})


def test_source_names_every_scheduled_stream():
    net = counter_loop(100)
    plan = compile_network(net)
    from lazyloop.core.engine.schedule import Schedule
    from lazyloop.core.engine import EngineMachine
    from lazyloop.core.evaluate import check_feeds
    machine = EngineMachine(plan, check_feeds(plan, {}))
    (name,) = plan.loops
    demand = machine.static_demand(name)
    text = compiled.source(Schedule(demand, machine, machine.root, 0))
    for stream in demand.phases[1]:
        assert f"# {stream!r}" in text
    compile(text, "<trips>", "exec")


def test_any_stream_name_compiles():
    # stream names may hold quotes and line breaks: the source quotes them; 2 * 100
    net = counter_loop(100)
    for k in range(net.num_layers):
        layer = net.get_layer(k)
        for j in range(layer.num_outputs):
            layer.get_output(j).name = f"it's\n{k}:{j}\\"
    values, machine = on_engine(net, {}, mode="compiled")
    assert int(list(values.values())[0]) == 200 and compiled_runs(machine)


def gather_loop(trips, extent):
    """ONNX: y = y + x[i] for i < trips over x of `extent` values: trip `extent` refuses."""
    pytest.importorskip("onnx")
    from onnx import TensorProto, helper
    f, i64, b = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL
    body = helper.make_graph(
        [helper.make_node("Identity", ["c"], ["c_out"]),
         helper.make_node("Gather", ["x", "i"], ["xi"]),
         helper.make_node("Add", ["y", "xi"], ["y_out"])], "body",
        [helper.make_tensor_value_info("i", i64, []), helper.make_tensor_value_info("c", b, []),
         helper.make_tensor_value_info("y", f, [])],
        [helper.make_tensor_value_info("c_out", b, []),
         helper.make_tensor_value_info("y_out", f, [])])
    graph = helper.make_graph(
        [helper.make_node("Loop", ["M", "", "y0"], ["y"], body=body)], "g",
        [helper.make_tensor_value_info("x", f, [extent]),
         helper.make_tensor_value_info("y0", f, [])],
        [helper.make_tensor_value_info("y", f, [])],
        [helper.make_tensor("M", i64, [], [trips])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize("mode", ENGINE_MODES)
def test_an_error_in_a_compiled_trip_is_the_references(mode):
    # rule: onnx/node, stream/map -- Gather refuses index 150 of 150 values, at trip 150 of
    # 300: the compiled trips hand that trip back and the error is the reference's
    import lazyloop.onnx as lo
    model = gather_loop(300, 150)
    feeds = {"x": np.ones(150, np.float32), "y0": np.array(0, np.float32)}
    refused_as_the_reference(model, feeds, mode)
    ok = gather_loop(150, 150)  # within bounds: sum of 150 ones
    assert float(lo.evaluate(ok, feeds)["y"]) == 150.0


def widening_scan_output(trips, at):
    """ONNX: scan output e_i = Expand([1.0], [1 + (i >= at)]): shape [1], then [2] from trip
    `at` on -- stacked values must keep one shape, so trip `at` is refused."""
    pytest.importorskip("onnx")
    from onnx import TensorProto, helper
    f, i64, b = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL
    body = helper.make_graph(
        [helper.make_node("Identity", ["c"], ["c_out"]),
         helper.make_node("Less", ["i", "at"], ["before"]),
         helper.make_node("Not", ["before"], ["after"]),
         helper.make_node("Cast", ["after"], ["extra"], to=i64),
         helper.make_node("Add", ["extra", "one"], ["width"]),
         helper.make_node("Reshape", ["width", "shape1"], ["dims"]),
         helper.make_node("Expand", ["onef", "dims"], ["e"])], "body",
        [helper.make_tensor_value_info("i", i64, []), helper.make_tensor_value_info("c", b, [])],
        [helper.make_tensor_value_info("c_out", b, []),
         helper.make_tensor_value_info("e", f, None)])
    graph = helper.make_graph(
        [helper.make_node("Loop", ["M", ""], ["es"], body=body)], "g", [],
        [helper.make_tensor_value_info("es", f, None)],
        [helper.make_tensor("M", i64, [], [trips]), helper.make_tensor("at", i64, [], [at]),
         helper.make_tensor("one", i64, [], [1]), helper.make_tensor("shape1", i64, [1], [1]),
         helper.make_tensor("onef", f, [1], [1.0])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize("mode", ENGINE_MODES)
def test_a_shape_change_in_a_compiled_trip_is_the_references(mode):
    # rule: structure/shapes -- the element of trip 150 has another shape than the first
    # 150: refused as the reference refuses it; with the change past the end, 200 ones
    import lazyloop.onnx as lo
    model = widening_scan_output(200, 150)
    ref, _ = refused_as_the_reference(model, {}, mode)
    assert ref.rule == "structure/shapes"
    np.testing.assert_array_equal(lo.evaluate(widening_scan_output(200, 500), {}, mode=mode)["es"],
                                  np.ones((200, 1), np.float32))


def test_a_hot_masked_loop_runs_step_by_step():
    # rule: stream/map, recurrence/def -- 250 trips over rows of which the first 100 are
    # defined: the masked schedule is not compiled, and gives the reference's values and
    # masks; acc = the sum of the 100 defined rows, undefined once a padded row is added
    from test_masked_schedule import fast_and_reference
    net = ll.Network()
    x = net.add_input("x", ll.float32, (100, 2))
    first = net.add_loop()
    first.add_trip_limit(const(net, 100, np.int32), ll.TripLimit.COUNT)
    out = first.add_loop_output(first.add_iterator(x).get_output(0), ll.LoopOutput.CONCATENATE)
    out.set_input(1, const(net, 300, np.int32))
    second = net.add_loop()
    second.add_trip_limit(const(net, 250, np.int32), ll.TripLimit.COUNT)
    row = second.add_iterator(out.get_output(0)).get_output(0)
    acc = second.add_recurrence(const(net, np.zeros(2, np.float32)))
    acc.set_input(1, net.add_elementwise(acc.get_output(0), row, SUM).get_output(0))
    total = last(second, acc.get_output(0))
    total.name = "acc"
    net.mark_output(total)
    xs = np.arange(200, dtype=np.float32).reshape(100, 2)
    values, defined, machine = fast_and_reference(net, {"x": xs}, mode="compiled")
    assert "loop1" in machine.masked_loops
    assert [r for r in machine.log if r.masked]  # ran masked, and never compiled:
    assert not [r for r in machine.log if r.masked and r.compiled]
    assert values["acc"].shape == (2,) and not defined["acc"].any()


@pytest.mark.parametrize("axis, reverse", [(0, False), (0, True), (1, False), (1, True)])
@pytest.mark.parametrize("trips", [3, 4, 6])
def test_compiled_iterators_slice_as_the_rule(axis, reverse, trips):
    # rule: iterator/forward, iterator/reverse, iterator/bounds -- a WHILE loop (no batches)
    # iterating a 4x4 array: the compiled trips take a first-axis slice at once, any other
    # through the rule; each trip's row (or column), reversed or not, is numpy's; the fifth
    # trip asks for index 4 of an axis of extent 4, which every mode refuses
    net = ll.Network()
    x = net.add_input("x", ll.float32, (4, 4))
    loop = net.add_loop()
    i, _ = counter(net, loop)
    loop.add_trip_limit(net.add_elementwise(i, const(net, trips, np.int32), LESS).get_output(0),
                        ll.TripLimit.WHILE)
    row = loop.add_iterator(x, axis, reverse).get_output(0)
    net.mark_output(concat(net, loop, row, trips))
    value = np.arange(16, dtype=np.float32).reshape(4, 4)
    rows = np.moveaxis(value, axis, 0)[::-1 if reverse else 1]
    for mode in ("compiled", "fast", "reference"):
        if trips > 4:
            with pytest.raises(ll.IteratorOutOfBounds):
                ll.evaluate(net, {"x": value}, mode=mode)
            continue
        got = list(ll.evaluate(net, {"x": value}, mode=mode).values())[0]
        np.testing.assert_array_equal(got, rows[:trips])
