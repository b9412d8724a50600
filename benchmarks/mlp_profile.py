"""Where the time of dlvm's MLP training step goes: the step's pieces, timed against numpy.

Each piece is its own staged function, compiled through DLVM and timed
taking turns with the numpy equivalent (benchmarks/turns.py; min and median
over repeats, so that a busy machine hurts both sides alike):

- the whole step (gradient + SGD), the gradient alone, the forward pass alone;
- each matrix product of the step, in the form the AD emits it
  (``x . w``, ``dz . transpose(w)``, ``transpose(h) . dz``);
- a 512x512 transpose (the AD's ``transpose(w)`` operands are materialized).

Also lists the linalg ops of the lowered step (named contractions, transposes,
generics) so the profile can be read against the IR.

    python benchmarks/mlp_profile.py [--batch 32] [--repeats 40]
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "2")

import argparse  # noqa: E402
import collections  # noqa: E402
import re  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import mlp_step  # noqa: E402
from turns import Turns, take_turns  # noqa: E402

import dlvm_mlir.nnkit as dl  # noqa: E402


@dl.function
def matmul(a, b):
    return a @ b


@dl.function
def matmul_bt(a, b):
    return a @ dl.transpose(b)


@dl.function
def matmul_at(a, b):
    return dl.transpose(a) @ b


@dl.function
def transpose(a):
    return dl.transpose(a)


def timed(pairs: dict[str, tuple[Callable[[], object], Callable[[], object]]], turns: Turns) -> None:
    """(dlvm, numpy) pairs taking turns; prints min and median ms of each."""
    print(f"{'piece':44} {'dlvm min':>9} {'numpy min':>9} {'ratio':>6}   {'dlvm med':>9} {'numpy med':>9}")
    blas = {"dlvm": 1, "numpy": 2}
    for name, (ours, theirs) in pairs.items():
        samples = take_turns(
            {"dlvm": ours, "numpy": theirs},
            turns,
            context=lambda side: threadpool_limits(limits=blas[side], user_api="blas"),
        )
        d, n = ([1000 * x.wall for x in samples[side]] for side in ("dlvm", "numpy"))
        print(
            f"{name:44} {min(d):9.3f} {min(n):9.3f} {min(d) / min(n):6.2f}   "
            f"{statistics.median(d):9.3f} {statistics.median(n):9.3f}"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=40, help="recorded calls per piece and side")
    args = parser.parse_args()
    n = args.batch
    x, y, params = mlp_step.make_problem(n)
    w1, b1, w2, b2, w3, b3 = params
    loss, loss_grad, step = mlp_step.dlvm_functions()
    rng = np.random.default_rng(1)
    h = np.tanh(rng.standard_normal((n, 512)).astype(np.float32))
    dz = rng.standard_normal((n, 512)).astype(np.float32)
    dz10 = rng.standard_normal((n, 10)).astype(np.float32)
    big = rng.standard_normal((512, 512)).astype(np.float32)

    def numpy_forward():
        h1 = np.tanh(x @ w1 + b1)
        h2 = np.tanh(h1 @ w2 + b2)
        z = h2 @ w3 + b3
        z = z - z.max(1, keepdims=True)
        return -(y * (z - np.log(np.exp(z).sum(1, keepdims=True)))).sum() / n

    pairs = {
        "step (gradient + SGD update)": (lambda: step(x, y, *params), lambda: mlp_step.numpy_step(x, y, *params)),
        "gradient (keeping the loss)": (lambda: loss_grad(x, y, *params), lambda: mlp_step.numpy_step(x, y, *params)),
        "forward (loss)": (lambda: loss(x, y, *params), numpy_forward),
        f"x . w1          {n}x784 . 784x512": (lambda: matmul(x, w1), lambda: x @ w1),
        f"h . w2          {n}x512 . 512x512": (lambda: matmul(h, w2), lambda: h @ w2),
        f"dz . w2^T       {n}x512 . (512x512)^T": (lambda: matmul_bt(dz, w2), lambda: dz @ w2.T),
        f"dz . w3^T       {n}x10 . (512x10)^T": (lambda: matmul_bt(dz10, w3), lambda: dz10 @ w3.T),
        f"h^T . dz        ({n}x512)^T . {n}x512": (lambda: matmul_at(h, dz), lambda: h.T @ dz),
        f"x^T . dz        ({n}x784)^T . {n}x512": (lambda: matmul_at(x, dz), lambda: x.T @ dz),
        "transpose       512x512 (materialized)": (lambda: transpose(big), lambda: np.ascontiguousarray(big.T)),
    }
    print(f"MLP 784-512-512-10, batch {n}, f32; dlvm on its own 2 threads, numpy with 2 BLAS threads")
    turns = Turns(repeats=args.repeats)
    print(f"({turns.describe()})")
    timed(pairs, turns)

    linalg = step.specialize(x, y, *params).ir(stage="linalg")
    counts = collections.Counter(re.findall(r"(linalg\.[a-z_]+) ", linalg))
    shapes = re.findall(r"linalg\.transpose ins\(%\S+ : (tensor<[^>]+>)", linalg)
    print("\nlinalg ops of the lowered step:", ", ".join(f"{k} x{v}" for k, v in sorted(counts.items())))
    print("materialized transposes of:", ", ".join(shapes) or "none")
    return 0


if __name__ == "__main__":
    sys.exit(main())
