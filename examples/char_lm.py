"""Train a character-level transformer language model on Python's own standard library, with NNKit.

The model (a GPT-style decoder): an embedding lookup (``emb[tokens]``, a
``dlvm.gather`` whose gradient is a scatter-add) plus learned positions,
``--layers`` pre-norm blocks of causal multi-head self-attention (heads split
by reshape/transpose, scores by a batched ``@``, the causal mask from
``dl.iota``) and a GELU MLP, then logits over the vocabulary and softmax
cross-entropy with integer labels (``take_along_axis`` of ``log_softmax``).

Everything that touches the parameters is staged and compiled through DLVM:
the loss, its gradient (``dl.gradient``: ``dlvm-differentiate`` synthesizes
it), one Adam step, the validation loss and the next-character logits that
sampling uses. numpy only picks windows of text and draws the samples.

The text is the source of modules that ship with every Python (the ``STDLIB``
list below), read from this interpreter's standard library directory; newline
and the printable ASCII characters are the 96 tokens (anything else reads as
``?``).

    python examples/char_lm.py [--epochs 20] [--steps 50] [--layers 2] [--width 128]

Prints the training and validation loss (in bits per character) after each
epoch, writes the loss curves to examples/out/char_lm.png and a sampled text
to examples/out/char_lm.txt (``--out`` elsewhere); exits non-zero if the final validation loss is
not below ``--target`` bits per character.

The model is written once against a small op table (``Ops``), so that
benchmarks/char_lm_step.py times this very step against JAX and PyTorch.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import sysconfig
import time
from pathlib import Path
from typing import Any

import numpy as np

OUT = Path(__file__).resolve().parent / "out"

STDLIB = (
    "argparse", "ast", "bisect", "calendar", "collections/__init__", "contextlib", "copy", "csv", "dataclasses",
    "datetime", "difflib", "enum", "fractions", "functools", "heapq", "inspect", "ipaddress", "json/decoder",
    "json/encoder", "locale", "logging/__init__", "pathlib", "pprint", "queue", "random", "shlex", "shutil",
    "statistics", "string", "tempfile", "textwrap", "threading", "tokenize", "typing", "uuid", "weakref",
)
"""Modules whose source is the corpus (present in every CPython 3.11+; a missing one is skipped)."""

VOCAB = "\n" + "".join(chr(c) for c in range(32, 127))
"""The 96 tokens: newline and printable ASCII."""
UNKNOWN = VOCAB.index("?")


# -- data -----------------------------------------------------------------------------


def load_corpus(limit: int = 0) -> str:
    """The standard library sources named in ``STDLIB`` (the first ``limit`` characters, 0: all)."""
    root = Path(sysconfig.get_paths()["stdlib"])
    texts = [(root / f"{name}.py").read_text(encoding="utf-8") for name in STDLIB if (root / f"{name}.py").exists()]
    text = "\n".join(texts)
    return text[:limit] if limit else text


def encode(text: str) -> np.ndarray:
    table = np.full(128, UNKNOWN, np.int32)
    for i, ch in enumerate(VOCAB):
        table[ord(ch)] = i
    codes = np.frombuffer(text.encode("ascii", errors="replace"), np.uint8)
    return table[np.minimum(codes, 127)]


def decode(tokens: np.ndarray) -> str:
    return "".join(VOCAB[int(t)] for t in tokens)


def batch(data: np.ndarray, starts: np.ndarray, context: int) -> tuple[np.ndarray, np.ndarray]:
    """Windows of ``context`` tokens at ``starts`` and, for each position, the token after it."""
    index = starts[:, None] + np.arange(context + 1)
    windows = data[index]
    return windows[:, :-1], windows[:, 1:]


# -- the model, written once against an op table ---------------------------------------------

PARAMS = ("emb", "pos", "ln1", "wqkv", "wo", "ln2", "w1", "c1", "w2", "c2", "lnf", "wout")
"""Parameter names, in the order every function takes them; per-layer ones are stacked on axis 0."""


def init_params(rng: np.random.Generator, vocab: int, context: int, width: int, layers: int) -> list[np.ndarray]:
    """GPT-2's initialization: normal(0, 0.02), residual projections scaled by 1/sqrt(2 layers)."""

    def normal(*shape: int, scale: float = 0.02) -> np.ndarray:
        return (scale * rng.standard_normal(shape)).astype(np.float32)

    norm = np.stack([np.ones((layers, width)), np.zeros((layers, width))], axis=1).astype(np.float32)
    residual = 0.02 / math.sqrt(2 * layers)
    return [
        normal(vocab, width),                                      # emb
        normal(context, width, scale=0.01),                        # pos
        norm,                                                      # ln1: (layers, 2, width) gain, bias
        normal(layers, width, 3 * width),                          # wqkv
        normal(layers, width, width, scale=residual),              # wo
        norm.copy(),                                               # ln2
        normal(layers, width, 4 * width),                          # w1
        np.zeros((layers, 4 * width), np.float32),                 # c1
        normal(layers, 4 * width, width, scale=residual),          # w2
        np.zeros((layers, width), np.float32),                     # c2
        norm[0].copy(),                                            # lnf: (2, width)
        normal(width, vocab),                                      # wout
    ]


def logits(ops: Any, tokens: Any, params: list[Any], heads: int) -> Any:
    """Next-token logits (batch, context, vocab) of token windows (batch, context)."""
    emb, pos, ln1, wqkv, wo, ln2, w1, c1, w2, c2, lnf, wout = params
    batch_size, context = tokens.shape
    width = emb.shape[1]
    head = width // heads

    def norm(v: Any, gain_bias: Any) -> Any:
        mean = ops.mean(v)
        centered = v - mean
        return centered * ops.rsqrt(ops.mean(centered * centered) + 1e-5) * gain_bias[0] + gain_bias[1]

    def split(v: Any) -> Any:  # (batch, context, width) -> (batch, heads, context, head)
        return ops.transpose(v.reshape(batch_size, context, heads, head), (0, 2, 1, 3))

    causal = ops.causal_mask(context)
    x = ops.take(emb, tokens) + pos
    for layer in range(wqkv.shape[0]):
        qkv = norm(x, ln1[layer]) @ wqkv[layer]
        q, k, v = (split(qkv[:, :, i * width : (i + 1) * width]) for i in range(3))
        scores = (q @ ops.transpose(k, (0, 1, 3, 2))) * (1.0 / math.sqrt(head))
        attention = ops.softmax(ops.where(causal, scores, -1e9)) @ v
        x = x + ops.transpose(attention, (0, 2, 1, 3)).reshape(batch_size, context, width) @ wo[layer]
        hidden = norm(x, ln2[layer]) @ w1[layer] + c1[layer]
        x = x + ops.gelu(hidden) @ w2[layer] + c2[layer]
    return norm(x, lnf) @ wout


def cross_entropy(ops: Any, tokens: Any, labels: Any, params: list[Any], heads: int) -> Any:
    """Mean negative log-likelihood (nats) of ``labels`` (batch, context) given ``tokens``."""
    log_p = ops.log_softmax(logits(ops, tokens, params, heads))
    return -ops.mean_all(ops.pick(log_p, labels))


def gelu(ops: Any, v: Any) -> Any:
    """GELU, tanh approximation (GPT-2's)."""
    return 0.5 * v * (1.0 + ops.tanh(0.7978845608 * (v + 0.044715 * v * v * v)))


# -- NNKit ---------------------------------------------------------------------------


def nnkit_functions(heads: int) -> dict[str, Any]:
    """The staged loss, Adam step and next-token logits for a model with ``heads`` heads."""
    import dlvm_mlir.nnkit as dl

    class Ops:
        mean = staticmethod(lambda v: dl.reduce_mean(v, axis=-1, keepdims=True))
        mean_all = staticmethod(dl.reduce_mean)
        rsqrt = staticmethod(dl.rsqrt)
        tanh = staticmethod(dl.tanh)
        transpose = staticmethod(dl.transpose)
        softmax = staticmethod(lambda v: dl.softmax(v, axis=-1))
        log_softmax = staticmethod(lambda v: dl.log_softmax(v, axis=-1))
        where = staticmethod(dl.where)
        take = staticmethod(lambda table, index: table[index])
        pick = staticmethod(lambda v, index: dl.take_along_axis(v, dl.expand_dims(index, -1), axis=-1))
        gelu = staticmethod(lambda v: gelu(Ops, v))

        @staticmethod
        def causal_mask(n: int) -> Any:
            return dl.iota((n, n), 0) >= dl.iota((n, n), 1)

    @dl.function
    def loss(tokens, labels, *params):
        return cross_entropy(Ops, tokens, labels, list(params), heads)

    count = len(PARAMS)
    loss_grad = dl.gradient(loss, wrt=tuple(range(2, 2 + count)), keeping=(0,))

    @dl.function
    def adam_step(tokens, labels, t, lr, *state):
        """One Adam step on a batch: the new parameters, moments and velocities, and the batch loss."""
        beta1, beta2, eps = 0.9, 0.95, 1e-8
        params, moments, velocities = state[:count], state[count : 2 * count], state[2 * count :]
        *grads, batch_loss = loss_grad(tokens, labels, *params)
        step = lr * dl.sqrt(1.0 - beta2**t) / (1.0 - beta1**t)
        new_p, new_m, new_v = [], [], []
        for p, g, m, v in zip(params, grads, moments, velocities):
            m = beta1 * m + (1.0 - beta1) * g
            v = beta2 * v + (1.0 - beta2) * g * g
            new_p.append(p - step * m / (dl.sqrt(v) + eps))
            new_m.append(m)
            new_v.append(v)
        return (*new_p, *new_m, *new_v, batch_loss)

    @dl.function
    def next_logits(tokens, *params):
        """Logits of the token after each window (batch, vocab)."""
        return logits(Ops, tokens, list(params), heads)[:, -1, :]

    return {"loss": loss, "adam_step": adam_step, "next_logits": next_logits}


# -- training ------------------------------------------------------------------------


def sample(next_logits: Any, params: list[np.ndarray], prompt: np.ndarray, length: int, temperature: float,
           rng: np.random.Generator) -> np.ndarray:
    """``length`` tokens drawn after ``prompt`` (a window of the model's context)."""
    window = prompt.copy()
    drawn = []
    for _ in range(length):
        z = next_logits(window[None, :], *params)[0].astype(np.float64) / temperature
        p = np.exp(z - z.max())
        token = rng.choice(len(p), p=p / p.sum())
        drawn.append(token)
        window = np.append(window[1:], token).astype(np.int32)
    return np.array(drawn, np.int32)


def plot(history: dict[str, list[float]], title: str, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    epochs = np.arange(1, len(history["train"]) + 1)
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(epochs, history["train"], label="train (mean over the epoch's batches)")
    ax.plot(epochs, history["valid"], label="validation")
    ax.axhline(math.log2(len(VOCAB)), color="gray", linestyle=":", linewidth=1, label="uniform guess")
    ax.set(xlabel="epoch", ylabel="bits per character", title=title)
    ax.legend()
    ax.grid(alpha=0.3)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--steps", type=int, default=50, help="Adam steps per epoch")
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--context", type=int, default=64)
    parser.add_argument("--width", type=int, default=128)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--sample", type=int, default=400, help="characters to sample at the end")
    parser.add_argument("--target", type=float, default=2.5, help="highest acceptable final validation bits/char")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=OUT, help="where the plot and the sample go")
    args = parser.parse_args()
    if args.width % args.heads:
        parser.error(f"--width {args.width} is not a multiple of --heads {args.heads}")

    start = time.perf_counter()
    data = encode(load_corpus())
    split = int(0.9 * len(data))
    train, valid = data[:split], data[split:]
    rng = np.random.default_rng(args.seed)
    params = init_params(rng, len(VOCAB), args.context, args.width, args.layers)
    state = [*params, *(np.zeros_like(p) for p in params), *(np.zeros_like(p) for p in params)]
    fns = nnkit_functions(args.heads)
    valid_starts = np.linspace(0, len(valid) - args.context - 1, 4 * args.batch).astype(np.int64)
    valid_batches = [batch(valid, s, args.context) for s in np.split(valid_starts, 4)]
    size = sum(p.size for p in params)
    print(
        f"corpus: {len(data):,} characters of {len(STDLIB)} standard-library modules "
        f"({len(train):,} train / {len(valid):,} validation), vocabulary {len(VOCAB)}\n"
        f"model: {args.layers} layers, width {args.width}, {args.heads} heads, context {args.context}, "
        f"{size:,} parameters; Adam lr {args.lr}, batch {args.batch}, {args.steps} steps per epoch",
        flush=True,
    )

    to_bits = 1.0 / math.log(2.0)
    history: dict[str, list[float]] = {"train": [], "valid": []}
    t = 0
    for epoch in range(1, args.epochs + 1):
        epoch_start = time.perf_counter()
        losses = []
        for _ in range(args.steps):
            t += 1
            tokens, labels = batch(train, rng.integers(0, len(train) - args.context - 1, args.batch), args.context)
            # linear warm-up over the first 100 steps, then cosine decay to a tenth
            progress = t / (args.epochs * args.steps)
            lr = args.lr * min(1.0, t / 100) * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress)))
            *state, value = fns["adam_step"](tokens, labels, np.float32(t), np.float32(lr), *state)
            losses.append(float(value))
        params = state[: len(PARAMS)]
        valid_loss = np.mean([float(fns["loss"](x, y, *params)) for x, y in valid_batches])
        history["train"].append(float(np.mean(losses)) * to_bits)
        history["valid"].append(float(valid_loss) * to_bits)
        print(
            f"epoch {epoch:3d}  train {history['train'][-1]:.3f} bits/char  valid {history['valid'][-1]:.3f} "
            f"bits/char  ({time.perf_counter() - epoch_start:.1f} s)",
            flush=True,
        )

    prompt = valid[:args.context]
    text = decode(sample(fns["next_logits"], params, prompt, args.sample, 0.8, rng))
    compile_s = sum(
        s.compile_seconds or 0.0 for fn in fns.values() for s in fn.specializations.values()
    )
    print(f"\n--- sampled after {decode(prompt)!r} (temperature 0.8) ---\n{text}\n---")
    total = time.perf_counter() - start
    print(f"total {total:.1f} s (of which compiling {compile_s:.1f} s)")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "char_lm.txt").write_text(decode(prompt) + text + "\n")
    title = f"char LM on stdlib sources ({args.layers}x{args.width}), trained through DLVM (NNKit)"
    plot(history, title, args.out / "char_lm.png")
    print(f"wrote {os.path.relpath(args.out / 'char_lm.png')} and char_lm.txt")
    if history["valid"][-1] > args.target:
        print(f"error: final validation loss {history['valid'][-1]:.3f} bits/char is above {args.target}",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
