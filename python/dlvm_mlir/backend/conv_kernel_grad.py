"""Kernel gradients of 2-D convolutions without an im2col copy: vectors along the filters,
or lane-wise partial sums.

AD writes the kernel gradient of ``y = conv(x, k)`` as a convolution whose
"images" are the input's channels, whose "channels" are the batch and whose
"filter" is the output cotangent: ``dk[b, f, i, j] = sum_{q, u, v}
x[b, q, i + u, j + v] * dy[f, q, u, v]`` (``b``: input channel, ``q``: image,
``(i, j)``: the filter tap, ``(u, v)``: an output pixel).  Its output is tiny
(the filter's taps) and its reduction long (every pixel of the batch), so the
im2col rewrite's flat matmul copies the input once per tap into a column
matrix first.

**Along the filters** (at least a vector of filters, and
:data:`MIN_FILTER_FORM_CHANNELS` input channels where the other form applies):
the cotangent is copied
once with the filters innermost, ``dyT[q, u, v, f]``, and

    out[b, i, j, f] = sum_{q, u, v} x[b, q, i + u, j + v] * dyT[q, u, v, f]

is one ``linalg.generic`` (an explicit ``math.fma``) whose schedule
(``_kernel_gradient_filters_plan`` in :mod:`.schedule`) takes a register tile of
6 input channels by 4 vectors of filters for one tap: once its unit loops are
folded, per pixel 6 broadcast input values times 4 loaded cotangent vectors,
24 FMAs on accumulators that stay in registers for a chunk of images.  Its
result is transposed to the filter's layout (a copy of the filter's size).

**Lane-wise partial sums** (fewer filters, grouped and depthwise layers, whose
groups pair one channel with one filter): the output row ``v`` is split into
vectors, ``v = vb * L + l`` with ``L`` lanes, and the lanes become a parallel
loop of partial sums:

    part[b, f, i, j, l] = sum_{q, u, vb} x[b, q, i + u, j + vb * L + l] * dy5[f, q, u, vb, l]
    dk[b, f, i, j]      = sum_l part[b, f, i, j, l]

``dy5`` is ``dy`` with its rows split into vectors (a reshape).  The schedule
(``_kernel_gradient_plan`` in :mod:`.schedule`) gives each register tile a few
input channels by a few filters, one tap and all ``L`` lanes; once its unit
loops are folded, a tile is ``acc[b, f, :] += x_row[b, :] * dy_row[f, :]``, one
FMA per pair of loaded vectors.  Its partial sums (``L`` per output) go
through memory once per chunk of images: on 128 x 128 channels at 16x16 the
filters form ran at 103 GFLOP/s on one core where this one ran at 77-88.

Operands produced by a ``linalg.transpose`` (AD transposes both to put the
channels in the batch's place) are read through the transpose's input with
permuted indexing maps instead of being copied.  Applies to convolutions with
unit strides and dilations and fewer than :data:`.conv_im2col.MIN_IMAGE` output
pixels, with a vector of filters or filter rows a whole number of vectors
long; others keep im2col.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, linalg, math, tensor

from .analysis import SCHEDULE_HINT_ATTR
from .conv_im2col import MIN_IMAGE, build_generic, describe_convolution
from .linalg_rewrite import affine_maps, defining_op, dense_ints, map_dims, ops_where, reassociation
from .target import CpuTarget

__all__ = ["kernel_gradient_convolutions"]


GROUPED = "linalg.conv_2d_ngchw_gfchw"
#: fewest input channels (the kernel-gradient convolution's batch) for the form along the filters
MIN_FILTER_FORM_CHANNELS = 6
#: split a kernel gradient along the filters over its images, one part per thread
IMAGE_PARTS = True
#: fewest images per part
MIN_PART_IMAGES = 2


def _form(op: ir.Operation, target: CpuTarget) -> tuple[str, int] | None:
    """How the rewrite computes ``op`` (``"filters"`` or ``"lanes"``) and the vector length,
    or None if ``op`` does not qualify."""
    if op.name == GROUPED:  # x[b, g, q, h, w], k[g, f, q, u, v], y[b, g, f, i, j]
        types = [ir.RankedTensorType(v.type) for v in op.operands[:3]]
        element = types[2].element_type
        if not all(t.has_static_shape and t.element_type == element for t in types) or not isinstance(
                element, ir.FloatType):
            return None
        unit = (dense_ints(op.attributes["strides"]), dense_ints(op.attributes["dilations"])) == ([1, 1], [1, 1])
        p, kw, filters = types[2].shape[3] * types[2].shape[4], types[1].shape[4], 0
    else:
        conv = describe_convolution(op)
        if conv is None:
            return None
        element, p, kw, filters, channels = conv.element, conv.p, conv.kw, conv.f, conv.n
        unit = conv.strides == (1, 1) and conv.dilations == (1, 1)
    lanes = target.lanes(element.width // 8)
    if not unit or p >= MIN_IMAGE:
        return None
    # a first layer's 3 input channels fill no register tile along the filters (49 GFLOP/s
    # there against 74 as lane sums)
    if filters >= lanes and (channels >= MIN_FILTER_FORM_CHANNELS or kw % lanes):
        return "filters", lanes
    return ("lanes", lanes) if kw % lanes == 0 else None


def _producer(value: ir.Value, name: str) -> ir.Operation | None:
    op = defining_op(value)
    return op if op is not None and op.name == name else None


def _permutation(op: ir.Operation | None) -> list[int] | None:
    """For a transpose (``linalg.transpose``, or the copy generic the fuse stage generalizes
    it to): ``permutation[k]``, the input dimension that result dimension ``k`` reads."""
    if op is None:
        return None
    if op.name == "linalg.transpose":
        return list(ir.DenseI64ArrayAttr(op.attributes["permutation"]))
    if op.name != "linalg.generic" or len(op.operands) != 2 or len(op.results) != 1:
        return None
    body = list(op.regions[0].blocks[0].operations)
    if len(body) != 1 or body[0].operands[0] != op.regions[0].blocks[0].arguments[0]:
        return None
    maps = [ir.AffineMapAttr(a).value for a in op.attributes["indexing_maps"]]
    source, result = (map_dims(m) for m in maps)
    if source is None or result is None or sorted(source) != list(range(len(source))) or sorted(result) != sorted(source):
        return None
    return [source.index(loop) for loop in result]


def _through_transpose(value: ir.Value, exprs: list[ir.AffineExpr]) -> tuple[ir.Value, list[ir.AffineExpr]]:
    """Read ``value[exprs]`` through the input of the transpose that produced ``value``
    (directly, or under a ``tensor.pad`` with static padding, then padded in the input's
    layout instead), if one did."""
    pad = _producer(value, "tensor.pad")
    inner = pad.operands[0] if pad is not None else value
    transpose = _producer(inner, "linalg.transpose") or _producer(inner, "linalg.generic")
    permutation = _permutation(transpose)
    if transpose is None or permutation is None or (pad is not None and len(pad.operands) != 1):
        return value, exprs
    source = transpose.operands[0]

    def placed(values: list) -> list:  # result dim k is source dim permutation[k]
        out = list(values)
        for k, source_dim in enumerate(permutation):
            out[source_dim] = values[k]
        return out

    if pad is not None:  # pad(transpose(v)) read as pad'(v)
        low = placed(list(ir.DenseI64ArrayAttr(pad.attributes["static_low"])))
        high = placed(list(ir.DenseI64ArrayAttr(pad.attributes["static_high"])))
        shape = [n + lo + hi for n, lo, hi in zip(ir.RankedTensorType(source.type).shape, low, high)]
        padded = pad.clone()
        padded.operands[0] = source
        padded.attributes["static_low"] = ir.DenseI64ArrayAttr.get(low)
        padded.attributes["static_high"] = ir.DenseI64ArrayAttr.get(high)
        padded.results[0].set_type(ir.RankedTensorType.get(shape, ir.RankedTensorType(source.type).element_type))
        source = padded.results[0]
    return source, placed(exprs)


def _split_dim(value: ir.Value, dim: int, parts: int) -> ir.Value:
    """``value`` with dimension ``dim`` split into ``[parts, n / parts]`` (a reshape)."""
    source = ir.RankedTensorType(value.type)
    shape = list(source.shape)
    new_shape = shape[:dim] + [parts, shape[dim] // parts] + shape[dim + 1:]
    groups = [[d] for d in range(dim)] + [[dim, dim + 1]] + [[d + 1] for d in range(dim + 1, len(shape))]
    return tensor.expand_shape(ir.RankedTensorType.get(new_shape, source.element_type), value,
                               reassociation(groups), [], new_shape)


def _split_rows(value: ir.Value, lanes: int) -> ir.Value:
    """``value[..., v]`` as ``value[..., v // lanes, v % lanes]`` (a reshape)."""
    shape = ir.RankedTensorType(value.type).shape
    return _split_dim(value, len(shape) - 1, shape[-1] // lanes)


def _rewrite(op: ir.Operation, lanes: int) -> None:
    x, k, init = op.operands[0], op.operands[1], op.operands[2]
    shape = list(ir.RankedTensorType(init.type).shape)
    element = ir.RankedTensorType(init.type).element_type
    grouped = op.name == GROUPED
    parallel = len(shape) + 1  # the output's loops and the lane
    d = [ir.AffineDimExpr.get(i) for i in range(parallel + 3)]  # b, (g,) f, i, j, l | q, u, vb
    db, groups, (df, di, dj, dl), (dq, du, dvb) = d[0], d[1:1 + grouped], d[1 + grouped:parallel], d[parallel:]
    row = dvb * lanes + dl
    with ir.InsertionPoint(op), op.location:
        x_value, x_exprs = _through_transpose(x, [db, *groups, dq, di + du, dj + row])
        k_value, k_exprs = _through_transpose(k, [*groups, df, dq, du, row])
        if k_exprs[-1] != row:  # the transpose moved the filter's rows: split them after it
            k_value, k_exprs = k, [*groups, df, dq, du, row]
        rows = _split_rows(k_value, lanes)
        k_map = k_exprs[:-1] + [dvb, dl]
        zero = arith.constant(element, 0.0)
        empty = tensor.EmptyOp(shape + [lanes], element).result
        partial_init = linalg.fill(zero, outs=[empty])
        maps = affine_maps(*(ir.AffineMap.get(len(d), 0, exprs) for exprs in (x_exprs, k_map, d[:parallel])))
        # an explicit fma: vectorized as is, where a multiply and an add stay two instructions
        partial = build_generic([x_value, rows], partial_init, maps, ["parallel"] * parallel + ["reduction"] * 3,
                                lambda pixel, gradient, acc: math.fma(pixel, gradient, acc))
        partial.owner.attributes[SCHEDULE_HINT_ATTR] = ir.StringAttr.get("kernel-gradient")
        e = [ir.AffineDimExpr.get(i) for i in range(parallel)]
        total = build_generic([partial], init, affine_maps(ir.AffineMap.get_identity(parallel),
                                                           ir.AffineMap.get(parallel, 0, e[:-1])),
                              ["parallel"] * (parallel - 1) + ["reduction"], lambda lane, acc: arith.addf(acc, lane))
    op.results[0].replace_all_uses_with(total)
    op.erase()


def image_parts(images: int, threads: int) -> int:
    """How many parts of the images a kernel gradient along the filters sums separately
    (1: not split): one per thread where the images divide evenly, each part at least
    :data:`MIN_PART_IMAGES` images.  (The "images" are the reduction's outer loop ``q``:
    the batch of a kernel gradient, the input channels of a small forward convolution
    that takes this form.)"""
    if not IMAGE_PARTS or threads < 2 or images % threads or images // threads < MIN_PART_IMAGES:
        return 1
    return threads


def _rewrite_along_filters(op: ir.Operation, lanes: int, threads: int) -> None:
    """``dk[b, f, i, j] = sum_{q, u, v} x[b, q, i + u, j + v] * dyT[q, u, v, f]``, transposed
    to ``init``'s layout (the module docstring's first form).  The filters are padded with
    zeros to whole vectors (90 filters: 96), whose tiles vectorize where a remainder of a
    few filters did not (one core, 90 -> 90 channels at 16x16: 58 -> 95 GFLOP/s).  With
    several threads the images are split into :func:`image_parts` parts, a parallel loop
    ``p`` of partial gradients ``out[p, b, i, j, f]`` summed by the transpose."""
    x, k, init = op.operands[0], op.operands[1], op.operands[2]
    b, f, oh, ow = ir.RankedTensorType(init.type).shape
    _, q, u, v = ir.RankedTensorType(k.type).shape
    element = ir.RankedTensorType(init.type).element_type
    padded = -(-f // lanes) * lanes
    parts = image_parts(q, threads)
    split = parts > 1
    rank = 7 + split
    dims = [ir.AffineDimExpr.get(i) for i in range(rank)]
    db, di, dj, df, dq, du, dv = dims[split:]
    image = dims[:split] + [dq]  # the image (its part and its index in the part)
    with ir.InsertionPoint(op), op.location:
        zero = arith.constant(element, 0.0)
        x_value, x_exprs = _through_transpose(x, [db, dq, di + du, dj + dv])
        if split:
            at = x_exprs.index(dq)
            x_value, x_exprs = _split_dim(x_value, at, parts), x_exprs[:at] + image + x_exprs[at + 1:]
        # dyT[q, u, v, f] = k[f, q, u, v], read through AD's transpose of the cotangent
        e = [ir.AffineDimExpr.get(i) for i in range(4)]
        k_value, k_exprs = _through_transpose(k, [e[3], e[0], e[1], e[2]])
        slot = whole = tensor.EmptyOp([q, u, v, padded], element).result
        if padded != f:
            whole = linalg.fill(zero, outs=[whole])
            slot = tensor.extract_slice(ir.RankedTensorType.get([q, u, v, f], element), whole, [], [], [],
                                        [0] * 4, [q, u, v, f], [1] * 4)
        dyt = build_generic([k_value], slot, affine_maps(ir.AffineMap.get(4, 0, k_exprs), ir.AffineMap.get_identity(4)),
                            ["parallel"] * 4, lambda value, _: value)
        if padded != f:
            dyt = tensor.insert_slice(dyt, whole, [], [], [], [0] * 4, [q, u, v, f], [1] * 4)
        if split:
            dyt = _split_dim(dyt, 0, parts)
        lead = [parts] if split else []
        acc = linalg.fill(zero, outs=[tensor.EmptyOp(lead + [b, oh, ow, padded], element).result])
        maps = affine_maps(ir.AffineMap.get(rank, 0, x_exprs), ir.AffineMap.get(rank, 0, image + [du, dv, df]),
                           ir.AffineMap.get(rank, 0, dims[:split] + [db, di, dj, df]))
        out = build_generic([x_value, dyt], acc, maps, ["parallel"] * (4 + split) + ["reduction"] * 3,
                            lambda pixel, gradient, a: math.fma(pixel, gradient, a))
        out.owner.attributes[SCHEDULE_HINT_ATTR] = ir.StringAttr.get("kernel-gradient-filters")
        if padded != f:
            out = tensor.extract_slice(ir.RankedTensorType.get(lead + [b, oh, ow, f], element), out, [], [], [],
                                       [0] * (4 + split), lead + [b, oh, ow, f], [1] * (4 + split))
        # the filter's layout (and the sum of the parts): loops b, f, i, j (| p)
        g = [ir.AffineDimExpr.get(i) for i in range(4 + split)]
        maps = affine_maps(ir.AffineMap.get(4 + split, 0, g[4:] + [g[0], g[2], g[3], g[1]]),
                           ir.AffineMap.get(4 + split, 0, g[:4]))
        total = build_generic([out], init, maps, ["parallel"] * 4 + ["reduction"] * split,
                              lambda value, a: arith.addf(a, value) if split else value)
    op.results[0].replace_all_uses_with(total)
    op.erase()


def kernel_gradient_convolutions(module: ir.Module, target: CpuTarget, threads: int = 1) -> int:
    """Rewrite every qualifying convolution of ``module`` (a kernel gradient's form, for
    ``threads`` threads); the count."""
    with module.context:
        found = [(op, form) for op in ops_where(module, lambda op: _form(op, target) is not None)
                 if (form := _form(op, target)) is not None]
        for op, (kind, lanes) in found:
            if kind == "filters":
                _rewrite_along_filters(op, lanes, threads)
            else:
                _rewrite(op, lanes)
    return len(found)
