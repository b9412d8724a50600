"""dlvm-kernel-fusion: fuse the loop nests of linalg-on-tensors code, and count them.

The pass around :mod:`dlvm_mlir.backend.kernel_fusion` (what a kernel is, what
fusion does, and the options are described there); the back ends call the
same functions directly.

``report`` emits, for each function that has kernels, a remark
``@f: N kernels (loop nests) -> M after fusion (before: ...; after: ...)``.

In a pass manager the pass is its steps (``expand``): the upstream passes of
the fusion, and Python steps named ``KernelFusion.<step>``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from mlir import ir

from dlvm_mlir.backend.kernel_fusion import (
    FusionOptions,
    describe_counts,
    function_kernels,
    function_ops,
    fuse_kernels,
    fusion_steps,
    kernel_counts_by_function,
    normalize_steps,
    symbol_name,
)
from dlvm_mlir.passes import Call, ModulePass, Option, PassError, Step, emit_remark, register_pass
from dlvm_mlir.transforms._lowering import replace_contents, run_in_private_context, stage_passes

__all__ = ["KernelFusion"]

@register_pass
class KernelFusion(ModulePass):
    name = "dlvm-kernel-fusion"
    summary = "Fuse elementwise producers, bias/activation epilogues and reductions into fewer linalg loop nests"
    options = (
        Option("reductions", bool, True, "fuse elementwise producers into reductions (generalizes linalg.reduce)"),
        Option("duplicate-producers", int, 0,
               "copy an elementwise producer with 2..N generic consumers into each (0: off)"),
        Option("layouts", bool, True,
               "store elementwise/reduction results in the layout that cancels transposes (dlvm-layout-assignment)"),
        Option("report", bool, False, "remark per function: kernel (loop nest) count before and after"),
    )

    def _problem(self) -> str | None:
        if self.duplicate_producers < 0 or self.duplicate_producers == 1:
            return f"duplicate-producers must be 0 (off) or at least 2, got {self.duplicate_producers}"
        return None

    def _options(self) -> FusionOptions:
        return FusionOptions(reductions=self.reductions, duplicate_producers=self.duplicate_producers,
                             layouts=self.layouts)

    def expand(self) -> Sequence[str | ModulePass] | None:
        """The fusion's steps, between a count and the report with ``report``
        (bad options: None, and ``run`` reports them)."""
        if self._problem() is not None:
            return None
        steps: list[Step] = normalize_steps() + fusion_steps(self._options())
        if self.report:
            before: dict[str, Counter[str]] = {}

            def count(module: ir.OpView) -> None:
                before.clear()
                before.update(kernel_counts_by_function(module.operation))

            def report(module: ir.OpView) -> None:
                _report(module.operation, before)

            steps = [Call("count", count), *steps, Call("report", report)]
        return stage_passes(self, "fusion", [("", steps)])

    def run(self, module: ir.Operation) -> None:
        """The fusion as one pass, on a copy in a private context (a pass
        manager runs the steps of ``expand`` instead)."""
        problem = self._problem()
        if problem is not None:
            raise PassError(problem, at=module)
        before = kernel_counts_by_function(module) if self.report else {}
        options = self._options()
        try:
            result = run_in_private_context(module, lambda work: fuse_kernels(work, options))
        except Exception as exc:  # a failing nested pass manager
            raise PassError(f"kernel fusion failed: {str(exc).splitlines()[0]}", at=module) from exc
        replace_contents(module, result)
        if self.report:
            _report(module, before)


def _report(module: ir.Operation, before: dict[str, Counter[str]]) -> None:
    for fn in function_ops(module):
        name = symbol_name(fn)
        after = function_kernels(fn)
        old = before.get(name, Counter())
        if not old and not after:
            continue
        emit_remark(
            fn,
            f"@{name}: {sum(old.values())} kernels (loop nests) -> {sum(after.values())} after fusion "
            f"(before: {describe_counts(old)}; after: {describe_counts(after)})",
        )
