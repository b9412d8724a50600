"""Pooling whose windows tile the input, as a reduction over a reshaped input.

``dlvm.reduce_window`` becomes a ``linalg.generic`` over output and window
loops reading ``x[o0 * s0 + w0, o1 * s1 + w1, ...]``.  Such a map is neither a
projected permutation (the vectorizer's requirement) nor an op upstream's
convolution decomposition takes, so the window reduction ran as scalar loops
(2x2 max pooling of 128x32x32x32: 3 ms).  When every stride equals its window
extent, there is no dilation and each input extent is the output's times the
window's (the usual 2x2/2 pooling), each input element is in exactly one
window, and the input reshapes without a copy to ``[o0, w0, o1, w1, ...]``:

    out[o0, o1, ...] = reduce_{w0, w1, ...} x'[o0, w0, o1, w1, ...]

with projected-permutation maps, which the generic schedule tiles and
vectorizes.  The op keeps its body and its window operand (a shape-only
tensor); only the image operand and the maps change.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import tensor

from .linalg_rewrite import affine_maps, ops_where, reassociation

__all__ = ["tiled_poolings"]


def _windows(op: ir.Operation) -> list[int] | None:
    """The window extents if ``op`` is a pooling whose windows tile its input, else None."""
    if op.name != "linalg.generic" or len(op.operands) != 3 or len(op.results) != 1:
        return None
    types = [v.type for v in op.operands]
    if not all(isinstance(t, ir.RankedTensorType) and ir.RankedTensorType(t).has_static_shape for t in types):
        return None
    x, window, out = (ir.RankedTensorType(t).shape for t in types)
    rank = len(out)
    if len(x) != rank or len(window) != rank:
        return None
    maps = [ir.AffineMapAttr(a).value for a in op.attributes["indexing_maps"]]
    d = [ir.AffineDimExpr.get(i) for i in range(2 * rank)]
    expected = [
        ir.AffineMap.get(2 * rank, 0, [d[k] * window[k] + d[rank + k] if window[k] != 1 else d[k] + d[rank + k]
                                       for k in range(rank)]),
        ir.AffineMap.get(2 * rank, 0, d[rank:]),
        ir.AffineMap.get(2 * rank, 0, d[:rank]),
    ]
    if any(str(a) != str(b) for a, b in zip(maps, expected)):
        return None
    if any(x[k] != out[k] * window[k] for k in range(rank)) or all(w == 1 for w in window):
        return None
    return list(window)


def _rewrite(op: ir.Operation, window: list[int]) -> None:
    x = op.operands[0]
    x_type = ir.RankedTensorType(x.type)
    out = ir.RankedTensorType(op.operands[2].type).shape
    rank = len(out)
    split = [n for k in range(rank) for n in (out[k], window[k])]
    with ir.InsertionPoint(op), op.location:
        reshaped = tensor.expand_shape(ir.RankedTensorType.get(split, x_type.element_type), x,
                                       reassociation([[2 * k, 2 * k + 1] for k in range(rank)]), [], split)
    d = [ir.AffineDimExpr.get(i) for i in range(2 * rank)]
    maps = [ir.AffineMapAttr(a).value for a in op.attributes["indexing_maps"]]
    interleaved = [e for k in range(rank) for e in (d[k], d[rank + k])]
    op.attributes["indexing_maps"] = affine_maps(ir.AffineMap.get(2 * rank, 0, interleaved), maps[1], maps[2])
    op.operands[0] = reshaped


def tiled_poolings(module: ir.Module) -> int:
    """Rewrite every pooling generic of ``module`` whose windows tile its input; the count."""
    with module.context:
        found = [(op, w) for op in ops_where(module, lambda op: _windows(op) is not None) if (w := _windows(op))]
        for op, window in found:
            _rewrite(op, window)
    return len(found)
