"""Vector reads through an expanded shape as reads of the unexpanded tensor.

A vector read of a ``tensor.expand_shape`` result whose trailing dimensions cover whole
expanded groups (``vector<2x16x2>`` of ``[..., h/2, 2, w/2, 2]``: two rows of an image
split into column pairs, the phase copy of a stride-2 convolution,
:mod:`.phases`) is lowered dimension by dimension, one load per innermost run: sixteen
8-byte loads per row, put together with permutes.  The same elements are contiguous in the
unexpanded tensor; this rewrite reads them there as one vector per row (``vector<2x32>``)
and casts the shape back, which the vector lowering turns into full-width loads and
shuffles.

A group qualifies when the vector reads all of its trailing dimensions from index 0 and
size 1 along the others but the last of those (a contiguous run of the unexpanded
dimension).
"""

from __future__ import annotations

import math

from mlir import ir
from mlir.dialects import arith, vector

from .linalg_rewrite import constant_index, defining_op, ops_where

__all__ = ["FLAT_READS", "flat_reads"]

#: read through expanded shapes (measured in docs/cpu.md, "Strided convolutions by phases")
FLAT_READS = True


def _flattened(read: ir.Operation) -> tuple[ir.Value, list[ir.Value], list[int]] | None:
    """(source, indices, vector shape) of ``read`` on the expand_shape's source, or None."""
    source = read.operands[0]
    expand = defining_op(source)
    if expand is None or expand.name != "tensor.expand_shape" or len(expand.operands) != 1:
        return None
    if "permutation_map" in read.attributes:
        perm = ir.AffineMapAttr(read.attributes["permutation_map"]).value
        if perm != ir.AffineMap.get_minor_identity(perm.n_dims, perm.n_dims):
            return None
    if len(read.regions) or any(not ir.BoolAttr(b).value for b in read.attributes["in_bounds"]):
        return None
    shape = list(ir.RankedTensorType(source.type).shape)
    vshape = list(ir.VectorType(read.results[0].type).shape)
    rank = len(shape)
    if len(vshape) != rank or len(read.operands) != rank + 2:  # source, indices, padding (no mask)
        return None
    indices = list(read.operands[1:1 + rank])
    groups = [[int(d) for d in ir.ArrayAttr(g)] for g in expand.attributes["reassociation"]]
    new_indices: list[ir.Value] = []
    new_shape: list[int] = []
    changed = False
    for group in groups:
        full = len(group)
        while full > 0 and vshape[group[full - 1]] == shape[group[full - 1]] \
                and constant_index(indices[group[full - 1]]) == 0:
            full -= 1
        # before the trailing whole dimensions: size 1, but for the last (a run of rows)
        if any(vshape[d] != 1 for d in group[:max(full - 1, 0)]):
            return None
        changed |= len(group) > 1 and full < len(group)
        # linear index of the group's leading (size-1) dims into the unexpanded dimension
        linear = None
        for position, d in enumerate(group[:full]):
            stride = math.prod(shape[e] for e in group[position + 1:])
            term = indices[d] if stride == 1 else arith.muli(indices[d], arith.constant(ir.IndexType.get(), stride))
            linear = term if linear is None else arith.addi(linear, term)
        new_indices.append(linear if linear is not None else arith.constant(ir.IndexType.get(), 0))
        new_shape.append(math.prod(vshape[d] for d in group))
    if not changed:
        return None
    return expand.operands[0], new_indices, new_shape


def flat_reads(module: ir.Module) -> int:
    """Rewrite the qualifying vector reads of ``module``; the count."""
    if not FLAT_READS:
        return 0
    count = 0
    with module.context:
        for read in ops_where(module, lambda op: op.name == "vector.transfer_read"):
            with ir.InsertionPoint(read), read.location:
                flat = _flattened(read)
                if flat is None:
                    continue
                source, indices, shape = flat
                element = ir.VectorType(read.results[0].type).element_type
                wide = vector.transfer_read(ir.VectorType.get(shape, element), source, indices,
                                            ir.AffineMap.get_minor_identity(len(shape), len(shape)),
                                            read.operands[len(read.operands) - 1], in_bounds=[True] * len(shape))
                cast = vector.shape_cast(read.results[0].type, wide)
            read.results[0].replace_all_uses_with(cast)
            read.erase()
            count += 1
    return count
