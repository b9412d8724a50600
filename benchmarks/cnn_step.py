"""A small ResNet-style CNN's training step: dlvm (NNKit) vs JAX vs PyTorch eager and torch.compile.

The network (issue 15), f32, NCHW, 3x32x32 inputs, 10 classes: conv 3x3 3->32
+ bias + relu; a residual block (conv 3x3 32->32 + bias + relu, conv 3x3 32->32
+ bias, add the block's input, relu); 2x2 max pooling; conv 3x3 32->64 + bias
+ relu; global average pooling; dense 64->10; softmax cross-entropy with
integer labels; one SGD step. Every framework runs the same step on the same
data and parameters: dlvm through NNKit (``dl.gradient`` + the update, one
staged function), JAX ``jax.jit(value_and_grad)``, PyTorch eager
(``backward()`` + an in-place update) and ``torch.compile`` of the same step
(inductor). dlvm's first step is checked against JAX's.

Median ms per step, in turns (benchmarks/turns.py), ratios to the fastest peer,
first-call (compile) seconds; benchmarks/out/cnn_step.png and .json.

    python benchmarks/cnn_step.py [--batches 32 128] [--repeats 20] [--skip jax torch compile]
"""

from __future__ import annotations

import os

THREADS = int(os.environ.get("BENCH_THREADS", "2"))
os.environ.setdefault("OPENBLAS_NUM_THREADS", str(THREADS))
os.environ.setdefault("OMP_NUM_THREADS", str(THREADS))
os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=1")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import argparse  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any, Callable  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from turns import Turns, take_turns  # noqa: E402

OUT = Path(__file__).resolve().parent / "out"
LR = 0.01
#: (name, shape) of the parameters, in the order every framework takes them
PARAMS = (
    ("k0", (32, 3, 3, 3)), ("c0", (1, 32, 1, 1)),
    ("k1", (32, 32, 3, 3)), ("c1", (1, 32, 1, 1)),
    ("k2", (32, 32, 3, 3)), ("c2", (1, 32, 1, 1)),
    ("k3", (64, 32, 3, 3)), ("c3", (1, 64, 1, 1)),
    ("w", (64, 10)), ("b", (1, 10)),
)


def problem(batch: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch, 3, 32, 32)).astype(np.float32)
    labels = rng.integers(0, 10, batch).astype(np.int32)
    params = []
    for name, shape in PARAMS:
        fan_in = int(np.prod(shape[1:])) if name.startswith("k") else shape[0]
        scale = np.sqrt(2.0 / fan_in) if name.startswith(("k", "w")) else 0.0
        params.append((rng.standard_normal(shape) * scale).astype(np.float32))
    return x, labels, params


def forward(ops: Any, x: Any, k0, c0, k1, c1, k2, c2, k3, c3, w, b) -> Any:
    """The network's logits, written once for every framework through ``ops``."""
    h = ops.relu(ops.conv(x, k0) + c0)
    r = ops.relu(ops.conv(h, k1) + c1)
    h = ops.relu(ops.conv(r, k2) + c2 + h)
    h = ops.pool(h)
    h = ops.relu(ops.conv(h, k3) + c3)
    return ops.mean_hw(h) @ w + b


# -- dlvm (NNKit) ----------------------------------------------------------------


def dlvm_step() -> Any:
    import dlvm_mlir.nnkit as dl

    class Ops:
        relu = staticmethod(dl.relu)
        conv = staticmethod(lambda x, k: dl.convolve(x, k, padding=1))
        pool = staticmethod(lambda h: dl.reduce_window("max", h, (1, 1, 2, 2), (1, 1, 2, 2)))
        mean_hw = staticmethod(lambda h: dl.reduce_mean(h, axis=(2, 3)))

    @dl.function
    def loss(x, labels, *params):
        log_p = dl.log_softmax(forward(Ops, x, *params), axis=1)
        return -dl.reduce_mean(dl.take_along_axis(log_p, labels[:, None], axis=1))

    grads = dl.gradient(loss, wrt=tuple(range(2, 2 + len(PARAMS))), keeping=(0,))

    @dl.function
    def step(x, labels, *params):
        *g, value = grads(x, labels, *params)
        return (*(p - LR * d for p, d in zip(params, g)), value)

    return step


def dlvm_runner(x, labels, params) -> tuple[Callable[[], Any], float, Any]:
    step = dlvm_step()
    start = time.perf_counter()
    step.specialize(x, labels, *params).executable  # noqa: B018 - compiles (or loads from the disk cache)
    compile_s = time.perf_counter() - start
    return (lambda: step(x, labels, *params)), compile_s, step(x, labels, *params)


# -- peers -------------------------------------------------------------------------


def jax_runner(x, labels, params) -> tuple[Callable[[], Any], float, Any]:
    import jax
    import jax.numpy as jnp

    class Ops:
        relu = staticmethod(jax.nn.relu)
        conv = staticmethod(lambda x, k: jax.lax.conv_general_dilated(x, k, (1, 1), ((1, 1), (1, 1))))
        pool = staticmethod(lambda h: jax.lax.reduce_window(h, -jnp.inf, jax.lax.max, (1, 1, 2, 2), (1, 1, 2, 2),
                                                            "VALID"))
        mean_hw = staticmethod(lambda h: jnp.mean(h, axis=(2, 3)))

    def loss(params, x, labels):
        log_p = jax.nn.log_softmax(forward(Ops, x, *params), axis=1)
        return -jnp.mean(jnp.take_along_axis(log_p, labels[:, None], axis=1))

    @jax.jit
    def step(x, labels, params):
        value, g = jax.value_and_grad(loss)(params, x, labels)
        return [p - LR * d for p, d in zip(params, g)], value

    call = (jax.device_put(x), jax.device_put(labels), [jax.device_put(p) for p in params])
    start = time.perf_counter()
    out = jax.block_until_ready(step(*call))
    return (lambda: jax.block_until_ready(step(*call))), time.perf_counter() - start, out


def torch_ops(torch: Any) -> Any:
    """The network's operations in PyTorch, for :func:`forward` (any device)."""
    f = torch.nn.functional

    class Ops:
        relu = staticmethod(torch.relu)
        conv = staticmethod(lambda x, k: f.conv2d(x, k, padding=1))
        pool = staticmethod(lambda h: f.max_pool2d(h, 2))
        mean_hw = staticmethod(lambda h: h.mean(dim=(2, 3)))

    return Ops


def torch_runner(x, labels, params, compiled: bool) -> tuple[Callable[[], Any], float, Any]:
    import torch

    torch.set_num_threads(THREADS)
    f = torch.nn.functional
    Ops = torch_ops(torch)

    tx, tl = torch.from_numpy(x), torch.from_numpy(labels.astype(np.int64))
    tp = [torch.from_numpy(p.copy()).requires_grad_() for p in params]

    def step() -> Any:
        value = f.cross_entropy(forward(Ops, tx, *tp), tl)
        grads = torch.autograd.grad(value, tp)
        with torch.no_grad():
            for p, g in zip(tp, grads):
                p.sub_(LR * g)
        return value

    run = torch.compile(step) if compiled else step
    snapshot = [p.detach().clone() for p in tp]
    start = time.perf_counter()
    run()
    compile_s = time.perf_counter() - start
    with torch.no_grad():  # every timed step starts from the same parameters' scale
        for p, s in zip(tp, snapshot):
            p.copy_(s)
    return run, compile_s, None


def plot(results: dict[int, dict[str, float]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    batches = list(results)
    names = list(results[batches[0]])
    fig, ax = plt.subplots(figsize=(7, 4))
    width = 0.8 / len(names)
    for i, name in enumerate(names):
        bars = ax.bar(np.arange(len(batches)) + i * width, [results[b][name] for b in batches], width, label=name)
        ax.bar_label(bars, fmt="%.1f", fontsize=7)
    ax.set_xticks(np.arange(len(batches)) + width * (len(names) - 1) / 2)
    ax.set_xticklabels([f"batch {b}" for b in batches])
    ax.set_ylabel("median ms per step (lower is better)")
    ax.set_title(f"ResNet-style CNN training step, 3x32x32, f32, {THREADS} threads", fontsize=9)
    ax.legend()
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, nargs="*", default=[32, 128])
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--block", type=int, default=2)
    parser.add_argument("--settle", type=int, default=1)
    parser.add_argument("--pause", type=float, default=0.2)
    parser.add_argument("--skip", nargs="*", default=[], choices=["jax", "torch", "compile"])
    parser.add_argument("--tuning", choices=("off", "use", "search"),
                        help="dlvm's tuning database (default: $DLVM_MLIR_TUNE, else use; search: tune the "
                             "layers' kernels first, a few seconds each)")
    args = parser.parse_args()
    if args.tuning:
        os.environ["DLVM_MLIR_TUNE"] = args.tuning
    from dlvm_mlir.backend.tuning import summary

    print(f"dlvm {summary()}", flush=True)

    turns = Turns(repeats=args.repeats, block=args.block, settle=args.settle, pause=args.pause)
    results: dict[int, dict[str, float]] = {}
    record: dict[str, Any] = {"threads": THREADS, "batches": {}}
    for batch in args.batches:
        x, labels, params = problem(batch)
        runners: dict[str, Callable[[], Any]] = {}
        compile_s: dict[str, float] = {}
        runners["dlvm"], compile_s["dlvm"], dlvm_first = dlvm_runner(x, labels, params)
        if "jax" not in args.skip:
            runners["jax"], compile_s["jax"], (jax_params, jax_value) = jax_runner(x, labels, params)
            worst = abs(float(dlvm_first[-1]) - float(jax_value)) / abs(float(jax_value))
            for got, want in zip(dlvm_first[:-1], jax_params):
                want = np.asarray(want)
                worst = max(worst, float(np.max(np.abs(got - want)) / (np.max(np.abs(want)) + 1e-30)))
            print(f"batch {batch}: dlvm's first step vs JAX's: largest relative difference {worst:.1e}", flush=True)
            if worst > 1e-3:
                print("error: dlvm and JAX disagree", file=sys.stderr)
                return 1
        if "torch" not in args.skip:
            runners["torch"], compile_s["torch"], _ = torch_runner(x, labels, params, compiled=False)
        if "compile" not in args.skip:
            runners["torch.compile"], compile_s["torch.compile"], _ = torch_runner(x, labels, params, compiled=True)
        timed = take_turns(runners, turns)
        ms = {name: statistics.median(1000 * s.wall for s in samples) for name, samples in timed.items()}
        peers = [v for name, v in ms.items() if name != "dlvm"]
        best = min(peers) if peers else float("nan")
        results[batch] = ms
        record["batches"][batch] = {"median_ms": ms, "compile_s": compile_s, "dlvm_over_best_peer": ms["dlvm"] / best}
        print(f"batch {batch}: median ms, {turns.describe()}; {THREADS} threads, "
              f"load average {os.getloadavg()[0]:.1f}")
        for name, value in ms.items():
            print(f"  {name:14s} {value:8.2f} ms  {value / best:5.2f}x best peer  first call {compile_s[name]:6.1f} s",
                  flush=True)
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "cnn_step.json").write_text(json.dumps(record, indent=2))
    plot(results, OUT / "cnn_step.png")
    print(f"wrote {os.path.relpath(OUT / 'cnn_step.png')} and cnn_step.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
