"""Linalg ops scheduled in isolation: outlined into kernels, deduplicated, inlined back.

A transform schedule matches its op, tiles it and canonicalizes the function
around it. Applied to the op in place, every schedule walks and canonicalizes
the whole function, so scheduling a function of N ops cost O(N^2): 11 s of a
transformer block's 14 s CPU pipeline, and an LSTM unrolled over 64 steps
did not finish in 10 minutes (Nov 2026).

So each op (with the ``linalg.fill`` init scheduled with it) is first moved
into a private function of its own, a *kernel*, and a ``func.call`` takes its
place. Values the op reads from outside (operands, and values its regions
capture) become the kernel's arguments, except ``arith.constant``s, which are
cloned in so the schedules and the vectorizer still see them. Kernels whose
text is the same (an unrolled loop makes many) are merged: one schedule
serves them all. A schedule runs with the kernel as its payload root, so its
cost is the op's own. Then every call is inlined back, which clones each
scheduled body into its call sites, and the kernels are dropped: the rest of
the pipeline sees the same IR as if each op had been scheduled in place.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from mlir import ir
from mlir.dialects import func as func_d
from mlir.passmanager import PassManager

from dlvm_mlir.passes import run_passes

__all__ = ["Kernel", "inline_kernels", "outline_kernels", "KERNEL_PREFIX"]

KERNEL_PREFIX = "__dlvm_kernel_"


@dataclass
class Kernel:
    """A kernel function and the schedule ids of the ops it holds (its
    duplicates' ops included)."""

    function: ir.Operation
    #: schedule id of the kernel's own main op
    schedule_id: int
    #: the call that replaced its ops (the first, for a kernel that others merged into)
    call: ir.Operation | None = None
    #: schedule ids of the main ops of the kernels merged into this one
    duplicates: list[int] = field(default_factory=list)


def _is_within(op: ir.Operation, ancestors: set[ir.Operation]) -> bool:
    current: ir.Operation | None = op
    while current is not None:
        if current in ancestors:
            return True
        current = current.parent
    return False


def _defining_op(value: ir.Value) -> ir.Operation:
    owner = value.owner
    return owner.owner if isinstance(owner, ir.Block) else owner.operation


def _reads_from_outside(group: list[ir.Operation]) -> list[ir.Value]:
    """Values used by the ops of ``group`` (or nested in them) that are defined elsewhere, in first-use order."""
    members = set(group)
    found: list[ir.Value] = []
    seen: set[ir.Value] = set()

    def note(op: ir.Operation) -> None:
        for value in op.operands:
            if value not in seen and not _is_within(_defining_op(value), members):
                seen.add(value)
                found.append(value)

    def visit(op: ir.Operation) -> ir.WalkResult:
        note(op)
        return ir.WalkResult.ADVANCE

    for op in group:
        op.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found


def _constant_producer(value: ir.Value) -> ir.Operation | None:
    if isinstance(value.owner, ir.Block):
        return None
    op = value.owner.operation
    return op if op.name == "arith.constant" else None


def _outline(group: list[ir.Operation], name: str, before: ir.Operation) -> tuple[ir.Operation, ir.Operation]:
    """Move ``group`` (in order; the last op is the main one, whose results
    leave the kernel) into a new private function ``name`` placed before
    ``before``, and put a call in the main op's place; (function, call)."""
    main = group[-1]
    outside = _reads_from_outside(group)
    arguments = [v for v in outside if _constant_producer(v) is None]
    result_types = [r.type for r in main.results]
    with ir.InsertionPoint(before), main.location:
        function = func_d.FuncOp(name, ([v.type for v in arguments], result_types), visibility="private")
        block = function.add_entry_block()
    replacement: dict[ir.Value, ir.Value] = dict(zip(arguments, block.arguments))
    with ir.InsertionPoint(block):
        for value in outside:
            if value not in replacement:
                replacement[value] = _constant_producer(value).clone().results[0]
    with ir.InsertionPoint(main), main.location:
        call = func_d.CallOp(result_types, ir.FlatSymbolRefAttr.get(name), arguments)
    for old, new in zip(main.results, call.results):
        old.replace_all_uses_with(new)
    for op in group:
        op.detach_from_parent()
        block.append(op)
    with ir.InsertionPoint(block), main.location:
        func_d.ReturnOp(list(main.results))
    # the moved ops (and ops nested in them) still read the outside values
    def remap(op: ir.Operation) -> ir.WalkResult:
        for index, value in enumerate(op.operands):
            if value in replacement:
                op.operands[index] = replacement[value]
        return ir.WalkResult.ADVANCE

    for op in group:
        op.walk(remap, ir.WalkOrder.PRE_ORDER)
    return function.operation, call.operation


_IDS = re.compile(r"dlvm\.schedule_(?:id|init|epilogue) = \d+ : i64")


def _signature(function: ir.Operation) -> str:
    """The kernel's text without its name and schedule ids: equal for equal kernels."""
    name = ir.StringAttr(function.attributes["sym_name"]).value
    # local scope: printing the function alone, not naming values module-wide
    text = function.get_asm(use_local_scope=True)
    return _IDS.sub("", text.replace(f"@{name}(", "@(", 1))


def outline_kernels(module: ir.Module, groups: dict[int, list[ir.Operation]]) -> list[Kernel]:
    """Outline each group (schedule id -> its ops, main op last) into a kernel;
    merge kernels with the same text; the distinct kernels, in order."""
    kernels: list[Kernel] = []
    by_text: dict[str, Kernel] = {}
    with module.context:
        for schedule_id, group in groups.items():
            parent = group[-1].parent
            while parent.parent is not None and parent.parent.name != "builtin.module":
                parent = parent.parent
            function, call = _outline(group, f"{KERNEL_PREFIX}{schedule_id}", parent)
            text = _signature(function)
            same = by_text.get(text)
            if same is None:
                kernel = Kernel(function, schedule_id, call)
                by_text[text] = kernel
                kernels.append(kernel)
                continue
            same.duplicates.append(schedule_id)
            call.attributes["callee"] = ir.FlatSymbolRefAttr.get(ir.StringAttr(same.function.attributes["sym_name"]).value)
            function.erase()
    return kernels


def inline_kernels(module: ir.Module, kernels: list[Kernel]) -> None:
    """Inline the kernel calls (no canonicalization around them) and drop the
    kernels, except those of ``kernels`` called from several places: they stay
    functions (``no_inline``), compiled once."""
    with module.context:
        for kernel in kernels:
            if kernel.duplicates:
                kernel.function.attributes["no_inline"] = ir.UnitAttr.get()
        _affine_as_arith(module)
    run_passes(module, "inline{default-pipeline=''},symbol-dce")


def _affine_as_arith(module: ir.Module) -> None:
    """Lower the affine ops of the kernels called inside loops to ``arith`` (``lower-affine``).

    MLIR's inliner inlines affine ops only into affine scopes (a function body) and affine
    loops: a kernel whose schedule made an ``affine.apply`` (a tile's offset) stayed a call
    inside an ``scf.for`` (a ``lax.scan`` step, a user loop), each call passing its operands
    as memref descriptors."""
    nested: set[str] = set()

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == "func.call" and op.parent.name != "func.func":
            nested.add(ir.FlatSymbolRefAttr(op.attributes["callee"]).value)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    functions = [op.operation for op in module.body.operations if op.operation.name == "func.func"
                 and ir.StringAttr(op.operation.attributes["sym_name"]).value in nested]
    if functions:
        lower = PassManager.parse("func.func(lower-affine)")
        for function in functions:
            lower.run(function)
