"""dlvm-kernel-fusion: fuse the loop nests of linalg-on-tensors code, and count them.

The pass around :mod:`dlvm_mlir.backend.kernel_fusion` (what a kernel is, what
fusion does, and the options are described there); the back ends call the
same functions directly.

``report`` emits, for each function that has kernels, a remark
``@f: N kernels (loop nests) -> M after fusion (before: ...; after: ...)``.
"""

from __future__ import annotations

from collections import Counter

from mlir import ir

from dlvm_mlir.backend.kernel_fusion import (
    FusionOptions,
    describe_counts,
    function_kernels,
    function_ops,
    fuse_kernels,
    kernel_counts_by_function,
    symbol_name,
)
from dlvm_mlir.passes import ModulePass, Option, PassError, register_pass
from dlvm_mlir.transforms._lowering import replace_contents, run_in_private_context

__all__ = ["KernelFusion"]


@register_pass
class KernelFusion(ModulePass):
    name = "dlvm-kernel-fusion"
    summary = "Fuse elementwise producers, bias/activation epilogues and reductions into fewer linalg loop nests"
    options = (
        Option("reductions", bool, True, "fuse elementwise producers into reductions (generalizes linalg.reduce)"),
        Option("duplicate-producers", int, 0,
               "copy an elementwise producer with 2..N generic consumers into each (0: off)"),
        Option("report", bool, False, "remark per function: kernel (loop nest) count before and after"),
    )

    def run(self, module: ir.Operation) -> None:
        if self.duplicate_producers < 0 or self.duplicate_producers == 1:
            raise PassError(
                f"duplicate-producers must be 0 (off) or at least 2, got {self.duplicate_producers}",
                at=module,
            )
        before = kernel_counts_by_function(module) if self.report else {}
        options = FusionOptions(reductions=self.reductions, duplicate_producers=self.duplicate_producers)
        try:
            result = run_in_private_context(module, lambda work: fuse_kernels(work, options))
        except Exception as exc:  # a failing nested pass manager
            raise PassError(f"kernel fusion failed: {str(exc).splitlines()[0]}", at=module) from exc
        replace_contents(module, result)
        if not self.report:
            return
        for fn in function_ops(module):
            name = symbol_name(fn)
            after = function_kernels(fn)
            old = before.get(name, Counter())
            if not old and not after:
                continue
            self.emit_remark(
                fn,
                f"@{name}: {sum(old.values())} kernels (loop nests) -> {sum(after.values())} after fusion "
                f"(before: {describe_counts(old)}; after: {describe_counts(after)})",
            )
