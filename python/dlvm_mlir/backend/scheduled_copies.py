"""Pads and slice insertions as copies that the schedules vectorize and split over threads.

Bufferization turns a ``tensor.pad`` into a buffer, a loop nest storing the
padding value into all of it and a loop nest copying the source into its
interior, and a ``tensor.insert_slice`` of a value no linalg op computed in
place (a function argument, a reshape) into a ``memref.copy``, lowered to
scalar loops when either side is strided: all on the calling thread.  A
convolution pads its input (and AD pads cotangents for input gradients and
inserts phases for strided ones).  Here, on tensors, each pad with static
padding and a padding value defined outside its body, of a value no linalg
op computed, becomes

    %f = linalg.fill ins(%value) outs(tensor.empty(padded shape))
    %r = tensor.insert_slice %source into %f [low] [source shape] [1]

and each such insertion ``tensor.insert_slice %source into %dest`` becomes

    %c = linalg.copy ins(%source) outs(tensor.extract_slice %dest [offsets] [sizes] [strides])
    %r = tensor.insert_slice %c into %dest [offsets] [sizes] [strides]

which bufferizes in place (the copy writes into the destination's buffer) and
whose fill and copy are scheduled like any other op.

An insertion of a reshape that only adds unit dimensions inserts the reshaped
value itself (rank-reducing), so that empty-tensor elimination computes that
value in the destination (:func:`_insertions_without_unit_reshapes`).

The pad of a value a linalg op computes is left alone: as an insertion, that
op would write into the padded buffer's interior itself (no copy at all), and
in the CNN training step of ``benchmarks/cnn_step.py`` that measured 4% slower
than the copy.  Measured on Nov 27 (batch 32, 2 threads, each variant compiled
in one process and timed in turns): depthwise 3x3 layer forward 0.73 -> 0.50
ms, input gradient 0.77 -> 0.51, kernel gradient 0.86 -> 0.60; 3x3 layers and
the stride-2 layer 2-6% faster; 1x1 unchanged; the CNN step unchanged.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import linalg, tensor

from .linalg_rewrite import defining_op, ops_where

__all__ = ["scheduled_copies"]


def _computed_by_linalg(value: ir.Value) -> bool:
    op = defining_op(value)
    return op is not None and op.name.startswith("linalg.")


def _padding_value(pad: ir.Operation) -> ir.Value | None:
    """The value a static ``tensor.pad`` of a value no linalg op computed yields, if it is
    defined outside the pad."""
    if len(pad.operands) != 1 or _computed_by_linalg(pad.operands[0]):  # dynamic padding, or a linalg result
        return None
    source = ir.RankedTensorType(pad.operands[0].type)
    result = ir.RankedTensorType(pad.results[0].type)
    if not (source.has_static_shape and result.has_static_shape):
        return None
    block = pad.regions[0].blocks[0]
    operations = list(block.operations)
    if len(operations) != 1:
        return None
    value = operations[0].operands[0]
    owner = value.owner
    if isinstance(owner, ir.Block) or (hasattr(owner, "operation") and owner.operation.parent == pad):
        return None
    return value


def _pad_as_insertion(pad: ir.Operation, value: ir.Value) -> None:
    source = pad.operands[0]
    result_type = ir.RankedTensorType(pad.results[0].type)
    low = list(ir.DenseI64ArrayAttr(pad.attributes["static_low"]))
    sizes = list(ir.RankedTensorType(source.type).shape)
    with ir.InsertionPoint(pad), pad.location:
        empty = tensor.EmptyOp(list(result_type.shape), result_type.element_type).result
        filled = linalg.fill(value, outs=[empty])
        padded = tensor.insert_slice(source, filled, [], [], [], low, sizes, [1] * len(sizes))
    pad.results[0].replace_all_uses_with(padded)
    pad.erase()


def _copied_in(insert: ir.Operation) -> bool:
    """Would bufferization copy ``insert``'s source into its destination: a static source
    that no linalg op (whose result bufferization can place in the destination) computed?"""
    if insert.name != "tensor.insert_slice" or len(insert.operands) != 2:  # dynamic offsets or sizes
        return False
    source = insert.operands[0]
    if not (isinstance(source.type, ir.RankedTensorType) and ir.RankedTensorType(source.type).has_static_shape):
        return False
    return not _computed_by_linalg(source)


def _insertion_as_copy(insert: ir.Operation) -> None:
    source, dest = insert.operands[0], insert.operands[1]
    static = [list(ir.DenseI64ArrayAttr(insert.attributes[name])) for name in
              ("static_offsets", "static_sizes", "static_strides")]
    with ir.InsertionPoint(insert), insert.location:
        window = tensor.extract_slice(source.type, dest, [], [], [], *static)
        copied = linalg.copy(source, outs=[window])
    insert.operands[0] = copied


def _merge_pads(pads: list[tuple[ir.Operation, ir.Value]]) -> list[tuple[ir.Operation, ir.Value]]:
    """Pads of one value in one block with the same low padding and padding value as one pad
    (the largest high padding of each dimension); the others become slices of it.  AD pads
    the cotangent of a strided convolution once per phase, by 0 or 1 at the end of each
    dimension: one copy instead of three at stride 2."""
    groups: dict[tuple, list[tuple[ir.Operation, ir.Value]]] = {}
    for pad, value in pads:
        key = (pad.operands[0], value, tuple(ir.DenseI64ArrayAttr(pad.attributes["static_low"])))
        groups.setdefault(key, []).append((pad, value))
    merged = []
    for group in groups.values():
        first, value = group[0]
        if len(group) == 1 or any(p.parent != first.parent for p, _ in group):
            merged.extend(group)
            continue
        high = [max(dims) for dims in zip(*(ir.DenseI64ArrayAttr(p.attributes["static_high"]) for p, _ in group))]
        source = ir.RankedTensorType(first.operands[0].type)
        low = list(ir.DenseI64ArrayAttr(first.attributes["static_low"]))
        shape = [n + lo + hi for n, lo, hi in zip(source.shape, low, high)]
        with ir.InsertionPoint(first), first.location:
            whole = first.clone()
            whole.attributes["static_high"] = ir.DenseI64ArrayAttr.get(high)
            whole.results[0].set_type(ir.RankedTensorType.get(shape, source.element_type))
        for pad, _ in group:
            sizes = list(ir.RankedTensorType(pad.results[0].type).shape)
            with ir.InsertionPoint(pad), pad.location:
                part = tensor.extract_slice(pad.results[0].type, whole.results[0], [], [], [], [0] * len(sizes), sizes,
                                            [1] * len(sizes))
            pad.results[0].replace_all_uses_with(part)
            pad.erase()
        merged.append((whole, value))
    return merged


def _unit_dims_added(op: ir.Operation | None) -> bool:
    """Is ``op`` a ``tensor.expand_shape`` that only adds unit dimensions?"""
    if op is None or op.name != "tensor.expand_shape" or len(op.operands) != 1:
        return False
    source, result = (ir.RankedTensorType(v.type) for v in (op.operands[0], op.results[0]))
    return (source.has_static_shape and result.has_static_shape
            and [n for n in result.shape if n != 1] == [n for n in source.shape if n != 1])


def _insertions_without_unit_reshapes(module: ir.Module) -> int:
    """``insert_slice(expand_shape(%v) [unit dims added]) into %d`` as the rank-reducing
    ``insert_slice %v into %d``: AD stacks a strided convolution's phases that way, and
    through the reshape neither empty-tensor elimination (which would compute ``%v`` in
    the destination) nor bufferization sees that ``%v`` can be written in place, so each
    phase was copied (stride-2 input gradient: four copies of 4 MB)."""
    inserts = ops_where(module, lambda op: op.name == "tensor.insert_slice" and len(op.operands) == 2
                        and _unit_dims_added(defining_op(op.operands[0])))
    for insert in inserts:
        insert.operands[0] = defining_op(insert.operands[0]).operands[0]
    return len(inserts)


def scheduled_copies(module: ir.Module) -> int:
    """Rewrite the static pads and the copying slice insertions of ``module``; the count."""
    with module.context:
        unshaped = _insertions_without_unit_reshapes(module)
        pads = [(pad, value) for pad in ops_where(module, lambda op: op.name == "tensor.pad")
                if (value := _padding_value(pad)) is not None]
        for pad, value in _merge_pads(pads):
            _pad_as_insertion(pad, value)
        inserts = ops_where(module, _copied_in)
        for insert in inserts:
            _insertion_as_copy(insert)
    return unshaped + len(pads) + len(inserts)
