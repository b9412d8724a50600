"""2-D convolutions as an im2col copy and a contraction (the CPU back end's matmul path).

The convolution schedule (tiles of output rows decomposed into vectorized 1-D
convolutions) reaches about 40 GFLOP/s on a 3x3, 64-channel layer; the
contraction schedule (packed operands, register tiles) about 130.  A
``linalg.conv_2d_nchw_fchw`` (any strides and dilations; padding is a
``tensor.pad`` before it) is therefore rewritten, on tensors, as

    col[n, c, kh, kw, oh, ow] = x[n, c, oh * sh + kh * dh, ow * sw + kw * dw]
    out[n, f, p] += w[f, q] * col[n, q, p]        q = (c, kh, kw), p = (oh, ow)

The copy's indexing maps are linear, so it is tiled and vectorized like any
copy (an ``ow`` row of the output reads an input row with stride ``sw``); the
contraction gets the contraction schedule.  The column matrix of a whole batch
can be large (N=32, C=64, 32x32, 3x3: 75 MB), so the batch is processed in
chunks of ``B`` images (``scf.for``) whose column matrix stays under
:data:`CHUNK_BYTES`.  Element types must agree (no mixed f16 -> f32).

Convolutions too small to gain (fewer than :data:`MIN_MACS` multiply-adds, or a
reduction of fewer than :data:`MIN_REDUCTION` elements) are left to the
convolution schedule.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, linalg, scf, tensor

from .linalg_rewrite import reassociation
from .tiling import divisors

__all__ = ["CHUNK_BYTES", "MIN_MACS", "MIN_REDUCTION", "im2col_convolutions"]

#: largest column matrix of one chunk of the batch
CHUNK_BYTES = 8 << 20
#: smallest convolution worth rewriting (multiply-adds)
MIN_MACS = 1 << 20
#: smallest reduction (input channels x filter size) worth a contraction
MIN_REDUCTION = 16


def _ints(attr: ir.Attribute) -> list[int]:
    return [int(v) for v in ir.DenseIntElementsAttr(attr)]


def _iterators(kinds: list[str]) -> ir.ArrayAttr:
    return ir.ArrayAttr.get([ir.Attribute.parse(f"#linalg.iterator_type<{k}>") for k in kinds])


def _maps(*maps: ir.AffineMap) -> ir.ArrayAttr:
    return ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps])


def _generic(inputs: list[ir.Value], init: ir.Value, maps: ir.ArrayAttr, iterators: list[str], body) -> ir.Value:
    element = ir.RankedTensorType(init.type).element_type
    op = linalg.GenericOp([init.type], inputs, [init], maps, _iterators(iterators))
    block = op.regions[0].blocks.append(*([ir.RankedTensorType(v.type).element_type for v in inputs] + [element]))
    with ir.InsertionPoint(block):
        linalg.YieldOp([body(*block.arguments)])
    return op.result


def _rewrite(op: ir.Operation) -> bool:
    x, w = op.operands[0], op.operands[1]
    init = op.operands[2]
    types = [ir.RankedTensorType(v.type) for v in (x, w, init)]
    if not all(t.has_static_shape for t in types):
        return False
    element = types[2].element_type
    if any(t.element_type != element for t in types) or not isinstance(element, ir.FloatType):
        return False
    n, c, hp, wp = types[0].shape
    f, _, kh, kw = types[1].shape
    _, _, oh, ow = types[2].shape
    sh, sw = _ints(op.attributes["strides"])
    dh, dw = _ints(op.attributes["dilations"])
    q, p = c * kh * kw, oh * ow
    if n * f * q * p < MIN_MACS or q < MIN_REDUCTION:
        return False
    width = element.width // 8
    chunk = max([b for b in divisors(n) if b * q * p * width <= CHUNK_BYTES] or [1])

    d = [ir.AffineDimExpr.get(i) for i in range(6)]
    copy_maps = _maps(
        ir.AffineMap.get(6, 0, [d[0], d[1], d[4] * sh + d[2] * dh, d[5] * sw + d[3] * dw]),
        ir.AffineMap.get_identity(6),
    )
    e = [ir.AffineDimExpr.get(i) for i in range(4)]  # n, f, p, q
    product_maps = _maps(
        ir.AffineMap.get(4, 0, [e[1], e[3]]),
        ir.AffineMap.get(4, 0, [e[0], e[3], e[2]]),
        ir.AffineMap.get(4, 0, [e[0], e[1], e[2]]),
    )

    def chunk_product(xs: ir.Value, acc: ir.Value, images: int) -> ir.Value:
        empty = tensor.EmptyOp([images, c, kh, kw, oh, ow], element).result
        col6 = _generic([xs], empty, copy_maps, ["parallel"] * 6, lambda a, _out: a)
        col = tensor.collapse_shape(ir.RankedTensorType.get([images, q, p], element), col6,
                                    reassociation([[0], [1, 2, 3], [4, 5]]))
        return _generic([w2, col], acc, product_maps, ["parallel"] * 3 + ["reduction"],
                        lambda a, b, s: arith.addf(arith.mulf(a, b), s))

    with ir.InsertionPoint(op), op.location:
        w2 = tensor.collapse_shape(ir.RankedTensorType.get([f, q], element), w, reassociation([[0], [1, 2, 3]]))
        acc_type = ir.RankedTensorType.get([n, f, p], element)
        acc = tensor.collapse_shape(acc_type, init, reassociation([[0], [1], [2, 3]]))
        if chunk == n:
            result = chunk_product(x, acc, n)
        else:
            index = ir.IndexType.get()
            lower, upper, step = (arith.constant(index, v) for v in (0, n, chunk))
            loop = scf.ForOp(lower, upper, step, [acc])
            with ir.InsertionPoint(loop.body):
                i, carried = loop.induction_variable, loop.inner_iter_args[0]
                xs = tensor.extract_slice(ir.RankedTensorType.get([chunk, c, hp, wp], element), x, [i], [], [],
                                          [ir.ShapedType.get_dynamic_size(), 0, 0, 0], [chunk, c, hp, wp], [1] * 4)
                part = tensor.extract_slice(ir.RankedTensorType.get([chunk, f, p], element), carried, [i], [], [],
                                            [ir.ShapedType.get_dynamic_size(), 0, 0], [chunk, f, p], [1] * 3)
                done = chunk_product(xs, part, chunk)
                scf.YieldOp([tensor.insert_slice(done, carried, [i], [], [],
                                                 [ir.ShapedType.get_dynamic_size(), 0, 0], [chunk, f, p], [1] * 3)])
            result = loop.results[0]
        out = tensor.expand_shape(types[2], result, reassociation([[0], [1], [2, 3]]), [], [n, f, oh, ow])
    op.results[0].replace_all_uses_with(out)
    op.erase()
    return True


def im2col_convolutions(module: ir.Module) -> int:
    """Rewrite every qualifying ``linalg.conv_2d_nchw_fchw`` of ``module``; the count."""
    found: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == "linalg.conv_2d_nchw_fchw":
            found.append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    with module.context:
        return sum(_rewrite(op) for op in found)
