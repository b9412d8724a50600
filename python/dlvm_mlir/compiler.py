"""``dlvm_mlir.compile``: DLVM IR to a loaded shared object.

The stages, each a plain function over a module (Triton-style), so any stage's
IR can be inspected with :func:`lower`::

    frontend   parse / copy the input into a private context
    ad         dlvm-differentiate: synthesize gradient and tangent bodies
    optimize   dlvm-optimize (algebra, matrix chains, fusion, canonicalize, cse)
    linalg     dlvm-to-linalg, canonicalize, cse
    backend    the target's pipeline to the LLVM dialect (dlvm_mlir.backend)
    llvm       LLVM code generation, linked into a shared object

They all run in the compiler process (:mod:`dlvm_mlir.compiler_process`): a
crash there is a :class:`~dlvm_mlir.errors.InternalCompilerError` here, and
this process goes on.  The shared object lands in the disk cache
(:mod:`dlvm_mlir.cache`, keyed by the source text, the options and the
compiler), so the next process that compiles the same program only loads it.

>>> exe = dlvm_mlir.compile(text, target="cpu")       # doctest: +SKIP
>>> y = exe["loss"](x, w)                            # doctest: +SKIP
"""

from __future__ import annotations

import functools
import os
import shutil
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mlir import ir

from . import crash_guard
from .cache import MemoryCache, cache_key, cache_stats, disk_cache
from .errors import CompileError, DLVMError
from .backend.options import TUNING_MODES, default_threads, default_tuning
from .parsing import parse_alone, parse_module
from .stages import STAGES, FrontOptions, run_front_stages

__all__ = ["CompileError", "CompileOptions", "Executable", "STAGES", "compile", "load", "lower"]

TARGETS = ("cpu", "cuda")


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "0").lower() not in ("0", "false", "off", "no", "")


def _env_timeout() -> float | None:
    text = os.environ.get("DLVM_MLIR_COMPILE_TIMEOUT", "")
    try:
        return float(text) if text else None
    except ValueError:
        raise CompileError(f"$DLVM_MLIR_COMPILE_TIMEOUT must be a number of seconds, got {text!r}") from None


@dataclass(frozen=True)
class CompileOptions:
    """How :func:`compile` lowers a program."""

    target: str = "cpu"
    optimize: bool = True
    threads: int = field(default_factory=default_threads)
    gpu_chip: str = "sm_90"
    checkpoint: str = "save-everything"
    """dlvm-checkpoint policy for gradient functions (see dlvm_mlir.transforms.checkpoint)."""
    checkpoint_budget: str = ""
    """Residual memory budget with ``checkpoint="min-recompute"`` (e.g. "1MiB")."""
    check_bounds: bool = field(default_factory=lambda: _env_flag("DLVM_MLIR_CHECK_BOUNDS"))
    """Guard tensor accesses at run-time indices (dlvm-check-bounds): an
    out-of-range index raises an ExecutionError naming the op; default from
    ``$DLVM_MLIR_CHECK_BOUNDS`` (off)."""
    entry_points: tuple[str, ...] | None = None
    """The functions callable from outside (None: every public function,
    synthesized derivatives included); the others become private, and those
    no entry point calls are not compiled."""
    tuning: str = field(default_factory=default_tuning)
    """The CPU back end's tuning database (:mod:`dlvm_mlir.backend.tuning`): ``use`` it,
    ``search`` schedules for the kernels it lacks (a few seconds each), or ``off``;
    default ``$DLVM_MLIR_TUNE`` (``use``)."""

    def __post_init__(self) -> None:
        if self.tuning not in TUNING_MODES:
            raise CompileError(f"unknown tuning mode '{self.tuning}' (expected one of {', '.join(TUNING_MODES)})")
        if self.target not in TARGETS:
            raise CompileError(f"unknown target '{self.target}' (expected one of {', '.join(TARGETS)})")
        if isinstance(self.threads, bool) or not isinstance(self.threads, int) or self.threads < 1:
            raise CompileError(f"threads must be a positive integer, got {self.threads!r}")
        from .transforms.checkpoint import POLICIES

        if self.checkpoint not in POLICIES:
            raise CompileError(f"unknown checkpoint policy '{self.checkpoint}' (expected one of {', '.join(POLICIES)})")
        if self.entry_points is not None:
            object.__setattr__(self, "entry_points", tuple(self.entry_points))

    def front(self) -> FrontOptions:
        """The options of the target-independent stages (dlvm_mlir.stages)."""
        return FrontOptions(self.optimize, self.checkpoint, self.checkpoint_budget, self.check_bounds,
                            self.entry_points)

    def cpu_options(self) -> Any:
        """The options of the CPU back end (a :class:`~dlvm_mlir.backend.CpuOptions`)."""
        from .backend import CpuOptions
        from .backend.options import ScheduleOptions

        return CpuOptions(threads=self.threads, schedule=ScheduleOptions(tuning=self.tuning))

    def backend_key(self) -> str:
        """What the target's back end adds to the cache key (its options and the machine)."""
        if self.target == "cpu":
            return self.cpu_options().key()
        from .backend.gpu import GpuOptions

        return GpuOptions(chip=self.gpu_chip, format="auto").key()


def _source_text(source: str | ir.Module) -> str:
    return source if isinstance(source, str) else source.operation.get_asm(enable_debug_info=True)


def _frontend(text: str, filename: str) -> ir.Module:
    """A private copy of the input, parsed and verified in a fresh context."""
    crash_guard.report_stage("parse")
    return parse_module(text, ir.Context(), filename)


def _run_stages(
    text: str, options: CompileOptions, filename: str, until: str, seconds: dict[str, float] | None = None
) -> ir.Module:
    start = time.perf_counter()
    module = _frontend(text, filename)
    if seconds is not None:
        seconds["parse"] = time.perf_counter() - start
    with module.context:
        run_front_stages(module, options.front(), until, on_stage=crash_guard.report_stage, seconds=seconds)
    return module


def run_guarded(work: Callable[[], Any], text: str, options: CompileOptions, filename: str) -> Any:
    """``work()`` in the compiler process (:mod:`dlvm_mlir.crash_guard`)."""
    reproduce = (
        f"import dlvm_mlir; dlvm_mlir.compile(open(PATH).read(), target={options.target!r}, "
        f"optimize={options.optimize}, threads={options.threads}, checkpoint={options.checkpoint!r}, "
        f"checkpoint_budget={options.checkpoint_budget!r}, check_bounds={options.check_bounds}, "
        f"entry_points={options.entry_points!r})"
    )
    return crash_guard.isolated(
        work, source=text, filename=filename, reproduce=reproduce, parse=parse_alone, timeout=_env_timeout(),
    )


def _lowered_text(text: str, options: CompileOptions, filename: str, until: str) -> str:
    return _run_stages(text, options, filename, until).operation.get_asm(enable_debug_info=True)


def lower(
    source: str | ir.Module,
    *,
    until: str = "linalg",
    options: CompileOptions | None = None,
    filename: str = "<input>",
) -> ir.Module:
    """The program after the target-independent stages up to ``until``.

    Raises ParseError for IR that does not parse or verify,
    PassPipelineFailure when a stage rejects the program and
    InternalCompilerError when the compiler crashes on it (all CompileErrors).
    """
    options = options or CompileOptions()
    if until not in STAGES:
        raise CompileError(f"unknown stage '{until}' (expected one of {', '.join(STAGES)})")
    text = _source_text(source)
    if not crash_guard.enabled():
        return _run_stages(text, options, filename, until)
    lowered = run_guarded(functools.partial(_lowered_text, text, options, filename, until), text, options, filename)
    return ir.Module.parse(lowered, ir.Context())


@dataclass
class BuildReport:
    """What the compiler process reports about one build."""

    #: what the artifact says about itself (signatures, bounds checks, ...)
    info: Any = None
    #: seconds per stage: the target-independent ones, then the back end's
    seconds: dict[str, float] = field(default_factory=dict)


def build(text: str, options: CompileOptions, filename: str, path: str, emit: str = "so") -> BuildReport:
    """Every stage of :func:`compile`, ending in the artifact ``path`` (a shared
    object unless ``emit`` says otherwise); the compiler process runs this."""
    report = BuildReport()
    module = _run_stages(text, options, filename, "linalg", report.seconds)
    crash_guard.report_stage("backend")
    if options.target == "cpu":
        from .backend.cache import build_cpu_object
        from .backend.cpu import lower_to_llvm_cpu

        cpu_options = options.cpu_options()
        result = lower_to_llvm_cpu(module, options=cpu_options)
        crash_guard.report_stage("llvm")
        report.info = build_cpu_object(result, cpu_options, path, emit)
    else:
        from .backend.gpu import GpuOptions, build_cuda_object, lower_to_gpu

        gpu_options = GpuOptions(chip=options.gpu_chip, format="auto")
        result = lower_to_gpu(module, gpu_options)
        crash_guard.report_stage("llvm")
        report.info = build_cuda_object(result, gpu_options, path, emit)
    report.seconds.update(result.stage_seconds)
    return report


class Executable:
    """A compiled program: ``exe["fn"](*arrays)`` or ``exe("fn", *arrays)``.

    ``path``: its shared object; ``seconds``: where the compile time went, by
    stage, when this process compiled it (empty after a cache hit).
    """

    def __init__(self, backend: Any, options: CompileOptions | None = None, seconds: dict[str, float] | None = None):
        self._backend = backend
        self.options = options
        self.seconds = dict(seconds or {})

    def __getitem__(self, name: str) -> Callable[..., Any]:
        return self._backend.entry(name)

    def __call__(self, name: str, *args: Any) -> Any:
        return self[name](*args)

    @property
    def function_names(self) -> list[str]:
        return list(self._backend.signatures)

    @property
    def signatures(self) -> dict[str, Any]:
        """The entry points' :class:`~dlvm_mlir.backend.FunctionSignature` by name."""
        return dict(self._backend.signatures)

    @property
    def path(self) -> Path:
        return self._backend.path

    def __repr__(self) -> str:
        return f"Executable({', '.join(sig.describe() for sig in self._backend.signatures.values())})"


def load(path: str | os.PathLike[str]) -> Executable:
    """The :class:`Executable` of a shared object built by :func:`compile` or
    ``dlvm-compile`` (its metadata says the target and the entry points'
    signatures, which calls are checked against)."""
    from .backend.runtime import CpuExecutable, load_library, read_info

    info = read_info(load_library(path))
    if info.target == "cuda":
        from .backend.gpu import CudaExecutable

        return Executable(CudaExecutable(path))
    return Executable(CpuExecutable(path))


_EXECUTABLES: MemoryCache[Executable] = MemoryCache()


def _timing_requested(timing: bool | None) -> bool:
    return _env_flag("DLVM_MLIR_TIMING") if timing is None else timing


def print_timing(name: str, seconds: dict[str, float], total: float) -> None:
    lines = [f"dlvm-mlir: compiled {name} in {total * 1e3:.0f} ms"]
    for stage, value in seconds.items():
        lines.append(f"  {stage:<22} {value * 1e3:8.1f} ms")
    print("\n".join(lines), file=sys.stderr)


def compile(  # noqa: A001 - the public name mirrors the issue's API
    source: str | ir.Module,
    target: str = "cpu",
    *,
    optimize: bool = True,
    threads: int | None = None,
    checkpoint: str = "save-everything",
    checkpoint_budget: str = "",
    check_bounds: bool | None = None,
    entry_points: Sequence[str] | None = None,
    filename: str = "<input>",
    timing: bool | None = None,
    tuning: str | None = None,
) -> Executable:
    """Compile DLVM IR (text or module) for ``target`` ("cpu" or "cuda").

    ``checkpoint`` / ``checkpoint_budget`` choose what gradient functions save
    for their reverse sweep (dlvm-checkpoint's ``policy`` and ``budget``).
    ``check_bounds``: an out-of-range run-time index raises ExecutionError
    instead of reading or writing out of bounds (default: ``$DLVM_MLIR_CHECK_BOUNDS``).
    ``entry_points``: the functions to call (default: every public one).
    ``timing`` (default ``$DLVM_MLIR_TIMING``): print where the time went.
    ``tuning`` (CPU; default ``$DLVM_MLIR_TUNE``, else ``"use"``): ``"search"``
    searches the schedules of the heavy kernels that the tuning database lacks
    (a few seconds each, with progress on stderr) and records them; ``"use"``
    takes the database's schedules; ``"off"`` the built-in heuristics only
    (:mod:`dlvm_mlir.backend.tuning`).
    ``$DLVM_MLIR_COMPILE_TIMEOUT``: seconds after which a compile is
    abandoned (an InternalCompilerError).

    Results are cached in process and on disk (:mod:`dlvm_mlir.cache`).
    """
    start = time.perf_counter()
    options = CompileOptions(
        target=target,
        optimize=optimize,
        threads=default_threads() if threads is None else threads,
        checkpoint=checkpoint,
        checkpoint_budget=checkpoint_budget,
        check_bounds=_env_flag("DLVM_MLIR_CHECK_BOUNDS") if check_bounds is None else check_bounds,
        entry_points=entry_points,
        tuning=default_tuning() if tuning is None else tuning,
    )
    if options.target == "cuda":
        from .backend.gpu import require_cuda

        require_cuda()
    text = _source_text(source)
    key = cache_key("compile", repr(options), options.backend_key(), filename, text)
    stats = cache_stats()
    executable = _EXECUTABLES.get(key)
    if executable is not None:
        stats.memory_hits += 1
        return executable
    disk = disk_cache()
    loaded = _load_cached(disk.lookup(key), options) if disk is not None else None
    if loaded is not None:
        stats.disk_hits += 1
        stats.last_load_seconds = time.perf_counter() - start
        executable = loaded
    else:
        executable = _build_and_load(text, options, filename, key, disk)
        stats.compiles += 1
        stats.last_compile_seconds = time.perf_counter() - start
        if _timing_requested(timing):
            print_timing(filename, executable.seconds, stats.last_compile_seconds)
    _EXECUTABLES.put(key, executable)
    return executable


def _backend_executable(path: Path, options: CompileOptions) -> Any:
    if options.target == "cuda":
        from .backend.gpu import CudaExecutable

        return CudaExecutable(path)
    from .backend.runtime import CpuExecutable

    return CpuExecutable(path)


def _load_cached(path: Path | None, options: CompileOptions) -> Executable | None:
    if path is None:
        return None
    try:
        return Executable(_backend_executable(path, options), options)
    except DLVMError:
        return None  # evicted or damaged meanwhile: build it again


def _build_and_load(text: str, options: CompileOptions, filename: str, key: str, disk: Any) -> Executable:
    """Build in the compiler process, then load; without a disk cache the object
    lives in a private folder, removed once loaded."""
    from .backend.cache import private_object_path

    path = disk.scratch(key) if disk is not None else private_object_path()
    try:
        work = functools.partial(build, text, options, filename, str(path))
        if crash_guard.enabled():
            started = time.perf_counter()
            report = run_guarded(work, text, options, filename)
            report.seconds["compiler process"] = time.perf_counter() - started - sum(report.seconds.values())
        else:
            report = work()
        if disk is not None:
            path = disk.commit(path, key)
        start = time.perf_counter()
        backend = _backend_executable(path, options)
        report.seconds["load"] = time.perf_counter() - start
    except BaseException:
        if disk is not None:
            path.unlink(missing_ok=True)
        raise
    finally:
        if disk is None:
            shutil.rmtree(path.parent, ignore_errors=True)
    return Executable(backend, options, report.seconds)
