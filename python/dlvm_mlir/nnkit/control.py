"""Staged control flow: ``dl.cond`` (scf.if), ``dl.fori_loop`` (scf.for), ``dl.while_loop`` (scf.while).

Branches and loop bodies are Python functions traced once into the op's
regions. Loop state (and branch results) is a tensor or a (nested) tuple or
list of tensors; Python numbers in it become constants of the matching
tensor's element type. A Python ``bool`` predicate picks the branch while
tracing (nothing is staged).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mlir import ir
from mlir.dialects import arith, scf
from mlir.dialects import tensor as tensor_d

from .dtypes import DType, i32
from .errors import DTypeError, ShapeError, TracingError
from .ops import lift
from .specs import Spec
from .tensor import Tensor
from .tracing import FunctionTrace, build_op, here, require_trace

__all__ = ["cond", "fori_loop", "while_loop"]

Tree = Any
"""A tensor, number or array, or a tuple / list of trees."""


def _flatten(tree: Tree) -> tuple[list[Any], Any]:
    """Leaves and a structure description (None for a leaf, else (type, children))."""
    if isinstance(tree, (tuple, list)):
        leaves: list[Any] = []
        children = []
        for item in tree:
            item_leaves, item_structure = _flatten(item)
            leaves += item_leaves
            children.append((item_structure, len(item_leaves)))
        return leaves, (type(tree), children)
    return [tree], None


def _unflatten(structure: Any, leaves: list[Any]) -> Tree:
    if structure is None:
        return leaves[0]
    kind, children = structure
    items, at = [], 0
    for child, count in children:
        items.append(_unflatten(child, leaves[at : at + count]))
        at += count
    return kind(items)


def _same_structure(a: Any, b: Any) -> bool:
    if a is None or b is None:
        return a is b
    return a[0] is b[0] and len(a[1]) == len(b[1]) and all(
        ca == cb and _same_structure(sa, sb) for (sa, ca), (sb, cb) in zip(a[1], b[1])
    )


def _predicate(trace: FunctionTrace, pred: Tensor, what: str) -> ir.Value:
    """A rank-0 i1 tensor as the i1 scalar scf ops take."""
    if not pred.dtype.is_bool:
        raise DTypeError(f"{what}: the predicate has element type {pred.dtype}, expected i1 (a comparison)")
    if pred.shape:
        raise ShapeError(f"{what}: the predicate has shape {list(pred.shape)}, expected a rank-0 tensor")
    value = pred.checked()
    return build_op(what, lambda loc: tensor_d.extract(value, [], loc=loc))


def _check_state(what: str, expected: list[Spec], got: list[Spec]) -> None:
    if len(expected) != len(got):
        raise ShapeError(f"{what}: returns {len(got)} tensors, expected {len(expected)}")
    for position, (want, have) in enumerate(zip(expected, got)):
        if want != have:
            error = DTypeError if want.dtype != have.dtype else ShapeError
            raise error(f"{what}: value {position} is {have}, expected {want}")


def _lift_like(leaves: list[Any], dtypes: list[DType | None]) -> list[Tensor]:
    return [lift(leaf, dtype) for leaf, dtype in zip(leaves, dtypes)]


def cond(pred: Tensor | bool, true_fn: Callable[..., Tree], false_fn: Callable[..., Tree], *operands: Any) -> Tree:
    """``scf.if``: ``true_fn(*operands)`` if ``pred`` (a rank-0 i1 tensor) else ``false_fn(*operands)``.

    Both branches must return the same structure of tensors of the same types.
    """
    if isinstance(pred, (bool, int)) and not isinstance(pred, Tensor):
        return (true_fn if pred else false_fn)(*operands)
    trace = require_trace("dl.cond")
    condition = _predicate(trace, lift(pred), "dl.cond")
    loc = here()
    scratch = scf.IfOp(condition, [], has_else=True, loc=loc)
    branches = []
    for block, fn in ((scratch.then_block, true_fn), (scratch.else_block, false_fn)):
        with trace.region(block) as scope:
            leaves, structure = _flatten(fn(*operands))
        branches.append((block, scope, leaves, structure))
    (then_block, then_scope, then_leaves, structure), (else_block, else_scope, else_leaves, else_structure) = branches
    if not _same_structure(structure, else_structure) or len(then_leaves) != len(else_leaves):
        raise ShapeError("dl.cond: the branches return different structures")
    dtypes = [
        a.dtype if isinstance(a, Tensor) else b.dtype if isinstance(b, Tensor) else None
        for a, b in zip(then_leaves, else_leaves)
    ]
    results = []
    for block, scope, leaves in ((then_block, then_scope, then_leaves), (else_block, else_scope, else_leaves)):
        with trace.region(block, scope):
            tensors = _lift_like(leaves, dtypes)
            scf.YieldOp([t.checked() for t in tensors], loc=loc)
        results.append([t.spec for t in tensors])
    _check_state("dl.cond: the false branch", results[0], results[1])
    op = ir.Operation.create("scf.if", results=[s.mlir() for s in results[0]], operands=[condition], regions=2, loc=loc)
    then_block.append_to(op.regions[0])
    else_block.append_to(op.regions[1])
    scratch.operation.erase()
    op.verify()
    return _unflatten(structure, [Tensor(r, trace.scope) for r in op.results])


def _state(init: Tree) -> tuple[list[Tensor], Any]:
    """The initial loop state as tensors (checked usable here) and its structure."""
    leaves, structure = _flatten(init)
    tensors = [lift(leaf) for leaf in leaves]
    for tensor in tensors:
        tensor.checked()
    return tensors, structure


def _body_state(out: Tree, structure: Any, init: list[Tensor], what: str) -> list[Tensor]:
    leaves, out_structure = _flatten(out)
    if not _same_structure(structure, out_structure) or len(leaves) != len(init):
        raise ShapeError(f"{what}: returns a different structure than the initial state")
    tensors = _lift_like(leaves, [t.dtype for t in init])
    _check_state(what, [t.spec for t in init], [t.spec for t in tensors])
    return tensors


def _index(bound: Any, what: str) -> ir.Value:
    """A loop bound (Python int or rank-0 integer tensor) as an ``index``."""
    index = ir.IndexType.get()
    if isinstance(bound, Tensor):
        if not bound.dtype.is_int or bound.shape:
            raise DTypeError(f"{what}: a loop bound must be a Python int or a rank-0 integer tensor, got {bound.spec}")
        value = bound.checked()
        scalar = build_op(what, lambda loc: tensor_d.extract(value, [], loc=loc))
        return build_op(what, lambda loc: arith.index_cast(index, scalar, loc=loc))
    if isinstance(bound, bool) or not isinstance(bound, int):
        raise DTypeError(f"{what}: a loop bound must be a Python int or a rank-0 integer tensor, got {bound!r}")
    return build_op(what, lambda loc: arith.constant(index, bound, loc=loc))


def fori_loop(lower: int | Tensor, upper: int | Tensor, body: Callable[[Tensor, Tree], Tree], init: Tree) -> Tree:
    """``scf.for``: ``state = body(i, state)`` for ``i`` in ``[lower, upper)``; returns the final state.

    ``i`` is a rank-0 i32 tensor.
    """
    trace = require_trace("dl.fori_loop")
    state, structure = _state(init)
    lb, ub = _index(lower, "dl.fori_loop"), _index(upper, "dl.fori_loop")
    step = _index(1, "dl.fori_loop")
    loc = here()
    loop = scf.ForOp(lb, ub, step, [t.checked() for t in state], loc=loc)
    with trace.region(loop.body):
        counter = build_op("dl.fori_loop", lambda l: arith.index_cast(i32.mlir(), loop.induction_variable, loc=l))
        index = build_op(
            "dl.fori_loop",
            lambda l: tensor_d.from_elements(ir.RankedTensorType.get([], i32.mlir()), [counter], loc=l),
        )
        carried = _unflatten(structure, [Tensor(arg, trace.scope) for arg in loop.inner_iter_args])
        out = body(Tensor(index, trace.scope), carried)
        tensors = _body_state(out, structure, state, "dl.fori_loop body")
        scf.YieldOp([t.checked() for t in tensors], loc=loc)
    return _unflatten(structure, [Tensor(r, trace.scope) for r in loop.results])


def while_loop(cond_fn: Callable[[Tree], Tensor], body_fn: Callable[[Tree], Tree], init: Tree) -> Tree:
    """``scf.while``: ``while cond_fn(state): state = body_fn(state)``; returns the final state.

    ``cond_fn`` returns a rank-0 i1 tensor.
    """
    trace = require_trace("dl.while_loop")
    state, structure = _state(init)
    types = [t.spec.mlir() for t in state]
    loc = here()
    loop = scf.WhileOp(types, [t.checked() for t in state], loc=loc)
    before = loop.before.blocks.append(*types, arg_locs=[loc] * len(types))
    after = loop.after.blocks.append(*types, arg_locs=[loc] * len(types))
    with trace.region(before):
        carried = _unflatten(structure, [Tensor(arg, trace.scope) for arg in before.arguments])
        pred = cond_fn(carried)
        if not isinstance(pred, Tensor):
            raise TracingError("dl.while_loop: the condition must return a staged rank-0 i1 tensor")
        condition = _predicate(trace, pred, "dl.while_loop condition")
        scf.ConditionOp(condition, list(before.arguments), loc=loc)
    with trace.region(after):
        carried = _unflatten(structure, [Tensor(arg, trace.scope) for arg in after.arguments])
        tensors = _body_state(body_fn(carried), structure, state, "dl.while_loop body")
        scf.YieldOp([t.checked() for t in tensors], loc=loc)
    return _unflatten(structure, [Tensor(r, trace.scope) for r in loop.results])
