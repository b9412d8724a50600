"""PyTorch training steps: eager vs torch.compile(inductor) vs torch.compile(backend="dlvm").

Three plain PyTorch models, f32, a training step = forward, softmax
cross-entropy with integer labels, ``backward()``, SGD update (``optimizer.step``,
eager in every mode):

- mlp: 784-512-512-10 with ReLU, batch 128;
- transformer: ``nn.TransformerEncoderLayer(128, 4 heads, 512, dropout 0)`` on
  batch 16 x 64 tokens, mean-pooled, a linear head to 10 classes;
- cnn: conv 3x3 1->16 + relu, max pool 2, conv 3x3 16->32 (stride 2) + relu,
  linear to 10, on 28x28 digits-sized images, batch 64.

Each mode compiles the model and the loss together (``torch.compile`` of the
loss function). The first step of each compiled mode is checked against eager.
Median ms per step, in turns (benchmarks/turns.py), ratios to the fastest;
first-call (compile) seconds; benchmarks/out/torch_backend.png and .json.

    python benchmarks/torch_backend.py [--models mlp transformer cnn] [--repeats 20] [--skip inductor]
"""

from __future__ import annotations

import os

THREADS = int(os.environ.get("BENCH_THREADS", "2"))
os.environ.setdefault("OMP_NUM_THREADS", str(THREADS))

import argparse  # noqa: E402
import copy  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any, Callable  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402
from torch import nn  # noqa: E402
from torch.nn import functional as F  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from turns import Turns, take_turns  # noqa: E402

OUT = Path(__file__).resolve().parent / "out"


class Encoder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(128, 4, 512, batch_first=True, dropout=0.0)
        self.head = nn.Linear(128, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.layer(x).mean(1))


class CNN(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.c1 = nn.Conv2d(1, 16, 3, padding=1)
        self.c2 = nn.Conv2d(16, 32, 3, stride=2)
        self.fc = nn.Linear(32 * 6 * 6, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.max_pool2d(torch.relu(self.c1(x)), 2)
        return self.fc(torch.relu(self.c2(x)).flatten(1))


MODELS: dict[str, tuple[Callable[[], nn.Module], tuple[int, ...]]] = {
    "mlp": (lambda: nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                                  nn.Linear(512, 10)), (128, 784)),
    "transformer": (Encoder, (16, 64, 128)),
    "cnn": (CNN, (64, 1, 28, 28)),
}


def runner(model: nn.Module, x: torch.Tensor, y: torch.Tensor, mode: str) -> tuple[Callable[[], Any], float, float]:
    """A step function, its first call's seconds and its first loss."""
    model = copy.deepcopy(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)

    def loss_fn(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(model(x), y)

    fn = loss_fn if mode == "eager" else torch.compile(loss_fn, backend=mode)

    def step() -> float:
        opt.zero_grad(set_to_none=True)
        loss = fn(x, y)
        loss.backward()
        opt.step()
        return loss.detach()

    start = time.perf_counter()
    first = float(step())
    return step, time.perf_counter() - start, first


def plot(results: dict[str, dict[str, float]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    models = list(results)
    modes = sorted({m for r in results.values() for m in r})
    fig, ax = plt.subplots(figsize=(7, 3.8))
    width = 0.8 / len(modes)
    for i, mode in enumerate(modes):
        ax.bar([j + i * width for j in range(len(models))], [results[m].get(mode, 0) for m in models], width,
               label=mode)
    ax.set_xticks([j + width * (len(modes) - 1) / 2 for j in range(len(models))], models)
    ax.set_ylabel(f"ms per training step (median, {THREADS} threads)")
    ax.set_title("PyTorch training step: eager, inductor, dlvm back end")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=list(MODELS))
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--skip", nargs="*", default=[], choices=["inductor", "eager"])
    args = parser.parse_args()
    torch.set_num_threads(THREADS)
    modes = [m for m in ("eager", "inductor", "dlvm") if m not in args.skip]
    turns = Turns(repeats=args.repeats, block=5, settle=1, pause=0.2, warmup=2)
    print(f"torch {torch.__version__}, {THREADS} threads; {turns.describe()}", flush=True)
    results: dict[str, dict[str, float]] = {}
    for name in args.models:
        make, shape = MODELS[name]
        torch.manual_seed(0)
        model = make()
        x = torch.randn(*shape)
        y = torch.randint(0, 10, (shape[0],))
        runners, firsts = {}, {}
        for mode in modes:
            step, seconds, loss = runner(model, x, y, mode)
            runners[mode], firsts[mode] = step, (seconds, loss)
            print(f"{name}: {mode} first step {seconds:.1f} s, loss {loss:.5f}", flush=True)
        if "eager" in firsts:
            for mode, (_, loss) in firsts.items():
                assert abs(loss - firsts["eager"][1]) < 1e-4 * max(1.0, abs(loss)), (mode, loss)
        timed = take_turns(runners, turns)
        medians = {mode: 1e3 * statistics.median(s.wall for s in samples) for mode, samples in timed.items()}
        best = min(medians.values())
        for mode, ms in medians.items():
            print(f"  {name:12s} {mode:9s} {ms:8.2f} ms   {ms / best:5.2f}x fastest   "
                  f"(first call {firsts[mode][0]:.1f} s)", flush=True)
        if "inductor" in medians and "dlvm" in medians:
            print(f"  {name}: dlvm / inductor = {medians['dlvm'] / medians['inductor']:.2f}", flush=True)
        results[name] = medians
    OUT.mkdir(exist_ok=True)
    (OUT / "torch_backend.json").write_text(json.dumps({"threads": THREADS, "ms": results}, indent=2))
    plot(results, OUT / "torch_backend.png")
    print(f"wrote {OUT / 'torch_backend.png'}")
    return 0


if __name__ == "__main__":
    np.set_printoptions(precision=4)
    sys.exit(main())
