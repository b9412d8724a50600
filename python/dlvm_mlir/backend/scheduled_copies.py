"""Pads and slice insertions as copies that the schedules vectorize and split over threads,
or as values computed in place.

Bufferization turns a ``tensor.pad`` into a buffer, a loop nest storing the
padding value into all of it and a loop nest copying the source into its
interior, and a ``tensor.insert_slice`` of a value no linalg op computed in
place (a function argument, a reshape) into a ``memref.copy``, lowered to
scalar loops when either side is strided: all on the calling thread.  A
convolution pads its input (and AD pads cotangents for input gradients and
inserts phases for strided ones).  Here, on tensors, each pad with static
padding and a padding value defined outside its body becomes

    %f = linalg.fill ins(%value) outs(bufferization.alloc_tensor(padded shape))
    %r = tensor.insert_slice %source into %f [low] [source shape] [1]

(an allocation of its own: CSE would merge two identical fills of ``tensor.empty``, and
every insertion into the shared buffer would then copy it whole).  When a chain of linalg
ops computes the source from a ``tensor.empty`` in the pad's block (a convolution and its
bias and relu, a pooling) and the padding value is a constant, the fill goes before the
chain, so that empty-tensor elimination has the chain write the padded buffer's interior:
no copy at all.  The later uses of the source then read that interior
(:func:`read_padded_interiors`, just before bufferization), or bufferization, seeing the
source read after the padded buffer was written, copies it out and back.  Otherwise, and
for each insertion ``tensor.insert_slice %source into %dest`` that bufferization would
copy, the copy is explicit:

    %c = linalg.copy ins(%source) outs(tensor.extract_slice %dest [offsets] [sizes] [strides])
    %r = tensor.insert_slice %c into %dest [offsets] [sizes] [strides]

which bufferizes in place (the copy writes into the destination's buffer) and
whose fill and copy are scheduled like any other op.

An insertion of a reshape that only adds unit dimensions inserts the reshaped
value itself (rank-reducing), so that empty-tensor elimination computes that
value in the destination (:func:`_insertions_without_unit_reshapes`).

Measured on Nov 27 (batch 32, 2 threads, each variant compiled in one process
and timed in turns): pads of arguments as fills and copies: depthwise 3x3 layer
forward 0.73 -> 0.50 ms, input gradient 0.77 -> 0.51, kernel gradient 0.86 ->
0.60; 3x3 layers and the stride-2 layer 2-6% faster.  Pads of computed values in
place (Nov 28, ``benchmarks/cnn_step.py``'s step, Intel Xeon): batch 128 118.6 ->
103.9 ms, batch 32 25.4 -> 21.9 ms; they were serial scalar copies of up to 16 MB.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import bufferization, linalg, tensor

from .analysis import use_owner
from .linalg_rewrite import defining_op, ops_where

__all__ = ["read_padded_interiors", "scheduled_copies"]

#: tags the insertion of a pad computed in place, for :func:`read_padded_interiors`
INTERIOR_ATTR = "dlvm.read_interior"


def _computed_by_linalg(value: ir.Value) -> bool:
    op = defining_op(value)
    return op is not None and op.name.startswith("linalg.")


def _padding_value(pad: ir.Operation) -> ir.Value | None:
    """The value a static ``tensor.pad`` yields, if it is defined outside the pad."""
    if len(pad.operands) != 1:  # dynamic padding
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
    if owner == block if isinstance(owner, ir.Block) else owner.operation.parent == pad:
        return None  # an index of the pad's body, or computed in it
    return value


def _chain_start(pad: ir.Operation) -> ir.Operation | None:
    """The first op of the chain of linalg ops in ``pad``'s block that computes ``pad``'s
    source, each op's only init the previous op's result, the first op's init a
    ``tensor.empty`` (which empty-tensor elimination can replace by the padded buffer's
    interior); None if the source is not computed so."""
    first, value = None, pad.operands[0]
    while (op := defining_op(value)) is not None and op.name.startswith("linalg.") and op.parent == pad.parent:
        if len(op.results) != 1:
            return None
        first, value = op, op.operands[len(op.operands) - 1]
    root = defining_op(value)
    return first if first is not None and root is not None and root.name == "tensor.empty" else None


def _pad_as_insertion(pad: ir.Operation, value: ir.Value) -> None:
    """``pad`` as a fill of a buffer of its own and an insertion of its source: computed in
    place (the fill before the source's chain, later reads from the interior), or copied
    by a ``linalg.copy``."""
    source = pad.operands[0]
    result_type = ir.RankedTensorType(pad.results[0].type)
    low = list(ir.DenseI64ArrayAttr(pad.attributes["static_low"]))
    sizes = list(ir.RankedTensorType(source.type).shape)
    start = _chain_start(pad) if defining_op(value) is not None and defining_op(value).name == "arith.constant" else None
    with ir.InsertionPoint(start or pad), pad.location:
        if start is not None:
            value = defining_op(value).clone().results[0]
        # an allocation, not tensor.empty: CSE would merge two pads' identical fills into
        # one buffer, and each insertion into it would copy the whole buffer
        buffer = bufferization.AllocTensorOp(result_type, []).result
        filled = linalg.fill(value, outs=[buffer])
    with ir.InsertionPoint(pad), pad.location:
        padded = tensor.insert_slice(source, filled, [], [], [], low, sizes, [1] * len(sizes))
    pad.results[0].replace_all_uses_with(padded)
    pad.erase()
    insert = padded.owner.operation
    if start is not None:
        insert.attributes[INTERIOR_ATTR] = ir.UnitAttr.get()
    elif _computed_by_linalg(source):
        _insertion_as_copy(insert)


def read_padded_interiors(module: ir.Module) -> int:
    """For each pad computed in place (its insertion tagged :data:`INTERIOR_ATTR`), the
    uses of the inserted value after the insertion read the padded buffer's interior, so
    that bufferization sees no read of the value after the padded buffer was written
    (which would copy the value out of the interior and back).  Runs just before
    one-shot bufferization: the canonicalizer folds these slices back."""
    inserts = ops_where(module, lambda op: INTERIOR_ATTR in op.attributes)
    with module.context:
        for insert in inserts:
            del insert.attributes[INTERIOR_ATTR]
            offsets, sizes = (list(ir.DenseI64ArrayAttr(insert.attributes[name]))
                              for name in ("static_offsets", "static_sizes"))
            source = insert.operands[0]
            later = [(use_owner(use), use.operand_number) for use in source.uses if _after(insert, use_owner(use))]
            if not later:
                continue
            with ir.InsertionPoint.after(insert), insert.location:
                interior = tensor.extract_slice(source.type, insert.results[0], [], [], [], offsets, sizes,
                                                [1] * len(sizes))
            for user, number in later:
                user.operands[number] = interior
    return len(inserts)


def _after(op: ir.Operation, user: ir.Operation) -> bool:
    """Does ``user`` (or the op that holds it in ``op``'s block) come after ``op``?"""
    while user.block != op.block:
        parent = user.parent
        if parent is None or parent.name == "builtin.module":
            return False
        user = parent.operation
    return user != op and op.is_before_in_block(user)


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
