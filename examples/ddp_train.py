"""Data-parallel training of a dlvm-compiled PyTorch model with DistributedDataParallel.

The model is plain PyTorch; ``torch.compile(backend="dlvm")`` compiles its
forward and its gradient (by ``dlvm-differentiate``); PyTorch's DDP all-reduces
the gradients between processes (gloo on the CPU, NCCL on GPUs), exactly as it
does for eager models. Start it as any DDP job:

    torchrun --standalone --nproc-per-node 2 examples/ddp_train.py [--steps 30] [--check]

(several machines: ``torchrun --nnodes 2 --node-rank R --rdzv-endpoint HOST:PORT ...``,
see docs/frameworks.md). Each rank trains on its shard of every global batch of
scikit-learn's digits. At the end the ranks compare their parameters (equal
after every all-reduce), and rank 0 trains the same model in one process on the
whole batches (eager PyTorch, no DDP) and compares with that; ``--check`` exits
1 if either differs. Rank 0 prints per-step progress and writes
examples/out/ddp_train.png (the loss curve).
"""

from __future__ import annotations

import argparse
import copy
import os
import sys
import time
from pathlib import Path

import numpy as np
import torch
import torch.distributed as dist
from torch import nn
from torch.nn import functional as F
from torch.nn.parallel import DistributedDataParallel

OUT = Path(__file__).resolve().parent / "out"


def data(global_batch: int, steps: int, seed: int = 0) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """The same global batches on every rank (digits, standardized)."""
    from sklearn.datasets import load_digits

    digits = load_digits()
    x = (digits.data / 16.0 - 0.5).astype(np.float32)
    y = digits.target.astype(np.int64)
    order = np.random.default_rng(seed).permutation(len(x))
    batches = []
    for step in range(steps):
        index = np.take(order, range(step * global_batch, (step + 1) * global_batch), mode="wrap")
        batches.append((torch.from_numpy(x[index]), torch.from_numpy(y[index])))
    return batches


def model() -> nn.Module:
    torch.manual_seed(0)  # the same initial parameters on every rank and in the reference
    return nn.Sequential(nn.Linear(64, 128), nn.Tanh(), nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, 10))


def train_reference(batches: list[tuple[torch.Tensor, torch.Tensor]], lr: float) -> nn.Module:
    """One process, whole batches, eager PyTorch."""
    net = model()
    opt = torch.optim.SGD(net.parameters(), lr=lr, momentum=0.9)
    for x, y in batches:
        opt.zero_grad()
        F.cross_entropy(net(x), y).backward()
        opt.step()
    return net


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--batch", type=int, default=64, help="global batch (split over the ranks)")
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--check", action="store_true", help="exit 1 unless the parameters agree")
    parser.add_argument("--no-plot", action="store_true")
    args = parser.parse_args(argv)

    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    if args.batch % world:
        parser.error(f"--batch {args.batch} does not split over {world} ranks")
    local = args.batch // world
    torch.set_num_threads(1)  # one core per rank on a small machine

    net = model()
    # Compile the module, then wrap it: DDP's hooks see the parameters' gradients as dlvm's
    # backward delivers them. (torch.compile(DDP(net)) graph-breaks inside DDP's forward in
    # PyTorch 2.13 and never reaches the model.)
    step_fn = DistributedDataParallel(torch.compile(net, backend="dlvm"))
    opt = torch.optim.SGD(step_fn.parameters(), lr=args.lr, momentum=0.9)
    batches = data(args.batch, args.steps)
    losses = []
    start = time.perf_counter()
    for step, (x, y) in enumerate(batches):
        xs, ys = x[rank * local:(rank + 1) * local], y[rank * local:(rank + 1) * local]
        opt.zero_grad()
        loss = F.cross_entropy(step_fn(xs), ys)
        loss.backward()  # DDP all-reduces the gradients dlvm computed
        opt.step()
        mean = loss.detach().clone()
        dist.all_reduce(mean)
        losses.append(float(mean) / world)
        if rank == 0 and (step % 10 == 0 or step == args.steps - 1):
            print(f"step {step:3d}  loss {losses[-1]:.4f}  ({time.perf_counter() - start:.1f} s)", flush=True)

    flat = torch.cat([p.detach().reshape(-1) for p in net.parameters()])
    gathered = [torch.empty_like(flat) for _ in range(world)]
    dist.all_gather(gathered, flat)
    across = max(float((g - flat).abs().max()) for g in gathered)
    ok = across == 0.0
    if rank == 0:
        reference = torch.cat([p.detach().reshape(-1) for p in train_reference(batches, args.lr).parameters()])
        single = float((reference - flat).abs().max())
        ok = ok and single < 1e-4
        import dlvm_mlir.torch

        done = dlvm_mlir.torch.summary()
        print(f"dlvm compiled {done['subgraphs']} subgraph(s) holding {done['ops_in_dlvm']} ATen ops; "
              f"kept in PyTorch: {done['kept_in_pytorch'] or 'nothing'}")
        print(f"ranks agree: max parameter difference across {world} ranks {across:.3g}")
        print(f"single process on the combined batches: max parameter difference {single:.3g}")
        if not args.no_plot:
            plot(losses, world)
    verdict = torch.tensor([1 if ok else 0])
    dist.all_reduce(verdict, op=dist.ReduceOp.MIN)
    dist.destroy_process_group()
    if args.check and not int(verdict):
        print(f"rank {rank}: parameters disagree", file=sys.stderr)
        return 1
    return 0


def plot(losses: list[float], world: int) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    OUT.mkdir(exist_ok=True)
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.plot(losses)
    ax.set_xlabel("step")
    ax.set_ylabel("training loss (mean over ranks)")
    ax.set_title(f"DDP over {world} processes, dlvm-compiled model")
    fig.tight_layout()
    fig.savefig(OUT / "ddp_train.png", dpi=100)
    print(f"wrote {OUT / 'ddp_train.png'}")


if __name__ == "__main__":
    sys.exit(main())
