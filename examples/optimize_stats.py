"""Op counts and dot multiply-adds before and after ``dlvm-optimize`` on gradient programs.

    .venv/bin/python examples/optimize_stats.py [pipeline]

Programs: the gradient that ``dlvm-differentiate`` synthesizes for
``examples/mlp.mlir``, and the functions of ``test/Transforms/optimize.mlir``
(an MLP with a naively written backward pass, a low-rank layer, an RNN cell).
Every function is run before and after in the reference interpreter (float64,
random inputs) to check that the outputs agree.
"""

from __future__ import annotations

import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from mlir import ir

import dlvm_mlir
from dlvm_mlir.interpreter import Interpreter
from dlvm_mlir.passes import run_pipeline

ROOT = Path(__file__).resolve().parent.parent
PROGRAMS = {
    "examples/mlp.mlir (after dlvm-differentiate)": (ROOT / "examples" / "mlp.mlir", "dlvm-differentiate"),
    "test/Transforms/optimize.mlir": (ROOT / "test" / "Transforms" / "optimize.mlir", None),
}


@dataclass(frozen=True)
class Measurement:
    program: str
    function: str
    ops_before: int
    ops_after: int
    macs_before: int
    macs_after: int
    max_rel_error: float


def function_ops(module: ir.Module) -> dict[str, list[ir.OpView]]:
    """The ops of each function body (terminators left out), by function name."""
    result = {}
    for func in module.body.operations:
        if func.operation.name != "func.func" or not func.regions[0].blocks:
            continue
        ops: list[ir.OpView] = []

        def visit(op: ir.Operation) -> ir.WalkResult:
            if op.name not in ("func.func", "func.return"):
                ops.append(op)
            return ir.WalkResult.ADVANCE

        func.operation.walk(visit)
        result[ir.StringAttr(func.attributes["sym_name"]).value] = ops
    return result


def dot_macs(ops: list[ir.Operation]) -> int:
    """Multiply-adds of the dots among ``ops``."""
    total = 0
    for op in ops:
        if op.name != "dlvm.dot":
            continue
        lhs = ir.RankedTensorType(op.operands[0].type).shape
        out = ir.RankedTensorType(op.results[0].type).shape
        total += int(np.prod(out, dtype=np.int64)) * lhs[-1]
    return total


def op_histogram(module: ir.Module, function: str) -> Counter[str]:
    return Counter(op.name for op in function_ops(module)[function])


def measure(program: str, text: str, prepare: str | None, pipeline: str, seed: int = 0) -> list[Measurement]:
    """Measure every function of ``text`` (after the ``prepare`` pipeline) under ``pipeline``."""
    with dlvm_mlir.make_context():
        before = ir.Module.parse(text)
        if prepare:
            run_pipeline(before, prepare)
        after = ir.Module.parse(str(before))
        run_pipeline(after, pipeline)
        ops_before, ops_after = function_ops(before), function_ops(after)
        rng = np.random.default_rng(seed)
        results = []
        for name, ops in ops_before.items():
            args = [_random(t, rng) for t in _function(before, name).type.inputs]
            expected = _tuple(Interpreter(before, dtype=np.float64).run(name, *args))
            actual = _tuple(Interpreter(after, dtype=np.float64).run(name, *args))
            error = max((_rel_error(e, a) for e, a in zip(expected, actual, strict=True)), default=0.0)
            after_ops = ops_after[name]
            results.append(
                Measurement(program, name, len(ops), len(after_ops), dot_macs(ops), dot_macs(after_ops), error)
            )
        return results


def _function(module: ir.Module, name: str) -> ir.OpView:
    return next(op for op in module.body.operations if ir.StringAttr(op.attributes["sym_name"]).value == name)


def _random(type_: ir.Type, rng: np.random.Generator) -> np.ndarray:
    shaped = ir.RankedTensorType(type_)
    return rng.uniform(-1.0, 1.0, size=tuple(shaped.shape))


def _tuple(result: object) -> tuple:
    return result if isinstance(result, tuple) else (result,)


def _rel_error(expected: np.ndarray, actual: np.ndarray) -> float:
    expected, actual = np.asarray(expected, np.float64), np.asarray(actual, np.float64)
    return float(np.max(np.abs(actual - expected)) / max(np.max(np.abs(expected)), 1e-300))


def main(pipeline: str = "dlvm-optimize") -> list[Measurement]:
    rows = []
    for program, (path, prepare) in PROGRAMS.items():
        rows += measure(program, path.read_text(), prepare, pipeline)
    print(f"pipeline: {pipeline}")
    header = ("function", "ops before", "ops after", "dot MACs before", "dot MACs after", "max rel err")
    print("{:<12} {:>10} {:>9} {:>16} {:>15} {:>11}  program".format(*header))
    for r in rows:
        print(
            f"{r.function:<12} {r.ops_before:>10} {r.ops_after:>9} {r.macs_before:>16,} {r.macs_after:>15,}"
            f" {r.max_rel_error:>11.1e}  {r.program}"
        )
    return rows


if __name__ == "__main__":
    main(*sys.argv[1:])
