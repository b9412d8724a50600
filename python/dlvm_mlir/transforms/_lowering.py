"""Shared by the lowering passes (dlvm-cpu-pipeline, dlvm-gpu-pipeline, dlvm-kernel-fusion).

* :data:`FRONT_OPTIONS` / :func:`to_linalg` - the target-independent front half
  (:mod:`dlvm_mlir.stages`, the same stages and options as ``dlvm_mlir.compile``);
* :func:`stage_passes` - a back end's stages (lists of
  :mod:`~dlvm_mlir.passes.steps`) as the steps a pass expands into
  (``ModulePass.expand``): upstream passes as pipeline text, each Python
  step a :class:`~dlvm_mlir.passes.StepPass` named ``<Pass>.<stage>`` or
  ``<Pass>.<stage>/<step>``, so that ``--mlir-timing`` and
  ``--mlir-print-ir-after-all`` see each;
* :func:`run_in_private_context` / :func:`replace_contents` - run Python
  stages on a copy of the module in a fresh context, for a pass that runs
  as itself (``run``) rather than as its steps: there the stages' own pass
  managers may add dialect extensions to the context (``convert-to-llvm``
  does), which MLIR forbids while an outer pass manager runs; the result
  then replaces the module's contents.  Expanded, the passes that need
  extensions are steps of the outer pass manager, which loads them before
  it starts;
* :func:`report_failure` - a stage's exception as MLIR errors at the
  original locations (no traceback).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from mlir import ir

from dlvm_mlir.backend.runtime import ExecutionError
from dlvm_mlir.crash_guard import report_stage
from dlvm_mlir.errors import Diagnostic, DiagnosticError, SourceLocation
from dlvm_mlir.passes import Call, ModulePass, Option, PassError, Passes, Step, StepPass
from dlvm_mlir.stages import FrontOptions, run_front_stages
from dlvm_mlir.transforms.checkpoint import POLICIES

__all__ = [
    "FRONT_OPTIONS",
    "front_options",
    "replace_contents",
    "report_failure",
    "run_in_private_context",
    "run_lowering_privately",
    "stage_passes",
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


def run_lowering_privately(
    pass_: ModulePass, module: ir.Operation, what: str, lower: Callable[[ir.Module], object]
) -> None:
    """A lowering pipeline as one pass (``run``; a pass manager runs the steps of
    ``expand`` instead): on a copy of ``module`` in a private context, the front
    half, then ``lower(copy)`` unless ``pass_.stop_at`` is ``linalg``; failures are
    reported as errors (:func:`report_failure`) and leave ``module`` untouched;
    invalid options (``pass_._problem()``) are a :class:`PassError`."""
    problem = pass_._problem()
    if problem is not None:
        raise PassError(problem, at=module)
    front = front_options(pass_)

    def stages(work: ir.Module) -> None:
        to_linalg(work, front)
        if pass_.stop_at != "linalg":
            lower(work)

    try:
        result = run_in_private_context(module, stages)
    except Exception as exc:  # ExecutionError and pass failures inside the stages
        report_failure(pass_, module, what, exc)
        return
    replace_contents(module, result)


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

    One error (``what: first line of the exception``) at the exception's source position,
    else at its first located diagnostic's (the module's own location is the file's
    line 0), else at ``module``; then each error diagnostic the exception carries at its
    original position.
    """
    where = getattr(exc, "location", None)  # ExecutionError's source position
    message = getattr(exc, "message", None) if where is not None else str(exc)
    first_line = message.splitlines()[0] if message else type(exc).__name__
    diagnostics = _diagnostics_of(exc)
    anchor = where or next((d.location for d in diagnostics if d.location is not None), None)
    pass_.emit_error(_at(module, anchor), f"{what}: {first_line}")
    for diag in diagnostics:
        pass_.emit_error(_at(module, diag.location), diag.message)


def _at(module: ir.Operation, where: SourceLocation | None) -> ir.Operation | ir.Location:
    if where is None:
        return module
    return ir.Location.file(where.filename, where.line, where.column, context=module.context)


def stage_passes(
    pass_: ModulePass, kind: str, stages: Sequence[tuple[str, Sequence[Step]]]
) -> list[str | ModulePass]:
    """``stages`` (name, steps) as what ``pass_.expand()`` returns.

    A Python step is named ``<class of pass_>.<stage>`` (``CpuPipeline.fuse``)
    or, when its name differs from the stage's, ``<class>.<stage>/<step>``
    (``<class>.<step>`` for the one stage "" of a pass without stages).
    An exception in a step becomes errors as from :func:`report_failure`
    (``<pass>: <kind> pipeline stage '<stage>' failed: ...``, as the stage
    functions of the back ends report it; ``kind`` is "CPU" or "GPU");
    the front stage ``linalg`` reports its exception as it is.
    """
    items: list[str | ModulePass] = []
    for stage, steps in stages:
        for step in steps:
            if isinstance(step, Passes):
                items.append(step.text)
                continue
            assert isinstance(step, Call)
            if not stage:  # a pass without stages
                where = step.name
            else:
                where = stage if step.name == stage else f"{stage}/{step.name}"
            items.append(
                StepPass(
                    f"{type(pass_).__name__}.{where}",
                    pass_.name,
                    step.fn,
                    on_error=_stage_failure(pass_.name, kind, stage),
                    before=lambda where=f"{kind} {stage}".rstrip(): report_stage(where),
                )
            )
    return items


def _stage_failure(what: str, kind: str, stage: str) -> Callable[[ModulePass, ir.Operation, Exception], None]:
    def report(step: ModulePass, module: ir.Operation, exc: Exception) -> None:
        if stage not in ("", "linalg") and not isinstance(exc, ExecutionError):
            wrapped = ExecutionError(f"{kind} pipeline stage '{stage}' failed: {exc}")
            wrapped.__cause__ = exc
            exc = wrapped
        report_failure(step, module, what, exc)

    return report


FRONT_OPTIONS = (
    Option("optimize", bool, True, "run dlvm-optimize before dlvm-to-linalg"),
    Option("checkpoint", str, "save-everything",
           "what gradients save for their reverse sweep (dlvm-checkpoint's policy)", choices=POLICIES),
    Option("checkpoint-budget", str, "", "residual memory budget for checkpoint=min-recompute (e.g. 1MiB)"),
)
"""The pipeline passes' options of the front half (``dlvm_mlir.compile``'s keywords)."""


def front_options(pass_: ModulePass) -> FrontOptions:
    """The :class:`FrontOptions` of a pipeline pass's :data:`FRONT_OPTIONS`."""
    return FrontOptions(optimize=pass_.optimize, checkpoint=pass_.checkpoint,
                        checkpoint_budget=pass_.checkpoint_budget)


def to_linalg(module: ir.Module, options: FrontOptions) -> None:
    """The front half of dlvm_mlir.compile on this module; linalg input passes through unchanged."""
    run_front_stages(module, options, linalg_passes_through=True)
