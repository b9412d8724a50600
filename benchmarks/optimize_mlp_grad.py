"""What dlvm-optimize and dlvm-checkpoint do to the gradient of an MLP 784-512-512-10.

The loss is softmax cross-entropy over tanh layers, batch 128 (``--batch``);
``@loss_grad`` is synthesized by dlvm-differentiate. For each configuration,
in one run:

- ops: the gradient function's ops at the DLVM level (nested ops included,
  the return left out);
- residual bytes: forward values the reverse sweep holds (dlvm-report-residuals);
  recompute flops: what dlvm-checkpoint added back;
- kernels: loop nests after dlvm-to-linalg, and after dlvm-kernel-fusion with
  the CPU back end's options (what actually runs);
- time: median of ``--repeats`` calls of the compiled gradient (CPU, all
  cores), and its ratio to the AD output's time and to a hand-written numpy
  gradient timed in the same run.

    .venv/bin/python benchmarks/optimize_mlp_grad.py [--batch 128] [--repeats 30]

Prints a markdown table (docs/optimizations.md keeps one) and writes
benchmarks/out/optimize_mlp_grad.png.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from mlir import ir

import dlvm_mlir
from dlvm_mlir.ad.residuals import residuals
from dlvm_mlir.backend.cpu import CPU_FUSION
from dlvm_mlir.compiler import CompileOptions, lower
from dlvm_mlir.backend.kernel_fusion import count_kernels, fuse_kernels

OUT = Path(__file__).resolve().parent / "out"
SIZES = [(784, 512), (512, 512), (512, 10)]


def program(batch: int) -> str:
    b = batch
    return f"""
func.func @loss(%x: tensor<{b}x784xf32>, %w1: tensor<784x512xf32>, %b1: tensor<1x512xf32>,
                %w2: tensor<512x512xf32>, %b2: tensor<1x512xf32>, %w3: tensor<512x10xf32>,
                %b3: tensor<1x10xf32>, %y: tensor<{b}x10xf32>) -> tensor<f32> {{
  %0 = dlvm.dot %x, %w1 : tensor<{b}x784xf32>, tensor<784x512xf32>
  %1 = dlvm.add %0, %b1 : tensor<{b}x512xf32>, tensor<1x512xf32>
  %2 = dlvm.tanh %1 : tensor<{b}x512xf32>
  %3 = dlvm.dot %2, %w2 : tensor<{b}x512xf32>, tensor<512x512xf32>
  %4 = dlvm.add %3, %b2 : tensor<{b}x512xf32>, tensor<1x512xf32>
  %5 = dlvm.tanh %4 : tensor<{b}x512xf32>
  %6 = dlvm.dot %5, %w3 : tensor<{b}x512xf32>, tensor<512x10xf32>
  %7 = dlvm.add %6, %b3 : tensor<{b}x10xf32>, tensor<1x10xf32>
  %8 = dlvm.log_softmax %7 axis 1 : tensor<{b}x10xf32>
  %9 = dlvm.mul %y, %8 : tensor<{b}x10xf32>, tensor<{b}x10xf32>
  %10 = dlvm.reduce add %9 dims [0, 1] : tensor<{b}x10xf32>
  %one = dlvm.constant dense<1.0> : tensor<f32>
  %n = dlvm.constant dense<-{b}.0> : tensor<f32>
  %scale = dlvm.div %one, %n : tensor<f32>, tensor<f32>
  %11 = dlvm.mul %10, %scale : tensor<f32>, tensor<f32>
  return %11 : tensor<f32>
}}
func.func private @loss_grad(tensor<{b}x784xf32>, tensor<784x512xf32>, tensor<1x512xf32>, tensor<512x512xf32>,
                             tensor<1x512xf32>, tensor<512x10xf32>, tensor<1x10xf32>, tensor<{b}x10xf32>)
  -> (tensor<784x512xf32>, tensor<1x512xf32>, tensor<512x512xf32>, tensor<1x512xf32>, tensor<512x10xf32>,
      tensor<1x10xf32>, tensor<f32>)
  attributes {{dlvm.gradient = #dlvm.gradient<of @loss wrt [1, 2, 3, 4, 5, 6] keeping [0]>}}
"""


@dataclass(frozen=True)
class Config:
    label: str
    optimize: bool
    checkpoint: str = "save-everything"
    budget: str = ""

    def options(self) -> CompileOptions:
        return CompileOptions(optimize=self.optimize, checkpoint=self.checkpoint, checkpoint_budget=self.budget)


CONFIGS = [
    Config("AD output (canonicalize, cse)", optimize=False),
    Config("dlvm-optimize", optimize=True),
    Config("dlvm-optimize, save-dots", optimize=True, checkpoint="save-dots"),
    Config("dlvm-optimize, save-nothing", optimize=True, checkpoint="save-nothing"),
    Config("dlvm-optimize, min-recompute 300KiB", optimize=True, checkpoint="min-recompute", budget="300KiB"),
]


def _gradient_fn(module: ir.Module) -> ir.Operation:
    for op in module.body.operations:
        if ir.StringAttr(op.attributes["sym_name"]).value == "loss_grad":
            return op.operation
    raise KeyError("loss_grad")


def _count_ops(fn: ir.Operation) -> int:
    count = 0

    def visit(op: ir.Operation) -> ir.WalkResult:
        nonlocal count
        count += 1
        return ir.WalkResult.ADVANCE

    fn.walk(visit)
    return count - 2  # the function itself and its return


def _gradient_kernels(module: ir.Module) -> int:
    return count_kernels(module, per_function=True)["loss_grad"]["total"]


def _median_ms(fn: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def numpy_gradient(x, w1, b1, w2, b2, w3, b3, y):
    """The same gradient, written by hand in numpy (float32)."""
    h1 = np.tanh(x @ w1 + b1)
    h2 = np.tanh(h1 @ w2 + b2)
    o = h2 @ w3 + b3
    o = o - o.max(axis=1, keepdims=True)
    logp = o - np.log(np.exp(o).sum(axis=1, keepdims=True))
    n = x.shape[0]
    loss = -(y * logp).sum() / n
    do = (np.exp(logp) * y.sum(axis=1, keepdims=True) - y) / n
    dh2 = (do @ w3.T) * (1 - h2 * h2)
    dh1 = (dh2 @ w2.T) * (1 - h1 * h1)
    return (x.T @ dh1, dh1.sum(0, keepdims=True), h1.T @ dh2, dh2.sum(0, keepdims=True),
            h2.T @ do, do.sum(0, keepdims=True), loss)


def measure(batch: int, repeats: int) -> list[dict]:
    text = program(batch)
    rng = np.random.default_rng(0)
    params = [rng.standard_normal(s).astype(np.float32) * 0.05 for s in [(batch, 784)] + [
        shape for pair in SIZES for shape in (pair, (1, pair[1]))]]
    args = params + [np.eye(10, dtype=np.float32)[rng.integers(0, 10, batch)]]
    reference = numpy_gradient(*args)

    raw = lower(text, until="ad")  # keep the module alive while its function is read
    raw_ops = _count_ops(_gradient_fn(raw))
    rows = []
    for config in CONFIGS:
        optimized = lower(text, until="optimize", options=config.options())
        fn = _gradient_fn(optimized)
        found = residuals(fn)
        linalg = lower(text, until="linalg", options=config.options())
        kernels_before = _gradient_kernels(linalg)
        with linalg.context:
            fuse_kernels(linalg, CPU_FUSION)
        start = time.perf_counter()
        exe = dlvm_mlir.compile(text, optimize=config.optimize, checkpoint=config.checkpoint,
                                checkpoint_budget=config.budget)
        compile_s = time.perf_counter() - start
        grad = exe["loss_grad"]
        for got, want in zip(grad(*args), reference, strict=True):
            np.testing.assert_allclose(got, want, rtol=2e-3, atol=2e-5)
        for _ in range(3):
            grad(*args)
        rows.append({
            "config": config.label,
            "ops": _count_ops(fn),
            "residual_bytes": sum(r.bytes or 0 for r in found if r.status == "saved"),
            "recompute_mflops": sum(r.flops for r in found if r.status == "recomputed") / 1e6,
            "kernels": kernels_before,
            "kernels_fused": _gradient_kernels(linalg),
            "compile_s": compile_s,
            "grad": grad,
        })
    # Time all configurations and numpy interleaved, so machine noise hits them alike.
    samples: dict[str, list[float]] = {row["config"]: [] for row in rows} | {"numpy": []}
    for _ in range(repeats):
        for row in rows:
            samples[row["config"]].append(_median_ms(lambda g=row["grad"]: g(*args), 1))
        samples["numpy"].append(_median_ms(lambda: numpy_gradient(*args), 1))
    numpy_ms = statistics.median(samples["numpy"])
    base_ms = statistics.median(samples[rows[0]["config"]])
    for row in rows:
        row["ms"] = statistics.median(samples[row["config"]])
        row["vs_ad"] = row["ms"] / base_ms
        row["vs_numpy"] = row["ms"] / numpy_ms
        del row["grad"]
    print(f"raw AD output (before any clean-up): {raw_ops} ops; numpy gradient {numpy_ms:.2f} ms")
    return rows


def table(rows: list[dict]) -> str:
    lines = [
        "| configuration | ops | residual bytes | recompute MFLOP | kernels (lowered -> fused) | time ms | vs AD output | vs numpy | compile s |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['config']} | {r['ops']} | {r['residual_bytes']:,} | {r['recompute_mflops']:.1f} | "
            f"{r['kernels']} -> {r['kernels_fused']} | {r['ms']:.2f} | {r['vs_ad']:.2f} | {r['vs_numpy']:.2f} | "
            f"{r['compile_s']:.1f} |"
        )
    return "\n".join(lines)


def plot(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [r["config"].replace(", ", "\n") for r in rows]
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.5))
    for ax, key, title in zip(
        axes,
        ("residual_bytes", "kernels_fused", "ms"),
        ("residual bytes (reverse sweep)", "kernels after fusion", "gradient time (ms, median)"),
        strict=True,
    ):
        ax.bar(range(len(rows)), [r[key] for r in rows], color="tab:blue")
        ax.set_xticks(range(len(rows)), labels, fontsize=7)
        ax.set_title(title)
    fig.suptitle("MLP 784-512-512-10 gradient: dlvm-optimize and dlvm-checkpoint")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args()
    rows = measure(args.batch, args.repeats)
    print(table(rows))
    path = OUT / "optimize_mlp_grad.png"
    plot(rows, path)
    print(f"plot: {path}")


if __name__ == "__main__":
    main()
