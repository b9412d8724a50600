"""dlvm-layout-assignment: store elementwise and reduction results in the layout that cancels
their transposes.

The pass around :mod:`dlvm_mlir.backend.layout_assignment` (what a group is,
how its layout is chosen); the back ends run the same function inside their
fusion stage (``dlvm-kernel-fusion{layouts=true}``).  Input: linalg on tensors
(after ``dlvm-to-linalg``); named elementwise, transpose, broadcast and
reduce ops are generalized first, as the fusion does.

``report`` emits, for each function with groups rewritten, a remark
``@f: N groups laid out; elements transposed: B -> A``.
"""

from __future__ import annotations

from collections import defaultdict

from mlir import ir

from dlvm_mlir.backend.kernel_fusion import generalize_for_fusion, function_ops, symbol_name
from dlvm_mlir.backend.layout_assignment import GroupLayout, assign_layouts
from dlvm_mlir.passes import ModulePass, Option, PassError, emit_remark, register_pass
from dlvm_mlir.transforms._lowering import replace_contents, run_in_private_context

__all__ = ["LayoutAssignment"]


@register_pass
class LayoutAssignment(ModulePass):
    name = "dlvm-layout-assignment"
    summary = "Store elementwise/reduction results in the layout that cancels transposes (NHWC models around NCHW convolutions)"
    options = (
        Option("report", bool, False, "remark per function: groups laid out, elements transposed before and after"),
    )

    def run(self, module: ir.Operation) -> None:
        groups: list[GroupLayout] = []

        def work(copy: ir.Module) -> None:
            generalize_for_fusion(copy)
            groups.extend(assign_layouts(copy))

        try:
            result = run_in_private_context(module, work)
        except Exception as exc:  # a failing nested pass manager
            raise PassError(f"layout assignment failed: {str(exc).splitlines()[0]}", at=module) from exc
        replace_contents(module, result)
        if self.report:
            by_function: dict[str, list[GroupLayout]] = defaultdict(list)
            for group in groups:
                by_function[group.function].append(group)
            for fn in function_ops(module):
                found = by_function.get(symbol_name(fn))
                if found:
                    emit_remark(fn, f"@{symbol_name(fn)}: {len(found)} groups laid out "
                                    f"({sum(g.members for g in found)} ops); elements transposed: "
                                    f"{sum(g.before for g in found)} -> {sum(g.after for g in found)}")
