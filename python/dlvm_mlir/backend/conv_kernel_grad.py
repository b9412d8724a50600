"""Kernel gradients of 2-D convolutions as lane-wise partial sums (no im2col copy).

AD writes the kernel gradient of ``y = conv(x, k)`` as a convolution whose
"images" are the input's channels, whose "channels" are the batch and whose
"filter" is the output cotangent: ``dk[b, f, i, j] = sum_{q, u, v}
x[b, q, i + u, j + v] * dy[f, q, u, v]`` (``b``: input channel, ``q``: image,
``(i, j)``: the filter tap, ``(u, v)``: an output pixel).  Its output is tiny
(the filter's taps) and its reduction long (every pixel of the batch), so the
im2col rewrite's flat matmul copies the input once per tap into a column
matrix first.

Here the output row ``v`` is split into vectors, ``v = vb * L + l`` with ``L``
lanes, and the lanes become a parallel loop of partial sums:

    part[b, f, i, j, l] = sum_{q, u, vb} x[b, q, i + u, j + vb * L + l] * dy5[f, q, u, vb, l]
    dk[b, f, i, j]      = sum_l part[b, f, i, j, l]

``dy5`` is ``dy`` with its rows split into vectors (a reshape).  The schedule
(``_kernel_gradient_plan`` in :mod:`.schedule`) gives each register tile a few
input channels by a few filters, one tap and all ``L`` lanes; once its unit
loops are folded, a tile is ``acc[b, f, :] += x_row[b, :] * dy_row[f, :]``, one
FMA per pair of loaded vectors, with the accumulators in registers for the
tile's whole share of the reduction, the batch loop outermost so that one
image's input and cotangent stay in cache.

Operands produced by a ``linalg.transpose`` (AD transposes both to put the
channels in the batch's place) are read through the transpose's input with
permuted indexing maps instead of being copied.  Applies to convolutions with
unit strides and dilations, fewer than :data:`.conv_im2col.MIN_IMAGE` output
pixels and filter rows a whole number of vectors long; others keep im2col.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, linalg, math, tensor

from .analysis import SCHEDULE_HINT_ATTR
from .conv_im2col import MIN_IMAGE, build_generic, describe_convolution
from .linalg_rewrite import affine_maps, dense_ints, map_dims, ops_where, reassociation
from .target import CpuTarget

__all__ = ["kernel_gradient_convolutions"]


GROUPED = "linalg.conv_2d_ngchw_gfchw"


def _lanes(op: ir.Operation, target: CpuTarget) -> int | None:
    """The vector length the rewrite splits the filter rows by, or None if ``op`` does not qualify."""
    if op.name == GROUPED:  # x[b, g, q, h, w], k[g, f, q, u, v], y[b, g, f, i, j]
        types = [ir.RankedTensorType(v.type) for v in op.operands[:3]]
        element = types[2].element_type
        if not all(t.has_static_shape and t.element_type == element for t in types) or not isinstance(
                element, ir.FloatType):
            return None
        unit = (dense_ints(op.attributes["strides"]), dense_ints(op.attributes["dilations"])) == ([1, 1], [1, 1])
        p, kw = types[2].shape[3] * types[2].shape[4], types[1].shape[4]
    else:
        conv = describe_convolution(op)
        if conv is None:
            return None
        element, p, kw = conv.element, conv.p, conv.kw
        unit = conv.strides == (1, 1) and conv.dilations == (1, 1)
    lanes = target.lanes(element.width // 8)
    return lanes if unit and p < MIN_IMAGE and kw % lanes == 0 else None


def _producer(value: ir.Value, name: str) -> ir.Operation | None:
    owner = value.owner
    if hasattr(owner, "operation"):
        owner = owner.operation
    return owner if isinstance(owner, ir.Operation) and owner.name == name else None


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


def _split_rows(value: ir.Value, lanes: int) -> ir.Value:
    """``value[..., v]`` as ``value[..., v // lanes, v % lanes]`` (a reshape)."""
    shape = list(ir.RankedTensorType(value.type).shape)
    rank = len(shape)
    new_shape = shape[:-1] + [shape[-1] // lanes, lanes]
    element = ir.RankedTensorType(value.type).element_type
    groups = [[d] for d in range(rank - 1)] + [[rank - 1, rank]]
    return tensor.expand_shape(ir.RankedTensorType.get(new_shape, element), value, reassociation(groups), [],
                               new_shape)


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


def kernel_gradient_convolutions(module: ir.Module, target: CpuTarget) -> int:
    """Rewrite every qualifying convolution of ``module`` (a kernel gradient's form); the count."""
    with module.context:
        found = [(op, lanes) for op in ops_where(module, lambda op: _lanes(op, target) is not None)
                 if (lanes := _lanes(op, target)) is not None]
        for op, lanes in found:
            _rewrite(op, lanes)
    return len(found)
