"""One MLP training step (gradient + SGD update), dlvm vs JAX vs PyTorch vs numpy.

MLP 784-512-512-10, tanh, softmax cross-entropy, f32, batch 32 and 128. Each
framework runs the same step on the same data and parameters:

- dlvm: NNKit; the step is one staged function applying a ``dl.gradient``
  (body synthesized by dlvm-differentiate) and the SGD update, compiled through
  dlvm-optimize, dlvm-to-linalg and the CPU back end;
- JAX: ``jax.jit`` of ``value_and_grad`` + update;
- PyTorch: eager, ``loss.backward()`` + in-place update, 2 threads;
- numpy: hand-written backward (OpenBLAS, 2 threads).

Reports the median milliseconds per step over repeats (the frameworks take
turns, benchmarks/turns.py, so a change in machine load hits all alike), ratios to the fastest
peer, and dlvm's compile time (cold: empty disk cache; warm: from the disk
cache; each in a fresh process). Writes benchmarks/out/mlp_step.png and
benchmarks/out/mlp_step.json.

    python benchmarks/mlp_step.py [--repeats 50] [--block 5 --settle 2 --pause 0.2] [--batches 32 128]
                                  [--skip jax torch compile]
"""

from __future__ import annotations

import os

THREADS = int(os.environ.get("BENCH_THREADS", "2"))
# Before numpy is imported: BLAS and XLA thread pools sized to the machine.
os.environ.setdefault("OPENBLAS_NUM_THREADS", str(THREADS))
os.environ.setdefault("OMP_NUM_THREADS", str(THREADS))
os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=1")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import argparse  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from typing import Any  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from turns import Turns, take_turns  # noqa: E402

SIZES = (784, 512, 512, 10)
LR = 0.01
OUT = Path(__file__).resolve().parent / "out"


def make_problem(batch: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch, SIZES[0])).astype(np.float32)
    y = np.eye(SIZES[-1], dtype=np.float32)[rng.integers(0, SIZES[-1], batch)]
    params = []
    for fan_in, fan_out in zip(SIZES, SIZES[1:]):
        bound = np.sqrt(6.0 / (fan_in + fan_out))
        params.append(rng.uniform(-bound, bound, (fan_in, fan_out)).astype(np.float32))
        params.append(np.zeros((1, fan_out), np.float32))
    return x, y, params


# -- dlvm (NNKit) ---------------------------------------------------------------


def dlvm_functions() -> tuple[Any, Any, Any]:
    """The staged loss, its gradient (declaration) and the SGD step that applies it."""
    import dlvm_mlir.nnkit as dl

    @dl.function
    def loss(x, y, w1, b1, w2, b2, w3, b3):
        h1 = dl.tanh(x @ w1 + b1)
        h2 = dl.tanh(h1 @ w2 + b2)
        log_p = dl.log_softmax(h2 @ w3 + b3, axis=1)
        return -dl.reduce_sum(y * log_p) / x.shape[0]

    grads = dl.gradient(loss, wrt=(2, 3, 4, 5, 6, 7), keeping=(0,))

    @dl.function
    def sgd_step(x, y, w1, b1, w2, b2, w3, b3):
        params = (w1, b1, w2, b2, w3, b3)
        *g, value = grads(x, y, *params)
        return (*(p - LR * d for p, d in zip(params, g)), value)

    return loss, grads, sgd_step


def dlvm_step() -> Any:
    return dlvm_functions()[2]


def compile_only(batch: int) -> None:
    """Child process: compile the dlvm step for ``batch`` and print the seconds as JSON."""
    import dlvm_mlir  # noqa: F401  (import cost is not compile time)

    step = dlvm_step()
    x, y, params = make_problem(batch)
    start = time.perf_counter()
    specialization = step.specialize(x, y, *params)
    specialization.executable  # noqa: B018 - compiles
    print(json.dumps({"compile_s": time.perf_counter() - start, "trace_s": specialization.trace_seconds}))


def compile_times(batch: int) -> dict[str, float]:
    """Cold (empty disk cache) and warm (disk cache hit) compile seconds, each in a fresh process."""
    times = {}
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, DLVM_MLIR_CACHE_DIR=cache)
        for kind in ("cold", "warm"):
            out = subprocess.run(
                [sys.executable, __file__, "--compile-only", str(batch)],
                env=env, capture_output=True, text=True, check=True,
            )
            times[kind] = json.loads(out.stdout.strip().splitlines()[-1])["compile_s"]
    return times


# -- peers ----------------------------------------------------------------------


def numpy_step(x, y, w1, b1, w2, b2, w3, b3):
    n = x.shape[0]
    a1 = x @ w1 + b1
    h1 = np.tanh(a1)
    a2 = h1 @ w2 + b2
    h2 = np.tanh(a2)
    z = h2 @ w3 + b3
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    s = e.sum(axis=1, keepdims=True)
    log_p = z - np.log(s)
    value = -(y * log_p).sum() / n
    dz = (e / s - y) / n
    dw3, db3 = h2.T @ dz, dz.sum(0, keepdims=True)
    da2 = (dz @ w3.T) * (1 - h2 * h2)
    dw2, db2 = h1.T @ da2, da2.sum(0, keepdims=True)
    da1 = (da2 @ w2.T) * (1 - h1 * h1)
    dw1, db1 = x.T @ da1, da1.sum(0, keepdims=True)
    return (w1 - LR * dw1, b1 - LR * db1, w2 - LR * dw2, b2 - LR * db2, w3 - LR * dw3, b3 - LR * db3, value)


def jax_step() -> Callable[..., tuple]:
    import jax
    import jax.numpy as jnp

    def loss(params, x, y):
        w1, b1, w2, b2, w3, b3 = params
        h1 = jnp.tanh(x @ w1 + b1)
        h2 = jnp.tanh(h1 @ w2 + b2)
        log_p = jax.nn.log_softmax(h2 @ w3 + b3, axis=1)
        return -jnp.sum(y * log_p) / x.shape[0]

    @jax.jit
    def step(x, y, *params):
        value, grads = jax.value_and_grad(loss)(params, x, y)
        return (*(p - LR * g for p, g in zip(params, grads)), value)

    def run(x, y, *params):
        out = step(x, y, *params)
        jax.block_until_ready(out)
        return out

    return run


def torch_step() -> Callable[..., tuple]:
    import torch

    torch.set_num_threads(THREADS)

    def run(x, y, *params):
        ps = [p.requires_grad_() for p in params]
        w1, b1, w2, b2, w3, b3 = ps
        h1 = torch.tanh(x @ w1 + b1)
        h2 = torch.tanh(h1 @ w2 + b2)
        log_p = torch.log_softmax(h2 @ w3 + b3, dim=1)
        value = -(y * log_p).sum() / x.shape[0]
        value.backward()
        with torch.no_grad():
            out = [p - LR * p.grad for p in ps]
        for p in ps:
            p.grad = None
        return (*out, value.detach())

    return run


# -- timing -----------------------------------------------------------------------


def bench_batch(batch: int, turns: Turns, skip: set[str]) -> dict[str, float]:
    x, y, params = make_problem(batch)
    results: dict[str, float] = {}
    reference = numpy_step(x, y, *params)
    runners: dict[str, tuple[Callable[[], object], int]] = {}

    with threadpool_limits(limits=1, user_api="blas"):
        step = dlvm_step()
        start = time.perf_counter()
        specialization = step.specialize(x, y, *params)
        specialization.executable  # noqa: B018 - compiles (or loads from the disk cache)
        results["dlvm_compile_in_process_s"] = time.perf_counter() - start
        out = step(x, y, *params)
        for got, want in zip(out, reference):
            np.testing.assert_allclose(got, want, rtol=2e-3, atol=2e-5)
        runners["dlvm"] = (lambda: step(x, y, *params), 1)

        if "jax" not in skip:
            import jax

            run = jax_step()
            jx, jy, jp = jax.device_put(x), jax.device_put(y), [jax.device_put(p) for p in params]
            start = time.perf_counter()
            run(jx, jy, *jp)
            results["jax_compile_s"] = time.perf_counter() - start
            runners["jax"] = (lambda: run(jx, jy, *jp), 1)

        if "torch" not in skip:
            import torch

            run_t = torch_step()
            tx, ty = torch.from_numpy(x), torch.from_numpy(y)
            tp = [torch.from_numpy(p.copy()) for p in params]
            runners["torch"] = (lambda: run_t(tx, ty, *tp), 1)

    runners["numpy"] = (lambda: numpy_step(x, y, *params), THREADS)
    blas = {name: threads for name, (_, threads) in runners.items()}
    timed = take_turns(
        {name: fn for name, (fn, _) in runners.items()},
        turns,
        context=lambda name: threadpool_limits(limits=blas[name], user_api="blas"),
    )
    for name, samples in timed.items():
        ms = [1000 * sample.wall for sample in samples]
        results[name] = statistics.median(ms)
        results[f"{name}_min"] = min(ms)
    return results


def plot(table: dict[int, dict[str, float]], frameworks: list[str], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    batches = sorted(table)
    fig, ax = plt.subplots(figsize=(7, 4))
    width = 0.8 / len(frameworks)
    for i, name in enumerate(frameworks):
        values = [table[b].get(name, np.nan) for b in batches]
        bars = ax.bar(np.arange(len(batches)) + i * width, values, width, label=name)
        ax.bar_label(bars, fmt="%.2f", fontsize=7)
    ax.set_xticks(np.arange(len(batches)) + width * (len(frameworks) - 1) / 2, [f"batch {b}" for b in batches])
    ax.set_ylabel("median ms per step (lower is better)")
    ax.set_title("MLP 784-512-512-10 training step (gradient + SGD), f32, 2 threads")
    ax.legend()
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=50, help="recorded calls per framework and batch")
    parser.add_argument("--block", type=int, default=5, help="recorded calls per framework turn")
    parser.add_argument("--settle", type=int, default=2, help="unrecorded calls at the start of each turn")
    parser.add_argument("--pause", type=float, default=0.2, help="seconds of sleep before each turn")
    parser.add_argument("--batches", type=int, nargs="+", default=[32, 128])
    parser.add_argument("--skip", nargs="*", default=[], choices=["jax", "torch", "compile"])
    parser.add_argument("--compile-only", type=int, metavar="BATCH", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.compile_only:
        compile_only(args.compile_only)
        return 0

    skip = set(args.skip)
    turns = Turns(repeats=args.repeats, block=args.block, settle=args.settle, pause=args.pause)
    frameworks = ["dlvm", *(f for f in ("jax", "torch") if f not in skip), "numpy"]
    table: dict[int, dict[str, float]] = {}
    for batch in args.batches:
        table[batch] = bench_batch(batch, turns, skip)
        if "compile" not in skip:
            for kind, seconds in compile_times(batch).items():
                table[batch][f"dlvm_compile_{kind}_s"] = seconds

    header = f"{'batch':>5} " + " ".join(f"{f:>8}" for f in frameworks) + "   dlvm / best peer   dlvm compile cold / warm"
    load = os.getloadavg()[0]
    print(f"median ms per training step ({turns.describe()}; {THREADS} threads, load average {load:.1f})")
    print(header)
    for batch, row in table.items():
        peers = [row[f] for f in ("jax", "torch") if f in row]
        best = min(peers) if peers else row["numpy"]
        compile_text = (
            f"{row['dlvm_compile_cold_s']:.1f} s / {row['dlvm_compile_warm_s']:.1f} s"
            if "dlvm_compile_cold_s" in row else "-"
        )
        print(
            f"{batch:>5} " + " ".join(f"{row[f]:8.2f}" for f in frameworks)
            + f"   {row['dlvm'] / best:16.2f}x   {compile_text}"
        )
    print("fastest call (ms): " + "; ".join(
        f"batch {b}: " + ", ".join(f"{f} {row[f + '_min']:.2f}" for f in frameworks) for b, row in table.items()
    ))
    for batch, row in table.items():
        if "jax_compile_s" in row:
            print(f"batch {batch}: JAX jit compile {row['jax_compile_s']:.2f} s; "
                  f"dlvm compile in this process {row['dlvm_compile_in_process_s']:.2f} s")
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "mlp_step.json").write_text(json.dumps({str(b): r for b, r in table.items()}, indent=2))
    plot(table, frameworks, OUT / "mlp_step.png")
    print(f"wrote {os.path.relpath(OUT / 'mlp_step.png')} and mlp_step.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
