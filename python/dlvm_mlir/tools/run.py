"""``dlvm-run``: compile a DLVM program and run one of its functions on .npy inputs.

    dlvm-run FILE.mlir --entry fn --input a.npy --input b.npy [--output out.npz]
             [--target cpu|cuda] [--no-optimize] [--check-gradients]

Prints each result's shape, dtype and a summary (min, max, mean); with
``--output`` saves them as ``result0``, ``result1``, ... in an ``.npz`` file.
With ``--check-gradients`` the function must carry a gradient declaration; its
synthesized gradients are compared against central finite differences.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from ..errors import DLVMError

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


def run(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        text = args.file.read_text()
    except OSError as err:
        raise DLVMError(f"cannot read {args.file}: {err.strerror}") from None
    inputs = _load_inputs(args.input)
    if args.check_gradients:
        from ..testing import check_gradients

        report = check_gradients(text, args.entry, *inputs, filename=str(args.file))
        print(report)
        return 0 if report.ok else 1

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
        return run(argv)
    except DLVMError as err:
        print(f"dlvm-run: error: {err}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
