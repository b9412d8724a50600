"""The semantics decided in issue 13 (docs/dialect-rationale.md, "Semantics decided"):
compiled code, the reference interpreter and the constant folders against the decided
values, written out here independently of all three.

- i1 is a boolean ordered false < true (cmp, min/max, relu, reductions).
- Integer division never traps (XLA): x / 0 = -1, x mod 0 = x, MIN / -1 = MIN, MIN mod -1 = 0.
- float -> int casts truncate and saturate, NaN -> 0; int -> narrower int wraps.
- Float min/max propagate NaN.
- Unsigned integers (ui8 ... ui64) order, divide (x / 0 = MAX, x mod 0 = x), convert
  (zero-extend; float -> unsigned saturates to [0, MAX], NaN -> 0) as unsigned; the
  bitwise ops, wrapping add/sub/mul and shift_right_arithmetic (the top bit fills) are
  those of the same bits.
- Derivatives at kinks and ties follow JAX: abs'(0) = 1, relu'(0) = 0, max/min ties give
  half to each operand, reduce max/min share equally, reduce_window max goes to the first
  maximal element of each window.

Inputs repeat a pattern of special values to 7, 1000 and 70000 elements: below one vector
tile, above it (with a remainder), and above the CPU back end's thread split
(schedule.py: 2^14 iterations). The folders are checked at the sizes they fold (up to
2^16 elements).
"""

from __future__ import annotations

import functools
import itertools
import math

import numpy as np
import pytest
from mlir import ir, passmanager

import dlvm_mlir
from dlvm_mlir import interpreter
from dlvm_mlir.ad.synthesis import differentiate
from dlvm_mlir.errors import DLVMError
from dlvm_mlir.testing import check_gradients, check_tangents

SIZES = (7, 1000, 70000)
FOLD_SIZES = (7, 1000)

NP = {"i1": np.bool_, "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
      "ui8": np.uint8, "ui16": np.uint16, "ui32": np.uint32, "ui64": np.uint64,
      "f16": np.float16, "f32": np.float32, "f64": np.float64}
BITS = {"i8": 8, "i16": 16, "i32": 32, "i64": 64}


def ttype(n: int | None, el: str) -> str:
    return f"tensor<{n}x{el}>" if n is not None else f"tensor<{el}>"


def tiled(base, n: int, el: str) -> np.ndarray:
    return np.resize(np.asarray(base, dtype=NP[el]), n)


# --------------------------------------------------------------------------
# Three ways to evaluate a function
# --------------------------------------------------------------------------


@functools.lru_cache(maxsize=None)
def _compiled(source: str):
    return dlvm_mlir.compile(source)


def compiled(source: str, name: str, *args):
    return _as_list(_compiled(source)[name](*args))


@functools.lru_cache(maxsize=None)
def _differentiated(source: str) -> str:
    """The source with its derivative declarations synthesized (dlvm-differentiate)."""
    with dlvm_mlir.make_context(), ir.Location.unknown():
        module = ir.Module.parse(source)
        differentiate(module)
        return str(module)


def interpreted(source: str, name: str, *args):
    return _as_list(interpreter.run(_differentiated(source), name, *args))


def _literal(a: np.ndarray) -> str:
    """An exact MLIR dense literal (floats as hex bit patterns)."""
    flat = a.reshape(-1)
    if a.dtype == np.bool_:
        items = ["true" if v else "false" for v in flat]
    elif a.dtype.kind == "f":
        bits = {2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize]
        width = 2 * a.dtype.itemsize
        items = [f"0x{int(v):0{width}X}" for v in flat.view(bits)]
    else:
        items = [str(int(v)) for v in flat]
    return f"dense<[{', '.join(items)}]>" if a.ndim else f"dense<{items[0]}>"


def folded(source: str, name: str, *args):
    """Calls ``name`` on constants from a new function, inlines the call and runs
    canonicalize: every op must fold away (only constants are left), then the constants
    are read back."""
    ctx = dlvm_mlir.make_context()
    with ctx, ir.Location.unknown():
        module = ir.Module.parse(source)
        fn = next(op for op in module.body.operations
                  if ir.StringAttr(op.attributes["sym_name"]).value == name)
        ftype = ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value)
        inputs = [str(t) for t in ftype.inputs]
        results = ", ".join(str(t) for t in ftype.results)
    consts = "".join(f"  %c{i} = dlvm.constant {_literal(np.asarray(a))} : {t}\n"
                     for i, (a, t) in enumerate(zip(args, inputs, strict=True)))
    operands = ", ".join(f"%c{i}" for i in range(len(args)))
    caller = (f"func.func @folded() -> ({results}) {{\n{consts}"
              f"  %r:{len(ftype.results)} = func.call @{name}({operands}) : ({', '.join(inputs)}) -> ({results})\n"
              f"  return {', '.join(f'%r#{i}' for i in range(len(ftype.results)))} : {results}\n}}\n")
    with ctx, ir.Location.unknown():
        module = ir.Module.parse(source + caller)
        passmanager.PassManager.parse("builtin.module(inline,canonicalize)").run(module.operation)
        caller_op = next(op for op in module.body.operations
                         if ir.StringAttr(op.attributes["sym_name"]).value == "folded")
        left = {op.operation.name for op in caller_op.regions[0].blocks[0].operations}
        assert left <= {"dlvm.constant", "func.return"}, f"not folded: {sorted(left)}\n{caller_op}"
        out = str(module)
    return _as_list(interpreter.run(out, "folded"))


def _as_list(out):
    return [np.asarray(o) for o in (out if isinstance(out, (tuple, list)) else [out])]


EVALUATORS = {"compiled": compiled, "interpreter": interpreted, "folded": folded}


def evaluators(n: int):
    return [e for e in EVALUATORS if e != "folded" or n in FOLD_SIZES]


def cases(sizes=SIZES, evaluated=tuple(EVALUATORS)):
    return [pytest.param(e, n, id=f"{e}-{n}") for n in sizes for e in evaluators(n) if e in evaluated]


def assert_same(got, want, what: str) -> None:
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype}, expected {want.dtype}"
    if got.dtype.kind == "f":
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=what)
        ok = ~np.isnan(want)
        np.testing.assert_array_equal(got[ok], want[ok], err_msg=what)
    else:
        np.testing.assert_array_equal(got, want, err_msg=what)


# --------------------------------------------------------------------------
# i1: false < true
# --------------------------------------------------------------------------

# every pair of booleans, and runs of equal values for the reductions
BOOL_X = [True, True, False, False, True, False, True]
BOOL_Y = [True, False, True, False, False, False, True]
BOOL_CMP = {"lt": lambda x, y: ~x & y, "le": lambda x, y: ~x | y, "gt": lambda x, y: x & ~y,
            "ge": lambda x, y: x | ~y, "eq": lambda x, y: x == y, "ne": lambda x, y: x != y}


def bool_source(n: int) -> str:
    t, s = ttype(n, "i1"), ttype(None, "i1")
    cmps = "".join(f"  %c{i} = dlvm.cmp {p}, %x, %y : {t}, {t}\n" for i, p in enumerate(BOOL_CMP))
    types = ", ".join([t] * 12)
    rtypes = ", ".join([s] * 6)
    return f"""func.func @s_bool(%x: {t}, %y: {t}) -> ({types}) {{
{cmps}  %mn = dlvm.min %x, %y : {t}, {t}
  %mx = dlvm.max %x, %y : {t}, {t}
  %r = dlvm.relu %x : {t}
  %f = dlvm.constant dense<false> : {s}
  %sm = dlvm.max %x, %f : {t}, {s}
  %a = dlvm.abs %y : {t}
  %sg = dlvm.sign %y : {t}
  return %c0, %c1, %c2, %c3, %c4, %c5, %mn, %mx, %r, %sm, %a, %sg : {types}
}}
func.func @s_bool_scan(%x: {t}) -> ({t}, {t}, {ttype(n - 1, "i1")}, {ttype(n - 1, "i1")}) {{
  %0 = dlvm.scan max %x dim 0 : {t}
  %1 = dlvm.scan min %x dim 0 : {t}
  %2 = dlvm.reduce_window max %x window [2] strides [1] padding none : {t}
  %3 = dlvm.reduce_window min %x window [2] strides [1] padding none : {t}
  return %0, %1, %2, %3 : {t}, {t}, {ttype(n - 1, "i1")}, {ttype(n - 1, "i1")}
}}
func.func @s_bool_reduce(%x: {t}) -> ({rtypes}) {{
  %rmax = dlvm.reduce max %x dims [0] : {t}
  %rmin = dlvm.reduce min %x dims [0] : {t}
  %nx = dlvm.not %x : {t}
  %all = dlvm.or %x, %nx : {t}, {t}
  %none = dlvm.and %x, %nx : {t}, {t}
  %amax = dlvm.reduce max %all dims [0] : {t}
  %amin = dlvm.reduce min %all dims [0] : {t}
  %nmax = dlvm.reduce max %none dims [0] : {t}
  %nmin = dlvm.reduce min %none dims [0] : {t}
  return %rmax, %rmin, %amax, %amin, %nmax, %nmin : {rtypes}
}}
"""


@pytest.mark.parametrize("how,n", cases())
def test_bool_order(how, n):
    x, y = tiled(BOOL_X, n, "i1"), tiled(BOOL_Y, n, "i1")
    got = EVALUATORS[how](bool_source(n), "s_bool", x, y)
    want = [f(x, y) for f in BOOL_CMP.values()]
    want += [x & y, x | y, x, x, y, y]  # min is and, max is or; relu, abs, sign are the identity
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        assert_same(g, w, f"result {i}")


@pytest.mark.parametrize("how,n", cases(evaluated=("compiled", "interpreter")))
def test_bool_reductions(how, n):
    """max is any, min is all (identities false and true); reductions are not folded."""
    got = EVALUATORS[how](bool_source(n), "s_bool_reduce", tiled(BOOL_X, n, "i1"))
    t, f = np.array(True), np.array(False)
    for i, (g, w) in enumerate(zip(got, [t, f, t, t, f, f], strict=True)):
        assert_same(g, w, f"result {i}")
    x = tiled(BOOL_X, n, "i1")
    got = EVALUATORS[how](bool_source(n), "s_bool_scan", x)
    want = [np.logical_or.accumulate(x), np.logical_and.accumulate(x), x[:-1] | x[1:], x[:-1] & x[1:]]
    for name, g, w in zip(["scan max", "scan min", "window max", "window min"], got, want, strict=True):
        assert_same(g, w, name)


# --------------------------------------------------------------------------
# Integer division: never undefined
# --------------------------------------------------------------------------


def _int_pairs(bits: int):
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    xs = [7, -7, 0, lo, lo, lo, hi, 5, -7, 7, -7, lo, hi, 1, -1, 6]
    ys = [0, 0, 0, -1, 0, 1, -1, -1, 2, -2, -2, 2, 0, -1, 1, 3]
    return xs, ys, lo


def _ref_div(x, y, lo, floor):
    if y == 0:
        return -1
    if x == lo and y == -1:
        return lo
    q = abs(x) // abs(y)
    if (x < 0) != (y < 0):
        q = -q
        if floor and q * y != x:
            q -= 1
    return q


def _ref_mod(x, y, lo):
    if y == 0:
        return x
    if y == -1:
        return 0
    return x - y * (x // y)  # Python's // floors


def div_source(n: int, el: str) -> str:
    t = ttype(n, el)
    s = ttype(None, el)
    return f"""func.func @s_div(%x: {t}, %y: {t}, %z: {s}) -> ({t}, {t}, {t}, {t}, {t}, {t}) {{
  %0 = dlvm.div %x, %y : {t}, {t}
  %1 = dlvm.trunc_div %x, %y : {t}, {t}
  %2 = dlvm.floor_div %x, %y : {t}, {t}
  %3 = dlvm.mod %x, %y : {t}, {t}
  %4 = dlvm.floor_div %x, %z : {t}, {s}
  %5 = dlvm.mod %x, %z : {t}, {s}
  return %0, %1, %2, %3, %4, %5 : {t}, {t}, {t}, {t}, {t}, {t}
}}
"""


@pytest.mark.parametrize("el", ["i8", "i32", "i64"])
@pytest.mark.parametrize("how,n", cases())
def test_integer_division(how, n, el):
    xs, ys, lo = _int_pairs(BITS[el])
    x, y = tiled(xs, n, el), tiled(ys, n, el)
    zero = np.zeros((), NP[el])
    got = EVALUATORS[how](div_source(n, el), "s_div", x, y, zero)
    div = [_ref_div(a, b, lo, False) for a, b in zip(xs, ys)]
    floor = [_ref_div(a, b, lo, True) for a, b in zip(xs, ys)]
    mod = [_ref_mod(a, b, lo) for a, b in zip(xs, ys)]
    want = [tiled(div, n, el), tiled(div, n, el), tiled(floor, n, el), tiled(mod, n, el),
            np.full(n, -1, NP[el]), x]
    for name, g, w in zip(["div", "trunc_div", "floor_div", "mod", "floor_div by 0", "mod by 0"], got, want,
                          strict=True):
        assert_same(g, w, name)
    # the identity the choices keep: floor_div(x, y) * y + mod(x, y) == x (wrapping)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(got[2] * y + got[3], x)


def test_integer_division_i1():
    src = """func.func @s_bdiv(%x: tensor<4xi1>, %y: tensor<4xi1>) -> (tensor<4xi1>, tensor<4xi1>, tensor<4xi1>) {
  %0 = dlvm.div %x, %y : tensor<4xi1>, tensor<4xi1>
  %1 = dlvm.floor_div %x, %y : tensor<4xi1>, tensor<4xi1>
  %2 = dlvm.mod %x, %y : tensor<4xi1>, tensor<4xi1>
  return %0, %1, %2 : tensor<4xi1>, tensor<4xi1>, tensor<4xi1>
}
"""
    x = np.array([True, True, False, False])
    y = np.array([True, False, True, False])
    for how, fn in EVALUATORS.items():
        q, f, r = fn(src, "s_bdiv", x, y)
        assert_same(q, x | ~y, f"{how} div")  # x / true = x, x / false = true (-1)
        assert_same(f, x | ~y, f"{how} floor_div")
        assert_same(r, x & ~y, f"{how} mod")  # x mod false = x, x mod true = 0


# --------------------------------------------------------------------------
# Casts
# --------------------------------------------------------------------------

FLOATS = [math.nan, math.inf, -math.inf, 1e20, -1e20, 300.0, -300.0, -0.7, 2.9, -0.0, 0.5,
          127.9, -128.9, 128.0, -129.0, 32767.5, -32768.5, 2.0**31, -(2.0**31), 2147483520.0,
          2.0**63, -(2.0**63), 9.2e18, 65504.0, -math.nan]


def _ref_float_to_int(v: float, bits: int) -> int:
    if math.isnan(v):
        return 0
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    if math.isinf(v):
        return hi if v > 0 else lo
    return min(max(math.trunc(v), lo), hi)


def cast_source(n: int, src: str) -> str:
    t = ttype(n, src)
    outs = [ttype(n, el) for el in ("i8", "i16", "i32", "i64", "i1")]
    return f"""func.func @s_cast(%x: {t}) -> ({", ".join(outs)}) {{
  %0 = dlvm.cast %x to i8 : {t}
  %1 = dlvm.cast %x to i16 : {t}
  %2 = dlvm.cast %x to i32 : {t}
  %3 = dlvm.cast %x to i64 : {t}
  %4 = dlvm.cast %x to i1 : {t}
  return %0, %1, %2, %3, %4 : {", ".join(outs)}
}}
"""


@pytest.mark.parametrize("src", ["f16", "f32", "f64"])
@pytest.mark.parametrize("how,n", cases())
def test_float_to_int_saturates(how, n, src):
    with np.errstate(over="ignore"):
        base = np.array(FLOATS, dtype=NP[src])  # values as the source type holds them
    x = np.resize(base, n)
    got = EVALUATORS[how](cast_source(n, src), "s_cast", x)
    for el, g in zip(("i8", "i16", "i32", "i64"), got):
        want = tiled([_ref_float_to_int(float(v), BITS[el]) for v in base], n, el)
        assert_same(g, want, f"{src} -> {el}")
    assert_same(got[4], x != 0, f"{src} -> i1 (NaN is true, -0.0 false)")


def int_cast_source(n: int) -> str:
    t64, t32, t1 = ttype(n, "i64"), ttype(n, "i32"), ttype(n, "i1")
    return f"""func.func @s_icast(%x: {t64}, %b: {t1}) -> ({ttype(n, "i8")}, {t32}, {ttype(n, "f32")}, {t32}, {ttype(n, "f64")}) {{
  %0 = dlvm.cast %x to i8 : {t64}
  %1 = dlvm.cast %x to i32 : {t64}
  %2 = dlvm.cast %x to f32 : {t64}
  %3 = dlvm.cast %b to i32 : {t1}
  %4 = dlvm.cast %b to f64 : {t1}
  return %0, %1, %2, %3, %4 : {ttype(n, "i8")}, {t32}, {ttype(n, "f32")}, {t32}, {ttype(n, "f64")}
}}
"""


@pytest.mark.parametrize("how,n", cases())
def test_int_casts_wrap(how, n):
    ints = [2**24 + 1, 300, -129, 65535, 2**31, -(2**31) - 1, 2**63 - 1, -(2**63), -(2**24) - 1, 7, -1]
    x = tiled(ints, n, "i64")
    b = tiled(BOOL_X, n, "i1")
    got = EVALUATORS[how](int_cast_source(n), "s_icast", x, b)

    def wrap(v, bits):
        v &= (1 << bits) - 1
        return v - (1 << bits) if v >> (bits - 1) else v

    assert_same(got[0], tiled([wrap(v, 8) for v in ints], n, "i8"), "i64 -> i8 wraps")
    assert_same(got[1], tiled([wrap(v, 32) for v in ints], n, "i32"), "i64 -> i32 wraps")
    # one rounding to nearest even: 2^24 + 1 -> 2^24
    assert_same(got[2], tiled([float(np.float32(v)) for v in ints], n, "f32"), "i64 -> f32")
    assert got[2][0] == 2.0**24
    assert_same(got[3], b.astype(np.int32), "i1 -> i32 (true is 1)")
    assert_same(got[4], b.astype(np.float64), "i1 -> f64")


def test_int_to_bf16_rounds_through_f32():
    """As XLA: 2^24 + 2^16 + 1 -> f32 2^24 + 2^16 (tie to even) -> bf16 2^24 (tie to even)."""
    src = """func.func @s_bf(%x: tensor<3xi32>) -> tensor<3xf32> {
  %b = dlvm.cast %x to bf16 : tensor<3xi32>
  %r = dlvm.cast %b to f32 : tensor<3xbf16>
  return %r : tensor<3xf32>
}
"""
    x = np.array([2**24 + 2**16 + 1, -(2**24 + 2**16 + 1), 2**24 + 2**16 + 2**15], np.int32)
    want = np.array([2.0**24, -(2.0**24), 2.0**24 + 2**17], np.float32)
    for how, fn in EVALUATORS.items():
        assert_same(fn(src, "s_bf", x)[0], want, how)


# --------------------------------------------------------------------------
# Float min/max: NaN propagates
# --------------------------------------------------------------------------


def minmax_source(n: int) -> str:
    t, s = ttype(n, "f64"), ttype(None, "f64")
    return f"""func.func @s_minmax(%x: {t}, %y: {t}) -> ({t}, {t}, {t}) {{
  %0 = dlvm.min %x, %y : {t}, {t}
  %1 = dlvm.max %x, %y : {t}, {t}
  %2 = dlvm.relu %x : {t}
  return %0, %1, %2 : {t}, {t}, {t}
}}
func.func @s_extrema(%x: {t}, %z: {t}) -> ({s}, {s}, {s}) {{
  %0 = dlvm.reduce max %x dims [0] : {t}
  %1 = dlvm.reduce max %z dims [0] : {t}
  %2 = dlvm.reduce min %z dims [0] : {t}
  return %0, %1, %2 : {s}, {s}, {s}
}}
"""


MINMAX_X = [1.0, math.nan, 3.0, -math.inf, math.nan, -2.0, 5.0]
MINMAX_Y = [2.0, 1.0, math.nan, 0.0, math.nan, -3.0, 5.0]


@pytest.mark.parametrize("how,n", cases())
def test_float_min_max_nan(how, n):
    x, y = tiled(MINMAX_X, n, "f64"), tiled(MINMAX_Y, n, "f64")
    got = EVALUATORS[how](minmax_source(n), "s_minmax", x, y)
    with np.errstate(invalid="ignore"):
        assert_same(got[0], np.minimum(x, y), "min: NaN propagates")
        assert_same(got[1], np.maximum(x, y), "max: NaN propagates")
        assert_same(got[2], np.maximum(x, 0.0), "relu: NaN stays")


@pytest.mark.parametrize("how,n", cases(evaluated=("compiled", "interpreter")))
def test_float_reduce_extrema_nan(how, n):
    x = tiled(MINMAX_X, n, "f64")
    z = np.linspace(-3.0, 7.0, n)
    got = EVALUATORS[how](minmax_source(n), "s_extrema", x, z)
    assert_same(got[0], np.array(math.nan), "reduce max with NaN elements")
    assert_same(got[1], np.array(7.0), "reduce max")
    assert_same(got[2], np.array(-3.0), "reduce min")


@pytest.mark.parametrize("how,n", [("compiled", 7), ("compiled", 1000), ("interpreter", 7), ("folded", 7)])
def test_float_min_max_signed_zero(how, n):
    """IEEE 754-2019 minimum/maximum: -0.0 < +0.0 (arith.minimumf/maximumf, XLA)."""
    x = np.resize(np.array([0.0, -0.0, -0.0, 0.0, 0.0, -0.0, -0.0]), n)
    y = np.resize(np.array([-0.0, 0.0, -0.0, 0.0, -0.0, 0.0, 0.0]), n)
    got = EVALUATORS[how](minmax_source(n), "s_minmax", x, y)
    np.testing.assert_array_equal(np.signbit(got[0]), np.signbit(x) | np.signbit(y))
    np.testing.assert_array_equal(np.signbit(got[1]), np.signbit(x) & np.signbit(y))
    assert not np.signbit(got[2]).any()  # relu(-0.0) = +0.0
    if how != "folded":  # reductions are not folded
        got = EVALUATORS[how](minmax_source(n), "s_extrema", x, y)
        assert not np.signbit(got[1])  # the max of {+0, -0} is +0
        assert np.signbit(got[2])  # the min of {+0, -0} is -0


# --------------------------------------------------------------------------
# Derivatives at kinks and ties (JAX's choices)
# --------------------------------------------------------------------------


def grad_source(n: int) -> str:
    t = ttype(n, "f64")
    return f"""func.func @s_kinks(%x: {t}, %y: {t}) -> ({t}, {t}, {t}, {t}) {{
  %0 = dlvm.abs %x : {t}
  %1 = dlvm.relu %x : {t}
  %2 = dlvm.max %x, %y : {t}, {t}
  %3 = dlvm.min %x, %y : {t}, {t}
  return %0, %1, %2, %3 : {t}, {t}, {t}, {t}
}}
func.func private @s_kinks_grad({t}, {t}, {t}, {t}, {t}, {t}) -> ({t}, {t})
    attributes {{dlvm.gradient = #dlvm.gradient<of @s_kinks seedable>}}
func.func private @s_kinks_jvp({t}, {t}, {t}, {t}) -> ({t}, {t}, {t}, {t})
    attributes {{dlvm.tangent = #dlvm.tangent<of @s_kinks>}}
"""


KINK_X = [0.0, -0.0, 1.5, -1.5, 2.0, 2.0, math.nan, 3.0, -0.0]
KINK_Y = [0.0, 0.0, 1.5, 0.0, 2.0, 1.0, 1.0, math.nan, 0.0]


def _kink_partials(x, y):
    """d/dx of |x|, relu(x), max(x, y), min(x, y), and d/dy of max, min (decided values)."""
    nan = np.isnan(x) | np.isnan(y)
    dabs = np.where(x >= 0, 1.0, -1.0)
    drelu = np.where(x > 0, 1.0, 0.0)
    tie = x == y

    def side(a, b, pick):
        return np.where(nan, 0.0, np.where(tie, 0.5, np.where(pick(a, b), 1.0, 0.0)))

    return (dabs, drelu, side(x, y, np.greater), side(x, y, np.less),
            side(y, x, np.greater), side(y, x, np.less))


@pytest.mark.parametrize("how,n", [pytest.param(h, n, id=f"{h}-{n}")
                                   for n in (9, 1000) for h in ("compiled", "interpreter")])
def test_derivatives_at_kinks(how, n):
    x, y = tiled(KINK_X, n, "f64"), tiled(KINK_Y, n, "f64")
    dabs, drelu, dmax_x, dmin_x, dmax_y, dmin_y = _kink_partials(x, y)
    src = grad_source(n)
    run = EVALUATORS[how]
    # reverse mode, one seed per result: the gradients are the partials
    ones, zeros = np.ones(n), np.zeros(n)
    for seeds, want_x, want_y in [
        ((ones, zeros, zeros, zeros), dabs, zeros),
        ((zeros, ones, zeros, zeros), drelu, zeros),
        ((zeros, zeros, ones, zeros), dmax_x, dmax_y),
        ((zeros, zeros, zeros, ones), dmin_x, dmin_y),
    ]:
        gx, gy = run(src, "s_kinks_grad", x, y, *seeds)
        assert_same(gx, want_x, "gradient wrt x")
        assert_same(gy, want_y, "gradient wrt y")
    # forward mode along x, then along y
    t = run(src, "s_kinks_jvp", x, y, ones, zeros)
    for got, want, what in zip(t, (dabs, drelu, dmax_x, dmin_x), ("abs", "relu", "max", "min"), strict=True):
        assert_same(got, want, f"tangent of {what} along x")
    t = run(src, "s_kinks_jvp", x, y, zeros, ones)
    for got, want, what in zip(t[2:], (dmax_y, dmin_y), ("max", "min"), strict=True):
        assert_same(got, want, f"tangent of {what} along y")


def test_max_tie_matches_central_differences():
    """At a tie the central difference of max/min is exactly 1/2 per operand: an
    independent check of the rule (abs and relu at 0 are choices FD cannot confirm)."""
    src = """func.func @f(%x: tensor<1000xf64>, %y: tensor<1000xf64>) -> tensor<1000xf64> {
  %0 = dlvm.max %x, %y : tensor<1000xf64>, tensor<1000xf64>
  %1 = dlvm.min %x, %y : tensor<1000xf64>, tensor<1000xf64>
  %2 = dlvm.mul %0, %1 : tensor<1000xf64>, tensor<1000xf64>
  return %2 : tensor<1000xf64>
}
"""
    x = np.resize([1.0, 2.0, -3.0, 0.5], 1000)
    y = np.resize([1.0, -2.0, -3.0, 4.0], 1000)
    check_gradients(src, "f", x, y, step=1e-4).assert_close(1e-8)
    check_tangents(src, "f", x, y, step=1e-4).assert_close(1e-8)


def reduce_grad_source(n: int) -> str:
    t = ttype(n, "f64")
    w = n // 4
    return f"""func.func @s_red(%x: {t}) -> (tensor<f64>, tensor<f64>, {ttype(w, "f64")}) {{
  %0 = dlvm.reduce max %x dims [0] : {t}
  %1 = dlvm.reduce min %x dims [0] : {t}
  %2 = dlvm.reduce_window max %x window [4] strides [4] padding none : {t}
  return %0, %1, %2 : tensor<f64>, tensor<f64>, {ttype(w, "f64")}
}}
func.func private @s_red_grad({t}, tensor<f64>, tensor<f64>, {ttype(w, "f64")}) -> {t}
    attributes {{dlvm.gradient = #dlvm.gradient<of @s_red seedable>}}
func.func private @s_red_jvp({t}, {t}) -> (tensor<f64>, tensor<f64>, {ttype(w, "f64")})
    attributes {{dlvm.tangent = #dlvm.tangent<of @s_red>}}
"""


@pytest.mark.parametrize("how,n", [pytest.param(h, n, id=f"{h}-{n}")
                                   for n in (8, 1000) for h in ("compiled", "interpreter")])
def test_reduction_ties(how, n):
    """reduce max/min share the adjoint among the tied elements; reduce_window max gives it
    to the first maximal element of each window (row-major), as JAX."""
    x = tiled([1.0, 3.0, 3.0, 2.0, 5.0, -1.0, 5.0, 5.0], n, "f64")
    src = reduce_grad_source(n)
    run = EVALUATORS[how]
    w = n // 4
    one, zero = np.ones(()), np.zeros(())
    (g,) = run(src, "s_red_grad", x, one, zero, np.zeros(w))
    tied_max = x == x.max()
    assert_same(g, tied_max / tied_max.sum(), "reduce max: equal shares")
    (g,) = run(src, "s_red_grad", x, zero, one, np.zeros(w))
    tied_min = x == x.min()
    assert_same(g, tied_min / tied_min.sum(), "reduce min: equal shares")
    seed = np.arange(1.0, w + 1.0)
    (g,) = run(src, "s_red_grad", x, zero, zero, seed)
    windows = x.reshape(w, 4)
    first = np.zeros_like(windows)
    first[np.arange(w), np.argmax(windows, axis=1)] = 1.0  # argmax: the first maximum
    assert_same(g, (first * seed[:, None]).reshape(n), "reduce_window max: first maximum")
    direction = np.resize([10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0], n)
    t = run(src, "s_red_jvp", x, direction)
    assert_same(t[0], np.array(direction[tied_max].mean()), "tangent of reduce max")
    assert_same(t[1], np.array(direction[tied_min].mean()), "tangent of reduce min")
    assert_same(t[2], (first * direction.reshape(w, 4)).sum(axis=1), "tangent of reduce_window max")


@pytest.mark.parametrize("m,k,n", [(2, 2, 2), (7, 33, 65), (64, 300, 40)])
def test_i1_dot_is_a_boolean_matrix_product(m, k, n):
    """i1 dot: AND products, OR sum (numpy matmul on bool, XLA dot on PRED), compiled and interpreted."""
    src = f"""func.func @b(%a: tensor<{m}x{k}xi1>, %b: tensor<{k}x{n}xi1>) -> tensor<{m}x{n}xi1> {{
  %0 = dlvm.dot %a, %b : tensor<{m}x{k}xi1>, tensor<{k}x{n}xi1>
  return %0 : tensor<{m}x{n}xi1>
}}"""
    rng = np.random.default_rng(m * k * n)
    a, b = rng.random((m, k)) < 0.05, rng.random((k, n)) < 0.05
    for how in ("compiled", "interpreter"):
        np.testing.assert_array_equal(EVALUATORS[how](src, "b", a, b)[0], a @ b, err_msg=how)


# --------------------------------------------------------------------------
# Unsigned integers
# --------------------------------------------------------------------------

UNSIGNED_BINARY = ("add", "sub", "mul", "div", "trunc_div", "floor_div", "mod", "rem", "min", "max",
                   "shift_right_arithmetic", "shift_right_logical")
UNSIGNED_CMP = ("lt", "le", "gt", "ge", "eq", "ne")


def _unsigned_pairs(bits: int):
    """Pairs around 0, the top bit (as signed: negative) and MAX, zero divisors included."""
    top, mx = 1 << (bits - 1), (1 << bits) - 1
    xs = [7, 0, top, top, mx, mx, 5, top + 3, 1, mx - 1, 200, 3, 0, top - 1, mx, 6]
    ys = [0, 0, 1, mx, 2, mx, top, 2, mx, 7, 3, 200, 5, top, 0, 3]
    return xs, ys


def _ref_unsigned(name: str, x: int, y: int, bits: int) -> int:
    mask, top = (1 << bits) - 1, 1 << (bits - 1)
    if name in ("div", "trunc_div", "floor_div"):
        return mask if y == 0 else x // y
    if name in ("mod", "rem"):
        return x if y == 0 else x % y
    if name == "shift_right_arithmetic":
        signed_x = x - (1 << bits) if x & top else x
        return (signed_x >> min(y, bits - 1)) & mask
    if name == "shift_right_logical":
        return 0 if y >= bits else x >> y
    return {"add": x + y, "sub": x - y, "mul": x * y, "min": min(x, y), "max": max(x, y)}[name] & mask


def unsigned_source(n: int, el: str) -> str:
    t, b = ttype(n, el), ttype(n, "i1")
    ops = "".join(f"  %b{i} = dlvm.{name} %x, %y : {t}, {t}\n" for i, name in enumerate(UNSIGNED_BINARY))
    cmps = "".join(f"  %c{i} = dlvm.cmp {p}, %x, %y : {t}, {t}\n" for i, p in enumerate(UNSIGNED_CMP))
    results = [f"%b{i}" for i in range(len(UNSIGNED_BINARY))] + [f"%c{i}" for i in range(len(UNSIGNED_CMP))]
    types = [t] * len(UNSIGNED_BINARY) + [b] * len(UNSIGNED_CMP) + [t] * 4
    return f"""func.func @s_unsigned(%x: {t}, %y: {t}) -> ({", ".join(types)}) {{
{ops}{cmps}  %r = dlvm.relu %x : {t}
  %a = dlvm.abs %x : {t}
  %s = dlvm.sign %x : {t}
  %n = dlvm.neg %x : {t}
  return {", ".join(results)}, %r, %a, %s, %n : {", ".join(types)}
}}
"""


@pytest.mark.parametrize("el", ["ui8", "ui16", "ui32", "ui64"])
@pytest.mark.parametrize("how,n", cases())
def test_unsigned_elementwise(how, n, el):
    bits = int(el[2:])
    xs, ys = _unsigned_pairs(bits)
    x, y = tiled(xs, n, el), tiled(ys, n, el)
    got = EVALUATORS[how](unsigned_source(n, el), "s_unsigned", x, y)
    for name, g in zip(UNSIGNED_BINARY, got, strict=False):
        assert_same(g, tiled([_ref_unsigned(name, a, b, bits) for a, b in zip(xs, ys)], n, el), f"{el} {name}")
    compare = {"lt": int.__lt__, "le": int.__le__, "gt": int.__gt__, "ge": int.__ge__, "eq": int.__eq__,
               "ne": int.__ne__}
    for p, g in zip(UNSIGNED_CMP, got[len(UNSIGNED_BINARY):], strict=False):
        assert_same(g, tiled([compare[p](a, b) for a, b in zip(xs, ys)], n, "i1"), f"{el} cmp {p}")
    relu, abs_, sign, neg = got[-4:]
    mask = (1 << bits) - 1
    assert_same(relu, x, "relu is the identity")
    assert_same(abs_, x, "abs is the identity")
    assert_same(sign, tiled([int(a != 0) for a in xs], n, el), "sign is 0 or 1")
    assert_same(neg, tiled([-a & mask for a in xs], n, el), "neg wraps")


def unsigned_reduce_source(n: int, el: str) -> str:
    t, s = ttype(n, el), ttype(None, el)
    return f"""func.func @s_ureduce(%x: {t}, %lo: {s}, %hi: {s}) -> ({s}, {s}, {s}, tensor<i32>, tensor<i32>, {t}, {t}) {{
  %0 = dlvm.reduce max %x dims [0] : {t}
  %1 = dlvm.reduce min %x dims [0] : {t}
  %2 = dlvm.reduce add %x dims [0] : {t}
  %3 = dlvm.argmax %x axis 0 : {t} -> tensor<i32>
  %4 = dlvm.argmin %x axis 0 : {t} -> tensor<i32>
  %5 = dlvm.scan max %x dim 0 : {t}
  %6 = dlvm.clamp %lo, %x, %hi : {s}, {t}, {s}
  return %0, %1, %2, %3, %4, %5, %6 : {s}, {s}, {s}, tensor<i32>, tensor<i32>, {t}, {t}
}}
"""


@pytest.mark.parametrize("el", ["ui8", "ui64"])
@pytest.mark.parametrize("how,n", cases(evaluated=("compiled", "interpreter")))
def test_unsigned_reductions(how, n, el):
    bits = int(el[2:])
    top, mx = 1 << (bits - 1), (1 << bits) - 1
    values = [3, top, 1, top + 5, 0, 2, mx - 1, top - 1]
    x = tiled(values, n, el)
    lo, hi = np.array(2, NP[el]), np.array(top + 4, NP[el])
    got = EVALUATORS[how](unsigned_reduce_source(n, el), "s_ureduce", x, lo, hi)
    ints = [int(v) for v in x]
    assert_same(got[0], np.array(max(ints), NP[el]), "reduce max")
    assert_same(got[1], np.array(min(ints), NP[el]), "reduce min")
    assert_same(got[2], np.array(sum(ints) & mx, NP[el]), "reduce add wraps")
    assert_same(got[3], np.array(ints.index(max(ints)), np.int32), "argmax: the first largest")
    assert_same(got[4], np.array(ints.index(min(ints)), np.int32), "argmin: the first smallest")
    assert_same(got[5], np.array(list(itertools.accumulate(ints, max)), NP[el]), "scan max")
    assert_same(got[6], np.array([min(max(v, 2), top + 4) for v in ints], NP[el]), "clamp")


def unsigned_cast_source(n: int) -> str:
    f, u8, u16, u32, u64 = (ttype(n, e) for e in ("f64", "ui8", "ui16", "ui32", "ui64"))
    i8, i16, i64, f32 = ttype(n, "i8"), ttype(n, "i16"), ttype(n, "i64"), ttype(n, "f32")
    outs = [u8, u16, u32, u64, i16, f32, u8, u16, i64, u8]
    return f"""func.func @s_ucast(%f: {f}, %s: {i8}, %u: {u64}) -> ({", ".join(outs)}) {{
  %0 = dlvm.cast %f to ui8 : {f}
  %1 = dlvm.cast %f to ui16 : {f}
  %2 = dlvm.cast %f to ui32 : {f}
  %3 = dlvm.cast %f to ui64 : {f}
  %u8 = dlvm.cast %s to ui8 : {i8}
  %4 = dlvm.cast %u8 to i16 : {u8}
  %5 = dlvm.cast %u to f32 : {u64}
  %6 = dlvm.cast %s to ui8 : {i8}
  %7 = dlvm.cast %s to ui16 : {i8}
  %8 = dlvm.cast %u to i64 : {u64}
  %9 = dlvm.bitcast %s to ui8 : {i8}
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9 : {", ".join(outs)}
}}
"""


@pytest.mark.parametrize("how,n", cases())
def test_unsigned_casts(how, n):
    floats = [math.nan, math.inf, -math.inf, -0.7, -1.0, -5.0, 0.5, 255.9, 256.0, 65535.5, 65536.0,
              2.0**32, 2.0**63, 2.0**64, 1e30, 3.0]
    signed8 = [-1, -128, 127, 0, 5, -7, 100, -100]
    wide = [2**64 - 1, 2**63, 2**63 - 1, 0, 2**53 + 1, 12345, 2**40, 1]
    f, s, u = tiled(floats, n, "f64"), tiled(signed8, n, "i8"), tiled(wide, n, "ui64")
    got = EVALUATORS[how](unsigned_cast_source(n), "s_ucast", f, s, u)

    def saturate(v: float, bits: int) -> int:
        if math.isnan(v) or v <= -1:
            return 0
        return min(math.trunc(v), (1 << bits) - 1) if not math.isinf(v) else (1 << bits) - 1

    for i, el in enumerate(("ui8", "ui16", "ui32", "ui64")):
        assert_same(got[i], tiled([saturate(v, int(el[2:])) for v in floats], n, el), f"f64 -> {el} saturates")
    assert_same(got[4], tiled([v & 0xFF for v in signed8], n, "i16"), "ui8 -> i16 zero-extends")
    assert_same(got[5], tiled([float(np.float32(float(v))) for v in wide], n, "f32"), "ui64 -> f32 (unsigned)")
    assert_same(got[6], tiled([v & 0xFF for v in signed8], n, "ui8"), "i8 -> ui8 keeps the bits")
    assert_same(got[7], tiled([v & 0xFFFF for v in signed8], n, "ui16"), "i8 -> ui16 sign-extends")
    assert_same(got[8], tiled([v - 2**64 if v >= 2**63 else v for v in wide], n, "i64"), "ui64 -> i64 wraps")
    assert_same(got[9], tiled([v & 0xFF for v in signed8], n, "ui8"), "bitcast i8 -> ui8")


@pytest.mark.parametrize("m,k,n", [(3, 5, 4), (33, 70, 65)])
def test_unsigned_dot_wraps(m, k, n):
    src = f"""func.func @d(%a: tensor<{m}x{k}xui8>, %b: tensor<{k}x{n}xui8>) -> tensor<{m}x{n}xui8> {{
  %0 = dlvm.dot %a, %b : tensor<{m}x{k}xui8>, tensor<{k}x{n}xui8>
  return %0 : tensor<{m}x{n}xui8>
}}"""
    rng = np.random.default_rng(m + k + n)
    a, b = rng.integers(0, 256, (m, k), dtype=np.uint8), rng.integers(0, 256, (k, n), dtype=np.uint8)
    want = ((a.astype(np.int64) @ b.astype(np.int64)) & 0xFF).astype(np.uint8)
    for how in ("compiled", "interpreter"):
        assert_same(EVALUATORS[how](src, "d", a, b)[0], want, how)


def test_unsigned_types_are_rejected_where_they_do_not_fit():
    """ui1 and signed `si` types are not dlvm elements; indices stay signless."""
    bad = {
        "ui1": "func.func @f(%x: tensor<4xui1>) -> tensor<4xui1> {\n"
               "  %y = dlvm.neg %x : tensor<4xui1>\n  return %y : tensor<4xui1>\n}\n",
        "si8": "func.func @f(%x: tensor<4xsi8>) -> tensor<4xsi8> {\n"
               "  %y = dlvm.neg %x : tensor<4xsi8>\n  return %y : tensor<4xsi8>\n}\n",
        "index": "func.func @f(%x: tensor<4xf32>, %i: tensor<ui32>) -> tensor<2xf32> {\n"
                 "  %y = dlvm.dynamic_slice %x at [%i] sizes [2] : tensor<4xf32>, tensor<ui32>\n"
                 "  return %y : tensor<2xf32>\n}\n",
    }
    for what, text in bad.items():
        with pytest.raises(DLVMError) as err:
            dlvm_mlir.compile(text)
        assert ":2:" in str(err.value) and "error" in str(err.value), (what, str(err.value))
