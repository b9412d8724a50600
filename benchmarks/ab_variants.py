"""A/B of compiler variants: one workload compiled under each variant, timed in turns.

A variant patches module constants of the compiler (``--variant
'{"dlvm_mlir.backend.schedule.KERNEL_GRADIENT_SPAN": 64}'``; the first variant
is usually ``{}``, the code as it is) or, with a ``$`` before the name, sets
an environment variable while it compiles (``'{"$DLVM_MLIR_TUNE": "off"}'``
against ``'{"$DLVM_MLIR_TUNE": "use"}'``: the tuning database's schedules).  Each is compiled in this process and
the variants' calls alternate, so that the machine's drift (these 2-core
machines are noisy and bimodal) hits them alike; reported: median and minimum
ms per variant, and whether its result agrees with the first variant's.

The compiler normally runs in a separate server process (a fresh interpreter,
see ``dlvm_mlir/compiler_process.py``), which never sees a patch made here:
an A/B that patches constants without ``DLVM_MLIR_CRASH_GUARD=0`` compiles
the same code for every variant and measures noise.  This script sets it
(and turns the disk cache off) before importing the compiler.

Workloads: a layer and pass of ``bench_conv.py`` (``--conv 3x3-s2 dk``), the
training step of ``cnn_step.py`` (``--cnn 32``) or of ``mlp_step.py``
(``--mlp 128``), or a matmul as ``bench_cpu_kernels.py`` times it (``--matmul 1024x1024x1024``).
"""

from __future__ import annotations

import os

os.environ["DLVM_MLIR_CRASH_GUARD"] = "0"  # compile in this process, where the patches are
os.environ["DLVM_MLIR_DISK_CACHE"] = "0"

import argparse  # noqa: E402
import importlib  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any, Callable  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))


def patched(variant: dict[str, Any], build: Callable[[], Any]) -> Any:
    """``build()`` with the module constants (and ``$``-prefixed environment variables) of
    ``variant`` set, restored afterwards."""
    saved = []
    environment = {key[1:]: os.environ.get(key[1:]) for key in variant if key.startswith("$")}
    try:
        for key, value in variant.items():
            if key.startswith("$"):
                os.environ[key[1:]] = str(value)
                continue
            module_name, attr = key.rsplit(".", 1)
            module = importlib.import_module(module_name)
            if not hasattr(module, attr):
                raise SystemExit(f"error: {module_name} has no attribute {attr!r}")
            saved.append((module, attr, getattr(module, attr)))
            setattr(module, attr, value)
        return build()
    finally:
        for module, attr, value in reversed(saved):
            setattr(module, attr, value)
        for name, value in environment.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def conv_builder(layer_name: str, pass_name: str) -> Callable[[int], Callable[[], Any]]:
    import bench_conv
    import dlvm_mlir

    layer = bench_conv.LAYERS[layer_name]
    x, k, dy = bench_conv.data(layer)
    args = {"fwd": (x, k), "dx": (x, k, dy), "dk": (x, k, dy)}[pass_name]

    def build(index: int) -> Callable[[], Any]:
        # a file name per variant: the in-memory cache keys on it too
        exe = dlvm_mlir.compile(bench_conv.dlvm_source(layer), threads=bench_conv.THREADS,
                                filename=f"variant{index}", entry_points=[pass_name])
        fn = exe[pass_name]
        return lambda: fn(*args)

    return build


def step_builder(step_factory: Callable[[], Any], args: tuple) -> Callable[[int], Callable[[], Any]]:
    """A staged NNKit training step (``step_factory()``), called on ``args``."""
    import dlvm_mlir.compiler

    def build(index: int) -> Callable[[], Any]:
        dlvm_mlir.compiler._EXECUTABLES.clear()  # the staged source is the same for every variant
        step = step_factory()
        step.specialize(*args).executable  # noqa: B018 - compiles
        return lambda: step(*args)

    return build


def cnn_builder(batch: int) -> Callable[[int], Callable[[], Any]]:
    import cnn_step

    x, labels, params = cnn_step.problem(batch)
    return step_builder(cnn_step.dlvm_step, (x, labels, *params))


def mlp_builder(batch: int) -> Callable[[int], Callable[[], Any]]:
    import mlp_step

    x, y, params = mlp_step.make_problem(batch)
    return step_builder(mlp_step.dlvm_step, (x, y, *params))


def matmul_builder(shape: str) -> Callable[[int], Callable[[], Any]]:
    """A zero-filled ``linalg.matmul`` of ``MxKxN`` (as ``bench_cpu_kernels.py`` times it)."""
    import dlvm_mlir.compiler
    from dlvm_mlir.backend import compile_cpu

    m, k, n = (int(v) for v in shape.split("x"))
    t = {"a": f"tensor<{m}x{k}xf32>", "b": f"tensor<{k}x{n}xf32>", "c": f"tensor<{m}x{n}xf32>"}
    source = f"""func.func @mm(%a: {t['a']}, %b: {t['b']}) -> {t['c']} {{
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : {t['c']}
  %c = linalg.fill ins(%zero : f32) outs(%e : {t['c']}) -> {t['c']}
  %r = linalg.matmul ins(%a, %b : {t['a']}, {t['b']}) outs(%c : {t['c']}) -> {t['c']}
  return %r : {t['c']}
}}
"""
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((m, k), np.float32), rng.standard_normal((k, n), np.float32)
    threads = int(os.environ.get("BENCH_THREADS", "2"))

    def build(index: int) -> Callable[[], Any]:
        dlvm_mlir.compiler._EXECUTABLES.clear()
        entry = compile_cpu(source, threads=threads, use_cache=False).entry("mm")
        return lambda: entry(a, b)

    return build


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    workload = parser.add_mutually_exclusive_group(required=True)
    workload.add_argument("--conv", nargs=2, metavar=("LAYER", "PASS"))
    workload.add_argument("--cnn", type=int, metavar="BATCH")
    workload.add_argument("--mlp", type=int, metavar="BATCH")
    workload.add_argument("--matmul", metavar="MxKxN", help="a linalg.matmul (BENCH_THREADS threads, default 2)")
    parser.add_argument("--variant", action="append", required=True, help="JSON object: module.CONSTANT (or $ENV_VAR) -> value")
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args()
    # JSON keys are strings: a table keyed by integers ({"16": [6, 2]}, e.g.
    # schedule.DIRECT_CONVOLUTION_ROWS by vector registers) gets its integer keys back
    variants = [json.loads(v, object_hook=lambda o: {int(k) if k.isdigit() else k: x for k, x in o.items()})
                for v in args.variant]
    if args.conv:
        build = conv_builder(*args.conv)
    elif args.matmul:
        build = matmul_builder(args.matmul)
    else:
        build = cnn_builder(args.cnn) if args.cnn else mlp_builder(args.mlp)
    calls = []
    for index, variant in enumerate(variants):
        start = time.perf_counter()
        calls.append(patched(variant, lambda: build(index)))
        print(f"compiled variant {index} in {time.perf_counter() - start:.1f} s", file=sys.stderr)
    reference = calls[0]()
    agree = []
    for call in calls:
        result = call()
        pairs = zip(result, reference) if isinstance(result, tuple) else [(result, reference)]
        agree.append(all(np.allclose(np.asarray(a), np.asarray(b), rtol=1e-3, atol=1e-3) for a, b in pairs))
    times: list[list[float]] = [[] for _ in calls]
    for _ in range(args.repeats):
        for index, call in enumerate(calls):
            start = time.perf_counter()
            call()
            times[index].append(time.perf_counter() - start)
    for variant, spent, same in zip(variants, times, agree):
        print(f"{1e3 * np.median(spent):9.3f} ms median {1e3 * min(spent):9.3f} min "
              f"{'' if same else 'DIFFERENT RESULT '}{json.dumps(variant)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
