"""The DLVM paper's Figure 3 in NNKit, checked against central finite differences.

    f  = lambda x, w, b: x . w + b
    g  = lambda x, w, b: tanh(f[x, w, b])                  # staged application
    dg = gradient(of: g, withRespectTo: (1, 2), keeping: 0)
    (dg_dw, dg_db, g_value) = dg[x, w, b]
    d2g_dw2 = gradient(of: dg, from: 0, withRespectTo: (1))

Every derivative is compiled through DLVM in float64 (the arrays are float64,
so the functions are specialized to f64) and compared with central
differences of the compiled primal. Prints a table and the staged IR of
``dg``; exits 1 on a mismatch.

    python examples/figure3.py [--show-ir ad|optimize|linalg]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

import numpy as np

import dlvm_mlir.nnkit as dl


@dl.function
def f(x, w, b):
    return x @ w + b


@dl.function
def g(x, w, b):
    return dl.tanh(f(x, w, b))


dg = dl.gradient(g, wrt=(1, 2), keeping=(0,))
d2g_dw2 = dl.gradient(dg, from_=0, wrt=(1,))
dg_seeded = dl.gradient(g, wrt=(1, 2), seedable=True)


def central_difference(fn: Callable[[np.ndarray], float], at: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """d fn / d at, one central difference per element."""
    grad = np.zeros_like(at)
    for index in np.ndindex(at.shape):
        plus, minus = at.copy(), at.copy()
        plus[index] += eps
        minus[index] -= eps
        grad[index] = (fn(plus) - fn(minus)) / (2 * eps)
    return grad


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--show-ir", choices=dl.IR_STAGES, default="dlvm")
    args = parser.parse_args()

    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 5))
    w = 0.5 * rng.standard_normal((5, 3))
    b = 0.5 * rng.standard_normal((1, 3))
    seed = rng.standard_normal((2, 3))

    dg_dw, dg_db, g_value = dg(x, w, b)
    second = d2g_dw2(x, w, b)
    seeded_dw, seeded_db = dg_seeded(x, w, b, seed)

    def total_g(w_: np.ndarray | None = None, b_: np.ndarray | None = None) -> float:
        return float(np.sum(g(x, w if w_ is None else w_, b if b_ is None else b_)))

    def seeded_g(w_: np.ndarray | None = None, b_: np.ndarray | None = None) -> float:
        return float(np.sum(seed * g(x, w if w_ is None else w_, b if b_ is None else b_)))

    checks = [
        ("g = tanh(x.w + b)   (kept result)", g_value, np.tanh(x @ w + b)),
        ("dg/dw               (sum of g)", dg_dw, central_difference(lambda v: total_g(w_=v), w)),
        ("dg/db", dg_db, central_difference(lambda v: total_g(b_=v), b)),
        ("d2g/dw2             (from 0, wrt 1)", second, central_difference(lambda v: float(np.sum(dg(x, v, b)[0])), w)),
        ("seedable dg/dw      (seed . g)", seeded_dw, central_difference(lambda v: seeded_g(w_=v), w)),
        ("seedable dg/db", seeded_db, central_difference(lambda v: seeded_g(b_=v), b)),
    ]

    print("Figure 3 of the DLVM paper, compiled through DLVM (f64), vs central differences")
    print(f"{'quantity':38} {'shape':>8} {'max |dlvm - fd|':>16} {'rel. error':>11}  ok")
    failures = 0
    for name, got, want in checks:
        err = float(np.max(np.abs(got - want)))
        rel = err / max(float(np.max(np.abs(want))), 1e-12)
        ok = rel < 1e-6
        failures += not ok
        shape = "x".join(map(str, np.shape(got)))
        print(f"{name:38} {shape:>8} {err:16.2e} {rel:11.2e}  {'yes' if ok else 'NO'}")

    print(f"\n== d2g_dw2 after stage '{args.show_ir}'")
    print(d2g_dw2.ir(x, w, b, stage=args.show_ir))
    if failures:
        print(f"error: {failures} derivative(s) disagree with finite differences", file=sys.stderr)
        return 1
    print("all derivatives agree with finite differences")
    return 0


if __name__ == "__main__":
    sys.exit(main())
