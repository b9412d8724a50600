"""Contractions on f16 operands with an f32 accumulator compute on f32 copies.

``dlvm.dot`` on f16 lowers to a named linalg contraction with f16 inputs and
an f32 init (f32 accumulation, as numpy and PyTorch's CPU kernels do), then a
truncation. Vectorized as it is, the contraction's mixed element types keep
the vector contraction from lowering to outer products: it was unrolled
element by element (4.8x the LLVM IR of the same f32 matmul, 5-8x its
compile time, about 5 GFLOP/s; a fuzzed program with a few f16 dots and their
gradients took 41 s to compile). Without AVX512-FP16 every f16 operation is
computed in f32 anyway, so the CPU back end extends each f16 input of such a
contraction into an f32 tensor first (one elementwise pass over the inputs)
and the contraction takes the f32 path: packing, register tiles, FMAs. The
values are the same: each f16 product is exact in f32.

The GPU back end keeps the mixed form, which its tensor-core kernels take.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, linalg, tensor

from .linalg_rewrite import affine_maps, iterator_types, ops_where

__all__ = ["widen_half_contractions"]

#: named contractions whose inputs may be f16 with an f32 init, and their builders
_CONTRACTIONS = {
    "linalg.matmul": linalg.matmul,
    "linalg.batch_matmul": linalg.batch_matmul,
    "linalg.matvec": linalg.matvec,
    "linalg.vecmat": linalg.vecmat,
    "linalg.dot": linalg.dot,
}


def _widened(value: ir.Value, f32: ir.Type) -> ir.Value:
    """``value`` (a ranked f16 tensor) extended to f32 by an elementwise linalg.generic."""
    source = ir.RankedTensorType(value.type)
    result = ir.RankedTensorType.get(source.shape, f32)
    init = tensor.EmptyOp(source.shape, f32).result
    identity = ir.AffineMap.get_identity(source.rank)
    generic = linalg.GenericOp([result], [value], [init], affine_maps(identity, identity),
                               iterator_types(["parallel"] * source.rank))
    block = generic.regions[0].blocks.append(source.element_type, f32)
    with ir.InsertionPoint(block):
        linalg.YieldOp([arith.extf(f32, block.arguments[0])])
    return generic.result


def widen_half_contractions(module: ir.Module) -> int:
    """Extend the f16 inputs of named contractions with an f32 init: how many ops changed."""
    changed = 0
    with module.context, ir.Location.unknown():
        f16, f32 = ir.F16Type.get(), ir.F32Type.get()
        for op in ops_where(module, lambda op: op.name in _CONTRACTIONS):
            inputs, init = list(op.operands)[:-1], op.operands[len(op.operands) - 1]
            if not isinstance(init.type, ir.RankedTensorType) or ir.RankedTensorType(init.type).element_type != f32:
                continue
            narrow = [i for i, v in enumerate(inputs)
                      if isinstance(v.type, ir.RankedTensorType) and ir.RankedTensorType(v.type).element_type == f16]
            if not narrow:
                continue
            # a named op's body is built for its operand types: build the op anew
            # (with its indexing maps, which read transposed operands in place)
            with ir.InsertionPoint(op), op.location:
                wide = [_widened(v, f32) if i in narrow else v for i, v in enumerate(inputs)]
                maps = op.attributes["indexing_maps"] if "indexing_maps" in op.attributes else None
                kwargs = {"indexing_maps": [ir.AffineMapAttr(m).value for m in maps]} if maps is not None else {}
                new = _CONTRACTIONS[op.name](*wide, outs=[init], **kwargs).owner
            for index in range(len(op.attributes)):  # discardable ones (dlvm.recompute, ...)
                named = op.attributes[index]
                if named.name not in new.attributes and named.name != "operandSegmentSizes":
                    new.attributes[named.name] = named.attr
            op.results[0].replace_all_uses_with(new.results[0])
            op.erase()
            changed += 1
    return changed
