"""``arith`` and ``math`` (scalars and tensors alike, elementwise)."""

from __future__ import annotations

import numpy as np

from . import special
from .core import int_semantics, op, round_bf16_from_f64, signed, unsigned
from .ops_dlvm import check_nonzero_divisor, from_bits, ieee_maximum, ieee_minimum, int_floor_div, int_trunc_div, to_bits

# --------------------------------------------------------------------------
# constants
# --------------------------------------------------------------------------


@op("arith.constant")
def _constant(frame, node, args):
    def make():
        value = node.attr("value")
        if isinstance(value, np.ndarray):
            return value
        return np.asarray(value)  # the coercer converts to the result type

    return node.cached("value", make)


@op("ub.poison")
def _poison(frame, node, args):
    info = node.result_info()
    if info.kind == "tensor":
        return np.zeros([max(d, 0) for d in info.shape], dtype=info.elem.dtype)
    if info.kind == "scalar":
        return info.elem.dtype.type(0)
    raise node.error(f"poison of type {info.mlir_type} is not supported")


# --------------------------------------------------------------------------
# binary ops
# --------------------------------------------------------------------------


def _simple(fn):
    def handler(frame, node, args):
        return fn(*args)

    return handler


def _signed_int(fn):
    kernel = int_semantics(fn)

    def handler(frame, node, args):
        return kernel(*args)

    return handler


def _unsigned_int(fn):
    """An integer op reading its operands as unsigned (the coercer wraps the result back)."""

    def handler(frame, node, args):
        elem = node.operand_elem(0)
        r = fn(*(unsigned(a, elem) for a in args))
        if elem.is_bool:
            return (np.asarray(r) & 1).astype(np.bool_)
        return np.asarray(r).astype(elem.dtype) if not elem.wrap else np.asarray(r).astype(np.int64)

    return handler


def _ceil_div(x, y):
    check_nonzero_divisor(y)
    q = np.floor_divide(x, y)
    return q + (x - q * y != 0).astype(q.dtype)


def _rem_signed(x, y):
    check_nonzero_divisor(y)
    return np.fmod(x, y)


def _div_unsigned(x, y):
    check_nonzero_divisor(y)
    return np.floor_divide(x, y)


def _rem_unsigned(x, y):
    check_nonzero_divisor(y)
    return np.mod(x, y)


def _shift_left(x, y):
    return np.left_shift(x, y.astype(x.dtype) if hasattr(y, "astype") else y)


def _shift_right(x, y):
    return np.right_shift(x, y.astype(x.dtype) if hasattr(y, "astype") else y)


for _name, _fn in {
    "arith.addf": np.add,
    "arith.subf": np.subtract,
    "arith.mulf": np.multiply,
    "arith.divf": np.divide,
    "arith.remf": np.fmod,
    "arith.maximumf": ieee_maximum,
    "arith.minimumf": ieee_minimum,
    "arith.maxnumf": np.fmax,
    "arith.minnumf": np.fmin,
    "arith.negf": np.negative,
    "arith.andi": np.bitwise_and,
    "arith.ori": np.bitwise_or,
    "arith.xori": np.bitwise_xor,
    "math.atan2": np.arctan2,
    "math.powf": np.power,
    "math.copysign": np.copysign,
}.items():
    op(_name)(_simple(_fn))

for _name, _fn in {
    "arith.addi": np.add,
    "arith.subi": np.subtract,
    "arith.muli": np.multiply,
    "arith.divsi": int_trunc_div,
    "arith.remsi": _rem_signed,
    "arith.floordivsi": int_floor_div,
    "arith.ceildivsi": _ceil_div,
    "arith.maxsi": np.maximum,
    "arith.minsi": np.minimum,
    "arith.shli": _shift_left,
    "arith.shrsi": _shift_right,
}.items():
    op(_name)(_signed_int(_fn))

for _name, _fn in {
    "arith.divui": _div_unsigned,
    "arith.remui": _rem_unsigned,
    "arith.ceildivui": _ceil_div,
    "arith.maxui": np.maximum,
    "arith.minui": np.minimum,
    "arith.shrui": _shift_right,
}.items():
    op(_name)(_unsigned_int(_fn))


# --------------------------------------------------------------------------
# comparisons and select
# --------------------------------------------------------------------------


def _ordered(x, y):
    return ~(np.isnan(x) | np.isnan(y))


_CMPF = {
    0: lambda x, y: np.zeros(np.broadcast(x, y).shape, dtype=np.bool_),
    1: lambda x, y: x == y,
    2: lambda x, y: x > y,
    3: lambda x, y: x >= y,
    4: lambda x, y: x < y,
    5: lambda x, y: x <= y,
    6: lambda x, y: (x != y) & _ordered(x, y),
    7: _ordered,
    8: lambda x, y: ~((x != y) & _ordered(x, y)),
    9: lambda x, y: ~(x <= y),
    10: lambda x, y: ~(x < y),
    11: lambda x, y: ~(x >= y),
    12: lambda x, y: ~(x > y),
    13: lambda x, y: x != y,
    14: lambda x, y: ~_ordered(x, y),
    15: lambda x, y: np.ones(np.broadcast(x, y).shape, dtype=np.bool_),
}


@op("arith.cmpf")
def _cmpf(frame, node, args):
    x, y = args
    return _CMPF[node.attr("predicate")](x, y)


_CMPI = (np.equal, np.not_equal, np.less, np.less_equal, np.greater, np.greater_equal,
         np.less, np.less_equal, np.greater, np.greater_equal)


@op("arith.cmpi")
def _cmpi(frame, node, args):
    x, y = args
    p = node.attr("predicate")
    if p >= 6:
        elem = node.operand_elem(0)
        x, y = unsigned(x, elem), unsigned(y, elem)
    else:
        x, y = signed(x), signed(y)
    return _CMPI[p](x, y)


@op("arith.select")
def _select(frame, node, args):
    c, a, b = args
    if np.ndim(c) == 0:
        return a if bool(c) else b
    return np.where(c, a, b)


# --------------------------------------------------------------------------
# casts
# --------------------------------------------------------------------------


def _to_float(fn):
    def handler(frame, node, args):
        dst = node.result_elem()
        v = fn(node, args[0])
        if dst.bf16 and np.asarray(v).dtype == np.float64:
            return round_bf16_from_f64(v)
        return np.asarray(v).astype(dst.dtype)

    return handler


@op("arith.sitofp")
@_to_float
def _sitofp(node, x):
    return signed(x)


@op("arith.uitofp")
@_to_float
def _uitofp(node, x):
    return unsigned(x, node.operand_elem(0))


@op("arith.extf", "arith.truncf")
@_to_float
def _fpcast(node, x):
    return x


def _to_int(fn):
    def handler(frame, node, args):
        dst = node.result_elem()
        v = np.asarray(fn(node, args[0]))
        if dst.is_bool:
            return (v.astype(np.int64) & 1).astype(np.bool_)
        return v.astype(np.int64 if dst.wrap else dst.dtype)

    return handler


@op("arith.extsi", "arith.trunci", "arith.index_cast")
@_to_int
def _int_cast(node, x):
    return signed(x)


@op("arith.extui", "arith.index_castui")
@_to_int
def _uint_cast(node, x):
    return unsigned(x, node.operand_elem(0))


@op("arith.fptosi")
@_to_int
def _fptosi(node, x):
    return np.trunc(x).astype(np.int64)


@op("arith.fptoui")
@_to_int
def _fptoui(node, x):
    return np.trunc(x).astype(np.uint64).astype(np.int64)


@op("arith.bitcast")
def _bitcast(frame, node, args):
    return from_bits(to_bits(args[0], node.operand_elem(0)), node.result_elem())


# --------------------------------------------------------------------------
# math
# --------------------------------------------------------------------------


def _rsqrt(x):
    return np.asarray(x).dtype.type(1) / np.sqrt(x)


def _same_dtype(fn):
    def handler(frame, node, args):
        x = args[0]
        return np.asarray(fn(x)).astype(np.asarray(x).dtype)

    return handler


for _name, _fn in {
    "math.exp": np.exp,
    "math.exp2": np.exp2,
    "math.expm1": np.expm1,
    "math.log": np.log,
    "math.log2": np.log2,
    "math.log10": np.log10,
    "math.log1p": np.log1p,
    "math.sqrt": np.sqrt,
    "math.rsqrt": _rsqrt,
    "math.cbrt": np.cbrt,
    "math.sin": np.sin,
    "math.cos": np.cos,
    "math.tan": np.tan,
    "math.asin": np.arcsin,
    "math.acos": np.arccos,
    "math.atan": np.arctan,
    "math.sinh": np.sinh,
    "math.cosh": np.cosh,
    "math.tanh": np.tanh,
    "math.asinh": np.arcsinh,
    "math.acosh": np.arccosh,
    "math.atanh": np.arctanh,
    "math.floor": np.floor,
    "math.ceil": np.ceil,
    "math.trunc": np.trunc,
    "math.round": special.round_half_away,
    "math.roundeven": np.rint,
    "math.absf": np.abs,
    "math.erf": special.erf,
    "math.erfc": special.erfc,
}.items():
    op(_name)(_same_dtype(_fn))

for _name, _fn in {
    "math.isnan": np.isnan,
    "math.isinf": np.isinf,
    "math.isfinite": np.isfinite,
}.items():
    op(_name)(_simple(_fn))


@op("math.absi")
def _absi(frame, node, args):
    x = args[0]
    return x if x.dtype == np.bool_ else np.abs(x)


@op("math.fma")
def _fma(frame, node, args):
    a, b, c = args
    return a * b + c


@op("math.fpowi")
def _fpowi(frame, node, args):
    x, n = args
    return np.power(x, signed(n).astype(np.asarray(x).dtype))


def _ipow(x, n):
    x, n = np.broadcast_arrays(np.asarray(x), np.asarray(n))
    result = np.ones_like(x)
    base = x.copy()
    e = n.copy()
    neg = e < 0
    e = np.where(neg, 0, e)
    while np.any(e > 0):
        odd = (e & 1) == 1
        result = np.where(odd, result * base, result)
        base = base * base
        e = e >> 1
    # negative exponents: 1 ** n = 1, (-1) ** n = +-1, otherwise 0 (integer division)
    neg_val = np.where(x == 1, 1, np.where(x == -1, np.where(n % 2 == 0, 1, -1), 0)).astype(x.dtype)
    out = np.where(neg, neg_val, result)
    return out


op("math.ipowi")(_signed_int(_ipow))


@op("math.ctpop")
def _ctpop(frame, node, args):
    elem = node.operand_elem(0)
    bits = to_bits(args[0], elem).astype(np.uint64)
    count = np.zeros(bits.shape, dtype=np.int64)
    for _ in range(elem.width):
        count += (bits & np.uint64(1)).astype(np.int64)
        bits = bits >> np.uint64(1)
    return count.astype(elem.dtype) if not elem.is_bool else count.astype(np.bool_)

