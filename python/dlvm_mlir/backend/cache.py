"""Compile-once caching of CPU executables, in process and on disk.

``compile_cpu(ir_text)`` is keyed by a SHA-256 of the IR text, the options,
the host target, the MLIR wheel version and :data:`BACKEND_VERSION`:

* in process, the key maps to the :class:`CpuExecutable` itself (engines are
  never destroyed anyway, see :mod:`dlvm_mlir.backend.runtime`);
* on disk (``$DLVM_MLIR_CACHE_DIR``, default ``~/.cache/dlvm-mlir``; set
  ``DLVM_MLIR_DISK_CACHE=0`` to disable), the key names the lowered
  LLVM-dialect module (MLIR bytecode) plus a JSON file with the entry-point
  signatures.  A disk hit skips the whole pipeline (schedules, bufferization,
  lowering) and pays only for parsing and LLVM code generation.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import tempfile
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from mlir import ir

from .cpu import CpuOptions, LoweringResult, lower_to_llvm_cpu
from .runtime import CpuExecutable, ExecutionError, FunctionSignature

__all__ = [
    "BACKEND_VERSION",
    "CacheStats",
    "cache_stats",
    "clear_memory_cache",
    "compile_cpu",
    "default_cache_dir",
]

#: bump when the pipeline changes the code it generates
BACKEND_VERSION = "8"


@dataclass
class CacheStats:
    memory_hits: int = 0
    disk_hits: int = 0
    compiles: int = 0
    last_compile_seconds: float = 0.0
    last_load_seconds: float = 0.0


_STATS = CacheStats()
_MEMORY: dict[str, CpuExecutable] = {}


def cache_stats() -> CacheStats:
    """Counters of the caches in this process."""
    return _STATS


def clear_memory_cache() -> None:
    """Forget in-process executables (their engines stay alive)."""
    _MEMORY.clear()


@lru_cache(maxsize=1)
def _mlir_version() -> str:
    try:
        from importlib.metadata import version

        return version("xtc-mlir-python-bindings")
    except Exception:
        return str(Path(ir.__file__).resolve().parent.stat().st_mtime_ns)


def default_cache_dir() -> Path | None:
    """The on-disk cache directory, or ``None`` when disabled."""
    if os.environ.get("DLVM_MLIR_DISK_CACHE", "1").lower() in ("0", "false", "off", "no"):
        return None
    configured = os.environ.get("DLVM_MLIR_CACHE_DIR")
    if configured:
        return Path(configured)
    return Path.home() / ".cache" / "dlvm-mlir"


def _cache_key(ir_text: str, options: CpuOptions) -> str:
    digest = hashlib.sha256()
    for part in (BACKEND_VERSION, _mlir_version(), options.key(), ir_text):
        digest.update(part.encode())
        digest.update(b"\0")
    return digest.hexdigest()


def _write_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _store(directory: Path, key: str, result: LoweringResult) -> None:
    buffer = io.BytesIO()
    with result.module.context:
        result.module.operation.write_bytecode(buffer)
    meta = {"signatures": [s.to_json() for s in result.signatures]}
    _write_atomic(directory / f"{key}.mlirbc", buffer.getvalue())
    _write_atomic(directory / f"{key}.json", json.dumps(meta).encode())


def _load(directory: Path, key: str, options: CpuOptions) -> CpuExecutable | None:
    code_path, meta_path = directory / f"{key}.mlirbc", directory / f"{key}.json"
    if not (code_path.exists() and meta_path.exists()):
        return None
    try:
        meta = json.loads(meta_path.read_text())
        context = ir.Context()
        with context:
            module = ir.Module.parse(code_path.read_bytes())
        signatures = [FunctionSignature.from_json(s) for s in meta["signatures"]]
    except Exception:
        return None
    return CpuExecutable(module, signatures, opt_level=options.opt_level, threads=options.threads)


def _ir_text(source: str | ir.Module) -> str:
    if isinstance(source, ir.Module):
        return str(source)
    return source


def lower_text(ir_text: str, options: CpuOptions) -> LoweringResult:
    """Parse ``ir_text`` in a fresh context and run the CPU pipeline on it."""
    context = ir.Context()
    with context:
        try:
            module = ir.Module.parse(ir_text)
        except ir.MLIRError as exc:
            raise ExecutionError(f"cannot compile invalid IR: {exc}") from exc
    return lower_to_llvm_cpu(module, options=options)


@dataclass
class Lowered:
    """A :class:`LoweringResult` made in another process (the crash guard's child)."""

    bytecode: bytes
    signatures: list[FunctionSignature]
    schedules: list
    stage_seconds: dict[str, float]

    def attach(self) -> LoweringResult:
        """The result with its module parsed into a fresh context of this process."""
        with ir.Context():
            module = ir.Module.parse(self.bytecode)
        return LoweringResult(module, self.signatures, self.schedules, self.stage_seconds)


def lower_detached(ir_text: str, options: CpuOptions, cache_dir: str | os.PathLike[str] | None = None) -> Lowered | None:
    """The CPU pipeline's result for :func:`compile_cpu` in another process; None when the disk cache has it."""
    directory = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    if directory is not None and (directory / f"{_cache_key(ir_text, options)}.mlirbc").exists():
        return None
    result = lower_text(ir_text, options)
    buffer = io.BytesIO()
    with result.module.context:
        result.module.operation.write_bytecode(buffer)
    return Lowered(buffer.getvalue(), result.signatures, result.schedules, result.stage_seconds)


def compile_cpu(
    source: str | ir.Module,
    *,
    threads: int = 2,
    options: CpuOptions | None = None,
    use_cache: bool = True,
    cache_dir: str | os.PathLike[str] | None = None,
    lowered: Lowered | None = None,
) -> CpuExecutable:
    """Compile linalg-on-tensors IR (text or module) into a :class:`CpuExecutable`.

    The source module is not modified: it is printed and re-parsed in a
    private context.  ``options`` overrides ``threads``.  ``lowered``: the
    pipeline's result for this IR, made by :func:`lower_detached`.
    """
    options = options or CpuOptions(threads=threads)
    ir_text = _ir_text(source)
    key = _cache_key(ir_text, options)
    if use_cache and key in _MEMORY:
        _STATS.memory_hits += 1
        return _MEMORY[key]
    directory = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    if use_cache and directory is not None:
        start = time.perf_counter()
        loaded = _load(directory, key, options)
        if loaded is not None:
            _STATS.disk_hits += 1
            _STATS.last_load_seconds = time.perf_counter() - start
            _MEMORY[key] = loaded
            return loaded
    start = time.perf_counter()
    result = lowered.attach() if lowered is not None else lower_text(ir_text, options)
    if use_cache and directory is not None:
        try:
            _store(directory, key, result)
        except OSError:
            pass
    executable = CpuExecutable(result.module, result.signatures, opt_level=options.opt_level, threads=options.threads)
    executable.lowering = result
    _STATS.compiles += 1
    _STATS.last_compile_seconds = time.perf_counter() - start
    if use_cache:
        _MEMORY[key] = executable
    return executable
