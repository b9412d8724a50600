"""Depthwise convolutions as one multiply-add per filter tap (elementwise, vectorized).

``dlvm-to-linalg`` lowers a grouped convolution to ``linalg.conv_2d_ngchw_gfchw``,
which the convolution schedule cannot decompose into vectorizable 1-D
convolutions (upstream decomposes only the NCHW/NHWC ungrouped and the NHWC
depthwise forms): it ran as scalar loops at 3-5 GFLOP/s. With one input and
one output channel per group (a depthwise layer, and its input gradient), the
convolution is a sum over the KH x KW taps of shifted views of the input times
one filter value per channel::

    y[n, g, 0, h, w] += sum_t x[n, g, 0, h*sh + kh_t*dh, w*sw + kw_t*dw] * k[g, 0, 0, kh_t, kw_t]

written as one elementwise ``linalg.generic`` whose operands are the taps'
views (strided ``extract_slice``\\ s, no copies) and each tap's filter column
(``[G]``: the vectorizer takes projected permutations only, no constant indices). The generic schedule vectorizes it
along ``w`` with every tap's multiply-add in registers.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, linalg, tensor

from .conv_im2col import _ints, _maps
from .linalg_rewrite import iterator_types, reassociation

__all__ = ["MAX_TAPS", "depthwise_convolutions"]

#: at most this many taps (operands: two per tap) are unrolled into one generic op
MAX_TAPS = 64


def _rewrite(op: ir.Operation) -> bool:
    x, k, init = op.operands[0], op.operands[1], op.operands[2]
    types = [ir.RankedTensorType(v.type) for v in (x, k, init)]
    element = types[2].element_type
    if not all(t.has_static_shape and t.element_type == element for t in types) or not isinstance(element, ir.FloatType):
        return False
    n, g, c, _, _ = types[0].shape
    _, f, _, kh, kw = types[1].shape
    _, _, _, oh, ow = types[2].shape
    if c != 1 or f != 1 or kh * kw > MAX_TAPS:
        return False
    sh, sw = _ints(op.attributes["strides"])
    dh, dw = _ints(op.attributes["dilations"])
    taps = [(i, j) for i in range(kh) for j in range(kw)]
    with ir.InsertionPoint(op), op.location:
        view = ir.RankedTensorType.get([n, g, 1, oh, ow], element)
        views = [
            tensor.extract_slice(view, x, [], [], [], [0, 0, 0, i * dh, j * dw], [n, g, 1, oh, ow], [1, 1, 1, sh, sw])
            for i, j in taps
        ]
        # the filter value of each tap, per channel: k[:, 0, 0, i, j] as a [G] operand
        column = ir.RankedTensorType.get([g, 1, 1, 1, 1], element)
        weights = [
            tensor.collapse_shape(ir.RankedTensorType.get([g], element),
                                  tensor.extract_slice(column, k, [], [], [], [0, 0, 0, i, j], [g, 1, 1, 1, 1],
                                                       [1] * 5),
                                  reassociation([[0, 1, 2, 3, 4]]))
            for i, j in taps
        ]
        identity = ir.AffineMap.get_identity(5)
        per_channel = ir.AffineMap.get(5, 0, [ir.AffineDimExpr.get(1)])  # (n, g, c, h, w) -> (g)
        maps = _maps(*([identity] * len(taps)), *([per_channel] * len(taps)), identity)
        generic = linalg.GenericOp([init.type], views + weights, [init], maps, iterator_types(["parallel"] * 5))
        block = generic.regions[0].blocks.append(*([element] * (2 * len(taps) + 1)))
        with ir.InsertionPoint(block):
            args = list(block.arguments)
            acc = args[-1]
            for t in range(len(taps)):
                acc = arith.addf(acc, arith.mulf(args[t], args[len(taps) + t]))
            linalg.YieldOp([acc])
    op.results[0].replace_all_uses_with(generic.result)
    op.erase()
    return True


def depthwise_convolutions(module: ir.Module) -> int:
    """Rewrite every ``linalg.conv_2d_ngchw_gfchw`` with one channel per group; the count."""
    found: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == "linalg.conv_2d_ngchw_gfchw":
            found.append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    with module.context:
        return sum(_rewrite(op) for op in found)
