"""The target-independent front half of every compilation, in one place.

``dlvm_mlir.compile`` / :func:`dlvm_mlir.compiler.lower`, ``dlvm-cpu-pipeline``
and ``dlvm-gpu-pipeline`` all run these stages, in this order, with the same
options (:class:`FrontOptions`)::

    ad         dlvm-differentiate (when the module declares derivatives);
               every function but the entry points made private
    optimize   dlvm-optimize with the checkpoint policy (or, unoptimized,
               dlvm-checkpoint alone), canonicalize, cse
    linalg     dlvm-check-bounds (when asked), dlvm-to-linalg, canonicalize, cse

Each stage is a plain function over a module (Triton-style), so the IR after
any of them can be inspected.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from mlir import ir

from .errors import CompileError
from .passes import pass_text, run_pipeline

__all__ = ["STAGES", "FrontOptions", "has_derivative_declarations", "has_dlvm_ops", "run_front_stages"]


@dataclass(frozen=True)
class FrontOptions:
    """What the target-independent stages take (``CompileOptions.front()`` gives them)."""

    optimize: bool = True
    checkpoint: str = "save-everything"
    """dlvm-checkpoint policy for gradient functions (see dlvm_mlir.transforms.checkpoint)."""
    checkpoint_budget: str = ""
    """Residual memory budget with ``checkpoint="min-recompute"`` (e.g. "1MiB")."""
    check_bounds: bool = False
    entry_points: tuple[str, ...] | None = None


def has_derivative_declarations(module: ir.OpView | ir.Module) -> bool:
    """Whether a function carries a ``dlvm.gradient`` or ``dlvm.tangent`` declaration."""
    for op in module.body.operations:
        attrs = op.attributes
        if "dlvm.gradient" in attrs or "dlvm.tangent" in attrs:
            return True
    return False


def has_dlvm_ops(module: ir.OpView | ir.Module) -> bool:
    found = False

    def visit(op: ir.Operation) -> ir.WalkResult:
        nonlocal found
        if op.name.startswith("dlvm."):
            found = True
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found


def _keep_public(module: ir.Module, names: Sequence[str]) -> None:
    """Make every function but ``names`` private; an unknown name is an error."""
    found = set()
    private = ir.StringAttr.get("private", module.context)
    for op in module.body.operations:
        if "sym_name" not in op.attributes:
            continue
        name = ir.StringAttr(op.attributes["sym_name"]).value
        if name in names:
            found.add(name)
        elif op.operation.name == "func.func" and len(op.regions[0].blocks):
            op.attributes["sym_visibility"] = private
    missing = [n for n in names if n not in found]
    if missing:
        raise CompileError(f"no function named {', '.join('@' + n for n in missing)} to be an entry point")


def stage_ad(module: ir.Module, options: FrontOptions) -> None:
    if has_derivative_declarations(module):
        run_pipeline(module, "builtin.module(dlvm-differentiate)")
    if options.entry_points is not None:
        _keep_public(module, options.entry_points)


def stage_optimize(module: ir.Module, options: FrontOptions) -> None:
    checkpoint = {"checkpoint": options.checkpoint} if options.checkpoint != "save-everything" else {}
    if options.checkpoint_budget:
        checkpoint["checkpoint-budget"] = options.checkpoint_budget
    if options.optimize:
        pipeline = pass_text("dlvm-optimize", **checkpoint)
    else:
        renamed = {"policy" if k == "checkpoint" else "budget": v for k, v in checkpoint.items()}
        pipeline = (pass_text("dlvm-checkpoint", **renamed) + "," if checkpoint else "") + "canonicalize,cse"
    run_pipeline(module, f"builtin.module({pipeline})")


def stage_linalg(module: ir.Module, options: FrontOptions) -> None:
    # the checks guard the program's own accesses and slices (before the lowering, whose
    # slices are in bounds by construction and would only be slowed down)
    checks = "dlvm-check-bounds," if options.check_bounds else ""
    run_pipeline(module, f"builtin.module({checks}dlvm-to-linalg,canonicalize,cse)")


STAGES: dict[str, Callable[[ir.Module, FrontOptions], None]] = {
    "ad": stage_ad,
    "optimize": stage_optimize,
    "linalg": stage_linalg,
}
"""The target-independent stages, in order; the back end follows."""


def run_front_stages(
    module: ir.Module,
    options: FrontOptions,
    until: str = "linalg",
    on_stage: Callable[[str], None] | None = None,
    seconds: dict[str, float] | None = None,
    linalg_passes_through: bool = False,
) -> None:
    """Run the stages on ``module`` (in its context) up to ``until``.

    ``on_stage(name)`` is called before each; ``seconds`` gets each one's time.
    With ``linalg_passes_through`` (the
    pipeline passes), a module with no dlvm op and no derivative declaration is
    left as it is: linalg input to ``dlvm-cpu-pipeline`` is not canonicalized.
    """
    if until not in STAGES:
        raise CompileError(f"unknown stage '{until}' (expected one of {', '.join(STAGES)})")
    if linalg_passes_through and not (has_derivative_declarations(module) or has_dlvm_ops(module)):
        return
    for name, stage in STAGES.items():
        if on_stage is not None:
            on_stage(name)
        start = time.perf_counter()
        stage(module, options)
        if seconds is not None:
            seconds[name] = time.perf_counter() - start
        if name == until:
            break
