"""Derivative rules of the math dialect (float scalars and float tensors)."""

from __future__ import annotations

import math

from dlvm_mlir.ad import vocab
from dlvm_mlir.ad.registry import adjoint, inactive, tangent
from dlvm_mlir.ad.rules.common import elementwise_binary, elementwise_unary
from dlvm_mlir.ad.vocab import add, cmp, cos, div, exp, log, mul, neg, rsqrt, select, sign, sin, sinh, cosh, square, sub

inactive(["math.floor", "math.ceil", "math.round", "math.roundeven", "math.trunc"])

_LN2 = math.log(2.0)
_LN10 = math.log(10.0)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)

elementwise_unary("math.exp", lambda x, y, g: mul(g, y))
elementwise_unary("math.exp2", lambda x, y, g: mul(g, mul(y, _LN2)))
elementwise_unary("math.expm1", lambda x, y, g: mul(g, add(y, 1.0)))
elementwise_unary("math.log", lambda x, y, g: div(g, x))
elementwise_unary("math.log2", lambda x, y, g: div(g, mul(x, _LN2)))
elementwise_unary("math.log10", lambda x, y, g: div(g, mul(x, _LN10)))
elementwise_unary("math.log1p", lambda x, y, g: div(g, add(x, 1.0)))
elementwise_unary("math.sqrt", lambda x, y, g: div(g, mul(y, 2.0)))
elementwise_unary("math.rsqrt", lambda x, y, g: mul(g, mul(mul(y, square(y)), -0.5)))
elementwise_unary("math.cbrt", lambda x, y, g: div(g, mul(square(y), 3.0)))
elementwise_unary("math.tanh", lambda x, y, g: mul(g, sub(1.0, square(y))))
elementwise_unary("math.sin", lambda x, y, g: mul(g, cos(x)))
elementwise_unary("math.cos", lambda x, y, g: neg(mul(g, sin(x))))
elementwise_unary("math.tan", lambda x, y, g: mul(g, add(1.0, square(y))))
elementwise_unary("math.asin", lambda x, y, g: mul(g, rsqrt(sub(1.0, square(x)))))
elementwise_unary("math.acos", lambda x, y, g: neg(mul(g, rsqrt(sub(1.0, square(x))))))
elementwise_unary("math.atan", lambda x, y, g: div(g, add(1.0, square(x))))
elementwise_unary("math.sinh", lambda x, y, g: mul(g, cosh(x)))
elementwise_unary("math.cosh", lambda x, y, g: mul(g, sinh(x)))
elementwise_unary("math.asinh", lambda x, y, g: mul(g, rsqrt(add(square(x), 1.0))))
elementwise_unary("math.acosh", lambda x, y, g: mul(g, rsqrt(sub(square(x), 1.0))))
elementwise_unary("math.atanh", lambda x, y, g: div(g, sub(1.0, square(x))))
elementwise_unary("math.erf", lambda x, y, g: mul(g, mul(exp(neg(square(x))), _TWO_OVER_SQRT_PI)))
elementwise_unary("math.erfc", lambda x, y, g: mul(g, mul(exp(neg(square(x))), -_TWO_OVER_SQRT_PI)))
elementwise_unary("math.absf", lambda x, y, g: vocab.abs_derivative(x, g))  # as dlvm.abs


def _log_or_zero(x):
    return select(cmp("eq", x, 0.0), 0.0, log(x))


elementwise_binary(
    "math.powf",
    lambda x, y, z, g: mul(g, mul(y, vocab.pow_(x, sub(y, 1.0)))),
    lambda x, y, z, g: mul(g, mul(z, _log_or_zero(x))),
)
# z = atan2(a, b): dz/da = b / (a^2 + b^2), dz/db = -a / (a^2 + b^2).
elementwise_binary(
    "math.atan2",
    lambda a, b, z, g: div(mul(g, b), add(square(a), square(b))),
    lambda a, b, z, g: neg(div(mul(g, a), add(square(a), square(b)))),
)
# copysign(x, y) = |x| sign(y) (y only through its sign).
elementwise_binary("math.copysign", lambda x, y, z, g: mul(g, mul(sign(x), sign(y))), None)


@adjoint("math.fma")
def _fma(r) -> None:
    a, b, g = r.x(0), r.x(1), r.g
    r.accumulate(0, mul(g, b))
    r.accumulate(1, mul(g, a))
    r.accumulate(2, g)


@tangent("math.fma")
def _fma_tangent(t) -> None:
    a, b = t.x(0), t.x(1)
    terms = []
    if t.dx(0) is not None:
        terms.append(mul(t.dx(0), b))
    if t.dx(1) is not None:
        terms.append(mul(a, t.dx(1)))
    if t.dx(2) is not None:
        terms.append(t.dx(2))
    t.set(0, vocab.add_all(terms))


def _fpowi_derivative(x, n, g):
    """d/dx x^n = n x^(n-1) for an integer n."""
    nf = vocab.create("arith.sitofp", [x.type], [n])
    return mul(g, mul(nf, vocab.pow_(x, sub(nf, 1.0))))


@adjoint("math.fpowi")
def _fpowi(r) -> None:
    r.accumulate(0, _fpowi_derivative(r.x(0), r.x(1), r.g))


@tangent("math.fpowi")
def _fpowi_tangent(t) -> None:
    t.set(0, _fpowi_derivative(t.x(0), t.x(1), t.dx(0)))
