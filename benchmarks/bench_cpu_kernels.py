"""CPU kernels through the dlvm-mlir CPU back end vs numpy (run by hand).

    OPENBLAS_NUM_THREADS is set to --threads before numpy is imported, so both
    sides use the same number of cores.

    python benchmarks/bench_cpu_kernels.py [--threads 2] [--repeats 40] [--png out.png]

Matmul: GFLOP/s (2*M*N*K / time) of a zero-filled ``linalg.matmul`` against
``a @ b`` (OpenBLAS).  Elementwise: GB/s of ``tanh(a*b+c)*d`` over 16M f32
(5 arrays moved) against numpy's expression and an in-place numpy variant.
Timings are medians over ``--repeats`` runs per side, the two sides taking
turns (a pause, 2 unrecorded calls, 5 recorded; benchmarks/turns.py) so that
machine noise hits both alike; the load average is printed because other
processes on the machine skew everything.  Process CPU time is recorded next
to wall time: on a machine shared with other work, wall time mostly measures
the other work, while CPU time per call still says how efficient each side
is (spinning workers count as busy).
On a shared VM the second core comes and goes, so 2-thread ratios vary from
run to run much more than 1-thread ratios.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path


def _parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=40, help="timed runs per kernel and side (blocks of 5)")
    parser.add_argument("--elements", type=int, default=16 * 1024 * 1024, help="elementwise chain length")
    parser.add_argument("--png", type=Path, default=Path("benchmarks/out/cpu_kernels.png"))
    parser.add_argument("--quick", action="store_true", help="fewer repeats, smaller elementwise chain")
    return parser.parse_args()


ARGS = _parse_args()
os.environ["OPENBLAS_NUM_THREADS"] = str(ARGS.threads)
os.environ.setdefault("OMP_NUM_THREADS", str(ARGS.threads))

import numpy as np  # noqa: E402  (after the thread settings)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from dlvm_mlir.backend import CpuExecutable, compile_cpu  # noqa: E402
from turns import Turns, take_turns  # noqa: E402


@dataclass
class Timing:
    """Median wall-clock and process-CPU seconds of one callable."""

    wall: float
    cpu: float


@dataclass
class Row:
    name: str
    unit: str
    work: float  # FLOP or bytes per call
    mlir: Timing
    numpy: Timing
    compile_s: float

    def rate(self, timing: Timing, clock: str) -> float:
        return self.work / getattr(timing, clock) / 1e9

    def ratio(self, clock: str) -> float:
        return self.rate(self.mlir, clock) / self.rate(self.numpy, clock)


def matmul_ir(m: int, n: int, k: int) -> str:
    return f"""
func.func @mm(%a: tensor<{m}x{k}xf32>, %b: tensor<{k}x{n}xf32>) -> tensor<{m}x{n}xf32> {{
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<{m}x{n}xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<{m}x{n}xf32>) -> tensor<{m}x{n}xf32>
  %r = linalg.matmul ins(%a, %b : tensor<{m}x{k}xf32>, tensor<{k}x{n}xf32>) outs(%c : tensor<{m}x{n}xf32>) -> tensor<{m}x{n}xf32>
  return %r : tensor<{m}x{n}xf32>
}}
"""


def chain_ir(n: int) -> str:
    t = f"tensor<{n}xf32>"
    return f"""
#id = affine_map<(d0) -> (d0)>
func.func @chain(%a: {t}, %b: {t}, %c: {t}, %d: {t}) -> {t} {{
  %e = tensor.empty() : {t}
  %ab = linalg.mul ins(%a, %b : {t}, {t}) outs(%e : {t}) -> {t}
  %abc = linalg.add ins(%ab, %c : {t}, {t}) outs(%e : {t}) -> {t}
  %th = linalg.generic {{indexing_maps = [#id, #id], iterator_types = ["parallel"]}} ins(%abc : {t}) outs(%e : {t}) {{
    ^bb0(%x: f32, %o: f32):
      %y = math.tanh %x : f32
      linalg.yield %y : f32
  }} -> {t}
  %r = linalg.mul ins(%th, %d : {t}, {t}) outs(%e : {t}) -> {t}
  return %r : {t}
}}
"""


def alternate(first, second, repeats: int) -> tuple[Timing, Timing]:
    """Median times of two callables taking turns (see benchmarks/turns.py)."""
    samples = take_turns({"mlir": first, "numpy": second}, Turns(repeats=repeats))
    return tuple(  # type: ignore[return-value]
        Timing(float(np.median([x.wall for x in t])), float(np.median([x.cpu for x in t])))
        for t in (samples["mlir"], samples["numpy"])
    )


def compile_timed(src: str, threads: int) -> tuple[CpuExecutable, float]:
    start = time.perf_counter()
    exe = compile_cpu(src, threads=threads, use_cache=False)
    return exe, time.perf_counter() - start


def bench_matmul(m: int, n: int, k: int, threads: int, repeats: int) -> Row:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((m, k), dtype=np.float32)
    b = rng.standard_normal((k, n), dtype=np.float32)
    exe, compile_s = compile_timed(matmul_ir(m, n, k), threads)
    entry = exe.entry("mm")
    got = entry(a, b)
    reference = a.astype(np.float64) @ b
    error = np.abs(got - reference).max() / np.abs(reference).max()
    assert error < 1e-4, f"matmul {m}x{n}x{k} wrong: relative error {error}"
    t_mlir, t_numpy = alternate(lambda: entry(a, b), lambda: a @ b, repeats)
    return Row(f"matmul {m}x{k}x{n}", "GFLOP/s", 2.0 * m * n * k, t_mlir, t_numpy, compile_s)


def numpy_chain(a, b, c, d):
    return np.tanh(a * b + c) * d


def numpy_chain_inplace(a, b, c, d):
    t = np.multiply(a, b)
    t += c
    np.tanh(t, out=t)
    t *= d
    return t


def bench_chain(n: int, threads: int, repeats: int) -> list[Row]:
    rng = np.random.default_rng(1)
    a, b, c, d = (rng.standard_normal(n, dtype=np.float32) for _ in range(4))
    exe, compile_s = compile_timed(chain_ir(n), threads)
    entry = exe.entry("chain")
    got = entry(a, b, c, d)
    np.testing.assert_allclose(got, numpy_chain(a, b, c, d), rtol=1e-5, atol=1e-6)
    moved = 5.0 * n * 4
    rows = []
    for label, fn in (("numpy expr", numpy_chain), ("numpy in-place", numpy_chain_inplace)):
        t_mlir, t_numpy = alternate(lambda: entry(a, b, c, d), lambda: fn(a, b, c, d), repeats)
        rows.append(Row(f"tanh(a*b+c)*d {n // (1 << 20)}M vs {label}", "GB/s", moved, t_mlir, t_numpy, compile_s))
    return rows


def print_table(rows: list[Row]) -> None:
    print(
        f"{'kernel':40s} {'unit':7s} | {'wall: mlir':>10s} {'numpy':>7s} {'ratio':>6s} "
        f"| {'cpu: mlir':>9s} {'numpy':>7s} {'ratio':>6s} | {'compile s':>9s}"
    )
    for r in rows:
        print(
            f"{r.name:40s} {r.unit:7s} | {r.rate(r.mlir, 'wall'):10.1f} {r.rate(r.numpy, 'wall'):7.1f} "
            f"{r.ratio('wall'):6.2f} | {r.rate(r.mlir, 'cpu'):9.1f} {r.rate(r.numpy, 'cpu'):7.1f} "
            f"{r.ratio('cpu'):6.2f} | {r.compile_s:9.2f}"
        )
    print(
        "(cpu: work per second of process CPU time, all threads together; Linux adds a running worker\n"
        " thread's time only at scheduler ticks, so for calls of a few ms this undercounts workers)"
    )


def write_png(rows: list[Row], path: Path) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"(matplotlib not installed: no chart written to {path})")
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(9, 4))
    names = [r.name for r in rows]
    ratios = [r.ratio("wall") for r in rows]
    ax.barh(names, ratios, color=["tab:green" if x >= 1 else "tab:orange" for x in ratios])
    ax.axvline(1.0, color="black", linewidth=1)
    ax.set_xlabel("dlvm-mlir / numpy, wall clock (higher is better)")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    ax.set_title(f"CPU kernels, {ARGS.threads} thread(s), load average {load:.1f}")
    ax.invert_yaxis()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"chart: {path}")


def main() -> None:
    repeats = 5 if ARGS.quick else ARGS.repeats
    elements = (1 << 22) if ARGS.quick else ARGS.elements
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"threads={ARGS.threads} repeats={repeats} "
        f"OPENBLAS_NUM_THREADS={os.environ['OPENBLAS_NUM_THREADS']} load average={load:.2f}"
    )
    rows = [bench_matmul(m, n, k, ARGS.threads, repeats) for m, k, n in ((128, 784, 512), (512, 512, 512), (1024, 1024, 1024))]
    rows += bench_chain(elements, ARGS.threads, repeats)
    print_table(rows)
    write_png(rows, ARGS.png)


if __name__ == "__main__":
    main()
