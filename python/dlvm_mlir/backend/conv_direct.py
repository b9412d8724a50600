"""2-D convolutions with unit strides computed in place (direct convolution).

The im2col rewrite (:mod:`.conv_im2col`) copies the input once per filter tap
(9x the input for a 3x3 filter) before a contraction reads it again; on a
3x3, 64-channel layer the copy and its extra memory traffic cost about half
the time.  A convolution with unit strides needs no copy: for one filter tap
``(kh, kw)`` the output block ``out[n, f, oh, ow0 : ow0 + W]`` gains
``w[f, c, kh, kw] * x[n, c, oh + kh, ow0 + kw : ow0 + kw + W]``, an outer
product of a column of the filter and a row of the input shifted by the tap.
The schedule (``_direct_convolution_plan`` in :mod:`.schedule`) tiles the
filter loops to unit loops, folds them away and vectorizes each tile as a
contraction over the input channels, accumulating in registers across every
channel and tap.

This rewrite prepares the operands for that schedule: the filter is re-laid
out as ``w[f, kh, kw, c]`` (one copy of the small filter), so that a register
tile's filter values for consecutive input channels are contiguous, and the
convolution becomes a ``linalg.generic`` with the filter as its first input
(the contraction's rows, like a matmul's A).  A strided convolution without
dilation becomes one convolution per column phase of its input, which keeps
the row stride in its indexing map (:func:`_by_phases`); output rows of more than 3/4 of a vector are widened to
one (:func:`_widened`).  A convolution of a zero-padded argument that nothing else reads
runs image by image in a parallel loop, each task padding its own image
(:func:`_image_by_image`).  Dilated strided convolutions keep the im2col rewrite
(their input rows would be read with a stride), as do convolutions whose output
rows are at most 3/4 of a vector.

Measured on Nov 27 (batch 32, 2 threads, Zen 4; ``benchmarks/bench_conv.py``):
3x3 64->64 at 32x32 forward 22.6 -> 13.7 ms (oneDNN 12.6-13.6), its input
gradient 22-47 -> 14.8 ms; 3x3 128->128 at 16x16 forward 19.2 -> 13.0 ms.  A
first layer (64 images, one channel, 28x28, 16 filters) 1.38 -> 0.27 ms.
"""

from __future__ import annotations

from typing import Callable

from mlir import ir
from mlir.dialects import arith, linalg, scf, tensor

from .analysis import SCHEDULE_HINT_ATTR
from .conv_im2col import build_generic, describe_convolution
from .linalg_rewrite import affine_maps, defining_op, dense_ints, ops_where, zero_fill
from .phases import column_phases, phase_slice, zero_padding, zero_padded
from .target import CpuTarget

__all__ = ["direct_convolutions"]


def _qualifies(op: ir.Operation, lanes_of) -> bool:
    conv = describe_convolution(op)
    if conv is None or (conv.strides != (1, 1) and conv.dilations != (1, 1)):
        return False
    lanes = lanes_of(conv.element.width // 8)
    # rows of more than 3/4 of a vector are widened to one (unit strides; one core at 14x14,
    # 64 channels: 54 -> 82 GFLOP/s; 12 of 16 lanes measured even with im2col, 8 of 16 half)
    return conv.ow >= lanes or (conv.strides == (1, 1) and 4 * conv.ow > 3 * lanes)


def _widened(x: ir.Value, w: ir.Value, init: ir.Value, dilations: list[int], lanes: int) -> ir.Value:
    """A unit-stride convolution whose output rows are narrower than a vector, computed on rows
    of a whole vector (zero columns appended to the input and the output: 14 of 16 lanes
    useful at 14x14) and sliced back."""
    n, f, oh, ow = ir.RankedTensorType(init.type).shape
    extra = lanes - ow
    wide = _direct(zero_padded(x, [0, 0, 0, extra]), w, zero_padded(init, [0, 0, 0, extra]), dilations)
    return _strided_slice(wide, [0, 0, 0, 0], [n, f, oh, ow], [1, 1, 1, 1])


def _filters(w: ir.Value) -> ir.Value:
    """The filter ``w[f, c, kh, kw]`` laid out as ``w[f, kh, kw, c]``."""
    f, c, kh, kw = ir.RankedTensorType(w.type).shape
    empty = tensor.EmptyOp([f, kh, kw, c], ir.RankedTensorType(w.type).element_type).result
    return linalg.transpose(w, outs=[empty], permutation=[0, 2, 3, 1]).results[0]


def _direct(x: ir.Value, w: ir.Value, init: ir.Value, dilations: list[int], row_stride: int = 1,
            filters: ir.Value | None = None) -> ir.Value:
    """The convolution ``init + conv(x, w)``, unit stride along the rows, as the direct generic
    (``filters``: ``w`` already laid out by :func:`_filters`)."""
    dh, dw = dilations
    filters = _filters(w) if filters is None else filters
    d = [ir.AffineDimExpr.get(i) for i in range(7)]  # n, f, oh, ow, c, kh, kw
    maps = affine_maps(
        ir.AffineMap.get(7, 0, [d[0], d[4], d[2] * row_stride + d[5] * dh, d[3] + d[6] * dw]),
        ir.AffineMap.get(7, 0, [d[1], d[5], d[6], d[4]]),
        ir.AffineMap.get(7, 0, [d[0], d[1], d[2], d[3]]),
    )
    result = build_generic([x, filters], init, maps, ["parallel"] * 4 + ["reduction"] * 3,
                           lambda pixel, weight, acc: arith.addf(acc, arith.mulf(weight, pixel)))
    result.owner.attributes[SCHEDULE_HINT_ATTR] = ir.StringAttr.get("direct-convolution")
    return result


def _strided_slice(value: ir.Value, offsets: list[int], sizes: list[int], strides: list[int]) -> ir.Value:
    element = ir.RankedTensorType(value.type).element_type
    return tensor.extract_slice(ir.RankedTensorType.get(sizes, element), value, [], [], [], offsets, sizes, strides)


def _phase_filters(w: ir.Value, strides: list[int]) -> list[ir.Value]:
    """For each column phase ``b`` of a stride-``sw`` convolution, the filter's taps ``b, b + sw,
    ...`` laid out by :func:`_filters`."""
    f, c, kh, kw = ir.RankedTensorType(w.type).shape
    sw = strides[1]
    return [_filters(_strided_slice(w, [0, 0, 0, b], [f, c, kh, -(-(kw - b) // sw)], [1, 1, 1, sw]))
            for b in range(min(sw, kw))]


def _by_phases(x: ir.Value, w: ir.Value, init: ir.Value, strides: list[int],
               filters: list[ir.Value] | None = None) -> ir.Value:
    """A strided convolution as one convolution per column phase of the input, unit-strided
    along the rows (the vectors).

    Tap ``k = s * t + b`` of a stride-``s`` window reads input columns ``s * (o + t) + b``:
    phase ``b`` of the input (columns ``b, b + s, ...``) convolved with taps ``b, b + s,
    ...`` of the filter, at unit stride.  The phases' convolutions accumulate into one
    output.  The rows keep their stride in the input's indexing map: the schedule tiles them
    to single rows, which a stride does not disturb.  The phases are copied out of the
    input in one vectorized copy (:func:`.phases.column_phases`; of the unpadded input when
    the convolution reads a zero pad).  Measured on Nov 27 (3x3 stride-2 64->128 layer,
    batch 32, 2 threads): 8.1 ms with four phases of rows and columns, 7.6 with two of the
    columns, 7.3 with the pad's copy folded into the phases' copy.  (``filters``: those of
    :func:`_phase_filters`.)
    """
    n, c, _, _ = ir.RankedTensorType(x.type).shape
    _, _, kh, kw = ir.RankedTensorType(w.type).shape
    _, _, oh, ow = ir.RankedTensorType(init.type).shape
    sh, sw = strides
    phases, shift = column_phases(x, sw, min(sw, kw))
    filters = _phase_filters(w, strides) if filters is None else filters
    result = init
    for b, taps in enumerate(filters):
        tw = ir.RankedTensorType(taps.type).shape[2]
        phase = phase_slice(phases, (1, sw), [0, 0, 0, b + shift], [n, c, (oh - 1) * sh + kh, ow + tw - 1])
        result = _direct(phase, w, result, [1, 1], row_stride=sh, filters=taps)
    return result


#: a convolution of a padded argument pads and convolves its images one task each
#: (:func:`_image_by_image`)
PER_IMAGE_PADS = True
#: ... where its images divide evenly between the threads or make this many tasks per thread
TASKS_PER_THREAD = 4
_DYNAMIC = ir.ShapedType.get_dynamic_stride_or_offset()


def _argument_padding(x: ir.Value, threads: int) -> tuple[ir.Value, list[int], list[int]] | None:
    """``(source, low, high)`` when ``x``, read by the convolution alone, pads a value that no op
    computes (a function argument) and nothing else reads, with zeros along the image
    dimensions only, and its images balance over ``threads`` (a padded value that others
    read too is padded once for all: AD pads a strided convolution's cotangent once for its
    phases)."""
    padding = zero_padding(x)
    images = ir.RankedTensorType(x.type).shape[0]
    if (padding is None or defining_op(padding[0]) is not None or any(padding[1][:2] + padding[2][:2])
            or _uses(x) != 1 or _uses(padding[0]) != 1):
        return None
    return padding if images > 1 and (images % threads == 0 or images >= TASKS_PER_THREAD * threads) else None


def _uses(value: ir.Value) -> int:
    return sum(1 for _ in value.uses)


def _elementwise_consumer(value: ir.Value) -> ir.Operation | None:
    """The one use of ``value``, when it is an elementwise ``linalg.generic`` over the same loops
    (a bias and an activation) with identity maps for ``value`` and its one result, whose
    other operands it reads by loops and broadcast unit dimensions."""
    uses = list(value.uses)
    if len(uses) != 1:
        return None
    op = uses[0].owner
    if (op.name != "linalg.generic" or len(op.results) != 1 or op.operands[len(op.operands) - 1] == value
            or len(op.regions[0].blocks[0].arguments) != len(op.operands)):
        return None
    rank = ir.RankedTensorType(value.type).rank
    maps = [ir.AffineMapAttr(m).value for m in op.attributes["indexing_maps"]]
    iterators = [str(t) for t in op.attributes["iterator_types"]]
    if any("parallel" not in t for t in iterators) or len(iterators) != rank:
        return None
    identity = ir.AffineMap.get_identity(rank)
    if maps[-1] != identity or op.results[0].type != value.type:
        return None
    for operand, m in zip(op.operands, maps):
        if (operand == value and m != identity) or _loops_read(m) is None:
            return None
    return op


def _loops_read(index_map: ir.AffineMap) -> list[int | None] | None:
    """For each dimension an indexing map reads: its loop, or None for index 0 (a broadcast unit
    dimension); None unless the map has only such results."""
    loops: list[int | None] = []
    for expr in index_map.results:
        if isinstance(expr, ir.AffineDimExpr):
            loops.append(expr.position)
        elif isinstance(expr, ir.AffineConstantExpr) and expr.value == 0:
            loops.append(None)
        else:
            return None
    return loops


def _image_slice(value: ir.Value, index_map: ir.AffineMap, image: ir.Value) -> ir.Value:
    """The part of an operand read by the loops of one image (loop 0) through ``index_map``."""
    positions = _loops_read(index_map)
    if 0 not in positions:
        return value
    at = positions.index(0)
    shape = list(ir.RankedTensorType(value.type).shape)
    sizes = [1 if d == at else n for d, n in enumerate(shape)]
    offsets = [_DYNAMIC if d == at else 0 for d in range(len(shape))]
    sliced = ir.RankedTensorType.get(sizes, ir.RankedTensorType(value.type).element_type)
    return tensor.extract_slice(sliced, value, [image], [], [], offsets, sizes, [1] * len(shape))


def _image_by_image(source: ir.Value, low: list[int], high: list[int], init: ir.Value,
                    convolve: Callable[[ir.Value, ir.Value], ir.Value], conv: ir.Value,
                    consumer: ir.Operation | None) -> ir.Value:
    """``convolve(padded, init)`` of ``source`` padded by zeros, in a parallel loop over the
    images: each task pads its image and convolves it, so that the padded copy stays in cache
    (the whole batch's went out to memory and came back).  With ``consumer``, the elementwise
    op reading ``conv`` (the convolution replaced), each task applies it to its image, where
    the schedule fuses it into the convolution's tiles; the loop's result is then the
    consumer's."""
    n, c, h, wd = ir.RankedTensorType(source.type).shape
    out_type = ir.RankedTensorType(init.type)
    _, f, oh, ow = out_type.shape
    element = out_type.element_type
    fresh = zero_fill(init)
    if consumer is not None:
        shared = consumer.operands[len(consumer.operands) - 1]
    else:
        shared = tensor.EmptyOp(out_type.shape, element).result if fresh else init
    forall = scf.ForallOp([0], [n], [1], [shared])
    image, out = forall.body.arguments
    with ir.InsertionPoint(forall.body):
        one = ir.RankedTensorType.get([1, c, h, wd], element)
        picture = tensor.extract_slice(one, source, [image], [], [], [_DYNAMIC, 0, 0, 0], one.shape, [1] * 4)
        part_type = ir.RankedTensorType.get([1, f, oh, ow], element)
        if fresh:
            zero = arith.constant(element, ir.FloatAttr.get(element, 0.0))
            part = linalg.fill(zero, outs=[tensor.EmptyOp(part_type.shape, element).result])
        else:
            part = _image_slice(init, ir.AffineMap.get_identity(4), image)
        if consumer is not None:
            # its operands' slices before the convolution (epilogues.py takes the terms
            # computed before it into its init)
            maps = [ir.AffineMapAttr(m).value for m in consumer.attributes["indexing_maps"]]
            inputs = [None if v == conv else _image_slice(v, m, image)
                      for v, m in zip(list(consumer.operands)[:-1], maps)]
            into = _image_slice(out, maps[-1], image)
        padded = zero_padded(picture, high, low)
        result = convolve(padded, part)
        _erase_if_unused(padded)  # the phases are copied from the picture itself
        if consumer is not None:
            applied = linalg.GenericOp([part_type], [result if v is None else v for v in inputs], [into],
                                       consumer.attributes["indexing_maps"], consumer.attributes["iterator_types"])
            consumer.regions[0].blocks[0].append_to(applied.regions[0])
            result = applied.result
        done = scf.InParallelOp()
        with ir.InsertionPoint(done.region.blocks[0]):
            tensor.ParallelInsertSliceOp(result, out, [image], [], [], [_DYNAMIC, 0, 0, 0], part_type.shape, [1] * 4)
    return forall.results[0]


def _rewrite(op: ir.Operation, lanes: int, threads: int) -> None:
    x, w, init = op.operands[0], op.operands[1], op.operands[2]
    strides = dense_ints(op.attributes["strides"])
    dilations = dense_ints(op.attributes["dilations"])
    widened = ir.RankedTensorType(init.type).shape[-1] < lanes
    padding = _argument_padding(x, threads) if PER_IMAGE_PADS and not widened else None
    consumer = _elementwise_consumer(op.results[0]) if padding is not None else None
    replaced = op if consumer is None else consumer
    with ir.InsertionPoint(replaced), op.location:
        if widened:
            result = _widened(x, w, init, dilations, lanes)
        else:
            if strides == [1, 1]:
                filters = _filters(w)

                def convolve(image: ir.Value, acc: ir.Value) -> ir.Value:
                    return _direct(image, w, acc, dilations, filters=filters)
            else:
                phase_filters = _phase_filters(w, strides)

                def convolve(image: ir.Value, acc: ir.Value) -> ir.Value:
                    return _by_phases(image, w, acc, strides, phase_filters)
            result = (convolve(x, init) if padding is None else
                      _image_by_image(*padding, init, convolve, op.results[0], consumer))
    replaced.results[0].replace_all_uses_with(result)
    if consumer is not None:
        consumer.erase()
    op.erase()
    _erase_if_unused(x)  # the batch's pad, where each image pads its own


def _erase_if_unused(value: ir.Value) -> None:
    if not any(True for _ in value.uses):
        value.owner.erase()


def direct_convolutions(module: ir.Module, target: CpuTarget, threads: int = 1) -> int:
    """Rewrite every qualifying ``linalg.conv_2d_nchw_fchw`` of ``module`` (for code running on
    ``threads`` threads); the count."""
    with module.context:
        found = ops_where(module, lambda op: _qualifies(op, target.lanes))
        for op in found:
            element = ir.RankedTensorType(op.operands[2].type).element_type
            _rewrite(op, target.lanes(element.width // 8), threads)
    return len(found)
