"""`lazyloop run`: evaluate a model -- or re-run a saved case folder -- and print the outputs,
undefined positions shown as `--`; with `--backend`, also run it on a backend and print what
differs."""
from __future__ import annotations

import os

import numpy as np

from .backend import started
from .common import EXIT_FINDINGS, EXIT_OK, UsageError, writable_folder
from .evaluating import outputs_and_masks, progress_while
from .inputs import load_model, model_format, parse_inputs, read_case_folder


def show_value(name, value, defined):
    print(f"{name}:", end=" ")
    if isinstance(value, np.ndarray):
        print(f"shape={list(value.shape)} dtype={value.dtype}")
        if defined is not None and not np.all(defined):
            undefined = int(np.size(defined) - np.count_nonzero(defined))
            print(f"  ({undefined} undefined positions, shown as --)")
            print(np.ma.array(value, mask=~np.asarray(defined, bool)))
        else:
            print(value)
    else:
        print(repr(value))


def show_paths(paths):
    """`--verbose`: which evaluator ran each loop (`laziness/modes`)."""
    print("loops (engine: the per-trip schedule; reference: the reference machine, and why):")
    if not paths:
        print("  (no loop ran)")
    for loop, path in paths.items():
        print(f"  {loop}: {path}")


def cmd_run(args) -> int:
    """Everything the user gave is checked before the model is evaluated: --save writable,
    the model file read, the feeds matched to it, the backend started and taking the model's
    format."""
    if os.path.isdir(args.model):
        return run_case_folder(args)
    if args.save:
        writable_folder("--save", args.save)
    lowered = load_model(args.model)
    feeds = parse_inputs(args.input, lowered)
    paths = {}
    with started(args.backend, args.timeout, "lazyloop run") as b:
        takes_format(b, args.backend, args.model)
        outputs, masks = progress_while(f"lazyloop: evaluating {args.model}",
                                        lambda: outputs_and_masks(lowered, feeds, args.max_trips,
                                                                  args.max_seconds or None,
                                                                  paths))
        for name, value in outputs.items():
            show_value(name, value, masks.get(name))
        if args.verbose:
            show_paths(paths)
        if args.save:
            save_outputs(args.save, outputs)
        if b is not None and against_backend(b, args, args.model, feeds, outputs, masks):
            return EXIT_FINDINGS
    return EXIT_OK


def save_outputs(directory, outputs):
    try:
        for name, value in outputs.items():
            if isinstance(value, np.ndarray):
                safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in name)
                np.save(os.path.join(directory, f"{safe}.npy"), value)
    except OSError as exc:
        raise UsageError(f"--save {directory}: cannot write there ({exc.strerror})") from None
    print(f"saved {len(outputs)} outputs to {directory}")


def run_case_folder(args) -> int:
    """A saved case: lazyloop's outputs against the expected ones saved with it (same
    tolerances as `check`), then, with --backend, the backend's against lazyloop's."""
    from ..difftest.comparing import compare
    if args.input or args.save:
        raise UsageError("a case folder brings its own inputs: --input and --save do not apply")
    case = read_case_folder(args.model)
    differs = False
    with started(args.backend, args.timeout, "lazyloop run") as b:
        from ..difftest.backends import a_model
        takes_format(b, args.backend, case.model_path)
        lowered = load_model(case.model_path)
        print(f"case {case.directory} ({a_model(case.format)}, "
              f"{len(case.data_sets)} data set(s))")
        for data in case.data_sets:
            paths = {}
            outputs, masks = progress_while(f"lazyloop: evaluating {case.model_path}",
                                            lambda: outputs_and_masks(lowered, data.inputs,
                                                                      args.max_trips,
                                                                      args.max_seconds or None,
                                                                      paths))
            print(f"\n{data.name}: lazyloop {_version()}")
            for name, value in outputs.items():
                show_value(name, value, masks.get(name))
            if args.verbose:
                show_paths(paths)
            diffs = compare(data.expected, data.defined, outputs, args.rtol, args.atol)
            print(f"lazyloop against the saved expected outputs: "
                  f"{'same' if not diffs else 'DIFFERENT'}")
            for d in diffs:
                print(f"  {d.output}: {d.kind}: {d.detail}")
            differs |= bool(diffs)
            if b is not None:
                differs |= against_backend(b, args, case.model_path, data.inputs, outputs,
                                           masks)
    return EXIT_FINDINGS if differs else EXIT_OK


def against_backend(b, args, model_path, feeds, outputs, masks) -> bool:
    """Run the model on the started backend `b`, print what differs from lazyloop; True
    when something differs that no registered ambiguity explains (one that does is named,
    and counts no more than it does for `check`'s default --fail-on unexplained)."""
    from ..difftest import Unsupported
    from ..difftest.comparing import compare
    from ..difftest.schema import backend_version
    try:
        fresh = {k: np.array(v) for k, v in feeds.items()}  # writable copies
        actual = b.run(read_model_for(b, model_path), fresh)
    except Unsupported as exc:
        print(f"\n{args.backend}: refused the model: {' '.join(str(exc).split())[:400]}")
        return True
    except Exception as exc:  # a crash, a hang or an error while running: the finding
        error = f"{type(exc).__name__}: {' '.join(str(exc).split())[:400]}"
        print(f"\n{args.backend}: failed: {error}")
        return not explained(args, model_path, feeds, None, error)
    print(f"\n{args.backend} {backend_version(b) or ''}".rstrip() + ":")
    for name, value in actual.items():
        if name in outputs:
            show_value(name, np.asarray(value), None)
    diffs = compare(outputs, masks, actual, args.rtol, args.atol)
    print(f"{args.backend} against lazyloop: {'same' if not diffs else 'DIFFERENT'}")
    for d in diffs:
        print(f"  {d.output}: {d.kind}: {d.detail}")
    return bool(diffs) and not explained(args, model_path, feeds, actual, None)


def explained(args, model_path, feeds, actual, error) -> bool:
    """Whether another reading of a registered ambiguity makes lazyloop agree with the
    backend -- the search `check` makes for each finding (`Checker.attribute`); says which."""
    from ..difftest.checking import Checker
    from ..difftest.report import Outcome
    saved = _SavedModel(model_format(model_path), read_model_for(None, model_path, proto=True),
                        dict(feeds))
    outcome = Outcome("disagree", error=error)
    Checker(None, tolerance=(args.rtol, args.atol)).attribute(saved, outcome, actual)
    if outcome.ambiguity is None:
        return False
    print(f"explained by ambiguity {outcome.ambiguity}: under another of its readings "
          f"lazyloop agrees with {args.backend} (spec/ambiguities.md); as for `lazyloop "
          f"check`, an explained difference does not count")
    return True


class _SavedModel:
    """A model file and its feeds, as `Checker.attribute` reads a generated subject."""

    def __init__(self, fmt, model, feeds):
        self.format, self._model, self.feeds = fmt, model, feeds

    def model(self):
        return self._model


def takes_format(b, name, model_path) -> None:
    """The backend must take the model's format: a mismatch is the user's, before any work."""
    if b is None:
        return
    from ..difftest.backends import a_model, formats_of
    fmt = model_format(model_path)
    if fmt not in formats_of(b):
        raise UsageError(f"--backend {name}: it takes {' and '.join(formats_of(b))} models, "
                         f"not {a_model(fmt)} ({model_path})")


def read_model_for(b, path, proto=False):
    """The model file as the backend takes it: ONNX bytes (a ModelProto with `proto`), or an
    OpenVINO model."""
    if path.endswith(".onnx"):
        with open(path, "rb") as f:
            data = f.read()
        if proto:
            import onnx
            return onnx.ModelProto.FromString(data)
        return data
    from ..openvino.ir import read_ir
    return read_ir(path)


def _version():
    from .. import __version__
    return __version__
