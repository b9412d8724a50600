"""Compile latency: dlvm cold and warm vs jax.jit's first call, each in a fresh process.

For each model of benchmarks/models.py (MLP step, LSTM gradient, transformer
block step, CNN step) a fresh Python process imports its framework (not
timed), makes the inputs, then times from defining the staged / jitted step to
its first result:

- ``dlvm cold``: an empty disk cache (a new $DLVM_MLIR_CACHE_DIR);
- ``dlvm warm``: the cache the cold run filled (a new process: the shared
  object is loaded, nothing is compiled);
- ``jax``: ``jax.jit``'s first call (tracing, XLA compilation, the run).

The three take turns (``--repeats`` rounds), medians are reported, and the
children's own breakdown of dlvm's cold compile (``compile(timing=...)``:
seconds per stage) is printed for the last round. Writes
benchmarks/out/compile_time.png and compile_time.json.

    python benchmarks/compile_time.py [--repeats 3] [--models mlp lstm transformer cnn] [--skip-jax]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

OUT = Path(__file__).resolve().parent / "out"
HERE = Path(__file__).resolve().parent

CHILD = r"""
import json, os, sys, time
sys.path.insert(0, {here!r})
os.environ.setdefault("JAX_PLATFORMS", "cpu")
framework, name = {framework!r}, {name!r}
start = time.perf_counter()
if framework == "jax":
    import jax, jax.numpy as jnp
else:
    import dlvm_mlir, dlvm_mlir.nnkit
import numpy as np
import models
imported = time.perf_counter() - start
model = models.MODELS[name]
inputs = model.inputs(0)
start = time.perf_counter()
step = model.jax() if framework == "jax" else model.dlvm()
out = step(*inputs)
if framework == "jax":
    jax.block_until_ready(out)
first = time.perf_counter() - start
out = out if isinstance(out, tuple) else (out,)
report = {{"import_s": imported, "first_call_s": first, "checksum": float(sum(np.asarray(o, np.float64).sum() for o in out))}}
if framework == "dlvm":
    spec = next(iter(step.specializations.values()))
    report["stages"] = spec.executable.seconds
print(json.dumps(report))
"""


def run_child(framework: str, name: str, env: dict[str, str]) -> dict:
    code = CHILD.format(here=str(HERE), framework=framework, name=name)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise RuntimeError(f"{framework} {name} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def plot(table: dict[str, dict[str, float]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(table)
    kinds = [k for k in ("dlvm cold", "dlvm warm", "jax") if any(k in table[n] for n in names)]
    fig, ax = plt.subplots(figsize=(8, 4))
    width = 0.8 / len(kinds)
    for i, kind in enumerate(kinds):
        values = [table[n].get(kind, 0.0) * 1e3 for n in names]
        bars = ax.bar([x + i * width for x in range(len(names))], values, width, label=kind)
        ax.bar_label(bars, fmt="%.0f", fontsize=7)
    ax.set_xticks([x + width * (len(kinds) - 1) / 2 for x in range(len(names))], names)
    ax.set_ylabel("ms to the first result (median)")
    ax.set_yscale("log")
    ax.set_title("Compile latency: fresh process, first call")
    ax.legend()
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--models", nargs="+", default=["mlp", "lstm", "transformer", "cnn"])
    parser.add_argument("--skip-jax", action="store_true")
    args = parser.parse_args()

    samples: dict[str, dict[str, list[float]]] = {m: {} for m in args.models}
    stages: dict[str, dict[str, float]] = {}
    checks: dict[str, dict[str, float]] = {m: {} for m in args.models}
    for round_ in range(args.repeats):
        for name in args.models:
            with tempfile.TemporaryDirectory(prefix="dlvm-bench-cache-") as cache:
                env = dict(os.environ, DLVM_MLIR_CACHE_DIR=cache)
                cold = run_child("dlvm", name, env)
                warm = run_child("dlvm", name, env)
            results = {"dlvm cold": cold, "dlvm warm": warm}
            if not args.skip_jax:
                results["jax"] = run_child("jax", name, dict(os.environ))
            for kind, result in results.items():
                samples[name].setdefault(kind, []).append(result["first_call_s"])
                checks[name][kind] = result["checksum"]
            stages[name] = cold["stages"]
            line = "  ".join(f"{k} {r['first_call_s'] * 1e3:7.0f} ms" for k, r in results.items())
            print(f"round {round_ + 1}/{args.repeats}  {name:<12} {line}", flush=True)

    table = {name: {kind: statistics.median(v) for kind, v in kinds.items()} for name, kinds in samples.items()}
    print(f"\nmedian ms to the first result, fresh process ({args.repeats} rounds, taking turns)")
    header = f"{'model':<12} {'dlvm cold':>10} {'dlvm warm':>10} {'jax':>8} {'cold/jax':>9}"
    print(header)
    for name, row in table.items():
        ratio = row["dlvm cold"] / row["jax"] if "jax" in row else float("nan")
        jax_ms = f"{row['jax'] * 1e3:8.0f}" if "jax" in row else f"{'-':>8}"
        print(f"{name:<12} {row['dlvm cold'] * 1e3:10.0f} {row['dlvm warm'] * 1e3:10.1f} {jax_ms} {ratio:9.2f}")
    print("\ndlvm cold compile by stage (ms, last round):")
    for name, seconds in stages.items():
        parts = ", ".join(f"{stage} {value * 1e3:.0f}" for stage, value in seconds.items() if value * 1e3 >= 5)
        print(f"  {name}: {parts}")
    for name, values in checks.items():
        if "jax" in values and abs(values["dlvm cold"] - values["jax"]) > 1e-2 * max(1.0, abs(values["jax"])):
            print(f"warning: {name}: dlvm and jax results differ ({values['dlvm cold']} vs {values['jax']})")
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "compile_time.json").write_text(json.dumps({"median_s": table, "samples_s": samples, "stages_s": stages}, indent=1))
    plot(table, OUT / "compile_time.png")
    print(f"wrote {os.path.relpath(OUT / 'compile_time.png')} and compile_time.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
