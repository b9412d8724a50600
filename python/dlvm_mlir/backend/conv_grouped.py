"""Grouped convolutions as vectorizable generic ops: those with few input channels per
group (depthwise ones) as one multiply-add per filter tap, those with few output positions
(kernel gradients) as one reduction per position.

``dlvm-to-linalg`` lowers a grouped convolution to ``linalg.conv_2d_ngchw_gfchw``,
which the convolution schedule cannot decompose into vectorizable 1-D
convolutions (upstream decomposes only the NCHW/NHWC ungrouped and the NHWC
depthwise forms): it ran as scalar loops at 3-5 GFLOP/s. Two forms are rewritten.

**Few input channels per group** (at most :data:`MAX_TAPS` taps, counting each
input channel of a group: a depthwise layer and its input gradient, grouped
layers of a few channels per group): a sum over the taps ``t = (c, kh, kw)`` of
shifted views of the input times the filter's values for that tap::

    y[n, g, f, h, w] += sum_t x[n, g, c_t, h*sh + kh_t*dh, w*sw + kw_t*dw] * k[g, f, c_t, kh_t, kw_t]

written as one elementwise ``linalg.generic`` whose operands are the taps'
views (strided ``extract_slice``\\ s, no copies) and each tap's filter values
(``[G, F]``: the vectorizer takes projected permutations only, no constant
indices but 0). The generic schedule vectorizes it along ``w`` with every tap's
multiply-add in registers. When the input is zero-padded and a group's output plane is
small (:data:`PLANE_ELEMENTS`), the op covers one plane and runs in an ``scf.forall``
over the images and blocks of groups, each task padding one plane at a time
(:func:`_per_tap_by_planes`): the padded input is never written to memory.

**Few output positions** (at most :data:`MAX_TAPS` output pixels: the kernel
gradient of a grouped or depthwise layer, whose "output image" is the filter's
3x3 and whose "window" is the layer's output image; :mod:`.conv_kernel_grad`
takes those with unit strides and rows of whole vectors first, as lane-wise
partial sums): one reduction per output
position ``(i, j)`` over a strided view of the input, all in one multi-output
``linalg.generic`` that reads the kernel operand once::

    y[b, g, f, i, j] = sum_{c, u, v} x[b, g, c, i*sh + u*dh, j*sw + v*dw] * k[g, f, c, u, v]
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, linalg, scf, tensor

from .linalg_rewrite import affine_maps, defining_op, dense_ints, iterator_types, reassociation, zero_constant, zero_fill

__all__ = ["MAX_TAPS", "grouped_convolutions"]

#: at most this many taps (or output positions) are unrolled into one generic op
MAX_TAPS = 64
#: a per-tap convolution of a zero-padded input pads one image plane at a time
#: (:func:`_per_tap_by_planes`) when a plane's output has at most this many elements
PLANE_ELEMENTS = 4096
#: ... in at least this many parallel tasks per thread (images times blocks of planes)
TASKS_PER_THREAD = 4
_DYNAMIC = ir.ShapedType.get_dynamic_stride_or_offset()


def _rewrite(op: ir.Operation, threads: int) -> bool:
    x, k, init = op.operands[0], op.operands[1], op.operands[2]
    types = [ir.RankedTensorType(v.type) for v in (x, k, init)]
    element = types[2].element_type
    if not all(t.has_static_shape and t.element_type == element for t in types) or not isinstance(element, ir.FloatType):
        return False
    n, g, c, _, _ = types[0].shape
    _, f, _, kh, kw = types[1].shape
    _, _, _, oh, ow = types[2].shape
    strides = dense_ints(op.attributes["strides"])
    dilations = dense_ints(op.attributes["dilations"])
    source = _zero_padded_images(x)
    if c * kh * kw <= MAX_TAPS and source is not None and f * oh * ow <= PLANE_ELEMENTS:
        result = _per_tap_by_planes(source, x, k, init, strides, dilations, threads)
    elif c * kh * kw <= MAX_TAPS:
        result = _per_tap(x, k, init, strides, dilations)
    elif oh * ow <= MAX_TAPS and kh * kw > oh * ow:
        result = _per_output_position(x, k, init, strides, dilations)
    else:
        return False
    op.results[0].replace_all_uses_with(result)
    op.erase()
    return True


def _zero_padded_images(x: ir.Value) -> ir.Value | None:
    """The source of ``x`` when ``x`` is a static ``tensor.pad`` by zeros of the image dimensions only."""
    pad = defining_op(x)
    if pad is None or pad.name != "tensor.pad" or len(pad.operands) != 1:
        return None
    low, high = (list(ir.DenseI64ArrayAttr(pad.attributes[name])) for name in ("static_low", "static_high"))
    (yielded,) = pad.regions[0].blocks[0].operations
    if any(low[:3]) or any(high[:3]) or min(low + high) < 0 or not zero_constant(yielded.operands[0]):
        return None
    owner = yielded.operands[0].owner
    if not isinstance(owner, ir.Block) and owner.operation.parent == pad:
        return None  # a constant inside the pad's body
    return pad.operands[0]


def _per_tap(x: ir.Value, k: ir.Value, init: ir.Value, strides: list[int], dilations: list[int],
             group: ir.Value | None = None, fresh: bool | None = None) -> ir.Value:
    """The per-tap generic of ``init + conv(x, k)``; with ``group``, ``x`` and ``init`` are
    one plane (``[1, 1, ...]``) of group ``group`` of ``k``.  ``fresh``: the sum starts
    from zero and ``init`` is not read (default: whether ``init`` is a fill of zero)."""
    n, g, c, _, _ = ir.RankedTensorType(x.type).shape
    _, f, _, kh, kw = ir.RankedTensorType(k.type).shape
    _, _, _, oh, ow = ir.RankedTensorType(init.type).shape
    element = ir.RankedTensorType(init.type).element_type
    (sh, sw), (dh, dw) = strides, dilations
    taps = [(ci, i, j) for ci in range(c) for i in range(kh) for j in range(kw)]
    view = ir.RankedTensorType.get([n, g, 1, oh, ow], element)
    views = [tensor.extract_slice(view, x, [], [], [], [0, 0, ci, i * dh, j * dw], [n, g, 1, oh, ow],
                                  [1, 1, 1, sh, sw]) for ci, i, j in taps]
    # the filter values of each tap, per group and output channel: k[:, :, ci, i, j] as [G, F]
    column = ir.RankedTensorType.get([g, f, 1, 1, 1], element)
    dynamic = [group] if group is not None else []
    weights = [
        tensor.collapse_shape(ir.RankedTensorType.get([g, f], element),
                              tensor.extract_slice(column, k, dynamic, [], [], [_DYNAMIC if dynamic else 0, 0, ci, i, j],
                                                   [g, f, 1, 1, 1], [1] * 5),
                              reassociation([[0], [1, 2, 3, 4]]))
        for ci, i, j in taps
    ]
    d = [ir.AffineDimExpr.get(i) for i in range(5)]  # n, g, f, h, w
    zero = ir.AffineConstantExpr.get(0)
    view_map = ir.AffineMap.get(5, 0, [d[0], d[1], zero, d[3], d[4]])
    weight_map = ir.AffineMap.get(5, 0, [d[1], d[2]])
    maps = affine_maps(*([view_map] * len(taps)), *([weight_map] * len(taps)), ir.AffineMap.get_identity(5))
    # from a zero init, the sum starts at the first tap and the init is not read (its fill,
    # a pass writing the whole output, goes: depthwise 3x3 128 at 16x16, batch 32, 2 threads,
    # 0.66 -> 0.58 ms; 0.27 -> 0.20 ms without its padding)
    fresh = zero_fill(init) if fresh is None else fresh
    if fresh:
        init = tensor.EmptyOp(ir.RankedTensorType(init.type).shape, element).result
    generic = linalg.GenericOp([init.type], views + weights, [init], maps, iterator_types(["parallel"] * 5))
    block = generic.regions[0].blocks.append(*([element] * (2 * len(taps) + 1)))
    with ir.InsertionPoint(block):
        args = list(block.arguments)
        products = [arith.mulf(args[t], args[len(taps) + t]) for t in range(len(taps))]
        acc = products[0] if fresh else arith.addf(args[-1], products[0])
        for product in products[1:]:
            acc = arith.addf(acc, product)
        linalg.YieldOp([acc])
    return generic.result


def _per_tap_by_planes(x: ir.Value, padded: ir.Value, k: ir.Value, init: ir.Value, strides: list[int],
                       dilations: list[int], threads: int) -> ir.Value:
    """:func:`_per_tap` of ``padded``, ``x`` padded by zeros along its image dimensions,
    one plane at a time: each parallel task (an image and a block of groups) zeroes one
    padded plane and copies each group's plane of ``x`` into its interior before that
    group's taps read it.

    Padding the whole input first wrote a padded copy to memory and read it back
    (depthwise 3x3 128 at 16x16, batch 32, 2 threads: 0.38 of the layer's 0.58 ms); a
    plane stays in the first-level cache."""
    n, g, c, h, w = ir.RankedTensorType(x.type).shape
    padded_type = ir.RankedTensorType(padded.type)
    low = list(ir.DenseI64ArrayAttr(defining_op(padded).attributes["static_low"]))
    out_type = ir.RankedTensorType(init.type)
    _, _, f, oh, ow = out_type.shape
    element = out_type.element_type
    # tasks: images times blocks of groups, at least TASKS_PER_THREAD per thread
    blocks = next((b for b in range(1, g + 1) if g % b == 0 and n * b >= TASKS_PER_THREAD * threads), g)
    per_block = g // blocks
    fresh = zero_fill(init)
    index = ir.IndexType.get()
    zero = arith.constant(element, ir.FloatAttr.get(element, 0.0))
    shared = tensor.EmptyOp(out_type.shape, element).result if fresh else init
    forall = scf.ForallOp([0, 0], [n, blocks], [1, 1], [shared])
    image, block, out = forall.body.arguments
    part_type = ir.RankedTensorType.get([1, per_block, f, oh, ow], element)
    with ir.InsertionPoint(forall.body):
        first = arith.muli(block, arith.constant(index, per_block))
        part = tensor.extract_slice(part_type, out, [image, first], [], [], [_DYNAMIC, _DYNAMIC, 0, 0, 0],
                                    part_type.shape, [1] * 5)
        plane_type = ir.RankedTensorType.get([1, 1, *padded_type.shape[2:]], element)
        plane = linalg.fill(zero, outs=[tensor.EmptyOp(plane_type.shape, element).result])
        loop = scf.ForOp(arith.constant(index, 0), arith.constant(index, per_block), arith.constant(index, 1),
                         [plane, part])
        with ir.InsertionPoint(loop.body):
            offset, plane, acc = loop.induction_variable, *loop.inner_iter_args
            group = arith.addi(first, offset)
            source_type = ir.RankedTensorType.get([1, 1, c, h, w], element)
            source = tensor.extract_slice(source_type, x, [image, group], [], [], [_DYNAMIC, _DYNAMIC, 0, 0, 0],
                                          source_type.shape, [1] * 5)
            plane = tensor.insert_slice(source, plane, [], [], [], [0, 0, *low[2:]], source_type.shape, [1] * 5)
            one_type = ir.RankedTensorType.get([1, 1, f, oh, ow], element)
            start = (tensor.EmptyOp(one_type.shape, element).result if fresh else
                     tensor.extract_slice(one_type, acc, [offset], [], [], [0, _DYNAMIC, 0, 0, 0], one_type.shape,
                                          [1] * 5))
            result = _per_tap(plane, k, start, strides, dilations, group, fresh)
            acc = tensor.insert_slice(result, acc, [offset], [], [], [0, _DYNAMIC, 0, 0, 0], one_type.shape, [1] * 5)
            scf.yield_([plane, acc])
        done = scf.InParallelOp()
        with ir.InsertionPoint(done.region.blocks[0]):
            tensor.ParallelInsertSliceOp(loop.results[1], out, [image, first], [], [], [_DYNAMIC, _DYNAMIC, 0, 0, 0],
                                         part_type.shape, [1] * 5)
    return forall.results[0]


def _per_output_position(x: ir.Value, k: ir.Value, init: ir.Value, strides: list[int],
                         dilations: list[int]) -> ir.Value:
    b, g, c, _, _ = ir.RankedTensorType(x.type).shape
    _, f, _, kh, kw = ir.RankedTensorType(k.type).shape
    _, _, _, oh, ow = ir.RankedTensorType(init.type).shape
    element = ir.RankedTensorType(init.type).element_type
    (sh, sw), (dh, dw) = strides, dilations
    positions = [(i, j) for i in range(oh) for j in range(ow)]
    view = ir.RankedTensorType.get([b, g, c, kh, kw], element)
    views = [tensor.extract_slice(view, x, [], [], [], [0, 0, 0, i * sh, j * sw], [b, g, c, kh, kw],
                                  [1, 1, 1, dh, dw]) for i, j in positions]
    point = ir.RankedTensorType.get([b, g, f, 1, 1], element)
    starts = [tensor.extract_slice(point, init, [], [], [], [0, 0, 0, i, j], [b, g, f, 1, 1], [1] * 5)
              for i, j in positions]
    column = ir.RankedTensorType.get([b, g, f], element)
    outs = [tensor.collapse_shape(column, s, reassociation([[0], [1], [2, 3, 4]])) for s in starts]
    d = [ir.AffineDimExpr.get(i) for i in range(6)]  # b, g, f, c, u, v
    input_map = ir.AffineMap.get(6, 0, [d[0], d[1], d[3], d[4], d[5]])
    kernel_map = ir.AffineMap.get(6, 0, [d[1], d[2], d[3], d[4], d[5]])
    output_map = ir.AffineMap.get(6, 0, [d[0], d[1], d[2]])
    maps = affine_maps(*([input_map] * len(views)), kernel_map, *([output_map] * len(outs)))
    iterators = iterator_types(["parallel"] * 3 + ["reduction"] * 3)
    generic = linalg.GenericOp([column] * len(outs), views + [k], outs, maps, iterators)
    block = generic.regions[0].blocks.append(*([element] * (2 * len(views) + 1)))
    with ir.InsertionPoint(block):
        args = list(block.arguments)
        weight = args[len(views)]
        sums = [arith.addf(args[len(views) + 1 + p], arith.mulf(args[p], weight)) for p in range(len(views))]
        linalg.YieldOp(sums)
    result = init
    for (i, j), value in zip(positions, generic.results):
        expanded = tensor.expand_shape(point, value, reassociation([[0], [1], [2, 3, 4]]), [], [b, g, f, 1, 1])
        result = tensor.insert_slice(expanded, result, [], [], [], [0, 0, 0, i, j], [b, g, f, 1, 1], [1] * 5)
    return result


def grouped_convolutions(module: ir.Module, threads: int = 1) -> int:
    """Rewrite every ``linalg.conv_2d_ngchw_gfchw`` of one of the two forms (for code
    running on ``threads`` threads); the count."""
    found: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == "linalg.conv_2d_ngchw_gfchw":
            found.append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    count = 0
    for op in found:
        with ir.InsertionPoint(op), op.location:
            count += _rewrite(op, threads)
    return count
