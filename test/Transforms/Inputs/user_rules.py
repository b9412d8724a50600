"""User rewrite rules for apply-rules.mlir, loaded with --load-pass-plugin."""

from mlir import ir

import dlvm_mlir
from dlvm_mlir.dialects import dlvm
from dlvm_mlir.rewrites import Exactness
from dlvm_mlir.transforms._patterns import producer


@dlvm_mlir.rewrite_rule(dlvm.MulOp, set="test-user")
def square_of_self(op: dlvm.MulOp) -> ir.Value | None:
    """x * x -> square(x)."""
    if op.lhs != op.rhs:
        return None
    return dlvm.square(op.lhs)


@dlvm_mlir.rewrite_rule(dlvm.SqrtOp, set="test-user", exactness=Exactness.UNSAFE)
def sqrt_of_square(op: dlvm.SqrtOp) -> ir.Value | None:
    """sqrt(square(x)) -> abs(x) (overflow of the square differs)."""
    sq = producer(op.operand, dlvm.SquareOp)
    if sq is None:
        return None
    return dlvm.abs(sq.operand)
