"""Convolution layers: forward, input gradient and kernel gradient, dlvm vs PyTorch vs JAX.

ResNet-style layers, batch 32, f32, NCHW (issue 15): 3x3 64->64 at 32x32; 3x3
128->128 at 16x16; a stride-2 3x3 64->128 at 32x32; a 1x1 256->64 at 16x16; a
depthwise 3x3 (groups = channels) 128 at 16x16; and 3x3 32->32 at 32x32, the
residual block of ``cnn_step.py`` (``--layers 3x3-32``, not in the default set).
For each layer and pass:

- dlvm: ``dlvm.convolve`` compiled by ``dlvm_mlir.compile``; the gradients are
  ``dlvm-differentiate``'s, of ``sum(conv(x, k) * dy)`` with respect to ``x``
  and to ``k`` (which is the input and the kernel gradient for the seed dy);
- PyTorch (oneDNN on the CPU): ``conv2d`` and ``torch.nn.grad.conv2d_input`` /
  ``conv2d_weight``;
- JAX: ``jax.jit`` of ``lax.conv_general_dilated`` and of its ``jax.vjp``.

The frameworks take turns (benchmarks/turns.py): each turn sleeps 0.1 s, makes
2 unrecorded calls and records 5 (``--block 5 --settle 2``, warm calls as in a
training loop; a framework's first call after the pause, or right after another
framework's, measured up to 2-5x its warm time on these 2-vCPU machines, for
PyTorch as for dlvm, and turns of 2 after 1 unrecorded call, the default until
Nov 27, mostly measured that); reported: median ms, GFLOP/s
(2 x multiply-adds of the forward convolution for every pass), its share of the
machine's FMA ceiling (``--peak``, GFLOP/s of all threads; measured for this
machine in ARCHITECTURE.md), and dlvm's time over the best peer's. Every dlvm
result is checked against PyTorch first. Writes benchmarks/out/bench_conv.png
and .json.

    python benchmarks/bench_conv.py [--repeats 20] [--layers 3x3-64 ...] [--passes fwd dx dk]
                                    [--skip jax torch] [--peak 228]
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
from dataclasses import dataclass  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any, Callable  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from turns import Turns, take_turns  # noqa: E402

OUT = Path(__file__).resolve().parent / "out"
BATCH = 32


@dataclass(frozen=True)
class Layer:
    name: str
    c: int
    f: int
    size: int
    k: int
    stride: int = 1
    groups: int = 1

    @property
    def pad(self) -> int:
        return self.k // 2

    @property
    def out_size(self) -> int:
        return (self.size + 2 * self.pad - self.k) // self.stride + 1

    @property
    def flops(self) -> int:
        return 2 * BATCH * self.f * (self.c // self.groups) * self.k * self.k * self.out_size ** 2

    def types(self) -> tuple[str, str, str]:
        return (f"tensor<{BATCH}x{self.c}x{self.size}x{self.size}xf32>",
                f"tensor<{self.f}x{self.c // self.groups}x{self.k}x{self.k}xf32>",
                f"tensor<{BATCH}x{self.f}x{self.out_size}x{self.out_size}xf32>")


LAYERS = {
    "3x3-64": Layer("3x3 64->64 32x32", 64, 64, 32, 3),
    "3x3-128": Layer("3x3 128->128 16x16", 128, 128, 16, 3),
    "3x3-s2": Layer("3x3 s2 64->128 32x32", 64, 128, 32, 3, stride=2),
    "1x1": Layer("1x1 256->64 16x16", 256, 64, 16, 1),
    "depthwise": Layer("depthwise 3x3 128 16x16", 128, 128, 16, 3, groups=128),
    "3x3-32": Layer("3x3 32->32 32x32", 32, 32, 32, 3),
}
#: the layers of issue 15's table, run without ``--layers``
DEFAULT_LAYERS = ("3x3-64", "3x3-128", "3x3-s2", "1x1", "depthwise")
PASSES = ("fwd", "dx", "dk")


def dlvm_source(layer: Layer) -> str:
    x, k, y = layer.types()
    p, s = layer.pad, layer.stride
    conv = (f"dlvm.convolve %x, %k strides [{s}, {s}] padding [{p}, {p}, {p}, {p}]"
            + (f" groups {layer.groups}" if layer.groups > 1 else "") + f" : {x}, {k}")
    return f"""func.func @fwd(%x: {x}, %k: {k}) -> {y} {{
  %y = {conv}
  return %y : {y}
}}
func.func @seeded(%x: {x}, %k: {k}, %dy: {y}) -> tensor<f32> {{
  %y = {conv}
  %p = dlvm.mul %y, %dy : {y}, {y}
  %s = dlvm.reduce add %p dims [0, 1, 2, 3] : {y}
  return %s : tensor<f32>
}}
func.func private @dx({x}, {k}, {y}) -> {x}
    attributes {{dlvm.gradient = #dlvm.gradient<of @seeded wrt [0]>}}
func.func private @dk({x}, {k}, {y}) -> {k}
    attributes {{dlvm.gradient = #dlvm.gradient<of @seeded wrt [1]>}}
"""


def data(layer: Layer) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((BATCH, layer.c, layer.size, layer.size)).astype(np.float32)
    k = (rng.standard_normal((layer.f, layer.c // layer.groups, layer.k, layer.k)) * 0.1).astype(np.float32)
    dy = rng.standard_normal((BATCH, layer.f, layer.out_size, layer.out_size)).astype(np.float32)
    return x, k, dy


def dlvm_runners(layer: Layer, passes: list[str]) -> dict[str, Callable[[], Any]]:
    import dlvm_mlir

    exe = dlvm_mlir.compile(dlvm_source(layer), threads=THREADS)
    x, k, dy = data(layer)
    calls = {"fwd": lambda: exe["fwd"](x, k), "dx": lambda: exe["dx"](x, k, dy), "dk": lambda: exe["dk"](x, k, dy)}
    return {p: calls[p] for p in passes}


def torch_runners(layer: Layer, passes: list[str]) -> dict[str, Callable[[], Any]]:
    import torch

    torch.set_num_threads(THREADS)
    x, k, dy = (torch.from_numpy(a) for a in data(layer))
    opts = dict(stride=layer.stride, padding=layer.pad, groups=layer.groups)
    calls = {
        "fwd": lambda: torch.nn.functional.conv2d(x, k, **opts),
        "dx": lambda: torch.nn.grad.conv2d_input(x.shape, k, dy, **opts),
        "dk": lambda: torch.nn.grad.conv2d_weight(x, k.shape, dy, **opts),
    }

    def no_grad(fn: Callable[[], Any]) -> Callable[[], Any]:
        def run() -> Any:
            with torch.no_grad():
                return fn().numpy()
        return run

    return {p: no_grad(calls[p]) for p in passes}


def jax_runners(layer: Layer, passes: list[str]) -> dict[str, Callable[[], Any]]:
    import jax
    from jax import lax

    x, k, dy = (jax.device_put(a) for a in data(layer))
    p = layer.pad

    def conv(x, k):
        return lax.conv_general_dilated(x, k, (layer.stride,) * 2, [(p, p), (p, p)],
                                        feature_group_count=layer.groups)

    fwd = jax.jit(conv)
    dx = jax.jit(lambda x, k, dy: jax.vjp(lambda x: conv(x, k), x)[1](dy)[0])
    dk = jax.jit(lambda x, k, dy: jax.vjp(lambda k: conv(x, k), k)[1](dy)[0])
    calls = {"fwd": lambda: fwd(x, k).block_until_ready(), "dx": lambda: dx(x, k, dy).block_until_ready(),
             "dk": lambda: dk(x, k, dy).block_until_ready()}
    return {q: calls[q] for q in passes}


def plot(rows: list[dict[str, Any]], frameworks: list[str], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [f"{r['key']} {r['pass']}" for r in rows]
    fig, ax = plt.subplots(figsize=(max(8, len(rows) * 0.9), 4.5))
    width = 0.8 / len(frameworks)
    for i, name in enumerate(frameworks):
        values = [r["gflops"].get(name, 0.0) for r in rows]
        ax.bar(np.arange(len(rows)) + i * width, values, width, label=name)
    ax.set_xticks(np.arange(len(rows)) + width * (len(frameworks) - 1) / 2)
    ax.set_xticklabels(labels, fontsize=7, rotation=45, ha="right")
    ax.set_ylabel("GFLOP/s (higher is better)")
    ax.set_title(f"convolution layers, batch {BATCH}, f32, {THREADS} threads", fontsize=9)
    ax.legend()
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--block", type=int, default=5)
    parser.add_argument("--settle", type=int, default=2)
    parser.add_argument("--pause", type=float, default=0.1)
    parser.add_argument("--layers", nargs="*", default=list(DEFAULT_LAYERS), choices=list(LAYERS))
    parser.add_argument("--passes", nargs="*", default=list(PASSES), choices=list(PASSES))
    parser.add_argument("--skip", nargs="*", default=[], choices=["jax", "torch"])
    parser.add_argument("--peak", type=float, default=228.0,
                        help="FMA ceiling of all threads in GFLOP/s (Zen 4, AVX-512, 2 cores: 228)")
    parser.add_argument("--tuning", choices=("off", "use", "search"),
                        help="dlvm's tuning database (default: $DLVM_MLIR_TUNE, else use; search: tune the "
                             "layers' kernels first, a few seconds each)")
    args = parser.parse_args()
    if args.tuning:
        os.environ["DLVM_MLIR_TUNE"] = args.tuning
    from dlvm_mlir.backend.tuning import summary

    print(f"dlvm {summary()}", flush=True)

    frameworks = ["dlvm"] + [f for f in ("torch", "jax") if f not in args.skip]
    builders = {"dlvm": dlvm_runners, "torch": torch_runners, "jax": jax_runners}
    rows: list[dict[str, Any]] = []
    turns = Turns(repeats=args.repeats, block=args.block, settle=args.settle, pause=args.pause)
    for key in args.layers:
        layer = LAYERS[key]
        start = time.perf_counter()
        runners = {name: builders[name](layer, args.passes) for name in frameworks}
        setup = time.perf_counter() - start
        if "torch" in runners:
            for p in args.passes:
                got, want = np.asarray(runners["dlvm"][p]()), np.asarray(runners["torch"][p]())
                error = float(np.max(np.abs(got - want)) / (np.max(np.abs(want)) + 1e-30))
                if error > 1e-4:
                    print(f"error: {layer.name} {p}: dlvm and PyTorch differ by {error:.1e}", file=sys.stderr)
                    return 1
        for p in args.passes:
            timed = take_turns({name: runners[name][p] for name in frameworks}, turns)
            ms = {name: statistics.median(1000 * s.wall for s in samples) for name, samples in timed.items()}
            gflops = {name: layer.flops / (v * 1e6) for name, v in ms.items()}
            peers = [ms[name] for name in frameworks if name != "dlvm"]
            ratio = ms["dlvm"] / min(peers) if peers else float("nan")
            rows.append({"layer": layer.name, "key": key, "pass": p, "ms": ms, "gflops": gflops, "dlvm_over_best_peer": ratio})
            cells = "  ".join(f"{name} {ms[name]:7.2f} ms {gflops[name]:6.1f} GF/s ({100 * gflops[name] / args.peak:4.1f}%)"
                              for name in frameworks)
            print(f"{layer.name:26s} {p:3s}  {cells}  dlvm/best {ratio:4.2f}x", flush=True)
        print(f"  (setup and compile {setup:.1f} s)", flush=True)
    print(f"median over {turns.describe()}; {THREADS} threads; load average {os.getloadavg()[0]:.1f}")
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "bench_conv.json").write_text(json.dumps({"threads": THREADS, "peak_gflops": args.peak, "rows": rows},
                                                    indent=1))
    plot(rows, frameworks, OUT / "bench_conv.png")
    print(f"wrote {os.path.relpath(OUT / 'bench_conv.png')} and bench_conv.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
