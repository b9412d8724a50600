"""Strided slices of a tensor as views of one copy of its phases.

A slice with a stride ``s`` in its innermost dimension (every other column of an
image: a strided convolution's phases, AD's per-phase parts of its kernel
gradient) reads memory with a stride; a copy of it is not vectorized and runs
as scalar loops.  Phase ``(a, b)`` of a tensor ``x[..., h, w]`` under strides
``(sh, sw)`` in its last two dimensions is ``x[..., i * sh + a, j * sw + b]``;
one copy writes every phase,

    xp[a, b, ..., i, j] = x[..., i * sh + a, j * sw + b]

reading ``x`` contiguously (viewed as ``[..., h / sh, sh, w / sw, sw]``) and
writing it transposed, which the generic schedule vectorizes.  A strided slice
is then a view of one phase with unit strides.  Sizes that are not a multiple
of the stride are padded first (with zeros no slice reads).  Only where the
slices of a value read at least half of the phases the copy writes (a small
slice of a large tensor keeps its own copy).
"""

from __future__ import annotations

import math

from mlir import ir
from mlir.dialects import arith, linalg, tensor

from .conv_im2col import build_generic
from .analysis import use_owner
from .linalg_rewrite import affine_maps, defining_op, ops_where, reassociation, zero_constant

__all__ = ["column_phases", "phase_slice", "phase_split", "strided_slices_as_phases", "zero_padded", "zero_padding"]


def zero_padded(value: ir.Value, high: list[int], low: list[int] | None = None) -> ir.Value:
    """``value`` with ``high[d]`` zeros appended (and ``low[d]`` prepended) along each dimension
    ``d`` (a ``tensor.pad``)."""
    shape = list(ir.RankedTensorType(value.type).shape)
    element = ir.RankedTensorType(value.type).element_type
    low = low or [0] * len(shape)
    # the padding value defined outside the pad's body: scheduled_copies then rewrites the
    # pad into a scheduled fill and copy (one in the body stayed bufferization's serial pad)
    zero = _zero(element)
    padded = tensor.pad(ir.RankedTensorType.get([n + e + b for n, e, b in zip(shape, high, low)], element), value,
                        [], [], low, high)
    with ir.InsertionPoint(padded.owner.regions[0].blocks.append(*[ir.IndexType.get()] * len(shape))):
        tensor.YieldOp(zero)
    return padded


def _zero(element: ir.Type) -> ir.Value:
    zero = ir.FloatAttr.get(element, 0.0) if isinstance(element, ir.FloatType) else ir.IntegerAttr.get(element, 0)
    return arith.constant(element, zero)


def phase_split(x: ir.Value, strides: tuple[int, int], used: tuple[int, int], out: ir.Value | None = None) -> ir.Value:
    """``xp[a, b, ..., i, j] = x[..., i * sh + a, j * sw + b]`` for the first ``used`` row and
    column phases ``a`` and ``b`` (one vectorized copy, into ``out`` if given)."""
    shape = list(ir.RankedTensorType(x.type).shape)
    element = ir.RankedTensorType(x.type).element_type
    lead, (h, w), (sh, sw) = shape[:-2], shape[-2:], strides
    rank = len(shape)
    extra = [-h % sh, -w % sw]
    if any(extra):
        h, w = h + extra[0], w + extra[1]
        x = zero_padded(x, [0] * (rank - 2) + extra)
    split_shape = lead + [h // sh, sh, w // sw, sw]
    groups = [[d] for d in range(rank - 2)] + [[rank - 2, rank - 1], [rank, rank + 1]]
    split = tensor.expand_shape(ir.RankedTensorType.get(split_shape, element), x, reassociation(groups), [],
                                split_shape)
    if tuple(used) != (sh, sw):
        split_shape = lead + [h // sh, used[0], w // sw, used[1]]
        split = tensor.extract_slice(ir.RankedTensorType.get(split_shape, element), split, [], [], [],
                                     [0] * (rank + 2), split_shape, [1] * (rank + 2))
    d = [ir.AffineDimExpr.get(k) for k in range(rank + 2)]  # ..., i, a, j, b
    i, a, j, b = d[rank - 2:]
    maps = affine_maps(ir.AffineMap.get_identity(rank + 2), ir.AffineMap.get(rank + 2, 0, [a, b, *d[:rank - 2], i, j]))
    if out is None:
        out = tensor.EmptyOp([used[0], used[1], *lead, h // sh, w // sw], element).result
    return build_generic([split], out, maps, ["parallel"] * (rank + 2), lambda value, _: value)


def zero_padding(value: ir.Value) -> tuple[ir.Value, list[int], list[int]] | None:
    """``(source, low, high)`` when ``value`` is a static ``tensor.pad`` of ``source`` with zeros."""
    op = defining_op(value)
    if op is None or op.name != "tensor.pad" or len(op.operands) != 1:
        return None
    if not zero_constant(list(op.regions[0].blocks[0].operations)[0].operands[0]):
        return None
    return (op.operands[0], list(ir.DenseI64ArrayAttr(op.attributes["static_low"])),
            list(ir.DenseI64ArrayAttr(op.attributes["static_high"])))


def column_phases(x: ir.Value, stride: int, used: int) -> tuple[ir.Value, int]:
    """The column phases of ``x``, ``(phases, shift)``: column ``p`` of ``x`` is column
    ``(p + shift) // stride`` of ``phases[0, (p + shift) % stride, ...]``.

    When ``x`` pads a value with zeros, the phases are copied from that value straight into
    the interior of a zeroed tensor (one copy instead of the pad's and the split's): its
    left padding is rounded up to a multiple of the stride, which shifts the phases by
    ``shift`` columns.  Otherwise ``shift`` is 0 and the first ``used`` phases are copied."""
    padding = zero_padding(x)
    if padding is None or used < stride or any(padding[1][:-2] + padding[2][:-2]):
        return phase_split(x, (1, stride), (1, used)), 0
    source, low, high = padding
    shape = list(ir.RankedTensorType(source.type).shape)
    lead, (h, w) = shape[:-2], shape[-2:]
    shift = -low[-1] % stride
    left = (low[-1] + shift) // stride  # columns of each phase left of the source's
    columns = left + -(-(w + high[-1]) // stride)
    rows = low[-2] + h + high[-2]
    whole = [1, stride, *lead, rows, columns]
    offsets = [0, 0, *[0] * len(lead), low[-2], left]
    sizes = [1, stride, *lead, h, -(-w // stride)]
    return _phases_in_zeros(source, (1, stride), (1, stride), whole, offsets, sizes), shift


def _phases_in_zeros(source: ir.Value, strides: tuple[int, int], used: tuple[int, int], whole: list[int],
                     offsets: list[int], sizes: list[int]) -> ir.Value:
    """:func:`phase_split` of ``source`` (``sizes``) at ``offsets`` in a zeroed tensor of shape
    ``whole``."""
    element = ir.RankedTensorType(source.type).element_type
    zeros = linalg.fill(_zero(element), outs=[tensor.EmptyOp(whole, element).result])
    ones = [1] * len(sizes)
    window = tensor.extract_slice(ir.RankedTensorType.get(sizes, element), zeros, [], [], [], offsets, sizes, ones)
    phases = phase_split(source, strides, used, out=window)
    return tensor.insert_slice(phases, zeros, [], [], [], offsets, sizes, ones)


def phase_slice(phases: ir.Value, strides: tuple[int, int], offsets: list[int], sizes: list[int]) -> ir.Value:
    """``x[offsets :: (1, ..., sh, sw)][:sizes]`` (a slice of ``x`` with unit strides but in its
    last two dimensions) as a view of ``phases = phase_split(x, strides, ...)``."""
    (sh, sw), (oh, ow) = strides, offsets[-2:]
    element = ir.RankedTensorType(phases.type).element_type
    return tensor.extract_slice(ir.RankedTensorType.get(sizes, element), phases, [], [], [],
                                [oh % sh, ow % sw, *offsets[:-2], oh // sh, ow // sw], [1, 1, *sizes],
                                [1] * (len(sizes) + 2))


def _strided(op: ir.Operation) -> tuple[int, int] | None:
    """The last two strides of a static ``tensor.extract_slice`` strided (only) there, innermost
    stride > 1 and no rank reduction, else None."""
    if op.name != "tensor.extract_slice" or len(op.operands) != 1:
        return None
    source, result = (ir.RankedTensorType(v.type) for v in (op.operands[0], op.results[0]))
    strides = list(ir.DenseI64ArrayAttr(op.attributes["static_strides"]))
    if (source.rank < 2 or result.rank != source.rank or not source.has_static_shape or strides[-1] <= 1
            or any(s != 1 for s in strides[:-2])):
        return None
    return strides[-2], strides[-1]


#: keep zero rows and columns before each phase where the views' zero pads need them (AD pads
#: three of the four phases of a stride-2 convolution's input for its kernel gradient); the
#: pads become views (``ab_variants.py --conv 3x3-s2 dk``, in turns: 5.89 -> 5.63 ms and
#: 5.44 -> 5.18 ms; each pad was a fill and a copy of a 2 MB phase)
HALOED_PHASES = True


def strided_slices_as_phases(module: ir.Module) -> int:
    """Rewrite the static slices of ``module`` that are strided in their innermost dimension
    as views of one phase copy per sliced value and strides; the count."""
    with module.context:
        groups: dict[tuple, list[ir.Operation]] = {}
        for op in ops_where(module, lambda op: _strided(op) is not None):
            groups.setdefault((op.operands[0], _strided(op)), []).append(op)
        count = 0
        for (source, strides), slices in groups.items():
            first = slices[0]
            if any(s.parent != first.parent for s in slices):
                continue
            count += len(slices)
            offsets = [list(ir.DenseI64ArrayAttr(s.attributes["static_offsets"])) for s in slices]
            used = (min(strides[0], 1 + max(o[-2] % strides[0] for o in offsets)),
                    min(strides[1], 1 + max(o[-1] % strides[1] for o in offsets)))
            # the copy writes whole phases: only where the slices read most of them
            source_size = math.prod(ir.RankedTensorType(source.type).shape)
            copied = source_size * used[0] * used[1] // (strides[0] * strides[1])
            if 2 * sum(math.prod(ir.RankedTensorType(s.results[0].type).shape) for s in slices) < copied:
                continue
            halo = _halo(slices, offsets, strides) if HALOED_PHASES else (0, 0)
            with ir.InsertionPoint(first), first.location:
                phases = _haloed_phases(source, strides, used, halo) if any(halo) else phase_split(source, strides, used)
            for op, offset in zip(slices, offsets):
                sizes = list(ir.RankedTensorType(op.results[0].type).shape)
                with ir.InsertionPoint(op), op.location:
                    view = phase_slice(phases, strides, offset[:-2] + [offset[-2] + halo[0] * strides[0],
                                                                       offset[-1] + halo[1] * strides[1]], sizes)
                for pad in [use_owner(use) for use in op.results[0].uses] if any(halo) else []:
                    low = _low_zero_pad(pad, offset, strides) if pad.name == "tensor.pad" else None
                    if low is not None:
                        padded = list(ir.RankedTensorType(pad.results[0].type).shape)
                        with ir.InsertionPoint(pad), pad.location:
                            wide = phase_slice(phases, strides, offset[:-2] + [
                                offset[-2] + (halo[0] - low[0]) * strides[0],
                                offset[-1] + (halo[1] - low[1]) * strides[1]], padded)
                        pad.results[0].replace_all_uses_with(wide)
                        pad.erase()
                op.results[0].replace_all_uses_with(view)
                op.erase()
    return count


def _low_zero_pad(pad: ir.Operation, offset: list[int], strides: tuple[int, int]) -> tuple[int, int] | None:
    """(rows, columns) of zeros that ``pad`` puts before a phase view at ``offset`` (its first
    row and column the phase's first), if it pads with zeros only there and only along the
    last two dimensions, else None."""
    padding = zero_padding(pad.results[0])
    if padding is None:
        return None
    _, low, high = padding
    if any(high) or any(low[:-2]) or low[-2] > 1 or low[-1] > 1:
        return None
    if (low[-2] and offset[-2] >= strides[0]) or (low[-1] and offset[-1] >= strides[1]):
        return None  # zeros before a view that starts inside its phase would hide real rows
    return low[-2], low[-1]


def _halo(slices: list[ir.Operation], offsets: list[list[int]], strides: tuple[int, int]) -> tuple[int, int]:
    """Rows and columns of zeros to keep before each phase: what the zero pads of the views
    need (AD pads each phase of a strided convolution's input for its kernel gradient)."""
    rows = columns = 0
    for op, offset in zip(slices, offsets):
        for use in op.results[0].uses:
            pad = use_owner(use)
            low = _low_zero_pad(pad, offset, strides) if pad.name == "tensor.pad" else None
            if low is not None:
                rows, columns = max(rows, low[0]), max(columns, low[1])
    return rows, columns


def _haloed_phases(source: ir.Value, strides: tuple[int, int], used: tuple[int, int],
                   halo: tuple[int, int]) -> ir.Value:
    """:func:`phase_split` into a zeroed tensor with ``halo`` rows and columns before each
    phase, so that a view's zero pad there is a view too (no pad's fill and copy)."""
    shape = list(ir.RankedTensorType(source.type).shape)
    lead, (h, w), (sh, sw) = shape[:-2], shape[-2:], strides
    rows, columns = -(-h // sh), -(-w // sw)
    return _phases_in_zeros(source, strides, used, [*used, *lead, rows + halo[0], columns + halo[1]],
                            [0, 0, *[0] * len(lead), halo[0], halo[1]], [*used, *lead, rows, columns])
