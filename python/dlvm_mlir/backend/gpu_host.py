"""Host side of the GPU pipeline: where every buffer lives and how data moves.

After :mod:`dlvm_mlir.backend.gpu` has turned every linalg op into a
``gpu.launch``, the host functions still allocate with ``memref.alloc``,
read constants with ``memref.get_global`` and may read or write single
elements (``tensor.extract`` of a loop condition, ``tensor.from_elements``).
The rewrite here makes the host code correct for a discrete GPU:

* every buffer the host code allocates is device memory: ``memref.alloc``
  and ``memref.alloca`` become ``gpu.alloc``, freed with ``gpu.dealloc`` at
  the end of the block that allocated it (a buffer that escapes the block,
  e.g. one yielded by a loop, is not freed: a known leak, reported);
* constants (``memref.get_global``) are copied to device buffers where used;
* a public entry point receives host (numpy) buffers: each input is copied
  to a device buffer on entry (``gpu.memcpy``), each result is computed in a
  device buffer and copied back before returning;
* a scalar ``memref.load``/``memref.store`` on the host goes through a
  one-element host buffer and a ``gpu.memcpy`` of that element;
* any linalg op still on the host runs as a one-thread kernel.

Private functions (recursion, calls that were not inlined) take and return
device buffers only, like the code that calls them.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from mlir import ir
from mlir.dialects import func as func_d
from mlir.dialects import gpu as gpu_d
from mlir.dialects import memref as memref_d

from .linalg_rewrite import defining_op

__all__ = ["HostReport", "legalize_host", "wrap_in_launch", "host_operations"]

_VIEW_OPS = (
    "memref.subview",
    "memref.expand_shape",
    "memref.collapse_shape",
    "memref.cast",
    "memref.reinterpret_cast",
    "memref.reshape",
    "memref.transpose",
    "memref.view",
)
_TERMINATORS = ("func.return", "scf.yield", "scf.condition", "cf.br", "cf.cond_br", "cf.switch", "scf.reduce.return")


@dataclass
class HostReport:
    """What the host rewrite did."""

    device_allocations: int = 0
    leaked_allocations: int = 0
    constants_copied: int = 0
    staged_loads: int = 0
    staged_stores: int = 0
    serial_kernels: int = 0
    entry_copies: int = 0
    notes: list[str] = field(default_factory=list)


def inside_launch(op: ir.Operation) -> bool:
    """Whether ``op`` is nested in a ``gpu.launch`` or a kernel."""
    parent = op.parent
    while parent is not None:
        if parent.name in ("gpu.launch", "gpu.module", "gpu.func"):
            return True
        if parent.name == "func.func":
            return False
        parent = parent.parent
    return False


def host_operations(fn: ir.Operation) -> list[ir.Operation]:
    """Ops of ``fn`` (pre-order) that run on the host: those outside any ``gpu.launch``."""
    found: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == "gpu.launch":
            return ir.WalkResult.SKIP
        if op != fn:
            found.append(op)
        return ir.WalkResult.ADVANCE

    fn.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found


def wrap_in_launch(
    op: ir.Operation, grid: tuple[int, int, int] = (1, 1, 1), block: tuple[int, int, int] = (1, 1, 1)
) -> ir.Operation:
    """Move ``op`` into a new ``gpu.launch`` (one thread by default) at its place; return the launch."""
    with ir.InsertionPoint(op), op.location:
        launch = gpu_d.LaunchOp(grid, block)
        with ir.InsertionPoint(launch.regions[0].blocks[0]):
            terminator = gpu_d.TerminatorOp()
    op.move_before(terminator.operation)
    return launch.operation


def _is_identity(memref_type: ir.MemRefType) -> bool:
    layout = memref_type.layout
    return isinstance(layout, ir.AffineMapAttr) and layout.value == ir.AffineMap.get_identity(memref_type.rank)


def _escapes(value: ir.Value) -> bool:
    """Whether ``value`` (or a view of it) reaches a terminator (leaves its block)."""
    pending = [value]
    while pending:
        current = pending.pop()
        for use in current.uses:
            user = use.owner
            name = user.name if isinstance(user, ir.Operation) else user.operation.name
            if name in _TERMINATORS:
                return True
            if name in _VIEW_OPS:
                operation = user if isinstance(user, ir.Operation) else user.operation
                pending.extend(operation.results)
    return False


def _operation(value: object) -> ir.Operation:
    """The operation of an op view, an op, or the defining op of a value."""
    if isinstance(value, ir.Operation):
        return value
    if isinstance(value, ir.OpView):
        return value.operation
    owner = value.owner  # type: ignore[attr-defined]
    return owner if isinstance(owner, ir.Operation) else owner.operation


def _terminator(block: ir.Block) -> ir.Operation:
    ops = list(block.operations)
    return ops[-1].operation


def _device_alloc(memref_type: ir.MemRefType) -> ir.Value:
    return gpu_d.alloc(memref_type, None, [], [], [])


def _free_at_end(value: ir.Value, block: ir.Block, report: HostReport) -> None:
    if _escapes(value):
        report.leaked_allocations += 1
        return
    with ir.InsertionPoint(_terminator(block)), value.location:
        gpu_d.dealloc(None, [], value)


def stays_on_host(alloc: ir.Operation) -> bool:
    """Whether the host stage keeps the allocation ``alloc`` (``memref.alloc``/``alloca``) in
    host memory: dynamic sizes, a layout, a memory space; every other one moves to the device."""
    memref_type = ir.MemRefType(alloc.results[0].type)
    return bool(len(alloc.operands)) or not _is_identity(memref_type) or memref_type.memory_space is not None


def _rewrite_allocations(ops: list[ir.Operation], report: HostReport) -> None:
    for op in ops:
        if op.name not in ("memref.alloc", "memref.alloca"):
            continue
        memref_type = ir.MemRefType(op.results[0].type)
        if stays_on_host(op):
            report.notes.append(f"kept a host allocation of {memref_type}")
            continue
        block = op.block
        with ir.InsertionPoint(op), op.location:
            device = _device_alloc(memref_type)
        op.results[0].replace_all_uses_with(device)
        op.erase()
        _free_at_end(device, block, report)
        report.device_allocations += 1


def _free_loop_carried_buffers(fn: ir.Operation, report: HostReport) -> None:
    """Free the buffers a host ``scf.for`` replaces each iteration.

    The common shape after bufferization: an iter_arg starts as a buffer
    allocated before the loop and each iteration yields a fresh allocation.
    The buffer coming in is freed at the end of each iteration (after the
    kernels that read it, in stream order), the loop's result after the
    loop, and the initial buffer is no longer freed separately.
    """
    loops: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == "gpu.launch":
            return ir.WalkResult.SKIP
        if op.name == "scf.for":
            loops.append(op)
        return ir.WalkResult.ADVANCE

    fn.walk(visit, ir.WalkOrder.POST_ORDER)
    for loop in loops:
        body = loop.regions[0].blocks[0]
        yield_op = _terminator(body)
        n_control = 3  # lower bound, upper bound, step
        inits = list(loop.operands)[n_control:]
        for init, carried, yielded, result in zip(inits, list(body.arguments)[1:], yield_op.operands, loop.results):
            if not isinstance(init.type, ir.MemRefType):
                continue
            init_op = defining_op(init)
            new_op = defining_op(yielded)
            if init_op is None or new_op is None or init_op.name != "gpu.alloc" or new_op.name != "gpu.alloc":
                continue
            if new_op.block != body or init_op.block != loop.block:
                continue
            frees = [use.owner for use in init.uses if _name(use.owner) == "gpu.dealloc"]
            others = [use.owner for use in init.uses if _name(use.owner) != "gpu.dealloc"]
            if any(_as_op(user).block == loop.block and loop.is_before_in_block(_as_op(user)) for user in others):
                continue  # the initial buffer is still read after the loop
            if _escapes(carried) or _escapes_except(result, yield_op):
                continue
            for free in frees:
                _as_op(free).erase()
            with ir.InsertionPoint(yield_op), loop.location:
                gpu_d.dealloc(None, [], carried)
            _free_at_end(result, loop.block, report)
            report.leaked_allocations = max(0, report.leaked_allocations - 1)


def _name(owner: object) -> str:
    return _as_op(owner).name


def _as_op(owner: object) -> ir.Operation:
    return owner if isinstance(owner, ir.Operation) else owner.operation  # type: ignore[attr-defined]


VIEWS = ("memref.subview", "memref.expand_shape", "memref.collapse_shape", "memref.cast", "memref.reinterpret_cast")


def root_buffer(value: ir.Value) -> ir.Value:
    """The allocation or argument whose memory the view ``value`` reaches: two accesses whose
    roots differ touch different buffers (the host copies every entry argument into a
    buffer of its own)."""
    owner = defining_op(value)
    while owner is not None and owner.name in VIEWS:
        value = owner.operands[0]
        owner = defining_op(value)
    return value


def _escapes_except(value: ir.Value, allowed: ir.Operation) -> bool:
    for use in value.uses:
        user = _as_op(use.owner)
        if user.name in _TERMINATORS and user != allowed:
            return True
    return False


def _rewrite_globals(ops: list[ir.Operation], report: HostReport) -> None:
    for op in ops:
        if op.name != "memref.get_global":
            continue
        host = op.results[0]
        memref_type = ir.MemRefType(host.type)
        with ir.InsertionPoint.after(op), op.location:
            device = _device_alloc(memref_type)
            copy = gpu_d.memcpy(None, [], device, host)
        host.replace_all_uses_except(device, _operation(copy))
        _free_at_end(device, op.block, report)
        report.constants_copied += 1


def _element_helper(kind: str, memref_type: ir.MemRefType) -> tuple[str, str]:
    """Name and text of a private helper moving one element between host and device.

    A one-thread kernel copies the element between the (possibly strided)
    device buffer and a one-element device buffer, which a ``gpu.memcpy``
    (contiguous buffers only) moves to or from a one-element host buffer.
    i1 travels as i8.
    """
    element = str(memref_type.element_type)
    staged = "i8" if element == "i1" else element
    rank = memref_type.rank
    mtype = str(memref_type)
    key = f"{kind}:{mtype}"
    name = f"__dlvm_host_{kind}_{hashlib.sha1(key.encode()).hexdigest()[:10]}"
    idx_args = "".join(f", %i{d}: index" for d in range(rank))
    idx = ", ".join(f"%i{d}" for d in range(rank))
    one = f"memref<1x{staged}>"
    if kind == "load":
        header = f"func.func private @{name}(%buf: {mtype}{idx_args}) -> {element}"
    else:
        header = f"func.func private @{name}(%value: {element}, %buf: {mtype}{idx_args})"
    launch = (
        "  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)"
        " threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {"
    )
    # not inlined: its stack slot is released on return, even when called in a loop
    lines = [header + " attributes {no_inline} {", "  %c0 = arith.constant 0 : index",
             "  %c1 = arith.constant 1 : index", f"  %dev = gpu.alloc() : {one}",
             f"  %host = memref.alloca() : {one}"]
    if kind == "load":
        lines += [launch, f"    %e = memref.load %buf[{idx}] : {mtype}"]
        if staged != element:
            lines += [f"    %w = arith.extui %e : {element} to {staged}", f"    memref.store %w, %dev[%c0] : {one}"]
        else:
            lines.append(f"    memref.store %e, %dev[%c0] : {one}")
        lines += ["    gpu.terminator", "  }", f"  gpu.memcpy %host, %dev : {one}, {one}",
                  f"  gpu.dealloc %dev : {one}", f"  %h = memref.load %host[%c0] : {one}"]
        if staged != element:
            lines += [f"  %v = arith.trunci %h : {staged} to {element}", f"  return %v : {element}"]
        else:
            lines.append(f"  return %h : {element}")
    else:
        if staged != element:
            lines += [f"  %w = arith.extui %value : {element} to {staged}", f"  memref.store %w, %host[%c0] : {one}"]
        else:
            lines.append(f"  memref.store %value, %host[%c0] : {one}")
        lines += [f"  gpu.memcpy %dev, %host : {one}, {one}", launch, f"    %h = memref.load %dev[%c0] : {one}"]
        if staged != element:
            lines += [f"    %e = arith.trunci %h : {staged} to {element}", f"    memref.store %e, %buf[{idx}] : {mtype}"]
        else:
            lines.append(f"    memref.store %h, %buf[{idx}] : {mtype}")
        lines += ["    gpu.terminator", "  }", f"  gpu.dealloc %dev : {one}", "  return"]
    lines.append("}")
    return name, "\n".join(lines)


def _stage_scalar_accesses(
    module: ir.Module, ops: list[ir.Operation], device_values: set[int] | None, report: HostReport
) -> list[str]:
    """Route host loads/stores through one-element host buffers; returns helper texts to add."""
    helpers: dict[str, str] = {}
    for op in ops:
        if op.name not in ("memref.load", "memref.store"):
            continue
        is_load = op.name == "memref.load"
        buf = op.operands[0] if is_load else op.operands[1]
        memref_type = ir.MemRefType(buf.type)
        if memref_type.memory_space is not None:
            continue
        name, text = _element_helper("load" if is_load else "store", memref_type)
        helpers[name] = text
        indices = list(op.operands[1:] if is_load else op.operands[2:])
        with ir.InsertionPoint(op), op.location:
            if is_load:
                call = func_d.CallOp([memref_type.element_type], ir.FlatSymbolRefAttr.get(name), [buf, *indices])
                op.results[0].replace_all_uses_with(call.results[0])
                report.staged_loads += 1
            else:
                func_d.CallOp([], ir.FlatSymbolRefAttr.get(name), [op.operands[0], buf, *indices])
                report.staged_stores += 1
        op.erase()
    return list(helpers.values())


def _copy_entry_arguments(fn: func_d.FuncOp, n_outputs: int, report: HostReport) -> None:
    """Inputs to device on entry, results back to the host before each return."""
    block = fn.regions[0].blocks[0]
    args = list(block.arguments)
    memref_args = [(i, a) for i, a in enumerate(args) if isinstance(a.type, ir.MemRefType)]
    first_output = len(args) - n_outputs
    first_op = list(block.operations)[0].operation
    returns: list[ir.Operation] = []

    def collect(op: ir.Operation) -> ir.WalkResult:
        if op.name == "func.return":
            returns.append(op)
        return ir.WalkResult.ADVANCE

    fn.operation.walk(collect, ir.WalkOrder.PRE_ORDER)
    devices: list[tuple[ir.Value, ir.Value, bool]] = []
    for i, arg in memref_args:
        memref_type = ir.MemRefType(arg.type)
        is_output = i >= first_output
        with ir.InsertionPoint(first_op), fn.location:
            device = _device_alloc(ir.MemRefType.get(memref_type.shape, memref_type.element_type))
            keep = None
            if not is_output:
                keep = gpu_d.memcpy(None, [], device, arg)
        arg.replace_all_uses_except(device, _operation(keep if keep is not None else device))
        devices.append((arg, device, is_output))
        report.entry_copies += 1
    for ret in returns:
        with ir.InsertionPoint(ret), ret.location:
            for arg, device, is_output in devices:
                if is_output:
                    gpu_d.memcpy(None, [], arg, device)
            for _, device, _ in devices:
                gpu_d.dealloc(None, [], device)


def legalize_host(module: ir.Module, outputs: dict[str, int]) -> HostReport:
    """Rewrite the host functions of ``module`` (see the module docstring).

    ``outputs`` maps each public entry point to its number of out-parameters
    (the trailing arguments after ``buffer-results-to-out-params``).
    """
    report = HostReport()
    helpers: list[str] = []
    with module.context, ir.Location.unknown():
        functions = [op.operation for op in module.body.operations if op.operation.name == "func.func"]
        for fn in functions:
            if len(fn.regions[0].blocks) == 0:
                continue
            ops = host_operations(fn)
            for op in ops:
                if (op.name.startswith("linalg.") and op.name != "linalg.yield") or op.name == "memref.copy":
                    if not inside_launch(op):
                        wrap_in_launch(op)
                        report.serial_kernels += 1
            ops = host_operations(fn)
            _rewrite_allocations(ops, report)
            _free_loop_carried_buffers(fn, report)
            ops = host_operations(fn)
            _rewrite_globals(ops, report)
            ops = host_operations(fn)
            helpers += _stage_scalar_accesses(module, ops, None, report)
            name = ir.StringAttr(fn.attributes["sym_name"]).value
            if name in outputs:
                _copy_entry_arguments(fn.opview, outputs[name], report)
        seen = set()
        for text in helpers:
            if text in seen:
                continue
            seen.add(text)
            parsed = ir.Module.parse(text)
            for op in list(parsed.body.operations):
                op.operation.detach_from_parent()
                module.body.append(op)
    return report
