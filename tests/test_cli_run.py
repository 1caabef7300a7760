"""`lazyloop run` and `explain` as a user meets them: feeds checked against the model before
anything runs (one line, exit 2), saved cases re-run with their masks, the fast path, the
bounded forcing table, --version, help text and defaults, a missing extra."""
import os
import re
import subprocess
import sys

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def cli(*args, cwd, env_path=ROOT, timeout=300):
    env = dict(os.environ, PYTHONPATH=env_path)
    return subprocess.run([sys.executable, "-m", "lazyloop", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)


def counter_model(path):
    """M trips of a Loop adding 1.5 to a float carried value: y = 1.5 * M; M an int64 input."""
    body = helper.make_graph(
        [helper.make_node("Constant", [], ["step"], value=numpy_helper.from_array(
            np.array(1.5, np.float32))),
         helper.make_node("Add", ["y_in", "step"], ["y_out"]),
         helper.make_node("Identity", ["cond_in"], ["cond_out"])],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("y_in", TensorProto.FLOAT, [])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("y_out", TensorProto.FLOAT, [])])
    graph = helper.make_graph(
        [helper.make_node("Loop", ["M", "", "y0"], ["y"], body=body)], "counter",
        [helper.make_tensor_value_info("M", TensorProto.INT64, [])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [])],
        initializer=[numpy_helper.from_array(np.array(0, np.float32), "y0")])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 16)]), path)
    return path


@pytest.mark.parametrize("feed, says", [
    ("M=3.5", "--input M: the input is int64; 3.5 is not an integer"),
    ("M=[1,", "is neither a .npy/.pb file nor a Python literal"),
    ("M=missing.npy", "--input M: no such file: missing.npy"),
    ("M=text.npy", "cannot read text.npy: it is not a NumPy .npy file"),
    ("M=pickled.npy", "cannot read pickled.npy: it holds pickled Python objects"),
    ("Q=3", "the model has no input 'Q'; its inputs are ['M']"),
    ("M=99999999999999999999", "does not fit in int64"),
])
def test_bad_feeds_are_one_line_exit_2(tmp_path, feed, says):
    counter_model(str(tmp_path / "m.onnx"))
    (tmp_path / "text.npy").write_text("3\n")
    with open(tmp_path / "pickled.npy", "wb") as f:
        np.save(f, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    done = cli("run", "m.onnx", "--input", feed, cwd=tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.count("\n") == 1 and says in done.stderr, done.stderr


def test_missing_input_and_missing_model_are_named(tmp_path):
    counter_model(str(tmp_path / "m.onnx"))
    done = cli("run", "m.onnx", cwd=tmp_path)
    assert done.returncode == 2 and "missing --input for M" in done.stderr
    done = cli("run", "nope.onnx", cwd=tmp_path)
    assert done.returncode == 2 and "no such file: nope.onnx" in done.stderr


def test_run_feeds_literals_npy_and_pb(tmp_path):
    # y = 1.5 * M: M = 4 gives 6.0 whichever way M is given
    counter_model(str(tmp_path / "m.onnx"))
    np.save(tmp_path / "m.npy", np.array(4, np.int64))
    (tmp_path / "m.pb").write_bytes(numpy_helper.from_array(np.array(4, np.int64), "M")
                                    .SerializeToString())
    for feed in ("M=4", "M=m.npy", "M=m.pb"):
        done = cli("run", "m.onnx", "--input", feed, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert "y: shape=[] dtype=float32\n6.0" in done.stdout


def test_a_runaway_loop_ends_at_the_fuel_with_exit_1(tmp_path):
    # no M and no cond: an infinite ONNX Loop (onnx/loop); the fuel stops it
    counter_model(str(tmp_path / "m.onnx"))
    model = onnx.load(str(tmp_path / "m.onnx"))
    model.graph.node[0].input[0] = ""
    del model.graph.input[:]
    onnx.save(model, str(tmp_path / "inf.onnx"))
    done = cli("run", "inf.onnx", "--max-trips", "1000", cwd=tmp_path)
    assert done.returncode == 1 and done.stderr.count("\n") == 1
    assert "1000" in done.stderr and "Traceback" not in done.stderr


def test_a_closed_output_stops_run_quietly_with_141(tmp_path):
    # `lazyloop run ... | head`: the reader is gone before run prints (its end of the pipe
    # closed at once); no traceback, no "internal error", the shell's SIGPIPE status
    counter_model(str(tmp_path / "m.onnx"))
    env = dict(os.environ, PYTHONPATH=ROOT)
    child = subprocess.Popen([sys.executable, "-m", "lazyloop", "run", "m.onnx", "--input",
                              "M=4"], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
    child.stdout.close()
    said = child.stderr.read().decode()
    assert child.wait(timeout=300) == 141
    assert said == ""


def test_run_takes_the_fast_path(tmp_path, monkeypatch, capsys):
    # the reference evaluator keeps every element; `run` must evaluate on the fast path
    import lazyloop.core.evaluate as core_evaluate
    from lazyloop.cli import main

    made = []
    real = core_evaluate.machine_for

    def recording(mode, *args, **kwargs):
        made.append((mode, kwargs.get("trace")))
        return real(mode, *args, **kwargs)
    monkeypatch.setattr(core_evaluate, "machine_for", recording)
    counter_model(str(tmp_path / "m.onnx"))
    assert main(["run", str(tmp_path / "m.onnx"), "--input", "M=100000"]) == 0
    assert "150000.0" in capsys.readouterr().out  # 1.5 * 100000
    assert made == [("fast", None)]


@pytest.fixture(scope="module")
def cases(tmp_path_factory):
    cwd = tmp_path_factory.mktemp("cases")
    done = cli("conformance", "export", "c", "--case", "concat_padding", "--case",
               "count_sum_rows", "--case", "nested_row_sums", cwd=cwd)
    assert done.returncode == 0, done.stderr
    return cwd / "c"


def test_rerun_a_saved_case_with_its_defined_mask(cases, tmp_path):
    # concat_padding: rows 0-1 are [1, 2], [3, 4]; rows 2-3 are padding (output/concat)
    import shutil
    case = tmp_path / "concat_padding"
    shutil.copytree(cases / "concat_padding", case)
    data = case / "test_data_set_0"
    mask = numpy_helper.to_array(onnx.TensorProto.FromString((data / "defined_0.pb")
                                                             .read_bytes()))
    np.testing.assert_array_equal(mask, [[1, 1], [1, 1], [0, 0], [0, 0]])
    done = cli("run", str(case), cwd=tmp_path)
    assert done.returncode == 0 and "saved expected outputs: same" in done.stdout

    def rewrite(value):
        (data / "output_0.pb").write_bytes(numpy_helper.from_array(value, "y")
                                           .SerializeToString())
    rewrite(np.array([[1, 2], [3, 4], [7, 7], [7, 7]], np.float32))  # padding: any value
    assert cli("run", str(case), cwd=tmp_path).returncode == 0
    rewrite(np.array([[1, 2], [3, 4.001], [0, 0], [0, 0]], np.float32))  # a defined value
    done = cli("run", str(case), cwd=tmp_path)
    assert done.returncode == 1 and "DIFFERENT" in done.stdout
    assert "y: values: 1 of 4 defined positions differ" in done.stdout
    # --rtol widens the float tolerance: 4 vs 4.001 is within 1e-3
    assert cli("run", str(case), "--rtol", "1e-3", cwd=tmp_path).returncode == 0


def test_rerun_a_case_on_a_backend_prints_the_difference(cases, tmp_path):
    # count_sum_rows fails on ONNX's reference evaluator (spec/50-findings.md)
    done = cli("run", str(cases / "count_sum_rows"), "--backend", "onnx-reference",
               cwd=tmp_path)
    assert done.returncode == 1
    assert "onnx-reference: failed: ValueError" in done.stdout
    done = cli("run", str(cases / "concat_padding"), "--backend", "lazyloop", cwd=tmp_path)
    assert done.returncode == 0 and "lazyloop against lazyloop: same" in done.stdout


def test_a_plug_in_backends_case_is_re_run_as_its_readme_says(tmp_path):
    # the planted-fault backend of notebook 7 (every Loop runs M + 1 trips): its case's
    # README names the module:factory it was found with, and `run` takes it
    done = cli("check", "--backend", "lazyloop.teach.planted:two_faults", "--kind", "onnx-loop",
               "--examples", "30", "--seed", "0", "--no-shrink", "--out", "out", "--quiet",
               cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    case = sorted((tmp_path / "out").glob("case_*"))[0]
    rerun = re.search(r"re-run: `lazyloop run (\S+) --backend (\S+)`",
                      (case / "README.md").read_text())
    assert rerun and rerun.group(2) == "lazyloop.teach.planted:two_faults"
    done = cli("run", rerun.group(1), "--backend", rerun.group(2), cwd=tmp_path / "out")
    assert done.returncode == 1 and "two_faults against lazyloop: DIFFERENT" in done.stdout
    done = cli("run", rerun.group(1), "--backend", "nope:nothing", cwd=tmp_path / "out")
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1


def test_not_a_case_folder(tmp_path):
    done = cli("run", str(tmp_path), cwd=tmp_path)
    assert done.returncode == 2 and "is not a case folder" in done.stderr


def test_explain_is_bounded(cases, tmp_path):
    # nested_row_sums: the inner loop runs once per row; past --max-events they are summarised
    model = str(cases / "nested_row_sums" / "model.onnx")
    feed = "x=" + str(cases / "nested_row_sums" / "test_data_set_0" / "input_0.pb")
    full = cli("explain", model, "--input", feed, cwd=tmp_path)
    assert full.returncode == 0 and "not drawn" not in full.stdout
    short = cli("explain", model, "--input", feed, "--max-events", "3", cwd=tmp_path)
    assert short.returncode == 0
    assert re.search(r"\.\.\. \d+ more activation\(s\) of \S+ with \d+ forced element\(s\) "
                     r"not drawn", short.stdout)
    assert len(short.stdout) < len(full.stdout)


def test_version_matches_pyproject_and_changelog(tmp_path):
    import lazyloop
    done = cli("--version", cwd=tmp_path)
    assert done.returncode == 0 and done.stdout.strip() == f"lazyloop {lazyloop.__version__}"
    with open(os.path.join(ROOT, "pyproject.toml")) as f:
        assert f'version = "{lazyloop.__version__}"' in f.read()
    with open(os.path.join(ROOT, "CHANGELOG.md")) as f:
        assert f"## {lazyloop.__version__}" in f.read()


def test_every_option_has_help_and_defaults_are_shown(tmp_path):
    from lazyloop.cli import build_parser
    from lazyloop.cli.conformance import build_parser as conformance_parser
    from lazyloop.cli.check import build_parser as check_parser
    parsers = [check_parser()]
    for root in (build_parser(), conformance_parser()):
        for action in root._actions:
            if action.choices and isinstance(action.choices, dict):
                parsers += [p for n, p in action.choices.items()
                            if n not in ("check", "conformance", "bench")]
    for parser in parsers:
        for action in parser._actions:
            if action.option_strings or action.dest not in ("rest",):
                assert action.help, (parser.prog, action.dest)
    text = " ".join(cli("run", "--help", cwd=tmp_path).stdout.split())
    assert "(default: 10000000)" in text and "exit status: 0 nothing new found" in text
    text = " ".join(cli("check", "--help", cwd=tmp_path).stdout.split())
    assert "(default: 200)" in text and "unexplained: findings no registered ambiguity " \
        "explains (the default)" in text


def test_a_missing_extra_names_it(tmp_path):
    # an onnx that cannot be imported, shadowing the installed one
    shadow = tmp_path / "shadow"
    shadow.mkdir()
    (shadow / "onnx.py").write_text("raise ModuleNotFoundError(\"No module named 'onnx'\", "
                                    "name='onnx')\n")
    (tmp_path / "m.onnx").write_bytes(b"")
    done = cli("run", "m.onnx", cwd=tmp_path, env_path=f"{shadow}{os.pathsep}{ROOT}")
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "install lazyloop[onnx]" in done.stderr


def test_progress_line_on_a_terminal_only():
    # a long evaluation shows its running time on a terminal, redrawn in place; elsewhere
    # nothing (CI logs get no carriage returns)
    import io
    import time

    from lazyloop.cli.evaluating import progress_while

    class Terminal(io.StringIO):
        def isatty(self):
            return True
    tty, log = Terminal(), io.StringIO()
    assert progress_while("evaluating m.onnx", lambda: time.sleep(1.3) or 7, tty,
                          after=0.1) == 7
    assert progress_while("evaluating m.onnx", lambda: time.sleep(0.3) or 8, log,
                          after=0.1) == 8
    assert "\revaluating m.onnx ... 1 s" in tty.getvalue().replace("\x1b[K", "")
    assert log.getvalue() == ""


def test_rerun_an_openvino_case_on_openvino(tmp_path):
    # openvino_zero_trips (A5): zero trips run; the back-edged value keeps its initial [4, 8]
    pytest.importorskip("openvino")
    assert cli("conformance", "export", "c", "--case", "openvino_zero_trips",
               cwd=tmp_path).returncode == 0
    done = cli("run", "c/openvino_zero_trips", "--backend", "openvino", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "[4. 8.]" in done.stdout and "openvino against lazyloop: same" in done.stdout


def test_a_case_with_sequence_and_optional_values_is_read_back(tmp_path):
    # a case folder holds SequenceProto / OptionalProto files where the model's values are
    # sequences or optionals (ONNX's backend-test layout); `run` reads them back by the
    # model's types: s = [x, x], o = Optional(x) (written as x), e = the empty optional
    from lazyloop.difftest.cases import read_case, write_data_set
    x = np.array([1.5, -2.0], np.float32)
    ftype = helper.make_tensor_type_proto(TensorProto.FLOAT, [2])
    graph = helper.make_graph(
        [helper.make_node("SequenceConstruct", ["x", "x"], ["s"]),
         helper.make_node("Optional", ["x"], ["o"]),
         helper.make_node("Optional", [], ["e"], type=ftype)], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_value_info("s", helper.make_sequence_type_proto(ftype)),
         helper.make_value_info("o", helper.make_optional_type_proto(ftype)),
         helper.make_value_info("e", helper.make_optional_type_proto(ftype))])
    case = tmp_path / "case_seq"
    case.mkdir()
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]),
              str(case / "model.onnx"))
    write_data_set(str(case / "test_data_set_0"), {"x": x}, {"s": [x, x], "o": x, "e": None},
                   {})
    (data,) = read_case(str(case)).data_sets
    assert [v.tolist() for v in data.expected["s"]] == [x.tolist(), x.tolist()]
    assert data.expected["o"].tolist() == x.tolist() and data.expected["e"] is None
    done = cli("run", str(case), cwd=tmp_path)
    assert done.returncode == 0 and "saved expected outputs: same" in done.stdout, done.stdout
