"""``dlvm_mlir.compile``: DLVM IR to a callable executable.

The stages, each a plain function over a module (Triton-style), so any stage's
IR can be inspected with :func:`lower`::

    frontend   parse / copy the input into a private context
    ad         dlvm-differentiate: synthesize gradient and tangent bodies
    optimize   dlvm-optimize (algebra, matrix chains, fusion, canonicalize, cse)
    linalg     dlvm-to-linalg, canonicalize, cse
    backend    the target's pipeline and JIT (CPU: dlvm_mlir.backend)

>>> exe = dlvm_mlir.compile(text, target="cpu")       # doctest: +SKIP
>>> y = exe["loss"](x, w)                            # doctest: +SKIP
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mlir import ir

from . import crash_guard
from .errors import DLVMError
from .passes import pass_text, run_pipeline
from .tools.source import parse_module

__all__ = ["CompileError", "CompileOptions", "Executable", "STAGES", "compile", "lower"]

TARGETS = ("cpu", "cuda")


class CompileError(DLVMError):
    """The program cannot be compiled (bad IR, a failing pass, a bad option)."""


@dataclass(frozen=True)
class CompileOptions:
    """How :func:`compile` lowers a program."""

    target: str = "cpu"
    optimize: bool = True
    threads: int = field(default_factory=lambda: os.cpu_count() or 1)
    gpu_chip: str = "sm_90"
    checkpoint: str = "save-everything"
    """dlvm-checkpoint policy for gradient functions (see dlvm_mlir.transforms.checkpoint)."""
    checkpoint_budget: str = ""
    """Residual memory budget with ``checkpoint="min-recompute"`` (e.g. "1MiB")."""
    check_bounds: bool = field(default_factory=lambda: _env_flag("DLVM_MLIR_CHECK_BOUNDS"))
    """Guard tensor accesses at run-time indices (dlvm-check-bounds): an
    out-of-range index raises an ExecutionError naming the op; default from
    ``$DLVM_MLIR_CHECK_BOUNDS`` (off)."""

    def __post_init__(self) -> None:
        if self.target not in TARGETS:
            raise CompileError(f"unknown target '{self.target}' (expected one of {', '.join(TARGETS)})")
        if self.threads < 1:
            raise CompileError(f"threads must be at least 1, got {self.threads}")
        from .transforms.checkpoint import POLICIES

        if self.checkpoint not in POLICIES:
            raise CompileError(f"unknown checkpoint policy '{self.checkpoint}' (expected one of {', '.join(POLICIES)})")


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "0").lower() not in ("0", "false", "off", "no", "")


def _has_derivative_declarations(module: ir.Module) -> bool:
    for op in module.body.operations:
        attrs = op.attributes
        if "dlvm.gradient" in attrs or "dlvm.tangent" in attrs:
            return True
    return False


def stage_ad(module: ir.Module, options: CompileOptions) -> None:
    if _has_derivative_declarations(module):
        run_pipeline(module, "builtin.module(dlvm-differentiate)")


def stage_optimize(module: ir.Module, options: CompileOptions) -> None:
    checkpoint = {"checkpoint": options.checkpoint} if options.checkpoint != "save-everything" else {}
    if options.checkpoint_budget:
        checkpoint["checkpoint-budget"] = options.checkpoint_budget
    if options.optimize:
        pipeline = pass_text("dlvm-optimize", **checkpoint)
    else:
        renamed = {"policy" if k == "checkpoint" else "budget": v for k, v in checkpoint.items()}
        pipeline = (pass_text("dlvm-checkpoint", **renamed) + "," if checkpoint else "") + "canonicalize,cse"
    run_pipeline(module, f"builtin.module({pipeline})")


def stage_linalg(module: ir.Module, options: CompileOptions) -> None:
    checks = ",dlvm-check-bounds" if options.check_bounds else ""
    run_pipeline(module, f"builtin.module(dlvm-to-linalg,canonicalize,cse{checks})")


STAGES: dict[str, Callable[[ir.Module, CompileOptions], None]] = {
    "ad": stage_ad,
    "optimize": stage_optimize,
    "linalg": stage_linalg,
}
"""The target-independent stages, in order; the back end follows."""


def _source_text(source: str | ir.Module) -> str:
    return source if isinstance(source, str) else source.operation.get_asm(enable_debug_info=True)


def _frontend(text: str, filename: str) -> ir.Module:
    """A private copy of the input, parsed and verified in a fresh context."""
    crash_guard.report_stage("parse")
    return parse_module(text, ir.Context(), filename)


def _run_stages(text: str, options: CompileOptions, filename: str, until: str) -> ir.Module:
    module = _frontend(text, filename)
    with module.context:
        for name, stage in STAGES.items():
            crash_guard.report_stage(name)
            stage(module, options)
            if name == until:
                break
    return module


def _guarded(work: Callable[[], Any], text: str, options: CompileOptions, filename: str) -> Any:
    """``work()`` under the crash guard (:mod:`dlvm_mlir.crash_guard`)."""
    reproduce = (
        f"import dlvm_mlir; dlvm_mlir.compile(open(PATH).read(), target={options.target!r}, "
        f"optimize={options.optimize}, threads={options.threads}, checkpoint={options.checkpoint!r}, "
        f"checkpoint_budget={options.checkpoint_budget!r}, check_bounds={options.check_bounds})"
    )
    return crash_guard.isolated(
        work, source=text, filename=filename, reproduce=reproduce,
        parse=lambda t: ir.Module.parse(t, ir.Context()),
    )


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
    InternalCompilerError when the compiler crashes on it.
    """
    options = options or CompileOptions()
    if until not in STAGES:
        raise CompileError(f"unknown stage '{until}' (expected one of {', '.join(STAGES)})")
    text = _source_text(source)
    if not crash_guard.enabled():
        return _run_stages(text, options, filename, until)
    lowered = _guarded(
        lambda: _run_stages(text, options, filename, until).operation.get_asm(enable_debug_info=True),
        text, options, filename,
    )
    return ir.Module.parse(lowered, ir.Context())


class Executable:
    """A compiled module: ``exe["fn"](*arrays)`` or ``exe("fn", *arrays)``."""

    def __init__(self, backend: Any, linalg_ir: str, options: CompileOptions) -> None:
        self._backend = backend
        self.linalg_ir = linalg_ir
        self.options = options

    def __getitem__(self, name: str) -> Callable[..., Any]:
        return self._backend.entry(name)

    def __call__(self, name: str, *args: Any) -> Any:
        return self[name](*args)

    @property
    def function_names(self) -> list[str]:
        return list(self._backend.signatures)


_EXECUTABLES: dict[str, Executable] = {}


def _key(source: str | ir.Module, options: CompileOptions) -> str:
    text = source if isinstance(source, str) else str(source)
    return hashlib.sha256(f"{options}\n{text}".encode()).hexdigest()


def compile(  # noqa: A001 - the public name mirrors the issue's API
    source: str | ir.Module,
    target: str = "cpu",
    *,
    optimize: bool = True,
    threads: int | None = None,
    checkpoint: str = "save-everything",
    checkpoint_budget: str = "",
    check_bounds: bool | None = None,
    filename: str = "<input>",
) -> Executable:
    """Compile DLVM IR (text or module) for ``target`` ("cpu" or "cuda").

    ``checkpoint`` / ``checkpoint_budget`` choose what gradient functions save
    for their reverse sweep (dlvm-checkpoint's ``policy`` and ``budget``).
    ``check_bounds``: an out-of-range run-time index raises ExecutionError
    instead of reading or writing out of bounds (default: ``$DLVM_MLIR_CHECK_BOUNDS``).
    Results are cached in process (keyed by IR text and options); the CPU back
    end also caches the lowered code on disk.
    """
    options = CompileOptions(
        target=target,
        optimize=optimize,
        threads=threads or CompileOptions().threads,
        checkpoint=checkpoint,
        checkpoint_budget=checkpoint_budget,
        check_bounds=CompileOptions().check_bounds if check_bounds is None else check_bounds,
    )
    key = _key(source, options)
    if key in _EXECUTABLES:
        return _EXECUTABLES[key]
    text = _source_text(source)
    if options.target == "cpu":
        from .backend import CpuOptions, compile_cpu
        from .backend.cache import lower_detached

        cpu_options = CpuOptions(threads=options.threads)
        in_child = crash_guard.enabled()

        def work() -> tuple[str, Any]:
            module = _run_stages(text, options, filename, "linalg")
            linalg_ir = module.operation.get_asm(enable_debug_info=True)
            # the back end's passes run in the child too; LLVM code generation here
            return linalg_ir, lower_detached(linalg_ir, cpu_options) if in_child else None

        linalg_ir, lowered = _guarded(work, text, options, filename)
        backend = compile_cpu(linalg_ir, options=cpu_options, lowered=lowered)
    else:
        from .backend.gpu import compile_cuda

        def work_linalg() -> str:
            return _run_stages(text, options, filename, "linalg").operation.get_asm(enable_debug_info=True)

        linalg_ir = _guarded(work_linalg, text, options, filename)
        backend = compile_cuda(linalg_ir, chip=options.gpu_chip)
    executable = Executable(backend, linalg_ir, options)
    _EXECUTABLES[key] = executable
    return executable
