"""Shared by the lowering passes (dlvm-cpu-pipeline, dlvm-gpu-pipeline, dlvm-kernel-fusion).

* :func:`to_linalg` - the target-independent front part: dlvm-differentiate
  (when the module declares derivatives), dlvm-optimize, dlvm-to-linalg;
* :func:`run_in_private_context` / :func:`replace_contents` - run Python
  stages on a copy of the module in a fresh context.  The stages run nested
  pass managers whose passes add dialect extensions to the context, which
  MLIR forbids while the outer pass manager (dlvm-opt's) runs; the result
  then replaces the module's contents;
* :func:`report_failure` - a stage's exception as MLIR errors at the
  original locations (no traceback).
"""

from __future__ import annotations

from collections.abc import Callable

from mlir import ir

from dlvm_mlir.errors import Diagnostic, DiagnosticError, SourceLocation
from dlvm_mlir.passes import ModulePass, run_pipeline

__all__ = [
    "has_derivative_declarations",
    "has_dlvm_ops",
    "replace_contents",
    "report_failure",
    "run_in_private_context",
    "to_linalg",
]


def replace_contents(module: ir.Operation, new: ir.Module) -> None:
    """Make ``module`` hold ``new``'s operations and attributes."""
    body = module.regions[0].blocks[0]
    for op in list(body.operations):
        op.operation.erase()
    for op in list(new.body.operations):
        op.operation.detach_from_parent()
        body.append(op.operation)
    attributes = new.operation.attributes
    for index in range(len(attributes)):
        named = attributes[index]
        module.attributes[named.name] = named.attr


def run_in_private_context(module: ir.Operation, stages: Callable[[ir.Module], object]) -> ir.Module:
    """Run ``stages(copy)`` on a copy of ``module`` in a fresh context.

    Returns the result parsed back into ``module``'s context (locations kept);
    ``module`` itself is untouched.
    """
    text = module.get_asm(enable_debug_info=True)
    work = ir.Module.parse(text, ir.Context())
    with work.context:
        stages(work)
        result = work.operation.get_asm(enable_debug_info=True)
    return ir.Module.parse(result, module.context)


def _diagnostics_of(exc: BaseException) -> list[Diagnostic]:
    """The error diagnostics an exception (or the exception it was raised from) carries."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, DiagnosticError):
            return [d for d in seen.diagnostics if d.severity == "error"]
        if isinstance(seen, ir.MLIRError):
            return [Diagnostic.from_mlir(d) for d in seen.error_diagnostics]
        seen = seen.__cause__
    return []


def report_failure(pass_: ModulePass, module: ir.Operation, what: str, exc: BaseException) -> None:
    """Report ``exc`` from a stage run by :func:`run_in_private_context` as errors.

    One error at ``module`` (``what: first line of the exception``), then each
    error diagnostic the exception carries at its original position.
    """
    where = getattr(exc, "location", None)  # ExecutionError's source position
    message = getattr(exc, "message", None) if where is not None else str(exc)
    first_line = message.splitlines()[0] if message else type(exc).__name__
    pass_.emit_error(_at(module, where), f"{what}: {first_line}")
    for diag in _diagnostics_of(exc):
        pass_.emit_error(_at(module, diag.location), diag.message)


def _at(module: ir.Operation, where: SourceLocation | None) -> ir.Operation | ir.Location:
    if where is None:
        return module
    return ir.Location.file(where.filename, where.line, where.column, context=module.context)


def has_derivative_declarations(module: ir.OpView | ir.Module) -> bool:
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


def to_linalg(module: ir.OpView | ir.Module, optimize: bool) -> None:
    """The target-independent stages of dlvm_mlir.compile, on this module.

    Linalg input passes through unchanged; DLVM input gets its derivatives
    synthesized, then dlvm-optimize (with ``optimize``), dlvm-to-linalg,
    canonicalize and cse.
    """
    steps = []
    if has_derivative_declarations(module):
        steps.append("dlvm-differentiate")
    if has_dlvm_ops(module) or steps:
        if optimize:
            steps.append("dlvm-optimize")
        steps += ["dlvm-to-linalg", "canonicalize", "cse"]
    if steps:
        run_pipeline(module, f"builtin.module({','.join(steps)})", reproducer=False)
