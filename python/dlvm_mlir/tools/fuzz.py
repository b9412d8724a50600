"""``dlvm-fuzz``: a Kitten-style mutation fuzzer for dlvm-mlir (see docs/fuzzing.md).

    dlvm-fuzz [--seed N] [--time SECONDS] [--count N] [--out DIR] [--corpus DIR]
              [--timeout SECONDS] [--no-reduce] [--cpu-pipeline P] [--gpu-emulate P]
    dlvm-fuzz --replay FILE.mlir [--seed N]

Mutates the programs under ``test/`` at token and tree level, runs each
mutant through parse, canonicalize+cse, dlvm-differentiate, dlvm-optimize,
dlvm-cpu-pipeline, compile, and calls every public function on random inputs,
comparing compiled results with the interpreter's; some programs also go through
the CUDA back end, their kernels run on the CPU (the emulated GPU), and are
compared the same way. Each program's stages run
in a forked worker process, so a crash is recorded rather than fatal.
Prints progress lines; writes ``summary.json`` and reproducers (original and
line-reduced) to ``--out``. Exits 1 when a failure of dlvm-mlir occurred
(crash, traceback, unlocated error, internal compiler error, miscompile,
invalid printed IR, a timeout while compiling), else 0.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="dlvm-fuzz", description="Mutation fuzzer for dlvm-mlir.")
    parser.add_argument("--seed", type=int, default=None, help="random seed (default 1; deterministic)")
    parser.add_argument("--time", type=float, default=None, metavar="SECONDS", help="stop after this long")
    parser.add_argument("--count", type=int, default=None, metavar="N", help="stop after N programs")
    parser.add_argument("--out", type=Path, default=Path("fuzz-out"), metavar="DIR",
                        help="results directory (default fuzz-out)")
    parser.add_argument("--corpus", type=Path, default=None, metavar="DIR",
                        help="directory of .mlir seed programs (default: the project's test/)")
    parser.add_argument("--timeout", type=float, default=60.0, metavar="SECONDS",
                        help="time limit per program (default 60)")
    parser.add_argument("--no-reduce", action="store_true", help="do not minimize reproducers")
    parser.add_argument("--reduce-time", type=float, default=90.0, metavar="SECONDS",
                        help="time limit for minimizing one failure (default 90)")
    parser.add_argument("--cpu-pipeline", type=float, default=0.3, metavar="P",
                        help="fraction of programs also run through dlvm-cpu-pipeline with random options")
    parser.add_argument("--gpu-emulate", type=float, default=0.25, metavar="P",
                        help="fraction of programs also compiled for CUDA and run on the emulated GPU "
                             "(the kernels on the CPU) against the interpreter")
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
    parser.add_argument("--replay", type=Path, metavar="FILE",
                        help="run one program (e.g. a reproducer) through the stages and print its outcome")
    return parser


def _default_corpus() -> Path:
    here = Path(__file__).resolve()
    for parent in here.parents:
        if (parent / "test" / "lit.cfg.py").exists():
            return parent / "test"
    return Path("test")


def run(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    # compiled code is cached on disk by default: not for thousands of throwaway programs
    os.environ.setdefault("DLVM_MLIR_DISK_CACHE", "0")
    from ..fuzz.driver import FuzzConfig, Fuzzer, replay
    from ..fuzz.oracle import is_bad

    if args.replay is not None:
        if not args.replay.is_file():
            print(f"dlvm-fuzz: error: cannot read {args.replay}", file=sys.stderr)
            return 1
        outcome = replay(args.replay, seed=args.seed, timeout=args.timeout, cpu_pipeline=args.cpu_pipeline,
                         gpu_emulate=args.gpu_emulate)
        print(f"class: {outcome['cls']}\nstage: {outcome['stage']}")
        for note in outcome.get("notes", []):
            print(f"note: {note}")
        if outcome.get("message"):
            print(outcome["message"])
        return 1 if is_bad(outcome["cls"], outcome["stage"]) else 0
    if args.time is None and args.count is None:
        args.time = 600.0
    corpus = args.corpus or _default_corpus()
    if not corpus.is_dir():
        print(f"dlvm-fuzz: error: corpus directory {corpus} does not exist", file=sys.stderr)
        return 1
    config = FuzzConfig(
        seed=1 if args.seed is None else args.seed,
        time_limit=args.time,
        count=args.count,
        out=args.out,
        corpus=corpus,
        timeout=args.timeout,
        reduce=not args.no_reduce,
        reduce_seconds=args.reduce_time,
        cpu_pipeline=args.cpu_pipeline,
        gpu_emulate=args.gpu_emulate,
        quiet=args.quiet,
    )
    try:
        summary = Fuzzer(config).run()
    except (OSError, RuntimeError) as err:
        print(f"dlvm-fuzz: error: {err}", file=sys.stderr)
        return 1
    if not args.quiet:
        for failure in summary["failures"]:
            where = failure["minimized"] or failure["reproducer"]
            print(f"{failure['class']:>11} {failure['stage']:<13} x{failure['count']:<4} {where}")
        print(f"summary: {args.out / 'summary.json'}")
    return 1 if summary["bad"] else 0


def main(argv: list[str] | None = None) -> int:
    return run(argv)


if __name__ == "__main__":
    sys.exit(main())
