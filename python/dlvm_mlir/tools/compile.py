"""``dlvm-compile``: build a DLVM program ahead of time (DLVM's ``dlc``).

    dlvm-compile model.mlir -o libmodel.so [--header model.h] [--emit so|obj|asm|llvm]
                 [--target cpu|cuda] [--threads N] [--entry f ...] [--no-optimize]
                 [--check-bounds] [--timing] [--tuning use|search|off]

The program goes through every stage of ``dlvm_mlir.compile`` (in a forked
compiler process, so a crash is an ``internal compiler error`` with a
reproducer, exit 1). ``--emit so`` (the default) links a shared object that
``dlvm_mlir.load("libmodel.so")`` loads and that a C program links (it needs
``libdlvm_runtime.so``, found through the object's rpath); ``obj`` writes one
relocatable object, ``asm`` assembly, ``llvm`` optimized LLVM IR.
``--header`` writes a C header declaring ``<name>_<f>(...)`` with plain
pointers for each entry point (:mod:`dlvm_mlir.backend.header`), ``<name>``
being the header's file name without its suffix.  ``--tuning search``
searches the schedules of the heavy kernels that the tuning database lacks
and records them (:mod:`dlvm_mlir.backend.tuning`).
"""

from __future__ import annotations

import argparse
import functools
import sys
from pathlib import Path

from ..backend.options import TUNING_MODES
from ..compiler_process import direct_mode
from ..errors import DLVMError
from .diagnostics import report_error

__all__ = ["main"]

PROG = "dlvm-compile"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG, description="Build a DLVM program ahead of time.")
    parser.add_argument("file", type=Path, help="DLVM IR (.mlir)")
    parser.add_argument("-o", "--output", type=Path, required=True, help="the artifact to write")
    parser.add_argument("--header", type=Path, help="also write a C header declaring the entry points")
    parser.add_argument("--emit", default="so", choices=("so", "obj", "asm", "llvm"),
                        help="shared object (default), object file, assembly or LLVM IR")
    parser.add_argument("--target", default="cpu", choices=("cpu", "cuda"))
    parser.add_argument("--threads", type=int, default=None,
                        help="threads of parallel loops (default: this machine's cores)")
    parser.add_argument("--entry", action="append", default=None, metavar="FN",
                        help="a function to export (repeat; default: every public function)")
    parser.add_argument("--no-optimize", action="store_true", help="skip dlvm-optimize")
    parser.add_argument("--check-bounds", action="store_true",
                        help="check run-time indices (dlvm-check-bounds); the C entry returns the failed check")
    parser.add_argument("--timing", action="store_true", help="print where the compile time went")
    parser.add_argument("--tuning", choices=TUNING_MODES, default=None,
                        help="the tuning database (CPU): 'use' its schedules, 'search' the heavy kernels "
                             "it lacks first (a few seconds each), or 'off' (default: $DLVM_MLIR_TUNE, else use)")
    return parser


def run(argv: list[str] | None = None) -> int:
    from .. import crash_guard
    from ..backend.header import header
    from ..compiler import CompileOptions, print_timing, build, run_guarded

    args = _parser().parse_args(argv)
    try:
        text = args.file.read_text()
    except OSError as err:
        raise DLVMError(f"cannot read {args.file}: {err.strerror}") from None
    options = CompileOptions(
        target=args.target,
        optimize=not args.no_optimize,
        check_bounds=args.check_bounds,
        entry_points=args.entry,
        **({} if args.threads is None else {"threads": args.threads}),
        **({} if args.tuning is None else {"tuning": args.tuning}),
    )
    filename = str(args.file)
    output = args.output.resolve()
    work = functools.partial(build, text, options, filename, str(output), args.emit)
    report = run_guarded(work, text, options, filename) if crash_guard.enabled() else work()
    if args.timing:
        print_timing(filename, report.seconds, sum(report.seconds.values()))
    if args.header is not None:
        args.header.write_text(header(report.info, args.header.stem, args.file.name))
    return 0


def main(argv: list[str] | None = None) -> int:
    try:
        with direct_mode():
            return run(argv)
    except DLVMError as err:
        report_error(PROG, err, sys.stderr)
        return 1
    except OSError as err:
        print(f"{PROG}: error: {err}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
