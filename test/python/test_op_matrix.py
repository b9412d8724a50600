"""The op matrix: every dlvm op x its element types x shapes on both sides of
each CPU back-end threshold, compiled vs interpreter vs an independent float64
numpy reference, forward and in both derivative modes.

Thresholds crossed (python/dlvm_mlir/backend/, AVX-512 host; AVX2 halves the widths):

- register tile of a generic op: 4 vectors (64 f32 / 32 f64 elements), vector
  width 16 f32 / 8 f64 lanes, remainders peeled (7, 33, 65, 1000, 131073 elements);
- contraction register tile 6 x 4 vectors x 8 (6x64x8 f32, 6x32x8 f64), cache
  tile 96 x 128 x 128, both sides and odd sizes;
- thread split: generic ops from 2^14 iterations (127x129 below, 128x129 above),
  contractions from 2^17 multiply-adds;
- reduction split: full reductions from 2^15 iterations, into 2-4 partials
  that divide the count (32767 below, 32768, 131073 = 3 x 43691; 131071 is prime);
- packing of B: rows a multiple of 4 KiB with m >= 128 (f32 n = 1024, f64
  n = 512), 1-2 KiB with m, k >= 256, and every transposed B;
- rank 0 and size-1 dimensions everywhere.

Test ids are ``op-dtype-shapes-mode`` (shapes of the arguments joined by ``_``;
``s`` is rank 0).  Modes: ``fwd`` (compiled, interpreter and reference),
``vjp`` / ``jvp`` (compiled vs interpreted float64 derivative of the same
synthesized function), ``fd`` (synthesized derivatives vs finite differences).
The machinery is in ``opmatrix.py``.  ``known`` names the issue-13 item (or
the new finding) a case exercises; its failure message starts with it.
Cases that abort the process run in child processes (``test_op_isolated``:
large ``dlvm.reverse``, item 1; bf16 vector reductions, which LLVM cannot
legalize); cases that used to abort (derivatives of convolve, scan and
``reduce mul``, which emit ``dlvm.reverse``) run last.

Cost: about 2,100 functions compiled in ~150 modules; about 125 s of CPU
with a cold disk cache on the 2-core Zen 4 (much less with a warm one).
Derivative modes are checked at a few shapes per op, the largest shapes
for a spread of the ops (``LARGE_UNARY``, ``LARGE_BINARY``, ...).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import pytest

from opmatrix import (
    EPS,
    FLOATS,
    NUMPY,
    Arg,
    Case,
    away_from_int,
    away_from_zero,
    bools,
    distinct,
    ints,
    normal,
    run_isolated,
    shape_id,
    run_mode,
    special_floats,
    special_ints,
    tiled,
    ttype,
    uniform,
)

# --------------------------------------------------------------------------
# independent references (float64)
# --------------------------------------------------------------------------


def _lgamma1(x: float) -> float:
    try:
        return math.lgamma(x)
    except (ValueError, OverflowError):
        return math.inf


_erf = np.vectorize(math.erf, otypes=[np.float64])
_erfc = np.vectorize(math.erfc, otypes=[np.float64])
_lgamma = np.vectorize(_lgamma1, otypes=[np.float64])

# B2k / (2k) for the asymptotic series of digamma
_DIGAMMA_SERIES = [1 / 12, -1 / 120, 1 / 252, -1 / 240, 1 / 132, -691 / 32760, 1 / 12, -3617 / 8160]


def _digamma1(x: float) -> float:
    if math.isnan(x) or x == -math.inf:
        return math.nan
    if x == math.inf:
        return math.inf
    if x <= 0 and x == math.floor(x):
        return math.nan
    if x < 0.5:
        return _digamma1(1.0 - x) - math.pi / math.tan(math.pi * x)
    acc = 0.0
    while x < 12.0:
        acc -= 1.0 / x
        x += 1.0
    inv2 = 1.0 / (x * x)
    series, power = 0.0, inv2
    for c in _DIGAMMA_SERIES:
        series += c * power
        power *= inv2
    return acc + math.log(x) - 0.5 / x - series


_digamma = np.vectorize(_digamma1, otypes=[np.float64])


def _round_half_away(x):
    t = np.trunc(x)
    return np.copysign(t + np.where(np.abs(x - t) >= 0.5, np.sign(x), 0.0), x)


def _errstate(fn):
    def wrapped(*args):
        with np.errstate(all="ignore"):
            return fn(*args)

    return wrapped


UNARY_FLOAT = {
    # op: (sampler, reference)
    "neg": (normal(2), np.negative),
    "exp": (uniform(-5, 5), np.exp),
    "log": (uniform(0.01, 10), np.log),
    "tanh": (uniform(-5, 5), np.tanh),
    "sigmoid": (uniform(-8, 8), lambda x: 1.0 / (1.0 + np.exp(-x))),
    "relu": (away_from_zero(0.1, 3), lambda x: np.maximum(x, 0.0)),
    "sqrt": (uniform(0.01, 10), np.sqrt),
    "rsqrt": (uniform(0.01, 10), lambda x: 1.0 / np.sqrt(x)),
    "square": (normal(2), np.square),
    "sign": (away_from_zero(0.1, 3), np.sign),
    "abs": (away_from_zero(0.1, 3), np.abs),
    "sin": (uniform(-6, 6), np.sin),
    "cos": (uniform(-6, 6), np.cos),
    "tan": (uniform(-1.3, 1.3), np.tan),
    "asin": (uniform(-0.95, 0.95), np.arcsin),
    "acos": (uniform(-0.95, 0.95), np.arccos),
    "atan": (normal(3), np.arctan),
    "sinh": (uniform(-5, 5), np.sinh),
    "cosh": (uniform(-5, 5), np.cosh),
    "floor": (away_from_int(-10, 10), np.floor),
    "ceil": (away_from_int(-10, 10), np.ceil),
    "round": (away_from_int(-10, 10), _round_half_away),
    "rint": (away_from_int(-10, 10), np.rint),
    "erf": (uniform(-3, 3), _erf),
    "erfc": (uniform(-3, 3), _erfc),
    "lgamma": (uniform(0.1, 8), _lgamma),
    "digamma": (uniform(0.1, 8), _digamma),
    "log1p": (uniform(-0.9, 5), np.log1p),
    "expm1": (uniform(-3, 3), np.expm1),
    "asinh": (normal(3), np.arcsinh),
    "acosh": (uniform(1.05, 10), np.arccosh),
    "atanh": (uniform(-0.95, 0.95), np.arctanh),
    "exp2": (uniform(-8, 8), np.exp2),
    "log2": (uniform(0.01, 10), np.log2),
    "log10": (uniform(0.01, 10), np.log10),
    "cbrt": (away_from_zero(0.05, 8), np.cbrt),
}

#: absolute error allowed around zeros of the result (relative to 1): functions
#: whose zero is not at x = 0 lose relative accuracy there in every libm
UNARY_ATOL = {"f32": 2.0**-24, "f64": 2.0**-52, "f16": 2.0**-11, "bf16": 2.0**-8}
ZERO_CROSSING = {"sin", "cos", "tan", "log", "lgamma", "digamma", "acos", "erfc", "cosh", "log2", "log10", "acosh"}


def _int_sign(x):
    return np.sign(x).astype(x.dtype)


UNARY_INT = {
    "neg": lambda x: (-x.astype(np.int64)).astype(x.dtype) if x.dtype != np.bool_ else x,
    "relu": lambda x: np.maximum(x, 0).astype(x.dtype) if x.dtype != np.bool_ else x,
    "square": lambda x: (x.astype(np.int64) * x.astype(np.int64)).astype(x.dtype) if x.dtype != np.bool_ else x,
    "sign": lambda x: _int_sign(x) if x.dtype != np.bool_ else x,
    "abs": lambda x: np.abs(x.astype(np.int64)).astype(x.dtype) if x.dtype != np.bool_ else x,
    "not": lambda x: ~x,
    "popcount": lambda x: x if x.dtype == np.bool_ else np.bitwise_count(
        x.view(np.dtype(f"u{x.dtype.itemsize}"))).astype(x.dtype),
}

# --------------------------------------------------------------------------
# case builders
# --------------------------------------------------------------------------

#: (shape, modes, ops): derivatives at a few shapes only (each mode is one more function to compile)
UNARY_PLAN = {
    "f32": [((), "fwd vjp jvp", None), ((7,), "fwd vjp jvp", None), ((1, 65), "fwd", None), ((33, 65), "fwd vjp", None),
            ((128, 129), "fwd", "LARGE"), ((131073,), "fwd", "LARGE"), ((131073,), "fwd vjp", "DERIV")],
    "f64": [((), "fwd fd", None), ((33,), "fwd vjp jvp fd", None), ((65, 1), "fwd", "UNIT"), ((127, 129), "fwd", "LARGE"),
            ((16384,), "fwd vjp", "DERIV")],
}
#: the ops run at the largest shapes (a spread over the lowering patterns: polynomial
#: approximations, libm calls, selects, rounding)
LARGE_UNARY = ["neg", "exp", "log", "tanh", "relu", "abs", "sin", "floor", "round", "erf", "lgamma", "log1p", "expm1",
               "rsqrt"]
DERIV_UNARY = ["sigmoid", "sqrt", "atan", "cosh"]
#: at N x 1 shapes: a tile of N x 1 is unrolled into N one-element vectors, so the large
#: inline expansions (lgamma, digamma) take seconds to compile there
UNIT_UNARY = ["neg", "exp", "log", "relu", "sqrt", "floor", "round", "erf", "tanh", "sin"]
LARGE = 100_000


def _size(shape) -> int:
    return math.prod(shape)


def _fd_ok(dtype: str, shapes) -> bool:
    return dtype == "f64" and sum(_size(s) for s in shapes) <= 64


def modes(spec: str, dtype: str, shapes) -> tuple[str, ...]:
    """The modes named in ``spec`` that apply: derivatives of float cases only, ``fd`` for small float64 ones."""
    words = spec.split()
    if dtype not in FLOATS:
        return ("fwd",)
    return tuple(w for w in words if w != "fd" or _fd_ok(dtype, shapes))


def unary_case(op: str, dtype: str, dims, sample=None, ref=None, **kw) -> Case:
    if dtype in INT_TYPES:
        t = ttype(dims, dtype)
        return Case(op, dtype, [Arg(dims, dtype, sample)], f"%r = dlvm.{op} %a0 : {t}", dims, dtype,
                    UNARY_INT[op], family="unary", **kw)
    sample = sample or UNARY_FLOAT[op][0]
    ref = ref or UNARY_FLOAT[op][1]
    atol = UNARY_ATOL[dtype] * (8 if op in ZERO_CROSSING else 0)
    kw.setdefault("modes", modes("fwd vjp jvp fd", dtype, [dims]))
    kw.setdefault("atol", atol)
    if dtype == "bf16":
        t32, t16 = ttype(dims, "f32"), ttype(dims, "bf16")
        body = f"""%b = dlvm.cast %a0 to bf16 : {t32}
                   %y = dlvm.{op} %b : {t16}
                   %r = dlvm.cast %y to f32 : {t16}"""
        return Case(op, dtype, [Arg(dims, "f32", _bf16(sample))], body, dims, "f32", _errstate(ref), family="unary", **kw)
    t = ttype(dims, dtype)
    return Case(op, dtype, [Arg(dims, dtype, sample)], f"%r = dlvm.{op} %a0 : {t}", dims, dtype, _errstate(ref),
                family="unary", **kw)


def _bf16(sample):
    def rounded(rng, shape):
        x = np.asarray(sample(rng, shape), dtype=np.float32)
        bits = x.view(np.uint32).astype(np.uint64)
        bits = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
        return bits.astype(np.uint32).view(np.float32)

    return rounded


def _round_bf16(x):
    """float64 values rounded once to the nearest bf16 (ties to even)."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(all="ignore"):
        _, e = np.frexp(x)
        quantum = np.ldexp(1.0, np.maximum(e - 8, -133))
        r = np.rint(x / quantum) * quantum
        r = np.where(np.isfinite(x), r, x)
        return np.where(np.abs(r) >= 2.0**128, np.copysign(np.inf, x), r)


INT_TYPES = ("i1", "i8", "i16", "i32", "i64")


def unary_cases() -> list[Case]:
    cases = []
    for dtype, plan in UNARY_PLAN.items():
        for shape, spec, subset in plan:
            ops = {"LARGE": LARGE_UNARY, "DERIV": DERIV_UNARY, "UNIT": UNIT_UNARY, None: list(UNARY_FLOAT)}[subset]
            for op in ops:
                cases.append(unary_case(op, dtype, shape, modes=modes(spec, dtype, [shape])))
    for shape, spec in (((33,), "fwd vjp"), ((1, 65), "fwd")):
        for op in ("neg", "exp", "log", "tanh", "sigmoid", "relu", "sqrt", "abs", "sin", "floor", "erf"):
            cases.append(unary_case(op, "f16", shape, modes=modes(spec, "f16", [shape])))
        for op in ("neg", "exp", "log", "tanh", "sigmoid", "relu", "sqrt", "abs", "rsqrt"):
            cases.append(unary_case(op, "bf16", shape, modes=modes(spec, "bf16", [shape])))
    int_shapes = {"i32": [(), (33, 65), (131073,)], "i64": [(1000,)], "i8": [(1, 65)], "i16": [(65,)], "i1": [(33,)]}
    for dtype, shapes in int_shapes.items():
        for shape in shapes:
            for op in UNARY_INT:
                sample = bools() if dtype == "i1" else ints(-1000, 1000)
                cases.append(unary_case(op, dtype, shape, sample=sample,
                                        known="13.4 (i1 order)" if dtype == "i1" and op == "relu" else ""))
    # special values: every float unary op (f32, f64), and the integer edge values
    for dtype in ("f32", "f64"):
        for op, (_, ref) in UNARY_FLOAT.items():
            if op == "digamma":
                continue
            values = special_floats(dtype)
            cases.append(unary_case(op, dtype, (values.size,), sample=tiled(values), modes=("fwd",),
                                    module=f"unary-special-{dtype}", shape="special",
                                    signed_zeros=op in SIGNED_ZERO,
                                    known="13.5 (lgamma/expm1/log1p)" if op in ("lgamma", "expm1", "log1p") else ""))
        # accuracy near 0 (the reason log1p and expm1 exist) and lgamma far out
        tiny = np.array([1e-10, -1e-10, 1e-7, -3e-6, 1e-20, -1e-30, 2e-4, -0.0, 0.0])
        for op in ("log1p", "expm1"):
            cases.append(unary_case(op, dtype, (tiny.size,), sample=tiled(tiny), modes=("fwd",), shape="tiny",
                                    module=f"unary-special-{dtype}", signed_zeros=True, known="13.5 (accuracy)"))
        far = np.array([-1e38, -1e30, -2.5e7 - 0.5, 1e30, 3e38 if dtype == "f32" else 1e300, -0.5, -1.5, -2.5, -4.3])
        cases.append(unary_case("lgamma", dtype, (far.size,), sample=tiled(far), modes=("fwd",), shape="far",
                                module=f"unary-special-{dtype}", known="13.5 (lgamma)"))
        neg = away_from_int(-6, -0.1, gap=0.1)
        for op in ("lgamma", "digamma"):
            cases.append(unary_case(op, dtype, (33,), sample=neg, shape="negative",
                                    module=f"unary-negative-{dtype}", modes=modes("fwd vjp", dtype, [(33,)])))
        halves = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.5, -4.5, 0.49999997, -0.49999997, 1e7 + 0.5])
        for op in ("round", "rint", "floor", "ceil"):
            cases.append(unary_case(op, dtype, (halves.size,), sample=tiled(halves), modes=("fwd",), shape="halves",
                                    module=f"unary-special-{dtype}", signed_zeros=True))
    for dtype in ("i8", "i32", "i64"):
        values = special_ints(dtype)
        for op in UNARY_INT:
            cases.append(unary_case(op, dtype, (values.size,), sample=tiled(values), shape="edge",
                                    module=f"unary-edge-{dtype}"))
    return cases


SIGNED_ZERO = {"neg", "abs", "sqrt", "floor", "ceil", "round", "rint", "sin", "tan", "asin", "atan", "sinh", "tanh",
               "erf", "expm1", "log1p", "square", "asinh", "atanh", "cbrt"}


# ----- binary ---------------------------------------------------------------


def _broadcast(*shapes):
    nonscalar = [s for s in shapes if s]
    if not nonscalar:
        return ()
    return tuple(max(dims) for dims in zip(*nonscalar))


def _native(fn, dtype):
    """Apply ``fn`` in the case's own float type (for floor/trunc of a rounded quotient)."""
    real = NUMPY["f32" if dtype == "bf16" else dtype]

    def ref(x, y):
        with np.errstate(all="ignore"):
            return fn(x.astype(real), y.astype(real)).astype(np.float64)

    return ref


def _fmod_floored(x, y):
    r = np.fmod(x, y)
    return np.where((r != 0) & ((r < 0) != (y < 0)), r + y, r)


def _float_binary(dtype):
    return {
        "add": ((normal(), normal()), np.add),
        "sub": ((normal(), normal()), np.subtract),
        "mul": ((normal(), normal()), np.multiply),
        "div": ((normal(), away_from_zero(0.5, 3)), np.divide),
        "pow": ((uniform(0.1, 4), normal(1.5)), np.power),
        "min": ((normal(), normal()), np.minimum),
        "max": ((normal(), normal()), np.maximum),
        "mod": ((normal(5), away_from_zero(0.5, 3)), _fmod_floored),
        "floor_div": ((normal(5), away_from_zero(0.5, 3)), _native(lambda x, y: np.floor(x / y), dtype)),
        "trunc_div": ((normal(5), away_from_zero(0.5, 3)), _native(lambda x, y: np.trunc(x / y), dtype)),
        "rem": ((normal(5), away_from_zero(0.5, 3)), np.fmod),
        "atan2": ((normal(), normal()), np.arctan2),
    }


def _trunc_div64(x, y):
    """Division rounded toward zero of int64 arrays (y != 0; MIN / -1 wraps)."""
    with np.errstate(all="ignore"):
        q = np.floor_divide(x, y)
        r = x - q * y
    return q + ((r != 0) & ((x < 0) != (y < 0)))


def _trunc_div_int(x, y):
    return _trunc_div64(x.astype(np.int64), y.astype(np.int64)).astype(np.result_type(x, y))


def _floor_div_int(x, y):
    return np.floor_divide(x.astype(np.int64), y.astype(np.int64)).astype(np.result_type(x, y))


def _mod_int(x, y):
    return np.mod(x.astype(np.int64), y.astype(np.int64)).astype(np.result_type(x, y))


def _rem_int(x, y):
    return np.fmod(x.astype(np.int64), y.astype(np.int64)).astype(np.result_type(x, y))


def _shift(kind):
    """XLA's shifts of x by y read as unsigned: the bit width or more shifts every bit out."""

    def ref(x, y):
        dtype = np.result_type(x, y)
        width = 8 * dtype.itemsize
        unsigned = np.dtype(f"u{dtype.itemsize}")
        xs, ys = np.broadcast_arrays(x.astype(dtype), y.astype(dtype))
        amount = ys.astype(unsigned).astype(object).ravel()
        out = []
        for a, n in zip(xs.astype(object).ravel(), amount):
            bits = int(a) % (1 << width)
            if kind == "left":
                v = 0 if n >= width else (bits << n) % (1 << width)
            elif kind == "right_logical":
                v = 0 if n >= width else bits >> n
            else:
                v = (int(a) >> min(n, width - 1)) % (1 << width)
            out.append(v)
        return np.array(out, dtype=np.uint64).astype(unsigned).view(dtype).reshape(xs.shape)

    return ref


def _wrap(fn):
    def ref(x, y):
        out_type = np.result_type(x, y)
        with np.errstate(all="ignore"):
            return fn(x.astype(np.int64), y.astype(np.int64)).astype(out_type)

    return ref


INT_BINARY = {
    "add": ((ints(-1000, 1000), ints(-1000, 1000)), _wrap(np.add)),
    "sub": ((ints(-1000, 1000), ints(-1000, 1000)), _wrap(np.subtract)),
    "mul": ((ints(-1000, 1000), ints(-1000, 1000)), _wrap(np.multiply)),
    "div": ((ints(-1000, 1000), ints(-20, 20, nonzero=True)), _trunc_div_int),
    "trunc_div": ((ints(-1000, 1000), ints(-20, 20, nonzero=True)), _trunc_div_int),
    "floor_div": ((ints(-1000, 1000), ints(-20, 20, nonzero=True)), _floor_div_int),
    "mod": ((ints(-1000, 1000), ints(-20, 20, nonzero=True)), _mod_int),
    "min": ((ints(-1000, 1000), ints(-1000, 1000)), np.minimum),
    "max": ((ints(-1000, 1000), ints(-1000, 1000)), np.maximum),
    "and": ((ints(-(2**40), 2**40), ints(-(2**40), 2**40)), np.bitwise_and),
    "or": ((ints(-(2**40), 2**40), ints(-(2**40), 2**40)), np.bitwise_or),
    "xor": ((ints(-(2**40), 2**40), ints(-(2**40), 2**40)), np.bitwise_xor),
    "rem": ((ints(-1000, 1000), ints(-20, 20, nonzero=True)), _rem_int),
    "shift_left": ((ints(-1000, 1000), ints(0, 70)), _shift("left")),
    "shift_right_logical": ((ints(-1000, 1000), ints(0, 70)), _shift("right_logical")),
    "shift_right_arithmetic": ((ints(-1000, 1000), ints(0, 70)), _shift("right_arithmetic")),
}

BOOL_BINARY = {
    "and": np.logical_and,
    "or": np.logical_or,
    "add": np.logical_xor,
    "sub": np.logical_xor,
    "mul": np.logical_and,
    "min": np.logical_and,  # false < true
    "max": np.logical_or,
    "xor": np.logical_xor,
    "rem": lambda x, y: x & ~y,
    "shift_left": lambda x, y: x & ~y,
    "shift_right_logical": lambda x, y: x & ~y,
    "shift_right_arithmetic": lambda x, y: x | np.zeros_like(y),  # the sign fills
}


def binary_case(op, dtype, lhs, rhs, samplers, ref, **kw) -> Case:
    out = _broadcast(lhs, rhs)
    if dtype == "bf16":
        tl, tr = ttype(lhs, "f32"), ttype(rhs, "f32")
        bl, br, bo = ttype(lhs, "bf16"), ttype(rhs, "bf16"), ttype(out, "bf16")
        body = f"""%x = dlvm.cast %a0 to bf16 : {tl}
                   %y = dlvm.cast %a1 to bf16 : {tr}
                   %z = dlvm.{op} %x, %y : {bl}, {br}
                   %r = dlvm.cast %z to f32 : {bo}"""
        args = [Arg(lhs, "f32", _bf16(samplers[0])), Arg(rhs, "f32", _bf16(samplers[1]))]
        return Case(op, dtype, args, body, out, "f32", ref, family="binary", **kw)
    tl, tr = ttype(lhs, dtype), ttype(rhs, dtype)
    args = [Arg(lhs, dtype, samplers[0]), Arg(rhs, dtype, samplers[1])]
    return Case(op, dtype, args, f"%r = dlvm.{op} %a0, %a1 : {tl}, {tr}", out, dtype, ref, family="binary", **kw)


#: (lhs, rhs, modes, large: only a spread of the ops)
BINARY_PLAN = {
    "f32": [((), (), "fwd vjp jvp"), ((7,), (7,), "fwd"), ((), (33,), "fwd vjp"), ((33, 65), (33, 65), "fwd"),
            ((33, 1), (1, 65), "fwd vjp jvp"), ((128, 129), (1, 129), "fwd vjp"), ((131073,), (), "fwd")],
    "f64": [((33,), (), "fwd vjp jvp fd"), ((1, 65), (33, 65), "fwd vjp"), ((65, 1), (65, 1), "fwd"),
            ((3, 1, 5), (1, 4, 5), "fwd jvp fd"), ((127, 129), (127, 129), "fwd")],
}
LARGE_BINARY = ("add", "div", "pow", "max", "mod", "floor_div")


def binary_cases() -> list[Case]:
    cases = []
    for dtype, plan in BINARY_PLAN.items():
        table = _float_binary(dtype)
        for lhs, rhs, spec in plan:
            big = _size(_broadcast(lhs, rhs)) >= 16384
            for op, (samplers, ref) in table.items():
                if big and op not in LARGE_BINARY:
                    continue
                mode_spec = spec if not big or op in ("add", "mul", "div", "max") else "fwd"
                cases.append(binary_case(op, dtype, lhs, rhs, samplers, _errstate(ref),
                                         modes=modes(mode_spec, dtype, [lhs, rhs]),
                                         atol=EPS[dtype] if op in ("sub", "add", "mod") else 0.0))
    for dtype in ("f16", "bf16"):
        table = _float_binary(dtype)
        for lhs, rhs in (((33,), (33,)), ((1, 65), (33, 1))):
            for op in ("add", "sub", "mul", "div", "max", "pow"):
                samplers, ref = table[op]
                atol = 4 * EPS[dtype] if op in ("add", "sub") else 0.0
                if dtype == "bf16" and lhs != rhs and op not in ("add", "max"):
                    cases.append(binary_case(op, dtype, lhs, rhs, samplers, _errstate(ref), modes=("fwd",), atol=atol))
                    continue
                if dtype == "bf16" and lhs != rhs:
                    # the gradient sums a bf16 tensor over both broadcast dimensions: LLVM aborted on the
                    # vector.reduction of vector<65xbf16> ("Do not know how to soft promote this operator's operand")
                    cases.append(binary_case(op, dtype, lhs, rhs, samplers, _errstate(ref), modes=("fwd",), atol=atol))
                    cases.append(binary_case(op, dtype, lhs, rhs, samplers, _errstate(ref), modes=("vjp",), atol=atol,
                                             isolate=True, module="binary-bf16-grad", known=BF16_REDUCTION))
                    continue
                cases.append(binary_case(op, dtype, lhs, rhs, samplers, _errstate(ref), modes=("fwd", "vjp"), atol=atol))
    int_shapes = {
        "i32": [((), ()), ((33, 65), (33, 1)), ((131073,), (131073,))],
        "i64": [((1, 65), ())],
        "i8": [((1, 65), (33, 65))],
        "i16": [((33,), (33,))],
    }
    for dtype, pairs in int_shapes.items():
        for lhs, rhs in pairs:
            for op, (samplers, ref) in INT_BINARY.items():
                cases.append(binary_case(op, dtype, lhs, rhs, samplers, ref))
    for lhs, rhs in (((33, 1), (1, 65)),):
        for op, ref in BOOL_BINARY.items():
            known = "13.4 (i1 order)" if op in ("min", "max") else ""
            cases.append(binary_case(op, "i1", lhs, rhs, (bools(), bools()), ref, known=known))
    # wrap-around and the edges of integer division (XLA: x / 0 = -1, x % 0 = x, MIN / -1 = MIN, MIN % -1 = 0)
    for dtype in ("i8", "i32", "i64"):
        edges = special_ints(dtype)
        lhs_v = np.repeat(edges, edges.size)
        rhs_v = np.tile(edges, edges.size)
        n = lhs_v.size
        for op in ("add", "sub", "mul", "min", "max"):
            cases.append(binary_case(op, dtype, (n,), (n,), (tiled_exact(lhs_v), tiled_exact(rhs_v)), INT_BINARY[op][1],
                                     shape="edge", module=f"binary-edge-{dtype}"))
        for op in ("div", "trunc_div", "floor_div", "mod", "rem"):
            cases.append(binary_case(op, dtype, (n,), (n,), (tiled_exact(lhs_v), tiled_exact(rhs_v)),
                                     _int_division_xla(op), shape="edge", module=f"binary-edge-{dtype}",
                                     known="13.7 (integer division by zero)"))
        for op in ("shift_left", "shift_right_logical", "shift_right_arithmetic"):
            cases.append(binary_case(op, dtype, (n,), (n,), (tiled_exact(lhs_v), tiled_exact(rhs_v)),
                                     INT_BINARY[op][1], shape="edge", module=f"binary-edge-{dtype}"))
    # float edge values: NaN propagation of min/max, signed zeros, infinities
    for dtype in ("f32", "f64"):
        edges = special_floats(dtype)
        lhs_v = np.repeat(edges, edges.size)
        rhs_v = np.tile(edges, edges.size)
        n = lhs_v.size
        table = _float_binary(dtype)
        for op in ("add", "sub", "mul", "div", "min", "max", "pow", "mod", "floor_div", "trunc_div", "rem", "atan2"):
            cases.append(binary_case(op, dtype, (n,), (n,), (tiled_exact(lhs_v), tiled_exact(rhs_v)),
                                     _errstate(table[op][1]), shape="special", module=f"binary-special-{dtype}"))
    return cases


def tiled_exact(values):
    """Exactly ``values`` (the shape must have their size)."""
    return lambda rng, shape: np.asarray(values).reshape(shape)


def _int_division_xla(op):
    def ref(x, y):
        out_type = np.result_type(x, y)
        info = np.iinfo(out_type)
        x64, y64 = x.astype(np.int64), y.astype(np.int64)
        safe = np.where(y64 == 0, 1, y64)
        if op in ("div", "trunc_div"):
            r = np.where(y64 == 0, -1, _trunc_div64(x64, safe))
        elif op == "floor_div":
            with np.errstate(all="ignore"):
                r = np.where(y64 == 0, -1, np.floor_divide(x64, safe))
        else:
            remainder = np.mod if op == "mod" else np.fmod
            with np.errstate(all="ignore"):
                r = np.where(y64 == 0, x64, remainder(x64, safe))
        r = np.where((x64 == info.min) & (y64 == -1), info.min if op not in ("mod", "rem") else 0, r)
        return r.astype(out_type)

    return ref


# ----- cmp and select -------------------------------------------------------

PREDICATES = {"lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal, "eq": np.equal,
              "ne": np.not_equal}


def _cmp_values(dtype):
    if dtype in FLOATS:
        return tiled(np.array([-1.5, 0.0, -0.0, 1.0, 2.5, np.nan, np.inf, -np.inf, 1.0, -1.5]))
    if dtype == "i1":
        return bools()
    info = np.iinfo(NUMPY[dtype])
    return tiled(np.array([info.min, -1, 0, 1, 2, info.max, 0, 1]))


def cmp_cases() -> list[Case]:
    cases = []
    layouts = {
        "f32": [((33, 65), (33, 65)), ((131073,), ()), ((1, 65), (33, 1))],
        "f64": [((), (33,)), ((7,), (7,))],
        "f16": [((33,), (33,))],
        "i32": [((33, 1), (1, 65)), ((), ())],
        "i64": [((7,), (7,))],
        "i8": [((33,), (33,))],
        "i1": [((7,), (7,)), ((33, 1), (1, 65))],
    }
    for dtype, pairs in layouts.items():
        for lhs, rhs in pairs:
            for pred, fn in PREDICATES.items():
                tl, tr = ttype(lhs, dtype), ttype(rhs, dtype)

                def ref(x, y, fn=fn):
                    with np.errstate(invalid="ignore"):
                        return fn(x, y)

                sample = _cmp_values(dtype)
                cases.append(Case(f"cmp.{pred}", dtype, [Arg(lhs, dtype, sample), Arg(rhs, dtype, sample)],
                                  f"%r = dlvm.cmp {pred}, %a0, %a1 : {tl}, {tr}", _broadcast(lhs, rhs), "i1", ref,
                                  family="cmp", known="13.4 (i1 order)" if dtype == "i1" else ""))
    return cases


def select_cases() -> list[Case]:
    cases = []
    layouts = {
        "f32": [((33, 65), (33, 65), ()), ((1, 65), (33, 1), (33, 65)), ((), (7,), (7,)), ((131073,), (131073,), ())],
        "f64": [((33,), (33,), (33,)), ((65, 1), (), (65, 1))],
        "i32": [((33, 65), (33, 65), (1, 65))],
        "i8": [((7,), (7,), ())],
        "i1": [((33,), (33,), (33,))],
        "f16": [((33,), (33,), ())],
    }
    for dtype, triples in layouts.items():
        for index, (m, a, b) in enumerate(triples):
            out = _broadcast(m, a, b)
            sample = bools() if dtype == "i1" else (normal() if dtype in FLOATS else ints(-1000, 1000))
            args = [Arg(m, "i1", bools()), Arg(a, dtype, sample), Arg(b, dtype, sample)]
            body = f"%r = dlvm.select %a0, %a1, %a2 : {ttype(m, 'i1')}, {ttype(a, dtype)}, {ttype(b, dtype)}"
            spec = "fwd vjp jvp fd" if index < 2 else "fwd"
            cases.append(Case("select", dtype, args, body, out, dtype, lambda m_, a_, b_: np.where(m_, a_, b_),
                              family="select", modes=modes(spec, dtype, [m, a, b]), rtol=0.0))
    return cases


def clamp_cases() -> list[Case]:
    """clamp(lo, x, hi): bounds of rank 0 (XLA's usual form) and broadcast ones."""
    cases = []
    layouts = {
        "f32": [((), (33, 65), ()), ((1, 65), (33, 65), (33, 1)), ((), (131073,), ())],
        "f64": [((), (33,), ()), ((7,), (7,), (7,))],
        "i32": [((), (33, 65), ())],
        "i8": [((7,), (7,), ())],
        "i1": [((), (33,), ())],
    }
    for dtype, triples in layouts.items():
        for index, (lo, x, hi) in enumerate(triples):
            out = _broadcast(lo, x, hi)
            if dtype == "i1":
                samplers = (bools(0.2), bools(), bools(0.8))
            elif dtype in FLOATS:
                samplers = (uniform(-1.5, -0.5), distinct(0.9), uniform(0.5, 1.5))
            else:
                samplers = (ints(-60, -20), ints(-100, 100), ints(20, 60))
            args = [Arg(shape, dtype, sample) for shape, sample in zip((lo, x, hi), samplers)]
            body = f"%r = dlvm.clamp %a0, %a1, %a2 : {ttype(lo, dtype)}, {ttype(x, dtype)}, {ttype(hi, dtype)}"
            spec = "fwd vjp jvp fd" if index < 2 and dtype in FLOATS else "fwd"
            cases.append(Case("clamp", dtype, args, body, out, dtype, lambda l, v, h: np.minimum(np.maximum(v, l), h),
                              family="clamp", modes=modes(spec, dtype, [lo, x, hi]), rtol=0.0))
    edges = special_floats("f32")
    grid = [np.repeat(edges, edges.size * edges.size), np.tile(np.repeat(edges, edges.size), edges.size),
            np.tile(edges, edges.size * edges.size)]
    n = grid[0].size
    args = [Arg((n,), "f32", tiled_exact(values)) for values in grid]
    body = f"%r = dlvm.clamp %a0, %a1, %a2 : {ttype((n,), 'f32')}, {ttype((n,), 'f32')}, {ttype((n,), 'f32')}"
    ieee = lambda l, v, h: np.where(np.isnan(l) | np.isnan(v) | np.isnan(h), np.nan,  # noqa: E731
                                    np.minimum(np.maximum(v, l), h))
    cases.append(Case("clamp", "f32", args, body, (n,), "f32", ieee, family="clamp", shape="special", rtol=0.0))
    return cases


def is_finite_cases() -> list[Case]:
    cases = []
    for dtype, shape in (("f32", (33, 65)), ("f64", (7,)), ("f16", (33,)), ("f32", (131073,))):
        values = special_floats(dtype if dtype != "f16" else "f16")
        body = f"%r = dlvm.is_finite %a0 : {ttype(shape, dtype)}"
        cases.append(Case("is_finite", dtype, [Arg(shape, dtype, tiled(values))], body, shape, "i1", np.isfinite,
                          family="is_finite", rtol=0.0))
    return cases


def _clamped(index, extent, size):
    return int(np.clip(int(index), 0, extent - size))


def indexing_cases() -> list[Case]:
    """dynamic_slice / dynamic_update_slice (indices in and out of range: XLA clamps),
    iota, argmax / argmin (ties, NaN)."""
    cases = []
    layouts = [  # operand shape, window sizes, index range
        ((64, 128), (1, 128), (-70, 70)), ((33, 65), (5, 7), (-3, 70)), ((7,), (3,), (-10, 10)),
        ((2, 3, 4), (1, 3, 2), (-2, 5)), ((131073,), (1000,), (0, 140000)), ((4, 1), (4, 1), (-1, 1)),
    ]
    for dtype in ("f32", "f64", "i32", "i1"):
        for index, (shape, sizes, (lo, hi)) in enumerate(layouts):
            if dtype in ("i32", "i1") and index % 2:
                continue
            sample = {"i1": bools(), "i32": ints(-1000, 1000)}.get(dtype, normal())
            idx = [Arg((), "i32", ints(lo, hi)) for _ in shape]
            t, it = ttype(shape, dtype), ", ".join(["tensor<i32>"] * len(shape))
            names = ", ".join(f"%a{i + 1}" for i in range(len(shape)))
            body = f"%r = dlvm.dynamic_slice %a0 at [{names}] sizes {list(sizes)} : {t}, {it}"

            def slice_ref(x, *starts, sizes=sizes):
                window = tuple(slice(_clamped(s, n, k), _clamped(s, n, k) + k) for s, n, k in zip(starts, x.shape, sizes))
                return x[window]

            spec = "fwd vjp jvp fd" if index < 4 else "fwd vjp"
            cases.append(Case("dynamic_slice", dtype, [Arg(shape, dtype, sample), *idx], body, sizes, dtype, slice_ref,
                              family="indexing", module=f"indexing-{dtype}", modes=modes(spec, dtype, [shape]),
                              rtol=0.0, seed=index))
            names = ", ".join(f"%a{i + 2}" for i in range(len(shape)))
            body = (f"%r = dlvm.dynamic_update_slice %a0, %a1 at [{names}] : {t}, {ttype(sizes, dtype)}, {it}")

            def update_ref(x, u, *starts):
                out = np.array(x, copy=True)
                window = tuple(slice(_clamped(s, n, k), _clamped(s, n, k) + k) for s, n, k in zip(starts, x.shape, u.shape))
                out[window] = u
                return out

            cases.append(Case("dynamic_update_slice", dtype, [Arg(shape, dtype, sample), Arg(sizes, dtype, sample), *idx],
                              body, shape, dtype, update_ref, family="indexing", module=f"indexing-{dtype}",
                              modes=modes(spec, dtype, [shape]), rtol=0.0, seed=index))
    for dtype, shape, dim in (("f32", (5, 7), 1), ("i32", (33, 65), 0), ("f64", (131073,), 0), ("i8", (300,), 0),
                              ("i1", (3, 2), 0), ("f16", (4, 3), 1)):
        body = f"%r = dlvm.iota dim {dim} : {ttype(shape, dtype)}"

        def iota_ref(shape=shape, dim=dim, dtype=dtype):
            counts = np.broadcast_to(np.arange(shape[dim]).reshape([-1 if d == dim else 1 for d in range(len(shape))]), shape)
            return counts != 0 if dtype == "i1" else counts.astype(np.int64).astype(NUMPY[dtype])

        cases.append(Case("iota", dtype, [], body, shape, dtype, iota_ref, family="indexing", shape=shape_id(shape),
                          module="iota", rtol=0.0))
    ties = np.array([1.0, 3.0, 3.0, -2.0, np.nan, 3.0, np.nan, -np.inf, np.inf, np.inf, 0.0, -0.0])
    for op, pick in (("argmax", np.argmax), ("argmin", np.argmin)):
        for dtype, shape, axis in (("f32", (33, 65), 1), ("f32", (33, 65), 0), ("f64", (7, 3, 5), 1),
                                   ("i32", (131073,), 0), ("i1", (9, 33), 1), ("i8", (4, 300), 1),
                                   ("f32", (12, 12), 1), ("f32", (12, 12), 0)):
            special = shape == (12, 12)
            sample = tiled(ties) if special else {"i1": bools(0.1), "i32": ints(-1000, 1000),
                                                  "i8": ints(-100, 100)}.get(dtype, normal())
            out = tuple(n for d, n in enumerate(shape) if d != axis)
            body = f"%r = dlvm.{op} %a0 axis {axis} : {ttype(shape, dtype)} -> {ttype(out, 'i32')}"
            cases.append(Case(op, dtype, [Arg(shape, dtype, sample)], body, out, "i32",
                              lambda x, pick=pick, axis=axis: pick(x, axis=axis).astype(np.int32),
                              family="indexing", module=f"arg-{dtype}", shape=f"{shape_id(shape)}_axis{axis}"
                              + ("_special" if special else ""), rtol=0.0))
    return cases


def _xla_gather(x, idx, offset_dims, collapsed, start_map, ivd, sizes):
    """XLA's gather written out element by element (float64 reference)."""
    idx = np.asarray(idx, np.int64)
    batch_shape = [n for d, n in enumerate(idx.shape) if d != ivd]
    window = [d for d in range(x.ndim) if d not in collapsed]
    out_rank = len(batch_shape) + len(window)
    out_shape, b, w = [], iter(batch_shape), iter(window)
    for i in range(out_rank):
        out_shape.append(sizes[next(w)] if i in offset_dims else next(b))
    out = np.empty(out_shape, x.dtype)
    for at in np.ndindex(*out_shape):
        batch = [at[i] for i in range(out_rank) if i not in offset_dims]
        offsets = [at[i] for i in offset_dims]
        start = [0] * x.ndim
        for k, d in enumerate(start_map):
            where = list(batch)
            if ivd < idx.ndim:
                where.insert(ivd, k)
            start[d] = int(np.clip(idx[tuple(where)], 0, x.shape[d] - sizes[d]))
        offsets = iter(offsets)
        out[at] = x[tuple(start[d] + (0 if d in collapsed else next(offsets)) for d in range(x.ndim))]
    return out


def _xla_scatter(kind, x, idx, upd, window_dims, inserted, to_operand, ivd):
    """XLA's scatter written out element by element, in the updates' row-major order."""
    idx = np.asarray(idx, np.int64)
    out = np.array(x, dtype=np.float64 if x.dtype.kind == "f" else x.dtype, copy=True)
    window = iter(window_dims)
    sizes = [1 if d in inserted else upd.shape[next(window)] for d in range(x.ndim)]
    for at in np.ndindex(*upd.shape):
        batch = [at[i] for i in range(upd.ndim) if i not in window_dims]
        offsets = iter([at[i] for i in window_dims])
        start = [0] * x.ndim
        for k, d in enumerate(to_operand):
            where = list(batch)
            if ivd < idx.ndim:
                where.insert(ivd, k)
            start[d] = int(np.clip(idx[tuple(where)], 0, x.shape[d] - sizes[d]))
        target = tuple(start[d] + (0 if d in inserted else next(offsets)) for d in range(x.ndim))
        out[target] = {"add": lambda a, b: a + b, "replace": lambda a, b: b, "max": max, "min": min}[kind](
            out[target], upd[at])
    return out


def _scatter_ref(kind, x, i, u, numbers, dtype):
    """The scatter in float64; for add, with the rounding bound of the repeated sums."""
    out = _xla_scatter(kind, x, i, u, *numbers)
    if kind != "add" or dtype not in FLOATS:
        return out.astype(x.dtype) if dtype not in FLOATS else out
    magnitude = _xla_scatter("add", np.abs(x), i, np.abs(u), *numbers)
    count = _xla_scatter("add", np.zeros(x.shape), i, np.ones(u.shape), *numbers)
    return out, (count + 1) * EPS[dtype] * magnitude


#: (operand, indices, dimension numbers (offset_dims, collapsed, start_index_map, index_vector_dim,
#: slice_sizes), index range): an embedding lookup, a pick of (row, label) pairs, windows of a
#: 3-D tensor with an implicit index vector, rows past the thread split
GATHERS = [
    ((100, 16), (8, 5), ([2], [0], [0], 2, [1, 16]), (-3, 110)),
    ((32, 10), (32, 2), ([], [0, 1], [0, 1], 1, [1, 1]), (-2, 12)),
    ((6, 7, 8), (4,), ([1, 2], [0], [0], 1, [1, 3, 8]), (-1, 7)),
    ((3000, 64), (700,), ([1], [0], [0], 1, [1, 64]), (0, 2999)),
    ((9, 5), (2, 3, 2), ([2, 3], [], [1, 0], 2, [2, 3]), (-2, 9)),
]


def gather_cases() -> list[Case]:
    cases = []
    for dtype in ("f32", "f64", "i32"):
        for index, (shape, ishape, (offsets, collapsed, start_map, ivd, sizes), (lo, hi)) in enumerate(GATHERS):
            if dtype == "i32" and index % 2:
                continue
            out = _xla_gather(np.zeros(shape), np.zeros(ishape, np.int64), offsets, collapsed, start_map, ivd,
                              sizes).shape
            sample = ints(-1000, 1000) if dtype == "i32" else normal()
            body = (f"%r = dlvm.gather %a0[%a1] offset_dims {offsets} collapsed_slice_dims {collapsed} "
                    f"start_index_map {start_map} index_vector_dim {ivd} slice_sizes {sizes} "
                    f": {ttype(shape, dtype)}, {ttype(ishape, 'i32')}")
            spec = "fwd vjp jvp fd" if _size(shape) < 2000 else "fwd vjp"
            cases.append(Case("gather", dtype, [Arg(shape, dtype, sample), Arg(ishape, "i32", ints(lo, hi))], body, out,
                              dtype, lambda x, i, a=(offsets, collapsed, start_map, ivd, sizes): _xla_gather(x, i, *a),
                              family="indexing", module=f"gather-{dtype}", modes=modes(spec, dtype, [shape]), rtol=0.0,
                              seed=index))
    # scatter: the transposes of the gathers above, each kind; repeated indices on purpose
    for dtype in ("f32", "f64", "i32"):
        for kind in ("add", "replace", "max", "min"):
            for index, (shape, ishape, (offsets, collapsed, start_map, ivd, sizes), (lo, hi)) in enumerate(GATHERS):
                if index == 3 and kind != "add":
                    continue
                updates = _xla_gather(np.zeros(shape), np.zeros(ishape, np.int64), offsets, collapsed, start_map, ivd,
                                      sizes).shape
                sample = ints(-1000, 1000) if dtype == "i32" else normal()
                body = (f"%r = dlvm.scatter {kind} %a0[%a1], %a2 update_window_dims {offsets} inserted_window_dims "
                        f"{collapsed} scatter_dims_to_operand_dims {start_map} index_vector_dim {ivd} : "
                        f"{ttype(shape, dtype)}, {ttype(ishape, 'i32')}, {ttype(updates, dtype)}")
                differentiable = kind in ("add", "replace")
                spec = ("fwd vjp jvp fd" if _size(shape) < 2000 else "fwd vjp") if differentiable else "fwd"
                ref = (lambda x, i, u, kind=kind, a=(offsets, collapsed, start_map, ivd), dtype=dtype:
                       _scatter_ref(kind, x, i, u, a, dtype))
                cases.append(Case(f"scatter.{kind}", dtype, [Arg(shape, dtype, sample), Arg(ishape, "i32", ints(lo, hi)),
                                                             Arg(updates, dtype, sample)],
                                  body, shape, dtype, ref, family="indexing", module=f"scatter-{dtype}",
                                  modes=modes(spec, dtype, [shape]), rtol=0.0, seed=index, wrt=(0, 2)))
    return cases


# ----- sort, top_k -------------------------------------------------------------


def _sorted_positions(keys, axis, descending):
    """Stable sort positions along ``axis`` by Python's ``sorted`` (NaN last ascending,
    first descending): an independent reference for dlvm.sort / dlvm.top_k."""
    keys = np.moveaxis(np.asarray(keys), axis, -1)
    out = np.empty(keys.shape, np.int64)
    for at in np.ndindex(*keys.shape[:-1]):
        row = keys[at]
        def key(i, row=row):
            v = row[i]
            nan = bool(v != v)
            value = 0 if nan else (int(v) if row.dtype.kind in "biu" else float(v))
            return (not nan, -value) if descending else (nan, value)
        out[at] = sorted(range(row.shape[0]), key=key)
    return np.moveaxis(out, -1, axis)


def _with_nans(sampler, every: int = 5):
    def sample(rng, shape):
        x = sampler(rng, shape)
        x.reshape(-1)[rng.integers(0, every, x.size) == 0] = np.nan
        return x

    return sample


#: (shape, dim): one element, runs of 2^p past the first pass, a non-power of two past 1024,
#: many rows, a middle dimension of a rank-3 tensor
SORTS = [((1,), 0), ((2,), 0), ((9,), 0), ((3, 8), 1), ((7, 33), 1), ((33, 7), 0), ((1025,), 0), ((2, 5, 3), 1),
         ((64, 100), 1)]


def sort_cases() -> list[Case]:
    cases = []
    for dtype in ("f32", "f64", "i32", "i1"):
        for index, (shape, dim) in enumerate(SORTS):
            for descending in (False, True):
                if dtype in ("i1", "f64") and index % 3:
                    continue
                t = ttype(shape, dtype)
                flag = " descending" if descending else ""
                if dtype in FLOATS:
                    # ties and NaN (forward); distinct values (derivatives)
                    sample = _with_nans(lambda rng, s: np.round(rng.standard_normal(s), 1))
                else:
                    sample = bools(0.5) if dtype == "i1" else ints(-3, 3)
                positions = lambda x, dim=dim, d=descending: _sorted_positions(x, dim, d)  # noqa: E731
                cases.append(Case(
                    f"sort{'.desc' if descending else ''}", dtype, [Arg(shape, dtype, sample)],
                    f"%r = dlvm.sort %a0 dim {dim}{flag} : {t}", shape, dtype,
                    lambda x, p=positions, dim=dim: np.take_along_axis(x, p(x), dim), family="sort",
                    module=f"sort-{dtype}", rtol=0.0, seed=index))
                # stability: a second operand follows keys with ties in their order
                ti = ttype(shape, "i32")
                cases.append(Case(
                    f"sort.stable{'.desc' if descending else ''}", dtype, [Arg(shape, dtype, sample),
                                                                          Arg(shape, "i32", ints(0, 10**6))],
                    f"%s:2 = dlvm.sort %a0, %a1 dim {dim}{flag} : {t}, {ti}\n%r = dlvm.reshape %s#1 to {list(shape)} : {ti}",
                    shape, "i32", lambda x, w, p=positions, dim=dim: np.take_along_axis(w, p(x), dim), family="sort",
                    module=f"sort-stable-{dtype}", seed=index))
                if dtype not in FLOATS:
                    continue
                # a second operand follows the keys (and both get gradients)
                body = (f"%s:2 = dlvm.sort %a0, %a1 dim {dim}{flag} : {t}, {t}\n"
                        f"%r = dlvm.mul %s#0, %s#1 : {t}, {t}")
                spec = "fwd vjp jvp fd" if math.prod(shape) < 40 else "fwd vjp jvp"
                cases.append(Case(
                    f"sort2{'.desc' if descending else ''}", dtype, [Arg(shape, dtype, distinct()),
                                                                      Arg(shape, dtype, normal())],
                    body, shape, dtype,
                    lambda x, w, p=positions, dim=dim: np.take_along_axis(x, p(x), dim) * np.take_along_axis(w, p(x), dim),
                    family="sort", module=f"sort2-{dtype}", modes=modes(spec, dtype, [shape, shape]), seed=index))
    # top_k: values and positions, k at both ends, NaN and ties
    for dtype in ("f32", "f64", "i32"):
        for index, (shape, k) in enumerate((((10,), 1), ((4, 33), 5), ((2, 3, 100), 100), ((64, 1025), 8), ((3, 7), 0))):
            if dtype == "f64" and index % 2:
                continue
            out = (*shape[:-1], k)
            t = ttype(shape, dtype)
            sample = (_with_nans(lambda rng, s: np.round(rng.standard_normal(s), 1)) if dtype in FLOATS
                      else ints(-5, 5))
            top = lambda x, k=k: _sorted_positions(x, x.ndim - 1, True)[..., :k]  # noqa: E731
            cases.append(Case(
                "top_k.values", dtype, [Arg(shape, dtype, sample)],
                f"%v, %i = dlvm.top_k %a0 k {k} : {t}\n%r = dlvm.reshape %v to {list(out)} : {ttype(out, dtype)}",
                out, dtype, lambda x, top=top: np.take_along_axis(x, top(x), x.ndim - 1), family="sort",
                module=f"top_k-{dtype}", rtol=0.0, seed=index))
            cases.append(Case(
                "top_k.indices", dtype, [Arg(shape, dtype, sample)],
                f"%v, %i = dlvm.top_k %a0 k {k} : {t}\n%r = dlvm.reshape %i to {list(out)} : {ttype(out, 'i32')}",
                out, "i32", lambda x, top=top: top(x).astype(np.int32), family="sort", module=f"top_k-{dtype}",
                seed=index))
            if dtype in FLOATS and k:
                cases.append(Case(
                    "top_k.grad", dtype, [Arg(shape, dtype, distinct())],
                    f"%v, %i = dlvm.top_k %a0 k {k} : {t}\n%r = dlvm.mul %v, %v : {ttype(out, dtype)}, {ttype(out, dtype)}",
                    out, dtype, lambda x, top=top: np.take_along_axis(x, top(x), x.ndim - 1) ** 2, family="sort",
                    module=f"top_k-grad-{dtype}", modes=modes("fwd vjp jvp fd", dtype, [shape]), seed=index))
    return cases


# ----- dot -------------------------------------------------------------------


def _dot_ref(dtype, k):
    eps = EPS.get(dtype, 0.0)

    def ref(a, b):
        if dtype == "i1":
            return np.matmul(a.astype(np.int64), b.astype(np.int64)) > 0
        out = np.matmul(a, b)
        if dtype not in FLOATS:
            return out.astype(a.dtype)
        return out, (k + 2) * eps * np.matmul(np.abs(a), np.abs(b))

    return ref


DOT_MNK = {
    # (m, k, n): register tile 6 x 64 x 8 (f32), cache tile 96 x 128 x 128
    "f32": [(1, 1, 1), (6, 8, 64), (7, 9, 65), (13, 33, 100), (96, 128, 128), (97, 129, 129), (128, 64, 1024),
            (256, 256, 256), (1, 784, 10)],
    "f64": [(1, 1, 1), (2, 3, 4), (6, 8, 32), (5, 7, 31), (13, 33, 100), (128, 64, 512), (65, 129, 1)],
    "i32": [(7, 9, 65), (33, 17, 5)],
    "i64": [(6, 8, 32)],
    "f16": [(7, 9, 64)],
    "i1": [(7, 9, 65), (1, 33, 1)],  # boolean matrix product: AND products, OR sum
}


def dot_case(dtype, lhs, rhs, out, k, body=None, op="dot", spec="fwd", **kw) -> Case:
    sample = bools(0.2) if dtype == "i1" else ints(-20, 20) if dtype not in FLOATS else normal()
    body = body or f"%r = dlvm.dot %a0, %a1 : {ttype(lhs, dtype)}, {ttype(rhs, dtype)}"
    kw.setdefault("module", f"dot-{dtype}")
    return Case(op, dtype, [Arg(lhs, dtype, sample), Arg(rhs, dtype, sample)], body, out, dtype, _dot_ref(dtype, k),
                family="dot", modes=modes(spec, dtype, [lhs, rhs]), rtol=0.0, **kw)


#: (m, k, n) whose derivatives are checked too
DOT_DERIV = {(1, 1, 1): "fwd vjp jvp fd", (7, 9, 65): "fwd vjp jvp", (13, 33, 100): "fwd vjp", (97, 129, 129): "fwd vjp",
             (5, 7, 31): "fwd vjp", (128, 64, 512): "fwd vjp", (1, 784, 10): "fwd vjp", (2, 3, 4): "fwd vjp jvp fd"}


def dot_cases() -> list[Case]:
    cases = []
    for dtype, triples in DOT_MNK.items():
        for m, k, n in triples:
            spec = DOT_DERIV.get((m, k, n), "fwd") if dtype in ("f32", "f64") else "fwd"
            cases.append(dot_case(dtype, (m, k), (k, n), (m, n), k, spec=spec))
    for dtype in ("f32", "f64"):
        for k in (1, 7, 1000, 131073):
            spec = {7: "fwd vjp jvp fd", 131073: "fwd vjp"}.get(k, "fwd")
            cases.append(dot_case(dtype, (k,), (k,), (), k, shape=f"{k}_{k}", module=f"dot-vec-{dtype}", spec=spec))
        for m, k in ((65, 129), (1, 8), (200, 33)):
            spec = "fwd vjp" if m == 65 else "fwd"
            cases.append(dot_case(dtype, (m, k), (k,), (m,), k, module=f"dot-vec-{dtype}", spec=spec))
            cases.append(dot_case(dtype, (k,), (k, m), (m,), k, module=f"dot-vec-{dtype}", spec=spec))
        for b, m, k, n in ((3, 7, 9, 65), (2, 33, 65, 17), (1, 6, 8, 64), (4, 1, 33, 1)):
            spec = "fwd vjp jvp" if b == 3 else "fwd"
            cases.append(dot_case(dtype, (b, m, k), (b, k, n), (b, m, n), k, module=f"dot-batch-{dtype}",
                                  spec=spec if dtype == "f32" else "fwd"))
        cases.append(dot_case(dtype, (2, 3, 5, 7), (2, 3, 7, 4), (2, 3, 5, 4), 7, module=f"dot-batch-{dtype}",
                              spec="fwd vjp"))
        # transposed operands (fused into matmul_transpose_a/b; a transposed B is always packed)
        for m, k, n in ((33, 65, 100), (128, 96, 130)):
            tb = ttype((n, k), dtype)
            body = f"""%t = dlvm.transpose %a1 : {tb}
                       %r = dlvm.dot %a0, %t : {ttype((m, k), dtype)}, {ttype((k, n), dtype)}"""
            spec = "fwd vjp" if m == 33 else "fwd"
            case = dot_case(dtype, (m, k), (n, k), (m, n), k, body=body, op="dot.tb", module=f"dot-t-{dtype}", spec=spec)
            case.ref = _t_ref(case.ref, 1)
            cases.append(case)
            ta = ttype((k, m), dtype)
            body = f"""%t = dlvm.transpose %a0 : {ta}
                       %r = dlvm.dot %t, %a1 : {ttype((m, k), dtype)}, {ttype((k, n), dtype)}"""
            case = dot_case(dtype, (k, m), (k, n), (m, n), k, body=body, op="dot.ta", module=f"dot-t-{dtype}", spec=spec)
            case.ref = _t_ref(case.ref, 0)
            cases.append(case)
    return cases


def _einsum_dot_general(a, b, lb, rb, lc, rc):
    """lax.dot_general written as an einsum (an independent reference)."""
    letters = iter("abcdefghijklmnopqrstuvwxyz")
    la = [next(letters) for _ in range(a.ndim)]
    lb_ = [next(letters) for _ in range(b.ndim)]
    for x, y in zip(lb + lc, rb + rc):
        lb_[y] = la[x]
    out = [la[d] for d in lb] + [la[d] for d in range(a.ndim) if d not in lb + lc]
    out += [lb_[d] for d in range(b.ndim) if d not in rb + rc]
    return np.einsum(f"{''.join(la)},{''.join(lb_)}->{''.join(out)}", a, b)


def _dot_general_ref(dtype, numbers):
    eps = EPS.get(dtype, 0.0)
    lb, rb, lc, rc = numbers

    def ref(a, b):
        k = int(np.prod([a.shape[d] for d in lc], dtype=np.int64))
        if dtype == "i1":
            return _einsum_dot_general(a.astype(np.int64), b.astype(np.int64), *numbers) > 0
        out = _einsum_dot_general(a, b, *numbers)
        if dtype not in FLOATS:
            return out.astype(a.dtype)
        return out, (k + 2) * eps * _einsum_dot_general(np.abs(a), np.abs(b), *numbers)

    return ref


#: (lhs, rhs, (lhs batch, rhs batch, lhs contracting, rhs contracting), derivative modes):
#: attention scores per batch and head (k read transposed), a rank-3 activation times a
#: matrix past the register and cache tiles, a batch dimension in the middle, two contracting
#: dimensions in opposite orders, an outer product, a full contraction, batched inner products,
#: a transposed lhs past the cache tile, size-1 and rank-0 corners
DOT_GENERALS = [
    ((2, 3, 17, 33), (2, 3, 9, 33), ([0, 1], [0, 1], [3], [3]), "fwd vjp jvp"),
    ((4, 25, 129), (129, 65), ([], [], [2], [0]), "fwd vjp"),
    ((5, 2, 7), (7, 2, 3), ([1], [1], [2], [0]), "fwd vjp jvp"),
    ((3, 4, 5), (5, 4, 6), ([], [], [1, 2], [1, 0]), "fwd vjp jvp"),
    ((1, 2, 3, 4), (1, 2, 2, 4), ([0, 1], [0, 1], [3], [3]), "fwd vjp fd"),
    ((3, 2, 4), (4, 2, 3), ([1], [1], [2], [0]), "fwd vjp fd"),
    ((2, 3, 4), (4, 3, 2), ([], [], [1, 2], [1, 0]), "fwd vjp fd"),
    ((2, 3, 4), (3, 2, 5), ([1, 0], [0, 1], [], []), "fwd vjp fd"),
    ((3, 4), (5,), ([], [], [], []), "fwd vjp jvp fd"),
    ((3, 5), (5, 3), ([], [], [0, 1], [1, 0]), "fwd vjp fd"),
    ((2, 7), (2, 7), ([0], [0], [1], [1]), "fwd vjp jvp fd"),
    ((129, 97), (129, 130), ([], [], [0], [0]), "fwd vjp"),
    ((1, 6, 1), (1, 1, 6), ([0], [0], [1], [2]), "fwd vjp fd"),
    ((), (4, 3), ([], [], [], []), "fwd vjp fd"),
]


def dot_general_cases() -> list[Case]:
    cases = []
    for dtype in ("f32", "f64", "i32", "i1", "f16"):
        for index, (lhs, rhs, numbers, spec) in enumerate(DOT_GENERALS):
            if dtype in ("i32", "i1", "f16") and index not in (0, 3, 7):
                continue
            lb, rb, lc, rc = numbers
            out = _einsum_dot_general(np.zeros(lhs), np.zeros(rhs), *numbers).shape
            body = (f"%r = dlvm.dot_general %a0, %a1 batch {lb} x {rb} contract {lc} x {rc} "
                    f": {ttype(lhs, dtype)}, {ttype(rhs, dtype)}")
            case = dot_case(dtype, lhs, rhs, out, 0, body=body, op="dot_general", module=f"dot-general-{dtype}",
                            spec=spec if dtype in ("f32", "f64") else "fwd", seed=index)
            case.ref = _dot_general_ref(dtype, numbers)
            cases.append(case)
    return cases


def _t_ref(ref, which):
    def wrapped(a, b):
        return ref(a.T, b) if which == 0 else ref(a, b.T)

    return wrapped


# ----- shape ops ------------------------------------------------------------


def _shape_case(op, dtype, shapes, body, out, ref, **kw) -> Case:
    sample = {"i1": bools(), "i32": ints(-1000, 1000), "i8": ints(-100, 100)}.get(dtype, normal())
    args = [Arg(s, dtype, sample) for s in shapes]
    # shape ops are linear: the gradient (the transposed op) is checked in f32 below the
    # thread split, finite differences in f64
    spec = {"f32": "fwd vjp" if _size(out) < 16384 else "fwd", "f64": "fwd fd"}.get(dtype, "fwd")
    kw.setdefault("modes", modes(spec, dtype, shapes))
    kw.setdefault("module", f"shape-{dtype}")
    return Case(op, dtype, args, body, out, dtype, ref, family="shape", rtol=0.0, exact_interp=True, **kw)


def _pad_reference(x, value, low, high, interior):
    """lax.pad by index arithmetic: result position o holds element (o - low) / (interior + 1) if it divides."""
    out_shape = [lo + n + max(n - 1, 0) * i + hi for n, lo, hi, i in zip(x.shape, low, high, interior)]
    index, inside = [], np.ones(out_shape, bool)
    for d, (n, lo, i, o) in enumerate(zip(x.shape, low, interior, out_shape)):
        position = np.arange(o) - lo
        good = (position % (i + 1) == 0) & (position >= 0) & (position // (i + 1) < n)
        index.append(np.where(good, position // (i + 1), 0))
        inside &= good.reshape([-1 if e == d else 1 for e in range(len(out_shape))])
    result = np.full(out_shape, value, x.dtype)
    return np.where(inside, x[np.ix_(*index)], result) if x.size else result


def _ints_text(values) -> str:
    return "[" + ", ".join(str(v) for v in values) + "]"


def shape_cases() -> list[Case]:
    cases = []
    for dtype in ("f32", "f64", "i32", "i1"):
        # transpose
        specs = [((33, 65), None), ((3, 4, 5), (2, 0, 1)), ((1, 65), None), ((2, 3, 4, 5), (0, 2, 1, 3)), ((7,), None),
                 ((), None)]
        if dtype == "f32":
            specs += [((128, 129), None), ((64, 2049), None), ((5, 128, 129), (2, 0, 1))]
        for shape, perm in specs:
            perm_text = f" perm {_ints_text(perm)}" if perm else ""
            full = perm or tuple(reversed(range(len(shape))))
            out = tuple(shape[p] for p in full)
            cases.append(_shape_case(f"transpose.p{''.join(map(str, full))}", dtype, [shape], f"%r = dlvm.transpose %a0{perm_text} : {ttype(shape, dtype)}",
                                     out, lambda x, full=full: np.transpose(x, full)))
        # reverse: within one tile only here; larger ones are isolated (issue 13 item 1)
        for shape, dims in (((7,), (0,)), ((8, 4), (0, 1)), ((4, 8), (1,)), ((3, 1, 5), (0, 2)), ((), ())):
            cases.append(_shape_case(f"reverse.d{''.join(map(str, dims))}", dtype, [shape],
                                     f"%r = dlvm.reverse %a0 dims {_ints_text(dims)} : {ttype(shape, dtype)}", shape,
                                     lambda x, dims=dims: np.flip(x, dims) if dims else x))
        for shape, dims in (((33,), (0,)), ((9, 5), (0,)), ((33, 65), (0, 1)), ((1000,), (0,)), ((5, 9), (1,)),
                            ((128, 129), (1,))):
            if dtype in ("i1", "f64") and _size(shape) > 2000:
                continue
            cases.append(_shape_case(f"reverse.d{''.join(map(str, dims))}", dtype, [shape],
                                     f"%r = dlvm.reverse %a0 dims {_ints_text(dims)} : {ttype(shape, dtype)}", shape,
                                     lambda x, dims=dims: np.flip(x, dims), isolate=True,
                                     module=f"shape-reverse-{dtype}", known="13.1 (reverse beyond one tile)"))
        # concatenate
        specs = [([(33, 65), (33, 1)], 1), ([(7,), (33,), (1,)], 0), ([(1, 65), (128, 65)], 0),
                 ([(2, 3, 4), (2, 3, 5)], 2)]
        if dtype == "f32":
            specs.append(([(65536,), (65537,)], 0))
        for shapes, axis in specs:
            out = list(shapes[0])
            out[axis] = sum(s[axis] for s in shapes)
            types = ", ".join(ttype(s, dtype) for s in shapes)
            names = ", ".join(f"%a{i}" for i in range(len(shapes)))
            cases.append(_shape_case(f"concatenate.a{axis}", dtype, shapes, f"%r = dlvm.concatenate {names} axis {axis} : {types}",
                                     tuple(out), lambda *xs, axis=axis: np.concatenate(xs, axis)))
        # slice
        specs = [((33, 65), (1, 2), (30, 60), None), ((33, 65), (0, 1), (17, 21), (2, 3)), ((1000,), (999,), (1,), None),
                 ((5, 6, 7), (1, 0, 2), (3, 3, 4), (1, 2, 1)), ((7,), (0,), (0,), None)]
        if dtype == "f32":
            specs += [((131073,), (1,), (43690,), (3,)), ((128, 129), (0, 1), (128, 128), None)]
        for shape, offsets, sizes, strides in specs:
            stride_text = f" strides {_ints_text(strides)}" if strides else ""
            st = strides or (1,) * len(shape)
            index = tuple(slice(o, o + (n - 1) * s + 1, s) if n else slice(o, o) for o, n, s in zip(offsets, sizes, st))
            cases.append(_shape_case(f"slice.o{shape_id_of(offsets)}.n{shape_id_of(sizes)}" + (f".s{shape_id_of(strides)}" if strides else ""), dtype, [shape],
                                     f"%r = dlvm.slice %a0 offsets {_ints_text(offsets)} sizes {_ints_text(sizes)}"
                                     f"{stride_text} : {ttype(shape, dtype)}", tuple(sizes),
                                     lambda x, index=index: x[index]))
        # pad: low / high (negative crops) / interior, both sides of the tiles
        specs = [((33, 65), (1, -2), (2, 3), (0, 1)), ((7,), (-3,), (-2,), (2,)), ((1000,), (0,), (24,), (0,)),
                 ((3, 1, 5), (0, 2, -7), (1, 0, 1), (1, 3, 1)), ((1,), (2,), (3,), (5,)), ((0, 3), (1, 0), (1, 0), (0, 0)),
                 ((5,), (-10,), (-1,), (2,)), ((), (), (), ())]
        if dtype == "f32":
            specs += [((128, 129), (-1, 3), (1, -4), (1, 0)), ((131073,), (5,), (-6,), (1,))]
        for shape, low, high, interior in specs:
            out = tuple(lo + n + max(n - 1, 0) * i + hi for n, lo, hi, i in zip(shape, low, high, interior))
            cases.append(_shape_case(f"pad.l{shape_id_of(low)}.h{shape_id_of(high)}.i{shape_id_of(interior)}", dtype,
                                     [shape, ()],
                                     f"%r = dlvm.pad %a0, %a1 low {_ints_text(low)} high {_ints_text(high)} "
                                     f"interior {_ints_text(interior)} : {ttype(shape, dtype)}, {ttype((), dtype)}",
                                     out, lambda x, v, cfg=(low, high, interior): _pad_reference(x, v, *cfg)))
        # reshape
        specs = [((33, 65), (65, 33)), ((1000,), (8, 125)), ((), (1, 1)), ((1, 1), ()), ((3, 4, 5), (60,)),
                 ((2, 3, 4, 5), (6, 1, 20))]
        if dtype == "f32":
            specs += [((128, 129), (129, 128)), ((131072,), (256, 512))]
        for shape, new in specs:
            cases.append(_shape_case(f"reshape.to{shape_id_of(new)}", dtype, [shape],
                                     f"%r = dlvm.reshape %a0 to {_ints_text(new)} : {ttype(shape, dtype)}", new,
                                     lambda x, new=new: np.reshape(x, new)))
        # pad_shape / squeeze_shape
        for shape, dim in (((33,), 0), ((33,), 1), ((), 0), ((33, 65), 2), ((3, 1, 5), 1)):
            out = shape[:dim] + (1,) + shape[dim:]
            cases.append(_shape_case(f"pad_shape.at{dim}", dtype, [shape],
                                     f"%r = dlvm.pad_shape %a0 at {dim} : {ttype(shape, dtype)}", out,
                                     lambda x, dim=dim: np.expand_dims(x, dim)))
        for shape, dim in (((1, 33), 0), ((33, 1), 1), ((1,), 0), ((3, 1, 5), 1), ((1, 1), 1)):
            out = shape[:dim] + shape[dim + 1 :]
            cases.append(_shape_case(f"squeeze_shape.at{dim}", dtype, [shape],
                                     f"%r = dlvm.squeeze_shape %a0 at {dim} : {ttype(shape, dtype)}", out,
                                     lambda x, dim=dim: np.squeeze(x, dim)))
        # broadcast_to
        specs = [((), (33, 65)), ((1, 65), (33, 65)), ((33, 1), (33, 65)), ((3, 1, 5), (3, 4, 5)), ((1,), (7,)),
                 ((), ())]
        if dtype == "f32":
            specs += [((1,), (131073,)), ((1, 129), (128, 129)), ((128, 1), (128, 129))]
        for shape, new in specs:
            cases.append(_shape_case(f"broadcast_to.to{shape_id_of(new)}", dtype, [shape],
                                     f"%r = dlvm.broadcast_to %a0 to {_ints_text(new)} : {ttype(shape, dtype)}", new,
                                     lambda x, new=new: np.broadcast_to(x, new)))
    # integer and boolean elements: the first two layouts of each op (the lowering does not depend on the type)
    kept, count = [], {}
    for c in cases:
        base = (c.op.split(".")[0], c.dtype, c.isolate)
        count[base] = count.get(base, 0) + 1
        if c.dtype in ("f32", "f64") or count[base] <= 2:
            kept.append(c)
    return kept


# ----- reductions -----------------------------------------------------------

BF16_REDUCTION = "fixed (bf16 ops stay scalar): LLVM aborted on bf16 vector reductions (soft promote of scalar_to_vector v32bf16)"

REDUCE_SPECS_F32 = [
    ((33, 65), (0,), "fwd vjp"), ((33, 65), (1,), "fwd vjp jvp"), ((33, 65), (0, 1), "fwd vjp"),
    ((7,), (0,), "fwd vjp jvp"), ((1, 65), (0,), "fwd"), ((1, 65), (1,), "fwd vjp"), ((65, 1), (1,), "fwd"),
    ((3, 4, 5), (0, 2), "fwd vjp"), ((3, 4, 5), (1,), "fwd"), ((256, 257), (0, 1), "fwd vjp"), ((256, 257), (0,), "fwd"),
    ((32767,), (0,), "fwd"), ((32768,), (0,), "fwd vjp"), ((131073,), (0,), "fwd"), ((131071,), (0,), "fwd"),
    ((2, 65536), (1,), "fwd"),
]
REDUCE_SPECS_F64 = [((33, 65), (0,), "fwd"), ((33, 65), (0, 1), "fwd vjp"), ((1, 65), (1,), "fwd"),
                    ((3, 4, 5), (0, 2), "fwd fd"), ((32768,), (0,), "fwd"), ((7,), (0,), "fwd vjp jvp fd")]


def _reduce_ref(kind, dims, dtype, has_init):
    eps = EPS.get(dtype, 0.0)

    def ref(x, *init):
        n = math.prod(x.shape[d] for d in dims)
        if kind == "add":
            r, bound = np.sum(x, axis=dims), (n + 1) * eps * np.sum(np.abs(x), axis=dims)
        elif kind == "mean":
            r, bound = np.mean(x, axis=dims), (n + 2) * eps * np.sum(np.abs(x), axis=dims) / max(n, 1)
        elif kind == "mul":
            r = np.prod(x, axis=dims)
            bound = 2 * (n + 1) * eps * np.abs(r)
        elif kind == "max":
            r, bound = np.max(x, axis=dims), None
        elif kind == "min":
            r, bound = np.min(x, axis=dims), None
        elif kind == "and":
            r, bound = np.bitwise_and.reduce(x, axis=dims), None
        else:
            r, bound = np.bitwise_or.reduce(x, axis=dims), None
        if dtype not in FLOATS:
            if kind in ("add", "mul"):
                with np.errstate(all="ignore"):
                    acc = x.astype(np.int64)
                    r = (np.sum(acc, axis=dims) if kind == "add" else np.prod(acc, axis=dims)).astype(x.dtype)
            r = np.asarray(r).astype(x.dtype)
            bound = None
        if has_init:
            c = init[0]
            r = {"add": lambda: r + c, "mean": lambda: r + c, "mul": lambda: r * c, "max": lambda: np.maximum(r, c),
                 "min": lambda: np.minimum(r, c), "and": lambda: r & c, "or": lambda: r | c}[kind]()
            if bound is not None:
                bound = bound * (np.abs(c) if kind == "mul" else 1) + eps * np.abs(r)
        if dtype not in FLOATS:
            return np.asarray(r).astype(x.dtype)
        return (r, bound) if bound is not None else r

    return ref


def reduce_case(kind, dtype, shape, dims, init=False, **kw) -> Case:
    out = tuple(s for i, s in enumerate(shape) if i not in dims)
    t = ttype(shape, dtype)
    if dtype in FLOATS:
        sample = {"mul": uniform(0.999, 1.001) if _size(shape) > 1000 else uniform(0.6, 1.5),
                  "max": distinct(), "min": distinct()}.get(kind, normal())
    elif dtype == "i1":
        sample = bools(0.8 if kind == "and" else 0.2)
    else:
        sample = {"mul": tiled([1, -1, 1, 1, 2, -1, 1, 1, 1]), "and": ints(-(2**31), 2**31 - 1),
                  "or": ints(-(2**31), 2**31 - 1)}.get(kind, ints(-1000, 1000))
    args = [Arg(shape, dtype, sample)]
    init_text = ""
    type_text = t
    if init:
        args.append(Arg((), dtype, normal() if dtype in FLOATS else ints(-5, 5) if dtype != "i1" else bools()))
        init_text = " init %a1"
        type_text = f"{t}, {ttype((), dtype)}"
    op = f"reduce_{kind}.d{''.join(map(str, dims))}" + (".init" if init else "")
    kw.setdefault("modes", ("fwd",))
    return Case(op, dtype, args, f"%r = dlvm.reduce {kind} %a0{init_text} dims {_ints_text(dims)} : {type_text}", out,
                dtype, _reduce_ref(kind, dims, dtype, init), family="reduce", rtol=0.0,
                **{"module": f"reduce-{dtype}-{shape_id_of(shape)}", **kw})


def shape_id_of(shape):
    return "x".join(map(str, shape)) or "s"


def reduce_cases() -> list[Case]:
    cases = []
    for dtype, specs in (("f32", REDUCE_SPECS_F32), ("f64", REDUCE_SPECS_F64)):
        for shape, dims, spec in specs:
            main = shape in ((33, 65), (7,), (32768,), (131073,), (5, 7)) or dims == (0, 1)
            for kind in ("add", "mul", "max", "min", "mean"):
                if shape in ((1, 65), (65, 1)) and kind not in ("add", "max"):
                    continue
                if not main and kind in ("min", "mean"):
                    continue
                kind_spec = spec if kind in ("add", "max") or shape in ((7,), (5, 7)) or dims == (1,) else "fwd"
                case = reduce_case(kind, dtype, shape, dims, modes=modes(kind_spec, dtype, [shape]))
                if kind == "mul" and max(shape[d] for d in dims) > 8 and len(case.modes) > 1:
                    # the gradient of a product emits dlvm.reverse (issue 13 item 1): its derivatives in a child process
                    cases.append(reduce_case(kind, dtype, shape, dims, modes=("fwd",)))
                    grad_modes = tuple(m for m in case.modes if m != "fwd")
                    cases.append(reduce_case(kind, dtype, shape, dims, modes=grad_modes, last=True,
                                             known="13.1 (reverse in the gradient of reduce mul)"))
                    cases[-1].module = f"reduce-mul-grad-{dtype}"
                else:
                    cases.append(case)
        for kind in ("add", "mul", "max", "min", "mean"):
            cases.append(reduce_case(kind, dtype, (33, 65) if dtype == "f32" else (5, 7), (1,), init=True,
                                     modes=modes("fwd vjp jvp fd" if dtype == "f64" else "fwd vjp", dtype, [(5, 7)])))
    for dtype, specs in (("i32", [((33, 65), (1,)), ((131073,), (0,)), ((3, 4, 5), (0, 2))]),
                         ("i64", [((7,), (0,))]), ("i8", [((33, 65), (0,))])):
        for shape, dims in specs:
            for kind in ("add", "mul", "max", "min", "and", "or"):
                cases.append(reduce_case(kind, dtype, shape, dims))
        cases.append(reduce_case("max", dtype, specs[0][0], specs[0][1], init=True))
    # bf16 (through f32 arguments): one reduction fused with the cast, and two reductions of one bf16
    # tensor (which is then materialized)
    for kind, pairs in (("add", (((1,),), ((0,), (1,)))), ("max", (((1,),),)), ("mean", (((1,),),))):
        for dims_pair in pairs:
            body = "%b = dlvm.cast %a0 to bf16 : tensor<33x65xf32>\n"
            outs = []
            for i, dims in enumerate(dims_pair):
                out = tuple(s for d, s in enumerate((33, 65)) if d not in dims)
                body += f"%s{i} = dlvm.reduce {kind} %b dims {_ints_text(dims)} : tensor<33x65xbf16>\n"
                body += f"%c{i} = dlvm.cast %s{i} to f32 : {ttype(out, 'bf16')}\n"
                outs.append(out)
            if len(outs) == 2:  # one result: the outer sum of the two reductions
                body += (f"%p = dlvm.pad_shape %c0 at 0 : {ttype(outs[0], 'f32')}\n"
                         f"%q = dlvm.pad_shape %c1 at 1 : {ttype(outs[1], 'f32')}\n"
                         "%r = dlvm.add %p, %q : tensor<1x65xf32>, tensor<33x1xf32>")
                result = (33, 65)
            else:
                body += "%r = dlvm.reshape %c0 to [33] : tensor<33xf32>"
                result = (33,)

            def ref(x, kind=kind, n=len(outs)):
                xb = _round_bf16(x)
                fn = {"add": np.sum, "max": np.max, "mean": np.mean}[kind]
                a = fn(xb, axis=1)
                if n == 1:
                    return a, 0.05 * np.sum(np.abs(xb), axis=1) + 1e-2 * np.abs(a)
                b = fn(xb, axis=0)
                total = b[None, :] + a[:, None]
                mag = (np.sum(np.abs(xb), axis=0)[None, :] + np.sum(np.abs(xb), axis=1)[:, None]) if kind != "max" else np.abs(total)
                return total, 0.05 * mag + 1e-2 * np.abs(total)

            name = f"reduce_{kind}.bf16.{'two' if len(outs) == 2 else 'one'}"
            cases.append(Case(name, "bf16", [Arg((33, 65), "f32", _bf16(normal()))], body, result, "f32", ref,
                              family="reduce", rtol=0.0, isolate=True, module="reduce-bf16",
                              known=BF16_REDUCTION if len(outs) == 2 or kind == "mean" else ""))
    for shape, dims in (((33, 65), (1,)), ((7,), (0,)), ((131073,), (0,))):
        for kind in ("and", "or", "max", "min"):
            cases.append(reduce_case(kind, "i1", shape, dims, known="13.4 (i1 order)" if kind in ("max", "min") else ""))
    return cases


# ----- scan -----------------------------------------------------------------


def _scan_ref(kind, dim, dtype):
    eps = EPS.get(dtype, 0.0)

    def ref(x):
        if kind == "add":
            r = np.cumsum(x, axis=dim)
            n = np.arange(1, x.shape[dim] + 1).reshape([-1 if d == dim else 1 for d in range(x.ndim)])
            bound = (n + 1) * eps * np.cumsum(np.abs(x), axis=dim)
        elif kind == "mul":
            r = np.cumprod(x, axis=dim)
            n = np.arange(1, x.shape[dim] + 1).reshape([-1 if d == dim else 1 for d in range(x.ndim)])
            bound = 2 * (n + 1) * eps * np.abs(r)
        elif kind == "max":
            r, bound = np.maximum.accumulate(x, axis=dim), None
        elif kind == "min":
            r, bound = np.minimum.accumulate(x, axis=dim), None
        elif kind == "and":
            r, bound = np.bitwise_and.accumulate(x, axis=dim), None
        else:
            r, bound = np.bitwise_or.accumulate(x, axis=dim), None
        if dtype not in FLOATS:
            if kind in ("add", "mul"):
                acc = x.astype(np.int64)
                r = np.cumsum(acc, axis=dim) if kind == "add" else np.cumprod(acc, axis=dim)
            return np.asarray(r).astype(x.dtype)
        return (r, bound) if bound is not None else r

    return ref


def _flagged_scan_ref(ref, kind, dim, flags):
    """The inclusive forward reference run from the end and/or shifted (dlvm.scan's exclusive/reverse)."""
    if not flags:
        return ref

    def identity(dtype):
        if kind in ("add", "or"):
            return 0
        if kind in ("mul",):
            return 1
        if kind == "and":
            return True if dtype == np.bool_ else -1
        if dtype == np.bool_:
            return kind == "min"
        if dtype.kind == "f":
            return -np.inf if kind == "max" else np.inf
        info = np.iinfo(dtype)
        return info.min if kind == "max" else info.max

    def shift(r, fill):
        head = np.full_like(np.take(r, [0], axis=dim), fill)
        return np.concatenate([head, np.take(r, np.arange(r.shape[dim] - 1), axis=dim)], axis=dim)

    def flagged(x):
        flip = (lambda v: np.flip(v, dim)) if "reverse" in flags else (lambda v: v)
        out = ref(flip(x))
        r, bound = out if isinstance(out, tuple) else (out, None)
        if "exclusive" in flags:
            r = shift(r, identity(r.dtype))
            bound = None if bound is None else shift(bound, 0)
        return (flip(r), flip(bound)) if bound is not None else flip(r)

    return flagged


def scan_case(kind, dtype, shape, dim, flags="", **kw) -> Case:
    if dtype in FLOATS:
        sample = {"mul": uniform(0.999, 1.001) if shape[dim] > 100 else uniform(0.6, 1.5), "max": distinct(),
                  "min": distinct()}.get(kind, normal())
    elif dtype == "i1":
        sample = bools(0.9 if kind == "and" else 0.1)
    else:
        sample = {"mul": tiled([1, -1, 1, 1, 2, -1, 1, 1, 1])}.get(kind, ints(-1000, 1000))
    kw.setdefault("modes", ("fwd",))
    suffix = "".join(f".{f}" for f in flags.split())
    return Case(f"scan_{kind}.d{dim}{suffix}", dtype, [Arg(shape, dtype, sample)],
                f"%r = dlvm.scan {kind} %a0 dim {dim} {flags} : {ttype(shape, dtype)}", shape, dtype,
                _flagged_scan_ref(_scan_ref(kind, dim, dtype), kind, dim, flags),
                family="scan", rtol=0.0, **{"module": f"scan-{dtype}", **kw})


def scan_cases() -> list[Case]:
    cases = []
    specs = {"f32": [((7,), 0, "fwd vjp jvp"), ((33, 65), 0, "fwd vjp"), ((33, 65), 1, "fwd"), ((1, 65), 1, "fwd"),
                     ((1, 65), 0, "fwd vjp"), ((1000,), 0, "fwd"), ((128, 129), 1, "fwd"), ((131073,), 0, "fwd")],
             "f64": [((7,), 0, "fwd vjp jvp fd"), ((3, 4, 5), 1, "fwd fd"), ((33, 65), 1, "fwd vjp")]}
    for dtype, shape_dims in specs.items():
        for shape, dim, spec in shape_dims:
            for kind in ("add", "mul", "max", "min"):
                case_modes = modes(spec, dtype, [shape])
                if shape[dim] > 8 and len(case_modes) > 1:
                    # the derivatives of a scan emit dlvm.reverse (issue 13 item 1)
                    cases.append(scan_case(kind, dtype, shape, dim, modes=("fwd",)))
                    case = scan_case(kind, dtype, shape, dim, modes=case_modes[1:], last=True,
                                     known="13.1 (reverse in the derivatives of scan)")
                    case.module = f"scan-grad-{dtype}"
                    cases.append(case)
                else:
                    cases.append(scan_case(kind, dtype, shape, dim, modes=case_modes))
    for dtype, shape_dims in (("i32", [((33, 65), 1), ((7,), 0)]), ("i1", [((33,), 0)])):
        for shape, dim in shape_dims:
            kinds = ("and", "or", "max", "min") if dtype == "i1" else ("add", "mul", "max", "min", "and", "or")
            for kind in kinds:
                known = "13.4 (i1 order)" if dtype == "i1" and kind in ("max", "min") else ""
                cases.append(scan_case(kind, dtype, shape, dim, known=known))
    # exclusive and reverse scans: both sides of the vector width, size-1 and single-element scans
    flagged = {"f32": [((33, 65), 1, "fwd vjp"), ((1, 65), 0, "fwd vjp"), ((1000,), 0, "fwd")],
               "f64": [((7,), 0, "fwd vjp jvp fd"), ((3, 4, 5), 2, "fwd vjp jvp fd")]}
    for flags in ("exclusive", "reverse", "exclusive reverse"):
        for dtype, shape_dims in flagged.items():
            for shape, dim, spec in shape_dims:
                for kind in ("add", "mul", "max", "min"):
                    case_modes = modes(spec, dtype, [shape])
                    if "exclusive" in flags and kind in ("max", "min"):
                        case_modes = ("fwd",)  # +-inf first results: checked by test_ad_rules through a clamp
                    cases.append(scan_case(kind, dtype, shape, dim, flags, modes=case_modes,
                                           module=f"scan-flags-{dtype}"))
        cases.append(scan_case("add", "i32", (33, 65), 1, flags, module="scan-flags-i32"))
        cases.append(scan_case("and", "i1", (33,), 0, flags, module="scan-flags-i1"))
        cases.append(scan_case("max", "i32", (7,), 0, flags, module="scan-flags-i32"))
    return cases


# ----- reduce_window --------------------------------------------------------


def _window_padding(n, w, s, padding):
    if padding == "none":
        return 0, 0, (n - w) // s + 1
    if padding == "half":
        out = -(-n // s)
        total = max((out - 1) * s + w - n, 0)
        return total // 2, total - total // 2, out
    out = (n + w - 2) // s + 1
    low = w - 1
    return low, max((out - 1) * s + w - n - low, 0), out


def _window_ref(kind, window, strides, padding, dtype):
    eps = EPS.get(dtype, 0.0)

    def ref(x):
        pads = [_window_padding(n, w, s, padding) for n, w, s in zip(x.shape, window, strides)]
        out_shape = tuple(p[2] for p in pads)
        fill = {"add": 0.0, "mean": 0.0, "mul": 1.0, "max": -np.inf, "min": np.inf}[kind]
        if dtype not in FLOATS:
            info = np.iinfo(x.dtype)
            fill = {"add": 0, "mul": 1, "max": info.min, "min": info.max}[kind]
        big = np.full(tuple(n + lo + hi + w for n, (lo, hi, _), w in zip(x.shape, pads, window)), fill,
                      dtype=x.dtype if dtype not in FLOATS else np.float64)
        inside = np.zeros(big.shape, dtype=bool)
        region = tuple(slice(lo, lo + n) for n, (lo, _, _) in zip(x.shape, pads))
        big[region] = x
        inside[region] = True
        acc = None
        count = np.zeros(out_shape)
        mag = np.zeros(out_shape)
        for offset in np.ndindex(*window):
            index = tuple(slice(o, o + (n_out - 1) * s + 1, s) for o, n_out, s in zip(offset, out_shape, strides))
            v = big[index]
            if acc is None:
                acc = v.copy()
            elif kind in ("add", "mean"):
                acc = acc + v
            elif kind == "mul":
                acc = acc * v
            elif kind == "max":
                acc = np.maximum(acc, v)
            else:
                acc = np.minimum(acc, v)
            count += inside[index]
            if dtype in FLOATS:
                mag += np.where(inside[index], np.abs(v), 0.0)
        wsize = math.prod(window)
        if dtype not in FLOATS:
            return acc.astype(x.dtype)
        if kind == "mean":
            return acc / np.maximum(count, 1), (wsize + 2) * eps * mag / np.maximum(count, 1)
        if kind == "add":
            return acc, (wsize + 1) * eps * mag
        if kind == "mul":
            return acc, 2 * (wsize + 1) * eps * np.abs(acc)
        return acc

    return ref


WINDOW_SPECS = [
    # (shape, window, strides, {padding: (f32 modes, f64 modes)})
    ((2, 3, 9, 9), (1, 1, 3, 3), (1, 1, 2, 2), {"none": ("fwd vjp", ""), "half": ("fwd", "fwd"), "full": ("fwd", "")}),
    ((1, 2, 33, 65), (1, 1, 2, 2), (1, 1, 2, 2), {"none": ("fwd", "")}),
    ((33,), (4,), (3,), {"none": ("fwd vjp", "fwd fd"), "half": ("fwd vjp jvp", "fwd fd"), "full": ("fwd", "fwd fd")}),
    ((7, 5), (7, 1), (1, 1), {"none": ("fwd vjp", "fwd fd")}),
    ((1, 1, 5, 5), (1, 1, 5, 5), (1, 1, 1, 1), {"none": ("fwd", "fwd fd")}),
]


def window_case(kind, dtype, shape, window, strides, padding, **kw) -> Case:
    if dtype in FLOATS:
        sample = {"mul": uniform(0.6, 1.5), "max": distinct(), "min": distinct()}.get(kind, normal())
    else:
        sample = ints(-100, 100)
    out = tuple(_window_padding(n, w, s, padding)[2] for n, w, s in zip(shape, window, strides))
    body = (f"%r = dlvm.reduce_window {kind} %a0 window {_ints_text(window)} strides {_ints_text(strides)} "
            f"padding {padding} : {ttype(shape, dtype)}")
    kw.setdefault("modes", ("fwd",))
    return Case(f"reduce_window_{kind}.w{'x'.join(map(str, window))}s{'x'.join(map(str, strides))}.{padding}", dtype,
                [Arg(shape, dtype, sample)], body, out, dtype, _window_ref(kind, window, strides, padding, dtype),
                family="window", rtol=0.0, **{"module": f"window-{dtype}", **kw})


def window_cases() -> list[Case]:
    cases = []
    for dtype in ("f32", "f64"):
        for shape, window, strides, paddings in WINDOW_SPECS:
            for padding, specs in paddings.items():
                spec = specs[0] if dtype == "f32" else specs[1]
                if not spec:
                    continue
                for kind in ("add", "mul", "max", "min", "mean"):
                    if len(shape) == 4 and padding == "full" and kind not in ("add", "max"):
                        continue
                    # derivatives: every kind in 1-D, add and max in 4-D
                    kind_spec = spec if len(shape) == 1 or kind in ("add", "max") else "fwd"
                    cases.append(window_case(kind, dtype, shape, window, strides, padding,
                                             modes=modes(kind_spec, dtype, [shape])))
    for kind in ("max", "mean", "add"):
        cases.append(window_case(kind, "f32", (4, 8, 32, 32), (1, 1, 3, 3), (1, 1, 1, 1), "half", module="window-f32-big"))
    for kind in ("add", "max", "min", "mul"):
        cases.append(window_case(kind, "i32", (2, 3, 9, 9), (1, 1, 3, 3), (1, 1, 2, 2), "half"))
    cases += dilated_window_cases()
    return cases


def _dilated_window_ref(kind, window, strides, low, high, wd, bd, dtype):
    """lax.reduce_window's general form by brute force over output positions and window offsets."""
    eps = EPS.get(dtype, 0.0)

    def ref(x):
        dilated = [(n - 1) * b + 1 for n, b in zip(x.shape, bd)]
        reach = [(w - 1) * d + 1 for w, d in zip(window, wd)]
        out = tuple((n + lo + hi - r) // s + 1 for n, lo, hi, r, s in zip(dilated, low, high, reach, strides))
        fill = {"add": 0.0, "mean": 0.0, "max": -np.inf, "min": np.inf}[kind]
        acc, count, mag = np.full(out, fill), np.zeros(out), np.zeros(out)
        for offset in np.ndindex(*window):
            # the operand element each window reads at this offset, if any
            p = [np.arange(o) * s + k * d - lo for o, s, k, d, lo in zip(out, strides, offset, wd, low)]
            ok = [(q >= 0) & (q < n) & (q % b == 0) for q, n, b in zip(p, dilated, bd)]
            index = np.ix_(*[np.where(g, q // b, 0) for q, g, b in zip(p, ok, bd)])
            inside = np.ones(out, bool)
            for d, g in enumerate(ok):
                inside &= g.reshape([-1 if e == d else 1 for e in range(len(out))])
            v = np.where(inside, x[index].astype(np.float64), fill)
            acc = np.maximum(acc, v) if kind == "max" else np.minimum(acc, v) if kind == "min" else acc + v
            count += inside
            mag += np.where(inside, np.abs(v), 0.0)
        if kind == "mean":
            return acc / count, (math.prod(window) + 2) * eps * mag / np.maximum(count, 1)
        if kind == "add":
            return acc, (math.prod(window) + 1) * eps * mag
        return acc

    return ref


DILATED_WINDOW_SPECS = [
    # (shape, window, strides, low, high, window dilation, base dilation, f32 modes, f64 modes)
    ((33, 65), (3, 2), (2, 3), (1, 0), (2, 1), (2, 1), (1, 1), "fwd vjp", ""),
    ((2, 3, 9, 9), (1, 1, 3, 3), (1, 1, 2, 2), (0, 0, 1, 1), (0, 0, 1, 1), (1, 1, 2, 2), (1, 1, 1, 1), "fwd", ""),
    ((9,), (3,), (1,), (2,), (1,), (1,), (2,), "fwd vjp", "fwd fd"),
    ((4, 5), (2, 3), (1, 2), (1, 0), (2, 1), (2, 1), (1, 2), "fwd", "fwd fd"),
    ((1, 7), (1, 4), (1, 1), (0, 3), (0, 3), (1, 3), (1, 1), "fwd vjp", "fwd fd"),
]


def dilated_window_cases() -> list[Case]:
    cases = []
    for dtype in ("f32", "f64"):
        for shape, window, strides, low, high, wd, bd, f32_spec, f64_spec in DILATED_WINDOW_SPECS:
            spec = f32_spec if dtype == "f32" else f64_spec
            if not spec:
                continue
            dilated = [(n - 1) * b + 1 for n, b in zip(shape, bd)]
            out = tuple((n + lo + hi - (w - 1) * d - 1) // s + 1
                        for n, lo, hi, w, d, s in zip(dilated, low, high, window, wd, strides))
            for kind in ("add", "max", "min", "mean"):
                sample = {"max": distinct(), "min": distinct()}.get(kind, normal())
                body = (f"%r = dlvm.reduce_window {kind} %a0 window {_ints_text(window)} strides {_ints_text(strides)} "
                        f"padding none low {_ints_text(low)} high {_ints_text(high)} window_dilation {_ints_text(wd)} "
                        f"base_dilation {_ints_text(bd)} : {ttype(shape, dtype)}")
                cases.append(Case(
                    f"reduce_window_{kind}.dilated.w{shape_id_of(window)}.d{shape_id_of(wd)}.b{shape_id_of(bd)}", dtype,
                    [Arg(shape, dtype, sample)], body, out, dtype,
                    _dilated_window_ref(kind, window, strides, low, high, wd, bd, dtype), family="window", rtol=0.0,
                    modes=modes(spec, dtype, [shape]), module=f"window-dilated-{dtype}"))
    return cases


# ----- softmax --------------------------------------------------------------


def _softmax_ref(op, axis, dtype):
    eps = EPS[dtype]

    def ref(x):
        shifted = x - np.max(x, axis=axis, keepdims=True)
        total = np.sum(np.exp(shifted), axis=axis, keepdims=True)
        n = x.shape[axis]
        if op == "softmax":
            r = np.exp(shifted) / total
            return r, (n + 8) * eps * np.abs(r) + eps * 1e-3
        r = shifted - np.log(total)
        return r, (n + 8) * eps * (1 + np.abs(r))

    return ref


def softmax_cases() -> list[Case]:
    cases = []
    specs = {"f32": [((7,), 0), ((33, 65), 0), ((33, 65), 1), ((1, 65), 0), ((65, 1), 1), ((128, 1000), 1),
                     ((3, 4, 5), 1), ((131073,), 0)],
             "f64": [((7,), 0), ((33, 65), 1), ((1, 65), 0), ((3, 4, 5), 2), ((), None)],
             "f16": [((33, 65), 1)]}
    for dtype, shape_axes in specs.items():
        for shape, axis in shape_axes:
            if axis is None:
                continue
            spec = "fwd vjp jvp fd" if _size(shape) <= 64 else ("fwd vjp" if _size(shape) < 200_000 else "fwd")
            if shape[-1] == 1 or shape[0] == 1 or (dtype == "f32" and axis == 0 and len(shape) == 2) or dtype == "f16":
                spec = "fwd"
            spec = spec.replace("jvp", "") if len(shape) > 1 else spec
            for op in ("softmax", "log_softmax"):
                case_modes = modes(spec, dtype, [shape])
                cases.append(Case(f"{op}.a{axis}", dtype, [Arg(shape, dtype, normal(3))],
                                  f"%r = dlvm.{op} %a0 axis {axis} : {ttype(shape, dtype)}", shape, dtype,
                                  _softmax_ref(op, axis, "f16" if dtype == "f16" else dtype), family="softmax",
                                  rtol=0.0, modes=case_modes, module=f"softmax-{dtype}",
                                  grad_tol=(5e-5, 5e-6) if dtype == "f32" else None))
    return cases


# ----- convolve -------------------------------------------------------------


def _conv_ref(dtype, strides, padding, lhs_dil, rhs_dil, groups):
    eps = EPS.get(dtype, 0.0)

    def conv(x, k):
        ns = x.ndim - 2
        st = strides or (1,) * ns
        pad = padding or (0,) * (2 * ns)
        ld = lhs_dil or (1,) * ns
        rd = rhs_dil or (1,) * ns
        n, c = x.shape[:2]
        o, cg = k.shape[:2]
        # dilate the input
        shape = tuple((s - 1) * d + 1 for s, d in zip(x.shape[2:], ld))
        xd = np.zeros((n, c) + shape, dtype=x.dtype)
        xd[(slice(None), slice(None)) + tuple(slice(None, None, d) for d in ld)] = x
        # pad (negative: crop)
        for i in range(ns):
            lo, hi = pad[2 * i], pad[2 * i + 1]
            axis = 2 + i
            if lo < 0:
                xd = np.take(xd, range(-lo, xd.shape[axis]), axis=axis)
            if hi < 0:
                xd = np.take(xd, range(0, xd.shape[axis] + hi), axis=axis)
            widths = [(0, 0)] * xd.ndim
            widths[axis] = (max(lo, 0), max(hi, 0))
            xd = np.pad(xd, widths)
        eff = [(w - 1) * d + 1 for w, d in zip(k.shape[2:], rd)]
        out_sp = [(xd.shape[2 + i] - eff[i]) // st[i] + 1 for i in range(ns)]
        out = np.zeros((n, o) + tuple(out_sp), dtype=np.float64 if dtype in FLOATS else np.int64)
        mag = np.zeros_like(out, dtype=np.float64)
        og = o // groups
        for pos in np.ndindex(*k.shape[2:]):
            index = tuple(slice(p * d, p * d + (m - 1) * s + 1, s) for p, d, m, s in zip(pos, rd, out_sp, st))
            window = xd[(slice(None), slice(None)) + index]  # n, c, out...
            for g in range(groups):
                xs = window[:, g * cg:(g + 1) * cg]
                ks = k[g * og:(g + 1) * og][(slice(None), slice(None)) + pos]  # og, cg
                out[:, g * og:(g + 1) * og] += np.einsum("nc...,oc->no...", xs, ks)
                if dtype in FLOATS:
                    mag[:, g * og:(g + 1) * og] += np.einsum("nc...,oc->no...", np.abs(xs), np.abs(ks))
        if dtype not in FLOATS:
            return out.astype(x.dtype)
        terms = cg * math.prod(k.shape[2:])
        return out, (terms + 2) * eps * mag

    return conv


def conv_case(dtype, xs, ks, strides=None, padding=None, lhs=None, rhs=None, groups=1, name="", **kw) -> Case:
    attrs = ""
    if strides:
        attrs += f" strides {_ints_text(strides)}"
    if padding:
        attrs += f" padding {_ints_text(padding)}"
    if lhs:
        attrs += f" lhs_dilation {_ints_text(lhs)}"
    if rhs:
        attrs += f" rhs_dilation {_ints_text(rhs)}"
    if groups != 1:
        attrs += f" groups {groups}"
    ns = len(xs) - 2
    st, pad = strides or (1,) * ns, padding or (0,) * (2 * ns)
    ld, rd = lhs or (1,) * ns, rhs or (1,) * ns
    out_sp = tuple(((ld[i] * (xs[2 + i] - 1) + 1 + pad[2 * i] + pad[2 * i + 1] - (rd[i] * (ks[2 + i] - 1) + 1))
                    // st[i]) + 1 for i in range(ns))
    out = (xs[0], ks[0]) + out_sp
    sample = normal() if dtype in FLOATS else ints(-10, 10)
    body = f"%r = dlvm.convolve %a0, %a1{attrs} : {ttype(xs, dtype)}, {ttype(ks, dtype)}"
    modes = kw.pop("modes", ("fwd",))
    return Case(f"convolve.{name}", dtype, [Arg(xs, dtype, sample), Arg(ks, dtype, sample)], body, out, dtype,
                _conv_ref(dtype, strides, padding, lhs, rhs, groups), family="conv", rtol=0.0, modes=modes,
                module=kw.pop("module", f"conv-{dtype}"), **kw)


CONV_SPECS = [
    # name, input, kernel, attrs
    ("plain", (2, 3, 9, 9), (4, 3, 3, 3), {}),
    ("stride2.pad1", (2, 3, 9, 9), (4, 3, 3, 3), {"strides": (2, 2), "padding": (1, 1, 1, 1)}),
    ("negpad", (2, 3, 9, 9), (4, 3, 3, 3), {"padding": (-1, 0, 0, -1)}),
    ("lhsdil", (1, 2, 5, 6), (3, 2, 3, 2), {"lhs": (2, 2), "padding": (2, 2, 1, 1)}),
    ("rhsdil", (2, 3, 11, 9), (4, 3, 3, 2), {"rhs": (2, 3)}),
    ("groups3", (2, 6, 7, 7), (6, 2, 3, 3), {"groups": 3}),
    ("depthwise", (2, 4, 9, 9), (4, 1, 3, 3), {"groups": 4, "padding": (1, 1, 1, 1)}),
    ("1d", (2, 3, 33), (5, 3, 4), {"strides": (3,), "padding": (2, 1)}),
    ("3d", (1, 2, 5, 6, 7), (3, 2, 2, 3, 2), {"strides": (1, 2, 1)}),
    ("1x1s2", (2, 5, 8, 8), (7, 5, 1, 1), {"strides": (2, 2)}),
    ("oddwin", (1, 1, 13, 7), (2, 1, 5, 2), {"strides": (1, 3), "rhs": (2, 1)}),
    ("tiny", (1, 2, 4, 4), (2, 2, 2, 2), {"padding": (1, 0, 0, 1)}),
    ("tiny.negpad", (1, 2, 4, 4), (2, 2, 2, 2), {"padding": (-1, 1, 0, -1), "strides": (1, 2)}),
]


def conv_cases() -> list[Case]:
    cases = []
    for dtype in ("f32", "f64"):
        for name, xs, ks, attrs in CONV_SPECS:
            fwd_modes = modes("fwd jvp" if dtype == "f32" else "fwd fd", dtype, [xs, ks])
            known_vjp = "13.1 (reverse in the convolve input gradient)"
            if "negpad" in name:
                known_vjp = "13.6 (convolve gradient with negative padding) / 13.1"
            cases.append(conv_case(dtype, xs, ks, name=name, modes=fwd_modes,
                                   known="13.6 (convolve gradient with negative padding)" if "negpad" in name and
                                   "fd" in fwd_modes else "", **attrs))
            if dtype == "f64" and name not in ("plain", "groups3", "1d", "lhsdil", "tiny", "tiny.negpad"):
                continue
            if dtype == "f32" and name in ("1x1s2", "oddwin", "tiny"):
                continue
            cases.append(conv_case(dtype, xs, ks, name=name, modes=("vjp",), last=True, known=known_vjp,
                                   module=f"conv-grad-{dtype}", **attrs))
    cases.append(conv_case("f32", (8, 16, 32, 32), (32, 16, 3, 3), name="big", padding=(1, 1, 1, 1), modes=("fwd",),
                           module="conv-f32-big"))
    cases.append(conv_case("f32", (8, 16, 32, 32), (32, 16, 3, 3), name="big", padding=(1, 1, 1, 1), modes=("vjp",),
                           module="conv-grad-f32-big", last=True, known="13.1 (reverse in the convolve input gradient)"))
    for name, xs, ks, attrs in CONV_SPECS[:3]:
        cases.append(conv_case("i32", xs, ks, name=name, **attrs))
    return cases


# ----- cast and bitcast -----------------------------------------------------


def _cast_ref(src, dst):
    def ref(x):
        if dst == "i1":
            return x != 0
        if src == "i1":
            return x.astype(NUMPY[dst])  # true is 1 (ODS: "from i1, true is 1")
        if dst in ("f16", "f32", "f64"):
            with np.errstate(over="ignore"):  # overflow to infinity is the point of the edge cases
                return x.astype(NUMPY[dst]).astype(np.float64)
        if dst == "bf16":
            return _round_bf16(x)
        if src in FLOATS:
            info = np.iinfo(NUMPY[dst])
            t = np.trunc(np.nan_to_num(x, nan=0.0, posinf=np.inf, neginf=-np.inf))
            # saturating, NaN -> 0 (XLA); 2^(bits-1) itself is out of range
            limit = 2.0 ** (info.bits - 1)
            inside = np.where((t >= -limit) & (t < limit), t, 0.0).astype(NUMPY[dst])
            return np.where(t >= limit, info.max, np.where(t < -limit, info.min, inside))
        return x.astype(np.int64).astype(NUMPY[dst])  # integer: sign-extend or wrap

    return ref


CASTS = [
    ("f32", "f64", normal(100)), ("f64", "f32", normal(100)), ("f32", "f16", normal(100)), ("f16", "f32", normal(10)),
    ("f64", "f16", normal(100)), ("f32", "bf16", normal(100)), ("f64", "bf16", normal(100)),
    ("f32", "i32", uniform(-1e6, 1e6)), ("f64", "i64", uniform(-1e12, 1e12)), ("f32", "i8", uniform(-128.9, 127.9)),
    ("f64", "i16", uniform(-32768.9, 32767.9)),
    ("i32", "f32", ints(-(2**31), 2**31 - 1)), ("i64", "f64", ints(-(2**62), 2**62)), ("i8", "f16", ints(-128, 127)),
    ("i32", "i8", ints(-(2**31), 2**31 - 1)), ("i8", "i32", ints(-128, 127)), ("i32", "i64", ints(-(2**31), 2**31 - 1)),
    ("i64", "i32", ints(-(2**40), 2**40)), ("i32", "i1", ints(-3, 3)), ("f32", "i1", tiled([0.0, -0.0, 1.0, np.nan, 1e-30, -2.0])),
    ("i1", "i32", bools()), ("i1", "f32", bools()), ("i1", "i8", bools()), ("i1", "f64", bools()),
]


def cast_case(src, dst, dims, sample, **kw) -> Case:
    out_dtype = "f32" if dst == "bf16" else dst
    t = ttype(dims, src)
    if dst == "bf16":
        body = f"""%b = dlvm.cast %a0 to bf16 : {t}
                   %r = dlvm.cast %b to f32 : {ttype(dims, 'bf16')}"""
    else:
        body = f"%r = dlvm.cast %a0 to {dst} : {t}"
    float_pair = src in FLOATS and dst in FLOATS
    modes = kw.pop("modes", ("fwd", "vjp", "jvp") if float_pair and src != "f16" else ("fwd",))
    known = kw.pop("known", "13.4/13.7 (from i1, true is 1)" if src == "i1" else "")
    return Case(f"cast.{src}.{dst}", dst, [Arg(dims, src, sample)], body, dims, out_dtype, _cast_ref(src, dst),
                family="cast", rtol=0.0, modes=modes, wrt=(0,) if float_pair else (), known=known,
                module=kw.pop("module", f"cast-{shape_id_of(dims)}"), **kw)


def cast_cases() -> list[Case]:
    cases = []
    for shape in ((), (33, 65), (131073,)):
        for src, dst, sample in CASTS:
            if _size(shape) >= LARGE and src not in ("f32", "i32"):
                continue
            cases.append(cast_case(src, dst, shape, sample))
    # out of range and NaN (issue 13 item 7: saturate, NaN -> 0, as XLA)
    for src, dst in (("f32", "i32"), ("f32", "i8"), ("f64", "i64"), ("f64", "i32"), ("f32", "i16"), ("f32", "i64")):
        values = [1e10, -1e10, np.inf, -np.inf, np.nan, 300.0, -300.0, 2147483520.0, -2147483648.0, 1e19, -1e19,
                  127.9, -128.9, 0.5, -0.5]
        cases.append(cast_case(src, dst, (len(values),), tiled_exact(values), shape="range",
                               module="cast-range", known="13.7 (float to int casts saturate, NaN -> 0)"))
    # float narrowing: overflow to inf, rounding to nearest even, subnormals
    narrow = [65504.0, 65520.0, 1e5, -1e5, 1e-8, 2.0**-24, 2.0**-25, 1.0 + 2.0**-11, 1.0 + 3 * 2.0**-11, np.nan, np.inf]
    for src in ("f32", "f64"):
        cases.append(cast_case(src, "f16", (len(narrow),), tiled_exact(narrow), shape="edge", module="cast-edge",
                               modes=("fwd",)))
        cases.append(cast_case(src, "bf16", (len(narrow),), tiled_exact(narrow), shape="edge", module="cast-edge",
                               modes=("fwd",)))
    cases.append(cast_case("f64", "f32", (5,), tiled_exact([1e39, -1e39, 1e-46, 3.4028235e38, 1.0 + 2.0**-24]),
                           shape="edge", module="cast-edge", modes=("fwd",)))
    return cases


BITCASTS = [("f32", "i32"), ("i32", "f32"), ("f64", "i64"), ("i64", "f64"), ("f16", "i16"), ("i16", "f16"),
            ("i32", "i32"), ("f32", "f32")]


def _bitcast_ref(src, dst):
    def ref(x):
        return np.asarray(x).astype(NUMPY[src]).view(NUMPY[dst])

    return ref


def bitcast_cases() -> list[Case]:
    cases = []
    for shape in ((), (33, 65), (131073,)):
        for src, dst in BITCASTS:
            if _size(shape) >= LARGE and src not in ("f32", "i32"):
                continue
            if src in FLOATS:
                sample = tiled(special_floats(src)) if shape == (33, 65) else normal(100)
            else:
                sample = ints(np.iinfo(NUMPY[src]).min, np.iinfo(NUMPY[src]).max)
            cases.append(Case(f"bitcast.{src}.{dst}", dst, [Arg(shape, src, sample)],
                              f"%r = dlvm.bitcast %a0 to {dst} : {ttype(shape, src)}", shape, dst,
                              _bitcast_ref(src, dst), family="bitcast", rtol=0.0, exact_interp=dst not in FLOATS,
                              module=f"bitcast-{shape_id_of(shape)}"))
    return cases


# ----- random ---------------------------------------------------------------


def _random_check(low, high, n, dtype):
    # low and high rounded to the element type (bf16 of -0.05 is -0.050048828125)
    rounded = {"f16": lambda v: float(np.float16(v)), "bf16": lambda v: float(_round_bf16(v)),
               "f32": lambda v: float(np.float32(v)), "f64": float}[dtype]
    lo = min(low, rounded(low))

    def check(x):
        x = np.asarray(x, dtype=np.float64)
        if not (np.all(x >= lo) and np.all(x < high)):
            raise AssertionError(f"values outside [{low}, {high}): min {x.min()}, max {x.max()}")
        if n >= 1000:
            mean, var = x.mean(), x.var()
            expect_mean, expect_var = (low + high) / 2, (high - low) ** 2 / 12
            if abs(mean - expect_mean) > 5 * math.sqrt(expect_var / n) + 1e-3 * (high - low):
                raise AssertionError(f"mean {mean}, expected {expect_mean}")
            if abs(var / expect_var - 1) > 0.1:
                raise AssertionError(f"variance {var}, expected {expect_var}")
            if len(np.unique(x)) < min(n, 200) // 2 and dtype != "f16":
                raise AssertionError("too few distinct values")

    return check


def random_cases() -> list[Case]:
    cases = []
    for dtype in ("f32", "f64", "f16", "bf16"):
        for shape, low, high, seed in (((7,), -1.0, 1.0, 0), ((1000,), 0.0, 1.0, 7), ((33, 65), -0.05, 0.05, 3),
                                       ((131073,), 2.0, 5.0, 123456789), ((), -3.0, -1.0, 1)):
            if dtype in ("f16", "bf16") and _size(shape) >= LARGE:
                continue
            if dtype == "bf16":
                body = f"""%b = dlvm.random {_ints_text(shape)} from {low} upto {high} seed {seed} : bf16
                           %r = dlvm.cast %b to f32 : {ttype(shape, 'bf16')}"""
                out = "f32"
            else:
                body = f"%r = dlvm.random {_ints_text(shape)} from {low} upto {high} seed {seed} : {dtype}"
                out = dtype
            cases.append(Case("random", dtype, [], body, shape, out, None, shape=shape_id_of(shape), family="random",
                              exact_interp=True, check=_random_check(low, high, _size(shape), dtype),
                              module="random"))
    return cases


# --------------------------------------------------------------------------
# registry and tests
# --------------------------------------------------------------------------

BUILDERS = [unary_cases, binary_cases, cmp_cases, select_cases, clamp_cases, is_finite_cases, indexing_cases, gather_cases, sort_cases, dot_cases, dot_general_cases, shape_cases, reduce_cases, scan_cases,
            window_cases, softmax_cases, conv_cases, cast_cases, bitcast_cases, random_cases]


@lru_cache(maxsize=1)
def all_cases() -> tuple[Case, ...]:
    cases = [c for build in BUILDERS for c in build()]
    seen: set[str] = set()
    isolated = {c.module: c.isolate for c in cases}
    for c in cases:
        assert isolated[c.module] == c.isolate, f"module {c.module} mixes isolated and in-process cases"
        for m in c.modes:
            key = f"{c.id}-{m}"
            assert key not in seen, f"duplicate case {key}"
            seen.add(key)
    return tuple(cases)


def registry() -> dict[str, list[Case]]:
    out: dict[str, list[Case]] = {}
    for c in all_cases():
        out.setdefault(c.module, []).append(c)
    return out


_REGISTRY = registry()
#: cases that used to abort the process (``last``) run after the others
PARAMS = [
    pytest.param(c, m, id=f"{c.id}-{m}")
    for c in sorted(all_cases(), key=lambda c: c.last)
    for m in c.modes
    if not c.isolate
]
ISOLATED = [pytest.param(c, m, id=f"{c.id}-{m}") for c in all_cases() for m in c.modes if c.isolate]


@pytest.mark.parametrize(("case", "mode"), PARAMS)
def test_op(case: Case, mode: str) -> None:
    run_mode(case, mode, _REGISTRY)


@pytest.mark.parametrize(("case", "mode"), ISOLATED)
def test_op_isolated(case: Case, mode: str) -> None:
    """Cases that have aborted the process (issue 13 item 1), run in child processes."""
    run_isolated(case, mode, _REGISTRY)


def test_matrix_covers_every_op() -> None:
    """Every op of the dialect (from the ODS) appears in the matrix."""
    import pathlib
    import re

    ods = pathlib.Path(__file__).resolve().parents[2] / "dialect" / "include" / "dlvm" / "DLVMOps.td"
    mnemonics = set(re.findall(r'def DLVM_\w+Op\s*:\s*DLVM_\w+<"(\w+)"', ods.read_text()))
    mnemonics.discard("constant")  # literals appear inside other cases' lowering, not as a case of their own
    covered = set()
    for c in all_cases():
        covered.update(re.findall(r"dlvm\.(\w+)", c.body))
    assert mnemonics <= covered, f"ops missing from the matrix: {sorted(mnemonics - covered)}"
