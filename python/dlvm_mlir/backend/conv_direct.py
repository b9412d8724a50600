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
one (:func:`_widened`).  Dilated strided convolutions keep the im2col rewrite
(their input rows would be read with a stride), as do convolutions whose output
rows are at most 3/4 of a vector.

Measured on Nov 27 (batch 32, 2 threads, Zen 4; ``benchmarks/bench_conv.py``):
3x3 64->64 at 32x32 forward 22.6 -> 13.7 ms (oneDNN 12.6-13.6), its input
gradient 22-47 -> 14.8 ms; 3x3 128->128 at 16x16 forward 19.2 -> 13.0 ms.  A
first layer (64 images, one channel, 28x28, 16 filters) 1.38 -> 0.27 ms.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, linalg, tensor

from .analysis import SCHEDULE_HINT_ATTR
from .conv_im2col import build_generic, describe_convolution
from .linalg_rewrite import affine_maps, dense_ints, ops_where
from .phases import column_phases, phase_slice, zero_padded
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


def _direct(x: ir.Value, w: ir.Value, init: ir.Value, dilations: list[int], row_stride: int = 1) -> ir.Value:
    """The convolution ``init + conv(x, w)``, unit stride along the rows, as the direct generic."""
    f, c, kh, kw = ir.RankedTensorType(w.type).shape
    element = ir.RankedTensorType(init.type).element_type
    dh, dw = dilations
    d = [ir.AffineDimExpr.get(i) for i in range(7)]  # n, f, oh, ow, c, kh, kw
    maps = affine_maps(
        ir.AffineMap.get(7, 0, [d[0], d[4], d[2] * row_stride + d[5] * dh, d[3] + d[6] * dw]),
        ir.AffineMap.get(7, 0, [d[1], d[5], d[6], d[4]]),
        ir.AffineMap.get(7, 0, [d[0], d[1], d[2], d[3]]),
    )
    empty = tensor.EmptyOp([f, kh, kw, c], element).result
    filters = linalg.transpose(w, outs=[empty], permutation=[0, 2, 3, 1]).results[0]
    result = build_generic([x, filters], init, maps, ["parallel"] * 4 + ["reduction"] * 3,
                           lambda pixel, weight, acc: arith.addf(acc, arith.mulf(weight, pixel)))
    result.owner.attributes[SCHEDULE_HINT_ATTR] = ir.StringAttr.get("direct-convolution")
    return result


def _strided_slice(value: ir.Value, offsets: list[int], sizes: list[int], strides: list[int]) -> ir.Value:
    element = ir.RankedTensorType(value.type).element_type
    return tensor.extract_slice(ir.RankedTensorType.get(sizes, element), value, [], [], [], offsets, sizes, strides)


def _by_phases(x: ir.Value, w: ir.Value, init: ir.Value, strides: list[int]) -> ir.Value:
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
    columns, 7.3 with the pad's copy folded into the phases' copy.
    """
    n, c, _, _ = ir.RankedTensorType(x.type).shape
    f, _, kh, kw = ir.RankedTensorType(w.type).shape
    _, _, oh, ow = ir.RankedTensorType(init.type).shape
    sh, sw = strides
    phases, shift = column_phases(x, sw, min(sw, kw))
    result = init
    for b in range(min(sw, kw)):
        tw = -(-(kw - b) // sw)
        phase = phase_slice(phases, (1, sw), [0, 0, 0, b + shift], [n, c, (oh - 1) * sh + kh, ow + tw - 1])
        taps = _strided_slice(w, [0, 0, 0, b], [f, c, kh, tw], [1, 1, 1, sw])
        result = _direct(phase, taps, result, [1, 1], row_stride=sh)
    return result


def _rewrite(op: ir.Operation, lanes: int) -> None:
    x, w, init = op.operands[0], op.operands[1], op.operands[2]
    strides = dense_ints(op.attributes["strides"])
    with ir.InsertionPoint(op), op.location:
        if ir.RankedTensorType(init.type).shape[-1] < lanes:
            result = _widened(x, w, init, dense_ints(op.attributes["dilations"]), lanes)
        elif strides == [1, 1]:
            result = _direct(x, w, init, dense_ints(op.attributes["dilations"]))
        else:
            result = _by_phases(x, w, init, strides)
    op.results[0].replace_all_uses_with(result)
    op.erase()


def direct_convolutions(module: ir.Module, target: CpuTarget) -> int:
    """Rewrite every qualifying ``linalg.conv_2d_nchw_fchw`` of ``module``; the count."""
    with module.context:
        found = ops_where(module, lambda op: _qualifies(op, target.lanes))
        for op in found:
            element = ir.RankedTensorType(op.operands[2].type).element_type
            _rewrite(op, target.lanes(element.width // 8))
    return len(found)
