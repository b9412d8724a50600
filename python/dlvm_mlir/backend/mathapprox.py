"""Vectorizable f32 approximations of ``math.exp/log/tanh/erf``.

LLVM has no vector ``exp`` on x86 without a vector math library: a
``math.exp`` on ``vector<16xf32>`` becomes 16 calls to ``expf``.  MLIR's
polynomial approximation patterns are only reachable through a test pass that
the wheels do not ship, so this module rewrites the scalar ``math`` ops (inside
``linalg.generic`` bodies and elsewhere) into plain ``arith`` sequences before
vectorization; the vectorizer then turns them into SIMD code.

The approximations are the classic single-precision ones (Cephes ``expf`` /
``logf``, Eigen's rational ``tanh`` and ``erf``), accurate to a few ulp;
special values (NaN, infinities, overflow, zero, negative ``log`` arguments)
are handled with selects.  f16 ops are computed in f32.  Other ``math`` ops,
and all f64 ops, are left to ``libm``.
"""

from __future__ import annotations

from typing import Callable

from mlir import ir
from mlir.dialects import arith, math

__all__ = ["approximate_math", "APPROXIMATED_OPS"]


class _Emit:
    """Builds arith ops at the current insertion point, for a float type or a vector of it."""

    def __init__(self, value_type: ir.Type) -> None:
        self.type = value_type
        self.is_vector = isinstance(value_type, ir.VectorType)
        element = value_type.element_type if self.is_vector else value_type
        self.f32 = element
        self.i32 = ir.IntegerType.get_signless(32)
        self.int_type = ir.VectorType.get(value_type.shape, self.i32) if self.is_vector else self.i32

    def _const(self, value: float | int, scalar: ir.Type, shaped: ir.Type) -> ir.Value:
        attr = ir.FloatAttr.get(scalar, value) if scalar == self.f32 else ir.IntegerAttr.get(scalar, value)
        if self.is_vector:
            attr = ir.DenseElementsAttr.get_splat(shaped, attr)
        return arith.constant(shaped, attr)

    def f(self, value: float) -> ir.Value:
        return self._const(value, self.f32, self.type)

    def i(self, value: int) -> ir.Value:
        return self._const(value, self.i32, self.int_type)

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
        """2^n for an integer n in [-126, 127]."""
        return self.from_bits(arith.shli(arith.addi(n, self.i(127)), self.i(23)))


def _exp(em: _Emit, x: ir.Value) -> ir.Value:
    """Cephes expf: exp(x) = 2^n * exp(r), |r| <= ln(2)/2.

    2^n is applied as two factors 2^(n/2) so that n in [-150, 128] needs no
    special cases (the product underflows to denormals and overflows to
    infinity exactly like the true result).
    """
    clamped = em.clamp(x, -104.0, 88.72283935546875)
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
    result = em.select(em.cmp("OGT", x, em.f(88.72283935546875)), em.f(float("inf")), result)
    result = em.select(em.cmp("OLT", x, em.f(-104.0)), em.f(0.0), result)
    return em.select(em.is_nan(x), x, result)


def _log(em: _Emit, x: ir.Value) -> ir.Value:
    """Cephes logf: x = m * 2^e with m in [sqrt(1/2), sqrt(2)), then a polynomial in m - 1."""
    positive = arith.maxnumf(x, em.f(1.17549435e-38))
    bits = em.bits(positive)
    e = arith.sitofp(em.type, arith.subi(arith.shrui(bits, em.i(23)), em.i(126)))
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


def _tanh(em: _Emit, x: ir.Value) -> ir.Value:
    """Eigen's rational approximation on [-9, 9] (odd degree-13 / even degree-6)."""
    clamped = em.clamp(x, -7.99881172180175781, 7.99881172180175781)
    x2 = em.mul(clamped, clamped)
    p = em.horner(
        x2,
        [
            -2.76076847742355e-16, 2.00018790482477e-13, -8.60467152213735e-11, 5.12229709037114e-08,
            1.48572235717979e-05, 6.37261928875436e-04, 4.89352455891786e-03,
        ],
    )
    p = em.mul(p, clamped)
    q = em.horner(x2, [1.19825839466702e-06, 1.18534705686654e-04, 2.26843463243900e-03, 4.89352518554385e-03])
    result = em.div(p, q)
    tiny = em.cmp("OLT", math.absf(x), em.f(0.0004))
    result = em.select(tiny, x, result)
    return em.select(em.is_nan(x), x, result)


def _erf(em: _Emit, x: ir.Value) -> ir.Value:
    """Eigen's rational approximation of erf on [-4, 4] (saturating outside)."""
    clamped = em.clamp(x, -4.0, 4.0)
    x2 = em.mul(clamped, clamped)
    p = em.horner(
        x2,
        [
            -2.72614225801306e-10, 2.77068142495902e-08, -2.10102402082508e-06, -5.69250639462346e-05,
            -7.34990630326855e-04, -2.95459980854025e-03, -1.60960333262415e-02,
        ],
    )
    p = em.mul(p, clamped)
    q = em.horner(
        x2,
        [-1.45660718464996e-05, -2.13374055278905e-04, -1.68282697438203e-03, -7.37332916720468e-03,
         -1.42647390514189e-02],
    )
    result = em.div(p, q)
    return em.select(em.is_nan(x), x, result)


_EXPANSIONS: dict[str, Callable[[_Emit, ir.Value], ir.Value]] = {
    "math.exp": _exp,
    "math.log": _log,
    "math.tanh": _tanh,
    "math.erf": _erf,
}

APPROXIMATED_OPS = tuple(_EXPANSIONS)


def _float_kind(value_type: ir.Type) -> str | None:
    element = value_type.element_type if isinstance(value_type, ir.VectorType) else value_type
    if isinstance(element, ir.F32Type):
        return "f32"
    if isinstance(element, ir.F16Type):
        return "f16"
    return None


def _with_type(value_type: ir.Type, element: ir.Type) -> ir.Type:
    if isinstance(value_type, ir.VectorType):
        return ir.VectorType.get(value_type.shape, element)
    return element


def _rewrite(op: ir.Operation) -> None:
    expand = _EXPANSIONS[op.name]
    result_type = op.results[0].type
    kind = _float_kind(result_type)
    with ir.InsertionPoint(op), op.location:
        operand = op.operands[0]
        if kind == "f16":
            f32_type = _with_type(result_type, ir.F32Type.get())
            value = expand(_Emit(f32_type), arith.extf(f32_type, operand))
            value = arith.truncf(result_type, value)
        else:
            value = expand(_Emit(result_type), operand)
    op.results[0].replace_all_uses_with(value)
    op.erase()


def approximate_math(module: ir.Module) -> int:
    """Replace f32/f16 ``math.exp/log/tanh/erf`` in ``module``; returns the count."""
    targets: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name in _EXPANSIONS and _float_kind(op.results[0].type) is not None:
            targets.append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    with module.context:
        for op in targets:
            _rewrite(op)
    return len(targets)
