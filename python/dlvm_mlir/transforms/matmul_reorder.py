"""dlvm-matmul-reorder: DLVM's MatrixMultiplicationReordering.

A *chain* is a tree of ``dlvm.dot`` ops on matrices and vectors whose inner
dots each have a single use, the dot above them: ``dot(dot(A, B), C)``
multiplies the leaves ``A, B, C`` in one parenthesization among many. The
rule ``reorder_chain`` finds the cheapest parenthesization by the classic
dynamic program (cost: multiply-adds, ``m*k*n`` per product) and rebuilds the
chain only when that is strictly cheaper than the order written, so the
result is never worse than the input.

Vectors may end a chain: a leading vector is a ``1 x K`` row, a trailing one a
``K x 1`` column (``dot(dot(v, A), w)`` is a scalar). A vector in the middle,
a batched dot (rank > 2), or a dot whose result has other uses ends the
chain there: that value becomes a leaf.

Exactness: unsafe in the sense of :class:`~dlvm_mlir.rewrites.Exactness`
(it reassociates products, so results change by rounding, within the error
bound of the products themselves). The pass applies it whenever it runs;
``dlvm-optimize`` runs it unless ``linalg=false``.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from dlvm_mlir.dialects import dlvm
from dlvm_mlir.passes import ModulePass, register_pass
from dlvm_mlir.rewrites import Exactness, apply_rules, rewrite_rule, rule_set
from dlvm_mlir.transforms._patterns import producer, shape, single_use

RULE_SET = "matmul-reorder"


@dataclass(frozen=True)
class _Chain:
    leaves: list[ir.Value]
    dims: list[int]
    """Leaf i is a ``dims[i] x dims[i+1]`` matrix (vectors padded with a 1)."""
    cost: int
    """Multiply-adds of the order as written."""


def _chain_link(value: ir.Value) -> dlvm.DotOp | None:
    """The dot defining ``value`` if it can be re-associated into the dot using it."""
    d = producer(value, dlvm.DotOp)
    if d is None or not single_use(value) or not _is_linear(d):
        return None
    return d


def _is_linear(d: dlvm.DotOp) -> bool:
    """A matrix or vector product (no batch dimensions)."""
    return len(shape(d.lhs)) in (1, 2) and len(shape(d.rhs)) in (1, 2)


def _chain(root: dlvm.DotOp) -> _Chain | None:
    """The chain rooted at ``root``, or None when it has fewer than 3 leaves or is not a chain."""
    leaves: list[ir.Value] = []
    tree = _collect(root, leaves)
    if len(leaves) < 3:
        return None
    ranks = [len(shape(v)) for v in leaves]
    if any(rank != 2 for rank in ranks[1:-1]):
        return None
    rows = [1 if (i == 0 and r == 1) else shape(v)[0] for i, (v, r) in enumerate(zip(leaves, ranks))]
    cols = [1 if (i == len(leaves) - 1 and r == 1) else shape(v)[-1] for i, (v, r) in enumerate(zip(leaves, ranks))]
    if any(cols[i] != rows[i + 1] for i in range(len(leaves) - 1)):
        return None
    dims = [rows[0], *cols]
    return _Chain(leaves, dims, _written_cost(tree, dims)[2])


def _collect(d: dlvm.DotOp, leaves: list[ir.Value]) -> tuple:
    """Append the leaves under ``d`` in order; return the tree of leaf indices."""
    children = []
    for operand in (d.lhs, d.rhs):
        inner = _chain_link(operand)
        if inner is not None:
            children.append(_collect(inner, leaves))
        else:
            leaves.append(operand)
            children.append(len(leaves) - 1)
    return tuple(children)


def _written_cost(tree: tuple | int, dims: list[int]) -> tuple[int, int, int]:
    """(first leaf, last leaf, multiply-adds) of a tree of leaf indices."""
    if isinstance(tree, int):
        return tree, tree, 0
    i, s, left = _written_cost(tree[0], dims)
    _, j, right = _written_cost(tree[1], dims)
    return i, j, left + right + dims[i] * dims[s + 1] * dims[j + 1]


def optimal_order(dims: list[int]) -> tuple[int, list[list[int]]]:
    """Matrix-chain DP: (least multiply-adds, split table) for matrices ``dims[i] x dims[i+1]``."""
    n = len(dims) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(2, n + 1):
        for i in range(n - length + 1):
            j = i + length - 1
            cost[i][j], split[i][j] = min(
                (cost[i][s] + cost[s + 1][j] + dims[i] * dims[s + 1] * dims[j + 1], s) for s in range(i, j)
            )
    return cost[0][n - 1], split


def _build(leaves: list[ir.Value], split: list[list[int]], i: int, j: int) -> ir.Value:
    if i == j:
        return leaves[i]
    s = split[i][j]
    return dlvm.dot(_build(leaves, split, i, s), _build(leaves, split, s + 1, j))


def _is_inside_chain(d: dlvm.DotOp) -> bool:
    """Whether ``d`` is an inner node of a larger chain (its root rewrites it)."""
    if not single_use(d.result):
        return False
    user = next(iter(d.result.uses)).owner
    return isinstance(user, dlvm.DotOp) and _is_linear(user)


@rewrite_rule(
    dlvm.DotOp,
    set=RULE_SET,
    exactness=Exactness.UNSAFE,
    sample="""
func.func @sample(%a: tensor<10x30xf32>, %b: tensor<30x5xf32>, %c: tensor<5x60xf32>, %v: tensor<60xf32>)
    -> tensor<10xf32> {
  %bc = dlvm.dot %b, %c : tensor<30x5xf32>, tensor<5x60xf32>
  %abc = dlvm.dot %a, %bc : tensor<10x30xf32>, tensor<30x60xf32>
  %r = dlvm.dot %abc, %v : tensor<10x60xf32>, tensor<60xf32>
  return %r : tensor<10xf32>
}""",
)
def reorder_chain(op: dlvm.DotOp) -> ir.Value | None:
    """Re-parenthesize a chain of dots into its cheapest order (when strictly cheaper)."""
    if not _is_linear(op) or _is_inside_chain(op):
        return None
    chain = _chain(op)
    if chain is None:
        return None
    best, split = optimal_order(chain.dims)
    if best >= chain.cost:
        return None
    return _build(chain.leaves, split, 0, len(chain.leaves) - 1)


@register_pass
class MatmulReorder(ModulePass):
    """Applies ``reorder_chain`` to every chain of dots."""

    name = "dlvm-matmul-reorder"
    summary = "Reorder chains of single-use dots into their cheapest order (DLVM MatrixMultiplicationReordering)"

    def run(self, module: ir.Operation) -> None:
        apply_rules(module, rule_set(RULE_SET))
