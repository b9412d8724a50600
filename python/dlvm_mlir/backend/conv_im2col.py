"""2-D convolutions as an im2col copy and a contraction (the CPU back end's matmul path).

Runs after :mod:`.conv_direct` and :mod:`.conv_kernel_grad`, which take the convolutions
whose output rows fill a vector (and the kernel gradients whose filter rows do) without
any copy; this is the path of the rest.

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
chunks of images (``scf.for``) whose column matrix stays under
:data:`CHUNK_BYTES`.

When the output images are small (fewer than :data:`MIN_IMAGE` pixels: the
kernel gradient, a convolution whose "images" are the 3x3 filter taps), a
product per image would have too few columns for a register tile; then the
images of the batch go side by side into one plain matmul,
``out[f, (n, p)] += w[f, q] * col[q, (n, p)]`` (the output transposed before
and after), and the chunks run over the input channels (the reduction)
instead.  Element types must agree (no mixed f16 -> f32); grouped and
depthwise convolutions keep the convolution schedule.

Convolutions too small to gain (fewer than :data:`MIN_MACS` multiply-adds, or a
reduction of fewer than :data:`MIN_REDUCTION` elements) are left to the
convolution schedule.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, linalg, scf, tensor

from .linalg_rewrite import affine_maps, dense_ints, iterator_types, reassociation
from .tiling import divisors

__all__ = ["CHUNK_BYTES", "MIN_IMAGE", "MIN_MACS", "MIN_REDUCTION", "Conv", "build_generic",
           "describe_convolution", "im2col_convolutions"]

#: largest column matrix of one chunk (of the batch, or of the input channels)
CHUNK_BYTES = 8 << 20
DYNAMIC = -(1 << 63)  # ShapedType::kDynamic: an offset given as a value
#: smallest convolution worth rewriting (multiply-adds)
MIN_MACS = 1 << 20
#: smallest reduction (input channels x filter size) worth a contraction
MIN_REDUCTION = 16
#: output images smaller than this (OH x OW) are laid side by side in one plain matmul
#: (the kernel gradient's "images" are the filter's 3x3): a per-image product over so
#: few columns fills no register tile
MIN_IMAGE = 64



def build_generic(inputs: list[ir.Value], init: ir.Value, maps: ir.ArrayAttr, iterators: list[str], body) -> ir.Value:
    """A ``linalg.generic`` over ``inputs`` into ``init`` whose body yields ``body(*block arguments)``."""
    element = ir.RankedTensorType(init.type).element_type
    op = linalg.GenericOp([init.type], inputs, [init], maps, iterator_types(iterators))
    block = op.regions[0].blocks.append(*([ir.RankedTensorType(v.type).element_type for v in inputs] + [element]))
    with ir.InsertionPoint(block):
        linalg.YieldOp([body(*block.arguments)])
    return op.result


@dataclass(frozen=True)
class Conv:
    """A ``linalg.conv_2d_nchw_fchw`` on static tensors of one float type."""

    x: ir.Value
    w: ir.Value
    init: ir.Value
    element: ir.Type
    n: int
    c: int
    hp: int
    wp: int
    f: int
    kh: int
    kw: int
    oh: int
    ow: int
    strides: tuple[int, int]
    dilations: tuple[int, int]

    @property
    def q(self) -> int:
        return self.c * self.kh * self.kw

    @property
    def p(self) -> int:
        return self.oh * self.ow

    def tensor(self, *shape: int) -> ir.RankedTensorType:
        return ir.RankedTensorType.get(list(shape), self.element)

    def copy_maps(self, channels_first: bool) -> ir.ArrayAttr:
        """col[n, c, kh, kw, oh, ow] (or col[c, kh, kw, n, oh, ow]) = x[n, c, oh * sh + kh * dh, ow * sw + kw * dw]."""
        d = [ir.AffineDimExpr.get(i) for i in range(6)]
        n, c, kh, kw = (d[3], d[0], d[1], d[2]) if channels_first else (d[0], d[1], d[2], d[3])
        (sh, sw), (dh, dw) = self.strides, self.dilations
        return affine_maps(ir.AffineMap.get(6, 0, [n, c, d[4] * sh + kh * dh, d[5] * sw + kw * dw]),
                     ir.AffineMap.get_identity(6))


def describe_convolution(op: ir.Operation) -> Conv | None:
    """``op`` as a :class:`Conv` if it is a ``linalg.conv_2d_nchw_fchw`` on static tensors of
    one float type (the form the convolution rewrites take), else None."""
    if op.name != "linalg.conv_2d_nchw_fchw":
        return None
    x, w, init = op.operands[0], op.operands[1], op.operands[2]
    types = [ir.RankedTensorType(v.type) for v in (x, w, init)]
    element = types[2].element_type
    if not all(t.has_static_shape and t.element_type == element for t in types) or not isinstance(element, ir.FloatType):
        return None
    n, c, hp, wp = types[0].shape
    f, _, kh, kw = types[1].shape
    _, _, oh, ow = types[2].shape
    sh, sw = dense_ints(op.attributes["strides"])
    dh, dw = dense_ints(op.attributes["dilations"])
    return Conv(x, w, init, element, n, c, hp, wp, f, kh, kw, oh, ow, (sh, sw), (dh, dw))


def _chunked(total: int, chunk: int, init: ir.Value, body) -> ir.Value:
    """``body(start, acc) -> acc`` for start = 0, chunk, ..., total - chunk (one call without a loop)."""
    index = ir.IndexType.get()
    if chunk == total:
        return body(arith.constant(index, 0), init)
    lower, upper, step = (arith.constant(index, v) for v in (0, total, chunk))
    loop = scf.ForOp(lower, upper, step, [init])
    with ir.InsertionPoint(loop.body):
        scf.YieldOp([body(loop.induction_variable, loop.inner_iter_args[0])])
    return loop.results[0]


def _slice(source: ir.Value, result: ir.RankedTensorType, position: int, start: ir.Value) -> ir.Value:
    """``source[..., start : start + size, ...]`` along dimension ``position`` (sizes from ``result``)."""
    offsets = [DYNAMIC if d == position else 0 for d in range(result.rank)]
    return tensor.extract_slice(result, source, [start], [], [], offsets, list(result.shape), [1] * result.rank)


def _insert(value: ir.Value, into: ir.Value, position: int, start: ir.Value) -> ir.Value:
    shape = ir.RankedTensorType(value.type).shape
    offsets = [DYNAMIC if d == position else 0 for d in range(len(shape))]
    return tensor.insert_slice(value, into, [start], [], [], offsets, list(shape), [1] * len(shape))


def _per_image(conv: Conv, w2: ir.Value) -> ir.Value:
    """out[n, f, p] += w[f, q] * col[n, q, p], the batch in chunks of images: (N, F, P)."""
    k = conv
    width = k.element.width // 8
    chunk = max([b for b in divisors(k.n) if b * k.q * k.p * width <= CHUNK_BYTES] or [1])
    e = [ir.AffineDimExpr.get(i) for i in range(4)]  # n, f, p, q
    product_maps = affine_maps(ir.AffineMap.get(4, 0, [e[1], e[3]]), ir.AffineMap.get(4, 0, [e[0], e[3], e[2]]),
                         ir.AffineMap.get(4, 0, [e[0], e[1], e[2]]))
    acc = tensor.collapse_shape(k.tensor(k.n, k.f, k.p), k.init, reassociation([[0], [1], [2, 3]]))

    def body(start: ir.Value, carried: ir.Value) -> ir.Value:
        xs = k.x if chunk == k.n else _slice(k.x, k.tensor(chunk, k.c, k.hp, k.wp), 0, start)
        part = carried if chunk == k.n else _slice(carried, k.tensor(chunk, k.f, k.p), 0, start)
        empty = tensor.EmptyOp([chunk, k.c, k.kh, k.kw, k.oh, k.ow], k.element).result
        col6 = build_generic([xs], empty, k.copy_maps(False), ["parallel"] * 6, lambda a, _out: a)
        col = tensor.collapse_shape(k.tensor(chunk, k.q, k.p), col6, reassociation([[0], [1, 2, 3], [4, 5]]))
        done = build_generic([w2, col], part, product_maps, ["parallel"] * 3 + ["reduction"],
                        lambda a, b, s: arith.addf(arith.mulf(a, b), s))
        return done if chunk == k.n else _insert(done, carried, 0, start)

    return _chunked(k.n, chunk, acc, body)


def _flat(conv: Conv, w2: ir.Value) -> ir.Value:
    """out[f, (n, p)] += w[f, q] * col[q, (n, p)], one plain matmul, the reduction in chunks
    of input channels: (N, F, P) after a transpose."""
    k = conv
    width = k.element.width // 8
    taps = k.kh * k.kw
    chunk = max([b for b in divisors(k.c) if b * taps * k.n * k.p * width <= CHUNK_BYTES] or [1])
    init3 = tensor.collapse_shape(k.tensor(k.n, k.f, k.p), k.init, reassociation([[0], [1], [2, 3]]))
    transposed = linalg.transpose(init3, outs=[tensor.EmptyOp([k.f, k.n, k.p], k.element).result],
                                  permutation=[1, 0, 2])
    acc = tensor.collapse_shape(k.tensor(k.f, k.n * k.p), transposed, reassociation([[0], [1, 2]]))

    def body(start: ir.Value, carried: ir.Value) -> ir.Value:
        index = ir.IndexType.get()
        xs = k.x if chunk == k.c else _slice(k.x, k.tensor(k.n, chunk, k.hp, k.wp), 1, start)
        ws = w2 if chunk == k.c else _slice(
            w2, k.tensor(k.f, chunk * taps), 1, arith.muli(start, arith.constant(index, taps)))
        empty = tensor.EmptyOp([chunk, k.kh, k.kw, k.n, k.oh, k.ow], k.element).result
        col6 = build_generic([xs], empty, k.copy_maps(True), ["parallel"] * 6, lambda a, _out: a)
        col = tensor.collapse_shape(k.tensor(chunk * taps, k.n * k.p), col6, reassociation([[0, 1, 2], [3, 4, 5]]))
        return linalg.matmul(ws, col, outs=[carried])

    result = _chunked(k.c, chunk, acc, body)
    expanded = tensor.expand_shape(k.tensor(k.f, k.n, k.p), result, reassociation([[0], [1, 2]]), [], [k.f, k.n, k.p])
    return linalg.transpose(expanded, outs=[tensor.EmptyOp([k.n, k.f, k.p], k.element).result], permutation=[1, 0, 2])


def _rewrite(op: ir.Operation) -> bool:
    conv = describe_convolution(op)
    if conv is None or conv.n * conv.f * conv.q * conv.p < MIN_MACS or conv.q < MIN_REDUCTION:
        return False
    with ir.InsertionPoint(op), op.location:
        w2 = tensor.collapse_shape(conv.tensor(conv.f, conv.q), conv.w, reassociation([[0], [1, 2, 3]]))
        result = _flat(conv, w2) if conv.p < MIN_IMAGE else _per_image(conv, w2)
        out = tensor.expand_shape(op.results[0].type, result, reassociation([[0], [1], [2, 3]]), [],
                                  [conv.n, conv.f, conv.oh, conv.ow])
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
