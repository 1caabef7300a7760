"""`lazyloop run`: evaluate a model -- or re-run a saved case folder -- and print the outputs,
undefined positions shown as `--`; with `--backend`, also run it on a backend and print what
differs."""
from __future__ import annotations

import os

import numpy as np

from .common import EXIT_FINDINGS, EXIT_OK, UsageError
from .evaluating import outputs_and_masks, progress_while
from .inputs import load_model, parse_inputs


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


def cmd_run(args) -> int:
    if os.path.isdir(args.model):
        return run_case_folder(args)
    lowered = load_model(args.model)
    feeds = parse_inputs(args.input, lowered)
    outputs, masks = progress_while(f"lazyloop: evaluating {args.model}",
                                    lambda: outputs_and_masks(lowered, feeds, args.max_trips,
                                                              args.max_seconds or None))
    for name, value in outputs.items():
        show_value(name, value, masks.get(name))
    if args.save:
        save_outputs(args.save, outputs)
    if args.backend:
        return EXIT_FINDINGS if against_backend(args, args.model, feeds, outputs, masks) \
            else EXIT_OK
    return EXIT_OK


def save_outputs(directory, outputs):
    try:
        os.makedirs(directory, exist_ok=True)
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
    from ..difftest.cases import read_case
    from ..difftest.comparing import compare
    if args.input or args.save:
        raise UsageError("a case folder brings its own inputs: --input and --save do not apply")
    try:
        case = read_case(args.model)
    except ValueError as exc:  # not a case folder
        raise UsageError(str(exc)) from None
    except Exception as exc:  # a .pb file that does not parse
        raise UsageError(f"{args.model}: cannot read the case ({type(exc).__name__}: "
                         f"{exc})") from None
    lowered = load_model(case.model_path)
    differs = False
    print(f"case {case.directory} ({case.format} model, {len(case.data_sets)} data set(s))")
    for data in case.data_sets:
        outputs, masks = progress_while(f"lazyloop: evaluating {case.model_path}",
                                        lambda: outputs_and_masks(lowered, data.inputs,
                                                                  args.max_trips,
                                                                  args.max_seconds or None))
        print(f"\n{data.name}: lazyloop {_version()}")
        for name, value in outputs.items():
            show_value(name, value, masks.get(name))
        diffs = compare(data.expected, data.defined, outputs, args.rtol, args.atol)
        print(f"lazyloop against the saved expected outputs: "
              f"{'same' if not diffs else 'DIFFERENT'}")
        for d in diffs:
            print(f"  {d.output}: {d.kind}: {d.detail}")
        differs |= bool(diffs)
        if args.backend:
            differs |= against_backend(args, case.model_path, data.inputs, outputs, masks)
    return EXIT_FINDINGS if differs else EXIT_OK


def against_backend(args, model_path, feeds, outputs, masks) -> bool:
    """Run the model on `args.backend` (isolated), print what differs from lazyloop; True
    when something does."""
    from ..difftest import Unsupported
    from ..difftest.comparing import compare
    from ..difftest.schema import backend_version
    b = start_backend(args.backend, args.timeout)
    try:
        try:
            fresh = {k: np.array(v) for k, v in feeds.items()}  # writable copies
            actual = b.run(read_model_for(b, model_path), fresh)
        except Unsupported as exc:
            print(f"\n{args.backend}: refused the model: {' '.join(str(exc).split())[:400]}")
            return True
        except Exception as exc:  # a crash, a hang or an error while running: the finding
            print(f"\n{args.backend}: failed: {type(exc).__name__}: "
                  f"{' '.join(str(exc).split())[:400]}")
            return True
    finally:
        close = getattr(b, "close", None)
        if close:
            close()
    print(f"\n{args.backend} {backend_version(args.backend) or ''}".rstrip() + ":")
    for name, value in actual.items():
        if name in outputs:
            show_value(name, np.asarray(value), None)
    diffs = compare(outputs, masks, actual, args.rtol, args.atol)
    print(f"{args.backend} against lazyloop: {'same' if not diffs else 'DIFFERENT'}")
    for d in diffs:
        print(f"  {d.output}: {d.kind}: {d.detail}")
    return bool(diffs)


def start_backend(name, timeout):
    """The backend `--backend` names, as `check` takes it: a built-in name, an entry point
    of `lazyloop.backends`, or module:factory; isolated in a child process."""
    from ..difftest import Isolated
    from ..difftest.plugins import BackendSpecError, factory_of
    try:
        factory_of(name)
    except BackendSpecError as exc:
        raise UsageError(f"--backend {name}: {exc.args[0]}") from None
    return Isolated(name, timeout=timeout)


def read_model_for(b, path):
    """The model file as the backend takes it: ONNX bytes, or an OpenVINO model."""
    if path.endswith(".onnx"):
        with open(path, "rb") as f:
            return f.read()
    import openvino as ov
    return ov.Core().read_model(path)


def _version():
    from .. import __version__
    return __version__
