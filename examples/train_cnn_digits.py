"""Train a two-convolution network on scikit-learn's bundled digits (8x8 images) with NNKit.

conv 3x3 (1 -> 16) + bias + relu, conv 3x3 (16 -> 32) + bias + relu, 2x2 max
pooling, a dense layer to the 10 classes, softmax cross-entropy with integer
labels; Adam. The gradient is ``dlvm-differentiate``'s (a ``dl.gradient``
declaration), the whole Adam step one staged function compiled through DLVM;
numpy only shuffles the data and slices batches.

    python examples/train_cnn_digits.py [--epochs 20] [--batch 64] [--lr 0.003]

Prints per-epoch progress, writes examples/out/train_cnn_digits.png and exits
non-zero if the final test accuracy is below 97%.
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
from dlvm_mlir.nnkit import Scalar, Tensor, f32, i32

OUT = Path(__file__).resolve().parent / "out"
CHANNELS = (16, 32)


@dl.function
def logits(x: Tensor[f32, ("n", 1, 8, 8)], k1, c1, k2, c2, w, b):
    """Two 3x3 convolutions with biases and relu, 2x2 max pooling, a dense layer."""
    h = dl.relu(dl.convolve(x, k1, padding=1) + c1)
    h = dl.relu(dl.convolve(h, k2, padding=1) + c2)
    h = dl.reduce_window("max", h, (1, 1, 2, 2), (1, 1, 2, 2))
    return dl.reshape(h, (x.shape[0], CHANNELS[1] * 16)) @ w + b


@dl.function
def loss(x: Tensor[f32, ("n", 1, 8, 8)], labels: Tensor[i32, ("n",)], k1, c1, k2, c2, w, b):
    """Mean softmax cross-entropy of integer labels."""
    log_p = dl.log_softmax(logits(x, k1, c1, k2, c2, w, b), axis=1)
    return -dl.reduce_mean(dl.take_along_axis(log_p, labels[:, None], axis=1))


loss_grad = dl.gradient(loss, wrt=(2, 3, 4, 5, 6, 7), keeping=(0,))


@dl.function
def adam_step(x, labels, k1, c1, k2, c2, w, b, m1, m2, m3, m4, m5, m6, v1, v2, v3, v4, v5, v6,
              t: Scalar[f32], lr: Scalar[f32]):
    """One Adam step on a batch: the new parameters and moments, and the batch loss."""
    beta1, beta2, eps = 0.9, 0.999, 1e-8
    *grads, batch_loss = loss_grad(x, labels, k1, c1, k2, c2, w, b)
    step = lr * dl.sqrt(1.0 - beta2**t) / (1.0 - beta1**t)
    new_p, new_m, new_v = [], [], []
    for p, g, m, v in zip((k1, c1, k2, c2, w, b), grads, (m1, m2, m3, m4, m5, m6), (v1, v2, v3, v4, v5, v6)):
        m = beta1 * m + (1.0 - beta1) * g
        v = beta2 * v + (1.0 - beta2) * g * g
        new_p.append(p - step * m / (dl.sqrt(v) + eps))
        new_m.append(m)
        new_v.append(v)
    return (*new_p, *new_m, *new_v, batch_loss)


@dl.function
def evaluate(x: Tensor[f32, ("n", 1, 8, 8)], labels: Tensor[i32, ("n",)], k1, c1, k2, c2, w, b):
    """Mean loss and accuracy (the arg-max class against the label)."""
    z = logits(x, k1, c1, k2, c2, w, b)
    log_p = dl.log_softmax(z, axis=1)
    mean_loss = -dl.reduce_mean(dl.take_along_axis(log_p, labels[:, None], axis=1))
    right = dl.where(z.argmax(axis=1) == labels, 1.0, 0.0)
    return mean_loss, dl.reduce_mean(right)


def init_params(rng: np.random.Generator) -> list[np.ndarray]:
    """He-uniform convolutions and Glorot-uniform dense weights, zero biases."""
    def uniform(shape: tuple[int, ...], fan_in: int, fan_out: int | None = None) -> np.ndarray:
        bound = np.sqrt(6.0 / (fan_in + fan_out)) if fan_out else np.sqrt(6.0 / fan_in)
        return rng.uniform(-bound, bound, shape).astype(np.float32)

    a, b = CHANNELS
    return [
        uniform((a, 1, 3, 3), 9), np.zeros((1, a, 1, 1), np.float32),
        uniform((b, a, 3, 3), 9 * a), np.zeros((1, b, 1, 1), np.float32),
        uniform((b * 16, 10), b * 16, 10), np.zeros((1, 10), np.float32),
    ]


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
    ax_acc.axhline(0.97, color="gray", linestyle=":", linewidth=1)
    ax_acc.set(xlabel="epoch", ylabel="accuracy", title="accuracy")
    for ax in (ax_loss, ax_acc):
        ax.legend()
        ax.grid(alpha=0.3)
    fig.suptitle("two-convolution network on sklearn digits, trained through DLVM (NNKit)")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)


def load(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    digits = load_digits()
    images = (digits.images / 16.0).astype(np.float32)[:, None, :, :]
    return train_test_split(images, digits.target.astype(np.int32), test_size=0.2, random_state=seed,
                            stratify=digits.target)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--lr", type=float, default=0.003)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=OUT, help="where the plot goes")
    args = parser.parse_args(argv)

    start = time.perf_counter()
    x_train, x_test, y_train, y_test = load(args.seed)
    rng = np.random.default_rng(args.seed)
    params = init_params(rng)
    moments = [np.zeros_like(p) for p in params]
    velocities = [np.zeros_like(p) for p in params]
    lr = np.float32(args.lr)
    print(f"digits: {len(x_train)} train / {len(x_test)} test, conv {CHANNELS[0]}-{CHANNELS[1]} + pool + dense, "
          f"Adam lr {args.lr}, batch {args.batch}", flush=True)

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
            params, moments, velocities = state[:6], state[6:12], state[12:]
        train_loss, train_acc = evaluate(x_train, y_train, *params)
        test_loss, test_acc = evaluate(x_test, y_test, *params)
        for key, value in zip(history, (train_loss, test_loss, train_acc, test_acc)):
            history[key].append(float(value))
        print(f"epoch {epoch:3d}  train loss {float(train_loss):.4f} acc {float(train_acc):.4f}  "
              f"test loss {float(test_loss):.4f} acc {float(test_acc):.4f}  ({time.perf_counter() - epoch_start:.2f} s)",
              flush=True)

    compile_s = sum(s.compile_seconds or 0.0 for fn in (adam_step, evaluate) for s in fn.specializations.values())
    print(f"total {time.perf_counter() - start:.1f} s (of which compiling {compile_s:.1f} s); "
          f"final test accuracy {history['test_acc'][-1]:.4f}")
    path = args.out / "train_cnn_digits.png"
    plot(history, path)
    print(f"wrote {os.path.relpath(path)}")
    if history["test_acc"][-1] < 0.97:
        print("error: test accuracy below 97%", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
