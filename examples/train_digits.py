"""Train an MLP on scikit-learn's bundled digits (8x8 images, 10 classes) with NNKit.

Everything that touches the parameters is staged and compiled through DLVM:
the loss, its gradient (a ``#dlvm.gradient`` declaration whose body
``dlvm-differentiate`` synthesizes), the Adam update (one staged function that
applies the gradient), and the evaluation (loss and accuracy on both sets).
numpy only shuffles the data and slices batches.

    python examples/train_digits.py [--epochs 30] [--hidden 64] [--batch 64]

Writes a loss/accuracy plot to examples/out/train_digits.png; exits non-zero
if the test accuracy is below 95%.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

import dlvm_mlir.nnkit as dl
from dlvm_mlir.nnkit import Scalar, Tensor, f32

OUT = Path(__file__).resolve().parent / "out"


@dl.function
def logits(x: Tensor[f32, ("n", None)], w1, b1, w2, b2):
    """A two-layer perceptron: tanh hidden layer, linear output."""
    h = dl.tanh(x @ w1 + b1)
    return h @ w2 + b2


@dl.function
def loss(x: Tensor[f32, ("n", None)], y: Tensor[f32, ("n", 10)], w1, b1, w2, b2):
    """Mean softmax cross-entropy of one-hot labels ``y``."""
    log_p = dl.log_softmax(logits(x, w1, b1, w2, b2), axis=1)
    return -dl.reduce_sum(y * log_p) / x.shape[0]


# d loss / d (w1, b1, w2, b2), also returning the loss (DLVM: keeping 0).
loss_grad = dl.gradient(loss, wrt=(2, 3, 4, 5), keeping=(0,))


@dl.function
def adam_step(x, y, w1, b1, w2, b2, m1, mb1, m2, mb2, v1, vb1, v2, vb2, t: Scalar[f32], lr: Scalar[f32]):
    """One Adam step (Kingma & Ba) on a batch; returns the new state and the batch loss."""
    beta1, beta2, eps = 0.9, 0.999, 1e-8
    *grads, batch_loss = loss_grad(x, y, w1, b1, w2, b2)
    step = lr * dl.sqrt(1.0 - beta2**t) / (1.0 - beta1**t)
    params, moments, velocities = [w1, b1, w2, b2], [m1, mb1, m2, mb2], [v1, vb1, v2, vb2]
    new_p, new_m, new_v = [], [], []
    for p, g, m, v in zip(params, grads, moments, velocities):
        m = beta1 * m + (1.0 - beta1) * g
        v = beta2 * v + (1.0 - beta2) * g * g
        new_p.append(p - step * m / (dl.sqrt(v) + eps))
        new_m.append(m)
        new_v.append(v)
    return (*new_p, *new_m, *new_v, batch_loss)


@dl.function
def evaluate(x: Tensor[f32, ("n", None)], y: Tensor[f32, ("n", 10)], w1, b1, w2, b2):
    """Mean loss and accuracy: a prediction is right when the true class has the top logit."""
    z = logits(x, w1, b1, w2, b2)
    top = z >= dl.reduce_max(z, axis=1, keepdims=True)
    right = dl.reduce_sum(dl.where(top, y, 0.0), axis=1)
    mean_loss = -dl.reduce_sum(y * dl.log_softmax(z, axis=1)) / x.shape[0]
    return mean_loss, dl.reduce_mean(right)


@dl.function
def report(x_train, y_train, x_test, y_test, w1, b1, w2, b2):
    """Loss and accuracy on both sets: ``evaluate`` staged at two batch sizes in one program."""
    return (*evaluate(x_train, y_train, w1, b1, w2, b2), *evaluate(x_test, y_test, w1, b1, w2, b2))


def init_params(rng: np.random.Generator, sizes: list[int]) -> list[np.ndarray]:
    params = []
    for fan_in, fan_out in zip(sizes, sizes[1:]):
        bound = np.sqrt(6.0 / (fan_in + fan_out))  # Glorot uniform
        params.append(rng.uniform(-bound, bound, (fan_in, fan_out)).astype(np.float32))
        params.append(np.zeros((1, fan_out), np.float32))
    return params


def plot(history: dict[str, list[float]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    epochs = np.arange(1, len(history["train_loss"]) + 1)
    fig, (ax_loss, ax_acc) = plt.subplots(1, 2, figsize=(10, 4))
    ax_loss.plot(epochs, history["train_loss"], label="train")
    ax_loss.plot(epochs, history["test_loss"], label="test")
    ax_loss.set(xlabel="epoch", ylabel="cross-entropy", yscale="log", title="loss")
    ax_acc.plot(epochs, history["train_acc"], label="train")
    ax_acc.plot(epochs, history["test_acc"], label="test")
    ax_acc.axhline(0.95, color="gray", linestyle=":", linewidth=1)
    ax_acc.set(xlabel="epoch", ylabel="accuracy", title="accuracy")
    for ax in (ax_loss, ax_acc):
        ax.legend()
        ax.grid(alpha=0.3)
    fig.suptitle("MLP on sklearn digits, trained through DLVM (NNKit)")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    start = time.perf_counter()
    digits = load_digits()
    features = (digits.data / 16.0).astype(np.float32)
    labels = np.eye(10, dtype=np.float32)[digits.target]
    x_train, x_test, y_train, y_test = train_test_split(
        features, labels, test_size=0.2, random_state=args.seed, stratify=digits.target
    )
    rng = np.random.default_rng(args.seed)
    params = init_params(rng, [features.shape[1], args.hidden, 10])
    moments = [np.zeros_like(p) for p in params]
    velocities = [np.zeros_like(p) for p in params]
    lr = np.float32(args.lr)
    print(
        f"digits: {len(x_train)} train / {len(x_test)} test, MLP {features.shape[1]}-{args.hidden}-10, "
        f"Adam lr {args.lr}, batch {args.batch}"
    )

    history: dict[str, list[float]] = {"train_loss": [], "test_loss": [], "train_acc": [], "test_acc": []}
    steps = len(x_train) // args.batch  # full batches only: one specialization of adam_step
    t = 0
    for epoch in range(1, args.epochs + 1):
        epoch_start = time.perf_counter()
        order = rng.permutation(len(x_train))
        for i in range(steps):
            batch = order[i * args.batch : (i + 1) * args.batch]
            t += 1
            *state, _ = adam_step(x_train[batch], y_train[batch], *params, *moments, *velocities, np.float32(t), lr)
            params, moments, velocities = state[:4], state[4:8], state[8:]
        train_loss, train_acc, test_loss, test_acc = report(x_train, y_train, x_test, y_test, *params)
        for key, value in zip(history, (train_loss, test_loss, train_acc, test_acc)):
            history[key].append(float(value))
        print(
            f"epoch {epoch:3d}  train loss {float(train_loss):.4f} acc {float(train_acc):.4f}  "
            f"test loss {float(test_loss):.4f} acc {float(test_acc):.4f}  ({time.perf_counter() - epoch_start:.2f} s)",
            flush=True,
        )

    compile_s = sum(
        s.compile_seconds or 0.0 for fn in (adam_step, report) for s in fn.specializations.values()
    )
    total = time.perf_counter() - start
    print(f"total {total:.1f} s (of which compiling {compile_s:.1f} s); final test accuracy {history['test_acc'][-1]:.4f}")
    path = OUT / "train_digits.png"
    plot(history, path)
    print(f"wrote {os.path.relpath(path)}")
    if history["test_acc"][-1] < 0.95:
        print("error: test accuracy below 95%", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
