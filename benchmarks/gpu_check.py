"""Correctness and speed of the CUDA back end on a real GPU, built here and run there.

The machine with the GPU has neither the MLIR wheels nor our extension (and
another Python), so the work is split in two:

    python benchmarks/gpu_check.py build DIR      # here: compile every case for CUDA
    LD_LIBRARY_PATH=DIR/lib python3 benchmarks/gpu_check.py run DIR [--out OUT]

``build`` compiles, without a GPU, one CUDA artifact (a shared object, host
code for plain x86-64, kernels as PTX that the driver JIT-compiles) per case:
every dlvm op (the groups of ``test/python/test_gpu.py``) with inputs in each
function's domain and the CPU back end's outputs as the reference
(differential testing), matmuls on both sides of the kernels' tile sizes
(f32 SIMT, f16 tensor cores, tf32), the MLP gradient of ``examples/mlp.mlir``,
the 784-512-512-10 MLP training step of ``benchmarks/mlp_step.py`` at
batch 128 and 1024, and the CNN training step of ``benchmarks/cnn_step.py``
at batch 32 and 128 (the CPU back end's step as the reference). It writes ``DIR/cases.json``, the artifacts, the inputs and
references (``.npz``), and the run-time libraries the artifacts need.

``run`` needs only numpy and ctypes (torch for the peer timings): it loads
each artifact, calls its entry points through the packed C interface
(``_mlir__mlir_ciface_dlvm_<f>``, memref descriptors: the calling convention
of :mod:`dlvm_mlir.backend.runtime`, re-stated here because the package
cannot be imported without MLIR), compares with the references, and times
the MLP and CNN steps and large matmuls against PyTorch CUDA, both as wall time per
call (dlvm's calls copy arguments in and results out) and as GPU kernel time
(read by CUPTI through torch.profiler, which sees our kernels as well).
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

# element type -> numpy dtype (as dlvm_mlir.backend.runtime)
DTYPES = {"f16": np.float16, "f32": np.float32, "f64": np.float64, "i1": np.bool_, "i8": np.int8,
          "i16": np.int16, "i32": np.int32, "i64": np.int64, "ui8": np.uint8, "ui16": np.uint16,
          "ui32": np.uint32, "ui64": np.uint64, "index": np.int64}
SCALAR_CTYPES = {"f32": ctypes.c_float, "f64": ctypes.c_double, "i1": ctypes.c_bool, "i8": ctypes.c_int8,
                 "i16": ctypes.c_int16, "i32": ctypes.c_int32, "i64": ctypes.c_int64, "index": ctypes.c_int64}

# ----------------------------------------------------------------------------
# build (here)
# ----------------------------------------------------------------------------

def _as_tuple(value: Any) -> tuple:
    return value if isinstance(value, tuple) else (value,)


def build(directory: Path) -> None:
    sys.path.insert(0, str(ROOT / "test" / "python"))
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import dlvm_mlir
    from dlvm_mlir.backend.artifact import runtime_library
    from dlvm_mlir.backend.gpu import GpuOptions, build_cuda_object, cuda_runtime_library, lower_to_gpu
    from dlvm_mlir.backend.gpu_schedule import GpuScheduleOptions
    from dlvm_mlir.compiler import CompileOptions, build as build_artifact, lower

    import test_gpu
    import mlp_step

    if directory.exists():
        shutil.rmtree(directory)
    (directory / "lib").mkdir(parents=True)
    cases: list[dict[str, Any]] = []
    rng = np.random.default_rng(0)

    def cuda(name: str, source: str, options: GpuOptions | None = None) -> str:
        path = directory / f"{name}.so"
        start = time.perf_counter()
        if options is None:
            build_artifact(source, CompileOptions(target="cuda"), name, str(path))
        else:
            result = lower_to_gpu(lower(source, until="linalg"), options)
            build_cuda_object(result, options, path)
        print(f"  built {name} ({time.perf_counter() - start:.1f} s, {path.stat().st_size // 1024} KiB)", flush=True)
        return path.name

    def kernels(source: str) -> dict[str, str]:
        """Kernel name -> what it computes (the op of its launch at the map stage), for the timing tables."""
        module = lower(source, until="linalg", options=CompileOptions(target="cuda"))
        lower_to_gpu(module, GpuOptions(), stop_after="map")
        return launch_descriptions(module)

    def save(name: str, arrays: dict[str, np.ndarray]) -> str:
        np.savez(directory / f"{name}.npz", **arrays)
        return f"{name}.npz"

    # every dlvm op, and reductions around the split-reduction thresholds, against the CPU back end
    groups = {group: {n: test_gpu.OPS[n] for n in names} for group, names in test_gpu.GROUPS.items()}
    groups["reductions"] = test_gpu.reduction_cases()
    for group, functions in groups.items():
        names = list(functions)
        source = "".join(functions.values())
        artifact = cuda(f"ops_{group}", source)
        cpu = dlvm_mlir.compile(source, target="cpu")
        for name in names:
            entry = f"t_{name}"
            signature = cpu.signatures[entry]
            args = test_gpu.op_inputs(name, signature, rng)
            if name == "loop":  # the trip count
                args[1] = np.asarray(3, np.int64)
            want = _as_tuple(cpu[entry](*[a.item() if s.shape is None else a for s, a in zip(signature.inputs, args)]))
            data = {f"in{i}": a for i, a in enumerate(args)} | {f"out{i}": np.asarray(w) for i, w in enumerate(want)}
            # f16 rounding; long f32 sums in another order (error ~ sqrt(n) ulp of the partial sums)
            tol = {"exp_f16": 2e-3, "dot_f16": 2e-3, "sum_all_1e6": 2e-3, "sum_tall": 2e-4,
                   "sum_two_dims": 1e-4, "mean_batch": 1e-4, "softmax_tall": 1e-4}.get(name, 2e-5)
            if name == "random":  # the generator need not match the CPU's stream: compare the statistics
                tol = None
            cases.append({"name": name, "artifact": artifact, "entry": entry, "data": save(f"op_{name}", data),
                          "tolerance": tol, "kind": "op"})

    # matmuls around the kernels' tiles: reference in float64 on the run machine
    def matmul(m: int, n: int, k: int, t: str = "f32", mma: str | None = None, time_it: bool = False) -> None:
        name = f"mm_{t}_{m}x{n}x{k}" + (f"_{mma}" if mma else "")
        source = test_gpu._mm(m, n, k, t)
        options = GpuOptions(schedule=GpuScheduleOptions(mma=mma)) if mma else None
        # tf32 rounds operands to 10 mantissa bits (relative 2^-11 per product)
        tol = {"f32": 1e-4, "f16": 2e-2}[t] if mma != "tf32" else 2e-2
        cases.append({"name": name, "artifact": cuda(name, source, options), "entry": "mm", "kind": "matmul",
                      "shape": [m, n, k], "dtype": t, "tolerance": tol, "time": time_it, "mma": mma or ""})

    for shape in [(64, 64, 64), (37, 70, 50), (200, 300, 100), (1, 130, 7), (513, 1000, 257), (2048, 2048, 2048)]:
        matmul(*shape, time_it=shape[0] == 2048)
    matmul(128, 96, 64, "f16")
    matmul(2048, 2048, 2048, "f16", time_it=True)
    matmul(70, 50, 40, mma="tf32")
    matmul(2048, 2048, 2048, mma="tf32", time_it=True)

    # the MLP gradient of examples/mlp.mlir, against the CPU back end
    mlp = (ROOT / "examples" / "mlp.mlir").read_text()
    cpu = dlvm_mlir.compile(mlp, target="cpu")
    args = list(test_gpu.mlp_args())
    artifact = cuda("mlp_grad", mlp)
    for entry in ("loss", "loss_grad"):
        want = _as_tuple(cpu[entry](*args))
        data = {f"in{i}": a for i, a in enumerate(args)} | {f"out{i}": np.asarray(w) for i, w in enumerate(want)}
        cases.append({"name": f"mlp_{entry}", "artifact": artifact, "entry": entry, "kind": "op",
                      "data": save(f"mlp_{entry}", data), "tolerance": 1e-4})

    # the MLP training step of benchmarks/mlp_step.py (NNKit), against PyTorch on the run machine
    step = mlp_step.dlvm_step()
    unsplit = GpuOptions(schedule=GpuScheduleOptions(split_reductions=False))
    for batch, options in ((128, None), (1024, None), (1024, unsplit)):
        x, y, params = mlp_step.make_problem(batch)
        source = step.ir(x, y, *params, stage="ad")
        name = f"mlp_step_b{batch}" + ("_unsplit" if options else "")
        cases.append({"name": name, "artifact": cuda(name, source, options), "entry": step.name, "kind": "mlp_step",
                      "batch": batch, "sizes": list(mlp_step.SIZES), "lr": mlp_step.LR, "tolerance": 1e-4,
                      "data": save(name, {f"in{i}": a for i, a in enumerate([x, y, *params])}),
                      "kernels": kernels(source) if options is None else {}})

    # the CNN training step of benchmarks/cnn_step.py (issue 15's network), against the CPU back end
    import cnn_step

    for batch in (32, 128):
        x, labels, params = cnn_step.problem(batch)
        step = cnn_step.dlvm_step()
        args = [x, labels, *params]
        want = _as_tuple(step(*args))  # the CPU back end
        data = {f"in{i}": a for i, a in enumerate(args)} | {f"out{i}": np.asarray(w) for i, w in enumerate(want)}
        name = f"cnn_step_b{batch}"
        # f32 convolutions summed in another order over up to 576 terms per output
        source = step.ir(*args, stage="ad")
        cases.append({"name": name, "artifact": cuda(name, source), "entry": step.name,
                      "kind": "cnn_step", "batch": batch, "lr": cnn_step.LR, "tolerance": 1e-3,
                      "data": save(name, data), "kernels": kernels(source)})

    for library in (runtime_library(), cuda_runtime_library()):
        shutil.copy2(library, directory / "lib" / library.name)
    # libmlir_cuda_runtime.so names libLLVM.so (136 MB) as needed but uses none of its
    # symbols: an empty library of that name satisfies the loader on the GPU machine.
    empty = directory / "lib" / "empty.c"
    empty.write_text("")
    subprocess.run(["cc", "-shared", "-Wl,-soname,libLLVM.so", "-o", str(directory / "lib" / "libLLVM.so"),
                    str(empty)], check=True)
    (directory / "cases.json").write_text(json.dumps(cases, indent=1))
    size = sum(p.stat().st_size for p in directory.rglob("*") if p.is_file())
    print(f"{len(cases)} cases in {directory} ({size / 2**20:.1f} MiB)")


def launch_descriptions(module: Any) -> dict[str, str]:
    """``{kernel name: description}`` of the ``gpu.launch`` ops of a module at the map stage.
    gpu-kernel-outlining names a function's kernels ``<function>_kernel``,
    ``<function>_kernel_0``, ``<function>_kernel_1``, ... in the order of its launches."""
    import re

    described: dict[str, str] = {}
    for fn in module.body.operations:
        if fn.operation.name != "func.func" or not len(fn.operation.regions[0].blocks):
            continue
        name = fn.operation.attributes["sym_name"].value
        launches: list[Any] = []

        def visit(op: Any) -> Any:
            from mlir import ir

            if op.name == "gpu.launch":
                launches.append(op)
                return ir.WalkResult.SKIP
            return ir.WalkResult.ADVANCE

        from mlir import ir

        fn.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
        for index, launch in enumerate(launches):
            text = str(launch)
            found = re.search(r"\b(linalg\.[a-z_0-9]+|memref\.atomic_rmw|scf\.for|scf\.while|nvgpu\.mma\.sync)", text)
            what = found.group(1) if found else "?"
            shapes = list(dict.fromkeys(re.findall(r"memref<([0-9x]+)x[a-z]+[0-9]*[,>]", text)))[:3]
            sizes = re.search(r"in \(%\w+ = %c(\d+), %\w+ = %c(\d+), %\w+ = %c(\d+)\) threads", text)
            grid = "x".join(sizes.groups()) if sizes else "?"
            kernel = f"{name}_kernel" + ("" if index == 0 else f"_{index - 1}")
            described[kernel] = f"{what} {' '.join(shapes)} grid {grid}"
    return described


# ----------------------------------------------------------------------------
# run (on the GPU machine: numpy and ctypes only)
# ----------------------------------------------------------------------------

def _descriptor(array: np.ndarray) -> ctypes.Structure:
    rank = array.ndim
    fields = [("allocated", ctypes.c_void_p), ("aligned", ctypes.c_void_p), ("offset", ctypes.c_int64)]
    if rank:
        fields += [("sizes", ctypes.c_int64 * rank), ("strides", ctypes.c_int64 * rank)]
    desc = type(f"MemRef{rank}", (ctypes.Structure,), {"_fields_": fields})()
    desc.allocated = desc.aligned = array.ctypes.data
    desc.offset = 0
    if rank:
        desc.sizes[:] = list(array.shape)
        desc.strides[:] = [s // array.itemsize for s in array.strides]
    return desc


class Artifact:
    """One loaded shared object: ``artifact(entry, *arrays)`` -> tuple of results."""

    def __init__(self, path: Path) -> None:
        self.library = ctypes.CDLL(str(path), mode=os.RTLD_NOW | os.RTLD_LOCAL)
        meta = ctypes.string_at(ctypes.addressof(ctypes.c_char.in_dll(self.library, "__dlvm_metadata")))
        self.signatures = {s["name"]: s for s in json.loads(meta)["signatures"]}

    def __call__(self, entry: str, *args: np.ndarray, poison: bool = True) -> tuple[np.ndarray, ...]:
        sig = self.signatures[entry]
        keep: list[Any] = []
        slots = (ctypes.c_void_p * (len(sig["inputs"]) + len(sig["results"])))()
        for i, (spec, value) in enumerate(zip(sig["inputs"], args)):
            if spec["shape"] is None:
                cell = SCALAR_CTYPES[spec["element"]](value.item())
                keep.append(cell)
                slots[i] = ctypes.addressof(cell)
            else:
                array = np.require(value, DTYPES[spec["element"]], "C")
                assert list(array.shape) == spec["shape"], (entry, i, array.shape, spec)
                desc = _descriptor(array)
                pointer = ctypes.c_void_p(ctypes.addressof(desc))
                keep += [array, desc, pointer]
                slots[i] = ctypes.addressof(pointer)
        outputs = []
        for j, spec in enumerate(sig["results"]):
            out = np.empty(spec["shape"] or (), DTYPES[spec["element"]])
            if poison:  # unwritten elements show
                out.fill(np.nan if out.dtype.kind == "f" else 0)
            desc = _descriptor(out)
            pointer = ctypes.c_void_p(ctypes.addressof(desc))
            keep += [desc, pointer]
            slots[len(sig["inputs"]) + j] = ctypes.addressof(pointer)
            outputs.append(out)
        function = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(
            ctypes.cast(getattr(self.library, "_mlir__mlir_ciface_dlvm_" + entry), ctypes.c_void_p).value)
        function(ctypes.addressof(slots))
        return tuple(outputs)


def _error(got: np.ndarray, want: np.ndarray, tol: float) -> float:
    """max |got - want| / (tol * (1 + |want|)), NaN/inf must match exactly; <= 1 passes."""
    got = np.asarray(got).astype(np.float64) if np.asarray(got).dtype.kind in "fc" else np.asarray(got)
    want = np.asarray(want).astype(np.float64) if np.asarray(want).dtype.kind in "fc" else np.asarray(want)
    if got.shape != want.shape:
        return float("inf")
    if want.dtype.kind not in "f":
        return 0.0 if np.array_equal(got, want) else float("inf")
    special = ~np.isfinite(want)
    if not np.array_equal(np.isnan(got), np.isnan(want)) or not np.array_equal(got[special & ~np.isnan(want)],
                                                                                 want[special & ~np.isnan(want)]):
        return float("inf")
    finite = np.isfinite(want)
    if not finite.any():
        return 0.0
    scale = 1.0 + np.abs(want[finite]) if want.size > 1 else 1.0 + np.abs(want[finite])
    return float(np.max(np.abs(got[finite] - want[finite]) / (tol * scale)))


def _torch_mlp_step(torch: Any, batch_args: list[Any], lr: float) -> Any:
    x, y, w1, b1, w2, b2, w3, b3 = batch_args
    params = [p.clone().requires_grad_(True) for p in (w1, b1, w2, b2, w3, b3)]
    h1 = torch.tanh(x @ params[0] + params[1])
    h2 = torch.tanh(h1 @ params[2] + params[3])
    log_p = torch.log_softmax(h2 @ params[4] + params[5], dim=1)
    loss = -(y * log_p).sum() / x.shape[0]
    grads = torch.autograd.grad(loss, params)
    with torch.no_grad():
        return [p - lr * g for p, g in zip(params, grads)] + [loss.detach()]


def _torch_cnn_step(torch: Any, lr: float) -> Any:
    """The step of benchmarks/cnn_step.py in PyTorch: ``step(x, labels, *params)`` -> new
    parameters and the loss (on the tensors' device)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import cnn_step

    f = torch.nn.functional
    Ops = cnn_step.torch_ops(torch)

    def step(x: Any, labels: Any, *params: Any) -> list[Any]:
        params = [p.clone().requires_grad_(True) for p in params]
        value = f.cross_entropy(cnn_step.forward(Ops, x, *params), labels.long())
        grads = torch.autograd.grad(value, params)
        with torch.no_grad():
            return [p - lr * g for p, g in zip(params, grads)] + [value.detach()]

    return step


def _median_ms(fn: Any, repeats: int, sync: Any = None) -> float:
    for _ in range(3):
        fn()
    if sync:
        sync()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        if sync:
            sync()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def _kernel_ms(torch: Any, fn: Any, repeats: int = 5, show: int = 0,
               described: dict[str, str] | None = None) -> tuple[float, int]:
    """GPU kernel time per call (CUPTI, via torch.profiler; sees every kernel of the process) and launches per call."""
    from torch.profiler import ProfilerActivity, profile

    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA], acc_events=True) as prof:
        for _ in range(repeats):
            fn()
        torch.cuda.synchronize()
    total_us, launches, kernels = 0.0, 0, []
    for event in prof.key_averages():
        device_us = getattr(event, "self_device_time_total", None)
        if device_us is None:
            device_us = event.self_cuda_time_total
        if device_us > 0 and not event.key.startswith(("Memcpy", "Memset")):
            total_us += device_us
            launches += event.count
            kernels.append((device_us / repeats, event.count // repeats, event.key))
    if show:
        for us, count, name in sorted(kernels, reverse=True)[:show]:
            what = (described or {}).get(name, "")
            print(f"    {us:9.1f} us {count:3d}x {name[:90]}" + (f"  ({what})" if what else ""))
    return total_us / 1e3 / repeats, launches // repeats


def run_isolated(directory: Path, out: Path | None, only: str | None) -> int:
    """Each artifact's cases in a child process, so a crash or hang in one leaves the others' results."""
    cases = json.loads((directory / "cases.json").read_text())
    names = list(dict.fromkeys(c["artifact"] for c in cases if not only or only in c["name"]))
    status = 0
    for artifact in names:
        command = [sys.executable, __file__, "run", str(directory), "--artifact", artifact, "--no-isolate"]
        if only:
            command += ["--only", only]
        if out is not None:
            command += ["--out", str(out / artifact.removesuffix(".so"))]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=240)
            text, rc = done.stdout + done.stderr, done.returncode
        except subprocess.TimeoutExpired as exc:
            text, rc = (exc.stdout or b"").decode() + (exc.stderr or b"").decode() + "\nTIMEOUT", -1
        print(f"== {artifact}: exit {rc}")
        print(text.rstrip(), flush=True)
        status |= rc != 0
    return status


def run(directory: Path, out: Path | None, only: str | None, artifact_name: str | None = None) -> int:
    cases = json.loads((directory / "cases.json").read_text())
    if artifact_name:
        cases = [c for c in cases if c["artifact"] == artifact_name]
    artifacts: dict[str, Artifact] = {}
    rows, failures, timings = [], 0, []
    for case in cases:
        if only and only not in case["name"]:
            continue
        name = case["name"]
        start = time.perf_counter()
        try:
            artifact = artifacts.get(case["artifact"]) or artifacts.setdefault(
                case["artifact"], Artifact(directory / case["artifact"]))
            error, note = _run_case(artifact, case, directory, timings)
        except Exception as exc:  # noqa: BLE001 - a failing case is reported, the others still run
            error, note = float("inf"), f"{type(exc).__name__}: {exc}"[:300]
        ok = error <= 1.0
        failures += not ok
        rows.append({"name": name, "error": error, "ok": ok, "note": note,
                     "seconds": round(time.perf_counter() - start, 3)})
        print(f"{'ok  ' if ok else 'FAIL'} {name:<34} err {error:9.3g}  {note}", flush=True)
    print(f"\n{len(rows) - failures}/{len(rows)} cases pass")
    if timings:
        print("\ntimings (median ms; dlvm wall includes copying arguments in and results out per call)")
        print(f"{'case':<26}{'dlvm wall':>10}{'dlvm kern':>10}{'launch':>7}{'torch wall':>11}"
              f"{'torch+copy':>11}{'torch kern':>11}{'launch':>7}")
        for t in timings:
            print(f"{t['name']:<26}{t['dlvm_wall']:10.3f}{t['dlvm_kernel']:10.3f}{t['dlvm_launches']:7d}"
                  f"{t['torch_wall']:11.3f}{t['torch_copy_wall']:11.3f}{t['torch_kernel']:11.3f}{t['torch_launches']:7d}")
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        (out / "gpu_check.json").write_text(json.dumps({"cases": rows, "timings": timings}, indent=1))
    return 1 if failures else 0


def _torch(cuda: bool = True) -> Any:
    """torch (imported on first use: it takes seconds), or None when it is missing or, with ``cuda``, has no GPU."""
    try:
        import torch
    except ImportError:
        return None
    return torch if torch.cuda.is_available() or not cuda else None


def _run_case(artifact: Artifact, case: dict, directory: Path, timings: list) -> tuple[float, str]:
    entry, kind = case["entry"], case["kind"]
    if kind == "op":
        data = np.load(directory / case["data"])
        args = [data[f"in{i}"] for i in range(len([k for k in data.files if k.startswith("in")]))]
        want = [data[f"out{i}"] for i in range(len([k for k in data.files if k.startswith("out")]))]
        got = artifact(entry, *args)
        if case["tolerance"] is None:  # dlvm.random from -1 upto 1: range and moments
            g = got[0]
            bad = not (np.all((g >= -1) & (g <= 1)) and abs(g.mean()) < 0.05 and abs(g.var() - 1 / 3) < 0.05)
            return (float("inf") if bad else 0.0), f"mean {g.mean():.3f} var {g.var():.3f}"
        errors = [_error(g, w, case["tolerance"]) for g, w in zip(got, want)]
        return max(errors), ""
    if kind == "matmul":
        m, n, k = case["shape"]
        rng = np.random.default_rng(m + n + k)
        dtype = DTYPES[case["dtype"]]
        a, b = rng.standard_normal((m, k)).astype(dtype), rng.standard_normal((k, n)).astype(dtype)
        want = a.astype(np.float64) @ b.astype(np.float64)
        (got,) = artifact(entry, a, b)
        # the error of a sum of k products grows as sqrt(k)
        error = _error(got, want, case["tolerance"] * max(1.0, np.sqrt(k / 64)))
        note = ""
        torch = _torch() if case.get("time") else None
        if torch is not None:
            ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
            torch.backends.cuda.matmul.allow_tf32 = case["mma"] == "tf32"
            t = _timing(torch, case["name"], lambda: artifact(entry, a, b, poison=False), lambda: ta @ tb,
                        lambda: (torch.from_numpy(a).cuda() @ torch.from_numpy(b).cuda()).cpu())
            t["gflops"] = 2 * m * n * k / t["dlvm_kernel"] / 1e6 if t["dlvm_kernel"] else 0.0
            timings.append(t)
            note = f"kernel {t['gflops']:.0f} GFLOP/s"
        return error, note
    if kind == "mlp_step":
        data = np.load(directory / case["data"])
        args = [data[f"in{i}"] for i in range(8)]
        got = artifact(entry, *args)
        torch = _torch(cuda=False)
        if torch is None:
            return float("inf"), "torch is needed for the reference"
        ref = _torch_mlp_step(torch, [torch.from_numpy(a).double() for a in args], case["lr"])
        error = max(_error(g, r.numpy(), case["tolerance"]) for g, r in zip(got, ref))
        torch = _torch()
        if torch is None:
            return error, "no CUDA for torch: not timed"
        dev = [torch.from_numpy(a).cuda() for a in args]
        t = _timing(torch, case["name"], lambda: artifact(entry, *args, poison=False),
                    lambda: _torch_mlp_step(torch, dev, case["lr"]),
                    lambda: [r.cpu() for r in _torch_mlp_step(torch, [torch.from_numpy(a).cuda() for a in args],
                                                              case["lr"])], case.get("kernels"))
        timings.append(t)
        return error, f"dlvm {t['dlvm_wall']:.3f} ms/step, torch {t['torch_wall']:.3f} (+copies {t['torch_copy_wall']:.3f})"
    if kind == "cnn_step":
        data = np.load(directory / case["data"])
        args = [data[f"in{i}"] for i in range(len([k for k in data.files if k.startswith("in")]))]
        want = [data[f"out{i}"] for i in range(len([k for k in data.files if k.startswith("out")]))]
        got = artifact(entry, *args)
        error = max(_error(g, w, case["tolerance"]) for g, w in zip(got, want))
        torch = _torch()
        if torch is None:
            return error, "no CUDA for torch: not timed"
        step = _torch_cnn_step(torch, case["lr"])
        dev = [torch.from_numpy(a).cuda() for a in args]
        t = _timing(torch, case["name"], lambda: artifact(entry, *args, poison=False), lambda: step(*dev),
                    lambda: [r.cpu() for r in step(*[torch.from_numpy(a).cuda() for a in args])], case.get("kernels"))
        timings.append(t)
        return error, f"dlvm {t['dlvm_wall']:.3f} ms/step, torch {t['torch_wall']:.3f} (+copies {t['torch_copy_wall']:.3f})"
    raise ValueError(f"unknown case kind {kind}")


def _timing(torch: Any, name: str, dlvm: Any, resident: Any, copying: Any,
            described: dict[str, str] | None = None) -> dict[str, Any]:
    sync = torch.cuda.synchronize
    print(f"  {name}: dlvm's kernels (time per call, launches per call)")
    dlvm_kernel, dlvm_launches = _kernel_ms(torch, dlvm, show=12, described=described)
    print(f"  {name}: torch's kernels")
    torch_kernel, torch_launches = _kernel_ms(torch, resident, show=6)
    return {"name": name, "dlvm_wall": _median_ms(dlvm, 30), "dlvm_kernel": dlvm_kernel,
            "dlvm_launches": dlvm_launches, "torch_wall": _median_ms(resident, 30, sync),
            "torch_copy_wall": _median_ms(copying, 30, sync), "torch_kernel": torch_kernel,
            "torch_launches": torch_launches}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", choices=("build", "run"))
    parser.add_argument("directory", type=Path)
    parser.add_argument("--out", type=Path, default=None, help="run: write gpu_check.json here")
    parser.add_argument("--only", default=None, help="run: only cases whose name contains this")
    parser.add_argument("--artifact", default=None, help="run: only the cases of this artifact")
    parser.add_argument("--no-isolate", action="store_true", help="run: every case in this process")
    args = parser.parse_args()
    if args.mode == "build":
        build(args.directory)
        return 0
    if args.no_isolate or args.artifact:
        return run(args.directory, args.out, args.only, args.artifact)
    return run_isolated(args.directory, args.out, args.only)


if __name__ == "__main__":
    sys.exit(main())
