"""One training step of examples/char_lm.py (gradient + Adam), dlvm vs jax.jit vs PyTorch.

The model is the example's own (``logits``/``cross_entropy`` written against an
op table); each framework runs it on the same windows of text and the same
parameters:

- dlvm: the example's staged ``adam_step`` (NNKit: ``dl.gradient`` of the
  loss, synthesized by dlvm-differentiate, plus the Adam update), compiled
  through dlvm-optimize, dlvm-to-linalg and the CPU back end;
- JAX: ``jax.jit`` of ``value_and_grad`` + the same Adam update;
- PyTorch: eager, ``loss.backward()`` + ``torch.optim.Adam`` (foreach), 2 threads.

Checks that dlvm's loss and updated parameters match JAX's, then reports the
median milliseconds per step (the frameworks take turns, benchmarks/turns.py),
the ratio to the fastest peer, and each one's compile time. Writes
benchmarks/out/char_lm_step.png and .json.

    python benchmarks/char_lm_step.py [--repeats 30] [--layers 2 --width 128 --batch 32 --context 64]
                                      [--skip jax torch]
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
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "examples"))
import char_lm  # noqa: E402
from turns import Turns, take_turns  # noqa: E402

OUT = HERE / "out"
BETAS, EPS, LR = (0.9, 0.95), 1e-8, 1e-3


def problem(args: argparse.Namespace) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    rng = np.random.default_rng(0)
    data = char_lm.encode(char_lm.load_corpus(limit=200_000))
    tokens, labels = char_lm.batch(data, rng.integers(0, len(data) - args.context - 1, args.batch), args.context)
    params = char_lm.init_params(rng, len(char_lm.VOCAB), args.context, args.width, args.layers)
    return tokens, labels, params


def dlvm_runner(args: argparse.Namespace, tokens, labels, params) -> tuple[Callable[[], Any], float, Any]:
    step = char_lm.nnkit_functions(args.heads)["adam_step"]
    state = [*params, *(np.zeros_like(p) for p in params), *(np.zeros_like(p) for p in params)]
    call = (tokens, labels, np.float32(1), np.float32(LR), *state)
    start = time.perf_counter()
    step.specialize(*call).executable  # noqa: B018 - compiles (or loads from the disk cache)
    compile_s = time.perf_counter() - start
    return (lambda: step(*call)), compile_s, step(*call)


def jax_runner(args: argparse.Namespace, tokens, labels, params) -> tuple[Callable[[], Any], float, Any]:
    import jax
    import jax.numpy as jnp

    class Ops:
        mean = staticmethod(lambda v: jnp.mean(v, axis=-1, keepdims=True))
        mean_all = staticmethod(jnp.mean)
        rsqrt = staticmethod(jax.lax.rsqrt)
        tanh = staticmethod(jnp.tanh)
        transpose = staticmethod(jnp.transpose)
        softmax = staticmethod(lambda v: jax.nn.softmax(v, axis=-1))
        log_softmax = staticmethod(lambda v: jax.nn.log_softmax(v, axis=-1))
        where = staticmethod(jnp.where)
        take = staticmethod(lambda table, index: table[index])
        pick = staticmethod(lambda v, index: jnp.take_along_axis(v, index[..., None], axis=-1))
        gelu = staticmethod(lambda v: char_lm.gelu(Ops, v))
        causal_mask = staticmethod(lambda n: jnp.tril(jnp.ones((n, n), bool)))

    def loss(params, tokens, labels):
        return char_lm.cross_entropy(Ops, tokens, labels, list(params), args.heads)

    @jax.jit
    def step(tokens, labels, t, lr, params, moments, velocities):
        value, grads = jax.value_and_grad(loss)(params, tokens, labels)
        size = lr * jnp.sqrt(1.0 - BETAS[1] ** t) / (1.0 - BETAS[0] ** t)
        new_m = [BETAS[0] * m + (1.0 - BETAS[0]) * g for m, g in zip(moments, grads)]
        new_v = [BETAS[1] * v + (1.0 - BETAS[1]) * g * g for v, g in zip(velocities, grads)]
        new_p = [p - size * m / (jnp.sqrt(v) + EPS) for p, m, v in zip(params, new_m, new_v)]
        return new_p, new_m, new_v, value

    put = jax.device_put
    call = (put(tokens), put(labels), np.float32(1), np.float32(LR), [put(p) for p in params],
            [put(np.zeros_like(p)) for p in params], [put(np.zeros_like(p)) for p in params])
    start = time.perf_counter()
    out = jax.block_until_ready(step(*call))
    compile_s = time.perf_counter() - start
    return (lambda: jax.block_until_ready(step(*call))), compile_s, out


def torch_runner(args: argparse.Namespace, tokens, labels, params) -> tuple[Callable[[], Any], float, Any]:
    import torch

    torch.set_num_threads(THREADS)

    class Ops:
        mean = staticmethod(lambda v: v.mean(dim=-1, keepdim=True))
        mean_all = staticmethod(torch.mean)
        rsqrt = staticmethod(torch.rsqrt)
        tanh = staticmethod(torch.tanh)
        transpose = staticmethod(lambda v, perm: v.permute(*perm))
        softmax = staticmethod(lambda v: torch.softmax(v, dim=-1))
        log_softmax = staticmethod(lambda v: torch.log_softmax(v, dim=-1))
        where = staticmethod(lambda mask, a, b: torch.where(mask, a, torch.tensor(b, dtype=a.dtype)))
        take = staticmethod(lambda table, index: table[index])
        pick = staticmethod(lambda v, index: torch.gather(v, -1, index[..., None]))
        gelu = staticmethod(lambda v: char_lm.gelu(Ops, v))
        causal_mask = staticmethod(lambda n: torch.tril(torch.ones((n, n), dtype=torch.bool)))

    tt, tl = torch.from_numpy(tokens.astype(np.int64)), torch.from_numpy(labels.astype(np.int64))
    tp = [torch.from_numpy(p.copy()).requires_grad_() for p in params]
    optimizer = torch.optim.Adam(tp, lr=LR, betas=BETAS, eps=EPS, foreach=True)
    snapshot = [p.detach().clone() for p in tp]

    def run() -> Any:
        optimizer.zero_grad(set_to_none=True)
        value = char_lm.cross_entropy(Ops, tt, tl, tp, args.heads)
        value.backward()
        optimizer.step()
        return value

    start = time.perf_counter()
    value = run()
    first = ([p.detach().numpy().copy() for p in tp], float(value))
    with torch.no_grad():  # the first step again from the same state, so that every step is alike
        for p, s in zip(tp, snapshot):
            p.copy_(s)
    return run, time.perf_counter() - start, first


def check(dlvm_out: Any, jax_out: Any, count: int) -> float:
    """Largest relative difference of dlvm's first step from JAX's (loss and new parameters)."""
    new_p, _, _, value = jax_out
    worst = abs(float(dlvm_out[-1]) - float(value)) / abs(float(value))
    for got, want in zip(dlvm_out[:count], new_p):
        want = np.asarray(want)
        worst = max(worst, float(np.max(np.abs(got - want)) / (np.max(np.abs(want)) + 1e-30)))
    return worst


def plot(results: dict[str, float], frameworks: list[str], title: str, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    bars = ax.bar(frameworks, [results[f] for f in frameworks], color=["C0", "C1", "C2"][: len(frameworks)])
    ax.bar_label(bars, fmt="%.1f")
    ax.set_ylabel("median ms per step (lower is better)")
    ax.set_title(title, fontsize=9)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--block", type=int, default=3)
    parser.add_argument("--settle", type=int, default=1)
    parser.add_argument("--pause", type=float, default=0.2)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--width", type=int, default=128)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--context", type=int, default=64)
    parser.add_argument("--skip", nargs="*", default=[], choices=["jax", "torch"])
    args = parser.parse_args()

    tokens, labels, params = problem(args)
    runners: dict[str, Callable[[], Any]] = {}
    compile_s: dict[str, float] = {}
    runners["dlvm"], compile_s["dlvm"], dlvm_first = dlvm_runner(args, tokens, labels, params)
    if "jax" not in args.skip:
        runners["jax"], compile_s["jax"], jax_first = jax_runner(args, tokens, labels, params)
        difference = check(dlvm_first, jax_first, len(params))
        print(f"dlvm's first step vs JAX's: largest relative difference {difference:.1e}")
        if difference > 1e-3:
            print("error: dlvm and JAX disagree", file=sys.stderr)
            return 1
    if "torch" not in args.skip:
        runners["torch"], compile_s["torch"], _ = torch_runner(args, tokens, labels, params)

    turns = Turns(repeats=args.repeats, block=args.block, settle=args.settle, pause=args.pause)
    timed = take_turns(runners, turns)
    results = {name: statistics.median(1000 * s.wall for s in samples) for name, samples in timed.items()}
    peers = [results[f] for f in results if f != "dlvm"]
    best = min(peers) if peers else float("nan")
    shape = f"{args.layers} layers x {args.width}, {args.heads} heads, batch {args.batch} x context {args.context}"
    print(f"char LM training step ({shape}); median ms, {turns.describe()}; {THREADS} threads, "
          f"load average {os.getloadavg()[0]:.1f}")
    for name, ms in results.items():
        print(f"  {name:6s} {ms:9.1f} ms   {ms / best:5.2f}x best peer   first call / compile {compile_s[name]:.1f} s")
    OUT.mkdir(parents=True, exist_ok=True)
    record = {"shape": shape, "median_ms": results, "compile_s": compile_s, "dlvm_over_best_peer": results["dlvm"] / best}
    (OUT / "char_lm_step.json").write_text(json.dumps(record, indent=2))
    plot(results, list(results), f"char LM training step, {shape}, f32, {THREADS} threads", OUT / "char_lm_step.png")
    print(f"wrote {os.path.relpath(OUT / 'char_lm_step.png')} and char_lm_step.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
