"""Pack the streamed operand of large contractions into register-tile panels.

In ``C[m, n] += A[m, k] * B[k, n]`` the register tile reads, for every k, a
row segment ``B[k, n0 : n0 + RN]``.  Consecutive k are a whole row of B apart;
with power-of-two row lengths those segments all fall into the same few cache
sets and the kernel loses half its speed (1024x1024: about 50% of OpenBLAS
without packing, about 97% with it).  So, like BLAS libraries, B is copied
once into panels ``Bp[n / RN, k, RN]`` in which the k loop walks contiguous
memory, and the contraction reads the panels instead:

    Bp = transpose(expand_shape(B))              # [N/RN][K][RN], one copy
    Ce = generic(A, Bp) -> expand_shape(C_init)  # loops (.., m, nb, k, j)
    C  = collapse_shape(Ce)

The copy costs K*N element moves against M*N*K multiply-adds; it is done
for row-major B only when rows are a multiple of 4 KiB apart and M is large,
or 1-2 KiB apart with K of 256 or more and M of 256 (AVX-512) or 128 (AVX2)
or more (measured: on AVX-512 it pays at 1024^3 and 512^3, not at
128x784x512; see ``_conflicting_rows``), and always for
transposed B layouts (``B[n, k]``), whose strided reads it makes
contiguous.  When N is not a multiple of the panel width, the last columns
are split off into an unpacked contraction on slices.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from mlir import ir
from mlir.dialects import linalg, tensor

from .analysis import LoopNest, analyze_linalg_op
from .linalg_rewrite import generalize_tagged, map_dims, reassociation, result_linalg_ops
from .options import ScheduleOptions
from .schedule import SCHEDULE_ID_ATTR, by_registers, register_tile
from .target import CpuTarget

__all__ = ["PackingPlan", "plan_packing", "pack_contractions"]

#: minimum rows of A (reuse of each packed panel) worth the copy
MIN_ROWS = 16
#: rows of A (by the target's vector registers, :func:`.schedule.by_registers`), and depth,
#: from which B with rows 1 or 2 KiB apart is packed (:func:`_conflicting_rows`).  AVX2's
#: register tile reads one cache line of B per k step, AVX-512's four: on the Zen 2 (AVX2,
#: 2 threads, in turns) packing at 128 rows made 128x784x512 0.741 -> 0.684 ms (OpenBLAS
#: 0.66) and the MLP step at batch 128 3.54 -> 3.37 ms; on the Zen 4 (AVX-512) 128 rows
#: were slower packed
MIN_ROWS_NEAR_CONFLICT = {32: 256, 16: 128}
MIN_DEPTH_NEAR_CONFLICT = 256


@dataclass(frozen=True)
class PackingPlan:
    """Which operand of a contraction to pack, and how.

    ``packed_n`` columns (a multiple of ``panel``) go through the packed
    contraction; the last ``extent_n - packed_n`` columns, if any, are split
    off into a copy of the original contraction on slices.
    """

    b_index: int
    panel: int
    n_dim: int
    k_dim: int
    extent_n: int
    packed_n: int


def plan_packing(op: ir.Operation, nest: LoopNest, target: CpuTarget, options: ScheduleOptions) -> PackingPlan | None:
    """A :class:`PackingPlan` if packing ``op``'s B operand pays off, else ``None``."""
    con = nest.contraction
    if con is None or not nest.vectorizable or len(op.results) != 1 or 0 in nest.ranges:
        return None  # an empty loop (dlvm-fuzz seed 707: k = 0) has nothing to pack, and slices of it are invalid
    # several m dims (rows of a stacked x @ w, e.g. (batch, time, width)) are fine: only
    # B's n and k dims are rearranged
    if not con.m or len(con.n) != 1 or len(con.k) != 1:
        return None
    n, k = con.n[0], con.k[0]
    _, panel, _ = register_tile(target, nest, options)
    extent_m = math.prod(nest.ranges[d] for d in con.m)
    extent_n, extent_k = nest.ranges[n], nest.ranges[k]
    packed_n = extent_n - extent_n % panel
    if packed_n < panel:
        return None
    maps = [ir.AffineMapAttr(a).value for a in linalg.get_indexing_maps(op)]
    if len(maps) != 3:
        return None
    positions = [map_dims(amap) for amap in maps]
    if any(p is None for p in positions):
        return None
    b_candidates = [
        i for i in (0, 1) if n in positions[i] and k in positions[i] and not set(con.m) & set(positions[i])
    ]
    output = positions[2]
    if len(b_candidates) != 1 or not output or output[-1] != n:
        return None
    b_dims = positions[b_candidates[0]]
    if b_dims[-1] == n:
        # row-major B: only rows a multiple of 4 KiB apart, reused by many rows of A
        if packed_n != extent_n or packed_n < 2 * panel or extent_m < MIN_ROWS or extent_k < MIN_ROWS:
            return None
        if not _conflicting_rows(extent_n * nest.element_bytes, extent_m, extent_k, target):
            return None
    return PackingPlan(
        b_index=b_candidates[0], panel=panel, n_dim=n, k_dim=k, extent_n=extent_n, packed_n=packed_n
    )


def _conflicting_rows(row_bytes: int, rows_of_a: int, depth: int, target: CpuTarget) -> bool:
    """Does a row-major B need packing?

    Rows that are a multiple of 4 KiB apart map to the same L1 sets, which is
    what makes the unpacked kernel slow (1024x1024 f32: about half speed).
    Rows 1 or 2 KiB apart conflict less; packing them pays only when B is
    tall and reused by many rows of A.  One thread, GFLOP/s unpacked /
    packed (Nov 2026): 512^3 61 / 78, (m, n, k) = (512, 256, 512) 68 / 80,
    256^3 76 / 82, but (128, 512, 512) 69 / 63 (a Zen 4 with AVX-512; on the
    Zen 2, AVX2, 128 rows pay: :data:`MIN_ROWS_NEAR_CONFLICT`); and packing the k = 128
    weight-gradient products of the MLP 784-512-512-10 made its training
    step 5-15% slower.
    Transposed B layouts are always packed.
    """
    if row_bytes % 4096 == 0:
        return rows_of_a >= 128
    return (row_bytes % 1024 == 0 and rows_of_a >= by_registers(MIN_ROWS_NEAR_CONFLICT, target)
            and depth >= MIN_DEPTH_NEAR_CONFLICT)


def _i64_array(values: list[int]) -> ir.Attribute:
    return ir.DenseI64ArrayAttr.get(values)


def _split_groups(rank: int, position: int) -> list[list[int]]:
    """Reassociation that splits dimension ``position`` of a rank-``rank`` tensor in two."""
    groups, out = [], 0
    for d in range(rank):
        if d == position:
            groups.append([out, out + 1])
            out += 2
        else:
            groups.append([out])
            out += 1
    return groups


def _expand(value: ir.Value, position: int, panel: int) -> ir.Value:
    src = ir.RankedTensorType(value.type)
    shape = list(src.shape)
    new_shape = shape[:position] + [shape[position] // panel, panel] + shape[position + 1 :]
    result = ir.RankedTensorType.get(new_shape, src.element_type)
    return tensor.expand_shape(
        result, value, reassociation(_split_groups(len(shape), position)), [], _i64_array(new_shape)
    )


def _rewrite(op: ir.Operation, plan: PackingPlan) -> None:
    maps = [ir.AffineMapAttr(a).value for a in op.attributes["indexing_maps"]]
    rank = maps[0].n_dims
    j = rank  # the new loop: position inside a panel
    b_positions = [e.position for e in maps[plan.b_index].results]
    c_positions = [e.position for e in maps[2].results]
    b_value = op.operands[plan.b_index]
    c_init = op.operands[2]
    with ir.InsertionPoint(op), op.location:
        # B[..., n, ...] -> B_split[..., nb, j, ...] -> Bp[batch..., nb, k, j]
        n_at = b_positions.index(plan.n_dim)
        b_split = _expand(b_value, n_at, plan.panel)
        split_dims = b_positions[:n_at] + [plan.n_dim, j] + b_positions[n_at + 1 :]
        others = [d for d in b_positions if d not in (plan.n_dim, plan.k_dim)]
        packed_dims = others + [plan.n_dim, plan.k_dim, j]
        permutation = [split_dims.index(d) for d in packed_dims]
        split_type = ir.RankedTensorType(b_split.type)
        packed_shape = [split_type.shape[p] for p in permutation]
        packed_init = tensor.empty(packed_shape, split_type.element_type)
        packed = linalg.transpose(b_split, outs=[packed_init], permutation=permutation).results[0]
        c_expanded = _expand(c_init, len(c_positions) - 1, plan.panel)
    new_maps = []
    for index, amap in enumerate(maps):
        if index == plan.b_index:
            dims = packed_dims
        elif index == 2:
            dims = c_positions + [j]
        else:
            dims = [e.position for e in amap.results]
        new_maps.append(ir.AffineMap.get(rank + 1, 0, [ir.AffineDimExpr.get(d) for d in dims]))
    op.attributes["indexing_maps"] = ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in new_maps])
    iterators = list(op.attributes["iterator_types"])
    iterators.append(ir.Attribute.parse("#linalg.iterator_type<parallel>"))
    op.attributes["iterator_types"] = ir.ArrayAttr.get(iterators)
    op.operands[plan.b_index] = packed
    op.operands[2] = c_expanded
    result = op.results[0]
    old_type = result.type
    result.set_type(c_expanded.type)
    with ir.InsertionPoint.after(op), op.location:
        groups = _split_groups(len(c_positions), len(c_positions) - 1)
        collapsed = tensor.collapse_shape(old_type, result, reassociation(groups))
    result.replace_all_uses_except(collapsed, collapsed.owner.operation)


def _slice(value: ir.Value, dim: int, offset: int, size: int) -> ir.Value:
    """``tensor.extract_slice`` of ``size`` elements from ``offset`` along ``dim``."""
    src = ir.RankedTensorType(value.type)
    shape = list(src.shape)
    offsets = [0] * len(shape)
    offsets[dim] = offset
    sizes = list(shape)
    sizes[dim] = size
    result = ir.RankedTensorType.get(sizes, src.element_type)
    return tensor.extract_slice(
        result, value, [], [], [], _i64_array(offsets), _i64_array(sizes), _i64_array([1] * len(shape))
    )


def _insert(value: ir.Value, dest: ir.Value, dim: int, offset: int) -> ir.Value:
    shape = list(ir.RankedTensorType(value.type).shape)
    offsets = [0] * len(shape)
    offsets[dim] = offset
    return tensor.insert_slice(
        value, dest, [], [], [], _i64_array(offsets), _i64_array(shape), _i64_array([1] * len(shape))
    )


def _split_n(op: ir.Operation, plan: PackingPlan) -> ir.Operation:
    """Split ``op`` along n into a panel-aligned part (returned) and a rest.

    Both parts are copies of ``op`` on slices of B and of the init.  Each
    part reads its init slice from the tensor it is inserted back into
    (rest first, then the aligned part), the pattern One-Shot Bufferize
    turns into in-place writes.
    """
    maps = [ir.AffineMapAttr(a).value for a in op.attributes["indexing_maps"]]
    b_n = [e.position for e in maps[plan.b_index].results].index(plan.n_dim)
    c_n = len(maps[2].results) - 1
    b_value, merged = op.operands[plan.b_index], op.operands[2]
    rest = plan.extent_n - plan.packed_n
    with ir.InsertionPoint(op), op.location:
        part = None
        for offset, size in ((plan.packed_n, rest), (0, plan.packed_n)):
            b_part = _slice(b_value, b_n, offset, size)
            c_part = _slice(merged, c_n, offset, size)
            part = op.clone()  # inserted after the slices it uses
            part.operands[plan.b_index] = b_part
            part.operands[2] = c_part
            part.results[0].set_type(c_part.type)
            merged = _insert(part.results[0], merged, c_n, offset)
    op.results[0].replace_all_uses_with(merged)
    op.erase()
    assert part is not None
    return part


def pack_contractions(module: ir.Module, target: CpuTarget, options: ScheduleOptions) -> int:
    """Pack B of every contraction that benefits; returns how many were packed.

    Candidates are generalized first (the rewrite edits a ``linalg.generic``
    in place).  Generalization drops discardable attributes, so the ops are
    found again by their position among the linalg ops, which it preserves.
    """
    tag = f"{SCHEDULE_ID_ATTR}_pack"
    plans: dict[int, PackingPlan] = {}
    with module.context:
        for index, op in enumerate(result_linalg_ops(module)):
            nest = analyze_linalg_op(op)
            plan = plan_packing(op, nest, target, options) if nest is not None else None
            if plan is not None:
                op.attributes[tag] = ir.UnitAttr.get()
                plans[index] = plan
    if not plans:
        return 0
    generalize_tagged(module, tag)
    with module.context:
        ops = result_linalg_ops(module)
        for index, plan in plans.items():
            op = ops[index]
            if op.name != "linalg.generic":
                raise RuntimeError(f"packing: expected a generalized op at position {index}, got {op.name}")
            if tag in op.attributes:
                del op.attributes[tag]
            if plan.packed_n != plan.extent_n:
                op = _split_n(op, plan)
            _rewrite(op, plan)
    return len(plans)
