"""Software prefetches of a kernel's next reduction step.

A direct convolution's register tile reduces over the input channels in
steps (8 channels) around its tap loops; each step's first loads read rows
of channels it has not touched, one plane apart (4.6 KB at 34 x 34), which
the hardware prefetchers do not follow, and the tile waits on them.  This
step (after the vector schedules, on buffers) gives such a loop a
``memref.prefetch`` beside each of those loads, for the same element one
step ahead (the last step prefetches itself again): a step is a whole tap
nest of FMAs, time enough for the line to arrive.

A loop qualifies when it carries vector accumulators, is not inside another
such loop, has constant bounds and holds a loop of its own (the taps); a
load when its address moves by at least a cache line per step and reads a
new cache line in every iteration of the loop around it (a 3x3 kernel's
column taps re-read the same rows: prefetching those measured 0-2% slower
on 2 threads).  Where the loads to prefetch are many for the FMAs beside
them (more than one per :data:`FMAS_PER_PREFETCH`: a kernel gradient's
pixel loop, 10 loads for 24 FMAs), the block gets none: a prefetch takes a
load slot, and that loop measured slower with them.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, memref

from .linalg_rewrite import constant_index, defining_op

__all__ = ["PREFETCH", "prefetch_next_steps"]

#: prefetch a convolution kernel's next channel step (measured in docs/cpu.md, "Convolutions")
PREFETCH = True
#: fewest FMAs beside each prefetch in a loop body
FMAS_PER_PREFETCH = 8
#: bytes an address must move per step to be prefetched (a cache line)
LINE_BYTES = 64

_INDEX_OPS = ("affine.apply", "arith.addi", "arith.subi", "arith.muli")


def _depends(value: ir.Value, iv: ir.Value) -> bool:
    """Is ``value`` the induction variable or index arithmetic on it?"""
    if value == iv:
        return True
    op = defining_op(value)
    return op is not None and op.name in _INDEX_OPS and any(_depends(v, iv) for v in op.operands)


def _at_next(value: ir.Value, iv: ir.Value, next_iv: ir.Value, ip: ir.InsertionPoint) -> ir.Value:
    """``value`` with the induction variable replaced by ``next_iv`` (its index arithmetic
    cloned at ``ip``)."""
    if value == iv:
        return next_iv
    if not _depends(value, iv):
        return value
    op = defining_op(value)
    operands = [_at_next(v, iv, next_iv, ip) for v in op.operands]
    clone = op.clone(ip=ip)
    for i, v in enumerate(operands):
        clone.operands[i] = v
    return clone.results[0]


def _carries_vectors(op: ir.Operation) -> bool:
    return op.name == "scf.for" and any(isinstance(r.type, ir.VectorType) for r in op.results)


def _blocks(op: ir.Operation):
    for region in op.regions:
        for block in region.blocks:
            yield block


def _accumulator_loops(op: ir.Operation, found: list[ir.Operation]) -> None:
    """The outermost loops carrying vectors under ``op``."""
    for block in _blocks(op):
        for child in block.operations:
            child = child.operation
            if _carries_vectors(child):
                found.append(child)
            else:
                _accumulator_loops(child, found)


def _step_bytes(load: ir.Operation, iv: ir.Value, step: int) -> int:
    """How far ``load``'s address moves per step of ``iv`` (0 if unknown)."""
    memref_type = ir.MemRefType(load.operands[0].type)
    if not memref_type.has_static_shape:
        return 0
    strides, _ = memref_type.get_strides_and_offset()
    element = memref_type.element_type
    width = getattr(element, "width", 0) // 8
    moved = [s for s, index in zip(strides, load.operands[1:]) if _depends(index, iv)]
    if not width or any(s < 0 for s in moved):  # a dynamic stride
        return 0
    return sum(moved) * step * width


def _streams(load: ir.Operation, block: ir.Block) -> bool:
    """Does ``load`` read a new cache line in every iteration of the loop around it?"""
    loop = block.owner.operation
    step = constant_index(loop.operands[2]) if loop.name == "scf.for" else None
    return step is not None and _step_bytes(load, block.arguments[0], step) >= LINE_BYTES


def _loads_to_prefetch(block: ir.Block, iv: ir.Value, step: int) -> list[ir.Operation]:
    """The loads under ``block`` that get a prefetch for the next step of ``iv``."""
    ops = [op.operation for op in block.operations]
    loads = [op for op in ops if op.name == "vector.load" and _step_bytes(op, iv, step) >= LINE_BYTES
             and _streams(op, block)]
    fmas = sum(op.name == "vector.fma" for op in ops)
    found = loads if len(loads) * FMAS_PER_PREFETCH <= fmas else []
    for op in ops:
        for inner in _blocks(op):
            found += _loads_to_prefetch(inner, iv, step)
    return found


def prefetch_next_steps(module: ir.Module) -> int:
    """Add the prefetches (module docstring) to every qualifying loop; how many."""
    if not PREFETCH:
        return 0
    loops: list[ir.Operation] = []
    _accumulator_loops(module.operation, loops)
    count = 0
    for loop in loops:
        lower, upper, step = (constant_index(v) for v in loop.operands[:3])
        body = loop.regions[0].blocks[0]
        if None in (lower, upper, step) or upper - lower <= step:
            continue
        if not any(op.operation.name == "scf.for" for op in body.operations):
            continue
        iv = body.arguments[0]
        loads = _loads_to_prefetch(body, iv, step)
        if not loads:
            continue
        last = lower + (upper - lower - 1) // step * step
        with loop.location:
            ip = ir.InsertionPoint.at_block_begin(body)
            index = ir.IndexType.get()
            ahead = arith.AddIOp(iv, arith.ConstantOp(index, step, ip=ip).result, ip=ip).result
            next_iv = arith.MinSIOp(ahead, arith.ConstantOp(index, last, ip=ip).result, ip=ip).result
            for load in loads:
                at = ir.InsertionPoint(load)
                indices = [_at_next(value, iv, next_iv, at) for value in load.operands[1:]]
                memref.PrefetchOp(load.operands[0], indices, False, 3, True, ip=at)
        count += len(loads)
    return count
