"""Derivative rules of the dlvm dialect.

Formulas use ``x`` (operand), ``y``/``z`` (result) and ``g`` (the adjoint of
the result, or in forward mode the tangent of the operand). Broadcasting
binary ops sum their adjoints back over broadcast dimensions (``sum_to``).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
from mlir import ir

from dlvm_mlir.ad import vocab
from dlvm_mlir.ad.registry import adjoint, inactive, tangent
from dlvm_mlir.ad.rules.common import (
    attr_int,
    attr_ints,
    elementwise_binary,
    elementwise_unary,
    enum_name,
    linear_tangent,
    multilinear_tangent,
)
from dlvm_mlir.ad.vocab import (
    add,
    cmp,
    cos,
    digamma,
    div,
    exp,
    log,
    mask_to_float,
    mul,
    neg,
    rsqrt,
    select,
    sin,
    sinh,
    cosh,
    square,
    sub,
    sum_to,
    trigamma,
)
from dlvm_mlir.dialects import dlvm
from dlvm_mlir.interpreter.ops_dlvm import WINDOW_OPTIONS, window_counts, window_geometry, window_padded_extent

inactive(
    [
        "dlvm.cmp",
        "dlvm.sign",
        "dlvm.floor",
        "dlvm.ceil",
        "dlvm.round",
        "dlvm.rint",
        "dlvm.not",
        "dlvm.and",
        "dlvm.or",
        "dlvm.floor_div",
        "dlvm.trunc_div",
        "dlvm.random",
        "dlvm.constant",
        "dlvm.bitcast",
        "dlvm.is_finite",
        "dlvm.popcount",
        "dlvm.xor",
        "dlvm.shift_left",
        "dlvm.shift_right_arithmetic",
        "dlvm.shift_right_logical",
        "dlvm.iota",
        "dlvm.argmax",
        "dlvm.argmin",
    ]
)

# --------------------------------------------------------------------------
# Elementwise unary: d(x, y, g)
# --------------------------------------------------------------------------

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)

elementwise_unary("dlvm.neg", lambda x, y, g: neg(g))
elementwise_unary("dlvm.exp", lambda x, y, g: mul(g, y))
elementwise_unary("dlvm.log", lambda x, y, g: div(g, x))
elementwise_unary("dlvm.tanh", lambda x, y, g: mul(g, sub(1.0, square(y))))
elementwise_unary("dlvm.sigmoid", lambda x, y, g: mul(g, mul(y, sub(1.0, y))))
# At the kinks, JAX's choices: relu'(0) = 0, abs'(0) = 1 (abs' is 1 for x >= 0,
# -1 otherwise, also for NaN).
# relu' from the result (y > 0 exactly where x > 0, NaN included): the gradient keeps the
# activation, which the next layer keeps anyway, not the pre-activation, so a convolution's
# bias and relu can run on its accumulators (backend/schedule.py, Plan.epilogue).
elementwise_unary("dlvm.relu", lambda x, y, g: select(cmp("gt", y, 0.0), g, 0.0))
elementwise_unary("dlvm.sqrt", lambda x, y, g: div(g, mul(y, 2.0)))
elementwise_unary("dlvm.rsqrt", lambda x, y, g: mul(g, mul(mul(y, square(y)), -0.5)))
elementwise_unary("dlvm.square", lambda x, y, g: mul(g, mul(x, 2.0)))
elementwise_unary("dlvm.abs", lambda x, y, g: vocab.abs_derivative(x, g))
elementwise_unary("dlvm.sin", lambda x, y, g: mul(g, cos(x)))
elementwise_unary("dlvm.cos", lambda x, y, g: neg(mul(g, sin(x))))
elementwise_unary("dlvm.tan", lambda x, y, g: mul(g, add(1.0, square(y))))
elementwise_unary("dlvm.asin", lambda x, y, g: mul(g, rsqrt(sub(1.0, square(x)))))
elementwise_unary("dlvm.acos", lambda x, y, g: neg(mul(g, rsqrt(sub(1.0, square(x))))))
elementwise_unary("dlvm.atan", lambda x, y, g: div(g, add(1.0, square(x))))
elementwise_unary("dlvm.sinh", lambda x, y, g: mul(g, cosh(x)))
elementwise_unary("dlvm.cosh", lambda x, y, g: mul(g, sinh(x)))
elementwise_unary("dlvm.erf", lambda x, y, g: mul(g, mul(exp(neg(square(x))), _TWO_OVER_SQRT_PI)))
elementwise_unary("dlvm.erfc", lambda x, y, g: mul(g, mul(exp(neg(square(x))), -_TWO_OVER_SQRT_PI)))
elementwise_unary("dlvm.lgamma", lambda x, y, g: mul(g, digamma(x)))
elementwise_unary("dlvm.digamma", lambda x, y, g: mul(g, trigamma(x)))
elementwise_unary("dlvm.log1p", lambda x, y, g: div(g, add(x, 1.0)))
elementwise_unary("dlvm.expm1", lambda x, y, g: mul(g, add(y, 1.0)))
elementwise_unary("dlvm.asinh", lambda x, y, g: mul(g, rsqrt(add(square(x), 1.0))))
# (x - 1)(x + 1) rather than x^2 - 1: no cancellation near 1
elementwise_unary("dlvm.acosh", lambda x, y, g: mul(g, rsqrt(mul(sub(x, 1.0), add(x, 1.0)))))
elementwise_unary("dlvm.atanh", lambda x, y, g: div(g, mul(sub(1.0, x), add(1.0, x))))
elementwise_unary("dlvm.exp2", lambda x, y, g: mul(g, mul(y, math.log(2.0))))
elementwise_unary("dlvm.log2", lambda x, y, g: div(g, mul(x, math.log(2.0))))
elementwise_unary("dlvm.log10", lambda x, y, g: div(g, mul(x, math.log(10.0))))
elementwise_unary("dlvm.cbrt", lambda x, y, g: div(g, mul(square(y), 3.0)))  # inf at 0, as JAX

# --------------------------------------------------------------------------
# Elementwise binary with broadcasting: d(x, y, z, g)
# --------------------------------------------------------------------------


def _log_or_zero(x: ir.Value) -> ir.Value:
    """ln(x), with 0 where x == 0 (so d/dy x^y is 0 there, not NaN)."""
    return select(cmp("eq", x, 0.0), 0.0, log(x))


elementwise_binary("dlvm.add", lambda x, y, z, g: g, lambda x, y, z, g: g)
elementwise_binary("dlvm.sub", lambda x, y, z, g: g, lambda x, y, z, g: neg(g))
elementwise_binary("dlvm.mul", lambda x, y, z, g: mul(g, y), lambda x, y, z, g: mul(g, x))
elementwise_binary("dlvm.div", lambda x, y, z, g: div(g, y), lambda x, y, z, g: neg(div(mul(g, z), y)))
elementwise_binary(
    "dlvm.pow",
    lambda x, y, z, g: mul(g, mul(y, vocab.pow_(x, sub(y, 1.0)))),
    lambda x, y, z, g: mul(g, mul(z, _log_or_zero(x))),
)
# JAX's lax.max/min rule: the operand equal to the result gets g, each gets
# g / 2 at a tie, neither where the result is NaN.
for _name in ("dlvm.max", "dlvm.min"):
    elementwise_binary(
        _name,
        lambda x, y, z, g: vocab.extremum_derivative(x, y, z, g),
        lambda x, y, z, g: vocab.extremum_derivative(y, x, z, g),
    )
# Floored modulo: x mod y = x - floor(x / y) * y.
elementwise_binary(
    "dlvm.mod",
    lambda x, y, z, g: g,
    lambda x, y, z, g: neg(mul(g, vocab.floor(div(x, y)))),
)

# Truncated remainder: x rem y = x - trunc(x / y) * y.
elementwise_binary(
    "dlvm.rem",
    lambda x, y, z, g: g,
    lambda x, y, z, g: neg(mul(g, dlvm.trunc_div(x, y))),
)
# atan2(x, y) is the angle of (y, x): d/dx = y / (x^2 + y^2), d/dy = -x / (x^2 + y^2).
elementwise_binary(
    "dlvm.atan2",
    lambda x, y, z, g: div(mul(g, y), add(square(x), square(y))),
    lambda x, y, z, g: neg(div(mul(g, x), add(square(x), square(y)))),
)


def _clamp_masks(low: ir.Value, x: ir.Value, high: ir.Value) -> tuple[ir.Value, ir.Value, ir.Value]:
    """Where each operand of clamp(low, x, high) gets the adjoint (JAX's rule):
    low where low > x and low < high, x where low < x < high, high where high < x."""
    to_low = dlvm.and_(cmp("gt", low, x), cmp("lt", low, high))
    to_x = dlvm.and_(cmp("gt", x, low), cmp("lt", x, high))
    return to_low, to_x, cmp("lt", high, x)


@adjoint("dlvm.clamp")
def _clamp(r) -> None:
    masks = _clamp_masks(r.x(0), r.x(1), r.x(2))
    for i, mask in enumerate(masks):
        if r.wants(i):
            r.accumulate(i, sum_to(select(mask, r.g, 0.0), r.x(i).type))


@tangent("dlvm.clamp")
def _clamp_tangent(t) -> None:
    masks = _clamp_masks(t.x(0), t.x(1), t.x(2))
    shape = vocab.shape(t.y(0))
    terms = [vocab.broadcast_to(select(mask, t.dx(i), 0.0), shape)
             for i, mask in enumerate(masks) if t.dx(i) is not None]
    t.set(0, vocab.add_all(terms))


# --------------------------------------------------------------------------
# select
# --------------------------------------------------------------------------


@adjoint("dlvm.select")
def _select(r) -> None:
    mask, g = r.x(0), r.g
    if r.wants(1):
        r.accumulate(1, sum_to(select(mask, g, 0.0), r.x(1).type))
    if r.wants(2):
        r.accumulate(2, sum_to(select(mask, 0.0, g), r.x(2).type))


tangent("dlvm.select")(linear_tangent)

# --------------------------------------------------------------------------
# Linear algebra
# --------------------------------------------------------------------------


@adjoint("dlvm.dot")
def _dot(r) -> None:
    a, b, g = r.x(0), r.x(1), r.g
    if r.wants(0):
        r.accumulate(0, _dot_lhs_adjoint(a, b, g))
    if r.wants(1):
        r.accumulate(1, _dot_rhs_adjoint(a, b, g))


def _dot_lhs_adjoint(a: ir.Value, b: ir.Value, g: ir.Value) -> ir.Value:
    ra, rb = vocab.rank(a), vocab.rank(b)
    if ra == 1 and rb == 1:  # u . v -> scalar
        return mul(g, b)
    if ra == 2 and rb == 1:  # A . v: outer(g, v)
        m, k = vocab.shape(a)
        return vocab.dot(vocab.reshape(g, [m, 1]), vocab.reshape(b, [1, k]))
    if ra == 1 and rb == 2:  # v . B: B . g
        return vocab.dot(b, g)
    return vocab.dot(g, vocab.transpose(b, _swap_last_two(rb)))  # (batched) A . B: g . B^T


def _dot_rhs_adjoint(a: ir.Value, b: ir.Value, g: ir.Value) -> ir.Value:
    ra, rb = vocab.rank(a), vocab.rank(b)
    if ra == 1 and rb == 1:
        return mul(g, a)
    if ra == 2 and rb == 1:  # A . v: g . A
        return vocab.dot(g, a)
    if ra == 1 and rb == 2:  # v . B: outer(v, g)
        k, n = vocab.shape(b)
        return vocab.dot(vocab.reshape(a, [k, 1]), vocab.reshape(g, [1, n]))
    return vocab.dot(vocab.transpose(a, _swap_last_two(ra)), g)  # A^T . g


def _swap_last_two(rank: int) -> list[int]:
    return [*range(rank - 2), rank - 1, rank - 2]


tangent("dlvm.dot")(multilinear_tangent)


@adjoint("dlvm.dot_general")
def _dot_general(r) -> None:
    """The transpose of a contraction is a contraction of the adjoint with the other
    operand over the other operand's free dimensions (as JAX's dot_general transpose),
    permuted back to the operand's layout."""
    op = r.op
    numbers = [attr_ints(op, name) for name in (
        "lhs_batching_dims", "rhs_batching_dims", "lhs_contracting_dims", "rhs_contracting_dims")]
    a, b = r.x(0), r.x(1)
    if r.wants(0):
        r.accumulate(0, _dot_general_adjoint(r.g, b, vocab.rank(a), vocab.rank(b), *numbers, lhs=True))
    if r.wants(1):
        lb, rb, lc, rc = numbers
        r.accumulate(1, _dot_general_adjoint(r.g, a, vocab.rank(b), vocab.rank(a), rb, lb, rc, lc, lhs=False))


def _dot_general_adjoint(g, other, rank, other_rank, batch, other_batch, contract, other_contract, lhs):
    """The adjoint of one operand (``rank``, its ``batch``/``contract`` dimensions) of a
    dot_general whose other operand is ``other``; ``g``'s layout is [batch, lhs free, rhs free]."""
    free = [d for d in range(rank) if d not in batch and d not in contract]
    other_free = [d for d in range(other_rank) if d not in other_batch and d not in other_contract]
    nb = len(batch)
    # g's dimensions that belong to the other operand's free dimensions
    first = nb + len(free) if lhs else nb
    g_other = list(range(first, first + len(other_free)))
    grad = dlvm.dot_general(g, other, list(range(nb)), list(other_batch), g_other, other_free)
    # grad's layout: [batch, this operand's free, the other's contracting dims in its order]
    remaining = sorted(other_contract)
    position = {d: i for i, d in enumerate(batch)}
    position.update({d: nb + j for j, d in enumerate(free)})
    position.update({d: nb + len(free) + remaining.index(o) for d, o in zip(contract, other_contract)})
    perm = [position[d] for d in range(rank)]
    return grad if perm == list(range(rank)) else vocab.transpose(grad, perm)


tangent("dlvm.dot_general")(multilinear_tangent)

# --------------------------------------------------------------------------
# Shape ops: all linear
# --------------------------------------------------------------------------


@adjoint("dlvm.transpose")
def _transpose(r) -> None:
    perm = _permutation(r.op)
    r.accumulate(0, vocab.transpose(r.g, vocab.inverse_permutation(perm)))


def _permutation(op) -> list[int]:
    perm = attr_ints(op, "perm")
    return perm if perm is not None else list(reversed(range(vocab.rank(op.operation.operands[0]))))


@adjoint("dlvm.reverse")
def _reverse(r) -> None:
    r.accumulate(0, vocab.reverse(r.g, attr_ints(r.op, "dims")))


@adjoint("dlvm.concatenate")
def _concatenate(r) -> None:
    axis = attr_int(r.op, "axis")
    g = r.g
    offset = 0
    for i, operand in enumerate(r.operation.operands):
        dims = vocab.shape(operand)
        if r.wants(i):
            offsets = [offset if d == axis else 0 for d in range(len(dims))]
            r.accumulate(i, vocab.slice_(g, offsets, dims))
        offset += dims[axis]


@adjoint("dlvm.slice")
def _slice(r) -> None:
    offsets, sizes, strides = (attr_ints(r.op, name) for name in ("offsets", "sizes", "strides"))
    r.accumulate(0, vocab.insert_into_zeros(r.g, r.x(0).type, offsets, sizes, strides))


def _pad_kept(op, d: int) -> tuple[int, int, int]:
    """dlvm.pad along ``d``: the first operand element inside the result, how many are, where the first lands
    (PadOp::kept in the dialect)."""
    n = vocab.shape(op.operands[0])[d]
    out = vocab.shape(op.results[0])[d]
    low, step = attr_ints(op, "low")[d], attr_ints(op, "interior")[d] + 1
    first = 0 if low >= 0 else (-low + step - 1) // step
    last = -1 if out - 1 - low < 0 else min(n - 1, (out - 1 - low) // step)
    count = max(last - first + 1, 0)
    return first, count, low + first * step


@adjoint("dlvm.pad")
def _pad(r) -> None:
    op = r.operation
    rank = vocab.rank(r.x(0))
    first, count, at = zip(*(_pad_kept(op, d) for d in range(rank))) if rank else ((), (), ())
    steps = [i + 1 for i in attr_ints(op, "interior")]
    # the operand's elements land on a strided window of the result
    window = vocab.slice_(r.g, list(at), list(count), steps) if all(count) else None
    if r.wants(0):
        x_type = r.x(0).type
        if window is None:
            r.accumulate(0, vocab.zeros(x_type))
        elif list(count) == vocab.shape(r.x(0)):  # every element lands in the result
            r.accumulate(0, window)
        else:
            r.accumulate(0, vocab.insert_into_zeros(window, x_type, list(first), list(count)))
    if r.wants(1):
        total = vocab.sum_all(r.g)
        r.accumulate(1, total if window is None else sub(total, vocab.sum_all(window)))


@adjoint("dlvm.dynamic_slice")
def _dynamic_slice(r) -> None:
    indices = [r.x(i) for i in range(1, len(r.operation.operands))]
    r.accumulate_window(0, r.g, indices)


@adjoint("dlvm.dynamic_update_slice")
def _dynamic_update_slice(r) -> None:
    update_type = ir.RankedTensorType(r.x(1).type)
    indices = [r.x(i) for i in range(2, len(r.operation.operands))]
    if r.wants(0):  # the window was overwritten: no adjoint flows there
        r.accumulate(0, dlvm.dynamic_update_slice(r.g, vocab.zeros(update_type), indices))
    if r.wants(1):
        r.accumulate(1, dlvm.dynamic_slice(r.g, indices, list(update_type.shape)))


def _scatter_window_sizes(operand: ir.Value, updates: ir.Value, window_dims: list[int], inserted: list[int]) -> list[int]:
    """The window a scatter writes, per operand dimension (1 for the inserted ones)."""
    shape, window = ir.RankedTensorType(updates.type).shape, iter(window_dims)
    return [1 if d in inserted else shape[next(window)] for d in range(ir.RankedTensorType(operand.type).rank)]


@adjoint("dlvm.gather")
def _gather(r) -> None:
    """The transpose of a gather: its windows of the adjoint added back (scatter add)."""
    if not r.wants(0):
        return
    op = r.op
    zeros = vocab.zeros(r.x(0).type)
    r.accumulate(0, dlvm.scatter(
        dlvm.ScatterKind.add, zeros, r.x(1), r.g, attr_ints(op, "offset_dims"), attr_ints(op, "collapsed_slice_dims"),
        attr_ints(op, "start_index_map"), attr_int(op, "index_vector_dim"),
    ))


@adjoint("dlvm.scatter")
def _scatter(r) -> None:
    op = r.op
    kind = enum_name(op, "kind", dlvm.ScatterKind)
    if kind not in ("add", "replace"):
        raise r.fail(f"(a scatter {kind}: only add and replace are)")
    window_dims, inserted = attr_ints(op, "update_window_dims"), attr_ints(op, "inserted_window_dims")
    to_operand, vector_dim = attr_ints(op, "scatter_dims_to_operand_dims"), attr_int(op, "index_vector_dim")
    operand, indices, updates = r.x(0), r.x(1), r.x(2)
    if r.wants(0):
        # add passes the adjoint through; replace leaves none at the overwritten positions
        passed = r.g if kind == "add" else dlvm.scatter(
            dlvm.ScatterKind.replace, r.g, indices, vocab.zeros(updates.type), window_dims, inserted, to_operand,
            vector_dim)
        r.accumulate(0, passed)
    if r.wants(2):
        sizes = _scatter_window_sizes(operand, updates, window_dims, inserted)
        grad = dlvm.gather(r.g, indices, window_dims, inserted, to_operand, vector_dim, sizes)
        if kind == "replace":
            # only the update that stayed (the last one written to its element) gets the
            # adjoint: scatter every update's number, read back whose number stayed
            update_type = ir.RankedTensorType(updates.type)
            i64 = ir.IntegerType.get_signless(64)
            count = math.prod(update_type.shape)
            numbers = vocab.reshape(dlvm.iota(ir.RankedTensorType.get([count], i64), 0), list(update_type.shape))
            stayed = dlvm.scatter(
                dlvm.ScatterKind.replace, vocab.const(ir.RankedTensorType.get(list(ir.RankedTensorType(operand.type).shape), i64), -1),
                indices, numbers, window_dims, inserted, to_operand, vector_dim)
            winner = dlvm.gather(stayed, indices, window_dims, inserted, to_operand, vector_dim, sizes)
            grad = select(dlvm.cmp(dlvm.CmpPredicate.eq, winner, numbers), grad, 0.0)
        r.accumulate(2, grad)


@adjoint("dlvm.reshape")
def _reshape(r) -> None:
    r.accumulate(0, vocab.reshape(r.g, vocab.shape(r.x(0))))


@adjoint("dlvm.pad_shape")
def _pad_shape(r) -> None:
    r.accumulate(0, vocab.squeeze_shape(r.g, attr_int(r.op, "dim")))


@adjoint("dlvm.squeeze_shape")
def _squeeze_shape(r) -> None:
    r.accumulate(0, vocab.pad_shape(r.g, attr_int(r.op, "dim")))


@adjoint("dlvm.broadcast_to")
def _broadcast_to(r) -> None:
    r.accumulate(0, sum_to(r.g, r.x(0).type))


@adjoint("dlvm.cast")
def _cast(r) -> None:
    r.accumulate(0, vocab.cast(r.g, vocab.element_type(r.x(0))))


for _name in (
    "dlvm.transpose",
    "dlvm.reverse",
    "dlvm.concatenate",
    "dlvm.slice",
    "dlvm.pad",
    "dlvm.dynamic_slice",
    "dlvm.dynamic_update_slice",
    "dlvm.gather",
    "dlvm.reshape",
    "dlvm.pad_shape",
    "dlvm.squeeze_shape",
    "dlvm.broadcast_to",
    "dlvm.cast",
):
    tangent(_name)(linear_tangent)

@adjoint("dlvm.sort")
def _sort(r) -> None:
    """A sort permutes: each float operand's adjoint is its result's cotangent put back
    in place, i.e. the cotangent sorted by the sorting permutation (found by sorting the
    positions along with the operands)."""
    op = r.op
    count = len(r.operation.operands)
    wanted = [i for i in range(count) if r.wants(i)]
    if not wanted:
        return
    dim, descending = attr_int(op, "dim"), "descending" in r.operation.attributes
    positions = _positions(r.x(0), dim)
    perm = dlvm.SortOp([r.x(i) for i in range(count)] + [positions], dim, descending=descending).results[count]
    for i in wanted:
        r.accumulate(i, dlvm.SortOp([perm, r.grad_or_zeros(i)], dim).results[1])


def _positions(x: ir.Value, dim: int) -> ir.Value:
    """i32 positions along ``dim`` in the shape of ``x``."""
    i32 = ir.IntegerType.get_signless(32)
    return dlvm.iota(ir.RankedTensorType.get(vocab.shape(x), i32), dim)


@tangent("dlvm.sort")
def _sort_tangent(t) -> None:
    """The tangents are permuted as the operands: sorted along with them."""
    count = len(t.operation.operands)
    active = [i for i in range(count) if t.dx(i) is not None]
    if not active:
        return
    dim, descending = attr_int(t.op, "dim"), "descending" in t.operation.attributes
    operands = [t.x(i) for i in range(count)] + [t.dx(i) for i in active]
    results = dlvm.SortOp(operands, dim, descending=descending).results
    for k, i in enumerate(active):
        t.set(i, results[count + k])


def _last_axis_starts(indices: ir.Value) -> tuple[ir.Value, int]:
    """(row, position) start vectors [rows, k, 2] of top_k's ``indices`` ([..., k]) over
    its rows, and the row count."""
    shape = vocab.shape(indices)
    rows, k = math.prod(shape[:-1]), shape[-1]
    i32 = ir.IntegerType.get_signless(32)
    row = dlvm.iota(ir.RankedTensorType.get([rows, k, 1], i32), 0)
    return dlvm.concatenate([row, vocab.reshape(indices, [rows, k, 1])], 2), rows


@adjoint("dlvm.top_k")
def _top_k(r) -> None:
    """The cotangent of the values added back at their positions (scatter add)."""
    if not r.wants(0):
        return
    x, indices = r.x(0), r.y(1)
    starts, rows = _last_axis_starts(indices)
    n, k = vocab.shape(x)[-1], vocab.shape(indices)[-1]
    zeros = vocab.zeros(ir.RankedTensorType.get([rows, n], ir.RankedTensorType(x.type).element_type))
    back = dlvm.scatter(dlvm.ScatterKind.add, zeros, starts, vocab.reshape(r.grad_or_zeros(0), [rows, k]),
                        [], [0, 1], [0, 1], 2)
    r.accumulate(0, vocab.reshape(back, vocab.shape(x)))


@tangent("dlvm.top_k")
def _top_k_tangent(t) -> None:
    """The operand's tangent at the positions of the values (gather)."""
    dx = t.dx(0)
    if dx is None:
        return
    indices = t.y(1)
    starts, rows = _last_axis_starts(indices)
    n = vocab.shape(dx)[-1]
    picked = dlvm.gather(vocab.reshape(dx, [rows, n]), starts, [], [0, 1], [0, 1], 2, [1, 1])
    t.set(0, vocab.reshape(picked, vocab.shape(indices)))


@tangent("dlvm.scatter")
def _scatter_tangent(t) -> None:
    """add and replace are linear in (operand, updates); max and min are not differentiable."""
    kind = enum_name(t.op, "kind", dlvm.ScatterKind)
    if kind not in ("add", "replace"):
        raise t.fail(f"(a scatter {kind}: only add and replace are)")
    linear_tangent(t)


# --------------------------------------------------------------------------
# Reductions
# --------------------------------------------------------------------------


def _reduce_kind(op) -> str:
    return enum_name(op, "kind", dlvm.ReductionKind)


@adjoint("dlvm.reduce")
def _reduce(r) -> None:
    kind = _reduce_kind(r.op)
    adjoint_of_kind = _REDUCE_ADJOINTS.get(kind)
    if adjoint_of_kind is None:
        raise r.fail(f"for reduction kind '{kind}'")
    x, y, g = r.x(0), r.y(0), r.g
    init = r.x(1) if len(r.operation.operands) > 1 else None
    want_init = init is not None and r.wants(1)
    dx, dinit = adjoint_of_kind(kind, x, y, g, attr_ints(r.op, "dims"), init, r.wants(0), want_init)
    if dx is not None:
        r.accumulate(0, dx)
    if dinit is not None:
        r.accumulate(1, dinit)


def _reduce_sum_adjoint(kind, x, y, g, dims, init, want_x, want_init):
    """add/mean: g broadcast back over the reduced dims (/ count for mean); init gets sum(g)."""
    full = vocab.shape(x)
    dx = None
    if want_x:
        dx = vocab.expand_reduced(g, full, dims)
        count = _count(full, dims)
        if kind == "mean" and count:  # (an empty reduction leaves x empty: nothing to scale)
            dx = mul(dx, 1.0 / count)
    return dx, vocab.sum_all(g) if want_init else None


def _reduce_mul_adjoint(kind, x, y, g, dims, init, want_x, want_init):
    """mul: dx_i = g * init * prod_{j != i} x_j; dinit = sum(g * prod(x))."""
    full = vocab.shape(x)
    dx = None
    if want_x:
        dx = mul(vocab.keep_dims(g, full, dims), _exclusive_product(x, dims))
        if init is not None:
            dx = mul(dx, init)
    return dx, vocab.sum_all(mul(g, vocab.reduce("mul", x, dims))) if want_init else None


def _reduce_extremum_adjoint(kind, x, y, g, dims, init, want_x, want_init):
    """max/min: g shared equally by the elements (and init) equal to the result."""
    masks = _extremum_masks(x, y, dims, init)
    share = div(g, masks.count)
    dx = mul(masks.elements, vocab.keep_dims(share, vocab.shape(x), dims)) if want_x else None
    return dx, vocab.sum_all(mul(share, masks.init)) if want_init else None


_REDUCE_ADJOINTS = {
    "add": _reduce_sum_adjoint,
    "mean": _reduce_sum_adjoint,
    "mul": _reduce_mul_adjoint,
    "max": _reduce_extremum_adjoint,
    "min": _reduce_extremum_adjoint,
}


@tangent("dlvm.reduce")
def _reduce_tangent(t) -> None:
    kind = _reduce_kind(t.op)
    if kind in ("add", "mean"):
        linear_tangent(t)
        return
    x, y = t.x(0), t.y(0)
    dims = attr_ints(t.op, "dims")
    has_init = len(t.operation.operands) > 1
    dx, dinit = t.dx(0), t.dx(1) if has_init else None
    terms: list[ir.Value] = []
    if kind == "mul":
        init = t.x(1) if has_init else None
        if dx is not None:
            term = vocab.reduce_sum(mul(dx, _exclusive_product(x, dims)), dims)
            terms.append(mul(term, init) if init is not None else term)
        if dinit is not None:
            terms.append(mul(dinit, vocab.reduce("mul", x, dims)))
    elif kind in ("max", "min"):
        masks = _extremum_masks(x, y, dims, t.x(1) if has_init else None)
        if dx is not None:
            terms.append(div(vocab.reduce_sum(mul(dx, masks.elements), dims), masks.count))
        if dinit is not None:
            terms.append(div(mul(dinit, masks.init), masks.count))
    else:
        raise t.fail(f"for reduction kind '{kind}'")
    t.set(0, vocab.broadcast_to(vocab.add_all(terms), vocab.shape(y)))


def _count(full: list[int], dims: list[int]) -> int:
    return math.prod(full[d] for d in dims)


class _Masks:
    """Where an extremum is attained: per element (float 0/1), for init, and how often."""

    def __init__(self, elements: ir.Value, init: ir.Value | None, count: ir.Value):
        self.elements = elements
        self.init = init
        self.count = count


def _extremum_masks(x: ir.Value, y: ir.Value, dims: list[int], init: ir.Value | None) -> _Masks:
    """Ties share the adjoint equally (among elements and the init value)."""
    full = vocab.shape(x)
    elements = mask_to_float(cmp("eq", x, vocab.keep_dims(y, full, dims)), x)
    count = vocab.reduce_sum(elements, dims)
    init_mask = None
    if init is not None:
        init_mask = mask_to_float(cmp("eq", vocab.broadcast_to(init, vocab.shape(y)), y), y)
        count = add(count, init_mask)
    return _Masks(elements, init_mask, count)


def _exclusive_product(x: ir.Value, dims: list[int]) -> ir.Value:
    """For every element, the product of the others along ``dims`` (exact with zeros)."""
    full = vocab.shape(x)
    kept = [d for d in range(len(full)) if d not in dims]
    perm = kept + sorted(dims)
    moved = vocab.transpose(x, perm)
    lead = [full[d] for d in kept]
    n = _count(full, dims)
    flat = vocab.reshape(moved, [*lead, n])
    axis = len(lead)
    before = vocab.scan("mul", flat, axis, exclusive=True)
    after = vocab.scan("mul", flat, axis, exclusive=True, reverse=True)
    others = vocab.reshape(mul(before, after), [full[d] for d in perm])
    return vocab.transpose(others, vocab.inverse_permutation(perm))


# --------------------------------------------------------------------------
# Scans
# --------------------------------------------------------------------------


def _scan_flags(accessor) -> tuple[bool, bool]:
    attributes = accessor.operation.attributes
    return "exclusive" in attributes, "reverse" in attributes


def _shift(v: ir.Value, dim: int, down: bool) -> ir.Value:
    """``v`` moved one place along ``dim`` (down: towards higher indices), zeros coming in."""
    dims = vocab.shape(v)
    n = dims[dim]
    head = list(dims)
    head[dim] = 1
    zero = vocab.zeros(vocab.tensor_type(head, vocab.element_type(v)))
    if n == 1:
        return zero
    body = list(dims)
    body[dim] = n - 1
    start = [0] * len(dims)
    if not down:
        start[dim] = 1
    kept = vocab.slice_(v, start, body)
    return vocab.concat([zero, kept] if down else [kept, zero], dim)


@adjoint("dlvm.scan")
def _scan(r) -> None:
    kind = _reduce_kind(r.op)
    dim = attr_int(r.op, "dim")
    exclusive, reverse = _scan_flags(r)
    if kind == "add":
        # the transpose of a prefix sum is the suffix sum of the same kind
        r.accumulate(0, vocab.scan("add", r.g, dim, exclusive=exclusive, reverse=not reverse))
        return
    # run forwards (flip a reversed scan), on the inclusive scan whose results
    # the exclusive one shifts down: its result i + 1 is inclusive result i
    flip = (lambda v: vocab.reverse(v, [dim])) if reverse else (lambda v: v)
    x, g = flip(r.x(0)), flip(r.g)
    y = vocab.scan(kind, x, dim) if exclusive else flip(r.y(0))
    if exclusive:
        g = _shift(g, dim, down=False)
    jac = _ScanJacobian(kind, x, y, dim, r)
    # dx_j = sum_i g_i J[i, j]
    rows = vocab.pad_shape(jac.move(g), jac.axis + 1)
    r.accumulate(0, flip(jac.restore(vocab.reduce_sum(mul(rows, jac.matrix), [jac.axis]))))


@tangent("dlvm.scan")
def _scan_tangent(t) -> None:
    kind = _reduce_kind(t.op)
    if kind == "add":
        linear_tangent(t)
        return
    dim = attr_int(t.op, "dim")
    exclusive, reverse = _scan_flags(t)
    flip = (lambda v: vocab.reverse(v, [dim])) if reverse else (lambda v: v)
    x = flip(t.x(0))
    y = vocab.scan(kind, x, dim) if exclusive else flip(t.y(0))
    jac = _ScanJacobian(kind, x, y, dim, t)
    # dy_i = sum_j J[i, j] dx_j
    cols = vocab.pad_shape(jac.move(flip(t.dx(0))), jac.axis)
    dy = jac.restore(vocab.reduce_sum(mul(jac.matrix, cols), [jac.axis + 1]))
    t.set(0, flip(_shift(dy, dim, down=True) if exclusive else dy))


class _ScanJacobian:
    """J[..., i, j] = d y_i / d x_j of an inclusive scan (mul, max, min), scanned dim moved last.

    mul: J[i, j] = [j <= i] * prod_{k <= i, k != j} x_k (exact with zeros).
    max/min: J[i, j] = [j <= i][x_j == y_i] / #{j' <= i : x_j' == y_i} (ties share).
    """

    def __init__(self, kind: str, x: ir.Value, y: ir.Value, dim: int, accessor):
        if kind not in ("mul", "max", "min"):
            raise accessor.fail(f"for scan kind '{kind}'")
        self.rank = vocab.rank(x)
        self.perm = [d for d in range(self.rank) if d != dim] + [dim]
        self.axis = self.rank - 1
        self.n = vocab.shape(x)[dim]
        xm, ym = self.move(x), self.move(y)
        elt = vocab.element_type(x)
        lead = (1,) * (self.rank - 1)  # constants broadcast over the other dimensions
        lower = _constant(np.tril(np.ones((self.n, self.n))).reshape(lead + (self.n, self.n)), elt)  # [i, j] = [j <= i]
        if kind == "mul":
            eye = _constant(np.eye(self.n).reshape(lead + (self.n, self.n)), ir.IntegerType.get_signless(1))
            # Z[j, k] = 1 if k == j else x_k; C[j, i] = prod_{k <= i, k != j} x_k
            z = select(eye, 1.0, vocab.pad_shape(xm, self.axis))
            c = vocab.scan("mul", z, self.axis + 1)
            self.matrix = mul(vocab.transpose(c, _swap_last_two(self.rank + 1)), lower)
        else:
            # [i, j] = [x_j == y_i]
            equal = cmp("eq", vocab.pad_shape(xm, self.axis), vocab.pad_shape(ym, self.axis + 1))
            hits = mul(mask_to_float(equal, xm), lower)
            count = vocab.reduce_sum(hits, [self.axis + 1])
            self.matrix = div(hits, vocab.pad_shape(count, self.axis + 1))

    def move(self, v: ir.Value) -> ir.Value:
        return vocab.transpose(v, self.perm)

    def restore(self, v: ir.Value) -> ir.Value:
        return vocab.transpose(v, vocab.inverse_permutation(self.perm))


def _constant(array: np.ndarray, elt: ir.Type) -> ir.Value:
    """A dense dlvm.constant from a small numpy array (float or i1 element type)."""
    t = vocab.tensor_type(array.shape, elt)
    if isinstance(elt, ir.IntegerType):
        attr = ir.DenseElementsAttr.get(array.astype(np.bool_))
    elif isinstance(elt, ir.BF16Type):  # numpy has no bfloat16
        attr = ir.DenseElementsAttr.get([ir.FloatAttr.get(elt, float(v)) for v in array.ravel()], type=t)
    else:
        dtype = {16: np.float16, 32: np.float32, 64: np.float64}[ir.FloatType(elt).width]
        attr = ir.DenseElementsAttr.get(array.astype(dtype), type=t)
    return dlvm.ConstantOp(attr).result


# --------------------------------------------------------------------------
# Softmax
# --------------------------------------------------------------------------


@adjoint("dlvm.softmax")
def _softmax(r) -> None:
    r.accumulate(0, _softmax_vjp(r.y(0), r.g, attr_int(r.op, "axis")))


@tangent("dlvm.softmax")
def _softmax_tangent(t) -> None:
    # The softmax Jacobian is symmetric: the JVP is the VJP formula.
    t.set(0, _softmax_vjp(t.y(0), t.dx(0), attr_int(t.op, "axis")))


def _softmax_vjp(y: ir.Value, g: ir.Value, axis: int) -> ir.Value:
    inner = vocab.keep_dims(vocab.reduce_sum(mul(g, y), [axis]), vocab.shape(y), [axis])
    return mul(y, sub(g, inner))


@adjoint("dlvm.log_softmax")
def _log_softmax(r) -> None:
    y, g, axis = r.y(0), r.g, attr_int(r.op, "axis")
    total = vocab.keep_dims(vocab.reduce_sum(g, [axis]), vocab.shape(y), [axis])
    r.accumulate(0, sub(g, mul(exp(y), total)))


@tangent("dlvm.log_softmax")
def _log_softmax_tangent(t) -> None:
    y, dx, axis = t.y(0), t.dx(0), attr_int(t.op, "axis")
    mean = vocab.keep_dims(vocab.reduce_sum(mul(exp(y), dx), [axis]), vocab.shape(y), [axis])
    t.set(0, sub(dx, mean))


# --------------------------------------------------------------------------
# Window reductions (pooling)
# --------------------------------------------------------------------------


class _Windows:
    """Geometry of a reduce_window: padded extent, dilations and the window offsets."""

    def __init__(self, op):
        operation = op.operation
        self.kind = enum_name(op, "kind", dlvm.ReductionKind)
        self.window = attr_ints(op, "window")
        self.strides = attr_ints(op, "strides")
        self.input = vocab.shape(operation.operands[0])
        self.output = vocab.shape(operation.results[0])
        self.elt = vocab.element_type(operation.operands[0])
        explicit = {name: attr_ints(op, name) for name in WINDOW_OPTIONS if name in operation.attributes}
        padding = list(dlvm.Padding.__members__).index(enum_name(op, "padding", dlvm.Padding))
        # the interpreter's geometry is the reference (ReduceWindowOp::getLowPadding in the dialect)
        self.geometry = window_geometry(self.input, self.window, self.strides, padding, **explicit)
        self.low = [g[0] for g in self.geometry]
        self.dilation = [g[3] for g in self.geometry]
        self.base = [g[4] for g in self.geometry]
        dims = zip(self.input, self.window, self.strides, self.geometry)
        self.padded = [window_padded_extent(*d) for d in dims]

    @property
    def empty(self) -> bool:
        """No input or no output element: the derivative is zero (nothing to enumerate)."""
        return 0 in self.input or 0 in self.output

    def offsets(self, accessor) -> list[tuple[int, ...]]:
        """The window positions; the rules emit ops per position, so a window of more than
        :data:`MAX_WINDOW_POSITIONS` is a located error (dlvm-fuzz seed 1515: 2^33 positions
        ran out of memory)."""
        count = math.prod(self.window)
        if count > MAX_WINDOW_POSITIONS:
            raise accessor.fail(f"with a window of {count} positions (the derivative unrolls the window; "
                                f"at most {MAX_WINDOW_POSITIONS})")
        return list(itertools.product(*(range(w) for w in self.window)))

    @property
    def padded_type(self) -> ir.Type:
        return vocab.tensor_type(self.padded, self.elt)

    def pad(self, x: ir.Value, fill: float) -> ir.Value:
        base = vocab.const(self.padded_type, fill)
        return vocab.insert_into(x, base, self.low, self.input, self.base)

    def unpad(self, padded: ir.Value) -> ir.Value:
        return vocab.slice_(padded, self.low, self.input, self.base)

    def _start(self, offset) -> list[int]:
        return [o * d for o, d in zip(offset, self.dilation)]

    def at(self, padded: ir.Value, offset) -> ir.Value:
        """The element at window position ``offset`` of every window (output-shaped)."""
        return vocab.slice_(padded, self._start(offset), self.output, self.strides)

    def scatter(self, contributions) -> ir.Value:
        """Sum, into the padded input, each output-shaped value at its window position."""
        contributions = list(contributions)
        if self._tiles() and len(contributions) == math.prod(self.window):
            return self._interleave(dict(contributions))
        parts = [
            vocab.insert_into_zeros(value, self.padded_type, self._start(offset), self.output, self.strides)
            for offset, value in contributions
        ]
        return vocab.add_all(parts)

    def _tiles(self) -> bool:
        """Do the windows tile the padded input (strides equal to the window, no dilations)?
        Then every element is in exactly one window."""
        return all(s == w and d == 1 and b == 1 and p == o * w for s, w, d, b, p, o in
                   zip(self.strides, self.window, self.dilation, self.base, self.padded, self.output))

    def _interleave(self, parts: dict) -> ir.Value:
        """The padded input made of one output-shaped value per window position, for windows
        that tile it: each value split to ``[o0, 1, o1, 1, ...]`` and chosen, by a one-hot
        mask of the window positions ``[1, w0, 1, w1, ...]`` that broadcasts against it, for
        its position in ``[o0, w0, o1, w1, ...]``, merged back. One elementwise pass that
        writes the result contiguously; inserting each value into zeros with strides and
        adding them up (``scatter`` in general) costs a zero-filled input-sized tensor per
        position, strided writes and the additions (2x2 max pooling's gradient, batch 128:
        27 ms), and concatenating the split values along the unit axes cost copies of them
        (the CNN step at batch 128: 4-5 ms more)."""
        rank = len(self.output)
        split = [n for d in range(rank) for n in (self.output[d], 1)]
        positions = [n for d in range(rank) for n in (1, self.window[d])]
        i1 = ir.IntegerType.get_signless(1)
        offsets = sorted(parts)
        whole = vocab.reshape(parts[offsets[0]], split)
        for offset in offsets[1:]:
            onehot = np.zeros(positions, dtype=np.bool_)
            onehot[tuple(i for o in offset for i in (0, o))] = True
            whole = vocab.select(_constant(onehot, i1), vocab.reshape(parts[offset], split), whole)
        return vocab.reshape(whole, self.padded)

    def divide_by_counts(self, g: ir.Value) -> ir.Value:
        """``g`` over the number of operand elements of each window (the divisor of 'mean').

        The count is a product of per-dimension factors, applied as small
        constants that broadcast (rank-0 where a factor is uniform).
        """
        rank = len(self.input)
        for d in range(rank):
            counts = window_counts(self.input[d], self.window[d], self.strides[d], self.geometry[d]).astype(np.float64)
            if np.all(counts == counts[0]):
                if counts[0] != 1:
                    g = div(g, float(counts[0]))
                continue
            shape = [1] * rank
            shape[d] = self.output[d]
            g = div(g, _constant(counts.reshape(shape), self.elt))
        return g


_WINDOW_FILL = {"max": -math.inf, "min": math.inf, "mul": 1.0}
#: the largest window whose derivative is unrolled (a 256x256 global pooling)
MAX_WINDOW_POSITIONS = 1 << 16


@adjoint("dlvm.reduce_window")
def _reduce_window(r) -> None:
    win = _Windows(r.op)
    if win.empty:
        r.accumulate(0, vocab.zeros(r.x(0).type))
        return
    g = r.g
    if win.kind in ("add", "mean"):
        if win.kind == "mean":
            g = win.divide_by_counts(g)
        r.accumulate(0, win.unpad(win.scatter((offset, g) for offset in win.offsets(r))))
        return
    weights = _window_weights(win, r.x(0), r.y(0), r)
    r.accumulate(0, win.unpad(win.scatter((offset, mul(g, w)) for offset, w in weights)))


@tangent("dlvm.reduce_window")
def _reduce_window_tangent(t) -> None:
    win = _Windows(t.op)
    if win.kind in ("add", "mean"):
        linear_tangent(t)
        return
    if win.empty:
        t.set(0, vocab.zeros(t.y(0).type))
        return
    weights = _window_weights(win, t.x(0), t.y(0), t)
    padded = win.pad(t.dx(0), 0.0)
    t.set(0, vocab.add_all([mul(win.at(padded, offset), w) for offset, w in weights]))


def _window_weights(win: _Windows, x: ir.Value, y: ir.Value, accessor) -> list[tuple[tuple[int, ...], ir.Value]]:
    """d y / d (element at window offset o), per offset, output-shaped.

    max/min: as JAX (XLA's select_and_scatter), all of it goes to the first
    element of the window (row-major order) equal to the result; none where
    the result is NaN.
    """
    if win.kind not in _WINDOW_FILL:
        raise accessor.fail(f"for window reduction kind '{win.kind}'")
    offsets = win.offsets(accessor)
    padded = win.pad(x, _WINDOW_FILL[win.kind])
    values = [win.at(padded, offset) for offset in offsets]
    if win.kind == "mul":
        if len(values) == 1:
            return [(offsets[0], vocab.ones(y.type))]
        return [(offset, vocab.mul_all(values[:i] + values[i + 1 :])) for i, offset in enumerate(offsets)]
    weights = []
    taken = None  # 1 where an earlier offset already hit the result
    for i, (offset, v) in enumerate(zip(offsets, values, strict=True)):
        hit = mask_to_float(cmp("eq", v, y), y)
        first = hit if taken is None else mul(hit, sub(1.0, taken))
        weights.append((offset, first))
        if i + 1 < len(values):
            taken = first if taken is None else add(taken, first)
    return weights


# --------------------------------------------------------------------------
# Convolution
# --------------------------------------------------------------------------


class _Conv:
    """Attributes of a dlvm.convolve with defaults filled in."""

    def __init__(self, op):
        operation = op.operation
        self.input_shape = vocab.shape(operation.operands[0])
        self.kernel_shape = vocab.shape(operation.operands[1])
        self.output_shape = vocab.shape(operation.results[0])
        ns = len(self.input_shape) - 2
        self.ns = ns
        self.strides = attr_ints(op, "strides") or [1] * ns
        self.padding = attr_ints(op, "padding") or [0] * (2 * ns)
        self.lhs_dilation = attr_ints(op, "lhs_dilation") or [1] * ns
        self.rhs_dilation = attr_ints(op, "rhs_dilation") or [1] * ns
        self.groups = attr_int(op, "groups", 1)

    def low(self, i: int) -> int:
        return self.padding[2 * i]

    def high(self, i: int) -> int:
        return self.padding[2 * i + 1]


def _convolve(x, k, strides, padding, lhs_dilation, rhs_dilation, groups) -> ir.Value:
    def opt(values, default):
        return None if list(values) == [default] * len(values) else list(values)

    return dlvm.ConvolveOp(
        x,
        k,
        strides=opt(strides, 1),
        padding=opt(padding, 0),
        lhs_dilation=opt(lhs_dilation, 1),
        rhs_dilation=opt(rhs_dilation, 1),
        groups=None if groups == 1 else groups,
    ).result


@adjoint("dlvm.convolve")
def _convolve_adjoint(r) -> None:
    conv = _Conv(r.op)
    if r.wants(0):
        r.accumulate(0, _conv_input_grad(conv, r.g, r.x(1)))
    if r.wants(1):
        r.accumulate(1, _conv_kernel_grad(conv, r.g, r.x(0)))


tangent("dlvm.convolve")(multilinear_tangent)


def _conv_input_grad(conv: _Conv, g: ir.Value, kernel: ir.Value) -> ir.Value:
    """A transposed convolution: g dilated by the strides, with the flipped kernel.

    Per spatial dimension (input n, dilated input N = ld(n-1)+1, dilated window
    K = rd(k-1)+1, output m, padding lo): the gradient wrt the dilated input is
    a convolution of g (lhs_dilation s) with padding (K-1-lo, N+lo-(m-1)s-1)
    and rhs_dilation rd; negative pads become slices. Then every ld-th element
    is the gradient wrt the input. A negative forward lo (a crop of the dilated
    input) needs nothing special: the formulas hold for either sign.
    """
    groups = conv.groups
    o, cg = conv.kernel_shape[0], conv.kernel_shape[1]
    window = conv.kernel_shape[2:]
    # Kernel [O, C/G, w...] -> [C, O/G, w...] per group (flipped spatially below).
    grouped = vocab.reshape(kernel, [groups, o // groups, cg, *window])
    swapped = vocab.reshape(vocab.transpose(grouped, [0, 2, 1, *range(3, 3 + conv.ns)]),
                            [groups * cg, o // groups, *window])
    if any(s > 1 for s in conv.strides) and all(d == 1 for d in [*conv.lhs_dilation, *conv.rhs_dilation]):
        return _conv_input_grad_by_phases(conv, g, swapped)
    flipped = vocab.reverse(swapped, list(range(2, 2 + conv.ns)))
    padding: list[int] = []
    crop: list[tuple[int, int]] = []
    dilated_sizes: list[int] = []
    for i in range(conv.ns):
        n = conv.input_shape[2 + i]
        big_n = conv.lhs_dilation[i] * (n - 1) + 1
        big_k = conv.rhs_dilation[i] * (window[i] - 1) + 1
        m = conv.output_shape[2 + i]
        lo = big_k - 1 - conv.low(i)
        hi = big_n + conv.low(i) - (m - 1) * conv.strides[i] - 1
        padding += [max(lo, 0), max(hi, 0)]
        crop.append((max(-lo, 0), big_n))
        dilated_sizes.append(big_n)
    full = _convolve(g, flipped, [1] * conv.ns, padding, conv.strides, conv.rhs_dilation, groups)
    batch_channels = conv.input_shape[:2]
    dilated = vocab.slice_(full, [0, 0, *(start for start, _ in crop)], [*batch_channels, *dilated_sizes])
    return vocab.slice_(dilated, [0] * (2 + conv.ns), conv.input_shape, [1, 1, *conv.lhs_dilation])


def _conv_input_grad_by_phases(conv: _Conv, g: ir.Value, swapped: ir.Value) -> ir.Value:
    """The input gradient of a strided convolution (no dilations) as stride^2 (per 2-D)
    small convolutions, one per phase of the input, interleaved.

    Per spatial dimension (input n, output m, window K, stride s, low padding lo): the
    gradient at input position i = s*t + a (phase a) collects g[o] * w[k] over
    o*s + k = i + lo, i.e. the taps k = k0 + j*s with k0 = (a + lo) mod s, at
    o = t + e0 - j, e0 = (a + lo - k0) / s: a plain convolution of g with those taps
    reversed, g shifted by (J-1) - e0 (padded or cropped). The transposed convolution of
    g dilated by s would multiply (s-1)/s of its terms by inserted zeros in each dimension.
    """
    ns = conv.ns
    n_batch, channels = conv.input_shape[:2]
    window = conv.kernel_shape[2:]
    per_dim = []  # per dimension: [(k0, taps, e0) for each phase a], phase length T
    for i in range(ns):
        n, s, lo, k = conv.input_shape[2 + i], conv.strides[i], conv.low(i), window[i]
        phases = []
        for a in range(s):
            k0 = (a + lo) % s
            taps = -(-(k - k0) // s) if k0 < k else 0
            phases.append((k0, taps, (a + lo - k0) // s))
        per_dim.append((phases, -(-n // s)))
    lengths = [t for _, t in per_dim]
    outputs = []
    for phase in itertools.product(*(range(conv.strides[i]) for i in range(ns))):
        chosen = [per_dim[i][0][a] for i, a in enumerate(phase)]
        if any(taps == 0 for _, taps, _ in chosen):
            outputs.append(vocab.zeros(ir.RankedTensorType.get(
                [n_batch, channels, *lengths], ir.RankedTensorType(g.type).element_type)))
            continue
        sub = vocab.slice_(swapped, [0, 0, *(k0 for k0, _, _ in chosen)],
                           [*vocab.shape(swapped)[:2], *(taps for _, taps, _ in chosen)],
                           [1, 1, *conv.strides])
        sub = vocab.reverse(sub, list(range(2, 2 + ns)))
        offsets, sizes, padding = [0, 0], list(vocab.shape(g)[:2]), []
        for i, (_, taps, e0) in enumerate(chosen):
            m = conv.output_shape[2 + i]
            low = taps - 1 - e0
            high = lengths[i] + taps - 1 - m - low
            offsets.append(max(-low, 0))
            sizes.append(m - max(-low, 0) - max(-high, 0))
            padding += [max(low, 0), max(high, 0)]
        if any(size <= 0 for size in sizes[2:]):  # the cotangent does not reach this phase
            outputs.append(vocab.zeros(ir.RankedTensorType.get(
                [n_batch, channels, *lengths], ir.RankedTensorType(g.type).element_type)))
            continue
        cropped = vocab.slice_(g, offsets, sizes) if offsets != [0] * (2 + ns) or sizes != vocab.shape(g) else g
        outputs.append(_convolve(cropped, sub, [1] * ns, padding, [1] * ns, [1] * ns, conv.groups))
    # [phases..., N, C, T...] -> [N, C, T0, s0, T1, s1, ...] -> [N, C, T0*s0, ...] -> the input's size
    stacked = vocab.concat([vocab.reshape(v, [1, *vocab.shape(v)]) for v in outputs], 0)
    stacked = vocab.reshape(stacked, [*conv.strides, n_batch, channels, *lengths])
    perm = [ns, ns + 1] + [p for i in range(ns) for p in (ns + 2 + i, i)]
    interleaved = vocab.reshape(vocab.transpose(stacked, perm),
                                [n_batch, channels, *(t * s for t, s in zip(lengths, conv.strides))])
    return vocab.slice_(interleaved, [0] * (2 + ns), conv.input_shape)


def _swap_batch_and_channels(conv: _Conv, x: ir.Value, g: ir.Value) -> tuple[ir.Value, ir.Value]:
    """x [N, G*Cg, ...] as [Cg, G*N, ...] and g [N, G*Og, ...] as the kernel [G*Og, N, ...]
    of the convolution that computes the kernel gradient (see :func:`_conv_kernel_grad`)."""
    groups = conv.groups
    n = conv.input_shape[0]
    o = conv.kernel_shape[0]
    if groups == 1:  # the same, without the group dimension
        swap = [1, 0, *range(2, 2 + conv.ns)]
        return vocab.transpose(x, swap), vocab.transpose(g, swap)
    cg, og = conv.input_shape[1] // groups, o // groups
    spatial = list(range(3, 3 + conv.ns))
    x_shape, g_shape = vocab.shape(x), vocab.shape(g)
    xs = vocab.reshape(x, [n, groups, cg, *x_shape[2:]])
    xs = vocab.reshape(vocab.transpose(xs, [2, 1, 0, *spatial]), [cg, groups * n, *x_shape[2:]])
    gs = vocab.reshape(g, [n, groups, og, *g_shape[2:]])
    gs = vocab.reshape(vocab.transpose(gs, [1, 2, 0, *spatial]), [o, n, *g_shape[2:]])
    return xs, gs


def _conv_kernel_grad(conv: _Conv, g: ir.Value, x: ir.Value) -> ir.Value:
    """A convolution over the batch: the batch becomes the reduced channels.

    The window index k meets the output index p at dilated input position
    p*s + k*rd, so the roles swap: stride rd, rhs_dilation s, same padding
    and lhs_dilation. With G groups of Cg input and Og output channels, the
    input [N, G*Cg, ...] becomes [Cg, G*N, ...] (batch Cg; group gi's channels
    are its N images), g [N, G*Og, ...] becomes the kernel [G*Og, N, ...], and
    one convolution with G groups gives [Cg, G*Og, window...]: every group's
    kernel gradient at once (a depthwise layer's 128 groups are one op, not 128).
    """
    groups = conv.groups
    cg, o = conv.input_shape[1] // groups, conv.kernel_shape[0]
    if any(s > 1 for s in conv.strides) and all(d == 1 for d in [*conv.lhs_dilation, *conv.rhs_dilation]):
        return _conv_kernel_grad_by_phases(conv, g, x)
    xs, gs = _swap_batch_and_channels(conv, x, g)
    full = _convolve(xs, gs, conv.rhs_dilation, conv.padding, conv.lhs_dilation, conv.strides, groups)
    window = conv.kernel_shape[2:]
    cropped = vocab.slice_(full, [0] * (2 + conv.ns), [cg, o, *window])
    return vocab.transpose(cropped, [1, 0, *range(2, 2 + conv.ns)])


def _conv_kernel_grad_by_phases(conv: _Conv, g: ir.Value, x: ir.Value) -> ir.Value:
    """The kernel gradient of a strided convolution (no dilations) as one unstrided kernel
    gradient per phase of the window, interleaved.

    Per spatial dimension (input n, output m, window K, stride s, low padding lo), tap
    k = s*j + a (phase a, j < J_a = ceil((K - a) / s)) meets input position
    o*s + s*j + a - lo = s*(o + j + e) + b, with b = (a - lo) mod s and e = (a - lo - b) / s:
    the input's phase b (x[b::s], a contiguous copy) shifted by e, correlated with g
    unstrided. Computed as the stride-s convolution of the whole input with g dilated by s
    (the general rule), the correlation reads the input with stride s in its innermost
    loop (a gather per element); per phase, every read is contiguous.
    """
    ns = conv.ns
    groups = conv.groups
    cg, o = conv.input_shape[1] // groups, conv.kernel_shape[0]
    window = conv.kernel_shape[2:]
    longest = [-(-k // s) for k, s in zip(window, conv.strides)]
    element = ir.RankedTensorType(g.type).element_type
    _, gs = _swap_batch_and_channels(conv, x, g)
    outputs = []
    for phase in itertools.product(*(range(s) for s in conv.strides)):
        offsets, sizes, strides, padding, taps = [0, 0], list(conv.input_shape[:2]), [1, 1], [], []
        for i, a in enumerate(phase):
            n, m, k, s, lo = conv.input_shape[2 + i], conv.output_shape[2 + i], window[i], conv.strides[i], conv.low(i)
            count = -(-(k - a) // s) if a < k else 0
            b = (a - lo) % s
            shift = (a - lo - b) // s
            length = -(-(n - b) // s) if b < n else 0
            low, high = -shift, count + m - 1 - length + shift  # output length: count taps
            crop_low, crop_high = max(-low, 0), max(-high, 0)
            offsets.append(b + s * crop_low)
            sizes.append(length - crop_low - crop_high)
            strides.append(s)
            padding += [max(low, 0), max(high, 0)]
            taps.append(count)
        if min(taps) == 0 or min(sizes[2:]) <= 0:  # no tap of this phase, or no input reaches it
            outputs.append(vocab.zeros(vocab.tensor_type([cg, o, *longest], element)))
            continue
        xs, _ = _swap_batch_and_channels(conv, vocab.slice_(x, offsets, sizes, strides), g)
        part = _convolve(xs, gs, [1] * ns, padding, [1] * ns, [1] * ns, groups)  # [Cg, O, taps...]
        for i, (count, most) in enumerate(zip(taps, longest)):
            if count < most:
                shape = vocab.shape(part)
                shape[2 + i] = most - count
                part = vocab.concat([part, vocab.zeros(vocab.tensor_type(shape, element))], 2 + i)
        outputs.append(part)
    # [phases..., Cg, O, J...] -> [Cg, O, J0, s0, J1, s1, ...] -> [Cg, O, J0*s0, ...] -> the window
    stacked = vocab.concat([vocab.reshape(v, [1, *vocab.shape(v)]) for v in outputs], 0)
    stacked = vocab.reshape(stacked, [*conv.strides, cg, o, *longest])
    perm = [ns, ns + 1] + [p for i in range(ns) for p in (ns + 2 + i, i)]
    interleaved = vocab.reshape(vocab.transpose(stacked, perm),
                                [cg, o, *(j * s for j, s in zip(longest, conv.strides))])
    cropped = vocab.slice_(interleaved, [0] * (2 + ns), [cg, o, *window])
    return vocab.transpose(cropped, [1, 0, *range(2, 2 + ns)])
