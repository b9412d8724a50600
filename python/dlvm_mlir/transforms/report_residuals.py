"""dlvm-report-residuals: one remark per residual of each gradient function, and a total.

For every function with a reverse sweep (see :mod:`dlvm_mlir.ad.residuals`):
a remark at the source location of each forward value the reverse sweep
reads (``saved``, with its type and bytes) and of each value recomputed by
``dlvm-checkpoint`` (``recomputed``, with its flops), then a remark at the
function with the totals. The IR is not changed.

    dlvm-opt --dlvm-differentiate --dlvm-checkpoint=policy=save-dots \\
        --dlvm-report-residuals mlp.mlir
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import func

from dlvm_mlir.ad.residuals import Residual, Sweeps, residuals
from dlvm_mlir.passes import ModulePass, register_pass

__all__ = ["ReportResiduals", "summary"]


def summary(name: str, found: list[Residual]) -> str:
    """The total line of one function's report."""
    saved = [r for r in found if r.status == "saved"]
    recomputed = [r for r in found if r.status == "recomputed"]
    saved_bytes = sum(r.bytes or 0 for r in saved)
    unknown = sum(r.bytes is None for r in saved)
    text = f"@{name}: {len(saved)} saved values, {saved_bytes} bytes"
    if unknown:
        text += f" (+{unknown} of dynamic size)"
    flops = sum(r.flops for r in recomputed)
    return text + f"; {len(recomputed)} recomputed values, {flops} flops"


@register_pass
class ReportResiduals(ModulePass):
    name = "dlvm-report-residuals"
    summary = "Remark on each value a gradient function saves for (or recomputes in) its reverse sweep"

    def run(self, module: ir.Operation) -> None:
        for op in module.regions[0].blocks[0].operations:
            if not isinstance(op.opview, func.FuncOp) or not len(op.regions[0].blocks):
                continue
            if not Sweeps(op).has_reverse_sweep:
                continue
            found = residuals(op)
            for residual in found:
                self.emit_remark(residual.location, residual.describe())
            name = ir.StringAttr(op.attributes["sym_name"]).value
            self.emit_remark(op, summary(name, found))
