"""The ``dlvm`` dialect's ops, per the descriptions in DLVMOps.td.

The semantics are the ones the ODS descriptions state (docs/DLVMDialect.md,
"Semantics decided" in docs/dialect-rationale.md); the constant folders
(dialect/lib/DLVMOps.cpp) and dlvm-to-linalg compute the same values:

- Integer ``div`` and ``trunc_div`` truncate toward zero, ``floor_div`` and
  ``mod`` round toward -inf. As in XLA, nothing is undefined: ``x / 0`` is -1
  (all bits set), ``x mod 0`` is ``x``, ``MIN / -1`` wraps to MIN and
  ``MIN mod -1`` is 0. Float ``floor_div``/``trunc_div`` are
  ``floor(x / y)``/``trunc(x / y)`` (the quotient rounded first), float ``mod``
  is ``fmod`` moved to the sign of y.
- Float ``min``/``max`` (and ``relu``, ``reduce max/min``) are IEEE 754-2019
  minimum/maximum: NaN propagates and -0.0 < +0.0.
- i1 is a boolean ordered false < true (``cmp``, ``min``/``max`` = and/or,
  ``relu`` = identity, reductions and scans max/min = or/and); arithmetic on
  i1 is modulo 2.
- ``cast``: from i1, true is 1 / 1.0; to i1 is ``x != 0`` (NaN is true);
  float to integer truncates toward zero and saturates, NaN to 0; integer to a
  narrower integer wraps.
- ``reduce`` with ``init``: ``init (+) reduce(x)``; mean: ``mean(x) + init``.
- ``reduce_window`` padding: low = ``total // 2`` for half (total = the padding
  the output size needs), ``window - 1`` for full, 0 for none; high = the rest.
"""

from __future__ import annotations

import builtins
import math

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from . import special
from .core import InterpreterError, int_semantics, op, round_bf16, round_bf16_from_f64, signed, wrap_int
from .rng import random_uniform

ADD, MUL, MAX, MIN, AND, OR, MEAN = range(7)
KIND_NAMES = ("add", "mul", "max", "min", "and", "or", "mean")
LT, LE, GT, GE, EQ, NE = range(6)
PAD_NONE, PAD_HALF, PAD_FULL = range(3)

_CMP = (np.less, np.less_equal, np.greater, np.greater_equal, np.equal, np.not_equal)

# --------------------------------------------------------------------------
# elementwise unary
# --------------------------------------------------------------------------


def _float_unary(fn):
    def handler(frame, node, args):
        return fn(args[0])

    return handler


def _special(fn):
    def handler(frame, node, args):
        x = args[0]
        return fn(x).astype(x.dtype)

    return handler


def _neg(x):
    return x if x.dtype == np.bool_ else np.negative(x)


def _relu(x):
    if x.dtype == np.bool_:  # max(x, false) with false < true
        return x
    return np.maximum(x, x.dtype.type(0))


def _sign(x):
    if x.dtype == np.bool_:
        return x
    s = np.sign(x)
    return np.where(x == 0, x, s) if x.dtype.kind == "f" else s  # +-0.0 unchanged


def _abs(x):
    return x if x.dtype == np.bool_ else np.abs(x)


def _square(x):
    return x if x.dtype == np.bool_ else x * x


def _sigmoid(x):
    one = x.dtype.type(1)
    return one / (one + np.exp(-x))


def _rsqrt(x):
    return x.dtype.type(1) / np.sqrt(x)


_UNARY = {
    "dlvm.neg": _neg,
    "dlvm.exp": np.exp,
    "dlvm.log": np.log,
    "dlvm.tanh": np.tanh,
    "dlvm.sigmoid": _sigmoid,
    "dlvm.relu": _relu,
    "dlvm.sqrt": np.sqrt,
    "dlvm.rsqrt": _rsqrt,
    "dlvm.square": _square,
    "dlvm.sign": _sign,
    "dlvm.abs": _abs,
    "dlvm.sin": np.sin,
    "dlvm.cos": np.cos,
    "dlvm.tan": np.tan,
    "dlvm.asin": np.arcsin,
    "dlvm.acos": np.arccos,
    "dlvm.atan": np.arctan,
    "dlvm.sinh": np.sinh,
    "dlvm.cosh": np.cosh,
    "dlvm.floor": np.floor,
    "dlvm.ceil": np.ceil,
    "dlvm.round": special.round_half_away,
    "dlvm.rint": np.rint,
    "dlvm.log1p": np.log1p,
    "dlvm.expm1": np.expm1,
    "dlvm.not": np.invert,
    "dlvm.asinh": np.arcsinh,
    "dlvm.acosh": np.arccosh,
    "dlvm.atanh": np.arctanh,
    "dlvm.exp2": np.exp2,
    "dlvm.log2": np.log2,
    "dlvm.log10": np.log10,
    "dlvm.cbrt": np.cbrt,
    "dlvm.is_finite": np.isfinite,
}
for _name, _fn in _UNARY.items():
    op(_name)(_float_unary(_fn))


def _unsigned(x):
    """The bits of integer ``x`` as the unsigned type of its width."""
    return x.view(np.dtype(f"u{x.dtype.itemsize}"))


@op("dlvm.popcount")
def _popcount(frame, node, args):
    x = args[0]
    if x.dtype == np.bool_:
        return x
    return np.bitwise_count(_unsigned(x)).astype(x.dtype)


def _shift(kind):
    """XLA's shifts: the amount is unsigned; the bit width or more shifts every bit out."""

    def handler(frame, node, args):
        x, y = np.broadcast_arrays(*args)
        if x.dtype == np.bool_:  # one bit: a shift by false keeps x; by true: 0, or x's sign fill
            return x if kind == "right_arithmetic" else x & ~y
        width = 8 * x.dtype.itemsize
        amount = _unsigned(np.array(y)).astype(np.uint64)
        inside = amount < width
        safe = np.where(inside, amount, 0).astype(np.uint64)
        if kind == "left":
            out = (_unsigned(np.array(x)).astype(np.uint64) << safe) & np.uint64((1 << width) - 1)
            shifted = out.astype(np.dtype(f"u{x.dtype.itemsize}")).view(x.dtype)
            return np.where(inside, shifted, 0).astype(x.dtype)
        if kind == "right_logical":
            shifted = (_unsigned(np.array(x)).astype(np.uint64) >> safe)
            shifted = shifted.astype(np.dtype(f"u{x.dtype.itemsize}")).view(x.dtype)
            return np.where(inside, shifted, 0).astype(x.dtype)
        signed_x = np.asarray(x).view(np.dtype(f"i{x.dtype.itemsize}"))  # the top bit fills, unsigned types too
        out = np.where(inside, signed_x >> safe.astype(signed_x.dtype), signed_x >> (width - 1))
        return out.astype(signed_x.dtype).view(x.dtype)

    return handler


for _kind in ("left", "right_logical", "right_arithmetic"):
    op(f"dlvm.shift_{_kind}")(_shift(_kind))

for _name, _fn in {
    "dlvm.erf": special.erf,
    "dlvm.erfc": special.erfc,
    "dlvm.lgamma": special.lgamma,
    "dlvm.digamma": special.digamma,
}.items():
    op(_name)(_special(_fn))


# --------------------------------------------------------------------------
# elementwise binary
# --------------------------------------------------------------------------


def check_nonzero_divisor(y) -> None:
    if np.any(np.asarray(y) == 0):
        raise InterpreterError("integer division by zero")


def int_trunc_div(x, y):
    check_nonzero_divisor(y)
    q = np.floor_divide(x, y)
    r = x - q * y
    fix = (r != 0) & ((x < 0) != (y < 0))
    return q + fix.astype(q.dtype)


def int_floor_div(x, y):
    check_nonzero_divisor(y)
    return np.floor_divide(x, y)


def int_mod(x, y):
    check_nonzero_divisor(y)
    return np.mod(x, y)


def _unsigned_division(x, y, remainder: bool):
    """Unsigned integers: x / 0 has every bit set, x mod 0 = x rem 0 = x (floor and truncation agree)."""
    zero = y == 0
    safe = np.where(zero, y.dtype.type(1), y)
    if remainder:
        return np.where(zero, x, np.remainder(x, safe)).astype(x.dtype)
    return np.where(zero, np.iinfo(x.dtype).max, np.floor_divide(x, safe)).astype(x.dtype)


def xla_div(x, y, floor: bool = False):
    """dlvm's integer division (XLA's): x / 0 = -1, MIN / -1 = MIN (wraps)."""
    x, y = np.asarray(x), np.asarray(y)
    if x.dtype.kind == "u":
        return _unsigned_division(x, y, remainder=False)
    zero, minus_one = y == 0, y == -1
    safe = np.where(zero | minus_one, 1, y).astype(y.dtype)
    q = np.floor_divide(x, safe)
    if not floor:
        q = q + ((x - q * safe != 0) & ((x < 0) != (safe < 0))).astype(q.dtype)
    q = np.where(minus_one, np.negative(x), q)
    return np.where(zero, -1, q).astype(q.dtype)


def xla_floor_div(x, y):
    return xla_div(x, y, floor=True)


def xla_mod(x, y):
    """dlvm's floored integer remainder: x mod 0 = x, x mod -1 = 0."""
    x, y = np.asarray(x), np.asarray(y)
    if x.dtype.kind == "u":
        return _unsigned_division(x, y, remainder=True)
    zero, minus_one = y == 0, y == -1
    r = np.mod(x, np.where(zero | minus_one, 1, y).astype(y.dtype))
    return np.where(zero, x, np.where(minus_one, 0, r)).astype(r.dtype)


def xla_rem(x, y):
    """dlvm's truncated integer remainder (XLA's rem): x rem 0 = x, x rem -1 = 0."""
    x, y = np.asarray(x), np.asarray(y)
    if x.dtype.kind == "u":
        return _unsigned_division(x, y, remainder=True)
    zero, minus_one = y == 0, y == -1
    r = np.fmod(x, np.where(zero | minus_one, 1, y).astype(y.dtype))
    return np.where(zero, x, np.where(minus_one, 0, r)).astype(r.dtype)


def _float_floor_div(x, y):
    return np.floor(x / y)


def _float_trunc_div(x, y):
    return np.trunc(x / y)


def _float_only(name):
    def fail(x, y):
        raise InterpreterError(f"{name} needs float operands")

    return fail


def _int_only(name):
    def fail(x, y):
        raise InterpreterError(f"{name} needs integer operands")

    return fail


_BINARY = {
    # name: (float kernel, integer kernel)
    "dlvm.add": (np.add, np.add),
    "dlvm.sub": (np.subtract, np.subtract),
    "dlvm.mul": (np.multiply, np.multiply),
    "dlvm.div": (np.divide, xla_div),
    "dlvm.pow": (np.power, _float_only("pow")),
    "dlvm.mod": (np.mod, xla_mod),
    "dlvm.floor_div": (_float_floor_div, xla_floor_div),
    "dlvm.trunc_div": (_float_trunc_div, xla_div),
    "dlvm.and": (_int_only("and"), np.bitwise_and),
    "dlvm.or": (_int_only("or"), np.bitwise_or),
    "dlvm.xor": (_int_only("xor"), np.bitwise_xor),
    "dlvm.rem": (np.fmod, xla_rem),
    "dlvm.atan2": (np.arctan2, _float_only("atan2")),
}


def ieee_maximum(x, y):
    """np.maximum with IEEE 754-2019 signed zeros (+0.0 > -0.0), as arith.maximumf."""
    r = np.maximum(x, y)
    if r.dtype.kind == "f":
        zeros = (x == 0) & (y == 0)
        if np.any(zeros):
            r = np.where(zeros, np.where(np.signbit(x), y, x), r)
    return r


def ieee_minimum(x, y):
    """np.minimum with IEEE 754-2019 signed zeros (-0.0 < +0.0), as arith.minimumf."""
    r = np.minimum(x, y)
    if r.dtype.kind == "f":
        zeros = (x == 0) & (y == 0)
        if np.any(zeros):
            r = np.where(zeros, np.where(np.signbit(x), x, y), r)
    return r


# Ordering ops: numpy orders booleans false < true (min is and, max is or) and
# the integers signed, as dlvm does, so no i1 conversion.
_ORDERING = {
    "dlvm.min": (ieee_minimum, np.minimum),
    "dlvm.max": (ieee_maximum, np.maximum),
}


def _binary(float_fn, int_fn, ordering=False):
    if not ordering:
        int_fn = int_semantics(int_fn)

    def handler(frame, node, args):
        x, y = args
        if x.dtype.kind == "f":
            return float_fn(x, y)
        return int_fn(x, y)

    return handler


for _name, (_f, _i) in _BINARY.items():
    op(_name)(_binary(_f, _i))
for _name, (_f, _i) in _ORDERING.items():
    op(_name)(_binary(_f, _i, ordering=True))


@op("dlvm.clamp")
def _clamp(frame, node, args):
    low, x, high = args
    if x.dtype.kind == "f":
        return ieee_minimum(ieee_maximum(x, low), high)
    return np.minimum(np.maximum(x, low), high)  # booleans: false < true; integers signed


@op("dlvm.cmp")
def _cmp(frame, node, args):
    x, y = args  # booleans compare false < true, integers signed
    return _CMP[node.attr("predicate")](x, y)


@op("dlvm.select")
def _select(frame, node, args):
    mask, a, b = args
    return np.where(mask, a, b)


# --------------------------------------------------------------------------
# linear algebra and shape
# --------------------------------------------------------------------------


#: the most multiply-adds of a dot that :func:`_ordered_dot` computes (in its sum order)
ORDERED_DOT_MACS = 1 << 24


@op("dlvm.dot")
def _dot(frame, node, args):
    a, b = args
    if a.dtype == np.bool_:
        return np.matmul(a, b)  # i1: AND products, OR sum (the ODS description)
    order = frame.interp.sum_order
    if (order != "pairwise" and a.dtype == np.float32 and b.dtype == np.float32
            and a.size // max(a.shape[-1], 1) * b.size <= ORDERED_DOT_MACS):
        return _ordered_dot(a, b, order)
    return int_semantics(np.matmul)(a, b)


def _ordered_dot(a: np.ndarray, b: np.ndarray, order: str) -> np.ndarray:
    """A float32 matmul (``[..., M, K] x [..., K, N]``) summed over k in ``order`` (see the
    Interpreter's sum_order), each product added exactly and each sum rounded to float32:
    a fused multiply-add chain. Near overflow the order decides between inf, -inf and NaN
    (dlvm-fuzz seed 3838: a product of 1e60 and a -inf, NaN in 8 lanes, -inf in one chain)."""
    count = a.shape[-1]
    shape = np.broadcast_shapes(a.shape[:-1] + (1,), b.shape[:-2] + (1, b.shape[-1]))
    lanes = 1 if order in ("sequential", "reversed") else int(order.removeprefix("lanes"))
    steps = range(count - 1, -1, -1) if order == "reversed" else range(count)
    partial = [np.zeros(shape, np.float32) for _ in range(lanes)]
    with np.errstate(over="ignore", invalid="ignore"):
        for k in steps:  # products of two float32 values are exact in float64
            term = a[..., :, k, None].astype(np.float64) * b[..., None, k, :].astype(np.float64)
            partial[k % lanes] = (partial[k % lanes].astype(np.float64) + term).astype(np.float32)
        while len(partial) > 1:
            half = len(partial) // 2
            partial = [partial[i] + partial[i + half] for i in range(half)]
    return partial[0]


@op("dlvm.dot_general")
def _dot_general(frame, node, args):
    """As the lowering: each operand permuted to [batch, free, contracting] and
    collapsed, one batched matmul, the result expanded."""
    a, b = args
    lb, rb = node.attr("lhs_batching_dims"), node.attr("rhs_batching_dims")
    lc, rc = node.attr("lhs_contracting_dims"), node.attr("rhs_contracting_dims")
    lf = [d for d in range(a.ndim) if d not in lb and d not in lc]
    rf = [d for d in range(b.ndim) if d not in rb and d not in rc]

    def size(x, dims):
        return int(np.prod([x.shape[d] for d in dims], dtype=np.int64))

    batch = size(a, lb)
    a3 = np.transpose(a, [*lb, *lf, *lc]).reshape(batch, size(a, lf), size(a, lc))
    b3 = np.transpose(b, [*rb, *rc, *rf]).reshape(batch, size(b, rc), size(b, rf))
    return _dot(frame, node, (a3, b3)).reshape(node.result_shape())


@op("dlvm.transpose")
def _transpose(frame, node, args):
    return np.transpose(args[0], node.attr("perm"))


@op("dlvm.reverse")
def _reverse(frame, node, args):
    dims = node.attr("dims")
    return np.flip(args[0], axis=dims) if dims else args[0]


@op("dlvm.concatenate")
def _concatenate(frame, node, args):
    return np.concatenate(args, axis=node.attr("axis"))


def strided_slice(x, offsets, sizes, strides):
    """``x[offset + i * stride for i < size]`` per dimension, with bounds checks."""
    index = []
    for d, (o, n, s) in enumerate(zip(offsets, sizes, strides)):
        if n < 0 or s <= 0 or o < 0 or (n > 0 and o + (n - 1) * s >= x.shape[d]) or o > x.shape[d]:
            raise InterpreterError(
                f"slice out of bounds in dimension {d}: offset {o}, size {n}, stride {s} of extent {x.shape[d]}"
            )
        index.append(slice(o, o + (n - 1) * s + 1, s) if n > 0 else slice(o, o))
    return x[tuple(index)]


@op("dlvm.slice")
def _slice(frame, node, args):
    x = args[0]
    strides = node.attr("strides") or (1,) * x.ndim
    return strided_slice(x, node.attr("offsets"), node.attr("sizes"), strides)


def pad_kernel(x, value, low, high, interior):
    """XLA's pad (negative low/high crop): interior padding into a larger array, then the window."""
    grown = [n + max(n - 1, 0) * i + max(lo, 0) + max(hi, 0) for n, lo, hi, i in zip(x.shape, low, high, interior)]
    out = np.full(grown, value, dtype=x.dtype)
    out[tuple(builtins.slice(max(lo, 0), max(lo, 0) + (n - 1) * (i + 1) + 1 if n else max(lo, 0), i + 1)
              for n, lo, i in zip(x.shape, low, interior))] = x
    return out[tuple(builtins.slice(max(-lo, 0), g - max(-hi, 0)) for g, lo, hi in zip(grown, low, high))]


@op("dlvm.pad")
def _pad(frame, node, args):
    x, value = args
    return pad_kernel(x, np.asarray(value).item(), node.attr("low"), node.attr("high"), node.attr("interior"))


def _starts(indices, shape, sizes):
    """XLA's clamped window starts: clamp(index, 0, dim - size)."""
    return [int(np.clip(int(np.asarray(i)), 0, n - k)) for i, n, k in zip(indices, shape, sizes)]


@op("dlvm.dynamic_slice")
def _dynamic_slice(frame, node, args):
    x, indices = args[0], args[1:]
    sizes = node.attr("sizes")
    starts = _starts(indices, x.shape, sizes)
    return x[tuple(slice(s, s + k) for s, k in zip(starts, sizes))]


@op("dlvm.dynamic_update_slice")
def _dynamic_update_slice(frame, node, args):
    x, update, indices = args[0], args[1], args[2:]
    starts = _starts(indices, x.shape, update.shape)
    out = np.array(x, copy=True)
    out[tuple(slice(s, s + k) for s, k in zip(starts, update.shape))] = update
    return out


def _window_coords(grid, indices, window_axes, index_vector_dim, to_operand, operand_shape, window_sizes, inserted):
    """Operand coordinates of gather/scatter elements (XLA's semantics, clamped starts).

    ``grid``: the coordinates of the gather result / scatter updates (one array
    per dimension); ``window_axes``: which of them are window dimensions.
    """
    batch = [grid[i] for i in range(len(grid)) if i not in window_axes]
    shape = grid[0].shape if grid else ()
    starts = [np.zeros(shape, np.int64) for _ in operand_shape]
    for k, d in enumerate(to_operand):
        at = list(batch)
        if index_vector_dim < indices.ndim:
            at.insert(index_vector_dim, np.full(shape, k))
        value = np.asarray(signed(indices)[tuple(at)], dtype=np.int64)
        starts[d] = np.clip(value, 0, operand_shape[d] - window_sizes[d])
    window = iter(window_axes)
    return tuple(starts[d] if d in inserted else starts[d] + grid[next(window)] for d in range(len(operand_shape)))


@op("dlvm.gather")
def _gather(frame, node, args):
    x, indices = args
    out_shape = node.result_shape()
    grid = list(np.indices(out_shape)) if out_shape else []
    collapsed = node.attr("collapsed_slice_dims")
    coords = _window_coords(grid, indices, node.attr("offset_dims"), node.attr("index_vector_dim"),
                            node.attr("start_index_map"), x.shape, node.attr("slice_sizes"), collapsed)
    return x[coords]


@op("dlvm.scatter")
def _scatter(frame, node, args):
    x, indices, updates = args
    window_dims, inserted = node.attr("update_window_dims"), node.attr("inserted_window_dims")
    sizes, window = [], iter(window_dims)
    for d in range(x.ndim):
        sizes.append(1 if d in inserted else updates.shape[next(window)])
    grid = list(np.indices(updates.shape)) if updates.ndim else []
    coords = _window_coords(grid, indices, window_dims, node.attr("index_vector_dim"),
                            node.attr("scatter_dims_to_operand_dims"), x.shape, sizes, inserted)
    out = np.array(x, copy=True)
    if updates.size == 0:
        return out
    linear = np.ravel_multi_index(coords, x.shape).ravel() if x.ndim else np.zeros(1, np.int64)
    values = updates.ravel()
    kind = node.attr("kind")
    if kind == 1:  # replace: in row-major order of the updates, the last one stays
        _, first_from_end = np.unique(linear[::-1], return_index=True)
        keep = linear.size - 1 - first_from_end
        out.flat[linear[keep]] = values[keep]
        return out
    flat = out.reshape(-1)
    if kind == 0:
        (np.bitwise_xor if x.dtype == np.bool_ else np.add).at(flat, linear, values)
    else:
        float_kind = x.dtype.kind == "f"
        pick = (ieee_maximum if kind == 2 else ieee_minimum) if float_kind else (np.maximum if kind == 2 else np.minimum)
        for position, value in zip(linear, values):  # in order (IEEE max/min have no ufunc.at)
            flat[position] = pick(flat[position], value)
    return flat.reshape(x.shape)


@op("dlvm.iota")
def _iota(frame, node, args):
    shape, dim, elem = node.result_shape(), node.attr("dim"), node.result_elem()
    counts = np.arange(shape[dim], dtype=np.int64).reshape([-1 if d == dim else 1 for d in range(len(shape))])
    values = np.broadcast_to(counts, shape)
    if elem.is_bool:
        return values != 0
    if elem.bf16:
        return round_bf16_from_f64(values.astype(np.float64))
    return values.astype(np.int64 if elem.wrap else elem.dtype)


def sort_positions(keys, axis: int, descending: bool):
    """The stable sorting permutation along ``axis`` (numpy's ``argsort``): ascending
    puts NaN last, descending puts it first; ``-0.0 == 0.0``; False < True."""
    if not descending:
        return np.argsort(keys, axis=axis, kind="stable")
    if keys.dtype.kind != "f":
        return np.argsort(~keys, axis=axis, kind="stable")  # ~ reverses the order of ints and bools
    by_value = np.argsort(-keys, axis=axis, kind="stable")  # NaN last
    numbers = ~np.isnan(np.take_along_axis(keys, by_value, axis))
    return np.take_along_axis(by_value, np.argsort(numbers, axis=axis, kind="stable"), axis)  # NaN first


@op("dlvm.sort", seq=True)
def _sort(frame, node, args):
    axis = node.attr("dim")
    positions = sort_positions(args[0], axis, node.has_attr("descending"))
    return [np.take_along_axis(x, positions, axis) for x in args]


@op("dlvm.top_k", seq=True)
def _top_k(frame, node, args):
    (x,) = args
    positions = sort_positions(x, x.ndim - 1, True)[..., : node.attr("k")]
    return [np.take_along_axis(x, positions, x.ndim - 1), positions.astype(node.result_elem(1).dtype)]


def _arg_extremum(pick):
    def handler(frame, node, args):
        # numpy: the first position of the extremum, a NaN counting as one; False < True
        x, axis = args[0], node.attr("axis")
        if x.size == 0:  # the verifier allows an empty axis only with an empty result
            return np.zeros(x.shape[:axis] + x.shape[axis + 1 :], node.result_elem().dtype)
        return pick(x, axis=axis).astype(node.result_elem().dtype)

    return handler


op("dlvm.argmax")(_arg_extremum(np.argmax))
op("dlvm.argmin")(_arg_extremum(np.argmin))


@op("dlvm.reshape")
def _reshape(frame, node, args):
    return np.reshape(args[0], node.attr("shape"))


@op("dlvm.pad_shape")
def _pad_shape(frame, node, args):
    return np.expand_dims(args[0], node.attr("dim"))


@op("dlvm.squeeze_shape")
def _squeeze_shape(frame, node, args):
    return np.squeeze(args[0], axis=node.attr("dim"))


@op("dlvm.broadcast_to")
def _broadcast_to(frame, node, args):
    return np.broadcast_to(args[0], node.attr("shape"))


# --------------------------------------------------------------------------
# reductions
# --------------------------------------------------------------------------


def identity(kind: int, dtype: np.dtype):
    """The combinator's identity in ``dtype`` (a numeric, non-bool dtype)."""
    dtype = np.dtype(dtype)
    if kind in (ADD, OR, MEAN):
        return dtype.type(0)
    if kind == MUL:
        return dtype.type(1)
    if kind == AND:  # every bit set
        return np.array(-1).astype(dtype)[()]
    if dtype.kind == "f":
        return dtype.type(-np.inf if kind == MAX else np.inf)
    info = np.iinfo(dtype)
    return dtype.type(info.min if kind == MAX else info.max)


def _ordered(x, kind: int, axes: tuple, order: str):
    """``x`` reduced by add/mul/mean over ``axes`` in ``order`` (see Interpreter's sum_order)."""
    if order == "reversed":
        return reduce_kernel(np.flip(x, axis=axes), kind, axes)
    rest = [d for d in range(x.ndim) if d not in axes]
    moved = np.moveaxis(x, list(axes), list(range(x.ndim - len(axes), x.ndim)))
    flat = moved.reshape([x.shape[d] for d in rest] + [-1])
    count = flat.shape[-1]
    if count == 0:
        return reduce_kernel(x, kind, axes)
    running = np.cumprod if kind == MUL else np.cumsum
    if order == "sequential":  # one running total over the reduced elements, in row-major order
        total = running(flat, axis=-1, dtype=x.dtype)[..., -1]
    else:  # "lanesN": N running totals (element i into lane i mod N), then halving, as SIMD code does
        lanes = int(order.removeprefix("lanes"))
        width = -(-count // lanes) * lanes
        identity = x.dtype.type(1 if kind == MUL else 0)
        padded = np.concatenate([flat, np.full(flat.shape[:-1] + (width - count,), identity, x.dtype)], axis=-1)
        partial = running(padded.reshape(flat.shape[:-1] + (width // lanes, lanes)), axis=-2, dtype=x.dtype)[..., -1, :]
        while partial.shape[-1] > 1:
            half = partial.shape[-1] // 2
            partial = partial[..., :half] * partial[..., half:] if kind == MUL else partial[..., :half] + partial[..., half:]
        total = partial[..., 0]
    if kind == MEAN:
        return (total / np.float64(count)).astype(x.dtype)
    return total


def reduce_kernel(x, kind: int, axes: tuple, order: str = "pairwise"):
    """Reduces numeric (non-bool) ``x`` over ``axes`` in its own dtype."""
    if order != "pairwise" and kind in (ADD, MUL, MEAN) and x.dtype.kind == "f" and axes:
        return _ordered(x, kind, axes, order)
    if kind == ADD:
        return np.sum(x, axis=axes, dtype=x.dtype)
    if kind == MUL:
        return np.prod(x, axis=axes, dtype=x.dtype)
    if kind in (MAX, MIN):
        fn = np.max if kind == MAX else np.min
        r = fn(x, axis=axes, initial=identity(kind, x.dtype))
        if x.dtype.kind == "f":  # a zero result: +0.0 > -0.0
            return _signed_zero_extremum(r, x, kind, lambda z: np.any(z, axis=axes))
        return r
    if kind == AND:
        return np.bitwise_and.reduce(x, axis=axes)
    if kind == OR:
        return np.bitwise_or.reduce(x, axis=axes)
    if kind == MEAN:
        count = math.prod(x.shape[a] for a in axes)
        # divide in float64 (exact rounding for f16/f32; no f16 overflow of the count)
        return (np.sum(x, axis=axes, dtype=x.dtype) / np.float64(count)).astype(x.dtype)
    raise InterpreterError(f"unknown reduction kind {kind}")


def _signed_zero_extremum(r, x, kind: int, seen):
    """Fixes the sign of zero results ``r`` of a max/min over ``x``: +0.0 for max
    if ``seen`` (any over the reduced elements) finds a +0.0, -0.0 for min if it
    finds a -0.0."""
    r = np.asarray(r)
    if not np.any(r == 0):
        return r
    if kind == MAX:
        found = seen((x == 0) & ~np.signbit(x))
        return np.where(r == 0, np.where(found, x.dtype.type(0.0), x.dtype.type(-0.0)), r)
    found = seen((x == 0) & np.signbit(x))
    return np.where(r == 0, np.where(found, x.dtype.type(-0.0), x.dtype.type(0.0)), r)


def combine(kind: int, a, b):
    """``a (+) b`` for the combinator ``kind`` (mean combines as add)."""
    if kind in (ADD, MEAN):
        return a + b
    if kind == MUL:
        return a * b
    if kind == MAX:
        return ieee_maximum(a, b)
    if kind == MIN:
        return ieee_minimum(a, b)
    if kind == AND:
        return np.bitwise_and(a, b)
    if kind == OR:
        return np.bitwise_or(a, b)
    raise InterpreterError(f"unknown reduction kind {kind}")


def _check_kind(kind, x, allow_mean=True):
    if kind in (AND, OR) and x.dtype.kind == "f":
        raise InterpreterError(f"'{KIND_NAMES[kind]}' needs integer elements")
    if kind == MEAN and (not allow_mean or x.dtype.kind != "f"):
        raise InterpreterError("'mean' needs float elements here")


def _bool_kind(kind, x):
    """On i1 (false < true) max is or and min is and."""
    if x.dtype == np.bool_:
        return {MAX: OR, MIN: AND}.get(kind, kind)
    return kind


@op("dlvm.reduce")
def _reduce(frame, node, args):
    kind = node.attr("kind")
    axes = tuple(node.attr("dims"))
    x = args[0]
    _check_kind(kind, x)
    kind = _bool_kind(kind, x)

    order = frame.interp.sum_order

    def kernel(x, *init):
        r = reduce_kernel(x, kind, axes, order)
        return combine(kind, init[0], r) if init else r

    return int_semantics(kernel)(x, *args[1:])


def scan_kernel(x, kind: int, axis: int):
    if kind == ADD:
        return np.cumsum(x, axis=axis, dtype=x.dtype)
    if kind == MUL:
        return np.cumprod(x, axis=axis, dtype=x.dtype)
    if kind in (MAX, MIN):
        r = (np.maximum if kind == MAX else np.minimum).accumulate(x, axis=axis)
        if x.dtype.kind == "f":  # a zero result: +0.0 > -0.0
            return _signed_zero_extremum(r, x, kind, lambda z: np.logical_or.accumulate(z, axis=axis))
        return r
    if kind == AND:
        return np.bitwise_and.accumulate(x, axis=axis)
    if kind == OR:
        return np.bitwise_or.accumulate(x, axis=axis)
    raise InterpreterError(f"'{KIND_NAMES[kind]}' is not a valid scan combinator")


def scan_with_flags(x, kind: int, axis: int, exclusive: bool, reverse: bool):
    """``scan_kernel`` run from the end (``reverse``) and/or shifted by one (``exclusive``)."""
    v = np.flip(x, axis) if reverse else x
    r = scan_kernel(v, kind, axis)
    if exclusive and r.shape[axis]:
        head = np.full_like(np.take(r, [0], axis=axis), identity(kind, r.dtype))
        r = np.concatenate([head, np.take(r, np.arange(r.shape[axis] - 1), axis=axis)], axis=axis)
    return np.flip(r, axis) if reverse else r


@op("dlvm.scan")
def _scan(frame, node, args):
    kind = node.attr("kind")
    x = args[0]
    _check_kind(kind, x, allow_mean=False)
    kind = _bool_kind(kind, x)
    flags = node.has_attr("exclusive"), node.has_attr("reverse")
    return int_semantics(lambda v: scan_with_flags(v, kind, node.attr("dim"), *flags))(x)


def window_padding(n: int, w: int, s: int, padding: int) -> tuple[int, int, int]:
    """(low, high, output size) of one dimension of ``reduce_window`` (``n``, ``w``: dilated sizes)."""
    if padding == PAD_NONE:
        if w > n:
            raise InterpreterError(f"window {w} larger than the dimension {n} with padding none")
        return 0, 0, (n - w) // s + 1
    if padding == PAD_HALF:
        out = -(-n // s)
        total = max((out - 1) * s + w - n, 0)
        return total // 2, total - total // 2, out
    if padding == PAD_FULL:
        out = (n + w - 2) // s + 1
        low = w - 1
        return low, max((out - 1) * s + w - n - low, 0), out
    raise InterpreterError(f"unknown padding {padding}")


def dilated_size(n: int, dilation: int) -> int:
    """``n`` elements with ``dilation - 1`` holes between neighbours."""
    return (n - 1) * dilation + 1 if n else 0


def window_padded_extent(n: int, w: int, s: int, geometry: tuple[int, int, int, int, int]) -> int:
    """The padded (and base-dilated) extent one dimension of a ``reduce_window`` reads."""
    lo, hi, out, wd, bd = geometry
    return max(lo + dilated_size(n, bd) + hi, (out - 1) * s + dilated_size(w, wd))


def window_geometry(shape, window, strides, padding, low=None, high=None, window_dilation=None,
                    base_dilation=None) -> list[tuple[int, int, int, int, int]]:
    """Per dimension of a ``reduce_window``: (low, high, output size, window dilation, base dilation)."""
    rank = len(shape)
    wd = window_dilation or (1,) * rank
    bd = base_dilation or (1,) * rank
    geometry = []
    for d, (n, w, s) in enumerate(zip(shape, window, strides)):
        dilated, reach = dilated_size(n, bd[d]), dilated_size(w, wd[d])
        if low is not None:
            lo, hi = low[d], high[d]
            if dilated + lo + hi < reach:
                raise InterpreterError(f"dimension {d}: the window exceeds the padded size")
            out = (dilated + lo + hi - reach) // s + 1
        else:
            lo, hi, out = window_padding(dilated, reach, s, padding)
        geometry.append((lo, hi, out, wd[d], bd[d]))
    return geometry


def window_counts(n: int, w: int, s: int, geometry: tuple[int, int, int, int, int]):
    """How many operand elements each window reads along one dimension (the divisor of ``mean``)."""
    lo, _, out, wd, bd = geometry
    dilated = dilated_size(n, bd)
    p = np.arange(out)[:, None] * s + np.arange(w)[None, :] * wd - lo
    return np.sum((p >= 0) & (p < dilated) & (p % bd == 0), axis=1)


def reduce_window(x, kind: int, window, strides, padding: int, **explicit):
    rank = x.ndim
    if len(window) != rank or len(strides) != rank:
        raise InterpreterError("window and strides need one entry per dimension")
    geometry = window_geometry(x.shape, window, strides, padding, **explicit)
    if any(out <= 0 for _, _, out, _, _ in geometry):  # no window at all (a zero-size input): nothing to reduce
        return np.empty(tuple(max(g[2], 0) for g in geometry), x.dtype)
    ident = identity(kind, x.dtype)
    padded_shape = [window_padded_extent(n, w, s, g) for n, w, s, g in zip(x.shape, window, strides, geometry)]
    xp = np.full(padded_shape, ident, dtype=x.dtype)
    xp[tuple(builtins.slice(lo, lo + dilated_size(n, bd), bd) for n, (lo, _, _, _, bd) in zip(x.shape, geometry))] = x
    reach = tuple(dilated_size(w, g[3]) for w, g in zip(window, geometry))
    views = sliding_window_view(xp, reach)
    views = views[tuple(builtins.slice(0, (out - 1) * s + 1, s) for (_, _, out, _, _), s in zip(geometry, strides))]
    views = views[(Ellipsis, *(builtins.slice(None, None, g[3]) for g in geometry))]
    axes = tuple(range(rank, 2 * rank))
    if kind != MEAN:
        return reduce_kernel(views, kind, axes)
    total = np.sum(views, axis=axes, dtype=x.dtype)
    count = np.ones((), dtype=np.int64)
    for d, (n, w, s, g) in enumerate(zip(x.shape, window, strides, geometry)):
        c = window_counts(n, w, s, g)
        count = count[..., None] * c if d else c
    with np.errstate(divide="ignore", invalid="ignore"):  # a window of padding only: 0 / 0
        return (total / count.astype(np.float64)).astype(x.dtype)


WINDOW_OPTIONS = ("low", "high", "window_dilation", "base_dilation")


@op("dlvm.reduce_window")
def _reduce_window(frame, node, args):
    kind = node.attr("kind")
    x = args[0]
    _check_kind(kind, x)
    kind = _bool_kind(kind, x)
    explicit = {name: node.attr(name) for name in WINDOW_OPTIONS if node.has_attr(name)}
    return int_semantics(
        lambda v: reduce_window(v, kind, node.attr("window"), node.attr("strides"), node.attr("padding"), **explicit)
    )(x)


@op("dlvm.softmax")
def _softmax(frame, node, args):
    x = args[0]
    axis = node.attr("axis")
    e = np.exp(x - np.max(x, axis=axis, keepdims=True, initial=-np.inf))
    return e / np.sum(e, axis=axis, keepdims=True, dtype=x.dtype)


@op("dlvm.log_softmax")
def _log_softmax(frame, node, args):
    x = args[0]
    axis = node.attr("axis")
    shifted = x - np.max(x, axis=axis, keepdims=True, initial=-np.inf)
    return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True, dtype=x.dtype))


# --------------------------------------------------------------------------
# convolution
# --------------------------------------------------------------------------


def convolve(x, k, strides=None, padding=None, lhs_dilation=None, rhs_dilation=None, groups=1):
    """XLA-style convolution: ``x`` N x C x spatial..., ``k`` O x C/groups x window..."""
    ns = x.ndim - 2
    strides = strides or (1,) * ns
    padding = padding or (0,) * (2 * ns)
    ld = lhs_dilation or (1,) * ns
    rd = rhs_dilation or (1,) * ns
    n, c = x.shape[:2]
    o, cg = k.shape[:2]
    if c % groups or o % groups or cg * groups != c:
        raise InterpreterError(f"channel mismatch: input {x.shape}, kernel {k.shape}, groups {groups}")
    spatial = x.shape[2:]
    window = k.shape[2:]
    # input (lhs) dilation: holes between input elements
    if any(d != 1 for d in ld):
        dil_shape = (n, c) + tuple(d * (s - 1) + 1 if s else 0 for d, s in zip(ld, spatial))
        xd = np.zeros(dil_shape, dtype=x.dtype)
        xd[(slice(None), slice(None)) + tuple(slice(None, None, d) for d in ld)] = x
        x = xd
    # low/high padding (negative padding crops)
    pos = [(0, 0), (0, 0)] + [(max(padding[2 * i], 0), max(padding[2 * i + 1], 0)) for i in range(ns)]
    if any(p != (0, 0) for p in pos):
        x = np.pad(x, pos)
    crop = (slice(None), slice(None)) + tuple(
        slice(max(-padding[2 * i], 0), x.shape[2 + i] - max(-padding[2 * i + 1], 0)) for i in range(ns)
    )
    x = x[crop]
    eff = tuple(d * (w - 1) + 1 if w else 0 for d, w in zip(rd, window))  # an empty window stays empty
    for i in range(ns):
        if eff[i] > x.shape[2 + i]:
            raise InterpreterError(f"spatial dimension {i}: dilated window {eff[i]} exceeds input {x.shape[2 + i]}")
    views = sliding_window_view(x, eff, axis=tuple(range(2, 2 + ns)))  # N, C, out'..., eff...
    views = views[(slice(None), slice(None)) + tuple(slice(None, None, s) for s in strides)
                  + tuple(slice(None, None, d) for d in rd)]  # N, C, out..., window...
    out_spatial = views.shape[2 : 2 + ns]
    og = o // groups
    wax = tuple(range(2 + ns, 2 + 2 * ns))
    parts = []
    for g in range(groups):
        vg = views[:, g * cg : (g + 1) * cg]
        kg = k[g * og : (g + 1) * og]
        # contract C/groups and the window: -> N, out..., O/groups
        r = np.tensordot(vg, kg, axes=((1,) + wax, (1,) + tuple(range(2, 2 + ns))))
        parts.append(np.moveaxis(r, -1, 1))
    out = np.concatenate(parts, axis=1) if groups > 1 else parts[0]
    return out.astype(x.dtype, copy=False).reshape((n, o) + out_spatial)


@op("dlvm.convolve")
def _convolve(frame, node, args):
    x, k = args

    def conv(a, b):
        return convolve(a, b, node.attr("strides"), node.attr("padding"), node.attr("lhs_dilation"),
                        node.attr("rhs_dilation"), node.attr("groups", 1))

    if x.dtype == np.bool_:  # i1: AND products, OR sum (as dot; the ODS description)
        return conv(x.astype(np.int64), k.astype(np.int64)) > 0
    return int_semantics(conv)(x, k)


# --------------------------------------------------------------------------
# literals, casts, random
# --------------------------------------------------------------------------


@op("dlvm.constant")
def _constant(frame, node, args):
    value = node.attr("value")
    if not isinstance(value, np.ndarray):
        raise node.error(f"unsupported literal attribute {node.raw_attr('value')}")
    return value


def cast_array(x, src, dst):
    """``dlvm.cast`` of ``x`` from ElementInfo ``src`` to ``dst`` (storage in, storage out)."""
    if dst.is_bool:
        return x != 0
    if src.is_bool:
        return np.asarray(x, dtype=bool).astype(dst.dtype)
    if dst.bf16 and x.dtype == np.float64:
        return round_bf16_from_f64(x)
    if src.is_float and not dst.is_float:
        if dst.dtype.kind == "u":
            return saturating_float_to_uint(x, dst.width).astype(dst.dtype)
        return saturating_float_to_int(x, dst.width).astype(np.int64 if dst.wrap else dst.dtype)
    return signed(x).astype(dst.dtype)


def saturating_float_to_int(x, width: int) -> np.ndarray:
    """trunc(x) clamped to the signed ``width``-bit range, NaN to 0, as int64."""
    t = np.trunc(np.asarray(x, dtype=np.float64))  # exact for every float type
    bound = float(2 ** (width - 1))  # exact; the range is [-bound, bound - 1]
    high, low, nan = t >= bound, t <= -bound, np.isnan(t)
    inside = np.where(high | low | nan, 0.0, t).astype(np.int64)
    r = np.where(high, np.int64(2 ** (width - 1) - 1), inside)
    return np.where(low, np.int64(-(2 ** (width - 1))), r)


def saturating_float_to_uint(x, width: int) -> np.ndarray:
    """trunc(x) clamped to [0, 2^width - 1], NaN to 0, as uint64."""
    t = np.trunc(np.asarray(x, dtype=np.float64))
    high, low = t >= float(2**width), ~(t > 0)  # NaN is not > 0: 0
    inside = np.where(high | low, 0.0, t).astype(np.uint64)
    return np.where(high, np.uint64(2**width - 1), inside)


@op("dlvm.cast")
def _cast(frame, node, args):
    return cast_array(args[0], node.operand_elem(0), node.result_elem())


_BITS = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}


def to_bits(x, elem) -> np.ndarray:
    """The bit patterns (unsigned ints) of ``x`` stored as ``elem``."""
    x = np.asarray(x)
    if elem.is_float:
        if elem.name == "bf16":
            return (round_bf16(x.astype(np.float32)).view(np.uint32) >> np.uint32(16)).astype(np.uint16)
        real = {"f16": np.float16, "f32": np.float32, "f64": np.float64}[elem.name]
        return x.astype(real).view(_BITS[elem.width])
    if elem.is_bool:
        return x.astype(np.uint8)
    if elem.wrap:
        return (x.astype(np.int64) & np.int64((1 << elem.width) - 1)).astype(np.uint64)
    return x.view(_BITS[elem.width])


def from_bits(bits, elem):
    bits = np.asarray(bits)
    if elem.is_float:
        if elem.name == "bf16":
            v = (bits.astype(np.uint32) << np.uint32(16)).view(np.float32)
        else:
            real = {"f16": np.float16, "f32": np.float32, "f64": np.float64}[elem.name]
            v = bits.astype(_BITS[elem.width]).view(real)
        return v.astype(elem.dtype)
    if elem.is_bool:
        return (bits & 1).astype(np.bool_)
    if elem.wrap:
        return wrap_int(bits.astype(np.int64), elem.width)
    return bits.astype(_BITS[elem.width]).view(elem.dtype)


@op("dlvm.bitcast")
def _bitcast(frame, node, args):
    src, dst = node.operand_elem(0), node.result_elem()
    if src.width != dst.width:
        raise InterpreterError(f"bitcast between widths {src.width} and {dst.width}")
    return from_bits(to_bits(args[0], src), dst)


@op("dlvm.random")
def _random(frame, node, args):
    elem = node.result_elem()

    def make():
        shape, low, high, seed = node.attr("shape"), node.attr("low"), node.attr("high"), node.attr("seed", 0)
        # The element type's own stream (also in float64 mode: the values a compiled program makes).
        return _readonly(np.asarray(random_uniform(shape, low, high, seed, elem.name), dtype=elem.dtype))

    return node.cached("random", make)


def _readonly(a):
    a.flags.writeable = False
    return a


__all__ = [
    "WINDOW_OPTIONS", "cast_array", "convolve", "from_bits", "reduce_window", "strided_slice", "to_bits",
    "dilated_size", "window_counts", "window_geometry", "window_padded_extent", "window_padding",
]
