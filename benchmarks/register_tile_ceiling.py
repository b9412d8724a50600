"""The machine's FMA ceiling, and what each register-tile shape can reach on it (run by hand).

The CPU schedules' register tiles broadcast ``R`` values (filters, rows of A) and load ``V``
vectors (a row of pixels, of B) per reduction step, for ``R x V`` FMAs.  Which shape is
fastest depends on the core: one AVX-512 FMA unit (AMD Zen 4) or two (Intel Xeon), how many
loads per cycle.  This writes a C micro-kernel of that pattern (data in L1, one core,
AVX-512 intrinsics), compiles it with the system C compiler and prints GFLOP/s per shape,
next to a pure FMA loop (the ceiling; ``bench_conv.py --peak`` wants it times the threads).

    python benchmarks/register_tile_ceiling.py [--shapes 16x1 4x4 6x4 8x3] [--seconds 0.5]

Nov 27, eighth session, Intel Xeon (LLVM: rocketlake), one core: FMA loop 240 GFLOP/s;
16x1 157, 4x4 180, 6x4 193, 8x3 202, 8x2 188, 12x2 178.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

SOURCE = r"""
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

int main(int argc, char **argv) {
  double seconds = atof(argv[1]);
  const int K = 72;
  float *w = aligned_alloc(64, sizeof(float) * R * K + 64);
  float *x = aligned_alloc(64, sizeof(float) * (K * 16 * V + 64));
  for (int i = 0; i < R * K; i++) w[i] = 1e-6f;
  for (int i = 0; i < K * 16 * V + 64; i++) x[i] = 1.0f;
  __m512 acc[R][V];
  for (int r = 0; r < R; r++)
    for (int v = 0; v < V; v++) acc[r][v] = _mm512_setzero_ps();
  long reps = 0;
  double start = now(), elapsed = 0;
  while (elapsed < seconds) {
    for (int rep = 0; rep < 1000; rep++, reps++)
      for (int c = 0; c < K; c++) {
        __m512 xv[V];
#pragma GCC unroll 8
        for (int v = 0; v < V; v++) xv[v] = _mm512_loadu_ps(x + (c * V + v) * 16 + (rep & 3));
#pragma GCC unroll 24
        for (int r = 0; r < R; r++) {
          __m512 b = _mm512_set1_ps(w[r * K + c]);
#pragma GCC unroll 8
          for (int v = 0; v < V; v++) acc[r][v] = _mm512_fmadd_ps(b, xv[v], acc[r][v]);
        }
      }
    elapsed = now() - start;
  }
  __m512 s = _mm512_setzero_ps();
  for (int r = 0; r < R; r++)
    for (int v = 0; v < V; v++) s = _mm512_add_ps(s, acc[r][v]);
  printf("%.1f %g\n", 2.0 * 16 * R * V * K * reps / elapsed / 1e9, _mm512_reduce_add_ps(s));
  return 0;
}
"""

CEILING = r"""
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv) {
  double seconds = atof(argv[1]);
  __m512 a[12], b = _mm512_set1_ps(1.0000001f), c = _mm512_set1_ps(1e-7f);
  for (int i = 0; i < 12; i++) a[i] = _mm512_set1_ps(i);
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  long iters = 0;
  double elapsed = 0;
  while (elapsed < seconds) {
    for (int i = 0; i < 1000000; i++, iters++)
#pragma GCC unroll 12
      for (int j = 0; j < 12; j++) a[j] = _mm512_fmadd_ps(a[j], b, c);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    elapsed = (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec);
  }
  __m512 s = a[0];
  for (int i = 1; i < 12; i++) s = _mm512_add_ps(s, a[i]);
  printf("%.1f %g\n", 2.0 * 16 * 12 * iters / elapsed / 1e9, _mm512_reduce_add_ps(s));
  return 0;
}
"""


def build(directory: Path, name: str, source: str, defines: dict[str, int]) -> Path:
    path = directory / f"{name}.c"
    path.write_text(source)
    binary = directory / name
    flags = [f"-D{k}={v}" for k, v in defines.items()]
    subprocess.run(["cc", "-O2", "-mavx512f", "-mfma", *flags, str(path), "-o", str(binary)], check=True)
    return binary


def run(binary: Path, seconds: float) -> float:
    out = subprocess.run([str(binary), str(seconds)], capture_output=True, text=True, check=True).stdout
    return float(out.split()[0])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", nargs="*", default=["16x1", "4x4", "6x4", "8x3", "8x2", "12x2"],
                        help="RxV: broadcasts x vectors per reduction step")
    parser.add_argument("--seconds", type=float, default=0.5, help="per measurement")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        try:
            ceiling = run(build(directory, "ceiling", CEILING, {}), args.seconds)
        except (subprocess.CalledProcessError, OSError) as exc:
            print(f"error: cannot build or run the AVX-512 micro-kernels here: {exc}", file=sys.stderr)
            return 1
        print(f"FMA ceiling, one core: {ceiling:.1f} GFLOP/s")
        for shape in args.shapes:
            r, v = (int(n) for n in shape.split("x"))
            gflops = run(build(directory, f"tile{r}x{v}", SOURCE, {"R": r, "V": v}), args.seconds)
            print(f"  {r:2d} x {v} tile ({r * v:2d} accumulators, {r + v:2d} loads per {r * v:2d} FMAs): "
                  f"{gflops:6.1f} GFLOP/s ({gflops / ceiling:.0%})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
