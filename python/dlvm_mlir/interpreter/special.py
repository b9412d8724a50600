"""Vectorized special functions with the semantics of the C library / dlvm folders.

Computed in float64 and returned as float64; callers cast to the element type.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["digamma", "erf", "erfc", "lgamma", "round_half_away"]


def _lgamma_scalar(x: float) -> float:
    try:
        return math.lgamma(x)
    except (ValueError, OverflowError):  # poles: non-positive integers
        return math.inf


_erf = np.frompyfunc(math.erf, 1, 1)
_erfc = np.frompyfunc(math.erfc, 1, 1)
_lgamma = np.frompyfunc(_lgamma_scalar, 1, 1)


def _apply(fn, x) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    return np.asarray(fn(x), dtype=np.float64).reshape(x.shape)


def erf(x) -> np.ndarray:
    return _apply(_erf, x)


def erfc(x) -> np.ndarray:
    return _apply(_erfc, x)


def lgamma(x) -> np.ndarray:
    """ln|Gamma(x)| (C ``lgamma``: +inf at the poles)."""
    return _apply(_lgamma, x)


def digamma(x) -> np.ndarray:
    """d/dx ln Gamma(x), as the compiled code computes it (up to its Taylor series at the root).

    NaN at non-positive integers; reflection ``psi(1 - x) - pi / tan(pi x)``
    for x < 0.5; recurrence ``psi(x) = psi(x + 1) - 1/x`` up to x >= 10; then
    the asymptotic series ``ln x - 1/(2x) - sum B2k / (2k x^2k)`` through k = 7
    (truncation below 1e-17 relative; with 5 terms from x >= 6 the error was
    about 1e-12).
    """
    x = np.asarray(x, dtype=np.float64)
    pole = (x <= 0) & (x == np.floor(x))
    refl = x < 0.5
    y = np.where(refl, 1.0 - x, x)
    r = np.zeros_like(y)
    for _ in range(10):  # y >= 0.5 reaches 10 in at most 10 steps
        small = y < 10
        r = r - np.where(small, 1.0 / y, 0.0)
        y = np.where(small, y + 1.0, y)
    f = 1.0 / (y * y)
    poly = 691.0 / 32760 - f / 12
    for c in (1.0 / 132, 1.0 / 240, 1.0 / 252, 1.0 / 120, 1.0 / 12):
        poly = c - f * poly
    series = f * poly
    out = r + np.log(y) - 0.5 / y - series
    out = np.where(refl, out - np.pi / np.tan(np.pi * x), out)
    return np.where(pole, np.nan, out)


def round_half_away(x):
    """round(x): to nearest, halfway cases away from zero (C ``round``)."""
    t = np.trunc(x)
    adj = np.where(np.abs(x - t) >= 0.5, np.sign(x), 0).astype(np.result_type(x))
    return np.copysign(t + adj, x)
