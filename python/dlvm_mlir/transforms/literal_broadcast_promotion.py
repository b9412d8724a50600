"""dlvm-literal-broadcast-promotion: DLVM's LiteralBroadcastingPromotion.

A splat tensor literal used by a broadcasting elementwise op (``add`` ...
``cmp``, ``select``) becomes a rank-0 literal when the other operands alone
give the result its shape: ``x * dense<2.0> : tensor<32x10xf32>`` becomes
``x * dense<2.0> : tensor<f32>``. The op computes the same values (the
literal was equal everywhere) and no longer reads a materialized tensor; the
large literal dies when it has no other use.

Exact. Run ``cse`` afterwards to share the new rank-0 literals.
"""

from __future__ import annotations

from mlir import ir

from dlvm_mlir.passes import ModulePass, register_pass
from dlvm_mlir.rewrites import Exactness, apply_rules, rewrite_rule, rule_set
from dlvm_mlir.transforms._patterns import (
    BROADCASTING_OPS,
    keeps_result_shape,
    shape,
    splat_like,
    splat_value,
    with_operands,
)

RULE_SET = "literal-broadcast-promotion"


@rewrite_rule(
    *BROADCASTING_OPS,
    set=RULE_SET,
    exactness=Exactness.EXACT,
    sample="""
func.func @sample(%x: tensor<4x3xf32>, %m: tensor<4x3xi1>) -> (tensor<4x3xf32>, tensor<4x3xi1>, tensor<4x3xf32>) {
  %c = dlvm.constant dense<2.5> : tensor<4x3xf32>
  %r = dlvm.mul %c, %x : tensor<4x3xf32>, tensor<4x3xf32>
  %row = dlvm.constant dense<0.5> : tensor<1x3xf32>
  %p = dlvm.cmp lt, %x, %row : tensor<4x3xf32>, tensor<1x3xf32>
  %s = dlvm.select %m, %c, %x : tensor<4x3xi1>, tensor<4x3xf32>, tensor<4x3xf32>
  return %r, %p, %s : tensor<4x3xf32>, tensor<4x3xi1>, tensor<4x3xf32>
}""",
)
def promote_splat_operand(op: ir.OpView) -> ir.Value | None:
    """op(x, splat c : tensor<...>) -> op(x, splat c : tensor<>) when x alone gives the result shape."""
    scalars: dict[int, tuple[int, ...]] = {}
    for index, operand in enumerate(op.operands):
        if splat_value(operand) is None or len(shape(operand)) == 0:
            continue
        if keeps_result_shape(op, {**scalars, index: ()}):
            scalars[index] = ()
    if not scalars:
        return None
    operands = list(op.operands)
    return with_operands(op, {i: splat_like(operands[i], splat_value(operands[i]), dims=()) for i in scalars})


@register_pass
class LiteralBroadcastPromotion(ModulePass):
    """Applies ``promote_splat_operand`` everywhere."""

    name = "dlvm-literal-broadcast-promotion"
    summary = "Make splat literals used by broadcasting ops rank-0 (DLVM LiteralBroadcastingPromotion)"

    def run(self, module: ir.Operation) -> None:
        apply_rules(module, rule_set(RULE_SET))
