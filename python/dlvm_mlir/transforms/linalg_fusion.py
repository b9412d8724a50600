"""dlvm-linalg-fusion: DLVM's LinearAlgebraFusion (a stub in the Swift code).

``fuse_dot_sum``: a sum of dots with a common output, ``W.x + U.h + b``,
becomes one dot over concatenated operands,
``dot(concat([W, U], axis 1), concat([x, h], axis 0)) + b``. The terms are
collected through a tree of single-use adds of the same type; dots fuse when
they are single-use, have the sum's type and the same operand ranks (matrix x
matrix, matrix x vector, vector x matrix or vector . vector). The other terms
(``b``) are added back afterwards.

The two products cost the same multiply-adds, so the decision is about
memory traffic (in elements): fusing ``n`` dots saves ``n-1`` output writes
and ``n-1`` adds (read 2, write 1 each) but copies every operand into the
concatenations (read and write), so with ``policy=cost`` (the default) a
group fuses when ``4 (n-1) |out| > 2 (sum |lhs_i| + sum |rhs_i|)``: short
contractions with large outputs, such as the gates of a small RNN cell over
a batch. ``policy=always`` fuses every group (fewer, larger kernels).

Transposes are absorbed into dots where that removes them:
``absorb_transpose`` turns ``dot(transpose(A), v)`` into ``dot(v, A)`` (and
``dot(v, transpose(A))`` into ``dot(A, v)``), and ``concat_of_transposes``
turns a concatenation of transposes into one transpose of a concatenation,
so that ``dot(transpose(W), x) + dot(transpose(U), h)`` fuses into
``dot(transpose(concat([W, U], axis 0)), concat([x, h], axis 0))``. The
transposes of ``dot(transpose(a), b)`` on matrices stay for the lowering,
which maps them onto transposed matmuls.

Exactness: ``absorb_transpose`` and ``concat_of_transposes`` are exact;
fusing reorders the additions of the products and of the other terms
(unsafe in the sense of :class:`~dlvm_mlir.rewrites.Exactness`, within the
error bound of the dots themselves). The pass applies all of its rules.
"""

from __future__ import annotations

from collections.abc import Callable

from mlir import ir

from dlvm_mlir.dialects import dlvm
from dlvm_mlir.passes import ModulePass, Option, register_pass
from dlvm_mlir.rewrites import Exactness, apply_rules, rewrite_rule, rule_set
from dlvm_mlir.transforms._patterns import (
    is_matrix_transpose,
    num_elements,
    producer,
    shape,
    single_use,
    transpose,
    transpose_perm,
)

RULE_SET = "linalg-fusion"

_FUSE_SAMPLE = """
func.func @sample(%w: tensor<8x2xf32>, %x: tensor<2x8xf32>, %u: tensor<8x3xf32>, %h: tensor<3x8xf32>,
                  %b: tensor<1x8xf32>) -> tensor<8x8xf32> {
  %wx = dlvm.dot %w, %x : tensor<8x2xf32>, tensor<2x8xf32>
  %uh = dlvm.dot %u, %h : tensor<8x3xf32>, tensor<3x8xf32>
  %s = dlvm.add %wx, %b : tensor<8x8xf32>, tensor<1x8xf32>
  %r = dlvm.add %s, %uh : tensor<8x8xf32>, tensor<8x8xf32>
  return %r : tensor<8x8xf32>
}"""


def _sum_terms(root: dlvm.AddOp) -> list[ir.Value]:
    """The terms of the tree of single-use, same-type adds rooted at ``root``."""
    terms: list[ir.Value] = []
    # an explicit stack, left operand first: a chain of a thousand adds (an average pooling's
    # gradient over a window of 1000, dlvm-fuzz seed 7171) exceeded Python's recursion limit
    pending: list[tuple[ir.Value, bool]] = [(root.result, True)]
    while pending:
        value, is_root = pending.pop()
        add = producer(value, dlvm.AddOp)
        if add is None or add.result.type != root.result.type or not (is_root or single_use(value)):
            terms.append(value)
            continue
        pending.append((add.rhs, False))
        pending.append((add.lhs, False))
    return terms


def _is_inside_sum(op: dlvm.AddOp) -> bool:
    """Whether ``op`` is an inner node of a larger sum (the root handles it)."""
    if not single_use(op.result):
        return False
    user = next(iter(op.result.uses)).owner
    return isinstance(user, dlvm.AddOp) and user.result.type == op.result.type


def _fusable_dot(term: ir.Value, result_type: ir.Type) -> dlvm.DotOp | None:
    d = producer(term, dlvm.DotOp)
    if d is None or not single_use(term) or term.type != result_type:
        return None
    if len(shape(d.lhs)) not in (1, 2) or len(shape(d.rhs)) not in (1, 2):
        return None
    return d


def _traffic_saved(group: list[dlvm.DotOp]) -> int:
    """Elements of memory traffic saved by fusing ``group`` (negative: fusing costs more)."""
    out = num_elements(shape(group[0].result))
    copied = sum(num_elements(shape(d.lhs)) + num_elements(shape(d.rhs)) for d in group)
    return 4 * (len(group) - 1) * out - 2 * copied


def _fuse_sum(op: dlvm.AddOp, worth_it: Callable[[list[dlvm.DotOp]], bool]) -> ir.Value | None:
    if _is_inside_sum(op):
        return None
    element = ir.RankedTensorType(op.result.type).element_type
    if isinstance(element, ir.IntegerType) and ir.IntegerType(element).width == 1:
        return None  # i1: dot sums with OR, add is XOR (found by dlvm-fuzz)
    groups: dict[tuple[int, int], list[dlvm.DotOp]] = {}
    others: list[ir.Value] = []
    for term in _sum_terms(op):
        d = _fusable_dot(term, op.result.type)
        if d is None:
            others.append(term)
        else:
            groups.setdefault((len(shape(d.lhs)), len(shape(d.rhs))), []).append(d)
    fused: list[ir.Value] = []
    for (lhs_rank, _), group in groups.items():
        if len(group) < 2 or not worth_it(group):
            others.extend(d.result for d in group)
            continue
        lhs = dlvm.concatenate([d.lhs for d in group], lhs_rank - 1)
        rhs = dlvm.concatenate([d.rhs for d in group], 0)
        fused.append(dlvm.dot(lhs, rhs))
    if not fused:
        return None
    total = fused[0]
    for term in fused[1:] + others:
        total = dlvm.add(total, term)
    return total


@rewrite_rule(dlvm.AddOp, set=RULE_SET, exactness=Exactness.UNSAFE, sample=_FUSE_SAMPLE)
def fuse_dot_sum(op: dlvm.AddOp) -> ir.Value | None:
    """W.x + U.h + b -> dot(concat([W, U]), concat([x, h])) + b, when it saves memory traffic."""
    return _fuse_sum(op, lambda group: _traffic_saved(group) > 0)


@rewrite_rule(
    dlvm.AddOp,
    set=RULE_SET,
    name="fuse_dot_sum_always",
    exactness=Exactness.UNSAFE,
    sample="""
func.func @sample(%w: tensor<4x16xf32>, %x: tensor<16x4xf32>, %u: tensor<4x16xf32>, %h: tensor<16x4xf32>)
    -> tensor<4x4xf32> {
  %wx = dlvm.dot %w, %x : tensor<4x16xf32>, tensor<16x4xf32>
  %uh = dlvm.dot %u, %h : tensor<4x16xf32>, tensor<16x4xf32>
  %r = dlvm.add %wx, %uh : tensor<4x4xf32>, tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}""",
)
def fuse_dot_sum_always(op: dlvm.AddOp) -> ir.Value | None:
    """W.x + U.h + b -> dot(concat([W, U]), concat([x, h])) + b, whatever it costs."""
    return _fuse_sum(op, lambda group: True)


@rewrite_rule(
    dlvm.DotOp,
    set=RULE_SET,
    exactness=Exactness.EXACT,
    sample="""
func.func @sample(%a: tensor<3x4xf32>, %v: tensor<3xf32>, %w: tensor<4xf32>) -> (tensor<4xf32>, tensor<3xf32>) {
  %t = dlvm.transpose %a : tensor<3x4xf32>
  %r = dlvm.dot %t, %v : tensor<4x3xf32>, tensor<3xf32>
  %s = dlvm.dot %w, %t : tensor<4xf32>, tensor<4x3xf32>
  return %r, %s : tensor<4xf32>, tensor<3xf32>
}""",
)
def absorb_transpose(op: dlvm.DotOp) -> ir.Value | None:
    """dot(transpose(A), v) -> dot(v, A) and dot(v, transpose(A)) -> dot(A, v) for a vector v."""
    ta = is_matrix_transpose(op.lhs)
    if ta is not None and len(shape(op.rhs)) == 1:
        return dlvm.dot(op.rhs, ta.operand)
    tb = is_matrix_transpose(op.rhs)
    if tb is not None and len(shape(op.lhs)) == 1:
        return dlvm.dot(tb.operand, op.lhs)
    return None


@rewrite_rule(
    dlvm.ConcatenateOp,
    set=RULE_SET,
    exactness=Exactness.EXACT,
    sample="""
func.func @sample(%w: tensor<2x8xf32>, %u: tensor<3x8xf32>) -> tensor<8x5xf32> {
  %wt = dlvm.transpose %w : tensor<2x8xf32>
  %ut = dlvm.transpose %u : tensor<3x8xf32>
  %r = dlvm.concatenate %wt, %ut axis 1 : tensor<8x2xf32>, tensor<8x3xf32>
  return %r : tensor<8x5xf32>
}""",
)
def concat_of_transposes(op: dlvm.ConcatenateOp) -> ir.Value | None:
    """concat([transpose(a, p), transpose(b, p)], axis k) -> transpose(concat([a, b], axis p[k]), p)."""
    operands = list(op.operands_)
    transposes = [producer(v, dlvm.TransposeOp) for v in operands]
    if len(operands) < 2 or any(t is None for t in transposes) or not all(single_use(v) for v in operands):
        return None
    perm = transpose_perm(transposes[0])
    if any(transpose_perm(t) != perm for t in transposes[1:]):
        return None
    axis = ir.IntegerAttr(op.attributes["axis"]).value
    return transpose(dlvm.concatenate([t.operand for t in transposes], perm[axis]), perm)


@register_pass
class LinalgFusion(ModulePass):
    """Applies the ``linalg-fusion`` rules (one fusion policy)."""

    name = "dlvm-linalg-fusion"
    summary = "Fuse sums of dots into one dot over concatenations; absorb transposes (DLVM LinearAlgebraFusion)"
    options = (
        Option("policy", str, "cost", "which sums of dots to fuse: those saving memory traffic, or all",
               choices=("cost", "always")),
    )

    def run(self, module: ir.Operation) -> None:
        skipped = "fuse_dot_sum" if self.policy == "always" else "fuse_dot_sum_always"
        apply_rules(module, [rule for rule in rule_set(RULE_SET) if rule.name != skipped])
