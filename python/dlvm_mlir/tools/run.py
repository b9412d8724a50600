"""``dlvm-run``: compile a DLVM program and run one of its functions on .npy inputs.

    dlvm-run FILE.mlir --entry fn --input a.npy --input b.npy [--output out.npz]
             [--target cpu|cuda] [--no-optimize] [--check-bounds]
             [--check-gradients [--tolerance TOL]]

Prints each result's shape, dtype and a summary (min, max, mean); with
``--output`` saves them as ``result0``, ``result1``, ... in an ``.npz`` file.
With ``--check-gradients`` nothing is compiled: a seedable gradient of the
entry is synthesized (with respect to the arguments and from the result of
the module's own gradient declaration of the entry, if it has one, else with
respect to every floating-point argument), evaluated on the inputs by the
reference interpreter in float64, and compared with central finite differences
of ``<seed, f(x)>`` for a random seed. It prints the worst relative error per
argument and exits 1 when one exceeds ``--tolerance`` (default 1e-6).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from ..compiler_process import direct_mode
from ..errors import DLVMError
from .diagnostics import report_error

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dlvm-run", description="Compile a DLVM program and run one function on .npy inputs."
    )
    parser.add_argument("file", type=Path, help="DLVM IR (.mlir)")
    parser.add_argument("--entry", required=True, help="the function to run")
    parser.add_argument("--input", action="append", default=[], type=Path, metavar="NPY",
                        help="an argument as a .npy file (repeat in argument order)")
    parser.add_argument("--output", type=Path, metavar="NPZ", help="save the results to a .npz file")
    parser.add_argument("--target", default="cpu", choices=("cpu", "cuda"))
    parser.add_argument("--no-optimize", action="store_true", help="skip dlvm-optimize")
    parser.add_argument("--check-bounds", action="store_true",
                        help="report an out-of-range run-time index (dlvm-check-bounds) instead of accessing it")
    parser.add_argument("--check-gradients", action="store_true",
                        help="compare the entry's synthesized gradients with finite differences")
    parser.add_argument("--tolerance", type=float, default=1e-6, metavar="TOL",
                        help="with --check-gradients: the largest accepted relative error (default 1e-6)")
    return parser


def _load_inputs(paths: list[Path]) -> list[np.ndarray]:
    arrays = []
    for path in paths:
        try:
            arrays.append(np.load(path, allow_pickle=False))
        except (OSError, ValueError) as err:
            raise DLVMError(f"cannot read input {path}: {err}") from None
    return arrays


def _summary(value: np.ndarray) -> str:
    value = np.asarray(value)
    head = f"shape={tuple(value.shape)} dtype={value.dtype}"
    if value.size == 0 or value.dtype == np.bool_:
        return head + (f" true={int(value.sum())}" if value.dtype == np.bool_ else "")
    as_float = value.astype(np.float64)
    return (
        f"{head} min={as_float.min():.6g} max={as_float.max():.6g} mean={as_float.mean():.6g}"
    )


def _declared(text: str, filename: str, entry: str) -> tuple[tuple[int, ...] | None, int | None]:
    """``wrt`` and ``from`` of the module's gradient declaration of ``entry`` (None, None if none)."""
    from .. import make_context
    from ..dialects.dlvm import DerivativeDecl
    from ..parsing import parse_module

    module = parse_module(text, make_context(), filename)
    for op in module.body.operations:
        if op.operation.name != "func.func":
            continue
        decl = DerivativeDecl.of_function(op.operation)
        if decl is not None and decl.kind == "gradient" and decl.of == entry:
            return decl.wrt, decl.from_
    return None, None


def _check_gradients(text: str, args: argparse.Namespace, inputs: list[np.ndarray]) -> int:
    from ..testing import check_gradients

    filename = str(args.file)
    wrt, from_ = _declared(text, filename, args.entry)
    report = check_gradients(
        text, args.entry, *inputs, wrt=wrt, from_=from_, tolerance=args.tolerance, filename=filename
    )
    for position, index in enumerate(report.wrt):
        print(
            f"argument {index}: relative error {report.errors[index]:.3g} "
            f"(synthesized gradient max |g| = {float(np.max(np.abs(report.analytic[position]), initial=0.0)):.6g})"
        )
    if report.ok:
        print(f"gradient of @{args.entry}: ok (worst relative error {report.worst:.3g} <= {args.tolerance:g})")
        return 0
    sys.stdout.flush()
    print(
        f"dlvm-run: error: gradient of @{args.entry}: worst relative error {report.worst:.3g} "
        f"> {args.tolerance:g} (synthesized vs central finite differences)",
        file=sys.stderr,
    )
    return 1


def run(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        text = args.file.read_text()
    except OSError as err:
        raise DLVMError(f"cannot read {args.file}: {err.strerror}") from None
    inputs = _load_inputs(args.input)
    if args.check_gradients:
        return _check_gradients(text, args, inputs)

    from ..compiler import compile as compile_program

    exe = compile_program(
        text, args.target, optimize=not args.no_optimize, filename=str(args.file),
        check_bounds=args.check_bounds or None,
    )
    results = exe[args.entry](*inputs)
    results = results if isinstance(results, tuple) else (results,)
    for index, value in enumerate(results):
        print(f"result {index}: {_summary(value)}")
    if args.output is not None:
        np.savez(args.output, **{f"result{i}": np.asarray(v) for i, v in enumerate(results)})
        print(f"saved {len(results)} result(s) to {args.output}")
    return 0


def main(argv: list[str] | None = None) -> int:
    try:
        with direct_mode():
            return run(argv)
    except DLVMError as err:
        report_error("dlvm-run", err, sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
