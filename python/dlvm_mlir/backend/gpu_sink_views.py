"""Views of a kernel's buffers are taken inside the kernel: one parameter per buffer.

After the ``map`` stage a launch reads the subviews (and reshapes) the host
took of its buffers; outlined, each view becomes a parameter of its own, a
memref descriptor of 3 + 2 x rank words (``ptxas`` takes 4,352 bytes of
parameters at most).  :func:`sink_views` clones each view op whose result a
launch uses into the launch, so a kernel reading several slices of one buffer
(a shifted difference, the taps of a stencil) takes the buffer once (and the
views' dynamic offsets and sizes, index values); the host's view ops that no
longer have uses go at the next canonicalization.  (A kernel reading many
distinct buffers is split before it gets here: :mod:`.gpu_wide_kernels`.)

:func:`captured_values` (the values a launch's body uses but does not define)
is shared with :mod:`.gpu_emulator`, which outlines each launch into a
function of its own.
"""

from __future__ import annotations

from mlir import ir

from .gpu_host import VIEWS
from .linalg_rewrite import defining_op, ops_where, rebind_operands

__all__ = ["captured_values", "sink_views"]


def captured_values(launch: ir.Operation) -> list[ir.Value]:
    """The values the body of ``launch`` uses but does not define, in order of first use."""
    defined: set[ir.Value] = set()
    operands: list[ir.Value] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        for region in op.regions:
            for block in region.blocks:
                defined.update(block.arguments)
        defined.update(op.results)
        operands.extend(op.operands)
        return ir.WalkResult.ADVANCE

    for region in launch.regions:
        for block in region.blocks:
            defined.update(block.arguments)
            for op in block.operations:
                op.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    return list(dict.fromkeys(v for v in operands if v not in defined))


def _view_depth(value: ir.Value) -> int:
    depth = 0
    owner = defining_op(value)
    while owner is not None and owner.name in VIEWS:
        depth += 1
        owner = defining_op(owner.operands[0])
    return depth


def sink_views(module: ir.Module) -> int:
    """Clone the view ops whose results launches use into the launches; the number cloned."""
    cloned = 0
    for launch in ops_where(module, lambda op: op.name == "gpu.launch"):
        body = launch.regions[0].blocks[0]
        while True:
            views = [v for v in captured_values(launch) if (owner := defining_op(v)) is not None and owner.name in VIEWS]
            if not views:
                break
            # a view of a view is cloned after the view it is of (both are used in the launch)
            views.sort(key=_view_depth)
            first = body.operations[0].operation
            mapping: dict[ir.Value, ir.Value] = {}
            for value in views:
                owner = defining_op(value)
                clone = owner.clone(ip=ir.InsertionPoint(first))
                mapping[value] = clone.results[ir.OpResult(value).result_number]
            cloned += len(views)
            rebind_operands(launch, mapping)
    return cloned
