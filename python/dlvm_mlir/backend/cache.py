"""The CPU back end end to end: linalg IR -> shared object -> loaded executable.

:func:`build_cpu_object` is the back end's last step wherever it runs (the
compiler process of :func:`dlvm_mlir.compile`, or this process): LLVM code
generation of a lowered module and the link into a shared object.
:func:`compile_cpu` runs the whole back end in this process on
linalg-on-tensors IR (what tests and ``dlvm-opt`` users start from), with the
caches of :mod:`dlvm_mlir.cache` keyed by the IR text, the options and the
target machine.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path

from mlir import ir

from ..cache import DiskCache, MemoryCache, cache_key, cache_stats, disk_cache
from .artifact import bounds_checks_of, write_artifact
from .cpu import CpuOptions, LoweringResult, lower_to_llvm_cpu
from .runtime import ArtifactInfo, CpuExecutable, ExecutionError

__all__ = [
    "build_cpu_object",
    "cache_stats",
    "clear_memory_cache",
    "compile_cpu",
    "load_llvm_module",
    "load_object",
    "lower_text",
]

_MEMORY: MemoryCache[CpuExecutable] = MemoryCache()


def clear_memory_cache() -> None:
    """Forget in-process executables (loaded objects stay loaded while referenced)."""
    _MEMORY.clear()


def lower_text(ir_text: str, options: CpuOptions) -> LoweringResult:
    """Parse ``ir_text`` in a fresh context and run the CPU pipeline on it."""
    context = ir.Context()
    with context:
        try:
            module = ir.Module.parse(ir_text)
        except ir.MLIRError as exc:
            raise ExecutionError(f"cannot compile invalid IR: {exc}") from exc
    return lower_to_llvm_cpu(module, options=options)


def load_llvm_module(module: ir.Module, signatures: list, threads: int = 1) -> CpuExecutable:
    """Build and load an LLVM-dialect module lowered elsewhere (e.g. by
    ``dlvm-opt --dlvm-cpu-pipeline``), whose entry points have ``signatures``."""
    result = LoweringResult(module=module, signatures=list(signatures))
    path = private_object_path()
    build_cpu_object(result, CpuOptions(threads=threads), path)
    return load_object(path, remove=True)


def build_cpu_object(
    result: LoweringResult, options: CpuOptions, path: str | os.PathLike[str], emit: str = "so"
) -> ArtifactInfo:
    """Machine code of a lowered module, linked into the shared object ``path``
    (or another artifact, see :func:`~dlvm_mlir.backend.artifact.write_artifact`); its metadata."""
    info = ArtifactInfo(
        target="cpu",
        signatures=tuple(result.signatures),
        bounds_checks=bounds_checks_of(result.module),
        threads=options.threads,
    )
    start = time.perf_counter()
    write_artifact(result.module, info, path, emit, options.codegen())
    result.stage_seconds["llvm"] = time.perf_counter() - start
    return info


def load_object(path: Path, remove: bool = False) -> CpuExecutable:
    """Load a built object; with ``remove``, delete its file (and folder) once loaded."""
    try:
        return CpuExecutable(path)
    finally:
        if remove:
            shutil.rmtree(path.parent, ignore_errors=True)


def private_object_path() -> Path:
    """Where to build an object that no cache keeps (removed once loaded, see :func:`load_object`)."""
    return Path(tempfile.mkdtemp(prefix="dlvm-object-")) / "program.so"


def compile_cpu(
    source: str | ir.Module,
    *,
    threads: int | None = None,
    options: CpuOptions | None = None,
    use_cache: bool = True,
    cache_dir: str | os.PathLike[str] | None = None,
) -> CpuExecutable:
    """Compile linalg-on-tensors IR (text or module) in this process into a :class:`CpuExecutable`.

    The source module is not modified: it is printed and re-parsed in a
    private context.  ``options`` overrides ``threads``.  The executable's
    ``lowering`` holds the pipeline's result when it was compiled here (not
    loaded from the disk cache).
    """
    options = options or (CpuOptions() if threads is None else CpuOptions(threads=threads))
    ir_text = str(source) if isinstance(source, ir.Module) else source
    key = cache_key("cpu", options.key(), ir_text)
    stats = cache_stats()
    if use_cache and (hit := _MEMORY.get(key)) is not None:
        stats.memory_hits += 1
        return hit
    disk = (DiskCache(cache_dir) if cache_dir is not None else disk_cache()) if use_cache else None
    if disk is not None and (path := disk.lookup(key)) is not None:
        start = time.perf_counter()
        try:
            executable = CpuExecutable(path)
        except ExecutionError:
            executable = None  # evicted or damaged meanwhile: build it again
        if executable is not None:
            stats.disk_hits += 1
            stats.last_load_seconds = time.perf_counter() - start
            _MEMORY.put(key, executable)
            return executable
    start = time.perf_counter()
    result = lower_text(ir_text, options)
    path = disk.scratch(key) if disk is not None else private_object_path()
    try:
        build_cpu_object(result, options, path)
        if disk is not None:
            path = disk.commit(path, key)
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    executable = load_object(path, remove=disk is None)
    executable.lowering = result
    stats.compiles += 1
    stats.last_compile_seconds = time.perf_counter() - start
    if use_cache:
        _MEMORY.put(key, executable)
    return executable
