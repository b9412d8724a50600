"""Vectorizable expansions of ``math`` ops: fast f32 ones and accurate ones.

LLVM has no vector ``exp`` on x86 without a vector math library: a
``math.exp`` on ``vector<16xf32>`` becomes 16 calls to ``expf``.  MLIR's
polynomial approximation patterns are only reachable through a test pass that
the wheels do not ship, so this module rewrites the scalar ``math`` ops (inside
``linalg.generic`` bodies and elsewhere) into plain ``arith`` sequences before
vectorization; the vectorizer then turns them into SIMD code.

Two sets (docs/cpu.md, "Accuracy of math functions", has the measured errors):

* :func:`approximate_math` (the back end's ``fast-math`` option): f32/f16
  ``exp`` and ``log`` (Cephes ``expf``/``logf``, denormal inputs and results
  included), and ``erf`` and ``tanh`` (evaluated in f64 by the kernels below
  and rounded once to f32), all within 2 ulp; special
  values (NaN, infinities, overflow, zero, negative ``log`` arguments) are
  handled with selects.  f16 ops are computed in f32.  Other ``math`` ops, and
  f64 ``exp/log/tanh/erf``, are left to ``libm``.
* :func:`expand_accurate_math` (always): ``expm1`` and ``log1p`` of every
  float type, and f32/f16 ``erfc``, ``sinh`` and ``cosh``, which are computed
  by libm's f64 functions and rounded once (libm's f32 ones are off by up to
  2.5 ulp).  Upstream's ``convert-math-to-llvm`` lowers them to
  ``exp(x) - 1`` and ``log(1 + x)``, which lose every digit near 0 (and the
  sign of -0.0).  Here they are f64 kernels (argument reduction and a Taylor
  polynomial for ``expm1``; Kahan's ``log(u) * x / (u - 1)`` with ``u = 1 + x``
  over an f64 ``log`` kernel for ``log1p``), within a few f64 ulp; narrower
  types are computed in f64 and rounded once.  Upstream's ``expm1``/``log1p``
  forms of ``convert-math-to-llvm`` are then never reached.
"""

from __future__ import annotations

import math as pymath
from typing import Callable

from mlir import ir
from mlir.dialects import arith, math

__all__ = ["approximate_math", "expand_accurate_math", "APPROXIMATED_OPS", "ACCURATE_OPS", "PROMOTED_OPS"]


class _Emit:
    """Builds arith ops at the current insertion point, for f32 or f64 (or a vector of it)."""

    def __init__(self, value_type: ir.Type) -> None:
        self.type = value_type
        self.is_vector = isinstance(value_type, ir.VectorType)
        element = value_type.element_type if self.is_vector else value_type
        self.float = element
        self.width = 64 if isinstance(element, ir.F64Type) else 32
        self.mantissa = 52 if self.width == 64 else 23
        self.bias = 1023 if self.width == 64 else 127
        self.int = ir.IntegerType.get_signless(self.width)
        self.int_type = ir.VectorType.get(value_type.shape, self.int) if self.is_vector else self.int

    def _const(self, value: float | int, scalar: ir.Type, shaped: ir.Type) -> ir.Value:
        attr = ir.FloatAttr.get(scalar, value) if scalar == self.float else ir.IntegerAttr.get(scalar, value)
        if self.is_vector:
            attr = ir.DenseElementsAttr.get_splat(shaped, attr)
        return arith.constant(shaped, attr)

    def f(self, value: float) -> ir.Value:
        return self._const(value, self.float, self.type)

    def i(self, value: int) -> ir.Value:
        return self._const(value, self.int, self.int_type)

    def add(self, a: ir.Value, b: ir.Value) -> ir.Value:
        return arith.addf(a, b)

    def sub(self, a: ir.Value, b: ir.Value) -> ir.Value:
        return arith.subf(a, b)

    def mul(self, a: ir.Value, b: ir.Value) -> ir.Value:
        return arith.mulf(a, b)

    def div(self, a: ir.Value, b: ir.Value) -> ir.Value:
        return arith.divf(a, b)

    def fma(self, a: ir.Value, b: ir.Value, c: ir.Value) -> ir.Value:
        return math.fma(a, b, c)

    def horner(self, x: ir.Value, coefficients: list[float]) -> ir.Value:
        """``c0*x^(n-1) + ... + c_{n-1}`` with FMAs (highest degree first)."""
        acc = self.f(coefficients[0])
        for c in coefficients[1:]:
            acc = self.fma(acc, x, self.f(c))
        return acc

    def clamp(self, x: ir.Value, low: float, high: float) -> ir.Value:
        return arith.minnumf(arith.maxnumf(x, self.f(low)), self.f(high))

    def cmp(self, predicate: str, a: ir.Value, b: ir.Value) -> ir.Value:
        return arith.cmpf(getattr(arith.CmpFPredicate, predicate), a, b)

    def select(self, cond: ir.Value, a: ir.Value, b: ir.Value) -> ir.Value:
        return arith.select(cond, a, b)

    def is_nan(self, x: ir.Value) -> ir.Value:
        return self.cmp("UNO", x, x)

    def bits(self, x: ir.Value) -> ir.Value:
        return arith.bitcast(self.int_type, x)

    def from_bits(self, x: ir.Value) -> ir.Value:
        return arith.bitcast(self.type, x)

    def power_of_two(self, n: ir.Value) -> ir.Value:
        """2^n for an integer n in the normal exponent range ([-126, 127] for f32)."""
        return self.from_bits(arith.shli(arith.addi(n, self.i(self.bias)), self.i(self.mantissa)))


def _exp(em: _Emit, x: ir.Value, special: bool = True) -> ir.Value:
    """Cephes expf: exp(x) = 2^n * exp(r), |r| <= ln(2)/2.

    2^n is applied as two factors 2^(n/2) so that n in [-150, 128] needs no
    special cases (the product underflows to denormals and overflows to
    infinity exactly like the true result).  ``special=False`` when x is
    known to be a number in [-87, 88].
    """
    clamped = em.clamp(x, -104.0, 88.72283935546875) if special else x
    n = math.floor(em.fma(clamped, em.f(1.44269504088896341), em.f(0.5)))
    r = em.fma(n, em.f(-0.693359375), clamped)
    r = em.fma(n, em.f(2.12194440e-4), r)
    poly = em.horner(
        r,
        [1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1],
    )
    expr = em.add(em.fma(poly, em.mul(r, r), r), em.f(1.0))
    whole = arith.fptosi(em.int_type, n)
    half = arith.shrsi(whole, em.i(1))
    result = em.mul(em.mul(expr, em.power_of_two(half)), em.power_of_two(arith.subi(whole, half)))
    if not special:
        return result
    result = em.select(em.cmp("OGT", x, em.f(88.72283935546875)), em.f(float("inf")), result)
    result = em.select(em.cmp("OLT", x, em.f(-104.0)), em.f(0.0), result)
    return em.select(em.is_nan(x), x, result)


def _log(em: _Emit, x: ir.Value) -> ir.Value:
    """Cephes logf: x = m * 2^e with m in [sqrt(1/2), sqrt(2)), then a polynomial in m - 1.

    Denormal inputs are scaled by 2^23 first.
    """
    denormal = em.cmp("OLT", x, em.f(1.17549435e-38))
    scaled = em.select(denormal, em.mul(x, em.f(8388608.0)), x)
    positive = arith.maxnumf(scaled, em.f(1.17549435e-38))
    bits = em.bits(positive)
    e = arith.sitofp(em.type, arith.subi(arith.shrui(bits, em.i(23)), em.i(126)))
    e = em.sub(e, em.select(denormal, em.f(23.0), em.f(0.0)))
    m = em.from_bits(arith.ori(arith.andi(bits, em.i(0x007FFFFF)), em.i(0x3F000000)))
    small = em.cmp("OLT", m, em.f(0.707106781186547524))
    e = em.sub(e, em.select(small, em.f(1.0), em.f(0.0)))
    m = em.sub(em.add(m, em.select(small, m, em.f(0.0))), em.f(1.0))
    z = em.mul(m, m)
    poly = em.horner(
        m,
        [
            7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1, 1.4249322787e-1,
            -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1, 3.3333331174e-1,
        ],
    )
    y = em.mul(em.mul(poly, m), z)
    y = em.fma(e, em.f(-2.12194440e-4), y)
    y = em.fma(z, em.f(-0.5), y)
    result = em.fma(e, em.f(0.693359375), em.add(m, y))
    result = em.select(em.cmp("OEQ", x, em.f(float("inf"))), x, result)
    result = em.select(em.cmp("OEQ", x, em.f(0.0)), em.f(float("-inf")), result)
    result = em.select(em.cmp("OLT", x, em.f(0.0)), em.f(float("nan")), result)
    return em.select(em.is_nan(x), x, result)


# (tanh(x) - x) / x^3 as a polynomial in s = x^2 on [0, 0.3025] (|x| <= 0.55): Chebyshev fit
# of a 40-digit evaluation, relative error 1.1e-9
_TANH_SMALL = [
    0.002528503051074428, -0.008527935132693414, 0.021818874759278743, -0.0539647466583278,
    0.13333324375984312, -0.3333333329610203,
]


def _tanh(em: _Emit, x: ir.Value) -> ir.Value:
    """f32 tanh within 2 ulp: x + x^3 P(x^2) for |x| < 0.55, else
    sign(x) (1 - 2 / (1 + e^(2|x|))) with the division by the exact
    1 + e (Fast2Sum, one FMA correction step), so the error is about that of
    the Cephes exp; |x| is clamped to 10, where tanh rounds to 1."""
    magnitude = arith.minnumf(math.absf(x), em.f(10.0))
    s = em.mul(x, x)
    small = em.fma(em.mul(x, s), em.horner(s, _TANH_SMALL), x)
    e = _exp(em, em.add(magnitude, magnitude), special=False)
    d = em.add(e, em.f(1.0))
    d_low = em.add(em.sub(e, d), em.f(1.0))  # exact: e >= 1
    q = em.div(em.f(2.0), d)
    residual = em.fma(arith.negf(q), d, em.f(2.0))
    q = em.fma(em.sub(residual, em.mul(q, d_low)), em.mul(q, em.f(0.5)), q)  # 1/d ~ q/2
    large = math.copysign(em.sub(em.f(1.0), q), x)
    result = em.select(em.cmp("OLT", magnitude, em.f(0.55)), small, large)
    result = em.select(em.cmp("OEQ", x, em.f(0.0)), x, result)  # keeps -0.0
    return em.select(em.is_nan(x), x, result)


# --------------------------------------------------------------------------
# f64 kernels (accurate; used for f64 and, rounded once, for narrower types)
# --------------------------------------------------------------------------

_LN2_HI = 6.93147180369123816490e-01  # 32 significant bits: k * _LN2_HI is exact for |k| < 2^21
_LN2_LO = 1.90821492927058770002e-10
_INV_LN2 = 1.44269504088896338700e00
# expm1(r) = r + r^2 * (1/2! + r/3! + ... + r^11/13!) on |r| <= ln(2)/2: truncation below 2e-17 r
_EXPM1_TAYLOR = [1.0 / pymath.factorial(n) for n in range(13, 1, -1)]
# 2 atanh(s) = 2 s + s * R(s^2), R(z) = 2z/3 + 2z^2/5 + ... (|s| <= 0.172, z <= 0.0295: 11 terms)
_ATANH_TAYLOR = [2.0 / (2 * k + 1) for k in range(11, 0, -1)]


def _expm1_f64(em: _Emit, x: ir.Value, overflow: bool = True) -> ir.Value:
    """expm1 in f64: x = k ln2 + r (Cody-Waite), Taylor polynomial for expm1(r),
    then 2^k expm1(r) + (2^k - 1) (exact 2^k - 1 for k <= 52) or, for
    larger k, (expm1(r) + 1) 2^k as two factors so that the result can reach
    the largest double.  ``overflow=False`` when x <= 40 is known."""
    clamped = em.clamp(x, -40.0, 709.8)  # below -40 the result rounds to -1
    k = math.roundeven(em.mul(clamped, em.f(_INV_LN2)))
    r = em.fma(k, em.f(-_LN2_HI), clamped)
    r = em.fma(k, em.f(-_LN2_LO), r)
    e = em.fma(em.mul(r, r), em.horner(r, _EXPM1_TAYLOR), r)
    whole = arith.fptosi(em.int_type, k)
    scale = em.power_of_two(whole)
    result = em.select(em.cmp("OEQ", k, em.f(0.0)), e, em.fma(scale, e, em.sub(scale, em.f(1.0))))
    if overflow:
        half = arith.shrsi(whole, em.i(1))
        large = em.mul(em.mul(em.add(e, em.f(1.0)), em.power_of_two(half)), em.power_of_two(arith.subi(whole, half)))
        result = em.select(em.cmp("OGT", k, em.f(52.0)), large, result)
    result = em.select(em.cmp("OEQ", x, em.f(0.0)), x, result)  # keeps -0.0
    return em.select(em.is_nan(x), x, result)


def _log_f64_positive(em: _Emit, u: ir.Value) -> ir.Value:
    """ln(u) for a positive, normal, finite f64 u (fdlibm's reduction)."""
    bits = em.bits(u)
    exponent = arith.subi(arith.shrui(bits, em.i(52)), em.i(1023))
    m = em.from_bits(arith.ori(arith.andi(bits, em.i(0x000FFFFFFFFFFFFF)), em.i(0x3FF0000000000000)))
    big = em.cmp("OGT", m, em.f(1.4142135623730951))
    m = em.select(big, em.mul(m, em.f(0.5)), m)
    e = em.add(arith.sitofp(em.type, exponent), em.select(big, em.f(1.0), em.f(0.0)))
    f = em.sub(m, em.f(1.0))  # exact: m in [sqrt(1/2), sqrt(2)]
    s = em.div(f, em.add(f, em.f(2.0)))
    z = em.mul(s, s)
    big_r = em.mul(z, em.horner(z, _ATANH_TAYLOR))
    log_m = em.sub(f, em.mul(s, em.sub(f, big_r)))  # ln(1 + f) = f - s (f - R)
    return em.fma(e, em.f(_LN2_HI), em.fma(e, em.f(_LN2_LO), log_m))


def _log1p_f64(em: _Emit, x: ir.Value) -> ir.Value:
    """Kahan: u = 1 + x; x where u == 1, else ln(u) * (x / (u - 1))."""
    u = em.add(x, em.f(1.0))
    positive = arith.maxnumf(u, em.f(2.2250738585072014e-308))  # other lanes are selected away
    result = em.mul(_log_f64_positive(em, positive), em.div(x, em.sub(u, em.f(1.0))))
    result = em.select(em.cmp("OEQ", u, em.f(1.0)), x, result)
    result = em.select(em.cmp("OEQ", x, em.f(float("inf"))), x, result)
    result = em.select(em.cmp("OEQ", x, em.f(-1.0)), em.f(float("-inf")), result)
    result = em.select(em.cmp("OLT", x, em.f(-1.0)), em.f(float("nan")), result)
    return em.select(em.is_nan(x), x, result)


def _f64_type(value_type: ir.Type) -> ir.Type:
    return _with_type(value_type, ir.F64Type.get())


def _in_f64(kernel: Callable[[_Emit, ir.Value], ir.Value]) -> Callable[[_Emit, ir.Value], ir.Value]:
    """Run an f64 kernel on a narrower float: extend, compute, round once."""

    def expand(em: _Emit, x: ir.Value) -> ir.Value:
        if em.width == 64:
            return kernel(em, x)
        wide = _f64_type(em.type)
        return arith.truncf(em.type, kernel(_Emit(wide), arith.extf(wide, x)))

    return expand


# The kernels below serve f32 results only, so they need about 1e-9 relative accuracy.
# erf(x) / x = 2/sqrt(pi) sum (-1)^n x^2n / (n! (2n + 1)), n = 11 .. 0: truncation below 1.1e-9 for |x| <= 1
_ERF_TAYLOR = [2.0 / pymath.sqrt(pymath.pi) * (-1) ** n / (pymath.factorial(n) * (2 * n + 1)) for n in range(11, -1, -1)]
# erfcx(a) = erfc(a) exp(a^2) on [1, 4] in t = (a - 2.5) / 1.5: Chebyshev fit (degree 13) of
# math.erfc(a) * math.exp(a * a), relative error below 1.4e-9
_ERFCX_1_4 = [
    -5.058181686322658e-06, 1.3819090664736966e-05, -2.0489633576044978e-05, 5.4947243546256134e-05,
    -0.00016449745976808075, 0.00041450810274027116, -0.0010047884575594304, 0.0024017016931156504,
    -0.005570928960133668, 0.01248970367197284, -0.027005275783428605, 0.05611047258424654,
    -0.1115210207491781, 0.2108063642759419,
]
# expm1(r) Taylor through r^10 / 10! (|r| <= ln(2)/2: truncation below 1e-12 relative)
_EXPM1_TAYLOR_SHORT = [1.0 / pymath.factorial(n) for n in range(10, 1, -1)]


def _exp_f64_moderate(em: _Emit, x: ir.Value) -> ir.Value:
    """exp(x) for f64 x in [-700, 700] to about 1e-12 (the reduction of :func:`_expm1_f64`)."""
    k = math.roundeven(em.mul(x, em.f(_INV_LN2)))
    r = em.fma(k, em.f(-_LN2_HI), x)
    r = em.fma(k, em.f(-_LN2_LO), r)
    e = em.fma(em.mul(r, r), em.horner(r, _EXPM1_TAYLOR_SHORT), r)
    scale = em.power_of_two(arith.fptosi(em.int_type, k))
    return em.fma(scale, e, scale)


def _erf_for_f32(em: _Emit, x: ir.Value) -> ir.Value:
    """erf accurate to about 1e-9 (enough for one f32 rounding): Taylor series
    below |x| = 1, 1 - exp(-x^2) erfcx(|x|) on [1, 4], +-1 beyond (where f32
    erf rounds to +-1). x^2 is exact for an f32 x."""
    x2 = em.mul(x, x)
    small = em.mul(x, em.horner(x2, _ERF_TAYLOR))
    magnitude = em.clamp(math.absf(x), 1.0, 4.0)
    t = em.mul(em.sub(magnitude, em.f(2.5)), em.f(1.0 / 1.5))
    tail = em.mul(_exp_f64_moderate(em, em.mul(em.f(-1.0), em.mul(magnitude, magnitude))), em.horner(t, _ERFCX_1_4))
    large = math.copysign(em.sub(em.f(1.0), tail), x)
    result = em.select(em.cmp("OLT", math.absf(x), em.f(1.0)), small, large)
    return em.select(em.is_nan(x), x, result)


#: fast-math approximations (f32 and f16 only)
_EXPANSIONS: dict[str, Callable[[_Emit, ir.Value], ir.Value]] = {
    "math.exp": _exp,
    "math.log": _log,
    "math.tanh": _tanh,
    "math.erf": _in_f64(_erf_for_f32),
}

#: accurate expansions (every float type)
_ACCURATE: dict[str, Callable[[_Emit, ir.Value], ir.Value]] = {
    "math.expm1": _in_f64(_expm1_f64),
    "math.log1p": _in_f64(_log1p_f64),
}

APPROXIMATED_OPS = tuple(_EXPANSIONS)
ACCURATE_OPS = tuple(_ACCURATE)
#: computed in f64 (libm) for narrower float types
PROMOTED_OPS = ("math.erfc", "math.sinh", "math.cosh")


def _element(value_type: ir.Type) -> ir.Type:
    return value_type.element_type if isinstance(value_type, ir.VectorType) else value_type


def _float_kind(value_type: ir.Type) -> str | None:
    element = _element(value_type)
    if isinstance(element, ir.F32Type):
        return "f32"
    if isinstance(element, ir.F16Type):
        return "f16"
    return None


def _with_type(value_type: ir.Type, element: ir.Type) -> ir.Type:
    if isinstance(value_type, ir.VectorType):
        return ir.VectorType.get(value_type.shape, element)
    return element


def _rewrite(op: ir.Operation, expand: Callable[[_Emit, ir.Value], ir.Value]) -> None:
    result_type = op.results[0].type
    element = _element(result_type)
    with ir.InsertionPoint(op), op.location:
        operand = op.operands[0]
        if not isinstance(element, (ir.F32Type, ir.F64Type)):
            # f16, bf16: computed in f32
            f32_type = _with_type(result_type, ir.F32Type.get())
            value = expand(_Emit(f32_type), arith.extf(f32_type, operand))
            value = arith.truncf(result_type, value)
        else:
            value = expand(_Emit(result_type), operand)
    op.results[0].replace_all_uses_with(value)
    op.erase()


def _expand(module: ir.Module, table: dict[str, Callable[[_Emit, ir.Value], ir.Value]], selects) -> int:
    targets: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name in table and selects(op.results[0].type):
            targets.append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    with module.context:
        for op in targets:
            _rewrite(op, table[op.name])
    return len(targets)


def approximate_math(module: ir.Module) -> int:
    """Replace f32/f16 ``math.exp/log/tanh/erf`` in ``module``; returns the count."""
    return _expand(module, _EXPANSIONS, lambda t: _float_kind(t) is not None)


def _promote(op: ir.Operation) -> None:
    """The same op on f64 (a libm call), rounded once to the op's type."""
    result_type = op.results[0].type
    wide = _f64_type(result_type)
    single = _with_type(result_type, ir.F32Type.get())
    with ir.InsertionPoint(op), op.location:
        operand = op.operands[0]
        if result_type != single:  # f16/bf16 <-> f64 through f32 (no __truncdfhf2 in the JIT)
            operand = arith.extf(single, operand)
        extended = arith.extf(wide, operand)
        value = ir.Operation.create(op.name, results=[wide], operands=[extended]).results[0]
        value = arith.truncf(single, value)
        if result_type != single:
            value = arith.truncf(result_type, value)
    op.results[0].replace_all_uses_with(value)
    op.erase()


def _is_narrow_float(value_type: ir.Type) -> bool:
    element = _element(value_type)
    return isinstance(element, ir.FloatType) and not isinstance(element, ir.F64Type)


def expand_accurate_math(module: ir.Module) -> int:
    """Replace ``math.expm1/log1p`` of any float type, and f32/f16/bf16
    ``math.erfc/sinh/cosh`` (whose libm f32 versions are off by up to 2.5 ulp)
    by their f64 versions; returns the count."""
    count = _expand(module, _ACCURATE, lambda t: isinstance(_element(t), ir.FloatType))
    targets: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name in PROMOTED_OPS and _is_narrow_float(op.results[0].type):
            targets.append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    with module.context:
        for op in targets:
            _promote(op)
    return count + len(targets)
