"""Accuracy of every float unary op in CPU-compiled code, over the whole domain.

Each op is compiled once per element type (f32, f64) over a few thousand
sampled points (logarithmic sweeps of both signs from the smallest denormal
to the largest finite value, dense sweeps of [-12, 12], points near integers,
half-integers, +-1 and the roots of lgamma/digamma, and the specials +-0,
+-inf, NaN) so that the vectorized loop body runs, and once over a 7-element
array (the scalar tail). The results are compared with float64 references that
do not come from the compiler: numpy and the ``math`` module, and for
lgamma/digamma a 40-digit ``decimal`` evaluation.

Measures: f32, the error in units in the last place of the float32 result
(ulp of the reference rounded to float32, 2^-149 for zero and denormals);
f64, the relative error |y - r| / max(|r|, 2^-1022). A NaN reference needs a
NaN, an infinite (rounded) reference the same infinity, a zero reference a
zero of the same sign.

``python test/python/test_math_accuracy.py`` prints the table of
docs/cpu.md (section "Accuracy of math functions").
"""

from __future__ import annotations

import decimal
import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pytest

import dlvm_mlir

# --------------------------------------------------------------------------
# references (float64 in, float64 out)
# --------------------------------------------------------------------------

_D = decimal.Context(prec=40, Emax=999999, Emin=-999999)
_PI = decimal.Decimal("3.14159265358979323846264338327950288419716939937510582097494")
_BERNOULLI = [  # B_2k, k = 1..10
    (1, 6), (-1, 30), (1, 42), (-1, 30), (5, 66), (-691, 2730), (7, 6), (-3617, 510), (43867, 798), (-174611, 330),
]
_SHIFT = 40  # evaluate the asymptotic series at y >= 40


def _dec(x: float) -> decimal.Decimal:
    return decimal.Decimal(x)


def _sin_cos_pi(r: decimal.Decimal) -> tuple[decimal.Decimal, decimal.Decimal]:
    """sin(pi r), cos(pi r) for |r| <= 1/2 (Taylor series, 40 digits)."""
    with decimal.localcontext(_D):
        t = _PI * r
        t2 = t * t
        s, c = t, decimal.Decimal(1)
        term_s, term_c = t, decimal.Decimal(1)
        for k in range(1, 40):
            term_s = -term_s * t2 / ((2 * k) * (2 * k + 1))
            term_c = -term_c * t2 / ((2 * k - 1) * (2 * k))
            s += term_s
            c += term_c
        return s, c


def _lgamma_positive(y: decimal.Decimal) -> decimal.Decimal:
    with decimal.localcontext(_D):
        product = decimal.Decimal(1)
        while y < _SHIFT:
            product *= y
            y += 1
        series = (y - decimal.Decimal("0.5")) * y.ln() - y + (2 * _PI).ln() / 2
        power = y
        y2 = y * y
        for k, (num, den) in enumerate(_BERNOULLI, start=1):
            series += decimal.Decimal(num) / (den * (2 * k) * (2 * k - 1)) / power
            power *= y2
        return series - product.ln()


def lgamma_ref(x: float) -> float:
    """ln|Gamma(x)|; +inf at the poles (non-positive integers) and at +-inf."""
    if math.isnan(x):
        return math.nan
    if math.isinf(x) or (x <= 0 and x == math.floor(x)):
        return math.inf
    if x in (1.0, 2.0):
        return 0.0
    if x > 0:
        return float(_lgamma_positive(_dec(x)))
    with decimal.localcontext(_D):
        d = _dec(x)
        s, _ = _sin_cos_pi(d - round(d))
        return float(_PI.ln() - abs(s).ln() - _lgamma_positive(1 - d))


def _digamma_positive(y: decimal.Decimal) -> decimal.Decimal:
    with decimal.localcontext(_D):
        acc = decimal.Decimal(0)
        while y < _SHIFT:
            acc += 1 / y
            y += 1
        series = y.ln() - 1 / (2 * y)
        y2 = y * y
        power = y2
        for k, (num, den) in enumerate(_BERNOULLI, start=1):
            series -= decimal.Decimal(num) / (den * 2 * k) / power
            power *= y2
        return series - acc


def digamma_ref(x: float) -> float:
    """d/dx ln Gamma(x); NaN at the poles and at -inf, +inf at +inf."""
    if math.isnan(x) or x == -math.inf or (x <= 0 and x == math.floor(x)):
        return math.nan
    if x == math.inf:
        return math.inf
    if x > 0:
        return float(_digamma_positive(_dec(x)))
    with decimal.localcontext(_D):
        d = _dec(x)
        s, c = _sin_cos_pi(d - round(d))
        return float(_digamma_positive(1 - d) - _PI * c / s)


def _guarded(fn):
    def call(x: float) -> float:
        try:
            return fn(x)
        except OverflowError:
            return math.copysign(math.inf, x) if fn is not math.exp else math.inf
        except ValueError:
            return math.nan

    return call


def _sigmoid(x: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        e = np.exp(-np.abs(x))
        return np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def _round_half_away(x: np.ndarray) -> np.ndarray:
    t = np.trunc(x)
    return np.where(np.isfinite(x) & (np.abs(x - t) >= 0.5), t + np.sign(x), t)


def _rsqrt(x: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return 1.0 / np.sqrt(x)


def _elementwise(fn):
    fn = _guarded(fn)
    return lambda x: np.array([fn(float(v)) for v in x], dtype=np.float64)


def _sign(x: np.ndarray) -> np.ndarray:
    return np.where(x > 0, 1.0, np.where(x < 0, -1.0, x))


def _relu(x: np.ndarray) -> np.ndarray:
    return np.where(np.isnan(x), x, np.where(x > 0, x, 0.0))


REFERENCES = {
    "neg": np.negative,
    "exp": np.exp,
    "log": np.log,
    "tanh": np.tanh,
    "sigmoid": _sigmoid,
    "relu": _relu,
    "sqrt": np.sqrt,
    "rsqrt": _rsqrt,
    "square": np.square,
    "sign": _sign,
    "abs": np.abs,
    "sin": np.sin,
    "cos": np.cos,
    "tan": np.tan,
    "asin": np.arcsin,
    "acos": np.arccos,
    "atan": np.arctan,
    "sinh": np.sinh,
    "cosh": np.cosh,
    "floor": np.floor,
    "ceil": np.ceil,
    "round": _round_half_away,
    "rint": np.rint,
    "erf": _elementwise(math.erf),
    "erfc": _elementwise(math.erfc),
    "lgamma": _elementwise(lgamma_ref),
    "digamma": _elementwise(digamma_ref),
    "log1p": _elementwise(lambda x: -math.inf if x == -1 else math.log1p(x)),
    "expm1": _elementwise(math.expm1),
}
OPS = tuple(REFERENCES)


def reference(op: str, x: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        return np.asarray(REFERENCES[op](np.asarray(x, dtype=np.float64)), dtype=np.float64)


# --------------------------------------------------------------------------
# sample points
# --------------------------------------------------------------------------

DIGAMMA_ROOT = 1.4616321449683623


def sample_points(dtype) -> np.ndarray:
    """About 5000 points of ``dtype`` covering its whole range."""
    info = np.finfo(dtype)
    low = math.log10(float(info.smallest_subnormal))
    high = math.log10(float(info.max))
    with np.errstate(over="ignore"):
        magnitudes = np.minimum(10.0 ** np.linspace(low, high, 1500), float(info.max))
    eps = float(info.eps)
    integers = np.arange(-25.0, 26.0)
    near = [integers, integers + 0.5]
    for delta in (eps, 4 * eps, 1e-3, 0.1):
        near += [integers + delta * np.maximum(1.0, np.abs(integers)), integers - delta * np.maximum(1.0, np.abs(integers))]
    roots = np.array([1.0, 2.0, DIGAMMA_ROOT, -2.457024738220800, -2.747682646727412, -0.5040830082644554])
    root_offsets = np.concatenate([roots + k * eps * 2 for k in range(-4, 5)])
    specials = [0.0, -0.0, math.inf, -math.inf, math.nan, float(info.max), -float(info.max), float(info.tiny),
                -float(info.tiny), float(info.smallest_subnormal), -float(info.smallest_subnormal), 1 - eps / 2, -1 + eps / 2]
    # where exp/expm1/sinh/cosh overflow and underflow, where erfc underflows
    edges = np.concatenate([np.linspace(-750, -80, 200), np.linspace(80, 720, 200), np.linspace(-1.1, 1.1, 221)])
    points = np.concatenate(
        [magnitudes, -magnitudes, np.linspace(-12.0, 12.0, 1201), *near, root_offsets, specials, edges]
    ).astype(dtype)
    return points


TAIL = np.array([1e-10, -0.0, 0.5, -3.5, 7.25, 100.0, math.nan])  # 7 elements: the scalar tail only


# --------------------------------------------------------------------------
# errors
# --------------------------------------------------------------------------


def _ulp32(r: np.ndarray) -> np.ndarray:
    _, e = np.frexp(np.abs(r))
    return np.ldexp(1.0, np.maximum(e - 24, -149))


def reflection_scale(op: str, x: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """For lgamma/digamma at x < 0: the larger magnitude of the two terms of
    the reflection formula (ln(pi) - ln|sin(pi x)| and lgamma(1 - x);
    psi(1 - x) and pi cot(pi x)); 0 elsewhere. Near the roots of the function
    for x < 0 these terms cancel, and the result is only known to a rounding
    error of them: the f64 error is measured relative to this scale there."""
    x = np.asarray(x, dtype=np.float64)
    scale = np.zeros_like(x)
    if op not in ("lgamma", "digamma"):
        return scale
    with np.errstate(all="ignore"):
        r = x - np.rint(x)
        if op == "lgamma":
            sine_term = np.abs(math.log(math.pi) - np.log(np.abs(np.sin(np.pi * r))))
            other = np.abs(np.array([_guarded(math.lgamma)(1 - v) if v < 0 else 0.0 for v in x]))
        else:
            sine_term = np.abs(np.pi / np.tan(np.pi * r))
            other = np.abs(ref + sine_term * np.sign(np.tan(np.pi * r)))
        scale = np.where((x < 0) & np.isfinite(x) & (r != 0), np.maximum(sine_term, other), 0.0)
    return np.nan_to_num(scale, nan=0.0, posinf=0.0)


def errors(dtype, got: np.ndarray, ref: np.ndarray, scale: np.ndarray | None = None) -> np.ndarray:
    """Per-point error: ulps (float32) or relative error (float64, relative to
    ``max(|ref|, scale)``); inf for a wrong special value."""
    with np.errstate(all="ignore"):
        got = np.asarray(got, dtype=np.float64)
        rounded = ref.astype(dtype).astype(np.float64)
        if dtype == np.float32:
            err = np.abs(got - ref) / _ulp32(ref)
        else:
            magnitude = np.abs(ref) if scale is None else np.maximum(np.abs(ref), scale)
            err = np.abs(got - ref) / np.maximum(magnitude, float(np.finfo(np.float64).tiny))
    special = np.isnan(ref) | np.isinf(rounded) | ~np.isfinite(got) | (ref == 0)
    same = np.where(
        np.isnan(ref),
        np.isnan(got),
        (got == rounded) & (np.signbit(got) == np.signbit(rounded)),
    )
    return np.where(special, np.where(same, 0.0, np.inf), err)


# --------------------------------------------------------------------------
# compiling
# --------------------------------------------------------------------------

_MLIR_TYPE = {np.float32: "f32", np.float64: "f64"}


@lru_cache(maxsize=None)
def compiled(dtype, size: int):
    ty = f"tensor<{size}x{_MLIR_TYPE[dtype]}>"
    text = "\n".join(
        f"func.func @unary_{op}(%x: {ty}) -> {ty} {{\n  %r = dlvm.{op} %x : {ty}\n  return %r : {ty}\n}}" for op in OPS
    )
    return dlvm_mlir.compile(text)


@lru_cache(maxsize=None)
def _points(dtype) -> np.ndarray:
    return sample_points(dtype)


@dataclass
class Measurement:
    op: str
    dtype: type
    points: np.ndarray
    got: np.ndarray
    ref: np.ndarray
    err: np.ndarray

    @property
    def worst(self) -> float:
        return float(np.max(self.err))

    def worst_points(self, count: int = 6) -> str:
        order = np.argsort(-self.err, kind="stable")[:count]
        return "\n".join(
            f"  x={self.points[i]!r}: got {self.got[i]!r}, want {self.ref[i]!r} (error {self.err[i]:.3g})" for i in order
        )


def measure(op: str, dtype, points: np.ndarray | None = None) -> Measurement:
    x = _points(dtype) if points is None else np.asarray(points, dtype=dtype)
    got = np.asarray(compiled(dtype, x.size)[f"unary_{op}"](x))
    ref = reference(op, x)
    scale = reflection_scale(op, x, ref) if dtype == np.float64 else None
    return Measurement(op, dtype, x, got, ref, errors(dtype, got, ref, scale))


# --------------------------------------------------------------------------
# the budget (what docs/cpu.md states) and the tests
# --------------------------------------------------------------------------

F32_ULPS = 2.0
F64_REL = 1e-14


@pytest.mark.parametrize("op", OPS)
def test_f32_whole_domain(op):
    m = measure(op, np.float32)
    assert m.worst <= F32_ULPS, f"f32 {op}: {m.worst:.3g} ulp > {F32_ULPS}\n{m.worst_points()}"


@pytest.mark.parametrize("op", OPS)
def test_f64_whole_domain(op):
    m = measure(op, np.float64)
    assert m.worst <= F64_REL, f"f64 {op}: relative error {m.worst:.3g} > {F64_REL}\n{m.worst_points()}"


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("op", OPS)
def test_scalar_tail(op, dtype):
    m = measure(op, dtype, TAIL)
    budget = F32_ULPS if dtype == np.float32 else F64_REL
    assert m.worst <= budget, f"{op}: {m.worst:.3g}\n{m.worst_points()}"


def main() -> None:
    print("| function | f32 max ulp | f64 max rel. error |")
    print("|---|---|---|")
    for op in OPS:
        f32 = measure(op, np.float32)
        f64 = measure(op, np.float64)
        print(f"| `{op}` | {f32.worst:.2f} | {f64.worst:.1e} |")


if __name__ == "__main__":
    main()
