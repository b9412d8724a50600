"""The CNN of ``cnn_step.py`` written in NHWC for JAX, run through dlvm's JAX importer:
what layout assignment (``dlvm-layout-assignment``) saves.

JAX's importer (``dlvm_mlir.jax``) puts a transpose to NCHW before every
convolution and one back after it; layout assignment stores the bias, relu,
residual add, pooling and mean between them in NCHW, so that the transposes
cancel. Timed in turns (benchmarks/turns.py), value and gradient of the loss
(``jax.jit(jax.value_and_grad(...))``), f32:

- ``dlvm NHWC``: the NHWC model through ``dlvm_mlir.jax.jit``;
- ``dlvm NHWC, no layouts``: the same, compiled with layout assignment off;
- ``dlvm NCHW``: the model written in NCHW through the importer (no transposes);
- ``jax NHWC``: JAX's own ``jax.jit`` of the NHWC model.

The compiler runs in this process (``DLVM_MLIR_CRASH_GUARD=0``) so that the
second variant can switch the pass off; the disk cache is off.  Median ms per
call, ratios to ``dlvm NCHW``; benchmarks/out/nhwc_step.png and .json.

    python benchmarks/nhwc_step.py [--batch 32] [--repeats 20]
"""

from __future__ import annotations

import os

THREADS = int(os.environ.get("BENCH_THREADS", "2"))
os.environ.setdefault("OMP_NUM_THREADS", str(THREADS))
os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=1")
os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ["DLVM_MLIR_CRASH_GUARD"] = "0"  # compile in this process, where the variant's patch is
os.environ["DLVM_MLIR_DISK_CACHE"] = "0"

import argparse  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any, Callable  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cnn_step import PARAMS, forward, problem  # noqa: E402
from turns import Turns, take_turns  # noqa: E402

OUT = Path(__file__).resolve().parent / "out"


def ops(layout: str) -> Any:
    """``cnn_step.forward``'s ops in ``layout`` ("NHWC" or "NCHW")."""
    import jax
    import jax.numpy as jnp

    window = tuple(2 if axis in "HW" else 1 for axis in layout)
    filters = "HWIO" if layout == "NHWC" else "OIHW"

    class Ops:
        relu = staticmethod(jax.nn.relu)
        conv = staticmethod(lambda x, k: jax.lax.conv_general_dilated(
            x, k, (1, 1), ((1, 1), (1, 1)), dimension_numbers=(layout, filters, layout)))
        pool = staticmethod(lambda h: jax.lax.reduce_window(h, -jnp.inf, jax.lax.max, window, window, "VALID"))
        mean_hw = staticmethod(lambda h: jnp.mean(h, axis=tuple(i for i, a in enumerate(layout) if a in "HW")))

    return Ops


def loss_fn(layout: str) -> Callable[..., Any]:
    import jax
    import jax.numpy as jnp

    o = ops(layout)

    def loss(params, x, labels):
        log_p = jax.nn.log_softmax(forward(o, x, *params), axis=1)
        return -jnp.mean(jnp.take_along_axis(log_p, labels[:, None], axis=1))

    return loss


def in_layout(layout: str, x: np.ndarray, params: list[np.ndarray]) -> tuple[np.ndarray, list[np.ndarray]]:
    """cnn_step's NCHW data in ``layout``: the input transposed, filters as HWIO, biases as
    vectors broadcast along the channel axis."""
    if layout == "NCHW":
        return x, params
    converted = []
    for (name, _), p in zip(PARAMS, params):
        if name.startswith("k"):
            p = p.transpose(2, 3, 1, 0)
        elif name.startswith("c"):
            p = p.reshape(1, 1, 1, -1)
        converted.append(np.ascontiguousarray(p))
    return np.ascontiguousarray(x.transpose(0, 2, 3, 1)), converted


def runner(layout: str, backend: str, x, labels, params, layouts: bool = True) -> tuple[Callable[[], Any], float, Any]:
    import jax

    import dlvm_mlir.jax as dj
    from dlvm_mlir import compiler
    from dlvm_mlir.backend import cache as backend_cache
    from dlvm_mlir.backend import kernel_fusion

    loss = loss_fn(layout)
    step = jax.jit(jax.value_and_grad(dj.jit(loss) if backend == "dlvm" else loss))
    x, params = in_layout(layout, x, params)
    saved = kernel_fusion.assign_layouts
    compiler._EXECUTABLES.clear()  # a fresh compile, not the previous variant's executable
    backend_cache._MEMORY.clear()
    if not layouts:
        kernel_fusion.assign_layouts = lambda module: []
    try:
        start = time.perf_counter()
        first = jax.block_until_ready(step(params, x, labels))
        compile_s = time.perf_counter() - start
    finally:
        kernel_fusion.assign_layouts = saved
    return (lambda: jax.block_until_ready(step(params, x, labels))), compile_s, first


def plot(ms: dict[str, float], batch: int, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 3.5))
    bars = ax.barh(list(ms)[::-1], list(ms.values())[::-1], color="tab:blue")
    ax.bar_label(bars, fmt="%.1f ms", fontsize=8)
    ax.set_xlabel("median ms per value-and-gradient call (lower is better)")
    ax.set_title(f"cnn_step's network through dlvm_mlir.jax, batch {batch}, f32, {THREADS} threads", fontsize=9)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--block", type=int, default=2)
    parser.add_argument("--settle", type=int, default=1)
    parser.add_argument("--pause", type=float, default=0.2)
    args = parser.parse_args()

    x, labels, params = problem(args.batch)
    variants = {
        "dlvm NHWC": ("NHWC", "dlvm", True),
        "dlvm NHWC, no layouts": ("NHWC", "dlvm", False),
        "dlvm NCHW": ("NCHW", "dlvm", True),
        "jax NHWC": ("NHWC", "jax", True),
    }
    runners: dict[str, Callable[[], Any]] = {}
    compile_s: dict[str, float] = {}
    firsts: dict[str, Any] = {}
    for name, (layout, backend, layouts) in variants.items():
        runners[name], compile_s[name], firsts[name] = runner(layout, backend, x, labels, params, layouts)
        print(f"{name}: first call {compile_s[name]:.1f} s", flush=True)
    want = float(firsts["jax NHWC"][0])
    for name, (value, _) in firsts.items():
        if abs(float(value) - want) > 1e-4 * abs(want):
            print(f"error: {name}'s loss {float(value)} differs from JAX's {want}", file=sys.stderr)
            return 1
    turns = Turns(repeats=args.repeats, block=args.block, settle=args.settle, pause=args.pause)
    timed = take_turns(runners, turns)
    ms = {name: statistics.median(1000 * s.wall for s in samples) for name, samples in timed.items()}
    print(f"batch {args.batch}: median ms, {turns.describe()}; {THREADS} threads, load average {os.getloadavg()[0]:.1f}")
    for name, value in ms.items():
        print(f"  {name:22s} {value:8.2f} ms  {value / ms['dlvm NCHW']:5.2f}x dlvm NCHW", flush=True)
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "nhwc_step.json").write_text(json.dumps({"threads": THREADS, "batch": args.batch, "median_ms": ms,
                                                     "first_call_s": compile_s}, indent=2))
    plot(ms, args.batch, OUT / "nhwc_step.png")
    print(f"wrote {os.path.relpath(OUT / 'nhwc_step.png')} and nhwc_step.json")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
